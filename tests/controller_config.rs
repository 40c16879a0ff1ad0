//! `kuota controller --config FILE` refuses a configuration it would not keep before it talks to
//! any cluster: one error line naming the field and the reason, and a non-zero exit.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `kuota controller --config <file holding text>` with no cluster to reach; `name` names
/// the file, unique per test.
fn controller_with(name: &str, text: &str) -> Output {
    let path = std::env::temp_dir().join(format!("kuota-{}-{name}.yaml", std::process::id()));
    std::fs::File::create(&path)
        .and_then(|mut file| file.write_all(text.as_bytes()))
        .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kuota"))
        .args(["controller", "--config"])
        .arg(&path)
        .env("KUBECONFIG", "/nonexistent")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    out
}

#[test]
fn an_unmanaged_framework_stops_the_controller_naming_it_and_the_managed_ones() {
    let out = controller_with(
        "jobset",
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nintegrations:\n  \
         frameworks: [batch/job, jobset.x-k8s.io/jobset]\n",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("kuota controller: "))
        .unwrap_or_else(|| panic!("no error line: {stderr}"));
    assert!(
        line.contains(
            "integrations.frameworks[1]: Invalid value: \"jobset.x-k8s.io/jobset\": kuota does \
             not manage this framework"
        ),
        "{line}"
    );
    assert!(
        line.contains("kuota manages \"batch/job\", \"pod\", \"deployment\""),
        "{line}"
    );
}
