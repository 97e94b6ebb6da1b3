//! The `tokio` feature: waiting on tokio's reactor, no thread per wait.
#![cfg(feature = "tokio")]
use std::sync::Arc;
use std::time::{Duration, Instant};

use sup::{Command, Outcome};

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build().unwrap()
}

fn raise_fd_limit() {
    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl);
        rl.rlim_cur = rl.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &rl);
    }
}

#[test]
fn wait_async_returns_the_result() {
    rt().block_on(async {
        let child = Command::new("sh").args(["-c", "echo hi; exit 4"]).spawn().unwrap();
        let out = child.wait_async().await.unwrap();
        assert_eq!((out.outcome, out.exit_code), (Outcome::Exited, Some(4)));
        assert_eq!(out.stdout, b"hi\n");
        // Already final: returns at once.
        assert!(Arc::ptr_eq(&child.wait_async().await.unwrap(), &out));
    });
}

#[test]
fn dropping_the_future_is_safe() {
    rt().block_on(async {
        let child = Command::new("sleep").arg("60").spawn().unwrap();
        let r = tokio::time::timeout(Duration::from_millis(100), child.wait_async()).await;
        assert!(r.is_err(), "still running");
        child.abort().unwrap();
        let out = tokio::time::timeout(Duration::from_secs(20), child.wait_async()).await.unwrap().unwrap();
        assert_eq!(out.outcome, Outcome::Aborted);
    });
}

#[test]
fn thousand_concurrent_wait_async_on_a_current_thread_runtime() {
    raise_fd_limit();
    let rt = rt();
    let t = Instant::now();
    rt.block_on(async {
        // Half exit by themselves, half wait to be aborted: every wait is
        // pending at once on the one runtime thread.
        let children: Vec<Arc<sup::Child>> = (0..1000)
            .map(|i| {
                let mut c = if i % 2 == 0 { Command::new("true") } else { Command::new("sleep") };
                if i % 2 == 1 {
                    c.arg("60");
                }
                Arc::new(c.spawn().unwrap())
            })
            .collect();
        let spawned = t.elapsed();
        let tasks: Vec<_> = children
            .iter()
            .map(|c| {
                let c = Arc::clone(c);
                tokio::spawn(async move { c.wait_async().await.unwrap().outcome })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(200)).await;
        let t_abort = Instant::now();
        for c in children.iter().skip(1).step_by(2) {
            c.abort().unwrap();
        }
        for (i, task) in tasks.into_iter().enumerate() {
            let want = if i % 2 == 0 { Outcome::Exited } else { Outcome::Aborted };
            assert_eq!(task.await.unwrap(), want, "child {i}");
        }
        eprintln!("1000 children: spawned in {spawned:?}, all 500 aborted waits done {:?} after the aborts", t_abort.elapsed());
    });
    assert!(t.elapsed() < Duration::from_secs(60));
}

#[test]
fn async_reader_and_writer_move_into_tasks_on_one_thread() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    rt().block_on(async {
        // Feed 4 MiB through cat and read it back at the same time, on the
        // one runtime thread: both sides must wait on the reactor, never
        // block it (a blocking write would deadlock against the reader).
        let data: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
        let child = Command::new("cat").stdin(sup::Stdio::piped()).backpressure_bytes(64 << 10).spawn_async().await.unwrap();
        let mut stdin = child.take_stdin_async().unwrap();
        let mut stdout = child.stdout_async();
        let expect = data.clone();
        let writer = tokio::spawn(async move {
            stdin.write_all(&data).await.unwrap();
            stdin.shutdown().await.unwrap();
        });
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            stdout.read_to_end(&mut got).await.unwrap();
            got
        });
        writer.await.unwrap();
        let got = reader.await.unwrap();
        assert!(got == expect, "{} bytes back of {}", got.len(), expect.len());
        assert!(child.wait_async().await.unwrap().success());
    });
}

#[test]
fn async_readers_of_many_children_on_a_current_thread_runtime() {
    use tokio::io::AsyncReadExt;
    raise_fd_limit();
    rt().block_on(async {
        let tasks: Vec<_> = (0..200)
            .map(|i| {
                let child = Command::new("sh").args(["-c", &format!("echo start {i}; sleep 0.3; echo end {i}")]).spawn().unwrap();
                let (mut out, child) = (child.stdout_async(), Arc::new(child));
                tokio::spawn(async move {
                    let mut s = String::new();
                    out.read_to_string(&mut s).await.unwrap();
                    assert!(child.wait_async().await.unwrap().success());
                    (i, s)
                })
            })
            .collect();
        for t in tasks {
            let (i, s) = t.await.unwrap();
            assert_eq!(s, format!("start {i}\nend {i}\n"));
        }
    });
}

#[test]
fn async_reader_reports_a_gap_once_then_goes_on() {
    use tokio::io::AsyncReadExt;
    rt().block_on(async {
        let child = Command::new("seq").args(["1", "100000"]).max_output_bytes(4096).spawn().unwrap();
        child.wait_async().await.unwrap();
        let mut r = child.stdout_async();
        let mut got = Vec::new();
        let err = r.read_to_end(&mut got).await.unwrap_err();
        let gap = err.get_ref().and_then(|e| e.downcast_ref::<sup::Gap>()).copied().expect("a Gap");
        assert_eq!((gap.at, gap.skipped), (2048, 588895 - 4096));
        assert_eq!(got.len(), 2048);
        r.read_to_end(&mut got).await.unwrap();
        assert_eq!(got, child.wait().unwrap().stdout);
    });
}

#[test]
fn a_write_to_a_full_pipe_ends_when_the_child_does() {
    use tokio::io::AsyncWriteExt;
    // The child ends after 0.5 s, but a process that left its group keeps the
    // stdin pipe open and never reads it: the pipe fills and never turns
    // writable again. The write must end with the result (BrokenPipe), not
    // wait for the pipe.
    let script = "exec 3<&0; setsid sleep 30 <&3 3<&- >/dev/null 2>&1 & echo $!; sleep 0.5";
    for blocking in [false, true] {
        let child = Command::new("sh").args(["-c", script]).stdin(sup::Stdio::piped()).spawn().unwrap();
        let stdin = child.take_stdin().unwrap();
        let data = vec![b'x'; 1 << 20];
        let t = Instant::now();
        let err = if blocking {
            let mut stdin = stdin;
            std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &data)).join().unwrap().unwrap_err()
        } else {
            let mut stdin = stdin.into_async();
            rt().block_on(async { tokio::time::timeout(Duration::from_secs(30), stdin.write_all(&data)).await })
                .expect("the write ended")
                .unwrap_err()
        };
        assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "{err}");
        assert!(t.elapsed() < Duration::from_secs(20));
        let out = child.wait().unwrap();
        let pid: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0, "the reader that left the group was still there");
    }
}

/// `seq 1 n`'s output.
fn seq(n: u32) -> Vec<u8> {
    (1..=n).map(|i| format!("{i}\n")).collect::<String>().into_bytes()
}

#[test]
fn async_reader_streams_every_byte_then_the_end() {
    use tokio::io::AsyncReadExt;
    rt().block_on(async {
        // About 15 MiB through the pipe the reader reads itself, with reads
        // of every size below and above the 64 KiB read-ahead, then the
        // end, again and again.
        let want = seq(2_000_000);
        let child = Command::new("seq").args(["1", "2000000"]).backpressure_bytes(1 << 20).spawn_async().await.unwrap();
        let mut r = child.stdout_async();
        let (mut got, mut buf) = (Vec::new(), vec![0u8; 200_000]);
        for size in [1usize, 7, 8192, 65536, 65537, 200_000, 3].iter().cycle() {
            let n = r.read(&mut buf[..*size]).await.unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
            assert_eq!(r.position(), got.len() as u64);
        }
        assert!(got == want, "{} bytes of {}, equal prefix: {}", got.len(), want.len(), want.starts_with(&got));
        assert_eq!(r.read(&mut buf).await.unwrap(), 0);
        assert_eq!(r.read(&mut buf[..1]).await.unwrap(), 0);
        // tokio::io::copy and read_to_end (into spare, uninitialized
        // capacity) on a second child.
        let child = Command::new("seq").args(["1", "2000000"]).backpressure_bytes(1 << 20).spawn_async().await.unwrap();
        let mut copied = Vec::new();
        assert_eq!(tokio::io::copy(&mut child.stdout_async(), &mut copied).await.unwrap(), want.len() as u64);
        assert!(copied == want);
        let child = Command::new("seq").args(["1", "2000000"]).backpressure_bytes(1 << 20).spawn_async().await.unwrap();
        let mut to_end = Vec::new();
        child.stdout_async().read_to_end(&mut to_end).await.unwrap();
        assert!(to_end == want);
        // AsyncBufRead: copy_buf from the reader's own buffer.
        let child = Command::new("seq").args(["1", "2000000"]).backpressure_bytes(1 << 20).spawn_async().await.unwrap();
        let mut r = child.stdout_async();
        let mut buffered = Vec::new();
        assert_eq!(tokio::io::copy_buf(&mut r, &mut buffered).await.unwrap(), want.len() as u64);
        assert!(buffered == want);
        assert!(tokio::io::AsyncBufReadExt::fill_buf(&mut r).await.unwrap().is_empty());
    });
}

#[test]
fn async_reader_of_a_child_ended_mid_stream_gets_a_whole_prefix() {
    use tokio::io::AsyncReadExt;
    rt().block_on(async {
        let child = Command::new("seq").args(["1", "100000000"]).backpressure_bytes(64 << 10).spawn_async().await.unwrap();
        let mut r = child.stdout_async();
        let (mut got, mut buf) = (Vec::new(), [0u8; 1000]);
        while got.len() < 1 << 20 {
            let n = r.read(&mut buf).await.unwrap();
            assert!(n > 0);
            got.extend_from_slice(&buf[..n]);
        }
        child.abort().unwrap();
        r.read_to_end(&mut got).await.unwrap();
        assert_eq!(r.position(), got.len() as u64);
        let want = seq(10_000_000);
        assert!(got.len() < want.len() && want.starts_with(&got), "{} bytes, not a prefix", got.len());
        assert_eq!(child.wait_async().await.unwrap().outcome, Outcome::Aborted);
    });
}

#[test]
fn dropped_read_futures_lose_no_bytes() {
    use tokio::io::AsyncReadExt;
    rt().block_on(async {
        // Bursts with pauses between them; most reads are cancelled by a
        // short timeout while they wait, some while bytes are read ahead.
        let script = "i=0; while [ $i -lt 200 ]; do seq $((i*1000+1)) $((i*1000+1000)); sleep 0.002; i=$((i+1)); done";
        let child = Command::new("sh").args(["-c", script]).backpressure_bytes(64 << 10).spawn_async().await.unwrap();
        let mut r = child.stdout_async();
        let (mut got, mut buf, mut cancelled) = (Vec::new(), [0u8; 3000], 0);
        loop {
            match tokio::time::timeout(Duration::from_micros(300), r.read(&mut buf)).await {
                Ok(n) => match n.unwrap() {
                    0 => break,
                    n => got.extend_from_slice(&buf[..n]),
                },
                Err(_) => cancelled += 1,
            }
        }
        assert!(got == seq(200_000), "{} bytes", got.len());
        assert!(cancelled > 0, "no read was cancelled");
        // The same through AsyncBufRead: fill_buf futures dropped.
        let child = Command::new("sh").args(["-c", script]).backpressure_bytes(64 << 10).spawn_async().await.unwrap();
        let mut r = child.stdout_async();
        let mut got = Vec::new();
        loop {
            use tokio::io::AsyncBufReadExt;
            let n = match tokio::time::timeout(Duration::from_micros(300), r.fill_buf()).await {
                Ok(b) => {
                    let b = b.unwrap();
                    got.extend_from_slice(&b[..b.len().min(5000)]);
                    b.len().min(5000)
                }
                Err(_) => continue,
            };
            if n == 0 {
                break;
            }
            std::pin::Pin::new(&mut r).consume(n);
        }
        assert!(got == seq(200_000), "{} bytes", got.len());
        eprintln!("{cancelled} read futures dropped while waiting");
        assert!(child.wait_async().await.unwrap().success());
    });
}

#[test]
fn std_and_tokio_traits_in_scope_together_compile() {
    // E0034 before: OutputReader and ChildStdin implemented both sides.
    use std::io::{BufRead, Write};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let child = Command::new("cat").stdin(sup::Stdio::piped()).spawn().unwrap();
    let mut stdin = child.take_stdin().unwrap();
    stdin.write_all(b"one\ntwo\n").unwrap();
    drop(stdin);
    let lines: Vec<String> = std::io::BufReader::new(child.stdout()).lines().map(Result::unwrap).collect();
    assert_eq!(lines, ["one", "two"]);
    rt().block_on(async {
        let child = Command::new("cat").stdin(sup::Stdio::piped()).spawn().unwrap();
        let mut stdin = child.take_stdin_async().unwrap();
        stdin.write_all(b"three\n").await.unwrap();
        stdin.shutdown().await.unwrap();
        let mut lines = child.stdout_async().lines();
        assert_eq!(lines.next_line().await.unwrap().as_deref(), Some("three"));
        assert_eq!(lines.next_line().await.unwrap(), None);
        let out = sup::Command::new("echo").arg("async").output_async().await.unwrap();
        assert_eq!(out.stdout, b"async\n");
    });
}
