//! `mancala-tb info`: every table file under a directory, with its sizes,
//! checksum status and values.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use mancala_core::Cycles;
use mancala_format::{depth_file_name, dir_name, level_file_name, Header, Stores, TableFile};
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::levels::{LevelSummary, TableSet};
use crate::plot::{self, SvgPath};

#[derive(Args)]
pub struct InfoArgs {
    /// Table directory.
    #[arg(long, default_value = "tables")]
    dir: PathBuf,
    /// One JSON object per table file.
    #[arg(long)]
    json: bool,
    /// Also draw the levels as an SVG chart in this file, a panel per rule
    /// set: the shares won, drawn and lost for the mover and the mean value
    /// (even tables), or the share whose bounds meet (forced tables).
    #[arg(long, value_name = "FILE.svg")]
    plot: Option<PathBuf>,
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

/// Where a table belongs by its header, if that is not where it is (a level
/// copied over another, a table copied into another rule set's or kind's
/// directory): `query` and `verify` refuse such a file, so `info` does not
/// count it either.
fn misplaced(path: &Path, header: &Header) -> Option<String> {
    let dir = path.parent()?.file_name()?.to_str()?;
    let name = path.file_name()?.to_str()?;
    let file_name = match header.stores {
        Stores::Values => level_file_name(header.level),
        Stores::Depths => depth_file_name(header.level),
    };
    let belongs = (dir_name(&header.rules, header.cycles), file_name);
    (belongs.0 != dir || belongs.1 != name).then(|| {
        format!(
            "{}: misplaced table: its header says {}/{}",
            path.display(),
            belongs.0,
            belongs.1
        )
    })
}

/// The SHA-256 of a file's bytes as `sha256sum` prints it: the digest to
/// compare a table with another machine's copy or a published list.
fn sha256_hex(path: &Path) -> std::io::Result<String> {
    let mut hasher = Sha256::new();
    std::io::copy(&mut File::open(path)?, &mut hasher)?;
    Ok(format!("{:x}", hasher.finalize()))
}

pub fn run(args: InfoArgs) -> Result<bool> {
    let plot = args.plot.as_deref().map(SvgPath::new).transpose()?;
    let files = table_files(&args.dir)?;
    if files.is_empty() && plot.is_some() {
        bail!("no tables in {} to plot", args.dir.display());
    }
    if files.is_empty() && !args.json {
        out!("no tables in {}", args.dir.display());
    }
    let mut all_ok = true;
    // Per rule set: levels, positions, bytes.
    let mut totals: BTreeMap<String, (u32, u64, u64)> = BTreeMap::new();
    // Per rule set, what the chart draws.
    let mut sets: BTreeMap<String, TableSet> = BTreeMap::new();
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
        let table = match TableFile::open(&path) {
            Ok(t) => t,
            Err(e) => {
                all_ok = false;
                if args.json {
                    out!(
                        "{}",
                        json!({"file": path.display().to_string(), "error": e.to_string()})
                    );
                } else {
                    out!("{e}");
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
        if let Some(error) = misplaced(&path, h) {
            all_ok = false;
            if args.json {
                out!(
                    "{}",
                    json!({"file": path.display().to_string(), "error": error})
                );
            } else {
                out!("{error}");
            }
            continue;
        }
        let depths = h.stores == Stores::Depths;
        let id = match depths {
            false => dir_name(&h.rules, h.cycles),
            true => format!("{} depths", dir_name(&h.rules, h.cycles)),
        };
        let summary = LevelSummary::of(&table);
        let bits = summary.bits_per_position();
        let (exact, exact_share) = (summary.exact, summary.exact_share());
        if args.json {
            out!(
                "{}",
                json!({
                    "file": path.display().to_string(),
                    "rules": h.rules.variant().name(), "pits": h.rules.pits(),
                    "empty_capture": h.rules.empty_capture(), "cycles": h.cycles.name(),
                    "kind": h.kind().name(),
                    "level": h.level, "positions": h.positions, "bytes": table.bytes(),
                    "bits_per_position": bits, "block_size": h.block_size,
                    "value_encoding": h.encoding_name(), "checksum": checksum,
                    "crc32": table.stored_checksum().ok().map(|crc| format!("{crc:08x}")),
                    "sha256": sha256_hex(&path).ok(),
                    "histogram": summary.histogram_json(), "exact": exact,
                    "exact_share": exact_share,
                    "longest_depth_ahead": depths.then(|| h.longest_stored_depth()),
                })
            );
        } else {
            let values = match (exact, exact_share) {
                _ if depths => format!(
                    "depths to conversion, the longest {} plies ({} to move)",
                    h.longest_stored_depth(),
                    match h.cycles {
                        Cycles::Even => "side ahead",
                        Cycles::Forced => "side whose bound is not 0",
                    }
                ),
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
        if depths {
            // The chart draws values.
            continue;
        }
        sets.entry(id)
            .or_insert_with(|| TableSet {
                rules: h.rules,
                cycles: h.cycles,
                levels: Vec::new(),
            })
            .levels
            .push(summary);
    }
    for (id, (levels, positions, bytes)) in totals {
        out!(
            "{id:<18} total: {levels} levels, {positions} positions, {bytes} bytes, {:.3} bits/position",
            8.0 * bytes as f64 / positions as f64
        );
    }
    if let Some(plot) = plot {
        write_chart(&plot, &args, sets.into_values().collect())?;
    }
    Ok(all_ok)
}

/// Draws the levels of `sets`, every table set `info` could read, in
/// `plot`.
fn write_chart(plot: &SvgPath, args: &InfoArgs, sets: Vec<TableSet>) -> Result<()> {
    if sets.is_empty() {
        bail!("no table in {} could be read to plot", args.dir.display());
    }
    plot.write(&plot::levels::chart(&sets)?)?;
    if !args.json {
        out!("chart of the levels: {}", plot.path().display());
    }
    Ok(())
}
