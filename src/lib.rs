//! The `mancala-tb` application: the command line, the HTTP server and the
//! web board, over the library crates.
//!
//! This library is the binary's own code, public so that its integration
//! tests and fuzz targets can reach it; it is not an API for programs,
//! which use `mancala-probe`, `mancala-gen` and the other library crates.
//! Each subcommand is a module of [`cmd`]; `query` and `serve` share one
//! answer path ([`answer`]) and one JSON schema ([`json`]).

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// `println!` that returns an error (e.g. a closed pipe) instead of
/// panicking. Declared before the modules, which all print through it.
macro_rules! out {
    ($($arg:tt)*) => {
        {
            use std::io::Write as _;
            writeln!(std::io::stdout(), $($arg)*)?
        }
    };
}

pub mod answer;
mod args;
mod board;
mod cluster;
pub mod cmd;
mod hint;
pub mod json;
pub mod levels;
mod machine;
pub mod plot;
mod progress;
pub mod server;
mod signal;

/// Perfect-play endgame tables for mancala games (Oware, Awari, Wari, Kalah).
#[derive(Parser)]
#[command(name = "mancala-tb", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Solve levels 0..=N and write one compressed table file per level.
    Build(cmd::build::BuildArgs),
    /// Exact value and move values of positions (`-` reads stdin, one per line).
    Query(cmd::query::QueryArgs),
    /// List the tables present: levels, positions, sizes, checksums, values.
    Info(cmd::info::InfoArgs),
    /// Check checksums and recompute every stored value from the tables,
    /// or compare them with another program's (`--against vu DIR`).
    Verify(cmd::verify::VerifyArgs),
    /// Write tables in another program's format (the VU Awari database).
    Export(cmd::export::ExportArgs),
    /// Read another program's tables (the VU Awari database) into ours.
    Import(cmd::import::ImportArgs),
    /// Exact value of a start position and a perfect game (tables below,
    /// search above).
    Solve(cmd::solve::SolveArgs),
    /// Play a game in the terminal against the perfect engine.
    Play(cmd::play::PlayArgs),
    /// Answer positions and game states over HTTP/JSON.
    ///
    /// Limits, so that no client starves the others: at most 512
    /// connections at once and 64 from one client address (more are closed
    /// as they come); request headers within 10 s, an idle kept-alive
    /// connection too; a body within 10 s and of at most 1 MiB (413
    /// beyond); at most 10,000 positions a batch; 60 s for a whole request.
    Serve(cmd::serve::ServeArgs),
}

/// The guide's command-line reference (`docs/guide/cli.md`): what
/// `mancala-tb --help` and each command's `--help` print. Generated rather
/// than written so that it cannot drift from the command line; a test
/// compares it with the file and with the binary's `--help`. Plain text,
/// unwrapped (without clap's `wrap_help` feature, help follows no
/// terminal's width), so the same on every machine.
pub fn cli_reference() -> String {
    let mut cli = Cli::command();
    let commands: Vec<String> = cli
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|name| name != "help")
        .collect();
    let mut text = String::from(
        "# Command-line reference\n\n\
         <!-- Generated from the command line's help: do not edit. To \
         regenerate, run\n     \
         MANCALA_TB_BLESS=1 cargo test --test integration cli_reference -->\n\n\
         What `mancala-tb --help` and `mancala-tb COMMAND --help` print.\n",
    );
    for command in std::iter::once(None).chain(commands.iter().map(Some)) {
        let args = ["mancala-tb"]
            .into_iter()
            .chain(command.map(String::as_str));
        let name = args.clone().collect::<Vec<_>>().join(" ");
        // `--help` is clap's error of kind `DisplayHelp`, rendered as the
        // binary prints it (plain: `to_string` drops the styles). It never
        // parses as a command; if it did, the empty section would fail the
        // test that compares each section with the binary's `--help`.
        let help = match cli.try_get_matches_from_mut(args.chain(["--help"])) {
            Err(help) => help.render().to_string(),
            Ok(_) => String::new(),
        };
        text += &format!("\n## `{name}`\n\n```text\n{}\n```\n", help.trim_end());
    }
    text
}

/// Runs the command line: parses the arguments, runs the subcommand, and
/// prints a failure as one line on stderr.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let outcome = match cli.command {
        Command::Build(args) => cmd::build::run(args),
        Command::Query(args) => cmd::query::run(args),
        Command::Info(args) => cmd::info::run(args),
        Command::Verify(args) => cmd::verify::run(args),
        Command::Export(args) => cmd::export::run(args),
        Command::Import(args) => cmd::import::run(args),
        Command::Solve(args) => cmd::solve::run(args),
        Command::Play(args) => cmd::play::run(args),
        Command::Serve(args) => cmd::serve::run(args),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        // The reader went away (`mancala-tb info | head`): nothing to say,
        // but the command stopped before its end (a build or a verification
        // is not done), so not a success.
        Err(e) if is_broken_pipe(&e) => ExitCode::FAILURE,
        Err(e) => {
            // A line end in a message (a path given with one) shown escaped:
            // every failure is one line.
            let message = hint::message(&e).replace('\n', "\\n");
            eprintln!("mancala-tb: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Help and version as clap prints them (and the help of a command given
/// without its subcommand); any other argument error as one
/// line on stderr (clap's message, its lines joined, without the usage
/// block), exit code 2.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let rendered = e.render().to_string();
    let message: Vec<&str> = rendered
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .map(|line| line.trim())
        .collect();
    let message = message.join(" ");
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    eprintln!("mancala-tb: {message} (see --help)");
    ExitCode::from(2)
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|cause| cause.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}
