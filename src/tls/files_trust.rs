//! With certificates someone else manages (cert-manager), the CRDs kuota converts and the
//! visibility APIServices still have to reach and trust kuota: their objects come from
//! `crds/` and the chart, which cannot name a CA they do not know. Every replica reads the CA
//! the issuer left beside the pair (`ca.crt` in the certificate directory, which cert-manager
//! keeps current) and keeps those objects pointed at the webhook Service and trusting it, as
//! internal cert management does with its own CA; the webhook configurations are left to the
//! issuer's injector, as Kueue leaves them, and only read. The replica is ready
//! ([`CertStore::serves_trusted`]) once every one of them trusts that CA: before the injector has
//! written the webhook configurations' bundles, the API server's calls would fail their TLS
//! handshake, and before the CRDs trust it, conversions would. The objects
//! are looked at every minute rather than watched (every five seconds until trusted): a CRD
//! rewritten by an upgrade is put right within that minute, and the process keeps its one watch
//! per kind.

use std::convert::Infallible;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use time::OffsetDateTime;

use super::bundle::{Target, trusts};
use super::cluster::{Cluster, Managed};
use super::manage::make_trust;
use super::material::{CertInfo, parse_bundle};
use super::settings::TlsSettings;
use super::store::CertStore;
use crate::clock::Clock;

/// The CA file cert-manager writes beside `tls.crt` and `tls.key`.
pub const CA_CRT: &str = "ca.crt";
/// How often the file and the objects are looked at.
const PERIOD: Duration = Duration::from_secs(60);
/// How soon after a failed look.
const RETRY: Duration = Duration::from_secs(5);

/// What one object says of the trust in the issuer's CA: `trusted` is `None` when it could not
/// be read, and `problem` says what is wrong, if anything.
#[derive(Debug, PartialEq, Eq)]
struct Seen {
    trusted: Option<bool>,
    problem: Option<String>,
}

/// Keeps the CRDs and APIServices `settings` names trusting `dir/ca.crt`, and `store` marked
/// injected while every object `settings` names trusts it, forever.
pub async fn trust_ca_file(
    client: kube::Client,
    settings: TlsSettings,
    dir: PathBuf,
    store: CertStore,
    clock: Clock,
) -> Infallible {
    let cluster = Cluster::new(client, &settings);
    let managed = Managed::all(&settings);
    let path = dir.join(CA_CRT);
    let mut last_problem: Option<String> = None;
    loop {
        let seen = match read_cas(&path).await {
            Err(problem) => vec![Seen {
                trusted: Some(false),
                problem: Some(problem),
            }],
            Ok(cas) => {
                let mut seen = Vec::new();
                for object in &managed {
                    seen.push(look_at(&cluster, object, &settings, &cas, clock.utc()).await);
                }
                seen
            }
        };
        let trusted = judged(seen.iter().map(|s| s.trusted), store.is_injected());
        store.set_injected(trusted);
        let problem = seen.into_iter().find_map(|s| s.problem);
        // Said once per new problem: the file appears some time after the pod starts.
        if problem.is_some() && problem != last_problem {
            tracing::warn!(
                problem = problem.as_deref().unwrap_or_default(),
                "webhooks, CRD conversion and the visibility API cannot be trusted yet"
            );
        }
        let wait = if problem.is_some() || !trusted {
            RETRY
        } else {
            PERIOD
        };
        last_problem = problem;
        tokio::time::sleep(wait).await;
    }
}

async fn read_cas(path: &Path) -> Result<Vec<CertInfo>, String> {
    let bytes = tokio::fs::read(path)
        .await
        .map_err(|error| format!("{}: {error}", path.display()))?;
    match parse_bundle(&bytes) {
        Err(flaw) => Err(format!("{}: {flaw}", path.display())),
        Ok(cas) if cas.is_empty() => Err(format!("{}: no certificate", path.display())),
        Ok(cas) => Ok(cas),
    }
}

/// Reads a webhook configuration, whose bundle the issuer's injector writes; brings a CRD or
/// APIService to trust `cas`.
async fn look_at(
    cluster: &Cluster,
    object: &Managed,
    settings: &TlsSettings,
    cas: &[CertInfo],
    now: OffsetDateTime,
) -> Seen {
    let target = object.target();
    if target == Target::Webhooks {
        return match cluster.read(object).await {
            Ok(Some(read)) => webhooks_seen(object, &read.data, cas),
            Ok(None) => Seen {
                trusted: Some(false),
                problem: Some(format!("{object} does not exist")),
            },
            Err(error) => Seen {
                trusted: None,
                problem: Some(format!("{object}: {error}")),
            },
        };
    }
    let trust: Vec<&CertInfo> = cas.iter().collect();
    match make_trust(cluster, object, settings, &trust, now).await {
        Ok(()) => Seen {
            trusted: Some(true),
            problem: None,
        },
        Err((error, seen)) => Seen {
            trusted: seen.map(|seen| trusts_one(&seen, target, cas)),
            problem: Some(format!("{object}: {error}")),
        },
    }
}

/// A webhook configuration as read: trusted once the injector has put one of `cas` in every
/// webhook's bundle.
fn webhooks_seen(object: &Managed, read: &Value, cas: &[CertInfo]) -> Seen {
    let trusted = trusts_one(read, Target::Webhooks, cas);
    Seen {
        trusted: Some(trusted),
        problem: (!trusted)
            .then(|| format!("{object}: the issuer's CA is not injected into its caBundle yet")),
    }
}

/// Whether every client config of `object` trusts one of `cas`.
fn trusts_one(object: &Value, target: Target, cas: &[CertInfo]) -> bool {
    cas.iter().any(|ca| trusts(object, target, ca))
}

/// Whether the presented certificate is trusted, from what each object said: not if one
/// distrusts it, yes if all trust it; as `was` when some could not be read (an API brownout
/// must not turn every replica NotReady at once).
fn judged(seen: impl Iterator<Item = Option<bool>>, was: bool) -> bool {
    let mut unknown = false;
    for trusted in seen {
        match trusted {
            Some(false) => return false,
            Some(true) => {}
            None => unknown = true,
        }
    }
    !unknown || was
}

#[cfg(test)]
mod tests;
