//! `mpirun -np 3 mancala-tb build …` against one process: the same files,
//! byte for byte; a rank killed mid-level stops the job with an error, and
//! the same command run again completes it (a group of the
//! fault-injection suite, `faults_rank_killed`). Needs the binary built with
//! `--features mpi` and Open MPI's `mpirun`; skipped, saying so, otherwise.

use std::path::Path;
use std::process::{Command, Stdio};

use super::faults::{
    copy_levels, ensure, levels_are_the_references, same_tables, stopped_in, verified, Cases,
    Outcome, StopPoint, Target,
};
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
    for (rules, stones, dir, files) in [
        (&["--rules", "oware"][..], "13", "oware-6", 14),
        (&["--rules", "kalah"][..], "13", "kalah-6", 14),
        (
            &["--rules", "oware", "--cycles", "forced"][..],
            "10",
            "oware-6-forced",
            11,
        ),
        // Depth tables beside the values.
        (&["--rules", "oware", "--depth"][..], "11", "oware-6", 24),
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
        assert_eq!(expected.len(), files);
        assert_eq!(checksums(&many.path().join(dir)), expected, "{rules:?}");
    }
}

/// The level the rank-fault cases hurt a job in; the levels below it
/// come from one process's clean build (each case costs one level).
const HURT_LEVEL: u32 = 15;

/// One fault of a job of three ranks, on a copy of `reference`'s levels
/// below `from`: `signal` sent to `target` (a rank, or `mpirun`) at
/// `point`. The job must end, non-zero, within 10 s (saying which rank
/// died, when one was killed), leaving no level file but the clean
/// build's and no temporary file; the same command run again must finish
/// with exactly the clean build's files, which `verify` passes.
fn rank_fault_case(
    reference: &Path,
    from: u32,
    target: Target,
    signal: &str,
    point: StopPoint,
) -> Outcome {
    let root = tempfile::tempdir().unwrap();
    let tables = root.path().join("oware-6");
    copy_levels(reference, &tables, from);
    let top = HURT_LEVEL.to_string();
    let args = build_args(&["--rules", "oware"], &top, root.path());
    let mut job = mpirun()?;
    job.args(&args);
    let stopped = stopped_in(job, target, point, &[signal])?;
    ensure(!stopped.status.success(), || {
        format!("the job ended well after the fault: {:.500}", stopped.said)
    })?;
    if let Target::Child(rank) = target {
        let named = format!("rank {rank} with PID");
        ensure(
            stopped.said.contains(&named) && stopped.said.contains("signal 9"),
            || {
                format!(
                    "not told that rank {rank} was killed: {:.800}",
                    stopped.said
                )
            },
        )?;
    }
    levels_are_the_references(&tables, reference)?;
    let rerun = mpirun()?.args(&args).output().map_err(|e| e.to_string())?;
    ensure(rerun.status.success(), || {
        format!(
            "the rerun failed: {:.500}",
            String::from_utf8_lossy(&rerun.stderr)
        )
    })?;
    same_tables(&tables, reference)?;
    verified(root.path(), from)
}

/// Jobs whose ranks are killed (SIGKILL) inside a level, at its start,
/// middle and end, the rank that writes the files among them; as a level
/// is written; and `mpirun` itself stopped (SIGTERM). A group of the
/// fault-injection suite (`scripts/faults` counts it where MPI is
/// installed).
#[test]
fn faults_rank_killed() {
    let _ = mpirun_or_skip!();
    let reference = tempfile::tempdir().unwrap();
    let top = HURT_LEVEL.to_string();
    let clean = mancala_tb(&build_args(&["--rules", "oware"], &top, reference.path()));
    assert!(clean.status.success(), "{clean:?}");
    let reference = reference.path().join("oware-6");
    let mut cases = Cases::new("mpi rank killed");
    let within = |percent| StopPoint {
        level: HURT_LEVEL,
        percent,
    };
    for (rank, percent) in [(1, 0.0), (2, 30.0), (0, 60.0), (1, 95.0)] {
        cases.run(
            format!("rank {rank}: SIGKILL at level {HURT_LEVEL} {percent}%"),
            || {
                rank_fault_case(
                    &reference,
                    HURT_LEVEL,
                    Target::Child(rank),
                    "KILL",
                    within(percent),
                )
            },
        );
    }
    let below = StopPoint {
        level: HURT_LEVEL - 1,
        percent: 100.0,
    };
    cases.run(
        format!("rank 0: SIGKILL as level {} is written", HURT_LEVEL - 1),
        || rank_fault_case(&reference, HURT_LEVEL - 1, Target::Child(0), "KILL", below),
    );
    cases.run(format!("mpirun: SIGTERM at level {HURT_LEVEL} 40%"), || {
        rank_fault_case(
            &reference,
            HURT_LEVEL,
            Target::Started,
            "TERM",
            within(40.0),
        )
    });
    cases.finish();
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
