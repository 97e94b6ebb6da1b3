//! Finds or builds libsup, in this order:
//!
//! 1. feature `bundled`: compiles the library's C++ sources (`lib/*.cpp` of
//!    the sup checkout this crate sits in, or of `SUP_SOURCE_DIR`) with the
//!    `cc` crate into a static library; libuv and cJSON come from pkg-config
//!    and are linked dynamically.
//! 2. `SUP_BUILD_DIR=<meson build dir>`: links that build tree's static
//!    `lib/libsup.a`, with libuv and cJSON from pkg-config, dynamically.
//! 3. otherwise pkg-config's `sup`: an installed libsup (`meson install`),
//!    linked dynamically; or a build tree's `meson-uninstalled` directory on
//!    `PKG_CONFIG_PATH`.
//!
//! 1 and 2 put libsup inside the binary: a crate depending on `sup` runs
//! with `cargo run` and no rpath or `LD_LIBRARY_PATH`. In case 3 an installed
//! libsup is found by the loader; for a build tree found through
//! `PKG_CONFIG_PATH` this crate sets an rpath for its own tests only (cargo
//! passes link arguments to one package), and publishes the directories as
//! `DEP_SUP_LIBDIRS` for the `sup` crate's tests.
use std::env;
use std::path::Path;
#[cfg(feature = "bundled")]
use std::path::PathBuf;

/// The oldest libsup whose ABI these declarations need.
const MIN_VERSION: &str = "0.3";

fn fail(msg: &str) -> ! {
    eprintln!("\nsup-sys: {msg}\n");
    std::process::exit(1);
}

/// libuv and cJSON, for a static libsup: include paths, and the link lines
/// printed after libsup's (the linker reads left to right).
fn deps() -> Vec<pkg_config::Library> {
    ["libuv", "libcjson"]
        .iter()
        .map(|name| {
            pkg_config::Config::new().cargo_metadata(false).probe(name).unwrap_or_else(|e| {
                fail(&format!(
                    "{name} not found by pkg-config, needed to link libsup statically \
                     (Debian: apt-get install libuv1-dev libcjson-dev pkg-config): {e}"
                ))
            })
        })
        .collect()
}

fn link_deps(libs: &[pkg_config::Library]) {
    for lib in libs {
        for dir in &lib.link_paths {
            println!("cargo:rustc-link-search=native={}", dir.display());
        }
        for l in &lib.libs {
            println!("cargo:rustc-link-lib={l}");
        }
    }
}

fn version_ok(v: &str) -> bool {
    let mut it = v.trim().split('.').map(|s| s.parse::<u32>().unwrap_or(0));
    let mut want = MIN_VERSION.split('.').map(|s| s.parse::<u32>().unwrap_or(0));
    (it.next().unwrap_or(0), it.next().unwrap_or(0)) >= (want.next().unwrap_or(0), want.next().unwrap_or(0))
}

#[cfg(feature = "bundled")]
fn bundled() {
    println!("cargo:rerun-if-env-changed=SUP_SOURCE_DIR");
    let root = match env::var_os("SUP_SOURCE_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap()).join("../../.."),
    };
    let lib = root.join("lib");
    let include = root.join("include");
    if !include.join("sup.h").is_file() || !lib.is_dir() {
        fail(&format!(
            "feature `bundled`: the sup sources (include/sup.h, lib/*.cpp) are not under {}; \
             set SUP_SOURCE_DIR to a sup checkout",
            root.display()
        ));
    }
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&lib)
        .unwrap_or_else(|e| fail(&format!("cannot read {}: {e}", lib.display())))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .collect();
    sources.sort();
    println!("cargo:rerun-if-changed={}", lib.display());
    println!("cargo:rerun-if-changed={}", include.display());
    let deps = deps();
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .std("c++17")
        .files(&sources)
        .include(&include)
        .define("SUP_BUILDING", None)
        .define("_GNU_SOURCE", None)
        .flag("-fvisibility=hidden")
        // As the meson build: no STB_GNU_UNIQUE symbols, so that a cdylib
        // holding libsup can be unloaded.
        .flag_if_supported("-fno-gnu-unique")
        .warnings(false);
    for d in &deps {
        build.includes(&d.include_paths);
    }
    // Prints libsup's static link line and then libstdc++'s.
    build.compile("sup");
    link_deps(&deps);
}

#[cfg(not(feature = "bundled"))]
fn bundled() {
    unreachable!()
}

fn build_dir(dir: &Path) {
    if dir.is_relative() {
        fail(&format!("SUP_BUILD_DIR={}: must be an absolute path (build scripts run elsewhere)", dir.display()));
    }
    let libdir = dir.join("lib");
    let archive = libdir.join("libsup.a");
    if !archive.is_file() {
        fail(&format!(
            "SUP_BUILD_DIR={}: {} not found; build sup there first \
             (meson setup DIR && meson compile -C DIR; the default_library=both keeps libsup.a)",
            dir.display(),
            archive.display()
        ));
    }
    let pc = dir.join("meson-uninstalled/sup-uninstalled.pc");
    if let Ok(text) = std::fs::read_to_string(&pc) {
        if let Some(v) = text.lines().find_map(|l| l.strip_prefix("Version:")) {
            if !version_ok(v) {
                fail(&format!("SUP_BUILD_DIR={}: libsup {} found, {MIN_VERSION} or newer needed", dir.display(), v.trim()));
            }
        }
    }
    println!("cargo:rerun-if-changed={}", archive.display());
    let deps = deps();
    println!("cargo:rustc-link-search=native={}", libdir.display());
    println!("cargo:rustc-link-lib=static=sup");
    link_deps(&deps);
    println!("cargo:rustc-link-lib=dylib=stdc++");
}

fn installed() {
    println!("cargo:rerun-if-env-changed=SUP_NO_RPATH");
    let lib = pkg_config::Config::new().atleast_version(MIN_VERSION).probe("sup").unwrap_or_else(|e| {
        fail(&format!(
            "libsup (the sup C library, {MIN_VERSION} or newer) was not found: {e}\n\
             Either install it (meson setup build && meson compile -C build && meson install -C build),\n\
             or name a build tree: SUP_BUILD_DIR=<repo>/build (linked statically),\n\
             or build it from source with the cargo feature `bundled`."
        ))
    });
    // rustc-link-arg reaches only this package's own targets: the sup crate
    // reads DEP_SUP_LIBDIRS in its build.rs for its tests' rpath.
    let dirs: Vec<String> = lib.link_paths.iter().map(|d| d.display().to_string()).collect();
    println!("cargo:libdirs={}", dirs.join(":"));
    if env::var_os("SUP_NO_RPATH").is_none() {
        for dir in &dirs {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        }
    }
}

fn main() {
    println!("cargo:rerun-if-env-changed=SUP_BUILD_DIR");
    if env::var_os("DOCS_RS").is_some() {
        return; // documentation only: nothing is linked
    }
    if cfg!(feature = "bundled") {
        bundled();
    } else if let Some(dir) = env::var_os("SUP_BUILD_DIR").filter(|d| !d.is_empty()) {
        build_dir(Path::new(&dir));
    } else {
        installed();
    }
}
