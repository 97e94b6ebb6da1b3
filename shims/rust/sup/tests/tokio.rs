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
        assert_eq!(child.wait_async().await.unwrap(), out);
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
