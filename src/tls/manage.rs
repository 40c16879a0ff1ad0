//! The loop every replica runs: make sure the Secret holds usable certificates (issuing them if
//! not), make every managed object trust their CA, then present the serving certificate. It runs
//! again whenever one of those objects changes, when a renewal or an earlier CA's retirement is
//! due, and at least every check interval.

use std::convert::Infallible;
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use time::OffsetDateTime;

use super::bundle::{Target, inject, point_conversion_at, trusts};
use super::cluster::{Cluster, Kind, Managed, Written, secret_data};
use super::decide::{Verdict, carry_out, decide, next_check};
use super::error::TlsError;
use super::material::{CertInfo, Flaw, Material, Parsed};
use super::settings::TlsSettings;
use super::store::CertStore;
use crate::backoff::{Backoff, random_unit};
use crate::clock::Clock;

/// Reads and writes of one object before giving up for this round when it keeps changing.
const ATTEMPTS: usize = 5;
/// Waits after failed rounds: 1 s, doubling to a minute, plus up to a fifth at random, so the
/// replicas that failed together (the API server was away) do not all come back together.
const RETRY: Backoff = Backoff {
    first: Duration::from_secs(1),
    cap: Duration::from_secs(60),
    jitter: 0.2,
};
/// The least time between two rounds started by changes, so that someone rewriting a managed
/// object as fast as it is fixed (another rotator) cannot make this loop spin.
const MIN_GAP: Duration = Duration::from_secs(1);

/// Keeps the webhook server's certificate valid and trusted, forever: returns only when the
/// settings cannot work. A failure to reach or update the cluster is logged and tried again.
pub async fn manage(
    client: kube::Client,
    settings: TlsSettings,
    store: CertStore,
    clock: Clock,
) -> Result<Infallible, TlsError> {
    settings.validate()?;
    let cluster = Cluster::new(client, &settings);
    let managed = Managed::all(&settings);
    let mut changes = cluster.changes(&managed);
    let mut installed: Option<CertInfo> = None;
    let mut failures = 0;
    loop {
        let started = clock.instant();
        let looked = round(
            &cluster,
            &managed,
            &settings,
            &store,
            &mut installed,
            &clock,
        );
        let wait = match looked.await {
            Ok(next) => {
                failures = 0;
                Duration::try_from(next - clock.utc()).unwrap_or(RETRY.first)
            }
            Err(error) if error.is_fatal() => return Err(error),
            Err(error) => {
                failures += 1;
                let wait = RETRY.wait(failures, random_unit());
                tracing::warn!(%error, retry_in = ?wait, "webhook certificates are not ready");
                wait
            }
        };
        tokio::select! {
            Some(()) = changes.next() => {
                let since = clock.instant().saturating_duration_since(started);
                tokio::time::sleep(MIN_GAP.saturating_sub(since)).await;
                // One look covers every change that arrived meanwhile.
                while let Some(Some(())) = changes.next().now_or_never() {}
            }
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// One look at everything. Returns when to look again.
async fn round(
    cluster: &Cluster,
    managed: &[Managed],
    settings: &TlsSettings,
    store: &CertStore,
    installed: &mut Option<CertInfo>,
    clock: &Clock,
) -> Result<OffsetDateTime, TlsError> {
    let material = ensure_secret(cluster, settings, clock).await?;
    let now = clock.utc();
    let mut failed = None;
    let mut installed_trusted = true;
    let was_trusted = store.is_ready();
    for object in managed {
        let trust = material.trust();
        if let Err((error, seen)) = make_trust(cluster, object, settings, &trust, now).await {
            installed_trusted &= still_trusted(
                seen.as_ref(),
                object.target(),
                installed.as_ref(),
                was_trusted,
            );
            failed.get_or_insert(error);
        }
    }
    match failed {
        None => {
            if store.install(material.serving.key.clone()) {
                tracing::info!(
                    ca = ?material.ca.not_after,
                    expires = ?material.serving.leaf.not_after,
                    "serving the webhook certificate"
                );
            }
            *installed = Some(material.ca.clone());
            store.set_trusted(true);
            Ok(next_check(&material, clock.utc(), settings))
        }
        Some(error) => {
            // A certificate from the CA already in use is presented at once: trust in it is the
            // same. So is one when there is no other, so the server can start; readiness waits
            // for the trust.
            let same_ca = installed.as_ref().map(|ca| ca.der == material.ca.der);
            if same_ca != Some(false) {
                store.install(material.serving.key.clone());
                *installed = Some(material.ca.clone());
                installed_trusted &= same_ca.is_some();
            }
            store.set_trusted(installed_trusted);
            Err(error)
        }
    }
}

/// Whether the API server still trusts the presented certificate's CA through an object whose
/// bundle could not be brought up to date: as `seen` shows it when it was read; as known before
/// when it could not be read (an API brownout must not turn every replica NotReady at once).
fn still_trusted(
    seen: Option<&serde_json::Value>,
    target: Target,
    installed: Option<&CertInfo>,
    was_trusted: bool,
) -> bool {
    match (seen, installed) {
        (Some(object), Some(ca)) => trusts(object, target, ca),
        (None, Some(_)) => was_trusted,
        (_, None) => false,
    }
}

/// Reads the Secret and, unless it holds usable certificates, writes new ones. When another
/// replica writes first, what it wrote is read and adopted.
async fn ensure_secret(
    cluster: &Cluster,
    settings: &TlsSettings,
    clock: &Clock,
) -> Result<Material, TlsError> {
    let secret = cluster.secret_label();
    for _ in 0..ATTEMPTS {
        let read = cluster.read_secret().await?;
        if read.is_none() && !settings.create_secret {
            return Err(TlsError::Absent {
                object: secret,
                hint: " (it is created empty with the deployment; kuota may not create it)",
            });
        }
        let data = read.as_ref().map(secret_data).unwrap_or_default();
        let now = clock.utc();
        let verdict = decide(Parsed::from_data(&data), now, settings);
        log_verdict(&secret, &verdict);
        let material = carry_out(verdict, settings, now)?;
        if material.is_stored_in(&data) {
            return Ok(material);
        }
        match cluster.write_secret(read.as_ref(), &material.data).await? {
            Written::Done => {
                tracing::info!(%secret, "stored webhook certificates");
                return Ok(material);
            }
            Written::Conflict => {
                tracing::info!(%secret, "changed while being written (another replica?); reading it again");
            }
        }
    }
    Err(TlsError::Contended {
        object: secret,
        attempts: ATTEMPTS,
    })
}

fn log_verdict(secret: &str, verdict: &Verdict) {
    let (what, why) = match verdict {
        Verdict::Reuse(_) => return,
        Verdict::Renew { why, .. } => ("renewing the serving certificate", why),
        Verdict::Regenerate { why, .. } => ("making a new CA and serving certificate", why),
    };
    match why {
        Flaw::Missing(_) => tracing::info!(%secret, %why, "{what}"),
        Flaw::Unusable { .. } | Flaw::Untrusted(_) | Flaw::CaNotYetValid(_) => {
            tracing::warn!(%secret, %why, "{what}; the stored certificates are unusable")
        }
        Flaw::NameNotCovered(_)
        | Flaw::ServingExpiring(_)
        | Flaw::CaExpiring(_)
        | Flaw::CannotRenew { .. } => tracing::info!(%secret, %why, "{what}"),
    }
}

/// Brings one object's CA bundles to `trust` (the CAs, newest first), and a CRD's conversion
/// to the webhook Service. On failure, also returns the object as last read (what the API
/// server holds), if it was read.
pub(super) async fn make_trust(
    cluster: &Cluster,
    object: &Managed,
    settings: &TlsSettings,
    trust: &[&CertInfo],
    now: OffsetDateTime,
) -> Result<(), (TlsError, Option<serde_json::Value>)> {
    for _ in 0..ATTEMPTS {
        let mut read = match cluster.read(object).await {
            Ok(Some(read)) => read,
            // An absent CRD converts nothing and an absent APIService routes nothing; an absent
            // webhook configuration is a mistake in the names, and serving while it is fixed
            // would hide it.
            Ok(None) if matches!(object.kind, Kind::Crd | Kind::ApiService) => return Ok(()),
            Ok(None) => {
                let hint = " (is the webhook configuration named as the settings say?)";
                return Err((
                    TlsError::Absent {
                        object: object.to_string(),
                        hint,
                    },
                    None,
                ));
            }
            Err(error) => return Err((error, None)),
        };
        let seen = read.data.clone();
        let pointed = object.target() == Target::Conversion
            && point_conversion_at(&mut read.data, &settings.service_name, &settings.namespace);
        if !inject(&mut read.data, object.target(), trust, now) && !pointed {
            return Ok(());
        }
        match cluster.replace(object, &read).await {
            Ok(Written::Done) => {
                tracing::info!(%object, "injected the CA bundle");
                return Ok(());
            }
            Ok(Written::Conflict) => continue,
            Err(error) => return Err((error, Some(seen))),
        }
    }
    Err((
        TlsError::Contended {
            object: object.to_string(),
            attempts: ATTEMPTS,
        },
        None,
    ))
}

#[cfg(test)]
mod tests;
