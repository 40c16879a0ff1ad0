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
        "rayjob",
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nintegrations:\n  \
         frameworks: [batch/job, ray.io/rayjob]\n",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("kuota controller: "))
        .unwrap_or_else(|| panic!("no error line: {stderr}"));
    assert!(
        line.contains(
            "integrations.frameworks[1]: Invalid value: \"ray.io/rayjob\": kuota does \
             not manage this framework"
        ),
        "{line}"
    );
    assert!(
        line.contains(
            "kuota manages \"batch/job\", \"pod\", \"deployment\", \"statefulset\", \"jobset.x-k8s.io/jobset\""
        ),
        "{line}"
    );
}

#[test]
fn tls_options_nothing_can_be_served_with_stop_the_controller_naming_them() {
    let out = controller_with(
        "tls-cbc",
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\ntls:\n  \
         cipherSuites: [TLS_RSA_WITH_AES_128_CBC_SHA]\n",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "tls.cipherSuites: none of [\"TLS_RSA_WITH_AES_128_CBC_SHA\"] can be served over \
             TLS 1.2"
        ),
        "{stderr}"
    );
    let out = controller_with(
        "tls-old",
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\ntls:\n  \
         minVersion: VersionTLS11\n",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("tls.minVersion: Invalid value: \"VersionTLS11\""),
        "{stderr}"
    );
}

/// A controller whose API server never answers stops once `controller.cacheSyncTimeout` has
/// passed without first lists, saying so, as Kueue's manager does.
#[test]
fn the_controller_stops_when_first_lists_take_longer_than_the_cache_sync_timeout() {
    let dir = std::env::temp_dir().join(format!("kuota-{}-cache-sync", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Nothing listens on port 1: every list fails and is retried.
    let kubeconfig = dir.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: none\n  cluster:\n    \
         server: http://127.0.0.1:1\ncontexts:\n- name: none\n  context:\n    cluster: none\n    \
         user: none\ncurrent-context: none\nusers:\n- name: none\n  user: {}\n",
    )
    .unwrap();
    let config = dir.join("config.yaml");
    std::fs::write(
        &config,
        "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n\
         leaderElection: {leaderElect: false}\nmetrics: {bindAddress: \"0\"}\n\
         health: {healthProbeBindAddress: \"0\"}\ncontroller: {cacheSyncTimeout: 500000000}\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kuota"))
        .args(["controller", "--no-webhooks", "--config"])
        .arg(&config)
        .env("KUBECONFIG", &kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("RUST_LOG", "error")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A controller that ignores the timeout would run on: it gets a minute, then fails the test.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "the watches did not deliver their first lists within controller.cacheSyncTimeout \
             (500ms)"
        ),
        "{stderr}"
    );
}
