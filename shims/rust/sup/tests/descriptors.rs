//! Stdio::from(File), pipes and Command::fd: descriptors passed as themselves.
use std::io::{Read, Seek, Write};

use sup::{Command, Stdio};

#[test]
fn a_file_as_stdin_and_stdout_is_the_file_itself() {
    let dir = std::env::temp_dir().join(format!("sup-rust-fd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut input = std::fs::File::options().read(true).write(true).create(true).truncate(true).open(dir.join("in")).unwrap();
    input.write_all(b"0123456789").unwrap();
    input.rewind().unwrap(); // the offset is shared with the child
    let out = std::fs::File::create(dir.join("out")).unwrap();
    // dd skip= seeks stdin; the shell's test sees a regular file as fd 1.
    let res = Command::new("sh")
        .args(["-c", "if [ -f /proc/self/fd/1 ]; then echo file >&2; fi; dd bs=1 skip=7 2>/dev/null"])
        .stdin(Stdio::from(input))
        .stdout(Stdio::from(out))
        .output()
        .unwrap();
    assert!(res.success(), "{res}");
    assert_eq!(res.stderr, b"file\n");
    assert!(res.stdout.is_empty());
    assert_eq!(std::fs::read(dir.join("out")).unwrap(), b"789");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_pipeline_through_an_os_pipe() {
    let (r, w) = std::io::pipe().unwrap();
    let mut producer = Command::new("sh");
    producer.args(["-c", "echo b; echo a; echo c"]).stdout(Stdio::from(w));
    let mut consumer = Command::new("sort");
    consumer.stdin(Stdio::from(r));
    let a = producer.spawn().unwrap();
    let b = consumer.spawn().unwrap();
    drop(producer); // the last writer: sort sees the end once echo is done
    drop(consumer);
    assert!(a.wait().unwrap().success());
    let out = b.wait().unwrap();
    assert_eq!(out.stdout, b"a\nb\nc\n");
}

#[test]
fn command_fd_gives_a_descriptor_at_a_number() {
    let (mut r, w) = std::io::pipe().unwrap();
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "echo to-five >&5"]).fd(5, w);
    assert!(cmd.output().unwrap().success());
    drop(cmd);
    let mut got = String::new();
    r.read_to_string(&mut got).unwrap();
    assert_eq!(got, "to-five\n");
    let err = Command::new("true").fd(1, std::fs::File::open("/dev/null").unwrap()).output().unwrap_err();
    assert!(err.to_string().contains("fds"), "{err}");
}

#[test]
fn names_from_std() {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "exit 3"]).env("A", "1");
    assert_eq!(cmd.get_program(), "sh");
    assert_eq!(cmd.get_args().collect::<Vec<_>>(), ["-c", "exit 3"]);
    assert_eq!(cmd.get_envs().count(), 1);
    assert_eq!(cmd.status().unwrap().exit_code, Some(3));
    let child = Command::new("sleep").arg("30").spawn().unwrap();
    child.kill().unwrap();
    assert_eq!(child.wait().unwrap().outcome, sup::Outcome::Aborted);
}

#[test]
fn output_with_backpressure_is_refused() {
    let err = Command::new("true").backpressure_bytes(4096).output().unwrap_err();
    assert_eq!(err.part(), Some(sup::Part::Spec));
    assert!(err.to_string().contains("backpressure_bytes"), "{err}");
    // With nothing captured there is nothing to wait for.
    let out = Command::new("true").backpressure_bytes(4096).stdout(Stdio::null()).stderr(Stdio::null()).output().unwrap();
    assert!(out.success());
}

#[test]
fn small_items_from_std_users() {
    // Duration::MAX means never, as a huge value does in Go.
    let out = Command::new("true").idle_timeout(std::time::Duration::MAX).max_runtime(std::time::Duration::MAX).output().unwrap();
    assert!(out.success());
    // A pty's input is typed through take_stdin: the error names the Rust method.
    let err = Command::new("cat").pty(24, 80).stdin_bytes(b"x".to_vec()).spawn().unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("stdin_bytes()") && msg.contains("take_stdin") && !msg.contains("sup_input_write"), "{msg}");
}

#[test]
fn limits_sandbox_and_ids() {
    let dir = std::env::temp_dir().join(format!("sup-rust-limit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big");
    let child = Command::new("sh")
        .args(["-c", &format!("exec head -c 100000 /dev/zero > {}", big.display())])
        .limits(sup::Limits { file_bytes: Some(4096), core_dump: Some(false), ..Default::default() })
        .spawn()
        .unwrap();
    let out = child.wait().unwrap();
    assert_eq!(out.signal, Some(sup::Signal::from_raw(libc::SIGXFSZ)), "{out}");
    let json = child.json().unwrap();
    assert!(json.contains("\"limit\": \"file_size\""), "{json}");
    assert!(std::fs::metadata(&big).unwrap().len() <= 4096);
    if unsafe { libc::geteuid() } == 0 {
        let out = Command::new("id").uid(65534).gid(65534).groups(&[65534]).output().unwrap();
        let s = String::from_utf8_lossy(&out.stdout);
        assert!(s.starts_with("uid=65534") && s.contains("gid=65534") && s.contains("groups=65534"), "{s}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
