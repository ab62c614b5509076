//! The `mancala-tb` command: a thin layer over the library.

use std::io::{BufRead, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use serde_json::{json, Value as Json};

mod cli;

use mancala_tb::build::{self, BuildObserver, BuildOptions, LevelReport};
use mancala_tb::forced::Bounds;
use mancala_tb::position::push_decimal;
use mancala_tb::table::{level_file_name, Cycles, Encoding, Table};
use mancala_tb::tablebase::{dir_name, rule_sets, tables_dir_for};
use mancala_tb::verify::{self, LevelCheck};
use mancala_tb::{MoveBounds, MoveValue, Position, Rules, Tablebase, Variant};

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
    Build(BuildArgs),
    /// Exact value and move values of positions (`-` reads stdin, one per line).
    Query(QueryArgs),
    /// List the tables present: levels, positions, sizes, checksums, values.
    Info(InfoArgs),
    /// Check checksums and recompute every stored value from the tables.
    Verify(VerifyArgs),
    /// Exact value of a start position and a perfect game (tables below,
    /// search above).
    Solve(cli::solve::SolveArgs),
    /// Play a game in the terminal against the perfect engine.
    Play(cli::play::PlayArgs),
    /// Answer positions and game states over HTTP/JSON.
    Serve(ServeArgs),
}

#[derive(Args, Clone)]
pub struct RulesArgs {
    /// Rule set: oware, awari, wari or kalah.
    #[arg(long, default_value = "oware", value_parser = parse_variant)]
    rules: Variant,
    /// Pits per side (1..=8).
    #[arg(long, default_value_t = 6)]
    pits: usize,
    /// Kalah: a last seed in an empty own pit captures even when the
    /// opposite pit is empty.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    empty_capture: bool,
}

impl RulesArgs {
    pub fn rules(&self) -> Result<Rules> {
        Ok(Rules::new(self.rules, self.pits)?.with_empty_capture(self.empty_capture))
    }
}

fn parse_variant(name: &str) -> Result<Variant, String> {
    Variant::from_name(name).map_err(|e| e.to_string())
}

fn parse_cycles(name: &str) -> Result<Cycles, String> {
    Cycles::from_name(name).map_err(|e| e.to_string())
}

fn parse_encoding(name: &str) -> Result<Encoding, String> {
    match name {
        "compact" => Ok(Encoding::Compact),
        "full" => Ok(Encoding::Full),
        _ => Err(format!(
            "unknown encoding '{name}' (expected compact or full)"
        )),
    }
}

/// `MOVER,OPPONENT`: stones already captured by each side.
fn parse_captured(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("'{text}' is not MOVER,OPPONENT (two counts of captured stones)");
    let (mover, opponent) = text.split_once(',').ok_or_else(bad)?;
    let count = |t: &str| t.trim().parse::<u32>().map_err(|_| bad());
    Ok((count(mover)?, count(opponent)?))
}

#[derive(Args)]
struct BuildArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Build every level up to this many stones on the board.
    #[arg(long)]
    stones: u32,
    /// Which tables: `even` (one value, endless play an even split) or
    /// `forced` (what each side can be sure to win without repetitions).
    #[arg(long, default_value = "even", value_parser = parse_cycles)]
    cycles: Cycles,
    /// Table directory (a subdirectory per rule set is created in it).
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// Rebuild levels whose files are already present and valid.
    #[arg(long)]
    force: bool,
    /// How even tables store values: `full` (every value; fastest probes
    /// and batches) or `compact` (oware family: values a search of a few
    /// moves restores at probe time are left out; 60% smaller, probes
    /// slower: see README).
    #[arg(long, default_value = "full", value_parser = parse_encoding)]
    encoding: Encoding,
    /// Positions per compressed block (default: 512 for full tables, 2048
    /// for compact ones). Smaller blocks make probes faster and files
    /// larger.
    #[arg(long)]
    block_size: Option<u32>,
    /// Save a long level's progress this often (minutes; 0 = never), so a
    /// killed build resumes inside the level.
    #[arg(long, default_value_t = 10)]
    checkpoint_minutes: u64,
}

#[derive(Args)]
struct QueryArgs {
    #[command(flatten)]
    rules: RulesArgs,
    /// Table directory.
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
    /// One JSON object per position instead of a board picture.
    #[arg(long)]
    json: bool,
    /// Memory for decoded table blocks, in MiB (an LRU cache).
    #[arg(long, default_value_t = mancala_tb::tablebase::DEFAULT_CACHE_BYTES >> 20)]
    cache_mib: usize,
    /// Which tables to read: `even` values or `forced` bounds.
    #[arg(long, default_value = "even", value_parser = parse_cycles)]
    cycles: Cycles,
    /// Forced tables: stones already captured by the mover and by the
    /// opponent, for the verdict.
    #[arg(long, default_value = "0,0", value_parser = parse_captured)]
    captured: (u32, u32),
    /// Positions such as 4,4,4,0,0,0/0,0,0,0,0,0 (mover's row first); `-`
    /// reads one position per line from stdin.
    #[arg(required = true)]
    positions: Vec<String>,
}

#[derive(Args)]
struct InfoArgs {
    /// Table directory.
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
    /// One JSON object per table file.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct VerifyArgs {
    /// Table directory.
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
    /// Only these rule sets (default: every rule set present).
    #[arg(long, value_parser = parse_variant)]
    rules: Vec<Variant>,
    /// Recompute values from this level up only (lower levels are still
    /// loaded and their checksums checked): resumes a long verification.
    #[arg(long, default_value_t = 0)]
    from: u32,
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on (port 0 picks a free port; the address is
    /// printed).
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: std::net::SocketAddr,
    /// Table directory (every rule set under it is served).
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
}

/// `println!` that returns an error (e.g. a closed pipe) instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout(), $($arg)*)?
    };
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Build(args) => run_build(args),
        Command::Query(args) => run_query(args),
        Command::Info(args) => run_info(args),
        Command::Verify(args) => run_verify(args),
        Command::Solve(args) => cli::solve::run(args),
        Command::Play(args) => cli::play::run(args),
        Command::Serve(args) => run_serve(args),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        // The reader went away (`mancala-tb info | head`): nothing to say.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mancala-tb: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|cause| cause.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}

/// A progress bar with ETA on stderr, hidden when stderr is not a terminal.
struct Progress {
    bar: Mutex<Option<ProgressBar>>,
}

impl BuildObserver for Progress {
    fn level_started(&self, level: u32, positions: u64, work: u64) {
        if !std::io::stderr().is_terminal() {
            return;
        }
        let bar = ProgressBar::with_draw_target(Some(work), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{msg} [{bar:40}] {percent:>3}%, ETA {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_message(format!("level {level:>3} ({positions} positions)"));
        *self.bar.lock().unwrap() = Some(bar);
    }

    fn advanced(&self, units: u64) {
        if let Some(bar) = &*self.bar.lock().unwrap() {
            bar.inc(units);
        }
    }

    fn level_finished(&self, report: &LevelReport) {
        if let Some(bar) = self.bar.lock().unwrap().take() {
            bar.finish_and_clear();
        }
        let _ = writeln!(std::io::stdout(), "{}", summary_row(report));
    }
}

const SUMMARY_HEADER: &str = "level      positions   seconds   positions/s         bytes  bits/pos          won        drawn         lost   peak RSS";

const FORCED_SUMMARY_HEADER: &str = "level      positions   seconds   positions/s         bytes  bits/pos        exact   exact %   peak RSS";

fn summary_row(r: &LevelReport) -> String {
    let outcomes = match r.exact {
        Some(exact) => format!(
            "{exact:>12} {:>9.2}",
            100.0 * exact as f64 / r.positions as f64
        ),
        None => {
            let (won, drawn, lost) = r.won_drawn_lost();
            format!("{won:>12} {drawn:>12} {lost:>12}")
        }
    };
    let rate = if r.reused {
        "reused".to_string()
    } else {
        format!("{:.0}", r.positions as f64 / r.seconds.max(1e-9))
    };
    let rss = r.peak_rss_bytes.map_or("-".to_string(), |b| {
        format!("{:.0} MiB", b as f64 / (1 << 20) as f64)
    });
    format!(
        "{:>5} {:>14} {:>9.2} {:>13} {:>13} {:>9.3} {outcomes} {:>10}",
        r.level,
        r.positions,
        r.seconds,
        rate,
        r.bytes,
        8.0 * r.bytes as f64 / r.positions as f64,
        rss
    )
}

fn run_build(args: BuildArgs) -> Result<bool> {
    let rules = args.rules.rules()?;
    if let Some(threads) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build_global()
            .context("cannot set up the thread pool")?;
    }
    let mut options = BuildOptions::new(&args.dir, rules, args.stones);
    options.force = args.force;
    options.cycles = args.cycles;
    options.encoding = args.encoding;
    options.block_size = args.block_size;
    options.checkpoint_every = (args.checkpoint_minutes > 0)
        .then(|| std::time::Duration::from_secs(60 * args.checkpoint_minutes));
    out!(
        "building {rules}, {}, levels 0..={} in {}",
        args.cycles.describe(),
        args.stones,
        tables_dir_for(&args.dir, &rules, args.cycles).display()
    );
    match args.cycles {
        Cycles::Even => out!("{SUMMARY_HEADER}"),
        Cycles::Forced => out!("{FORCED_SUMMARY_HEADER}"),
    }
    let start = std::time::Instant::now();
    let reports = build::build(
        &options,
        &Progress {
            bar: Mutex::new(None),
        },
    )?;
    let positions: u64 = reports.iter().map(|r| r.positions).sum();
    let bytes: u64 = reports.iter().map(|r| r.bytes).sum();
    let built: f64 = reports.iter().map(|r| r.seconds).sum();
    out!(
        "total {positions} positions, {bytes} bytes ({:.3} bits/position), {built:.2} s solving, {:.2} s wall, peak RSS {}",
        8.0 * bytes as f64 / positions as f64,
        start.elapsed().as_secs_f64(),
        build::peak_rss_bytes().map_or("unknown".into(), |b| format!("{:.0} MiB", b as f64 / (1 << 20) as f64))
    );
    Ok(true)
}

fn run_query(args: QueryArgs) -> Result<bool> {
    let rules = args.rules.rules()?;
    let tb = Tablebase::open_kind(&args.dir, rules, args.cycles, args.cache_mib << 20)?;
    let query = Query {
        tb: &tb,
        captured: args.captured,
    };
    if let [text] = args.positions.as_slice() {
        if text != "-" && !args.json {
            // A lone position: its error is the command's error.
            out!("{}", analyse(&query, text)?.to_text());
            return Ok(true);
        }
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    let mut all_ok = true;
    for arg in &args.positions {
        all_ok &= match (arg.as_str(), args.json) {
            ("-", true) => answer_stream(&query, Format::Json, &mut out)?,
            ("-", false) => answer_stream(&query, Format::Line, &mut out)?,
            (text, true) => write_answers(&query, Format::Json, &[text], &mut out)?,
            (text, false) => write_answers(&query, Format::Board, &[text], &mut out)?,
        };
    }
    out.flush()?;
    Ok(all_ok)
}

/// What a query reads and the stones already captured (for forced verdicts).
struct Query<'a> {
    tb: &'a Tablebase,
    captured: (u32, u32),
}

/// How a query answer is printed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    /// Board picture, value and moves (positions given as arguments).
    Board,
    /// One line per position (positions read from stdin).
    Line,
    /// One JSON object per line.
    Json,
}

/// Most stdin lines answered in one round. Large, so that each table block
/// a round needs is decoded once for many positions.
const QUERY_BATCH: usize = 1 << 20;

/// Answers positions in parallel and writes the answers in input order, an
/// error line for each bad one. Returns whether all were answered.
fn write_answers(
    query: &Query,
    format: Format,
    texts: &[&str],
    out: &mut impl Write,
) -> Result<bool> {
    /// Answers formatted per unit of parallel work, into one string.
    const CHUNK: usize = 4096;
    let analyses = analyse_many(query, texts);
    let pieces: Vec<(String, bool)> = analyses
        .par_chunks(CHUNK)
        .zip(texts.par_chunks(CHUNK))
        .map(|(analyses, texts)| {
            let mut piece = String::with_capacity(analyses.len() * 48);
            let mut all_ok = true;
            for (analysis, text) in analyses.iter().zip(texts) {
                all_ok &= analysis.is_ok();
                write_answer(format, analysis, text, &mut piece);
            }
            (piece, all_ok)
        })
        .collect();
    for (piece, _) in &pieces {
        out.write_all(piece.as_bytes())?;
    }
    Ok(pieces.iter().all(|(_, ok)| *ok))
}

/// Appends one answer, or the error for `text`, as a line (a board picture
/// and a blank line in the board format).
fn write_answer(format: Format, analysis: &Result<Analysis>, text: &str, out: &mut String) {
    use std::fmt::Write as _;
    match (analysis, format) {
        (Ok(a), Format::Json) => a.write_json(out),
        (Ok(a), Format::Line) => a.write_line(out),
        (Ok(a), Format::Board) => {
            out.push_str(&a.to_text());
            out.push('\n'); // a blank line between boards
        }
        (Err(e), Format::Json) => {
            out.push_str(&json!({"position": text, "error": format!("{e:#}")}).to_string())
        }
        (Err(e), _) => {
            let _ = write!(out, "{text} error: {e:#}");
        }
    }
    out.push('\n');
}

/// Answers stdin, one line per position. A reader thread passes on the
/// complete lines of every read as one piece. A round gathers pieces while
/// they come in bulk (a piece of at least [`BULK_BYTES`] followed within
/// [`BULK_WAIT`], as from a file or a fast pipe), up to [`QUERY_BATCH`]
/// lines, then answers them in parallel and flushes: bulk input is scored
/// in a few large rounds, in which each table block is decoded once, while
/// a program that writes a line and waits gets its answer at once.
fn answer_stream(query: &Query, format: Format, out: &mut impl Write) -> Result<bool> {
    let (pieces, received) = std::sync::mpsc::sync_channel::<Result<String>>(PIECES_IN_FLIGHT);
    std::thread::spawn(move || {
        let input = std::io::BufReader::with_capacity(READ_BYTES, std::io::stdin().lock());
        read_pieces(input, pieces)
    });
    let mut all_ok = true;
    while let Ok(first) = received.recv() {
        let mut text = first?;
        let mut last_len = text.len();
        while last_len >= BULK_BYTES && text.len() < QUERY_BATCH * 24 {
            let Ok(piece) = received.recv_timeout(BULK_WAIT) else {
                break;
            };
            let piece = piece?;
            text.push_str(&piece);
            last_len = piece.len();
        }
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .collect();
        for round in lines.chunks(QUERY_BATCH) {
            all_ok &= write_answers(query, format, round, out)?;
        }
        out.flush()?;
    }
    Ok(all_ok)
}

/// Bytes asked of stdin per read.
const READ_BYTES: usize = 1 << 20;
/// Pieces the reader may be ahead of the answers.
const PIECES_IN_FLIGHT: usize = 64;
/// A piece this large means input comes in bulk (a full pipe buffer is
/// 64 KiB): more is probably on its way.
const BULK_BYTES: usize = 16 << 10;
/// How long a round waits for more bulk input before it is answered.
const BULK_WAIT: std::time::Duration = std::time::Duration::from_millis(10);

/// Sends the complete lines of each read from `input` as one piece (a line
/// cut by the end of a read waits for the rest), then a last unterminated
/// line, if any. Stops at the first error, which it sends on.
fn read_pieces(mut input: impl BufRead, pieces: std::sync::mpsc::SyncSender<Result<String>>) {
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let read = match input.fill_buf() {
            Ok([]) => break,
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = pieces.send(Err(anyhow::Error::from(e).context("cannot read stdin")));
                return;
            }
        };
        let taken = read.len();
        pending.extend_from_slice(read);
        input.consume(taken);
        if let Some(end) = pending.iter().rposition(|&b| b == b'\n') {
            let rest = pending.split_off(end + 1);
            let complete = std::mem::replace(&mut pending, rest);
            if !send_piece(&pieces, complete) {
                return;
            }
        }
    }
    if !pending.is_empty() {
        send_piece(&pieces, pending);
    }
}

/// Sends `bytes` as a piece of text (an error if they are not UTF-8);
/// whether the receiver still listens.
fn send_piece(pieces: &std::sync::mpsc::SyncSender<Result<String>>, bytes: Vec<u8>) -> bool {
    let piece = String::from_utf8(bytes).context("cannot read stdin: not UTF-8 text");
    let failed = piece.is_err();
    pieces.send(piece).is_ok() && !failed
}

/// The JSON of an even table's answer, fields in this order.
#[derive(serde::Serialize)]
struct ValueJson {
    position: String,
    rules: &'static str,
    pits: usize,
    stones: u32,
    value: i32,
    terminal: bool,
    moves: Vec<MoveJson>,
}

/// One move in [`ValueJson`].
#[derive(serde::Serialize)]
struct MoveJson {
    #[serde(rename = "move")]
    letter: char,
    value: i32,
}

/// One answered query.
struct Analysis {
    rules: Rules,
    position: Position,
    answer: Answer,
}

/// What the tables say about a position.
enum Answer {
    /// Even tables: the value and the value of each move (none: terminal).
    Value { value: i32, moves: Vec<MoveValue> },
    /// Forced tables: the bounds of the position and of each move, and the
    /// stones already captured for the verdicts.
    Forced {
        bounds: Bounds,
        moves: Vec<MoveBounds>,
        captured: (u32, u32),
    },
}

fn analyse(query: &Query, text: &str) -> Result<Analysis> {
    analyse_many(query, &[text])
        .pop()
        .expect("one answer per position")
}

/// Answers many positions with batched probes (each table block is read
/// once per batch, however many positions and children fall in it).
fn analyse_many(query: &Query, texts: &[&str]) -> Vec<Result<Analysis>> {
    let tb = query.tb;
    let checked: Vec<mancala_tb::Result<Position>> = texts
        .par_iter()
        .map(|text| {
            let pos = Position::parse(tb.rules().pits(), text)?;
            tb.check(&pos).map(|()| pos)
        })
        .collect();
    let positions: Vec<Position> = checked
        .iter()
        .filter_map(|p| p.as_ref().ok().copied())
        .collect();
    // Every position is covered now; what can still fail is a damaged table,
    // and then every answer reports it.
    let answers = match answers(query, &positions) {
        Ok(answers) => answers,
        Err(e) => {
            let e = anyhow::Error::from(e);
            return texts
                .iter()
                .map(|_| Err(anyhow::anyhow!("{e:#}")))
                .collect();
        }
    };
    let mut answers = answers.into_iter();
    checked
        .into_iter()
        .map(|position| {
            Ok(Analysis {
                rules: *tb.rules(),
                position: position?,
                answer: answers.next().expect("one answer per position"),
            })
        })
        .collect()
}

/// The answers for covered positions, from the kind of tables queried.
fn answers(query: &Query, positions: &[Position]) -> mancala_tb::Result<Vec<Answer>> {
    Ok(match query.tb.cycles() {
        Cycles::Even => query
            .tb
            .values_and_moves(positions)?
            .into_iter()
            .map(|(value, moves)| Answer::Value { value, moves })
            .collect(),
        Cycles::Forced => query
            .tb
            .bounds_and_moves(positions)?
            .into_iter()
            .map(|(bounds, moves)| Answer::Forced {
                bounds,
                moves,
                captured: query.captured,
            })
            .collect(),
    })
}

impl Analysis {
    /// A position with no legal move is terminal.
    fn terminal(&self) -> bool {
        match &self.answer {
            Answer::Value { moves, .. } => moves.is_empty(),
            Answer::Forced { moves, .. } => moves.is_empty(),
        }
    }

    fn stones(&self) -> u32 {
        self.position.stones()
    }

    /// Appends the JSON object of the answer (one line).
    fn write_json(&self, out: &mut String) {
        let json = match &self.answer {
            // Typed, not built as a `Json` map: batches print millions.
            Answer::Value { value, moves } => serde_json::to_string(&ValueJson {
                position: self.position.to_string(),
                rules: self.rules.variant().name(),
                pits: self.rules.pits(),
                stones: self.stones(),
                value: *value,
                terminal: self.terminal(),
                moves: moves
                    .iter()
                    .map(|m| MoveJson {
                        letter: m.letter(),
                        value: m.value,
                    })
                    .collect(),
            })
            .expect("plain data serializes"),
            Answer::Forced {
                bounds,
                moves,
                captured,
            } => self.forced_json(bounds, moves, *captured).to_string(),
        };
        out.push_str(&json);
    }

    /// The JSON object of a forced-bounds answer.
    fn forced_json(&self, bounds: &Bounds, moves: &[MoveBounds], captured: (u32, u32)) -> Json {
        let bounds_json = |b: &Bounds| {
            json!({
                "forced_mover": b.mover,
                "forced_opponent": b.opponent,
                "verdict": b.verdict(self.stones(), captured).name(),
            })
        };
        let moves: Vec<Json> = moves
            .iter()
            .map(|m| {
                let mut j = json!({"move": m.letter().to_string()});
                merge(&mut j, bounds_json(&m.bounds));
                j
            })
            .collect();
        let mut j = json!({
            "position": self.position.to_string(),
            "rules": self.rules.variant().name(),
            "pits": self.rules.pits(),
            "stones": self.stones(),
            "cycles": "forced",
            "captured": [captured.0, captured.1],
        });
        merge(&mut j, bounds_json(bounds));
        merge(
            &mut j,
            json!({"exact": bounds.exact(self.stones()), "terminal": self.terminal(), "moves": moves}),
        );
        j
    }

    /// Appends the line for batches: position, value, then each move as
    /// `letter:value` with `*` on the best ones (`-` when the game is over);
    /// for forced tables `mover/opponent verdict`, each move as
    /// `letter:mover/opponent:verdict`.
    fn write_line(&self, out: &mut String) {
        use std::fmt::Write as _;
        self.position.write_notation(out);
        out.push(' ');
        let terminal = self.terminal();
        match &self.answer {
            // By hand: `write!` would be a third of a batch's time.
            Answer::Value { value, moves } => {
                push_signed(out, *value);
                for m in moves {
                    out.push(' ');
                    out.push(m.letter());
                    out.push(':');
                    push_signed(out, m.value);
                    out.push_str(best(m.value == *value));
                }
            }
            Answer::Forced {
                bounds,
                moves,
                captured,
            } => {
                // Writing into a `String` cannot fail.
                let n = self.stones();
                let verdict = |b: &Bounds| b.verdict(n, *captured).name();
                let _ = write!(
                    out,
                    "{}/{} {}",
                    bounds.mover,
                    bounds.opponent,
                    verdict(bounds)
                );
                for m in moves {
                    let b = &m.bounds;
                    let _ = write!(
                        out,
                        " {}:{}/{}:{}",
                        m.letter(),
                        b.mover,
                        b.opponent,
                        verdict(b)
                    );
                }
            }
        }
        if terminal {
            out.push_str(" -");
        }
    }

    fn to_text(&self) -> String {
        let mut text = format!(
            "{}  ({}, {} stones)\n{}\n",
            self.position,
            self.rules,
            self.stones(),
            self.position.picture()
        );
        let moves: Vec<String> = match &self.answer {
            Answer::Value { value, moves } => {
                text += &match value {
                    0 => "value: 0 (an even split of the remaining stones)\n".to_string(),
                    v => format!(
                        "value: {v:+} (the mover {} by {} of the remaining stones)\n",
                        if *v > 0 { "wins" } else { "loses" },
                        v.abs()
                    ),
                };
                moves
                    .iter()
                    .map(|m| format!("{} {:+}{}", m.letter(), m.value, best(m.value == *value)))
                    .collect()
            }
            Answer::Forced {
                bounds,
                moves,
                captured,
            } => {
                let n = self.stones();
                text += &format!(
                    "forced: the mover can be sure of {} and the opponent of {} of the {n} remaining stones\n\
                     verdict with {},{} captured: {}\n",
                    bounds.mover,
                    bounds.opponent,
                    captured.0,
                    captured.1,
                    bounds.verdict(n, *captured).name()
                );
                moves
                    .iter()
                    .map(|m| {
                        let b = m.bounds;
                        let verdict = b.verdict(n, *captured).name();
                        format!("{} {}/{} {verdict}", m.letter(), b.mover, b.opponent)
                    })
                    .collect()
            }
        };
        if self.terminal() {
            text += "game over: no legal move";
        } else if matches!(self.answer, Answer::Value { .. }) {
            text += &format!("moves: {}   (* = best)", moves.join("  "));
        } else {
            text += &format!("moves (mover/opponent): {}", moves.join("  "));
        }
        text
    }
}

/// The best-move mark.
/// Appends a value with its sign, as `{:+}` does (`+0` for zero).
fn push_signed(out: &mut String, value: i32) {
    out.push(if value < 0 { '-' } else { '+' });
    push_decimal(out, value.unsigned_abs());
}

fn best(is_best: bool) -> &'static str {
    if is_best {
        "*"
    } else {
        ""
    }
}

/// Adds the fields of the JSON object `more` to the object `into`.
fn merge(into: &mut Json, more: Json) {
    if let (Json::Object(into), Json::Object(more)) = (into, more) {
        into.extend(more);
    }
}

/// Every table file under `root`, grouped by rule-set directory.
fn table_files(root: &Path) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let entries = std::fs::read_dir(root)
        .with_context(|| format!("{}: cannot read the table directory", root.display()))?;
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let mut level_files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .with_context(|| format!("{}: cannot read", dir.display()))?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "mtb"))
            .collect();
        level_files.sort();
        files.extend(level_files);
    }
    Ok(files)
}

fn run_info(args: InfoArgs) -> Result<bool> {
    let files = table_files(&args.dir)?;
    if files.is_empty() && !args.json {
        out!("no tables in {}", args.dir.display());
    }
    let mut all_ok = true;
    // Per rule set: levels, positions, bytes.
    let mut totals: std::collections::BTreeMap<String, (u32, u64, u64)> = Default::default();
    if !args.json {
        out!(
            "{:<18} {:>5} {:>14} {:>13} {:>9}  {:<8}  values (value:count)",
            "rules",
            "level",
            "positions",
            "bytes",
            "bits/pos",
            "checksum"
        );
    }
    for path in files {
        let table = match Table::open(&path, None) {
            Ok(t) => t,
            Err(e) => {
                all_ok = false;
                if args.json {
                    out!(
                        "{}",
                        json!({"file": path.display().to_string(), "error": e.to_string()})
                    );
                } else {
                    out!("{}: {e}", path.display());
                }
                continue;
            }
        };
        let checksum = match table.check_file_checksum() {
            Ok(()) => "ok".to_string(),
            Err(e) => {
                all_ok = false;
                e.to_string()
            }
        };
        let h = table.header();
        let bits = 8.0 * table.bytes() as f64 / h.positions as f64;
        let exact = h.exact_positions();
        let exact_share = exact.map(|e| e as f64 / h.positions as f64);
        if args.json {
            let histogram: serde_json::Map<String, Json> = h
                .histogram
                .iter()
                .map(|(v, c)| (v.to_string(), json!(c)))
                .collect();
            out!(
                "{}",
                json!({
                    "file": path.display().to_string(),
                    "rules": h.variant, "pits": h.pits, "empty_capture": h.empty_capture, "cycles": h.cycles,
                    "level": h.level, "positions": h.positions, "bytes": table.bytes(),
                    "bits_per_position": bits, "block_size": h.block_size,
                    "value_encoding": h.value_encoding, "checksum": checksum,
                    "histogram": histogram, "exact": exact, "exact_share": exact_share,
                })
            );
        } else {
            let id = match (h.rules(), h.cycles()) {
                (Ok(rules), Ok(cycles)) => dir_name(&rules, cycles),
                _ => h.variant.clone(),
            };
            let values = match (exact, exact_share) {
                (Some(exact), Some(share)) => format!(
                    "forced bounds meet on {exact} of {} positions ({:.2}%)",
                    h.positions,
                    100.0 * share
                ),
                _ => h
                    .histogram
                    .iter()
                    .map(|(v, c)| format!("{v}:{c}"))
                    .collect::<Vec<_>>()
                    .join(" "),
            };
            let checksum = if checksum == "ok" { "ok" } else { "FAILED" };
            let total = totals.entry(id.clone()).or_default();
            *total = (total.0 + 1, total.1 + h.positions, total.2 + table.bytes());
            out!(
                "{id:<18} {:>5} {:>14} {:>13} {bits:>9.3}  {checksum:<8}  {values}",
                h.level,
                h.positions,
                table.bytes(),
            );
        }
    }
    for (id, (levels, positions, bytes)) in totals {
        out!(
            "{id:<18} total: {levels} levels, {positions} positions, {bytes} bytes, {:.3} bits/position",
            8.0 * bytes as f64 / positions as f64
        );
    }
    Ok(all_ok)
}

/// Binds, prints `listening on http://ADDR` (the real port when given port
/// 0, so scripts and tests can find the server) and serves until killed.
fn run_serve(args: ServeArgs) -> Result<bool> {
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.addr)
            .await
            .with_context(|| format!("cannot listen on {}", args.addr))?;
        out!("listening on http://{}", listener.local_addr()?);
        mancala_tb::server::serve(listener, args.dir).await?;
        Ok(true)
    })
}

fn run_verify(args: VerifyArgs) -> Result<bool> {
    let selected: Vec<(Rules, Cycles)> = rule_sets(&args.dir)
        .with_context(|| format!("{}: cannot read the table directory", args.dir.display()))?
        .into_iter()
        .filter(|(rules, _)| args.rules.is_empty() || args.rules.contains(&rules.variant()))
        .collect();
    if selected.is_empty() {
        bail!("no tables to verify in {}", args.dir.display());
    }
    let mut all_ok = true;
    for (rules, cycles) in selected {
        let name = dir_name(&rules, cycles);
        let dir = tables_dir_for(&args.dir, &rules, cycles);
        let max = (0..)
            .take_while(|&n| dir.join(level_file_name(n)).is_file())
            .last();
        let checks = match cycles {
            Cycles::Even => verify::verify(&args.dir, &rules, args.from, max, |c| {
                report_check(&name, c)
            })
            .map(|checks| checks.iter().all(LevelCheck::ok)),
            Cycles::Forced => verify::verify_forced(&args.dir, &rules, args.from, max, |c| {
                report_check(&name, c)
            })
            .map(|checks| checks.iter().all(LevelCheck::ok)),
        };
        match checks {
            Ok(ok) => all_ok &= ok,
            Err(e) => {
                out!("{name}: FAILED: {e}");
                all_ok = false;
            }
        }
    }
    out!(
        "{}",
        if all_ok {
            "verify: all tables ok"
        } else {
            "verify: FAILED"
        }
    );
    Ok(all_ok)
}

/// Prints one verified level (best effort: a closed stdout only loses the
/// report, the exit status still tells).
fn report_check<T: std::fmt::Display>(name: &str, c: &LevelCheck<T>) {
    let status = if c.ok() {
        "ok".to_string()
    } else {
        format!("FAILED: {} mismatches", c.mismatches)
    };
    let exact = c.exact.map_or(String::new(), |e| {
        format!(
            ", bounds meet on {:.2}%",
            100.0 * e as f64 / c.positions as f64
        )
    });
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "{name} level {:>3}: {:>14} positions {status}{exact}",
        c.level, c.positions
    );
    if let Some((pos, stored, expected)) = &c.first_mismatch {
        let _ = writeln!(
            out,
            "    first mismatch: {pos} stored {stored}, recomputed {expected}"
        );
    }
    if !c.histogram_ok {
        let _ = writeln!(out, "    the header's histogram does not match the values");
    }
}
