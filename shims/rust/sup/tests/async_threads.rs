//! `spawn_async` holds no thread per concurrent spawn: 200 concurrent async
//! spawns and waits keep the process's thread count within 8 of what
//! tokio::process needs for the same work. Its own test binary, with one
//! test, so that no other test's threads are counted.
#![cfg(feature = "tokio")]
use std::time::Duration;

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build().unwrap()
}

const N: usize = 200;

fn raise_fd_limit() {
    let mut rl = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: rl is a valid rlimit for both calls.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl);
        rl.rlim_cur = rl.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &rl);
    }
}

#[test]
fn two_hundred_concurrent_spawn_async_hold_no_thread_each() {
    raise_fd_limit();
    // Each child sleeps long enough that all 200 run at once when counted.
    let tokio_peak = rt().block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..N {
            tasks.push(tokio::spawn(async {
                let mut child = tokio::process::Command::new("sleep").arg("1").spawn().unwrap();
                child.wait().await.unwrap()
            }));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let peak = threads();
        for t in tasks {
            assert!(t.await.unwrap().success());
        }
        peak
    });
    let sup_peak = rt().block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..N {
            tasks.push(tokio::spawn(async {
                let child = sup::Command::new("sleep").arg("1").spawn_async().await.unwrap();
                child.wait_async().await.unwrap()
            }));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let peak = threads();
        for t in tasks {
            assert!(t.await.unwrap().success());
        }
        peak
    });
    eprintln!("threads with {N} concurrent spawns: tokio::process {tokio_peak}, sup spawn_async {sup_peak}");
    assert!(sup_peak <= tokio_peak + 8, "sup {sup_peak} threads, tokio::process {tokio_peak}");
}
