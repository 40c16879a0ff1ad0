//! The binary's output to a reader that went away (a closed pipe) or to a full disk: no panic; a
//! closed pipe ends quietly, a failed write is one error line and a non-zero exit.

use std::fs::OpenOptions;
use std::process::{Command, Output, Stdio};

fn kuota(args: &[&str], stdout: impl Into<Stdio>) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kuota"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// A pipe whose reading end is already closed: every write to it fails with `EPIPE`.
fn closed_pipe() -> std::io::PipeWriter {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer
}

const COMMANDS: [&[&str]; 3] = [
    &["crds"],
    &["simulate", "-f", "examples/tas.yaml"],
    &["version"],
];

#[test]
fn a_closed_pipe_ends_quietly() {
    for args in COMMANDS {
        let out = kuota(args, closed_pipe());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_one_error_line_and_a_failure() {
    for args in COMMANDS {
        let full = OpenOptions::new().write(true).open("/dev/full").unwrap();
        let out = kuota(args, full);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        let command = format!("kuota {}: writing standard output: ", args[0]);
        assert!(stderr.starts_with(&command), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
    }
}
