//! A host killed with SIGKILL takes what it supervised with it, whatever the
//! link: a shared libsup starts its sup-sentinel program; a static one
//! (`SUP_BUILD_DIR`, feature `bundled`), which has no program to find, runs
//! this very test binary again as the sentinel (see lib/sentinel_entry.hpp).
//!
//! The host is this test binary, run again for the test `host` alone with
//! SUP_TEST_HOST set to the containment: it spawns a shell that starts
//! `sleep 60` in its group, prints the sleep's pid and waits to be killed.
//! The sleep is the shell's child, not the host's: PR_SET_PDEATHSIG, which
//! ties a main process to the host without a sentinel, never reaches it.
use std::io::{BufRead, BufReader, Write};
use std::process::{Command as Os, Stdio};
use std::time::{Duration, Instant};

use sup::{Command, Contain};

/// Alive, and not a zombie waiting for whoever adopted it to reap it.
fn running(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z'))
}

/// Not a test of its own: the host, when SUP_TEST_HOST names a containment.
#[test]
fn host() {
    let Ok(contain) = std::env::var("SUP_TEST_HOST") else { return };
    let how = if contain == "cgroup" { Contain::Cgroup } else { Contain::Group };
    let mut out = std::io::stdout();
    // Every child's result says what would end with the host.
    match Command::new("true").contain(how).output() {
        Ok(done) => writeln!(out, "host_death {:?}", done.host_death).unwrap(),
        Err(e) if e.code() == sup_sys::SUP_ENOTSUP => {
            writeln!(out, "skip {e}").unwrap();
            return;
        }
        Err(e) => panic!("{e}"),
    }
    let child = Command::new("sh").args(["-c", "sleep 60 & echo $!; wait"]).contain(how).spawn().unwrap();
    let mut pid = String::new();
    BufReader::new(child.stdout()).read_line(&mut pid).unwrap();
    write!(out, "pid {pid}").unwrap();
    out.flush().unwrap();
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn sleep_ends_with_the_host(contain: &str) {
    let mut host = Os::new(std::env::current_exe().unwrap())
        .args(["host", "--exact", "--nocapture", "--test-threads=1"])
        .env("SUP_TEST_HOST", contain)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(host.stdout.take().unwrap()).lines();
    let mut sleep = 0;
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(skip) = line.strip_prefix("skip ") {
            eprintln!("no {contain} containment here: {skip}");
            host.wait().unwrap();
            return;
        }
        if let Some(tree) = line.strip_prefix("host_death ") {
            assert_eq!(tree, "Tree", "the result says only the main process dies with the host");
        }
        if let Some(pid) = line.strip_prefix("pid ") {
            sleep = pid.parse().unwrap();
            break;
        }
    }
    assert!(sleep > 0 && running(sleep), "the host started no sleep");
    host.kill().unwrap(); // SIGKILL
    host.wait().unwrap();
    let killed = Instant::now();
    while running(sleep) && killed.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(!running(sleep), "{contain}: sleep {sleep} outlived its host by 5 s");
}

#[test]
fn a_killed_host_takes_its_group_along() {
    sleep_ends_with_the_host("group");
}

#[test]
fn a_killed_host_takes_its_cgroup_along() {
    sleep_ends_with_the_host("cgroup");
}
