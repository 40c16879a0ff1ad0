//! Kueue's own binaries, built from its Go module by e2e/kueue-build.sh.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, ensure};

/// The Kueue release the e2e tests run beside kuota (`e2e/kueue.version`, which scripts/test.sh
/// builds ahead): v0.15, the last storing `v1beta1`, which the switch-over test needs; one
/// release, so a cold run builds Kueue once.
pub fn e2e_version() -> &'static str {
    include_str!("../../kueue.version").trim()
}

/// The folder e2e/kueue-build.sh builds Kueue `version` into (its manager, `kubectl-kueue` and
/// CRDs; `None`: the newest release): `KUEUE_DIR`, else what the script prints, building it
/// first if needed.
pub fn dir(version: Option<&str>) -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("KUEUE_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let script = super::repo_root().join("e2e/kueue-build.sh");
    let mut command = Command::new(&script);
    if let Some(version) = version {
        command.env("KUEUE_VERSION", version);
    }
    let output = command
        .output()
        .with_context(|| format!("run {}", script.display()))?;
    ensure!(
        output.status.success(),
        "{} failed:\n{}",
        script.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout)?;
    let dir = stdout
        .lines()
        .last()
        .context("e2e/kueue-build.sh printed nothing")?;
    Ok(PathBuf::from(dir.trim()))
}
