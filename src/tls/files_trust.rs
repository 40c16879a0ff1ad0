//! With certificates someone else manages (cert-manager), the CRDs kuota converts and the
//! visibility APIServices still have to reach and trust kuota: their objects come from
//! `crds/` and the chart, which cannot name a CA they do not know. Every replica reads the CA
//! the issuer left beside the pair (`ca.crt` in the certificate directory, which cert-manager
//! keeps current) and keeps those objects pointed at the webhook Service and trusting it, as
//! internal cert management does with its own CA; the webhook configurations are left to the
//! issuer's injector, as Kueue leaves them. The objects are looked at every minute rather than
//! watched: a CRD rewritten by an upgrade is put right within that minute, and the process
//! keeps its one watch per kind.

use std::convert::Infallible;
use std::path::PathBuf;
use std::time::Duration;

use super::cluster::{Cluster, Managed};
use super::manage::make_trust;
use super::material::parse_bundle;
use super::settings::TlsSettings;
use crate::clock::Clock;

/// The CA file cert-manager writes beside `tls.crt` and `tls.key`.
pub const CA_CRT: &str = "ca.crt";
/// How often the file and the objects are looked at.
const PERIOD: Duration = Duration::from_secs(60);
/// How soon after a failed look.
const RETRY: Duration = Duration::from_secs(5);

/// Keeps the CRDs and APIServices `settings` names trusting `dir/ca.crt`, forever.
pub async fn trust_ca_file(
    client: kube::Client,
    settings: TlsSettings,
    dir: PathBuf,
    clock: Clock,
) -> Infallible {
    let cluster = Cluster::new(client, &settings);
    let managed = Managed::all(&settings);
    let path = dir.join(CA_CRT);
    let mut last_problem: Option<String> = None;
    loop {
        let problem = match tokio::fs::read(&path).await {
            Err(error) => Some(format!("{}: {error}", path.display())),
            Ok(bytes) => match parse_bundle(&bytes) {
                Err(flaw) => Some(format!("{}: {flaw}", path.display())),
                Ok(cas) if cas.is_empty() => Some(format!("{}: no certificate", path.display())),
                Ok(cas) => {
                    let trust: Vec<_> = cas.iter().collect();
                    let now = clock.utc();
                    let mut failed = None;
                    for object in &managed {
                        if let Err((error, _)) =
                            make_trust(&cluster, object, &settings, &trust, now).await
                        {
                            failed.get_or_insert(format!("{object}: {error}"));
                        }
                    }
                    failed
                }
            },
        };
        // Said once per new problem: the file appears some time after the pod starts.
        if problem.is_some() && problem != last_problem {
            tracing::warn!(
                problem = problem.as_deref().unwrap_or_default(),
                "CRD conversion and the visibility API cannot be trusted yet"
            );
        }
        let wait = if problem.is_some() { RETRY } else { PERIOD };
        last_problem = problem;
        tokio::time::sleep(wait).await;
    }
}
