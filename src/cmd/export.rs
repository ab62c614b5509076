//! `mancala-tb export`: our tables in another program's format (the VU
//! Awari database's `scores.N` files).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::args::Format;
use crate::progress::Progress;

#[derive(Args)]
pub struct ExportArgs {
    /// The format to write.
    #[arg(long, value_enum)]
    format: Format,
    /// Table directory holding the awari tables (`awari-6/`).
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
    /// Where the `scores.N` files go (created if needed; files of the same
    /// name are replaced).
    #[arg(long)]
    out: PathBuf,
    /// Export levels 0..=N (default: every level present).
    #[arg(long)]
    stones: Option<u32>,
    /// Where levels too large for memory are held as mapped files while a
    /// compact set is read (default: the system's temporary directory).
    #[arg(long)]
    scratch: Option<PathBuf>,
}

pub fn run(args: ExportArgs) -> Result<bool> {
    let Format::Vu = args.format;
    let scratch = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    out!(
        "exporting the awari tables in {} as VU files to {}",
        args.dir.display(),
        args.out.display()
    );
    let progress = Progress::new();
    let exported = mancala_vu::export(&args.dir, args.stones, &args.out, &scratch, &progress);
    progress.finish();
    let mut bytes = 0;
    for level in exported? {
        bytes += level.bytes;
        out!(
            "{:>12} {:>14} bytes {:>8.2} s",
            mancala_vu::file_name(level.level),
            level.bytes,
            level.seconds
        );
    }
    out!("total {bytes} bytes");
    Ok(true)
}
