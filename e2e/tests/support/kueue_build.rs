//! Kueue's own binaries, built from its Go module by e2e/kueue-build.sh.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, Result, ensure};

/// The folder e2e/kueue-build.sh builds Kueue into (its manager, `kubectl-kueue` and CRDs):
/// `KUEUE_DIR`, else what the script prints, building it first if needed.
pub fn dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("KUEUE_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    let script = super::repo_root().join("e2e/kueue-build.sh");
    let output = Command::new(&script)
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
