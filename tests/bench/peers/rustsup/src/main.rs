//! sup through its Rust shim: peer_rustsup {spawn|capture} COUNT, printing one
//! BENCH line (see ../README.md). spawn is `sup::Command::run` of /bin/true,
//! which captures both streams as peer_rust's `Command::output` does; capture
//! streams SUP_BENCH_WRITER's stdout through `Child::stdout_reader` with
//! `backpressure_bytes` set, so that every byte is read, as peer_rust reads
//! `ChildStdout`.
use std::io::Read;
use std::process::exit;
use std::time::Instant;

const WARMUP: u64 = 5;
const READ_CHUNK: usize = 64 * 1024;

fn fail(msg: String) -> ! {
    eprintln!("peer_rustsup: {msg}");
    exit(1);
}

fn spawn_true() {
    let out = sup::Command::new("/bin/true").run().unwrap_or_else(|e| fail(format!("/bin/true: {e}")));
    if !out.success() {
        fail(format!("/bin/true: {out:?}"));
    }
}

fn capture(writer: &str, count: &str) -> u64 {
    let child = sup::Command::new(writer)
        .arg(count)
        .backpressure_bytes(4 * READ_CHUNK as u64)
        .spawn()
        .unwrap_or_else(|e| fail(format!("start {writer}: {e}")));
    let mut reader = child.stdout();
    let mut buf = vec![0u8; READ_CHUNK];
    let mut total = 0u64;
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => fail(format!("read: {e}")),
        }
    }
    drop(reader);
    let out = child.wait().unwrap_or_else(|e| fail(format!("wait: {e}")));
    if !out.success() {
        fail(format!("writer: {out:?}"));
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
            eprintln!("peer_rustsup: bad count {:?}", args[2]);
            exit(2);
        }
    };
    let v = sup::library_version();
    let version = format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100);
    match args[1].as_str() {
        "spawn" => {
            let mut samples = Vec::with_capacity(count as usize);
            for i in 0..count + WARMUP {
                let t0 = Instant::now();
                spawn_true();
                let us = t0.elapsed().as_nanos() as f64 / 1e3;
                if i >= WARMUP {
                    samples.push(format!("{us:.2}"));
                }
            }
            println!("BENCH impl=rustsup version={version} mode=spawn count={count} samples_us={}", samples.join(","));
        }
        "capture" => {
            let writer = std::env::var("SUP_BENCH_WRITER").unwrap_or_else(|_| {
                eprintln!("peer_rustsup: SUP_BENCH_WRITER is not set");
                exit(2);
            });
            let t0 = Instant::now();
            let got = capture(&writer, &args[2]);
            let secs = t0.elapsed().as_secs_f64();
            if got != count {
                fail(format!("read {got} of {count} bytes"));
            }
            println!("BENCH impl=rustsup version={version} mode=capture count={count} bytes={got} seconds={secs:.6}");
        }
        m => {
            eprintln!("peer_rustsup: unknown mode {m:?}");
            exit(2);
        }
    }
}
