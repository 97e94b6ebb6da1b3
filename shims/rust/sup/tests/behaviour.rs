//! What users of sup::Command rely on. Timing assertions use wide margins
//! (the suite must pass on a loaded 2-core machine); measured values are
//! printed with --nocapture.
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use sup::{Command, Outcome, Part, Signal};

fn sh(script: &str) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(script);
    c
}

#[test]
fn exited_with_code_and_both_streams() {
    let out = sh("printf out; printf err >&2; exit 3").output().unwrap();
    assert_eq!(out.outcome, Outcome::Exited);
    assert_eq!(out.exit_code, Some(3));
    assert_eq!(out.signal, None);
    assert!(!out.forced_kill && !out.status_lost && !out.success());
    assert_eq!((out.stdout.as_slice(), out.stderr.as_slice()), (&b"out"[..], &b"err"[..]));
    assert!(out.duration < Duration::from_secs(10));
}

#[test]
fn signaled_by_itself() {
    let out = sh("kill -USR1 $$").output().unwrap();
    assert_eq!(out.outcome, Outcome::Signaled);
    assert_eq!((out.exit_code, out.signal), (None, Some(Signal::USR1)));
    assert!(!out.forced_kill);
}

#[test]
fn idle_timeout_ends_a_silent_child_with_its_last_words() {
    let t = Instant::now();
    let out = sh("echo last words; exec sleep 30").idle_timeout(Duration::from_millis(300)).output().unwrap();
    eprintln!("idle timeout 300 ms: ended after {:?}", t.elapsed());
    assert_eq!(out.outcome, Outcome::IdleTimeout);
    assert_eq!(out.signal, Some(Signal::TERM));
    assert_eq!(out.stdout, b"last words\n");
    assert!(t.elapsed() >= Duration::from_millis(300) && t.elapsed() < Duration::from_secs(5));
}

#[test]
fn max_runtime_ends_a_talkative_child() {
    let out = sh("while :; do echo tick; sleep 0.05; done")
        .idle_timeout(Duration::from_secs(20))
        .max_runtime(Duration::from_millis(400))
        .output()
        .unwrap();
    assert_eq!(out.outcome, Outcome::MaxRuntime);
    assert!(out.stdout.starts_with(b"tick\n"));
    assert!(out.duration < Duration::from_secs(5), "{:?}", out.duration);
}

#[test]
fn stderr_alone_resets_the_idle_clock() {
    // 10 writes 0.3 s apart (3 s in all) with a 1.5 s idle timeout: only
    // stderr keeps the child alive.
    let out = sh("i=0; while [ $i -lt 10 ]; do echo $i >&2; sleep 0.3; i=$((i+1)); done")
        .idle_timeout(Duration::from_millis(1500))
        .output()
        .unwrap();
    assert_eq!(out.outcome, Outcome::Exited, "{out:?}");
    assert_eq!(out.exit_code, Some(0));
    assert!(out.stdout.is_empty());
    assert_eq!(out.stderr, b"0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n");
}

#[test]
fn interrupt_then_grace_then_sigkill() {
    let child = sh("trap 'echo got TERM' TERM; while :; do sleep 0.05; done").grace(Duration::from_millis(300)).spawn().unwrap();
    thread::sleep(Duration::from_millis(200)); // let the shell install its trap
    child.interrupt().unwrap();
    let out = child.wait_timeout(Duration::from_secs(10)).unwrap().expect("ended within grace+");
    assert_eq!(out.outcome, Outcome::Interrupted);
    assert!(out.forced_kill, "the shell ignores TERM: SIGKILL after grace: {out:?}");
    assert_eq!(out.signal, Some(Signal::KILL));
    assert_eq!(out.stdout, b"got TERM\n");

    let child = Command::new("sleep").arg("30").grace(Duration::from_secs(20)).spawn().unwrap();
    child.interrupt().unwrap();
    let out = child.wait().unwrap();
    assert_eq!((out.outcome, out.signal, out.forced_kill), (Outcome::Interrupted, Some(Signal::TERM), false));
    assert!(out.duration < Duration::from_secs(10));
}

#[test]
fn kill_on_timeout_skips_the_grace() {
    let out = sh("trap '' TERM; exec sleep 30")
        .idle_timeout(Duration::from_millis(200))
        .grace(Duration::from_secs(30))
        .kill_on_timeout(true)
        .output()
        .unwrap();
    assert_eq!((out.outcome, out.signal, out.forced_kill), (Outcome::IdleTimeout, Some(Signal::KILL), true));
    assert!(out.duration < Duration::from_secs(10));
}

#[test]
fn interrupt_signal_is_sent() {
    let out = Command::new("sleep")
        .arg("30")
        .interrupt_signal(Signal::INT)
        .max_runtime(Duration::from_millis(100))
        .output()
        .unwrap();
    assert_eq!((out.outcome, out.signal), (Outcome::MaxRuntime, Some(Signal::INT)));
}

#[test]
fn abort_from_another_thread_while_one_waits() {
    let child = Arc::new(Command::new("sleep").arg("60").spawn().unwrap());
    let waiter = {
        let child = Arc::clone(&child);
        thread::spawn(move || {
            let out = child.wait().unwrap();
            (out, Instant::now())
        })
    };
    thread::sleep(Duration::from_millis(200));
    assert!(!waiter.is_finished());
    let t = Instant::now();
    child.abort().unwrap();
    let (out, woke) = waiter.join().unwrap();
    let latency = woke.duration_since(t);
    eprintln!("abort -> waiter woke: {latency:?}");
    assert_eq!((out.outcome, out.signal, out.forced_kill), (Outcome::Aborted, Some(Signal::KILL), true));
    assert!(latency < Duration::from_secs(2), "{latency:?}");
    // A request after the result is final changes nothing.
    child.interrupt().unwrap();
    assert_eq!(child.wait().unwrap(), out);
}

#[test]
fn wait_timeout_and_try_wait() {
    let child = Command::new("sleep").arg("60").spawn().unwrap();
    assert!(child.try_wait().unwrap().is_none());
    let t = Instant::now();
    assert!(child.wait_timeout(Duration::from_millis(150)).unwrap().is_none());
    let waited = t.elapsed();
    eprintln!("wait_timeout(150 ms) returned after {waited:?}");
    assert!(waited >= Duration::from_millis(150) && waited < Duration::from_secs(2), "{waited:?}");
    assert!(child.wait_timeout(Duration::ZERO).unwrap().is_none());
    child.abort().unwrap();
    let out = child.wait_timeout(Duration::from_secs(20)).unwrap().expect("final after abort");
    assert_eq!(out.outcome, Outcome::Aborted);
    assert_eq!(child.try_wait().unwrap(), Some(out));
}

#[test]
fn live_reader_sees_output_before_the_child_ends() {
    let child = sh("printf first; sleep 60").spawn().unwrap();
    let mut r = child.stdout();
    let mut buf = [0u8; 64];
    let n = r.read(&mut buf).unwrap(); // blocks until "first" is there
    assert_eq!(&buf[..n], b"first");
    assert!(child.try_wait().unwrap().is_none(), "read returned while the child still runs");
    child.abort().unwrap();
    let mut rest = Vec::new();
    r.read_to_end(&mut rest).unwrap(); // EOF once final
    assert!(rest.is_empty());
    assert_eq!(r.position(), 5);
}

#[test]
fn live_readers_of_both_streams_get_every_byte() {
    let child = sh("i=0; while [ $i -lt 2000 ]; do echo out$i; echo err$i >&2; i=$((i+1)); done").spawn().unwrap();
    let child = &child;
    let (out, err) = thread::scope(|s| {
        let o = s.spawn(|| {
            let mut v = Vec::new();
            child.stdout().read_to_end(&mut v).unwrap();
            v
        });
        let e = s.spawn(|| {
            let mut v = Vec::new();
            child.stderr().read_to_end(&mut v).unwrap();
            v
        });
        (o.join().unwrap(), e.join().unwrap())
    });
    let want = |p: &str| (0..2000).map(|i| format!("{p}{i}\n")).collect::<String>().into_bytes();
    assert_eq!(out, want("out"));
    assert_eq!(err, want("err"));
    let res = child.wait().unwrap();
    assert_eq!((&res.stdout, &res.stderr), (&out, &err));
}

/// `seq 1 n`'s output.
fn seq(n: u32) -> Vec<u8> {
    (1..=n).map(|i| format!("{i}\n")).collect::<String>().into_bytes()
}

#[test]
fn backpressured_reader_gets_every_byte_with_any_buffer_size() {
    // About 15 MiB through the pipe the reader reads itself: reads of every
    // size, below and above the 64 KiB read-ahead, get the bytes in order,
    // then the end, again and again.
    let want = seq(2_000_000);
    let child = Command::new("seq").args(["1", "2000000"]).backpressure_bytes(1 << 20).spawn().unwrap();
    let mut r = child.stdout();
    let (mut got, mut buf) = (Vec::new(), vec![0u8; 200_000]);
    for size in [1usize, 7, 8192, 65536, 65537, 200_000, 3].iter().cycle() {
        let n = r.read(&mut buf[..*size]).unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
        assert_eq!(r.position(), got.len() as u64);
    }
    assert!(got == want, "{} bytes of {}, equal prefix: {}", got.len(), want.len(), want.starts_with(&got));
    assert_eq!(r.read(&mut buf).unwrap(), 0);
    assert_eq!(r.read(&mut buf[..1]).unwrap(), 0);
    assert!(child.wait().unwrap().success());
    // BufRead, from the reader's own buffer: every line, in order.
    use std::io::BufRead;
    let child = Command::new("seq").args(["1", "2000000"]).backpressure_bytes(1 << 20).spawn().unwrap();
    let mut r = child.stdout();
    let mut lines = 0u32;
    for line in r.by_ref().lines() {
        lines += 1;
        assert_eq!(line.unwrap(), lines.to_string());
    }
    assert_eq!((lines, r.position()), (2_000_000, want.len() as u64));
    assert!(r.fill_buf().unwrap().is_empty());
}

#[test]
fn buf_read_reports_a_gap_once_then_goes_on() {
    use std::io::BufRead;
    let child = Command::new("seq").args(["1", "100000"]).max_output_bytes(4096).spawn().unwrap();
    child.wait().unwrap();
    let mut r = child.stdout();
    let (mut got, mut gaps) = (Vec::new(), Vec::new());
    loop {
        match r.fill_buf() {
            Ok([]) => break,
            Ok(b) => {
                let n = b.len().min(100);
                got.extend_from_slice(&b[..n]);
                r.consume(n);
            }
            Err(e) => gaps.push(e.get_ref().and_then(|e| e.downcast_ref::<sup::Gap>()).map(|g| (g.at, g.skipped)).expect("a Gap")),
        }
    }
    assert_eq!(gaps, [(2048, 588895 - 4096)]);
    assert_eq!(got, child.wait().unwrap().stdout);
}

#[test]
fn a_child_ended_mid_stream_leaves_the_reader_a_whole_prefix() {
    // The reader takes ~1 MiB in small reads (64 KiB read ahead), the child
    // is ended, and the reader goes on to the end: one unbroken prefix of
    // what the child wrote, no gap.
    let child = Command::new("seq").args(["1", "100000000"]).backpressure_bytes(64 << 10).spawn().unwrap();
    let mut r = child.stdout();
    let (mut got, mut buf) = (Vec::new(), [0u8; 1000]);
    while got.len() < 1 << 20 {
        let n = r.read(&mut buf).unwrap();
        assert!(n > 0);
        got.extend_from_slice(&buf[..n]);
    }
    child.abort().unwrap();
    r.read_to_end(&mut got).unwrap();
    assert_eq!(r.position(), got.len() as u64);
    let want = seq(10_000_000);
    assert!(got.len() < want.len() && want.starts_with(&got), "{} bytes, not a prefix", got.len());
    assert_eq!(child.wait().unwrap().outcome, Outcome::Aborted);
}

fn alive(pid: i32) -> bool {
    // A zombie counts as gone only once reaped: kill(pid, 0) succeeds on it.
    unsafe { libc::kill(pid, 0) == 0 }
}

#[test]
fn drop_of_a_running_child_leaves_nothing_behind() {
    let child = sh("sleep 300 & sleep 300 & echo ready; wait").spawn().unwrap();
    let pid = child.id() as i32;
    let mut r = child.stdout();
    let mut buf = [0u8; 6];
    r.read_exact(&mut buf).unwrap();
    assert!(alive(pid) && unsafe { libc::kill(-pid, 0) } == 0);
    drop(r); // a reader would keep the handle: see owned_readers_...
    let t = Instant::now();
    drop(child);
    eprintln!("drop of a running child took {:?}", t.elapsed());
    assert!(t.elapsed() < Duration::from_secs(5));
    assert!(!alive(pid), "main process still exists (not reaped)");
    // The group: the two background sleeps are gone too.
    let deadline = Instant::now() + Duration::from_secs(5);
    while unsafe { libc::kill(-pid, 0) } == 0 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(unsafe { libc::kill(-pid, 0) }, -1, "process group {pid} still has members");
}

#[test]
fn non_utf8_argument_and_environment_bytes_reach_the_child() {
    let arg = OsStr::from_bytes(b"\xff\xfe caf\xc3\xa9 \x80 \"q\" \\ \n\t\x01 end");
    let out = sh("printf %s \"$1\"; printf '|%s' \"$V\"")
        .arg("argv0")
        .arg(arg)
        .env("V", OsStr::from_bytes(b"v\xffw"))
        .output()
        .unwrap();
    assert_eq!(out.stdout, [arg.as_bytes(), b"|v\xffw"].concat());
}

#[test]
fn interior_nul_is_an_error_not_a_panic() {
    for c in [
        Command::new("echo").arg("a\0b").clone(),
        Command::new("echo").env("K", "v\0").clone(),
        Command::new("echo").env("K\0", "v").clone(),
        Command::new("echo").current_dir("/tmp\0x").clone(),
        Command::new("ec\0ho"),
    ] {
        let e = c.spawn().unwrap_err();
        assert_eq!(e.code(), sup_sys::SUP_EINVAL, "{e}");
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        assert_eq!(e.part(), Some(Part::Spec));
    }
}

#[test]
fn exec_errors_say_what_failed() {
    let e = Command::new("no-such-program-sup-test").spawn().unwrap_err();
    assert_eq!((e.code(), e.part(), e.kind()), (sup_sys::SUP_ENOENT, Some(Part::Exec), std::io::ErrorKind::NotFound));
    assert!(e.is_program_not_found());
    assert!(e.to_string().contains("no-such-program-sup-test"), "{e}");

    let e = Command::new("true").current_dir("/no/such/dir/sup-test").spawn().unwrap_err();
    assert_eq!((e.code(), e.part()), (sup_sys::SUP_ENOENT, Some(Part::Cwd)));
    assert!(!e.is_program_not_found());
    assert!(e.detail().starts_with("cwd "), "{e}");

    let e = Command::new("/etc/passwd").spawn().unwrap_err();
    assert_eq!((e.code(), e.part(), e.kind()), (sup_sys::SUP_EACCES, Some(Part::Exec), std::io::ErrorKind::PermissionDenied));

    let e = Command::new("/").spawn().unwrap_err();
    assert_eq!(e.part(), Some(Part::Exec));

    // As std reports a missing program: NotFound with the errno.
    let io: std::io::Error = Command::new("no-such-program-sup-test").spawn().unwrap_err().into();
    assert_eq!((io.kind(), io.raw_os_error()), (std::io::ErrorKind::NotFound, Some(libc::ENOENT)));
    let std_err = std::process::Command::new("no-such-program-sup-test").spawn().unwrap_err();
    assert_eq!((io.kind(), io.raw_os_error()), (std_err.kind(), std_err.raw_os_error()));

    // One message: the library's detail names the cause once.
    let e = Command::new("true").current_dir("/etc/passwd").spawn().unwrap_err();
    assert_eq!((e.code(), e.part()), (sup_sys::SUP_ENOTDIR, Some(Part::Cwd)));
    let msg = e.to_string();
    assert_eq!(msg, format!("sup: {}", e.detail()));
    assert_eq!(msg.to_lowercase().matches("not a directory").count(), 1, "{msg}");
    let io: std::io::Error = e.into();
    assert_eq!(io.raw_os_error(), Some(libc::ENOTDIR));
}

#[test]
fn std_process_command_alongside_gets_its_statuses() {
    let sup_side = thread::spawn(|| {
        for _ in 0..30 {
            assert_eq!(sh("exit 5").output().unwrap().exit_code, Some(5));
        }
    });
    for i in 0..30 {
        let st = std::process::Command::new("sh").arg("-c").arg(format!("exit {}", i % 7)).status().unwrap();
        assert_eq!(st.code(), Some(i % 7));
        let mut ch = std::process::Command::new("sleep").arg("0.01").spawn().unwrap();
        assert!(ch.wait().unwrap().success());
    }
    sup_side.join().unwrap();
}

#[test]
fn stdin_env_cwd_and_capture_limits() {
    let data: Vec<u8> = (0..=255u8).cycle().take(100_000).collect();
    let out = Command::new("cat").stdin_bytes(data.clone()).output().unwrap();
    assert_eq!(out.stdout, data);

    let out = Command::new("cat").output().unwrap();
    assert!(out.stdout.is_empty() && out.success());

    let out = sh("printf '%s|%s|' \"$A\" \"${HOME-gone}\"; pwd")
        .env("A", "1")
        .env_remove("HOME")
        .current_dir("/usr")
        .output()
        .unwrap();
    assert_eq!(out.stdout, b"1|gone|/usr\n");

    let out = sh("head -c 10000 /dev/zero; printf TAIL").max_output_bytes(100).output().unwrap();
    assert_eq!(out.stdout.len(), 100);
    assert!(out.stdout.ends_with(b"TAIL"));
    assert_eq!(out.stdout_omitted, 10004 - 100);
}

#[test]
fn outcome_names_match_the_library() {
    for o in [Outcome::Exited, Outcome::Signaled, Outcome::IdleTimeout, Outcome::MaxRuntime, Outcome::Interrupted, Outcome::Aborted] {
        assert_eq!(o.as_str(), o.library_name());
        assert_eq!(o.to_string(), o.as_str());
    }
}

#[test]
fn child_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<sup::Child>();
    assert_send_sync::<sup::Error>();
    fn assert_send<T: Send + 'static>() {}
    assert_send::<sup::OutputReader>();
    assert_send::<sup::ChildStdin>();
    assert!(sup::library_version() >= sup_sys::SUP_VERSION_NUMBER);
}

#[test]
fn many_waiters_on_one_child() {
    let child = Arc::new(Command::new("sleep").arg("60").spawn().unwrap());
    let waiters: Vec<_> = (0..8)
        .map(|_| {
            let c = Arc::clone(&child);
            thread::spawn(move || c.wait().unwrap().outcome)
        })
        .collect();
    thread::sleep(Duration::from_millis(100));
    child.abort().unwrap();
    for w in waiters {
        assert_eq!(w.join().unwrap(), Outcome::Aborted);
    }
}

/// Reads to the end, collecting each run of bytes between gaps and each
/// gap's `(at, skipped)`; `pause` slows the reader down after every read.
fn read_with_gaps(r: &mut sup::OutputReader, chunk: usize, pause: Duration) -> (Vec<Vec<u8>>, Vec<(u64, u64)>) {
    let (mut runs, mut gaps) = (vec![Vec::new()], Vec::new());
    let mut buf = vec![0u8; chunk];
    loop {
        match r.read(&mut buf) {
            Ok(0) => return (runs, gaps),
            Ok(n) => runs.last_mut().unwrap().extend_from_slice(&buf[..n]),
            Err(e) => {
                let gap = e.get_ref().and_then(|g| g.downcast_ref::<sup::Gap>()).copied().unwrap_or_else(|| panic!("{e}"));
                assert_eq!(e.kind(), std::io::ErrorKind::Other);
                assert_eq!(gap.stream, "stdout");
                gaps.push((gap.at, gap.skipped));
                runs.push(Vec::new());
            }
        }
        thread::sleep(pause);
    }
}

/// Every run of bytes is the stream itself at its place: no byte from both
/// sides of a gap in one run, and the runs plus the gaps cover everything.
fn check_runs(all: &[u8], runs: &[Vec<u8>], gaps: &[(u64, u64)]) {
    assert_eq!(runs.len(), gaps.len() + 1);
    let mut at = 0usize;
    for (i, run) in runs.iter().enumerate() {
        assert_eq!(&all[at..at + run.len()], run.as_slice(), "run {i} at byte {at}");
        at += run.len();
        if let Some(&(gap_at, skipped)) = gaps.get(i) {
            assert_eq!(gap_at, at as u64, "gap {i}");
            at += skipped as usize;
        }
    }
    assert_eq!(at, all.len());
}

#[test]
fn a_reader_that_falls_behind_is_told_what_it_lost() {
    let all: Vec<u8> = (1..=100_000).map(|i| format!("{i}\n")).collect::<String>().into_bytes();
    // A slow reader of a live child: 512 bytes every 20 ms against seq's
    // megabytes a second, with 4096 bytes kept.
    let child = Command::new("seq").args(["1", "100000"]).max_output_bytes(4096).spawn().unwrap();
    let mut r = child.stdout();
    let (runs, gaps) = read_with_gaps(&mut r, 512, Duration::from_millis(20));
    eprintln!("slow reader: {} gaps, {:?}", gaps.len(), gaps);
    assert!(!gaps.is_empty(), "the reader fell behind: a gap must be reported");
    check_runs(&all, &runs, &gaps);
    assert_eq!(r.position(), all.len() as u64);
    let out = child.wait().unwrap();
    // It lost at most what the capture dropped: what it read from the pipe
    // itself before it fell behind is its own, though only the head is kept.
    let lost: u64 = gaps.iter().map(|g| g.1).sum();
    assert!(lost > 0 && lost <= out.stdout_omitted, "lost {lost}, dropped {}", out.stdout_omitted);
    assert!(runs[0].starts_with(&out.stdout[..2048]), "the first run starts with the kept head");

    // A reader that starts after the end: the head, one gap, the tail.
    let mut r = child.stdout();
    let (runs, gaps) = read_with_gaps(&mut r, 1000, Duration::ZERO);
    assert_eq!(gaps, [(2048, all.len() as u64 - 4096)]);
    check_runs(&all, &runs, &gaps);
    assert_eq!(runs.concat(), out.stdout);
}

#[test]
fn piped_stdin_is_a_blocking_writer() {
    use std::io::Write;
    // More than a pipe holds: the writer blocks while cat drains it.
    let data: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
    let child = Command::new("cat").stdin(sup::Stdio::piped()).spawn().unwrap();
    let mut stdin = child.take_stdin().expect("piped");
    assert!(child.take_stdin().is_none(), "taken once");
    let writer = thread::spawn(move || {
        stdin.write_all(&data).unwrap();
        data // dropped stdin: cat reads end of file
    });
    let data = writer.join().unwrap();
    let out = child.wait().unwrap();
    assert!(out.success(), "{out}");
    assert_eq!(out.stdout, data);

    // The child closed its stdin: BrokenPipe, no SIGPIPE in the host.
    let child = sh("exec 0<&-; echo closed; sleep 30").stdin(sup::Stdio::piped()).spawn().unwrap();
    let mut stdin = child.take_stdin().unwrap();
    let mut first = [0u8; 7];
    child.stdout().read_exact(&mut first).unwrap();
    let e = stdin.write_all(b"x").unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe);

    // Not piped: no writer.
    assert!(Command::new("true").spawn().unwrap().take_stdin().is_none());
    // run() closes a piped stdin rather than hang.
    assert!(Command::new("cat").stdin(sup::Stdio::piped()).output().unwrap().success());
}

#[test]
fn owned_readers_move_to_threads_and_outlive_the_child() {
    let child = sh("echo before; sleep 30").spawn().unwrap();
    let pid = child.id() as i32;
    let mut r = child.stdout();
    let mut line = [0u8; 7];
    r.read_exact(&mut line).unwrap();
    let reader = thread::spawn(move || {
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).map(|_| rest)
    });
    thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    drop(child); // ends it, though the reader still holds the handle
    assert!(t.elapsed() < Duration::from_secs(5));
    let rest = reader.join().unwrap().unwrap(); // then end of file
    assert!(rest.is_empty(), "{rest:?}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
    assert!(!alive(pid), "the child was ended and reaped");

    // A reader made before the drop reads everything kept after it.
    let child = sh("printf 'kept bytes'").spawn().unwrap();
    child.wait().unwrap();
    let mut r = child.stderr();
    let mut o = child.stdout();
    drop(child);
    let (mut out, mut err) = (String::new(), String::new());
    o.read_to_string(&mut out).unwrap();
    r.read_to_string(&mut err).unwrap();
    assert_eq!((out.as_str(), err.as_str()), ("kept bytes", ""));
}

#[test]
fn the_result_is_shared_typed_and_printable() {
    use std::os::unix::process::ExitStatusExt;
    let child = sh("printf x; exit 3").spawn().unwrap();
    let a = child.wait().unwrap();
    let b = child.wait().unwrap();
    let c = child.try_wait().unwrap().unwrap();
    assert!(Arc::ptr_eq(&a, &b) && Arc::ptr_eq(&a, &c), "one result, not a copy per call");
    let st = a.status().unwrap();
    assert_eq!((st.code(), st.signal(), st.success()), (Some(3), None, false));
    assert_eq!(a.pid, child.id());
    assert!(a.to_string().starts_with("exited with code 3 after "), "{a}");

    // A max runtime the shell has set its trap well within, even on a
    // loaded machine (at 100 ms, a shell not yet past `trap` died of the
    // SIGTERM itself).
    let out = sh("trap '' TERM; sleep 30").max_runtime(Duration::from_secs(1)).grace(Duration::from_millis(100)).output().unwrap();
    let sent: Vec<Signal> = out.signals_sent.iter().map(|s| s.signal).collect();
    assert_eq!(sent, [Signal::TERM, Signal::KILL], "{out:?}");
    assert!(out.signals_sent[0].at >= Duration::from_secs(1) && out.signals_sent[1].at > out.signals_sent[0].at);
    let st = out.status().unwrap();
    assert_eq!((st.code(), st.signal()), (None, Some(libc::SIGKILL)));
    assert!(out.to_string().starts_with("max_runtime: SIGKILL (SIGKILL needed) after"), "{out}");

    let out = sh("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done").output().unwrap();
    assert!(out.rusage.user + out.rusage.sys > Duration::ZERO && out.rusage.max_rss_kb > 0, "{:?}", out.rusage);
}

#[test]
fn signal_names_are_bashs() {
    // bash names no signal 32 or 33 (glibc's own real-time signals): SIG32.
    let script = "for i in $(seq 1 64); do n=$(kill -l $i 2>/dev/null); echo ${n:-$i}; done";
    let out = std::process::Command::new("bash").args(["-c", script]).output().unwrap();
    let names: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(|l| format!("SIG{l}")).collect();
    assert_eq!(names.len(), 64);
    for (i, want) in names.iter().enumerate() {
        let s = Signal::from_raw(i as i32 + 1);
        assert_eq!(s.name(), Some(want.as_str()), "signal {}", i + 1);
        // libsup 0.3 parses every name it prints; 0.2 the classic ones.
        if i < 31 || sup::library_version() >= 300 {
            assert_eq!(want.parse::<Signal>().unwrap(), s, "{want}");
        }
    }
    assert_eq!(Signal::from_raw(65).name(), None);
    assert!("SIGNOPE".parse::<Signal>().is_err());
    let e = Command::new("true").interrupt_signal(99).spawn().unwrap_err();
    assert_eq!((e.code(), e.part()), (sup_sys::SUP_EINVAL, Some(Part::Spec)));
}
