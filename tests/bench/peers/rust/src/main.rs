//! Rust std::process::Command peer: peer_rust {spawn|capture} COUNT, printing
//! one BENCH line (see ../README.md). spawn runs /bin/true with
//! Command::output (stdout and stderr captured), as a Rust program capturing
//! a command would; capture reads SUP_BENCH_WRITER's stdout through
//! ChildStdout.
use std::io::Read;
use std::process::{exit, Command, Stdio};
use std::time::Instant;

const WARMUP: u64 = 5;
const READ_CHUNK: usize = 64 * 1024;
const VERSION: &str = env!("PEER_RUSTC_VERSION");

fn fail(msg: String) -> ! {
    eprintln!("peer_rust: {msg}");
    exit(1);
}

fn spawn_true() {
    let out = Command::new("/bin/true")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| fail(format!("/bin/true: {e}")));
    if !out.status.success() {
        fail(format!("/bin/true: {}", out.status));
    }
}

fn capture(writer: &str, count: &str) -> u64 {
    let mut child = Command::new(writer)
        .arg(count)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| fail(format!("start {writer}: {e}")));
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let mut buf = vec![0u8; READ_CHUNK];
    let mut total = 0u64;
    loop {
        match stdout.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => fail(format!("read: {e}")),
        }
    }
    let status = child.wait().unwrap_or_else(|e| fail(format!("wait: {e}")));
    if !status.success() {
        fail(format!("writer: {status}"));
    }
    total
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: {} {{spawn|capture}} COUNT", args[0]);
        exit(2);
    }
    let count: u64 = match args[2].parse() {
        Ok(n) if n > 0 => n,
        _ => {
            eprintln!("peer_rust: bad count '{}'", args[2]);
            exit(2);
        }
    };
    match args[1].as_str() {
        "spawn" => {
            let mut samples = Vec::with_capacity(count as usize);
            for i in 0..count + WARMUP {
                let t0 = Instant::now();
                spawn_true();
                let us = t0.elapsed().as_secs_f64() * 1e6;
                if i >= WARMUP {
                    samples.push(format!("{us:.2}"));
                }
            }
            println!(
                "BENCH impl=rust version={VERSION} mode=spawn count={count} samples_us={}",
                samples.join(",")
            );
        }
        "capture" => {
            let writer = match std::env::var("SUP_BENCH_WRITER") {
                Ok(w) if !w.is_empty() => w,
                _ => {
                    eprintln!("peer_rust: SUP_BENCH_WRITER is not set");
                    exit(2);
                }
            };
            let t0 = Instant::now();
            let got = capture(&writer, &args[2]);
            let secs = t0.elapsed().as_secs_f64();
            if got != count {
                fail(format!("read {got} of {count} bytes"));
            }
            println!(
                "BENCH impl=rust version={VERSION} mode=capture count={count} bytes={got} seconds={secs:.6}"
            );
        }
        mode => {
            eprintln!("peer_rust: unknown mode '{mode}'");
            exit(2);
        }
    }
}
