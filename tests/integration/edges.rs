//! The edges a demanding user hits: options out of range, files changed or
//! damaged under a running server, odd bytes in a batch, read-only tables,
//! two builds at once, stale temporary files, options that do not fit the
//! tables present, advice the machine cannot follow, and clients that hold
//! connections or announce huge bodies. Each gives a clear one-line error
//! or the right answer, never a panic (exit 101), an abort (134) or a
//! signal.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use mancala_core::Cycles;
use mancala_format::{level_file_name, tables_dir, Even, Table};
use mancala_gen::LOCK_FILE;
use serde_json::Value as Json;

use crate::cli::{built, fails, json_lines, ok, oware, stderr, stdout, with_stdin_bytes};
use crate::{mancala_tb, Served};

/// Neither a panic, an abort nor a signal: a clean exit with `code`.
pub(crate) fn assert_clean_exit(out: &Output, code: i32, what: &str) {
    assert_eq!(out.status.signal(), None, "{what}: killed by a signal");
    assert_eq!(out.status.code(), Some(code), "{what}: {}", stderr(out));
}

#[test]
fn time_and_memory_options_out_of_range_are_usage_errors() {
    for args in [
        &["solve", "--seeds", "1", "--seconds", "1e20"][..],
        &["solve", "--seeds", "1", "--seconds", "inf"],
        &["solve", "--seeds", "1", "--seconds", "NaN"],
        &["solve", "--seeds", "1", "--seconds=-1"],
        &["play", "--seeds", "1", "--seconds", "1e300"],
        &["play", "--seconds", "NaN"],
        &[
            "query",
            "--cache-mib",
            "100000000",
            "1,0,0,0,0,0/1,0,0,0,0,0",
        ],
        &[
            "solve",
            "--rules",
            "kalah",
            "--pits",
            "4",
            "--seeds",
            "2",
            "--tt-mib",
            "100000000",
        ],
        &["build", "--stones", "3", "--threads", "100000"],
    ] {
        let out = mancala_tb(args);
        assert_clean_exit(&out, 2, &format!("{args:?}"));
        let err = stderr(&out);
        assert!(
            err.starts_with("mancala-tb: invalid value") && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
    let err = fails(&["query", "--empty-capture=false", "1,0,0,0,0,0/1,0,0,0,0,0"]);
    assert!(err.contains("kalah option"), "{err}");
}

#[test]
fn advice_fits_the_machine() {
    let (_dir, path) = built(4);
    let err = fails(&["query", "--dir", &path, "255,0,0,0,0,0/0,0,0,0,0,0"]);
    assert!(err.contains("no table holds more than 127"), "{err}");
    assert!(!err.contains("mancala-tb build"), "{err}");
    let err = fails(&["query", "--dir", &path, "40,8,0,0,0,0/0,0,0,0,0,0"]);
    assert!(
        err.contains("needs about") && err.contains("memory"),
        "{err}"
    );
    let err = fails(&["query", "--dir", &path, "6,0,0,0,0,0/0,0,0,0,0,0"]);
    assert!(
        err.contains("mancala-tb build --rules oware --pits 6 --stones 6"),
        "{err}"
    );
    let err = fails(&["build", "--stones", "200", "--dir", &path]);
    assert!(err.contains("at most 127 stones"), "{err}");
}

/// A damaged block fails the positions that need it, and only them.
#[test]
fn a_damaged_block_fails_only_the_positions_that_need_it() {
    let (dir, path) = built(8);
    let (intact, intact_path) = built(8);
    let file = tables_dir(dir.path(), &oware(), Cycles::Even).join(level_file_name(8));
    let mut bytes = fs::read(&file).unwrap();
    // A byte in the middle of the data: one block of 768 positions
    // (of 99).
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x20;
    fs::write(&file, bytes).unwrap();
    let index = mancala_core::LevelIndex::new(6, 8);
    let mut input = Vec::new();
    for at in (0..index.count()).step_by(41) {
        input.extend_from_slice(index.unrank(at).to_string().as_bytes());
        input.push(b'\n');
    }
    let damaged = with_stdin_bytes(&["query", "--dir", &path, "-"], input.clone());
    let good = with_stdin_bytes(&["query", "--dir", &intact_path, "-"], input);
    assert_clean_exit(&damaged, 1, "a damaged block");
    let (damaged, good) = (stdout(&damaged), stdout(&good));
    let lines: Vec<(&str, &str)> = damaged.lines().zip(good.lines()).collect();
    assert_eq!(lines.len(), good.lines().count());
    let failed = lines.iter().filter(|(d, _)| d.contains(" error: ")).count();
    assert!(failed > 0, "the damage was read");
    assert!(
        failed < lines.len() / 4,
        "{failed} of {} failed",
        lines.len()
    );
    for (damaged, good) in &lines {
        if !damaged.contains(" error: ") {
            assert_eq!(damaged, good);
        } else {
            assert!(damaged.contains("corrupted"), "{damaged}");
        }
    }
    drop(intact);
}

/// Verifying writes nothing beside the tables (they may be read-only), a
/// missing level is a failure that names it, and so is a selection with
/// nothing to check; building a complete set writes nothing either.
#[test]
fn verify_neither_writes_nor_says_ok_wrongly() {
    let (dir, path) = built(5);
    let tables = tables_dir(dir.path(), &oware(), Cycles::Even);
    let listing = || {
        let mut names: Vec<String> = fs::read_dir(&tables)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    };
    let before = listing();
    let out = mancala_tb(&["verify", "--dir", &path]);
    assert!(stdout(&out).contains("all tables ok"), "{}", stdout(&out));
    let out = mancala_tb(&["build", "--stones", "5", "--dir", &path]);
    assert!(out.status.success());
    assert_eq!(listing(), before, "verify or a complete build wrote");

    let out = mancala_tb(&["verify", "--dir", &path, "--from", "99"]);
    assert_clean_exit(&out, 1, "--from 99");
    assert!(
        stdout(&out).contains("nothing to verify"),
        "{}",
        stdout(&out)
    );

    fs::remove_file(tables.join(level_file_name(3))).unwrap();
    let out = mancala_tb(&["verify", "--dir", &path]);
    assert_clean_exit(&out, 1, "a missing level");
    let text = stdout(&out);
    assert!(text.contains("level 3 missing below level 5"), "{text}");
    assert!(text.contains("verify: FAILED"), "{text}");
}

/// One build at a time: a second one names the holder and fails, or waits
/// with `--wait`; temporary files a killed build left are swept, and none
/// that a linked directory leads to.
#[test]
fn builds_take_turns_and_sweep_what_killed_ones_left() {
    let (dir, path) = built(4);
    let tables = tables_dir(dir.path(), &oware(), Cycles::Even);
    let lock = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(tables.join(LOCK_FILE))
        .unwrap();
    lock.try_lock().unwrap();
    let err = fails(&["build", "--stones", "5", "--dir", &path]);
    assert!(err.contains("being built by another build"), "{err}");
    assert!(err.contains("pass --wait to wait for it"), "{err}");
    let waiting = std::thread::spawn({
        let path = path.clone();
        move || mancala_tb(&["build", "--stones", "5", "--dir", &path, "--wait"])
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !tables.join(level_file_name(5)).exists(),
        "built while locked"
    );
    lock.unlock().unwrap();
    let out = waiting.join().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(tables.join(level_file_name(5)).exists());

    let stale = tables.join("level-006.mtb.999999.tmp");
    fs::write(&stale, b"MANCALTB partial").unwrap();
    let shared = tempfile::TempDir::new().unwrap();
    let elsewhere = shared.path().join("level-002.mtb.999999.tmp");
    fs::write(&elsewhere, b"another program's").unwrap();
    std::os::unix::fs::symlink(shared.path(), tables.join("linked")).unwrap();
    let out = mancala_tb(&["build", "--stones", "6", "--dir", &path]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stale.exists(), "a stale temporary file was left");
    assert!(elsewhere.exists(), "the sweep followed a link");
}

/// A build that runs out of room (here a file-size limit, which fails
/// writes as a full disk does) fails cleanly and leaves no partial file;
/// the next build with room finishes the set.
#[test]
fn a_build_that_loses_its_disk_leaves_nothing_behind() {
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().to_str().unwrap();
    // `ulimit -f` counts blocks of 512 or 1024 bytes depending on the
    // shell: either way the larger levels do not fit. SIGXFSZ ignored
    // makes an oversized write fail with EFBIG instead of killing.
    let script = format!(
        "trap '' XFSZ; ulimit -f 200; exec \"{}\" build --stones 12 --dir \"{path}\"",
        env!("CARGO_BIN_EXE_mancala-tb")
    );
    let out = std::process::Command::new("sh")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert_clean_exit(&out, 1, "a build out of room");
    let err = stderr(&out);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let tables = tables_dir(dir.path(), &oware(), Cycles::Even);
    let left: Vec<String> = fs::read_dir(&tables)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| !name.ends_with(".mtb") && name != LOCK_FILE)
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    assert!(
        !tables.join(level_file_name(12)).exists(),
        "the limit did not bite"
    );
    crate::cli::ok(&["build", "--stones", "12", "--dir", path]);
    let out = mancala_tb(&["verify", "--dir", path]);
    assert!(stdout(&out).contains("all tables ok"), "{}", stdout(&out));
}

/// A build never mixes encodings or block sizes in one set.
#[test]
fn options_that_do_not_fit_the_tables_present_are_refused() {
    let (_dir, path) = built(5);
    for extra in [&["--encoding", "compact"][..], &["--block-size", "64"]] {
        let mut args = vec!["build", "--stones", "6", "--dir", &path];
        args.extend_from_slice(extra);
        let err = fails(&args);
        assert!(err.contains("is stored full in blocks of 768"), "{err}");
        assert!(err.contains("--force"), "{err}");
    }
    let mut args = vec!["build", "--stones", "6", "--dir", &path];
    args.extend_from_slice(&["--encoding", "compact", "--force"]);
    assert!(mancala_tb(&args).status.success());
}

/// A set built with another block size than today's default (an older
/// version's default, or `--block-size`) grows in its own block size
/// when none is asked.
#[test]
fn a_set_keeps_its_block_size_as_it_grows() {
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().to_str().unwrap();
    ok(&[
        "build",
        "--stones",
        "5",
        "--block-size",
        "64",
        "--dir",
        path,
    ]);
    ok(&["build", "--stones", "7", "--dir", path]);
    let tables = tables_dir(dir.path(), &oware(), Cycles::Even);
    for n in 0..=7 {
        let table = Table::<Even>::open(&tables.join(level_file_name(n)), None).unwrap();
        assert_eq!(table.header().block_size, 64, "level {n}");
    }
    let out = ok(&["verify", "--dir", path]);
    assert!(out.contains("all tables ok"), "{out}");
}

/// A file truncated, or rewritten in place, under a running server: the
/// server answers errors for what it cannot read (naming the file as its
/// clients know it), stays up, and answers from the new file once it is
/// whole again.
#[test]
fn a_running_server_survives_its_files_changing() {
    let (dir, _path) = built(8);
    let server = Served::start(dir.path());
    let file = tables_dir(dir.path(), &oware(), Cycles::Even).join(level_file_name(8));
    let good = fs::read(&file).unwrap();
    let url = format!(
        "{}/v1/oware/6/position/2,2,2,0,0,0/0,0,0,0,1,1",
        server.base
    );
    let get = |url: &str| -> (u16, Json) {
        let response = reqwest::blocking::get(url).unwrap();
        let status = response.status().as_u16();
        (status, response.json().unwrap())
    };
    let (status, answer) = get(&url);
    assert_eq!(status, 200, "{answer}");

    // Truncated in place: errors, never a crash.
    let f = fs::OpenOptions::new().write(true).open(&file).unwrap();
    f.set_len(good.len() as u64 / 3).unwrap();
    drop(f);
    let (status, body) = get(&url);
    assert_eq!(status, 500, "{body}");
    // The file is named by its place among the tables, not by the
    // server's own path.
    let error = body["error"].as_str().unwrap();
    assert!(error.starts_with("oware-6/level-008.mtb: "), "{error}");
    assert!(!error.contains(&*dir.path().to_string_lossy()), "{error}");
    let (status, _) = get(&format!("{}/health", server.base));
    assert_eq!(status, 200);

    // Rewritten in place with the good bytes: answered again, by the new
    // file, once the server has seen the change.
    fs::write(&file, &good).unwrap();
    let started = Instant::now();
    loop {
        let (status, body) = get(&url);
        if status == 200 {
            assert_eq!(body, answer);
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "still {status} after the file was restored: {body}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A client that sends nothing is let go; a body announced too large is
/// refused before it is sent; host names and missing directories are
/// handled when the server starts.
#[test]
fn the_server_bounds_what_clients_can_hold() {
    let (dir, path) = built(4);
    let server = Served::start(dir.path());
    let address = server.base.trim_start_matches("http://").to_string();

    let mut huge = TcpStream::connect(&address).unwrap();
    huge.write_all(
        b"POST /v1/analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n",
    )
    .unwrap();
    huge.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut reply = [0u8; 64];
    let n = huge.read(&mut reply).unwrap();
    let reply = String::from_utf8_lossy(&reply[..n]);
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");

    let mut idle = TcpStream::connect(&address).unwrap();
    idle.write_all(b"GET /health HTTP/1.1\r\nHost: x").unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let started = Instant::now();
    let mut rest = Vec::new();
    let _ = idle.read_to_end(&mut rest);
    let held = started.elapsed();
    assert!(held < Duration::from_secs(25), "held for {held:?}");

    let err = fails(&["serve", "--dir", &format!("{path}/nowhere")]);
    assert!(err.contains("no such table directory"), "{err}");
    let file = dir.path().join("a-file");
    fs::write(&file, b"x").unwrap();
    let err = fails(&["serve", "--dir", file.to_str().unwrap()]);
    assert!(err.contains("not a directory"), "{err}");
    let named = Served::start_at(dir.path(), "localhost:0");
    let (status, _) = {
        let response = reqwest::blocking::get(format!("{}/health", named.base)).unwrap();
        (response.status().as_u16(), ())
    };
    assert_eq!(status, 200);
}

#[test]
fn small_reports_say_what_they_mean() {
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().to_str().unwrap().to_string();
    ok(&[
        "build",
        "--stones",
        "3",
        "--block-size",
        "512",
        "--dir",
        &path,
    ]);
    let out = mancala_tb(&["info", "--json", "--dir", &path]);
    let files = json_lines(&stdout(&out));
    assert_eq!(files.len(), 4);
    // The digest is the one `sha256sum` gives on any machine: the golden
    // list recorded these same four files elsewhere (in the single crate's
    // blocks of 512 positions).
    let golden = include_str!("../../crates/gen/tests/golden/golden-full.txt");
    for file in &files {
        let crc = file["crc32"].as_str().expect("a crc32");
        assert_eq!(crc.len(), 8, "{file}");
        let name = Path::new(file["file"].as_str().unwrap())
            .file_name()
            .unwrap();
        let listed = format!("./oware-6/{}", name.to_str().unwrap());
        let digest = file["sha256"].as_str().expect("a sha256");
        assert!(golden.contains(&format!("{digest}  {listed}\n")), "{file}");
    }
    // Level 0 is one position: no rate is made up for it, however long
    // the scheduler made it take.
    let summary = crate::cli::ok(&["build", "--stones", "4", "--dir", &path, "--force"]);
    let level0 = summary
        .lines()
        .find(|l| l.trim_start().starts_with("0 "))
        .unwrap();
    assert!(level0.split_whitespace().nth(3) == Some("-"), "{level0}");
    drop(dir);
}

/// Runs the command line with `args` until a line of its stderr contains
/// `marker`, then sends it SIGINT (as Ctrl-C does): its exit status, its
/// stdout, and its stderr after that line.
fn interrupted_once(
    args: &[impl AsRef<std::ffi::OsStr>],
    marker: &str,
) -> (std::process::ExitStatus, String, String) {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = crate::binary()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 && !line.contains(marker) {
        line.clear();
    }
    let pid = child.id().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let mut out = String::new();
    let mut stdout = child.stdout.take().unwrap();
    stdout.read_to_string(&mut out).unwrap();
    (child.wait().unwrap(), out, rest)
}

/// Ctrl-C stops a verification within a moment with a one-line error
/// naming the level to resume from and a non-zero exit; `--from` that
/// level then finishes it.
#[test]
fn an_interrupted_verification_says_where_to_resume() {
    let (_dir, path) = built(12);
    let args = ["verify", "--dir", &path, "--progress-every", "0.000001"];
    let (status, out, rest) = interrupted_once(&args, "level  11");
    assert_eq!(status.code(), Some(1), "{rest}");
    assert!(!out.contains("all tables ok"), "{out}");
    let error = rest.lines().last().unwrap_or_default();
    let level = error
        .split("interrupted during level ")
        .nth(1)
        .and_then(|after| after.split(';').next())
        .unwrap_or_else(|| panic!("no level to resume from: {rest}"));
    assert!(["11", "12"].contains(&level), "{error}");
    assert!(error.contains(&format!("`--from {level}`")), "{error}");
    let resumed = ok(&["verify", "--dir", &path, "--from", level]);
    assert!(resumed.ends_with("verify: all tables ok\n"), "{resumed}");
}

/// With several rule sets verified, the hint names the one `--from` is
/// for (the rule sets before it are verified; here it is the last).
#[test]
fn an_interrupted_verification_of_several_rule_sets_names_the_one_to_resume() {
    let (_dir, path) = built(12);
    ok(&["build", "--rules", "awari", "--stones", "8", "--dir", &path]);
    let args = ["verify", "--dir", &path, "--progress-every", "0.000001"];
    let (status, out, rest) = interrupted_once(&args, "level  11");
    assert_eq!(status.code(), Some(1), "{rest}");
    assert!(out.contains("awari-6 level   8:"), "{out}");
    let error = rest.lines().last().unwrap_or_default();
    assert!(error.starts_with("mancala-tb: oware-6: "), "{error}");
    let level = error
        .split("interrupted during level ")
        .nth(1)
        .and_then(|after| after.split(';').next())
        .unwrap_or_else(|| panic!("no level to resume from: {rest}"));
    assert!(
        error.contains(&format!("`--rules oware --from {level}` resumes it")),
        "{error}"
    );
    let resumed = ok(&[
        "verify", "--dir", &path, "--rules", "oware", "--from", level,
    ]);
    assert!(resumed.ends_with("verify: all tables ok\n"), "{resumed}");
}

/// Ctrl-C stops a build at its next check with a one-line error and a
/// non-zero exit, leaving no file of the level it was solving that looks
/// complete; the same build run again ends with a clean build's files.
#[test]
fn an_interrupted_build_stops_cleanly_and_resumes() {
    let clean = tempfile::TempDir::new().unwrap();
    const TOP: u32 = 11;
    let args = |dir: &Path| {
        vec![
            "build".to_string(),
            "--stones".to_string(),
            TOP.to_string(),
            "--memory".to_string(),
            "lean".to_string(),
            "--progress-every".to_string(),
            "0.000001".to_string(),
            "--dir".to_string(),
            dir.to_str().unwrap().to_string(),
        ]
    };
    let out = crate::binary().args(args(clean.path())).output().unwrap();
    assert_clean_exit(&out, 0, "a clean build");

    let dir = tempfile::TempDir::new().unwrap();
    let (status, _, rest) = interrupted_once(&args(dir.path()), &format!("level {:>3}", TOP - 1));
    assert_eq!(status.code(), Some(1), "{rest}");
    assert!(rest.contains("build interrupted"), "{rest}");

    let oware = mancala_core::Rules::new(mancala_core::Variant::Oware, 6).unwrap();
    let ours = tables_dir(dir.path(), &oware, Cycles::Even);
    let theirs = tables_dir(clean.path(), &oware, Cycles::Even);
    for n in 0..=TOP {
        let name = level_file_name(n);
        if let Ok(bytes) = fs::read(ours.join(&name)) {
            assert!(
                bytes == fs::read(theirs.join(&name)).unwrap(),
                "{name} is there but not the clean build's"
            );
        }
    }
    let out = crate::binary().args(args(dir.path())).output().unwrap();
    assert_clean_exit(&out, 0, "the resumed build");
    for n in 0..=TOP {
        let name = level_file_name(n);
        assert!(
            fs::read(ours.join(&name)).unwrap() == fs::read(theirs.join(&name)).unwrap(),
            "{name} differs from the clean build's"
        );
    }
}

/// Runs the binary with `args`, killing it if it has not ended within
/// `limit` (a command that blocks must fail the test, not hang it).
fn within(limit: Duration, args: &[&str]) -> Output {
    crate::finished_within(crate::binary().args(args), b"", limit).unwrap_or_else(|e| panic!("{e}"))
}

/// Something other than a file where a level's file should be (a FIFO, a
/// directory, a link to a device) is refused at once and by name by every
/// command that reads tables: opening a FIFO would wait for a writer for
/// ever, and a build would replace what someone put there.
#[test]
fn a_level_that_is_not_a_regular_file_is_refused_at_once() {
    let (dir, path) = built(6);
    let level = tables_dir(dir.path(), &oware(), Cycles::Even).join(level_file_name(4));
    let fifo = |p: &Path| {
        let made = std::process::Command::new("mkfifo").arg(p).status();
        assert!(made.unwrap().success(), "mkfifo");
    };
    let directory = |p: &Path| fs::create_dir(p).unwrap();
    let device = |p: &Path| std::os::unix::fs::symlink("/dev/zero", p).unwrap();
    type Make<'a> = &'a dyn Fn(&Path);
    let odd: [(&str, Make); 3] = [
        ("a FIFO", &fifo),
        ("a directory", &directory),
        ("a link to a device", &device),
    ];
    for (what, make) in odd {
        match fs::symlink_metadata(&level) {
            Ok(m) if m.is_dir() => fs::remove_dir(&level).unwrap(),
            Ok(_) => fs::remove_file(&level).unwrap(),
            Err(_) => {}
        }
        make(&level);
        for args in [
            &["info", "--dir", &path][..],
            &["verify", "--dir", &path],
            &["query", "--dir", &path, "1,1,1,1,0,0/0,0,0,0,0,0"],
            &["build", "--stones", "6", "--dir", &path],
        ] {
            let out = within(Duration::from_secs(10), args);
            assert_clean_exit(&out, 1, &format!("{what}, {args:?}"));
            // `info` and `verify` report each level on its own line.
            let per_level = ["info", "verify"].contains(&args[0]);
            let told = if per_level {
                stdout(&out)
            } else {
                stderr(&out)
            };
            let lines: Vec<&str> = told
                .lines()
                .filter(|l| l.contains("not a regular file"))
                .collect();
            assert_eq!(lines.len(), 1, "{what}, {args:?}: {told}");
            if !per_level {
                assert_eq!(told.trim().lines().count(), 1, "{what}, {args:?}: {told}");
            }
        }
    }
}

/// `query -` reads a line of any length in time proportional to it,
/// keeping only its start: a line too long to be a position gets a short
/// error line of its own (its first characters, its length), and the
/// lines around it their answers.
#[test]
fn an_endless_line_is_read_in_linear_time_and_answered_briefly() {
    let (_dir, path) = built(4);
    let args = ["query", "--dir", &path, "-"];
    let timed = |megabytes: usize| {
        let mut input = b"1,1,1,1,0,0/0,0,0,0,0,0\n".to_vec();
        input.resize(input.len() + (megabytes << 20), b'1');
        input.extend_from_slice(b"\n0,0,1,1,1,1/0,0,0,0,0,0\n");
        let started = Instant::now();
        let out = with_stdin_bytes(&args, input);
        (started.elapsed(), out)
    };
    let mut seconds = Vec::new();
    for megabytes in [8, 32, 64] {
        let (took, out) = timed(megabytes);
        assert_clean_exit(&out, 1, &format!("{megabytes} MB line"));
        let text = stdout(&out);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text:.400}");
        assert!(!lines[0].contains("error") && !lines[2].contains("error"));
        let long = format!("{}", megabytes << 20);
        let grouped: String = long
            .chars()
            .rev()
            .collect::<Vec<_>>()
            .chunks(3)
            .map(|c| c.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join(",")
            .chars()
            .rev()
            .collect();
        assert!(
            lines[1].len() <= 200,
            "{} bytes: {:.300}",
            lines[1].len(),
            lines[1]
        );
        assert!(
            lines[1].ends_with(&format!(
                "error: a line of {grouped} bytes, longer than the 4,096 allowed"
            )),
            "{}",
            lines[1]
        );
        seconds.push(took.as_secs_f64());
    }
    // Linear: eight times the bytes, about eight times the time (a
    // quadratic reader took 55 times as long); with room for noise and
    // the fixed start-up.
    assert!(
        seconds[2] < 20.0 * seconds[0] + 0.5,
        "8, 32, 64 MB lines took {seconds:?} s"
    );
}

/// `info` checks each table against its place, as `query` and `verify`
/// do: a level copied over another, a kalah table or a forced table copied
/// into oware's directory are each named as misplaced and make it fail.
#[test]
fn info_names_a_misplaced_table() {
    let (dir, path) = built(6);
    let others = tempfile::TempDir::new().unwrap();
    let others_path = others.path().to_str().unwrap();
    ok(&[
        "build",
        "--rules",
        "kalah",
        "--pits",
        "4",
        "--stones",
        "6",
        "--dir",
        others_path,
    ]);
    ok(&[
        "build",
        "--cycles",
        "forced",
        "--stones",
        "6",
        "--dir",
        others_path,
    ]);
    let oware_dir = tables_dir(dir.path(), &oware(), Cycles::Even);
    let level = oware_dir.join(level_file_name(6));
    let kalah = mancala_core::Rules::new(mancala_core::Variant::Kalah, 4).unwrap();
    let copies = [
        ("level 5 over level 6", oware_dir.join(level_file_name(5))),
        (
            "a kalah table",
            tables_dir(others.path(), &kalah, Cycles::Even).join(level_file_name(6)),
        ),
        (
            "a forced table",
            tables_dir(others.path(), &oware(), Cycles::Forced).join(level_file_name(6)),
        ),
    ];
    let original = fs::read(&level).unwrap();
    for (what, copied) in copies {
        fs::copy(&copied, &level).unwrap();
        let out = mancala_tb(&["info", "--dir", &path]);
        assert_clean_exit(&out, 1, what);
        let text = stdout(&out);
        let named: Vec<&str> = text.lines().filter(|l| l.contains("misplaced")).collect();
        assert_eq!(named.len(), 1, "{what}: {text}");
        assert!(named[0].contains("level-006.mtb"), "{what}: {}", named[0]);
        assert!(
            !text.contains("total: 7 levels"),
            "{what}: the misplaced file is counted: {text}"
        );
    }
    fs::write(&level, original).unwrap();
    ok(&["info", "--dir", &path]);
}

/// A connection from a loopback address of our choosing (`127.0.0.N`),
/// which the server counts as another client than `127.0.0.1`.
pub(crate) fn connect_from(source: &str, address: &str) -> TcpStream {
    // Std cannot bind a socket before it connects; tokio can.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let stream = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
        socket.connect(address.parse().unwrap()).await.unwrap()
    });
    let stream = stream.into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream
}

/// A request from `source` (see [`connect_from`]), its whole reply, read
/// until the server closes.
fn request_from(source: &str, address: &str, request: &[u8]) -> Vec<u8> {
    let mut stream = connect_from(source, address);
    stream.write_all(request).unwrap();
    let mut reply = Vec::new();
    let _ = stream.read_to_end(&mut reply);
    reply
}

/// One client holding hundreds of slow uploads open cannot starve the
/// others: it is served a bounded share of the connections, every other
/// address is answered at once, and a body that trickles in is answered
/// 408 once the server stops waiting for it.
#[test]
fn one_client_cannot_starve_the_server() {
    let (dir, _path) = built(4);
    let server = Served::start(dir.path());
    let address = server.base.trim_start_matches("http://").to_string();
    let upload = b"POST /v1/analyze HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{";
    let trickled = {
        let address = address.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let reply = request_from("127.0.0.3", &address, upload);
            (started.elapsed(), reply)
        })
    };
    let hostile: Vec<TcpStream> = (0..530)
        .filter_map(|_| {
            let mut stream = TcpStream::connect(&address).ok()?;
            let _ = stream.write_all(upload);
            Some(stream)
        })
        .collect();
    assert!(hostile.len() > 500, "{} connections made", hostile.len());
    for _ in 0..5 {
        let started = Instant::now();
        let reply = request_from(
            "127.0.0.2",
            &address,
            b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        let took = started.elapsed();
        let reply = String::from_utf8_lossy(&reply);
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        assert!(took < Duration::from_secs(1), "/health took {took:?}");
    }
    let (took, reply) = trickled.join().unwrap();
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 408"), "{reply}");
    assert!(
        took >= Duration::from_secs(9) && took < Duration::from_secs(20),
        "a trickled body was answered after {took:?}"
    );
    drop(hostile);
}

/// Every argument error is one line on stderr with exit code 2, saying
/// what is wrong; help stays whole, on stdout.
#[test]
fn argument_errors_are_one_line() {
    for (args, says) in [
        (&["query", "--bogus"][..], "unexpected argument '--bogus'"),
        (&["build"], "--stones"),
        (&["build", "--stones", "x"], "invalid value 'x'"),
        (&["nonsense"], "unrecognized subcommand 'nonsense'"),
    ] {
        let out = mancala_tb(args);
        assert_clean_exit(&out, 2, &format!("{args:?}"));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("mancala-tb: "), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let help = mancala_tb(&["build", "--help"]);
    assert_clean_exit(&help, 0, "build --help");
    assert!(stdout(&help).lines().count() > 10);
}

/// A file where a rule set's table directory should be is named as such:
/// `query` does not advise a build that cannot run, and `build` fails
/// before it prints anything else.
#[test]
fn a_file_in_place_of_the_table_directory_is_named() {
    let dir = tempfile::TempDir::new().unwrap();
    let path = dir.path().to_str().unwrap();
    fs::write(tables_dir(dir.path(), &oware(), Cycles::Even), b"x").unwrap();
    let err = fails(&["query", "--dir", path, "1,1,1,1,0,0/0,0,0,0,0,0"]);
    assert!(err.contains("oware-6 is not a directory"), "{err}");
    assert!(!err.contains("run `mancala-tb build"), "{err}");
    let out = mancala_tb(&["build", "--stones", "4", "--dir", path]);
    assert_clean_exit(&out, 1, "build");
    assert!(
        stderr(&out).contains("oware-6: not a directory"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "printed before the error");
}
