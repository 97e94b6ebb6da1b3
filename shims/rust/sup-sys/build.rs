//! Finds libsup through pkg-config: an installed prefix (`meson install`), or
//! a build tree through `PKG_CONFIG_PATH=<repo>/<builddir>/meson-uninstalled`.
//!
//! The link directories come from `pkg-config --libs-only-L sup`, not from
//! `--variable=libdir`: in a build tree's sup-uninstalled.pc, libdir names the
//! install layout (lib/x86_64-linux-gnu) while the library sits in lib/.
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG");
    println!("cargo:rerun-if-env-changed=SUP_NO_RPATH");
    let pkg_config = std::env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into());
    let run = |args: &[&str]| -> Result<String, String> {
        match Command::new(&pkg_config).args(args).output() {
            Ok(o) if o.status.success() => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
            Ok(o) => Err(String::from_utf8_lossy(&o.stderr).trim().to_string()),
            Err(e) => Err(format!("cannot run {pkg_config}: {e} (install pkg-config)")),
        }
    };
    let dirs = match run(&["--libs-only-L", "sup"]) {
        Ok(out) => out,
        Err(why) => {
            eprintln!(
                "\nsup-sys: libsup (the sup C library) was not found by pkg-config: {why}\n\
                 Either install it (`meson setup build && meson compile -C build && meson install -C build`)\n\
                 or point pkg-config at a build tree: PKG_CONFIG_PATH=<repo>/build/meson-uninstalled\n"
            );
            std::process::exit(1);
        }
    };
    if let Ok(v) = run(&["--modversion", "sup"]) {
        let v = v.trim();
        let mut it = v.split('.').map(|s| s.parse::<u32>().unwrap_or(0));
        let (maj, min) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
        if (maj, min) < (0, 2) {
            eprintln!("sup-sys: libsup {v} found, 0.2 or newer needed");
            std::process::exit(1);
        }
    }
    let rpath = std::env::var_os("SUP_NO_RPATH").is_none();
    let libdirs: Vec<&str> = dirs.split_whitespace().filter_map(|a| a.strip_prefix("-L")).collect();
    // rustc-link-arg reaches only this package's own targets: crates that
    // depend on sup-sys read DEP_SUP_LIBDIRS in their build.rs for their rpath.
    println!("cargo:libdirs={}", libdirs.join(":"));
    for dir in libdirs {
        println!("cargo:rustc-link-search=native={dir}");
        if rpath {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        }
    }
    println!("cargo:rustc-link-lib=dylib=sup");
}
