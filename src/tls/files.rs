//! Certificates someone else manages: with `internalCertManagement.enable: false` (cert-manager in
//! Kueue's chart) the serving pair is a mounted Secret (in `webhook.certDir` for the webhooks, in
//! `/etc/kueue/metrics/certs` for the metrics server), which the kubelet
//! rewrites in place when it is renewed. The files are read again on a short period and the new
//! pair presented from the next handshake, so a renewal needs no restart.

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::material::{TLS_CRT, TLS_KEY, load_serving};
use super::store::CertStore;

/// How often the files are looked at.
pub const FILE_CHECK_PERIOD: Duration = Duration::from_secs(10);

/// What one look at the directory found.
#[derive(Debug, PartialEq, Eq)]
enum Look {
    /// The same bytes as last time.
    Unchanged,
    /// A new pair, now presented.
    Installed,
    /// Missing or unusable files; the reason names the file.
    Unusable(String),
}

/// Keeps presenting the pair in `dir`; never returns. Readiness follows the presented pair: the
/// CA that signed it is trusted through whoever issued it (cert-manager's CA injector).
pub async fn watch_dir(dir: PathBuf, store: CertStore, period: Duration) -> Infallible {
    let mut last: Option<(Vec<u8>, Vec<u8>)> = None;
    let mut last_problem: Option<String> = None;
    loop {
        match look(&dir, &store, &mut last).await {
            Look::Installed => {
                tracing::info!(dir = %dir.display(), "serving the certificate from files");
                last_problem = None;
            }
            Look::Unchanged => {}
            Look::Unusable(problem) => {
                // A mount appears some time after the pod starts: say so once, not every period.
                if last_problem.as_ref() != Some(&problem) {
                    tracing::warn!(dir = %dir.display(), %problem, "certificate files are not usable yet");
                    last_problem = Some(problem);
                }
            }
        }
        tokio::time::sleep(period).await;
    }
}

async fn look(dir: &Path, store: &CertStore, last: &mut Option<(Vec<u8>, Vec<u8>)>) -> Look {
    let read = |name: &'static str| {
        let path = dir.join(name);
        async move {
            tokio::fs::read(&path)
                .await
                .map_err(|error| format!("{}: {error}", path.display()))
        }
    };
    let pair = match (read(TLS_CRT).await, read(TLS_KEY).await) {
        (Ok(crt), Ok(key)) => (crt, key),
        (Err(problem), _) | (_, Err(problem)) => return Look::Unusable(problem),
    };
    if last.as_ref() == Some(&pair) {
        return Look::Unchanged;
    }
    match load_serving(&pair.0, &pair.1) {
        Ok(serving) => {
            store.install(serving.key);
            store.set_trusted(true);
            *last = Some(pair);
            Look::Installed
        }
        Err(flaw) => Look::Unusable(format!("{}: {flaw}", dir.display())),
    }
}

#[cfg(test)]
mod tests;
