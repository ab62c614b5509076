//! Our awari tables read level by level, from 0 up, for an export or a
//! comparison: each level's values decoded, a compact level's restored from
//! the levels below, which are held only where that needs them.

use std::borrow::Cow;
use std::path::Path;

use mancala_core::{Cycles, Rules, MAX_LEVEL};
use mancala_format::{
    dir_name, level_path, levels_present, tables_dir, Even, Levels, Scratch, Table, TableId,
    MAPPED_MIN_POSITIONS,
};

use crate::error::VuError;
use crate::files::rules;

/// Our even awari tables under one root, read in level order.
pub(crate) struct OurLevels {
    dir: std::path::PathBuf,
    rules: Rules,
    scratch: Scratch,
    /// The levels read so far, if the tables are compact (and so need
    /// them); empty otherwise.
    held: Levels<Even>,
}

impl OurLevels {
    /// The tables under `root`; levels too large for memory are held as
    /// mapped files in a directory of their own under `scratch`.
    pub fn new(root: &Path, scratch: &Path) -> OurLevels {
        let rules = rules();
        let name = format!(
            "mancala-tb-vu-{}-{}",
            dir_name(&rules, Cycles::Even),
            std::process::id()
        );
        OurLevels {
            dir: tables_dir(root, &rules, Cycles::Even),
            rules,
            scratch: Scratch::new(scratch.join(name), MAPPED_MIN_POSITIONS),
            held: Levels::new(),
        }
    }

    /// The last level to read: `max`, or without it the last level of
    /// those present from 0 on; every level up to it must be present.
    pub fn last_level(&self, max: Option<u32>) -> Result<u32, VuError> {
        let present = levels_present(&self.dir, MAX_LEVEL);
        let asked = max.unwrap_or(present.saturating_sub(1));
        if asked >= present {
            return Err(VuError::NoTables {
                dir: self.dir.clone(),
                asked,
                present,
            });
        }
        Ok(asked)
    }

    /// Level `n`'s values in our index order, after its file passed its
    /// checks. Levels must be read in order from 0.
    pub fn values(&mut self, n: u32) -> Result<Cow<'_, [i8]>, VuError> {
        let expected = TableId {
            rules: self.rules,
            level: n,
        };
        let table = Table::<Even>::open(&level_path(&self.dir, n), Some(expected))?;
        table.check_file_checksum()?;
        if table.entries_are_values() {
            return Ok(Cow::Owned(table.decode_entries(&Levels::new())?));
        }
        if self.held.len() != n as usize {
            return Err(VuError::Level {
                level: n,
                reason: format!(
                    "{} mixes encodings: a compact level above full ones",
                    self.dir.display()
                ),
            });
        }
        self.scratch.hold_table(&mut self.held, &table)?;
        Ok(Cow::Borrowed(self.held.symbols(n)))
    }
}
