//! `mancala-tb import`: tables from another program's files (the VU Awari
//! database's `scores.N`), checked, stored as a build stores them, and
//! verified.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Result};
use clap::Args;
use mancala_format::{Encoding, Even};
use mancala_gen::BuildOptions;
use mancala_verify::verify;

use crate::args::{parse_encoding, Format};
use crate::cmd::build::{print_total, SUMMARY_HEADER};
use crate::progress::Progress;

/// The highest level the VU database has below its gap at 47.
const LAST_BEFORE_GAP: u32 = 46;

#[derive(Args)]
pub struct ImportArgs {
    /// The format of the files.
    #[arg(long, value_enum)]
    format: Format,
    /// The directory holding the `scores.N` files.
    source: PathBuf,
    /// Table directory (the tables go to its `awari-6/`).
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
    /// Import levels 0..=N (default: up to the highest file in SOURCE,
    /// 46 at most). Levels already in the tables are kept, so every level
    /// needs a file or a table.
    #[arg(long)]
    stones: Option<u32>,
    /// How values are stored: `full` or `compact` (as `build --encoding`).
    #[arg(long, default_value = "full", value_parser = parse_encoding)]
    encoding: Encoding,
    /// Positions per compressed block (default: as `build`).
    #[arg(long)]
    block_size: Option<u32>,
    /// Import levels whose tables are already present and valid again.
    #[arg(long)]
    force: bool,
    /// If a build is writing these tables, wait for it to end instead of
    /// failing.
    #[arg(long)]
    wait: bool,
    /// Where lower levels too large for memory are held as mapped files
    /// (default: `scratch/` in the tables' directory).
    #[arg(long)]
    scratch: Option<PathBuf>,
}

pub fn run(args: ImportArgs) -> Result<bool> {
    let Format::Vu = args.format;
    let stones = match args.stones {
        Some(stones) => stones,
        None => default_stones(&args.source)?,
    };
    let mut options = BuildOptions::new(&args.dir, mancala_vu::rules(), stones);
    options.encoding = args.encoding;
    options.block_size = args.block_size;
    options.force = args.force;
    options.wait_for_lock = args.wait;
    options.scratch = args.scratch.clone();
    options.validate()?;
    out!(
        "importing VU files from {}, levels 0..={stones}, into {}",
        args.source.display(),
        options.dir().display()
    );
    out!("{SUMMARY_HEADER}");
    let start = Instant::now();
    let progress = Progress::new();
    let reports = mancala_vu::import(&args.source, &options, &progress);
    progress.finish();
    let reports = reports?;
    print_total(&reports, start)?;
    let Some(from) = reports.iter().find(|r| !r.reused).map(|r| r.level) else {
        out!("every level was present: nothing imported, nothing to verify");
        return Ok(true);
    };
    let scratch = args.scratch.unwrap_or_else(std::env::temp_dir);
    let checks = verify::<Even>(
        &args.dir,
        &options.rules,
        from,
        Some(stones),
        &scratch,
        |_| {},
    )?;
    let failed: Vec<u32> = checks.iter().filter(|c| !c.ok()).map(|c| c.level).collect();
    if !failed.is_empty() {
        out!("verify: FAILED on levels {failed:?}: run mancala-tb verify --rules awari");
        return Ok(false);
    }
    out!("verify: levels {from}..={stones} ok");
    Ok(true)
}

/// The highest level with a file in `source`, below the database's gap at
/// 47 (its level 48 needs a level 47 it does not hold).
fn default_stones(source: &std::path::Path) -> Result<u32> {
    let levels = mancala_vu::levels_in(source)?;
    match levels.iter().rev().find(|&&n| n <= LAST_BEFORE_GAP) {
        Some(&n) => Ok(n),
        None => bail!("{}: no scores.N files", source.display()),
    }
}
