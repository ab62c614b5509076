//! Arguments several subcommands share, and their parsers.

use std::time::Duration;

use clap::{Args, ValueEnum};
use mancala_core::{Cycles, Rules, Variant};
use mancala_format::Encoding;
use mancala_gen::MemoryMode;

use crate::machine;

/// `--progress-every`: how a long command (`build`, `verify`) tells its
/// progress when no one watches its terminal.
#[derive(Args)]
pub struct ProgressArgs {
    /// When stderr is not a terminal (a long run in the background, its
    /// output in a log), write a progress line there this often: the share
    /// of the level and of the whole run done, with their ETAs (seconds;
    /// 0 = never).
    #[arg(
        long,
        value_name = "SECONDS",
        default_value = "60",
        value_parser = parse_interval,
        allow_negative_numbers = true
    )]
    progress_every: Duration,
}

impl ProgressArgs {
    /// How often to write a progress line, if ever.
    pub fn every(&self) -> Option<Duration> {
        (!self.progress_every.is_zero()).then_some(self.progress_every)
    }
}

/// `--rules`, `--pits`, `--empty-capture`: the rule set.
#[derive(Args, Clone)]
pub struct RulesArgs {
    /// Rule set: oware, awari, wari or kalah.
    #[arg(long, default_value = "oware", value_parser = parse_variant)]
    pub rules: Variant,
    /// Pits per side (1..=8).
    #[arg(long, default_value_t = 6)]
    pub pits: usize,
    /// Kalah: a last seed in an empty own pit captures even when the
    /// opposite pit is empty.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub empty_capture: bool,
}

impl RulesArgs {
    /// The rule set the flags select; `--empty-capture=false` is a Kalah
    /// option, refused elsewhere rather than silently ignored.
    pub fn rules(&self) -> anyhow::Result<Rules> {
        if !self.empty_capture && self.rules != Variant::Kalah {
            anyhow::bail!(
                "--empty-capture=false is a kalah option, not one of {}",
                self.rules
            );
        }
        Ok(Rules::new(self.rules, self.pits)?.with_empty_capture(self.empty_capture))
    }
}

/// Formats tables are exported to and imported from.
#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// The VU Awari database: one signed byte per position, `scores.N` per
    /// level (docs/VU-FORMAT.md); awari tables, 6 pits, even values.
    Vu,
}

/// The longest time option accepted: a year.
const MAX_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// A positive, finite number of seconds, at most a year.
pub fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number of seconds"))?;
    if !(seconds > 0.0 && seconds <= MAX_SECONDS) {
        return Err(format!(
            "'{text}' seconds: expected a number above 0 and at most {MAX_SECONDS} (a year)"
        ));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// How often to do something: 0 (never, as [`Duration::ZERO`]) or
/// [`parse_seconds`].
pub fn parse_interval(text: &str) -> Result<Duration, String> {
    match text.trim().parse::<f64>() {
        Ok(0.0) => Ok(Duration::ZERO),
        _ => parse_seconds(text).map_err(|e| format!("{e}, or 0 for never")),
    }
}

/// `--checkpoint-minutes`: 0 (never, as [`Duration::ZERO`]) or a positive
/// number of minutes, at most a year. Fractions are allowed, so a test can
/// make a small level save its state many times.
pub fn parse_minutes(text: &str) -> Result<Duration, String> {
    match text.trim().parse::<f64>() {
        Ok(0.0) => Ok(Duration::ZERO),
        Ok(minutes) if minutes > 0.0 && minutes * 60.0 <= MAX_SECONDS => {
            Ok(Duration::from_secs_f64(minutes * 60.0))
        }
        _ => Err(format!(
            "'{text}' minutes: expected a number above 0 and at most a year, or 0 for never"
        )),
    }
}

/// A memory size in MiB, as bytes, that this machine has room for.
pub fn parse_mib(text: &str) -> Result<usize, String> {
    let mib: u64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a whole number of MiB"))?;
    let bytes = mib.checked_mul(1 << 20).filter(|&b| b <= usize::MAX as u64);
    let bytes = bytes.ok_or_else(|| format!("{mib} MiB is more than any machine has"))?;
    if let Some(total) = machine::total_memory() {
        if bytes > total {
            return Err(format!(
                "{mib} MiB is more than this machine's {} of memory",
                machine::gib(total)
            ));
        }
    }
    Ok(bytes as usize)
}

/// Worker threads: at least 1, at most 8 per core (more only thrash).
pub fn parse_threads(text: &str) -> Result<usize, String> {
    let most = 8 * machine::cores();
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=most).contains(&n) => Ok(n),
        _ => Err(format!(
            "'{text}' threads: expected 1..={most} (8 per core of this machine)"
        )),
    }
}

/// The flags that select `rules` on the command line, as hints print them.
pub fn rules_flags(rules: &Rules) -> String {
    let mut flags = format!("--rules {} --pits {}", rules.variant(), rules.pits());
    if !rules.empty_capture() {
        flags.push_str(" --empty-capture=false");
    }
    flags
}

/// The flag that selects tables of kind `cycles` (none for the default).
pub fn cycles_flag(cycles: Cycles) -> &'static str {
    match cycles {
        Cycles::Even => "",
        Cycles::Forced => " --cycles forced",
    }
}

pub fn parse_variant(name: &str) -> Result<Variant, String> {
    Variant::from_name(name).map_err(|e| e.to_string())
}

pub fn parse_cycles(name: &str) -> Result<Cycles, String> {
    Cycles::from_name(name).map_err(|e| e.to_string())
}

pub fn parse_encoding(name: &str) -> Result<Encoding, String> {
    Encoding::from_cli_name(name)
        .ok_or_else(|| format!("unknown encoding '{name}' (expected compact or full)"))
}

/// `fast` or `lean`: how much memory a build's level being solved takes.
pub fn parse_memory(name: &str) -> Result<MemoryMode, String> {
    match name {
        "fast" => Ok(MemoryMode::Fast),
        "lean" => Ok(MemoryMode::Lean),
        _ => Err(format!(
            "unknown memory mode '{name}' (expected fast or lean)"
        )),
    }
}

/// `MOVER,OPPONENT`: stones already captured by each side.
pub fn parse_captured(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("'{text}' is not MOVER,OPPONENT (two counts of captured stones)");
    let (mover, opponent) = text.split_once(',').ok_or_else(bad)?;
    let count = |t: &str| t.trim().parse::<u32>().map_err(|_| bad());
    Ok((count(mover)?, count(opponent)?))
}
