//! `mancala-tb verify`: checksums, and every stored value recomputed.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use mancala_core::{Cycles, Rules, Variant, MAX_LEVEL};
use mancala_format::{dir_name, levels_present, rule_sets, tables_dir, Even, Forced, FormatError};
use mancala_verify::{verify, LevelCheck, Recompute};

use crate::args::parse_variant;

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
}

pub fn run(args: VerifyArgs) -> Result<bool> {
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
        let verified = match cycles {
            Cycles::Even => verify_kind::<Even>(&args, &rules, &name),
            Cycles::Forced => verify_kind::<Forced>(&args, &rules, &name),
        };
        match verified {
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

/// Verifies the tables of one rule set and kind; whether every level passed.
fn verify_kind<K: Recompute>(
    args: &VerifyArgs,
    rules: &Rules,
    name: &str,
) -> Result<bool, FormatError> {
    let present = levels_present(&tables_dir(&args.dir, rules, K::CYCLES), MAX_LEVEL);
    let max = present.checked_sub(1);
    let checks = verify::<K>(&args.dir, rules, args.from, max, |c| report_check(name, c))?;
    Ok(checks.iter().all(LevelCheck::ok))
}

/// Prints one verified level (best effort: a closed stdout only loses the
/// report, the exit status still tells).
fn report_check<K: Recompute>(name: &str, c: &LevelCheck<K>) {
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
