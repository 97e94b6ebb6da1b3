// Records the compiler's version (the peer states it in its BENCH line);
// std cannot tell at run time which rustc built it.
use std::process::Command;

fn main() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let out = Command::new(&rustc)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| panic!("{rustc} --version: {e}"));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let version = text
        .split_whitespace()
        .nth(1)
        .unwrap_or_else(|| panic!("unexpected `{rustc} --version` output: {text}"));
    println!("cargo:rustc-env=PEER_RUSTC_VERSION={version}");
    println!("cargo:rerun-if-changed=build.rs");
}
