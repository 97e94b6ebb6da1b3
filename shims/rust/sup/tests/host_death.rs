//! A host killed with SIGKILL takes what it supervised with it, whatever the
//! link: a shared libsup starts its sup-sentinel program; a static one
//! (`SUP_BUILD_DIR`, feature `bundled`), which has no program to find, runs
//! this very test binary again as the sentinel (see lib/sentinel_entry.hpp).
//!
//! The host is this test binary, run again for the test `host` alone with
//! SUP_TEST_HOST set to the containment: it spawns a shell that starts
//! `sleep 60` in its group, prints the shell's and the sleep's pids and waits
//! to be killed; both must go. The sleep is the shell's child, not the
//! host's: PR_SET_PDEATHSIG, which ties a main process to the host without a
//! sentinel, never reaches it. A static host must map no libsup.so, so that
//! a build falling back to the shared library cannot pass for a static one.
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
    let child = Command::new("sh").args(["-c", "sleep 60 & echo $$ $!; wait"]).contain(how).spawn().unwrap();
    let mut pids = String::new();
    BufReader::new(child.stdout()).read_line(&mut pids).unwrap();
    write!(out, "pids {pids}").unwrap();
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
    let (mut shell, mut sleep) = (0, 0);
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
        if let Some(pids) = line.strip_prefix("pids ") {
            let mut p = pids.split_whitespace().map(|n| n.parse::<i32>().unwrap());
            (shell, sleep) = (p.next().unwrap(), p.next().unwrap());
            break;
        }
    }
    assert!(shell > 0 && sleep > 0 && running(shell) && running(sleep), "the host started no shell and sleep");
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", host.id())).unwrap();
    let link = if cfg!(feature = "bundled") {
        "bundled"
    } else if option_env!("SUP_BUILD_DIR").is_some() {
        "static (SUP_BUILD_DIR)"
    } else {
        "shared"
    };
    if maps.contains("/libsup.so") != (link == "shared") {
        host.kill().unwrap();
        host.wait().unwrap();
        panic!("a {link} build whose host maps libsup.so: {}", maps.contains("/libsup.so"));
    }
    host.kill().unwrap(); // SIGKILL
    host.wait().unwrap();
    let killed = Instant::now();
    while (running(shell) || running(sleep)) && killed.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        !running(shell) && !running(sleep),
        "{contain}, {link} build: shell {shell} (running: {}) or its sleep {sleep} (running: {}) outlived its host by 5 s",
        running(shell),
        running(sleep)
    );
    println!("{contain}, {link} build: shell and sleep ended {:?} after their host", killed.elapsed());
}

#[test]
fn a_killed_host_takes_its_group_along() {
    sleep_ends_with_the_host("group");
}

#[test]
fn a_killed_host_takes_its_cgroup_along() {
    sleep_ends_with_the_host("cgroup");
}
