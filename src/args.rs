//! Arguments several subcommands share, and their parsers.

use clap::Args;
use mancala_core::{Cycles, Rules, Variant};
use mancala_format::Encoding;

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
    /// The rule set the flags select.
    pub fn rules(&self) -> anyhow::Result<Rules> {
        Ok(Rules::new(self.rules, self.pits)?.with_empty_capture(self.empty_capture))
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
    Encoding::ALL
        .into_iter()
        .find(|e| e.cli_name() == name)
        .ok_or_else(|| format!("unknown encoding '{name}' (expected compact or full)"))
}

/// `MOVER,OPPONENT`: stones already captured by each side.
pub fn parse_captured(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("'{text}' is not MOVER,OPPONENT (two counts of captured stones)");
    let (mover, opponent) = text.split_once(',').ok_or_else(bad)?;
    let count = |t: &str| t.trim().parse::<u32>().map_err(|_| bad());
    Ok((count(mover)?, count(opponent)?))
}
