//! The VU files in a directory: their names, and each level's file opened
//! with its length checked.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use mancala_core::{Rules, Variant};
use mancala_format::{open_regular, FormatError};

use crate::error::VuError;
use crate::godel::GodelIndex;

/// Pits a side on the VU database's board.
pub(crate) const PITS: usize = 6;

/// The rule set the VU database was solved under: our `awari`.
pub fn rules() -> Rules {
    Rules::new(Variant::Awari, PITS).expect("six pits is a board")
}

/// The name of level `n`'s file: `scores.n`.
pub fn file_name(n: u32) -> String {
    format!("scores.{n}")
}

/// Level `n`'s file in `dir`.
pub(crate) fn file_path(dir: &Path, n: u32) -> PathBuf {
    dir.join(file_name(n))
}

/// The levels that have a file in `dir`, in order.
pub fn levels_in(dir: &Path) -> Result<Vec<u32>, VuError> {
    let entries = std::fs::read_dir(dir).map_err(|e| VuError::io(dir, e))?;
    let mut levels = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| VuError::io(dir, e))?;
        let name = entry.file_name();
        let level = name
            .to_str()
            .and_then(|name| name.strip_prefix("scores."))
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|n| file_name(*n) == name.to_string_lossy());
        levels.extend(level);
    }
    levels.sort_unstable();
    Ok(levels)
}

/// A level's file, open for one sequential read.
pub(crate) struct LevelFile {
    pub path: PathBuf,
    reader: BufReader<File>,
}

impl LevelFile {
    /// Opens level `n`'s file in `dir`, which must hold one byte per
    /// numbered position.
    pub fn open(dir: &Path, n: u32) -> Result<LevelFile, VuError> {
        let path = file_path(dir, n);
        // Only a regular file: a FIFO would block the read for ever, and a
        // directory or a device has no size to check.
        let file = match open_regular(&path) {
            Ok(file) => file,
            Err(FormatError::Missing { .. }) => {
                return Err(VuError::Missing {
                    dir: dir.to_path_buf(),
                    path,
                    level: n,
                })
            }
            Err(e) => return Err(e.into()),
        };
        let found = file.metadata().map_err(|e| VuError::io(&path, e))?.len();
        let expected = GodelIndex::new(PITS, n).count();
        if found != expected {
            return Err(VuError::WrongSize {
                path,
                level: n,
                expected,
                found,
            });
        }
        Ok(LevelFile {
            path,
            reader: BufReader::with_capacity(1 << 20, file),
        })
    }

    /// The next `len` bytes of the file, as values.
    pub fn read(&mut self, len: usize) -> Result<Vec<i8>, VuError> {
        let mut bytes = vec![0u8; len];
        self.reader
            .read_exact(&mut bytes)
            .map_err(|e| VuError::io(&self.path, e))?;
        Ok(bytes.into_iter().map(|b| b as i8).collect())
    }
}
