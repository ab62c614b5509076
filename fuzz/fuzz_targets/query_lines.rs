//! Any bytes as `query -`'s input, on real tables: exactly one answer line
//! per input line, in both output formats, never a panic.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mancala_core::{Rules, Variant};
use mancala_gen::{build, BuildOptions, Quiet};
use mancala_probe::Tablebase;

/// Oware tables to 6 stones, built once per fuzzing process.
fn tables() -> &'static Tablebase {
    static TABLES: OnceLock<(tempdir::Dir, Tablebase)> = OnceLock::new();
    &TABLES
        .get_or_init(|| {
            let dir = tempdir::Dir::new();
            let rules = Rules::new(Variant::Oware, 6).unwrap();
            build(&BuildOptions::new(dir.path(), rules, 6), &Quiet).unwrap();
            let tb = Tablebase::open(dir.path(), rules).unwrap();
            (dir, tb)
        })
        .1
}

mod tempdir {
    /// A directory removed when the process ends normally.
    pub struct Dir(std::path::PathBuf);

    impl Dir {
        pub fn new() -> Dir {
            let path =
                std::env::temp_dir().join(format!("mancala-tb-fuzz-q-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir_all(&path).unwrap();
            Dir(path)
        }

        pub fn path(&self) -> &std::path::Path {
            &self.0
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let lines = if data.is_empty() {
        0
    } else {
        data.strip_suffix(b"\n")
            .unwrap_or(data)
            .split(|&b| b == b'\n')
            .count()
    };
    for json in [false, true] {
        let mut out = Vec::new();
        mancala_tb::cmd::query::answer_lines(tables(), (0, 0), json, data, &mut out).unwrap();
        let text = String::from_utf8(out).expect("answers are text");
        assert_eq!(text.lines().count(), lines, "one answer line per line");
    }
});
