//! The result fields only the library's JSON carries (0.4): what confined
//! the child, the limit that ended it, whether it waited for input, the tee
//! and terminal fields; each from a real run. Timing margins are wide (a
//! loaded 2-core machine).
use std::io::Write;
use std::time::{Duration, Instant};

use sup::{Command, LimitHit, Limits, Mechanism, Outcome, Phase, Sandbox, Scope, Signal, Stdio};

fn sh(script: &str) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(script);
    c
}

#[test]
fn nothing_asked_leaves_every_field_none() {
    let out = Command::new("true").output().unwrap();
    assert_eq!(out.waiting_for_input, None);
    assert_eq!(out.confined, None);
    assert_eq!(out.limit, None);
    assert_eq!((out.stdout_tee_error.as_deref(), out.stderr_tee_error.as_deref()), (None, None));
    assert_eq!((out.tty_foreground, out.tty_refused.as_deref()), (None, None));
    assert_eq!((out.contain_fallback.as_deref(), out.cgroup_left.as_deref()), (None, None));
}

#[test]
fn a_cpu_limit_ends_a_spinner_and_is_named() {
    let t0 = Instant::now();
    let out = sh("while :; do :; done")
        .limits(Limits { cpu_seconds: Some(1), ..Default::default() })
        .max_runtime(Duration::from_secs(120))
        .output()
        .unwrap();
    println!("cpu_seconds 1 ended the spinner after {:?}: {out}", t0.elapsed());
    assert_eq!(out.outcome, Outcome::Signaled, "{out}");
    assert!(matches!(out.signal, Some(s) if s == Signal::from_raw(libc::SIGXCPU) || s == Signal::KILL), "{out}");
    assert_eq!(out.limit, Some(LimitHit::Cpu));
    let cpu = out.confined.as_ref().unwrap().cpu_seconds.as_ref().unwrap();
    assert_eq!((cpu.value, cpu.mechanism, cpu.scope, cpu.reason.as_deref()), (1, Some(Mechanism::Rlimit), Some(Scope::Process), None));
    let confined = out.confined.as_ref().unwrap();
    assert!(confined.memory_bytes.is_none() && confined.sandbox.is_none() && confined.user.is_none());
}

#[test]
fn a_file_size_limit_is_named_and_core_dump_reads_as_zero() {
    let dir = std::env::temp_dir().join(format!("sup-rust-fsize-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = sh("exec head -c 100000 /dev/zero > big")
        .current_dir(&dir)
        .limits(Limits { file_bytes: Some(4096), core_dump: Some(false), ..Default::default() })
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.limit, Some(LimitHit::FileSize), "{out}");
    let confined = out.confined.unwrap();
    assert_eq!(confined.file_bytes.unwrap().value, 4096);
    let core = confined.core_dump.unwrap();
    assert_eq!((core.value, core.mechanism), (0, Some(Mechanism::Rlimit)));
}

#[test]
fn an_input_wait_timeout_says_the_child_was_waiting() {
    let t0 = Instant::now();
    let child = sh("echo asking; read x")
        .stdin(Stdio::piped())
        .input_wait_timeout(Duration::from_millis(300))
        .grace(Duration::from_secs(1))
        .spawn()
        .unwrap();
    let out = child.wait().unwrap();
    println!("input_wait_timeout 300 ms ended `read x` after {:?}", t0.elapsed());
    assert_eq!((out.outcome, out.phase), (Outcome::IdleTimeout, Some(Phase::Input)), "{out}");
    assert_eq!(out.waiting_for_input, Some(true));
    assert_eq!(out.stdout, b"asking\n");
}

#[test]
fn asking_input_wanted_makes_waiting_for_input_known() {
    let child = sh("read x; echo got $x").stdin(Stdio::piped()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !child.input_wanted().unwrap() {
        assert!(Instant::now() < deadline, "never seen waiting for input");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stdin = child.take_stdin().unwrap();
    stdin.write_all(b"y\n").unwrap();
    drop(stdin);
    let out = child.wait().unwrap();
    assert_eq!(out.stdout, b"got y\n");
    // Written to since the last look: not waiting at its end.
    assert_eq!(out.waiting_for_input, Some(false));
}

#[test]
fn tee_without_failure_has_no_tee_error() {
    let out = sh("echo teed").stdout(Stdio::tee()).output().unwrap();
    assert_eq!(out.stdout, b"teed\n");
    assert_eq!((out.stdout_tee_error.as_deref(), out.stderr_tee_error.as_deref()), (None, None));
}

#[test]
fn tty_foreground_says_whether_it_was_given() {
    let out = Command::new("true").stdin(Stdio::inherit()).tty_foreground(true).output().unwrap();
    match out.tty_foreground {
        Some(true) => assert_eq!(out.tty_refused, None),
        Some(false) => assert!(out.tty_refused.as_deref().is_some_and(|r| !r.is_empty())),
        None => panic!("asked, yet tty_foreground is None"),
    }
}

#[test]
fn a_sandbox_and_ids_are_reported() {
    // SAFETY: getuid and getgid cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let out = Command::new("true").sandbox(Sandbox::default()).uid(uid).gid(gid).output().unwrap();
    assert!(out.success(), "{out}");
    let confined = out.confined.unwrap();
    let sandbox = confined.sandbox.unwrap();
    assert!(sandbox.no_new_privs);
    assert_eq!(sandbox.network, None); // the network is allowed: nothing to refuse
    assert_eq!(sandbox.filesystem, sandbox.landlock_abi > 0);
    let user = confined.user.unwrap();
    assert_eq!((user.uid, user.gid), (Some(uid), Some(gid)));
}
