//! `mpirun -np 3 mancala-tb build …` against one process: the same files,
//! byte for byte; a rank killed mid-level stops the job with an error, and
//! the same command run again completes it. Needs the binary built with
//! `--features mpi` and Open MPI's `mpirun`; skipped, saying so, otherwise.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mancala_format::level_file_name;

use super::mancala_tb;

/// Ranks of the jobs; more than this machine's cores, oversubscribed.
const RANKS: &str = "3";

/// `mpirun`, set up to run ranks oversubscribed and as root (CI's
/// containers), or `None` with the reason the tests skip.
fn mpirun() -> Result<Command, String> {
    if !cfg!(feature = "mpi") {
        return Err("the binary was built without --features mpi".into());
    }
    let found = Command::new("mpirun")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !found.is_ok_and(|s| s.success()) {
        return Err("mpirun is not installed (Debian: openmpi-bin)".into());
    }
    let mut mpirun = Command::new("mpirun");
    mpirun
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .args([
            "--oversubscribe",
            "--mca",
            "mpi_yield_when_idle",
            "1",
            "-np",
            RANKS,
        ])
        .arg(env!("CARGO_BIN_EXE_mancala-tb"));
    Ok(mpirun)
}

/// Skips the calling test (returning from it) where MPI is not available,
/// unless `MANCALA_TB_REQUIRE_MPI` is set (CI), where that fails it.
macro_rules! mpirun_or_skip {
    () => {
        match mpirun() {
            Ok(mpirun) => mpirun,
            Err(why) if std::env::var_os("MANCALA_TB_REQUIRE_MPI").is_some() => {
                panic!("MPI is required here: {why}")
            }
            Err(why) => {
                eprintln!("SKIPPED (MPI): {why}");
                return;
            }
        }
    };
}

/// The sha256 of every table file under `dir`, by name.
fn checksums(dir: &Path) -> Vec<(String, String)> {
    use sha2::{Digest, Sha256};
    let mut sums: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mtb"))
        .map(|p| {
            let sum = Sha256::digest(std::fs::read(&p).unwrap());
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, format!("{sum:x}"))
        })
        .collect();
    sums.sort();
    sums
}

fn build_args<'a>(rules: &[&'a str], stones: &'a str, dir: &'a Path) -> Vec<&'a str> {
    let mut args = vec!["build", "--stones", stones, "--dir", dir.to_str().unwrap()];
    args.extend(rules);
    args
}

#[test]
fn ranks_write_the_files_one_process_writes() {
    let _ = mpirun_or_skip!();
    for (rules, stones, dir) in [
        (&["--rules", "oware"][..], "13", "oware-6"),
        (&["--rules", "kalah"][..], "13", "kalah-6"),
        (
            &["--rules", "oware", "--cycles", "forced"][..],
            "10",
            "oware-6-forced",
        ),
    ] {
        let one = tempfile::tempdir().unwrap();
        let single = mancala_tb(&build_args(rules, stones, one.path()));
        assert!(single.status.success(), "{single:?}");
        let many = tempfile::tempdir().unwrap();
        let job = mpirun_or_skip!()
            .args(build_args(rules, stones, many.path()))
            .output()
            .unwrap();
        assert!(
            job.status.success(),
            "{}",
            String::from_utf8_lossy(&job.stderr)
        );
        let stdout = String::from_utf8_lossy(&job.stdout);
        for rank in 0..3 {
            assert!(stdout.contains(&format!("rank {rank}: ")), "{stdout}");
        }
        let expected = checksums(&one.path().join(dir));
        assert_eq!(expected.len(), stones.parse::<usize>().unwrap() + 1);
        assert_eq!(checksums(&many.path().join(dir)), expected, "{rules:?}");
    }
}

#[test]
fn a_killed_rank_stops_the_job_and_a_rerun_completes_it() {
    let mut job = mpirun_or_skip!();
    let dir = tempfile::tempdir().unwrap();
    const TOP: u32 = 14;
    let top = TOP.to_string();
    let args = build_args(&["--rules", "oware"], &top, dir.path());
    let mut running = job
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Mid-build: once level TOP - 2 is written, kill rank 1 (the ranks
    // are mpirun's children, in rank order).
    let tables = dir.path().join("oware-6");
    let started = Instant::now();
    while !tables.join(level_file_name(TOP - 2)).exists() {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "level {} never came",
            TOP - 2
        );
        assert!(running.try_wait().unwrap().is_none(), "the job ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    let ranks = Command::new("pgrep")
        .args(["-P", &running.id().to_string()])
        .output()
        .unwrap();
    let ranks = String::from_utf8_lossy(&ranks.stdout).into_owned();
    let rank1 = ranks.lines().nth(1).expect("three ranks under mpirun");
    Command::new("kill").args(["-9", rank1]).status().unwrap();
    let killed = Instant::now();
    let status = loop {
        if let Some(status) = running.try_wait().unwrap() {
            break status;
        }
        assert!(killed.elapsed() < Duration::from_secs(60), "the job hangs");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(!status.success());
    assert!(
        !tables.join(level_file_name(TOP)).exists(),
        "killed before the end"
    );
    // The same command again resumes and completes: the files of one
    // process.
    let rerun = mpirun_or_skip!().args(&args).output().unwrap();
    assert!(
        rerun.status.success(),
        "{}",
        String::from_utf8_lossy(&rerun.stderr)
    );
    let one = tempfile::tempdir().unwrap();
    assert!(
        mancala_tb(&build_args(&["--rules", "oware"], &top, one.path()))
            .status
            .success()
    );
    assert_eq!(checksums(&tables), checksums(&one.path().join("oware-6")));
}

/// Without MPI in the binary, `mpirun` gets one clear line, not a build per
/// rank.
#[test]
fn a_binary_without_mpi_refuses_to_run_under_mpirun() {
    if cfg!(feature = "mpi") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = super::binary()
        .args(build_args(&["--rules", "oware"], "3", dir.path()))
        .env("OMPI_COMM_WORLD_SIZE", "2")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--features mpi"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}
