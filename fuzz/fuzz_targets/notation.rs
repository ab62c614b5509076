//! Any text given as a position: an error or a position whose notation
//! reads back as itself, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mancala_core::Position;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for pits in 0..=9 {
        if let Ok(pos) = Position::parse(pits, text) {
            assert_eq!(Position::parse(pits, &pos.to_string()).ok(), Some(pos));
        }
    }
    let _ = text.parse::<Position>();
});
