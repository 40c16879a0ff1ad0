//! Runs the `helm` that `e2e/build.sh` builds on `charts/kuota` and reads what it renders.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde::Deserialize;
use serde_json::Value;

use crate::support::repo_root;

/// A release and namespace to render under, and the prefix its objects must carry.
pub struct Case {
    pub release: &'static str,
    pub namespace: &'static str,
    pub fullname: &'static str,
}

/// Release names that keep the chart's name, Kueue's name, and neither.
pub const CASES: [Case; 3] = [
    Case {
        release: "kuota",
        namespace: "kuota-system",
        fullname: "kuota",
    },
    Case {
        release: "kueue",
        namespace: "kueue-system",
        fullname: "kueue",
    },
    Case {
        release: "my-release",
        namespace: "team-a",
        fullname: "my-release-kuota",
    },
];

/// The `helm` binary: `$KUOTA_E2E_BIN/helm` as `e2e/cluster` exports it, else in the folder
/// `e2e/build.sh --dir` names.
pub fn helm_bin() -> PathBuf {
    let dir = match std::env::var_os("KUOTA_E2E_BIN") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => {
            let output = Command::new("bash")
                .arg(repo_root().join("e2e/build.sh"))
                .arg("--dir")
                .output()
                .expect("running e2e/build.sh --dir");
            assert!(output.status.success(), "e2e/build.sh --dir failed");
            PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
        }
    };
    let helm = dir.join("helm");
    assert!(
        helm.is_file(),
        "{} is missing: build it with `bash e2e/build.sh`",
        helm.display()
    );
    helm
}

/// Runs helm with `values` (YAML) on its standard input, readable as `-f -`.
pub fn helm(args: &[&str], values: &str) -> Output {
    let mut child = Command::new(helm_bin())
        .args(args)
        .current_dir(repo_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting helm");
    child
        .stdin
        .take()
        .expect("helm's stdin")
        .write_all(values.as_bytes())
        .expect("writing values to helm");
    child.wait_with_output().expect("waiting for helm")
}

fn template(case: &Case, args: &[&str], values: &str) -> Output {
    let mut all = vec![
        "template",
        case.release,
        "charts/kuota",
        "--namespace",
        case.namespace,
        "-f",
        "-",
    ];
    all.extend_from_slice(args);
    helm(&all, values)
}

/// What one `helm template` rendered.
pub struct Rendered {
    pub objects: Vec<Value>,
}

impl Rendered {
    pub fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.objects.iter().filter(|o| o["kind"] == kind).collect()
    }

    pub fn get(&self, kind: &str, name: &str) -> Option<&Value> {
        self.objects
            .iter()
            .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
    }

    pub fn one(&self, kind: &str, name: &str) -> &Value {
        self.get(kind, name).unwrap_or_else(|| {
            let names: Vec<_> = self
                .of_kind(kind)
                .iter()
                .map(|o| o["metadata"]["name"].to_string())
                .collect();
            panic!("no {kind} {name}; rendered {kind}s: {names:?}")
        })
    }

    /// The configuration file in the ConfigMap, as text.
    pub fn config_text(&self, fullname: &str) -> String {
        let map = self.one("ConfigMap", &format!("{fullname}-manager-config"));
        map["data"]["controller_manager_config.yaml"]
            .as_str()
            .expect("the ConfigMap holds controller_manager_config.yaml")
            .to_string()
    }

    pub fn config(&self, fullname: &str) -> Value {
        yaml_serde::from_str(&self.config_text(fullname)).expect("the configuration is YAML")
    }

    /// The controller's container.
    pub fn manager(&self, fullname: &str) -> &Value {
        let deployment = self.one("Deployment", &format!("{fullname}-controller-manager"));
        &deployment["spec"]["template"]["spec"]["containers"][0]
    }
}

/// Renders the chart; panics with helm's message when it refuses.
pub fn render(case: &Case, args: &[&str], values: &str) -> Rendered {
    let output = template(case, args, values);
    assert!(
        output.status.success(),
        "helm template {} failed: {}",
        case.release,
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout).expect("helm prints UTF-8");
    let mut objects = Vec::new();
    for document in yaml_serde::Deserializer::from_str(&text) {
        let value = Value::deserialize(document).expect("helm renders YAML");
        if !value.is_null() {
            objects.push(value);
        }
    }
    Rendered { objects }
}

/// Renders the chart expecting a refusal; returns helm's message.
pub fn refusal(case: &Case, values: &str) -> String {
    let output = template(case, &[], values);
    assert!(
        !output.status.success(),
        "helm template accepted values it should refuse:\n{values}"
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Values whose configuration file is `config` (YAML, indented as at the top level).
pub fn with_config(config: &str) -> String {
    let mut values = String::from("managerConfig:\n  controllerManagerConfigYaml: |\n");
    for line in config.lines() {
        values.push_str("    ");
        values.push_str(line);
        values.push('\n');
    }
    values
}

/// Strings of a JSON array.
pub fn strings(value: &Value) -> Vec<&str> {
    value
        .as_array()
        .map(|items| items.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}
