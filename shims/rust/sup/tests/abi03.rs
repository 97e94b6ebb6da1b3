//! What libsup 0.3 adds, as users of sup::Command reach it: stdout and
//! stderr routing, a pseudo-terminal, signals to the child, a first-output
//! timeout, containment in a cgroup, a cleared environment.
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use sup::{Command, Contain, Outcome, Part, Phase, Signal, Stdio};

fn sh(script: &str) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(script);
    c
}

#[test]
fn stdout_and_stderr_routes() {
    let out = sh("echo 1; echo 2 >&2; echo 3; echo 4 >&2").stderr(Stdio::stdout()).output().unwrap();
    assert_eq!((out.stdout.as_slice(), out.stderr.as_slice()), (&b"1\n2\n3\n4\n"[..], &b""[..]));

    let out = sh("echo out; echo err >&2").stdout(Stdio::null()).output().unwrap();
    assert_eq!((out.stdout.as_slice(), out.stderr.as_slice()), (&b""[..], &b"err\n"[..]));

    let out = sh("echo out; echo err >&2").stdout(Stdio::tee()).stderr(Stdio::null()).output().unwrap();
    assert_eq!((out.stdout.as_slice(), out.stderr.as_slice()), (&b"out\n"[..], &b""[..]));

    // sup reads neither stream: an idle timeout could never be reset.
    let e = Command::new("true").stdout(Stdio::null()).stderr(Stdio::null()).idle_timeout(Duration::from_secs(1)).spawn().unwrap_err();
    assert_eq!((e.code(), e.part()), (sup_sys::SUP_EINVAL, Some(Part::Spec)), "{e}");
    assert!(e.detail().contains("idle_timeout_ms"), "{e}");
    // A route a stream does not take.
    let e = Command::new("true").stdout(Stdio::stdout()).spawn().unwrap_err();
    assert_eq!(e.part(), Some(Part::Spec), "{e}");
    let e = Command::new("true").stdin(Stdio::tee()).spawn().unwrap_err();
    assert_eq!(e.part(), Some(Part::Spec), "{e}");
}

#[test]
fn a_pty_is_the_childs_terminal() {
    let out = sh("test -t 0 && test -t 1 && test -t 2 && stty size; echo err >&2").pty(30, 100).output().unwrap();
    assert!(out.success(), "{out}");
    assert_eq!(out.stdout, b"30 100\r\nerr\r\n");
    assert!(out.stderr.is_empty());

    // Typed input is echoed and read; dropping the writer is a Ctrl-D.
    let child = Command::new("cat").pty(24, 80).spawn().unwrap();
    let mut stdin = child.take_stdin().expect("a pty takes input");
    stdin.write_all(b"typed\n").unwrap();
    drop(stdin);
    let out = child.wait_timeout(Duration::from_secs(20)).unwrap().expect("cat ended at end of input");
    assert!(out.success(), "{out}");
    assert_eq!(out.stdout, b"typed\r\ntyped\r\n");

    // Resize: the child gets SIGWINCH and sees the new size.
    let child = sh("trap 'stty size; exit 0' WINCH; echo ready; while :; do sleep 0.05; done").pty(24, 80).spawn().unwrap();
    let mut ready = [0u8; 7];
    child.stdout().read_exact(&mut ready).unwrap();
    child.resize(50, 132).unwrap();
    let out = child.wait_timeout(Duration::from_secs(20)).unwrap().expect("ended on SIGWINCH");
    assert_eq!(out.stdout, b"ready\r\n50 132\r\n");
    assert_eq!(child.resize(10, 10).unwrap_err().code(), sup_sys::SUP_ESRCH);

    let child = Command::new("sleep").arg("30").spawn().unwrap();
    assert_eq!(child.resize(10, 10).unwrap_err().code(), sup_sys::SUP_ENOTSUP);
    let e = Command::new("true").pty(0, 80).spawn().unwrap_err();
    assert_eq!(e.part(), Some(Part::Spec), "{e}");
    let e = Command::new("true").pty(24, 80).stdin(Stdio::piped()).spawn().unwrap_err();
    assert_eq!(e.part(), Some(Part::Spec), "{e}");
}

#[test]
fn signal_reaches_the_child_and_leaves_the_outcome_alone() {
    let child = sh("trap 'echo got USR1; exit 0' USR1; echo ready; while :; do sleep 0.05; done").spawn().unwrap();
    let mut ready = [0u8; 6];
    child.stdout().read_exact(&mut ready).unwrap();
    child.signal(0).unwrap(); // alive
    child.signal(Signal::USR1).unwrap();
    let out = child.wait().unwrap();
    assert_eq!((out.outcome, out.exit_code), (Outcome::Exited, Some(0)), "{out}");
    assert_eq!(out.stdout, b"ready\ngot USR1\n");
    assert_eq!(out.signals_sent.iter().map(|s| s.signal).collect::<Vec<_>>(), [Signal::USR1]);
    assert_eq!(child.signal(0).unwrap_err().code(), sup_sys::SUP_ESRCH);
    assert_eq!(Command::new("sleep").arg("30").spawn().unwrap().signal(65).unwrap_err().code(), sup_sys::SUP_EINVAL);
}

#[test]
fn first_output_timeout_then_idle_timeout() {
    let t = Instant::now();
    let out = Command::new("sleep").arg("30").first_output_timeout(Duration::from_millis(200)).output().unwrap();
    assert_eq!((out.outcome, out.phase), (Outcome::IdleTimeout, Some(Phase::FirstOutput)), "{out}");
    assert!(t.elapsed() >= Duration::from_millis(200));

    // The first byte came: the idle limit is the one that fires, and never
    // before 200 ms of silence after it.
    let out = sh("sleep 0.3; echo first; exec sleep 30")
        .first_output_timeout(Duration::from_secs(3))
        .idle_timeout(Duration::from_millis(200))
        .output()
        .unwrap();
    eprintln!("first byte at 0.3 s, idle 200 ms: {out}");
    assert_eq!((out.outcome, out.phase), (Outcome::IdleTimeout, Some(Phase::Idle)), "{out}");
    assert_eq!(out.stdout, b"first\n");
    assert!(out.duration >= Duration::from_millis(500), "{out}");

    let out = sh("echo quick").first_output_timeout(Duration::from_secs(20)).output().unwrap();
    assert_eq!((out.outcome, out.phase), (Outcome::Exited, None));
}

#[test]
fn containment_is_reported() {
    let out = Command::new("true").output().unwrap();
    assert_eq!((out.contained, out.leftovers_ended, out.tree_cpu), (Contain::Group, None, None));

    // A cgroup where the host allows one; "auto" falls back to the group.
    let script = "setsid sleep 30 >/dev/null 2>&1 & i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done";
    match sh(script).contain(Contain::Cgroup).output() {
        Ok(out) => {
            assert_eq!(out.contained, Contain::Cgroup);
            assert_eq!(out.leftovers_ended, Some(1), "the setsid sleep, beyond the group, ended with the tree");
            assert!(out.tree_cpu.unwrap().user + out.tree_cpu.unwrap().sys > Duration::ZERO, "{out:?}");
            eprintln!("cgroup: {out}");
        }
        Err(e) => {
            assert_eq!(e.code(), sup_sys::SUP_ENOTSUP, "{e}");
            eprintln!("no cgroup here: {e}");
            let out = Command::new("true").contain(Contain::Auto).output().unwrap();
            assert_eq!(out.contained, Contain::Group);
        }
    }
}

#[test]
fn env_clear_leaves_only_what_is_set() {
    let out = Command::new("env").env("GONE", "x").env_clear().env("ONLY", "me").output().unwrap();
    assert_eq!(out.stdout, b"ONLY=me\n");
    // The program is looked up in the child's PATH, /bin:/usr/bin without one.
    let e = Command::new("sup-no-such-tool").env_clear().spawn().unwrap_err();
    assert!(e.is_program_not_found(), "{e}");
    let out = Command::new("sh").args(["-c", "echo $PATH"]).env_clear().env("PATH", "/usr/bin").output().unwrap();
    assert_eq!(out.stdout, b"/usr/bin\n");
}

#[cfg(feature = "tokio")]
#[test]
fn async_pty_input_and_shutdown() {
    use tokio::io::AsyncWriteExt;
    let rt = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build().unwrap();
    rt.block_on(async {
        let child = Command::new("cat").pty(24, 80).spawn().unwrap();
        let mut stdin = child.take_stdin_async().unwrap();
        AsyncWriteExt::write_all(&mut stdin, b"line\n").await.unwrap();
        stdin.shutdown().await.unwrap(); // Ctrl-D
        let out = child.wait_async().await.unwrap();
        assert_eq!(out.stdout, b"line\r\nline\r\n");
    });
}
