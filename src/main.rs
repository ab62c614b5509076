//! The `mancala-tb` command; everything it does is in the application's
//! library (`src/lib.rs`).

fn main() -> std::process::ExitCode {
    mancala_tb::main()
}
