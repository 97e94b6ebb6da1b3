//! The rpath of sup-sys's link directories for this crate's own tests,
//! doctests and examples (cargo passes rustc-link-arg to one package only).
fn main() {
    println!("cargo:rerun-if-env-changed=SUP_NO_RPATH");
    if std::env::var_os("SUP_NO_RPATH").is_some() {
        return;
    }
    if let Ok(dirs) = std::env::var("DEP_SUP_LIBDIRS") {
        for dir in dirs.split(':').filter(|d| !d.is_empty()) {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
        }
    }
}
