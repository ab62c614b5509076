//! `mancala-tb verify`: checksums, and every stored value recomputed.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use mancala_core::{Cycles, Rules, Variant};
use mancala_format::{dir_name, level_files, rule_sets, tables_dir, Even, Forced};
use mancala_verify::{verify_with, LevelCheck, Recompute, VerifyError, VerifyOptions};

use crate::args::{parse_mib, parse_variant, Format, ProgressArgs};
use crate::levels::level_ranges;
use crate::progress::Progress;
use crate::signal::stop_on_signal;

#[derive(Args)]
pub struct VerifyArgs {
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
    /// Up to this level only (default: the highest level present).
    #[arg(long)]
    to: Option<u32>,
    /// Where levels too large for memory are held as mapped files (default:
    /// the system's temporary directory); the tables themselves are only
    /// read, so they may be read-only.
    #[arg(long)]
    scratch: Option<PathBuf>,
    /// About how much memory the decoded levels may take, in MiB: each
    /// level checked is held in memory if it fits (the lower levels moved
    /// to scratch files on disk to make room as needed), the levels below
    /// `--from` smallest first in what is left (default: only levels under
    /// 64 Mi positions in memory).
    #[arg(long, value_name = "MIB", value_parser = parse_mib)]
    max_memory: Option<usize>,
    #[command(flatten)]
    progress: ProgressArgs,
    /// Compare the tables value by value with another program's instead:
    /// `--against vu DIR` compares the awari tables with the VU Awari
    /// database's `scores.N` files in DIR.
    #[arg(long, num_args = 2, value_names = ["FORMAT", "DIR"])]
    against: Option<Vec<String>>,
}

pub fn run(args: VerifyArgs) -> Result<bool> {
    if let Some(against) = &args.against {
        return against_other(&args, against);
    }
    let selected: Vec<(Rules, Cycles)> = rule_sets(&args.dir)
        .with_context(|| format!("{}: cannot read the table directory", args.dir.display()))?
        .into_iter()
        .filter(|(rules, _)| args.rules.is_empty() || args.rules.contains(&rules.variant()))
        .collect();
    if selected.is_empty() {
        bail!("no tables to verify in {}", args.dir.display());
    }
    let interrupt = stop_on_signal("stopping")?;
    let scratch = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    let mut all_ok = true;
    for (at, &(rules, cycles)) in selected.iter().enumerate() {
        let name = dir_name(&rules, cycles);
        let verified = match cycles {
            Cycles::Even => verify_kind::<Even>(&args, &rules, &name, &interrupt),
            Cycles::Forced => verify_kind::<Forced>(&args, &rules, &name, &interrupt),
        };
        match verified {
            Ok(ok) => all_ok &= ok,
            Err(e) => match e.downcast_ref() {
                Some(&VerifyError::Interrupted { level }) => bail!(
                    "{name}: verification interrupted during level {level}; {} (the levels \
                     it decoded stay in {} for it)",
                    how_to_resume(&selected, at, level),
                    scratch.display()
                ),
                _ => {
                    out!("{name}: FAILED: {e}");
                    all_ok = false;
                }
            },
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

/// How to go on with a verification of the `selected` tables interrupted
/// in level `level` of the `at`-th: `--from` alone if it is the only one;
/// else `--from` applies to that rule set only, and the tables after it
/// are still to verify from their first level.
fn how_to_resume(selected: &[(Rules, Cycles)], at: usize, level: u32) -> String {
    if selected.len() == 1 {
        return format!("the same command with `--from {level}` resumes it");
    }
    let variant = selected[at].0.variant().name();
    let left: Vec<String> = selected[at + 1..]
        .iter()
        .map(|(rules, cycles)| dir_name(rules, *cycles))
        .collect();
    let mut hint = format!("the same command with `--rules {variant} --from {level}` resumes it");
    if !left.is_empty() {
        hint += &format!(" (not verified yet: {})", left.join(", "));
    }
    hint
}

/// Verifies the tables of one rule set and kind; whether every level passed.
/// A level missing below the highest file that a level above it needs, or
/// a selection with no level to recompute, is a failure: "all ok" means
/// every level was checked. A level no file above needs (the one a
/// `--top-only` build skips) is not missing.
fn verify_kind<K: Recompute>(
    args: &VerifyArgs,
    rules: &Rules,
    name: &str,
    interrupt: &Arc<AtomicBool>,
) -> Result<bool> {
    let files: Vec<u32> = level_files(&tables_dir(&args.dir, rules, K::CYCLES))?
        .into_iter()
        .filter(|&n| args.to.is_none_or(|to| n <= to))
        .collect();
    let Some(&top) = files.last() else {
        match args.to {
            Some(to) => out!("{name}: FAILED: no level files up to level {to}"),
            None => out!("{name}: FAILED: no level files"),
        }
        return Ok(false);
    };
    let missing: Vec<u32> = (0..top)
        .filter(|n| files.binary_search(n).is_err())
        .filter(|&n| {
            files
                .iter()
                .any(|&above| above > n && rules.reaches(above, n))
        })
        .collect();
    if !missing.is_empty() {
        out!(
            "{name}: FAILED: level{} {} missing below level {top}",
            if missing.len() == 1 { "" } else { "s" },
            level_ranges(&missing)
        );
    }
    // The levels below the first gap can still be checked.
    let last = missing.first().map_or(Some(top), |&gap| gap.checked_sub(1));
    let Some(last) = last.filter(|&last| args.from <= last) else {
        if missing.is_empty() {
            out!(
                "{name}: FAILED: nothing to verify from level {}: the levels end at {top}",
                args.from
            );
        }
        return Ok(false);
    };
    let options = VerifyOptions {
        from: args.from,
        to: Some(last),
        memory: args.max_memory.map(|bytes| bytes as u64),
        interrupt: Some(interrupt.clone()),
        ..VerifyOptions::new(args.scratch.clone().unwrap_or_else(std::env::temp_dir))
    };
    let progress = Progress::new()
        .with_lines(args.progress.every())
        .with_total_label(format!("{name}, all levels"));
    let checks = verify_with::<K>(&args.dir, rules, &options, &progress, |c| {
        progress.print(&check_lines(name, c))
    });
    progress.finish();
    let checks = checks?;
    Ok(missing.is_empty() && checks.iter().all(LevelCheck::ok))
}

/// `verify --against FORMAT DIR`: every level of ours that DIR has too,
/// compared; whether at least one was and all agree.
fn against_other(args: &VerifyArgs, against: &[String]) -> Result<bool> {
    let [format, dir] = against else {
        bail!("--against takes a format and a directory: --against vu DIR");
    };
    let Ok(Format::Vu) = Format::from_str(format, false) else {
        bail!("--against {format}: unknown format (expected vu)");
    };
    if !args.rules.is_empty() && args.rules != [Variant::Awari] {
        bail!("--against vu compares awari tables: leave out --rules or give --rules awari");
    }
    let dir = PathBuf::from(dir);
    let scratch = args.scratch.clone().unwrap_or_else(std::env::temp_dir);
    let progress = Progress::new();
    let compared = mancala_vu::compare(&args.dir, &dir, None, &scratch, &progress);
    progress.finish();
    let compared = compared?;
    let mut agree = true;
    let mut any = false;
    for level in compared.iter().filter(|l| l.level >= args.from) {
        let name = mancala_vu::file_name(level.level);
        if !level.compared {
            out!(
                "awari level {:>3}: no {name} in {}: not compared",
                level.level,
                dir.display()
            );
            continue;
        }
        any = true;
        agree &= level.agrees();
        let status = match level.mismatches {
            0 => "ok".to_string(),
            n => format!("FAILED: {n} mismatches"),
        };
        out!(
            "awari level {:>3}: {:>14} positions against {name} {status}",
            level.level,
            level.positions
        );
        for m in &level.first {
            out!(
                "    byte {:>12} ({}): ours {}, VU {}",
                m.number,
                m.position,
                m.ours,
                m.theirs
            );
        }
    }
    if !any {
        out!(
            "verify --against vu: FAILED: no level of {} has a scores.N file in {}",
            args.dir.display(),
            dir.display()
        );
        return Ok(false);
    }
    out!(
        "{}",
        if agree {
            "verify --against vu: every compared level agrees"
        } else {
            "verify --against vu: FAILED"
        }
    );
    Ok(agree)
}

/// Positions a second, in the unit that reads best.
fn rate(positions: u64, seconds: f64) -> String {
    let per_second = positions as f64 / seconds.max(1e-9);
    if per_second >= 1e6 {
        format!("{:.2} M positions/s", per_second / 1e6)
    } else {
        format!("{:.0} positions/s", per_second)
    }
}

/// The lines that report one verified level.
fn check_lines<K: Recompute>(name: &str, c: &LevelCheck<K>) -> String {
    let status = if c.mismatches == 0 && c.histogram_ok {
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
    let seconds = c.checking.as_secs_f64();
    let mut lines = format!(
        "{name} level {:>3}: {:>14} positions {status}{exact} ({seconds:.1} s, {}; read in {:.1} s)",
        c.level,
        c.positions,
        rate(c.positions, seconds),
        c.loading.as_secs_f64()
    );
    if let Some((pos, stored, expected)) = &c.first_mismatch {
        lines += &format!("\n    first mismatch: {pos} stored {stored}, recomputed {expected}");
    }
    if !c.histogram_ok {
        lines += "\n    the header's histogram does not match the values";
    }
    if let Some(depths) = &c.depths {
        let longest = depths.longest.map_or("none".into(), |d| d.to_string());
        match &depths.first_mismatch {
            None => lines += &format!(", depths ok (longest {longest} plies)"),
            Some((pos, stored, expected)) => {
                lines += &format!(
                    "\n    depths FAILED: {} mismatches; first: {pos} stored {stored}, by the definition {expected}",
                    depths.mismatches
                )
            }
        }
    }
    lines
}
