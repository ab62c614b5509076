//! Any bytes as a table file, read both ways: an error, or a table whose
//! every block decodes or fails cleanly, never a panic or an abort.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mancala_format::{Access, TableFile};

/// One file per fuzzing process, rewritten for each input.
fn path() -> &'static PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("mancala-tb-fuzz-{}.mtb", std::process::id()))
    })
}

fuzz_target!(|data: &[u8]| {
    std::fs::write(path(), data).unwrap();
    for access in [Access::Mapped, Access::Read] {
        let Ok(table) = TableFile::open_with(path(), access) else {
            continue;
        };
        let _ = table.check_file_checksum();
        let positions = table.header().positions;
        for at in [0, positions / 2, positions.saturating_sub(1), positions] {
            let _ = table.first_symbol(at);
        }
        if table.symbols() <= 1 << 22 {
            let _ = table.decode_all();
        }
    }
});
