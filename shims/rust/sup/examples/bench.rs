//! sup against std::process::Command (and tokio::process with `--features
//! tokio`), side by side in one run, samples alternating so that drift in
//! machine load hits both sides alike:
//!
//!     PKG_CONFIG_PATH=<repo>/<build>/meson-uninstalled \
//!       cargo run --release --example bench --features tokio [-- --quick]
//!
//! Rows: spawn + wait of /bin/true (stdin /dev/null, stdout and stderr
//! captured); a child that prints a line then falls silent, ended 200 ms
//! later with its partial output: the time past 200 ms until the caller has
//! the result; and 1 GiB streamed from `head -c` through a live reader
//! (`child.stdout()`, lossless with `backpressure_bytes`) against std's
//! `ChildStdout` (and tokio's, with the feature): throughput. The like-for-like rows end it by `max_runtime`, which counts
//! from the call as the baselines' deadlines do; the `idle_timeout` rows
//! count from the child's last output byte instead. Prints a Markdown table.
use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

const SILENT: [&str; 3] = ["-c", "echo partial; exec sleep 100", ""];
const TIMEOUT: Duration = Duration::from_millis(200);

fn pct(s: &[f64], p: f64) -> f64 {
    let mut v = s.to_vec();
    v.sort_by(f64::total_cmp);
    v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]
}

fn fmt(sec: f64) -> String {
    let us = sec * 1e6;
    if us < 1000.0 { format!("{us:.0} µs") } else { format!("{:.2} ms", us / 1000.0) }
}

fn alternate(n: usize, batch: usize, mut a: impl FnMut() -> f64, mut b: impl FnMut() -> f64) -> (Vec<f64>, Vec<f64>) {
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    while xs.len() < n {
        for _ in 0..batch {
            xs.push(a());
        }
        for _ in 0..batch {
            ys.push(b());
        }
    }
    (xs, ys)
}

fn row(what: &str, base: &str, xs: &[f64], sup: &str, ys: &[f64], notes: &str) -> String {
    let (b50, b99, s50, s99) = (pct(xs, 0.5), pct(xs, 0.99), pct(ys, 0.5), pct(ys, 0.99));
    format!(
        "| {what} | {base} | {} · {} | {sup} | {} · {} | {:.2}x, {:.2}x | {notes} |",
        fmt(b50), fmt(b99), fmt(s50), fmt(s99), s50 / b50, s99 / b99
    )
}

fn std_true() -> f64 {
    let t = Instant::now();
    let out = std::process::Command::new("/bin/true").stdin(Stdio::null()).output().unwrap();
    assert!(out.status.success());
    t.elapsed().as_secs_f64()
}

fn sup_true() -> f64 {
    let t = Instant::now();
    let out = sup::Command::new("/bin/true").output().unwrap();
    assert!(out.success());
    t.elapsed().as_secs_f64()
}

/// The std idiom without a timeout API: a thread drains stdout, the caller
/// polls try_wait every millisecond until the deadline, then kill + wait.
fn std_silent() -> f64 {
    let t = Instant::now();
    let mut child = std::process::Command::new("/bin/sh")
        .args(&SILENT[..2])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut so = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        so.read_to_end(&mut v).unwrap();
        v
    });
    let deadline = t + TIMEOUT;
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        let now = Instant::now();
        if now >= deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            break;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(1)));
    }
    let out = reader.join().unwrap();
    assert_eq!(out, b"partial\n");
    (t.elapsed() - TIMEOUT).as_secs_f64()
}

fn sup_silent() -> f64 {
    let t = Instant::now();
    let out = sup::Command::new("/bin/sh").args(&SILENT[..2]).idle_timeout(TIMEOUT).output().unwrap();
    assert_eq!((out.outcome, out.stdout.as_slice()), (sup::Outcome::IdleTimeout, &b"partial\n"[..]));
    (t.elapsed().saturating_sub(TIMEOUT)).as_secs_f64()
}

/// The same child ended by a deadline counted from the call, as the
/// baselines count theirs.
fn sup_silent_max() -> f64 {
    let t = Instant::now();
    let out = sup::Command::new("/bin/sh").args(&SILENT[..2]).max_runtime(TIMEOUT).output().unwrap();
    assert_eq!((out.outcome, out.stdout.as_slice()), (sup::Outcome::MaxRuntime, &b"partial\n"[..]));
    (t.elapsed().saturating_sub(TIMEOUT)).as_secs_f64()
}

/// Streams `bytes` from `head -c` through std's pipe; MiB/s.
fn std_stream(bytes: u64) -> f64 {
    let t = Instant::now();
    let mut child = std::process::Command::new("head")
        .args(["-c", &bytes.to_string(), "/dev/zero"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut so = child.stdout.take().unwrap();
    let n = std::io::copy(&mut so, &mut std::io::sink()).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(n, bytes);
    bytes as f64 / (1 << 20) as f64 / t.elapsed().as_secs_f64()
}

/// The same through sup's live reader, lossless: the child is held back
/// while 1 MiB is unread. MiB/s.
fn sup_stream(bytes: u64) -> f64 {
    let t = Instant::now();
    let child = sup::Command::new("head").args(["-c", &bytes.to_string(), "/dev/zero"]).backpressure_bytes(1 << 20).spawn().unwrap();
    let n = std::io::copy(&mut child.stdout(), &mut std::io::sink()).unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(n, bytes);
    bytes as f64 / (1 << 20) as f64 / t.elapsed().as_secs_f64()
}

fn throughput_row(what: &str, base: &str, xs: &[f64], sup: &str, ys: &[f64], notes: &str) -> String {
    let (b50, s50) = (pct(xs, 0.5), pct(ys, 0.5));
    format!("| {what} | {base} | {b50:.0} MiB/s | {sup} | {s50:.0} MiB/s | {:.2}x | {notes} |", s50 / b50)
}

#[cfg(feature = "tokio")]
mod tk {
    use super::*;
    use tokio::io::AsyncReadExt;

    pub fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
    }

    pub fn tokio_true(rt: &tokio::runtime::Runtime) -> f64 {
        rt.block_on(async {
            let t = Instant::now();
            let out = tokio::process::Command::new("/bin/true").stdin(Stdio::null()).output().await.unwrap();
            assert!(out.status.success());
            t.elapsed().as_secs_f64()
        })
    }

    pub fn sup_true_async(rt: &tokio::runtime::Runtime) -> f64 {
        rt.block_on(async {
            let t = Instant::now();
            let out = sup::Command::new("/bin/true").spawn().unwrap().wait_async().await.unwrap();
            assert!(out.success());
            t.elapsed().as_secs_f64()
        })
    }

    pub fn tokio_silent(rt: &tokio::runtime::Runtime) -> f64 {
        rt.block_on(async {
            let t = Instant::now();
            let mut child = tokio::process::Command::new("/bin/sh")
                .args(&SILENT[..2])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut so = child.stdout.take().unwrap();
            let reader = async move {
                let mut v = Vec::new();
                so.read_to_end(&mut v).await.unwrap();
                v
            };
            let waiter = async {
                if tokio::time::timeout(TIMEOUT, child.wait()).await.is_err() {
                    child.start_kill().unwrap();
                    child.wait().await.unwrap();
                }
            };
            let (out, ()) = tokio::join!(reader, waiter);
            assert_eq!(out, b"partial\n");
            (t.elapsed() - TIMEOUT).as_secs_f64()
        })
    }

    pub fn tokio_stream(rt: &tokio::runtime::Runtime, bytes: u64) -> f64 {
        rt.block_on(async {
            let t = Instant::now();
            let mut child = tokio::process::Command::new("head")
                .args(["-c", &bytes.to_string(), "/dev/zero"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut so = child.stdout.take().unwrap();
            let n = tokio::io::copy(&mut so, &mut tokio::io::sink()).await.unwrap();
            assert!(child.wait().await.unwrap().success());
            assert_eq!(n, bytes);
            bytes as f64 / (1 << 20) as f64 / t.elapsed().as_secs_f64()
        })
    }

    pub fn sup_stream_async(rt: &tokio::runtime::Runtime, bytes: u64) -> f64 {
        rt.block_on(async {
            let t = Instant::now();
            let child = sup::Command::new("head")
                .args(["-c", &bytes.to_string(), "/dev/zero"])
                .backpressure_bytes(1 << 20)
                .spawn_async()
                .await
                .unwrap();
            let n = tokio::io::copy(&mut child.stdout_async(), &mut tokio::io::sink()).await.unwrap();
            assert!(child.wait_async().await.unwrap().success());
            assert_eq!(n, bytes);
            bytes as f64 / (1 << 20) as f64 / t.elapsed().as_secs_f64()
        })
    }

    pub fn sup_silent_async(rt: &tokio::runtime::Runtime, max_runtime: bool) -> f64 {
        rt.block_on(async {
            let t = Instant::now();
            let mut cmd = sup::Command::new("/bin/sh");
            cmd.args(&SILENT[..2]);
            if max_runtime {
                cmd.max_runtime(TIMEOUT);
            } else {
                cmd.idle_timeout(TIMEOUT);
            }
            let out = cmd.spawn().unwrap().wait_async().await.unwrap();
            let want = if max_runtime { sup::Outcome::MaxRuntime } else { sup::Outcome::IdleTimeout };
            assert_eq!((out.outcome, out.stdout.as_slice()), (want, &b"partial\n"[..]));
            (t.elapsed().saturating_sub(TIMEOUT)).as_secs_f64()
        })
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    // --stream: the throughput rows only.
    let stream_only = std::env::args().any(|a| a == "--stream");
    let (n_spawn, n_silent) = if quick { (200, 10) } else { (1000, 50) };
    let (stream_bytes, n_stream) = if quick { (64u64 << 20, 3) } else { (1u64 << 30, 5) };
    let started = Instant::now();
    let load = || std::fs::read_to_string("/proc/loadavg").unwrap_or_default().split(' ').next().unwrap_or("?").to_string();
    let load_before = load();
    #[cfg(feature = "tokio")]
    let rt = tk::rt();
    let mut rows = Vec::new();
    if !stream_only {
        // Warm up both sides (page cache, the library's threads).
        for _ in 0..20 {
            std_true();
            sup_true();
        }
        let (xs, ys) = alternate(n_spawn, 10, std_true, sup_true);
        rows.push(row("spawn + wait `/bin/true`, output captured", "`std::process::Command::output()`", &xs, "`sup::Command::run()`", &ys,
            &format!("{n_spawn} per side, alternating batches of 10")));
        #[cfg(feature = "tokio")]
        {
            let (xs, ys) = alternate(n_spawn, 10, || tk::tokio_true(&rt), || tk::sup_true_async(&rt));
            rows.push(row("the same, on a current-thread tokio runtime", "`tokio::process::Command::output().await`", &xs,
                "`spawn()?.wait_async().await`", &ys, &format!("{n_spawn} per side, alternating batches of 10")));
        }
        let (xs, ys) = alternate(n_silent, 1, std_silent, sup_silent_max);
        rows.push(row("silent child, 200 ms deadline from the call: time past 200 ms until the partial output is back", "`try_wait` every 1 ms, `kill()` + `wait()`, reader thread", &xs,
            "`max_runtime(200ms).output()`", &ys, &format!("{n_silent} per side, alternating; child `sh -c 'echo partial; exec sleep 100'`")));
        let (xs, ys) = alternate(n_silent, 1, std_silent, sup_silent);
        rows.push(row("the same, sup's idle timeout instead (its clock starts at the child's last output, not the call)", "(as above)", &xs,
            "`idle_timeout(200ms).output()`", &ys, &format!("{n_silent} per side, alternating")));
        #[cfg(feature = "tokio")]
        {
            let (xs, ys) = alternate(n_silent, 1, || tk::tokio_silent(&rt), || tk::sup_silent_async(&rt, true));
            rows.push(row("the same deadline from the call, tokio", "`time::timeout(200ms, child.wait())`, `start_kill()` + `wait()`", &xs,
                "`max_runtime(200ms)`, `wait_async().await`", &ys, &format!("{n_silent} per side, alternating")));
            let (xs, ys) = alternate(n_silent, 1, || tk::tokio_silent(&rt), || tk::sup_silent_async(&rt, false));
            rows.push(row("the same with sup's idle timeout, tokio", "(as above)", &xs,
                "`idle_timeout(200ms)`, `wait_async().await`", &ys, &format!("{n_silent} per side, alternating")));
        }
    }
    let mut streams = Vec::new();
    let (xs, ys) = alternate(n_stream, 1, || std_stream(stream_bytes), || sup_stream(stream_bytes));
    let gib = format!("{} MiB", stream_bytes >> 20);
    streams.push(throughput_row(&format!("stream {gib} of `head -c` output to a sink"), "`ChildStdout` + `io::copy`", &xs,
        "`child.stdout()` + `io::copy`, `backpressure_bytes(1 MiB)`", &ys, &format!("{n_stream} per side, alternating; median")));
    #[cfg(feature = "tokio")]
    {
        let (xs, ys) = alternate(n_stream, 1, || tk::tokio_stream(&rt, stream_bytes), || tk::sup_stream_async(&rt, stream_bytes));
        streams.push(throughput_row("the same, tokio", "`tokio::process::ChildStdout` + `tokio::io::copy`", &xs,
            "`child.stdout_async()` (`AsyncRead`) + `tokio::io::copy`", &ys, &format!("{n_stream} per side, alternating; median")));
    }
    println!("- libsup {}, release build; load average (1 min) before / after: {} / {}; the run took {:.0} s",
        sup::library_version(), load_before, load(), started.elapsed().as_secs_f64());
    println!();
    println!("| measurement | baseline | baseline p50 · p99 | sup | sup p50 · p99 | sup / baseline (p50, p99) | notes |");
    println!("|---|---|---|---|---|---|---|");
    for r in rows {
        println!("{r}");
    }
    println!();
    println!("| throughput | baseline | baseline | sup | sup | sup / baseline (higher is better) | notes |");
    println!("|---|---|---|---|---|---|---|");
    for r in streams {
        println!("{r}");
    }
}
