//! The declarations in src/lib.rs must match include/sup.h: every `SUP_API`
//! prototype of the header (name, return type, parameter types) equals a row
//! of `sup_sys::DECLARATIONS`, each row equals the matching `pub fn` of the
//! `extern` block (read from the source text, Rust types mapped back to C),
//! and the enum and macro constants have the header's values.
use std::path::PathBuf;

fn header_path() -> PathBuf {
    if let Some(p) = std::env::var_os("SUP_HEADER") {
        return p.into();
    }
    // shims/rust/sup-sys -> the repository root.
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../include/sup.h");
    assert!(p.exists(), "include/sup.h not found at {} (set SUP_HEADER)", p.display());
    p
}

fn strip_comments(src: &str) -> String {
    let mut out = String::new();
    let mut rest = src;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        let j = rest[i..].find("*/").expect("unterminated comment") + i + 2;
        out.push(' ');
        rest = &rest[j..];
    }
    out.push_str(rest);
    out
}

/// "const char*" / "const  char *" -> "const char *"; "sup_proc**" -> "sup_proc **".
fn norm_type(t: &str) -> String {
    let t = t.split_whitespace().collect::<Vec<_>>().join(" ").replace(" *", "*");
    match t.find('*') {
        Some(i) => format!("{} {}", t[..i].trim_end(), &t[i..]),
        None => t,
    }
}

/// "const char *text" -> "const char *" (drops the parameter's name).
fn drop_name(decl: &str) -> String {
    let d = decl.trim();
    let name_start = d.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_').len();
    let ty = &d[..name_start];
    if ty.trim().is_empty() { norm_type(d) } else { norm_type(ty) }
}

type Proto = (String, String, Vec<String>);

fn header_prototypes() -> Vec<Proto> {
    let src = std::fs::read_to_string(header_path()).unwrap();
    let src: String = strip_comments(&src)
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    for chunk in src.split("SUP_API").skip(1) {
        let decl = chunk[..chunk.find(';').expect("prototype without ;")].trim();
        let open = decl.find('(').unwrap();
        let close = decl.rfind(')').unwrap();
        let head = &decl[..open];
        let name_start = head.trim_end().rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let name = head.trim_end()[name_start..].to_string();
        let ret = norm_type(&head[..name_start]);
        let params = decl[open + 1..close].trim();
        let params = if params == "void" || params.is_empty() {
            Vec::new()
        } else {
            params.split(',').map(drop_name).collect()
        };
        out.push((name, ret, params));
    }
    out
}

/// Maps a Rust FFI type of the extern block back to its C spelling.
fn rust_to_c(t: &str) -> String {
    let t = t.trim();
    for (prefix, cnst) in [("*const ", true), ("*mut ", false)] {
        if let Some(inner) = t.strip_prefix(prefix) {
            let inner = rust_to_c(inner);
            let inner = if cnst { format!("const {inner}") } else { inner };
            return if inner.ends_with('*') { format!("{inner}*") } else { format!("{inner} *") };
        }
    }
    match t {
        "c_int" => "int",
        "c_char" => "char",
        "c_void" => "void",
        "c_double" => "double",
        "size_t" => "size_t",
        "u64" => "uint64_t",
        "i64" => "int64_t",
        "sup_proc" => "sup_proc",
        other => panic!("no C spelling for Rust type {other}"),
    }
    .to_string()
}

fn extern_block_prototypes() -> Vec<Proto> {
    let src = include_str!("../src/lib.rs");
    let block = &src[src.find("unsafe extern \"C\" {").expect("extern block")..];
    let block = &block[..block.find("\n}").unwrap()];
    let mut out = Vec::new();
    for line in block.lines().map(str::trim).filter(|l| l.starts_with("pub fn ")) {
        let line = line.strip_prefix("pub fn ").unwrap().trim_end_matches(';');
        let open = line.find('(').unwrap();
        let close = line.rfind(')').unwrap();
        let name = line[..open].to_string();
        let ret = match line[close + 1..].trim().strip_prefix("->") {
            Some(r) => rust_to_c(r),
            None => "void".to_string(),
        };
        let args = line[open + 1..close].trim();
        let params = if args.is_empty() {
            Vec::new()
        } else {
            args.split(',').map(|a| rust_to_c(a.split_once(':').expect("name: type").1)).collect()
        };
        out.push((name, ret, params));
    }
    out
}

fn table() -> Vec<Proto> {
    sup_sys::DECLARATIONS
        .iter()
        .map(|(n, r, p)| (n.to_string(), r.to_string(), p.iter().map(|s| s.to_string()).collect()))
        .collect()
}

#[test]
fn table_matches_header() {
    let header = header_prototypes();
    assert!(header.len() >= 32, "parsed only {} prototypes", header.len());
    let mut h = header.clone();
    let mut t = table();
    h.sort();
    t.sort();
    for p in &h {
        assert!(t.contains(p), "header prototype {p:?} missing or different in DECLARATIONS");
    }
    for p in &t {
        assert!(h.contains(p), "DECLARATIONS row {p:?} is not in include/sup.h");
    }
}

#[test]
fn extern_block_matches_table() {
    let mut e = extern_block_prototypes();
    let mut t = table();
    e.sort();
    t.sort();
    assert_eq!(e, t);
}

#[test]
fn constants_match_header() {
    let src = strip_comments(&std::fs::read_to_string(header_path()).unwrap());
    let mut values = std::collections::HashMap::new();
    // One item per piece: enum members may share a line ("{ A = 1, B = 2 }").
    for line in src.split(['\n', ',', '{', '}', ';']) {
        let l = line.trim();
        let l = l.strip_prefix("#define ").map(|d| d.replacen(' ', " = ", 1)).unwrap_or(l.to_string());
        if let Some((k, v)) = l.split_once(" = ") {
            if let Ok(v) = v.trim().parse::<i64>() {
                values.insert(k.trim().to_string(), v);
            }
        }
    }
    use sup_sys::*;
    let ours: &[(&str, i64)] = &[
        ("SUP_OK", SUP_OK as i64), ("SUP_EPERM", SUP_EPERM as i64), ("SUP_ENOENT", SUP_ENOENT as i64),
        ("SUP_ESRCH", SUP_ESRCH as i64), ("SUP_ENOTSUP", SUP_ENOTSUP as i64), ("SUP_ENOSPC", SUP_ENOSPC as i64),
        ("SUP_CONTAIN_GROUP", SUP_CONTAIN_GROUP as i64), ("SUP_CONTAIN_CGROUP", SUP_CONTAIN_CGROUP as i64),
        ("SUP_PHASE_NONE", SUP_PHASE_NONE as i64), ("SUP_PHASE_FIRST_OUTPUT", SUP_PHASE_FIRST_OUTPUT as i64),
        ("SUP_PHASE_IDLE", SUP_PHASE_IDLE as i64), ("SUP_PHASE_INPUT", SUP_PHASE_INPUT as i64),
        ("SUP_HOST_DEATH_TREE", SUP_HOST_DEATH_TREE as i64),
        ("SUP_HOST_DEATH_MAIN_PROCESS", SUP_HOST_DEATH_MAIN_PROCESS as i64),
        ("SUP_E2BIG", SUP_E2BIG as i64), ("SUP_ENOEXEC", SUP_ENOEXEC as i64), ("SUP_EBADF", SUP_EBADF as i64),
        ("SUP_ECHILD", SUP_ECHILD as i64), ("SUP_EAGAIN", SUP_EAGAIN as i64), ("SUP_ENOMEM", SUP_ENOMEM as i64),
        ("SUP_EACCES", SUP_EACCES as i64), ("SUP_EBUSY", SUP_EBUSY as i64), ("SUP_ENOTDIR", SUP_ENOTDIR as i64),
        ("SUP_EISDIR", SUP_EISDIR as i64), ("SUP_EINVAL", SUP_EINVAL as i64), ("SUP_EMFILE", SUP_EMFILE as i64),
        ("SUP_EPIPE", SUP_EPIPE as i64), ("SUP_ENOSYS", SUP_ENOSYS as i64), ("SUP_ENODATA", SUP_ENODATA as i64),
        ("SUP_ECANCELED", SUP_ECANCELED as i64), ("SUP_EINTERNAL", SUP_EINTERNAL as i64),
        ("SUP_OUTCOME_EXITED", SUP_OUTCOME_EXITED as i64), ("SUP_OUTCOME_SIGNALED", SUP_OUTCOME_SIGNALED as i64),
        ("SUP_OUTCOME_IDLE_TIMEOUT", SUP_OUTCOME_IDLE_TIMEOUT as i64),
        ("SUP_OUTCOME_MAX_RUNTIME", SUP_OUTCOME_MAX_RUNTIME as i64),
        ("SUP_OUTCOME_INTERRUPTED", SUP_OUTCOME_INTERRUPTED as i64),
        ("SUP_OUTCOME_ABORTED", SUP_OUTCOME_ABORTED as i64),
        ("SUP_STDOUT", SUP_STDOUT as i64), ("SUP_STDERR", SUP_STDERR as i64),
        ("SUP_PART_NONE", SUP_PART_NONE as i64), ("SUP_PART_SPEC", SUP_PART_SPEC as i64),
        ("SUP_PART_EXEC", SUP_PART_EXEC as i64), ("SUP_PART_CWD", SUP_PART_CWD as i64),
        ("SUP_PART_SYSTEM", SUP_PART_SYSTEM as i64), ("SUP_ERRBUF_SIZE", SUP_ERRBUF_SIZE as i64),
        ("SUP_VERSION_MAJOR", (SUP_VERSION_NUMBER / 10000) as i64),
        ("SUP_VERSION_MINOR", (SUP_VERSION_NUMBER / 100 % 100) as i64),
        ("SUP_VERSION_PATCH", (SUP_VERSION_NUMBER % 100) as i64),
    ];
    for (name, v) in ours {
        assert_eq!(values.get(*name), Some(v), "{name}");
    }
    let header_enum_names = values.keys().filter(|k| k.starts_with("SUP_") && !k.starts_with("SUP_VERSION")).count();
    assert_eq!(header_enum_names, ours.len() - 3, "a constant of the header has no Rust counterpart");
    assert!(src.contains("#define SUP_POS_IGNORE UINT64_MAX") && SUP_POS_IGNORE == u64::MAX);
}

#[test]
fn library_is_the_header_version() {
    assert_eq!(unsafe { sup_sys::sup_version() }, SUP_VERSION_NUMBER_CHECK);
}
const SUP_VERSION_NUMBER_CHECK: i32 = sup_sys::SUP_VERSION_NUMBER;
