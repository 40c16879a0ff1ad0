//! What to do with the Secret's certificates, as a pure function of what it holds, the time and
//! the settings: serve them as they are, renew the serving certificate with the stored CA, or
//! start over with a new CA. Carrying the verdict out is the only step that makes keys.

use std::collections::BTreeSet;
use std::time::Duration;

use rustls::RootCertStore;
use rustls::client::verify_server_cert_signed_by_trust_anchor;
use rustls::crypto::ring::default_provider;
use rustls::pki_types::UnixTime;
use rustls::server::ParsedCertificate;
use time::OffsetDateTime;

use super::error::TlsError;
use super::generate::{new_ca, new_serving};
use super::material::{
    CA_CRT, CA_KEY, CaKey, CertInfo, Flaw, Material, Parsed, SecretData, Serving, TLS_CRT, TLS_KEY,
    ca_bundle_pem, load_serving,
};
use super::settings::{TlsSettings, earlier, later};

/// The soonest a next look is scheduled, so a clock far off cannot spin the loop.
const MIN_WAIT: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub enum Verdict {
    /// Serve what is stored. Its `data` differs from the Secret only when earlier CAs that are no
    /// longer needed were dropped from `ca.crt`.
    Reuse(Material),
    /// Issue a new serving certificate with the stored CA.
    Renew {
        ca: CertInfo,
        ca_key: CaKey,
        previous: Vec<CertInfo>,
        why: Flaw,
    },
    /// Make a new CA and serving certificate, and keep trusting `previous`.
    Regenerate { previous: Vec<CertInfo>, why: Flaw },
}

/// The time left before `t`, zero once it has passed.
fn until(t: OffsetDateTime, now: OffsetDateTime) -> Duration {
    Duration::try_from(t - now).unwrap_or(Duration::ZERO)
}

pub fn decide(parsed: Parsed, now: OffsetDateTime, settings: &TlsSettings) -> Verdict {
    let lifetimes = &settings.lifetimes;
    let ca = match parsed.ca {
        Ok(ca) => ca,
        Err(why) => {
            let previous = still_valid(parsed.previous, None, now);
            return Verdict::Regenerate { previous, why };
        }
    };
    let ca_flaw = if ca.not_before > now {
        Some(Flaw::CaNotYetValid(ca.not_before))
    } else if until(ca.not_after, now) < lifetimes.ca_renew_before() {
        Some(Flaw::CaExpiring(ca.not_after))
    } else {
        None
    };
    if let Some(why) = ca_flaw {
        let previous = still_valid(parsed.previous, Some(ca), now);
        return Verdict::Regenerate { previous, why };
    }
    let serving =
        parsed
            .serving
            .and_then(|serving| match serving_flaw(&serving, &ca, settings, now) {
                Some(flaw) => Err(flaw),
                None => Ok(serving),
            });
    let previous = retained(parsed.previous, &ca, now, settings);
    match (serving, parsed.ca_key) {
        (Ok(serving), ca_key) => {
            let ca_crt = match parsed.ca_crt {
                Some(stored) if lists_exactly(&stored, &ca, &previous) => stored,
                _ => ca_bundle_pem(&ca, &previous),
            };
            // What is reused is written back as it was read, so reusing writes nothing.
            let mut data = parsed.stored;
            data.retain(|key, _| [CA_KEY, TLS_CRT, TLS_KEY].contains(&key.as_str()));
            data.insert(CA_CRT.into(), ca_crt);
            if let Ok(ca_key) = ca_key {
                data.insert(CA_KEY.into(), ca_key.pem);
            }
            Verdict::Reuse(Material {
                ca,
                previous,
                serving,
                data,
            })
        }
        (Err(why), Ok(ca_key)) => Verdict::Renew {
            ca,
            ca_key,
            previous,
            why,
        },
        (Err(serving), Err(ca_key)) => Verdict::Regenerate {
            previous: still_valid(previous, Some(ca), now),
            why: Flaw::CannotRenew {
                serving: Box::new(serving),
                ca_key: Box::new(ca_key),
            },
        },
    }
}

/// Whether a stored `ca.crt` is exactly `ca` then `previous`.
fn lists_exactly(bytes: &[u8], ca: &CertInfo, previous: &[CertInfo]) -> bool {
    let Ok(blocks) = pem::parse_many(bytes) else {
        return false;
    };
    let wanted = std::iter::once(ca).chain(previous).map(|c| c.der.as_ref());
    blocks.iter().map(pem::Pem::contents).eq(wanted)
}

/// What is wrong with a serving certificate signed (or not) by `ca`, if anything.
fn serving_flaw(
    serving: &Serving,
    ca: &CertInfo,
    settings: &TlsSettings,
    now: OffsetDateTime,
) -> Option<Flaw> {
    if let Err(reason) = verify_chain(serving, ca, now) {
        return Some(Flaw::Untrusted(reason));
    }
    let leaf = &serving.leaf;
    let names = settings.dns_names();
    if let Some(name) = names.iter().find(|n| !leaf.dns_names.contains(*n)) {
        return Some(Flaw::NameNotCovered(name.clone()));
    }
    if let Some(ip) = settings.extra_ips.iter().find(|ip| !leaf.ips.contains(ip)) {
        return Some(Flaw::NameNotCovered(ip.to_string()));
    }
    if until(leaf.not_after, now) < settings.lifetimes.serving_renew_before() {
        return Some(Flaw::ServingExpiring(leaf.not_after));
    }
    None
}

/// Checks `serving` chains to `ca` and is valid for server authentication at `now`, as a TLS
/// client holding `ca` would check it.
pub fn verify_chain(serving: &Serving, ca: &CertInfo, now: OffsetDateTime) -> Result<(), String> {
    let mut roots = RootCertStore::empty();
    roots.add(ca.der.clone()).map_err(|e| e.to_string())?;
    let chain = &serving.key.cert;
    let Some((leaf, intermediates)) = chain.split_first() else {
        return Err("tls.crt holds no certificate".into());
    };
    let leaf = ParsedCertificate::try_from(leaf).map_err(|e| e.to_string())?;
    let seconds = u64::try_from(now.unix_timestamp()).unwrap_or(0);
    verify_server_cert_signed_by_trust_anchor(
        &leaf,
        &roots,
        intermediates,
        UnixTime::since_unix_epoch(Duration::from_secs(seconds)),
        default_provider().signature_verification_algorithms.all,
    )
    .map_err(|e| e.to_string())
}

/// When an earlier CA stops being trusted beside `ca`: once it has expired, or once a serving
/// certificate it signed just before `ca` was made has expired.
pub fn retired_at(previous: &CertInfo, ca: &CertInfo, settings: &TlsSettings) -> OffsetDateTime {
    let lifetimes = &settings.lifetimes;
    let made = later(ca.not_before, lifetimes.backdate);
    // A certificate is still valid during the second its `notAfter` names.
    let last_valid = previous.not_after.min(later(made, lifetimes.serving));
    later(last_valid, Duration::from_secs(1))
}

/// The earlier CAs still trusted beside `ca`, once each.
fn retained(
    previous: Vec<CertInfo>,
    ca: &CertInfo,
    now: OffsetDateTime,
    settings: &TlsSettings,
) -> Vec<CertInfo> {
    let mut seen = BTreeSet::from([ca.der.to_vec()]);
    previous
        .into_iter()
        .filter(|p| now < retired_at(p, ca, settings) && seen.insert(p.der.to_vec()))
        .collect()
}

/// The CAs to keep trusting when `current` is replaced: it and the earlier ones, while valid.
fn still_valid(
    previous: Vec<CertInfo>,
    current: Option<CertInfo>,
    now: OffsetDateTime,
) -> Vec<CertInfo> {
    let mut seen = BTreeSet::new();
    current
        .into_iter()
        .chain(previous)
        .filter(|c| c.is_valid_at(now) && seen.insert(c.der.to_vec()))
        .collect()
}

/// Issues what the verdict calls for. Returns the material to serve and store.
pub fn carry_out(
    verdict: Verdict,
    settings: &TlsSettings,
    now: OffsetDateTime,
) -> Result<Material, TlsError> {
    let (ca, ca_key, previous) = match verdict {
        Verdict::Reuse(material) => return Ok(material),
        Verdict::Renew {
            ca,
            ca_key,
            previous,
            ..
        } => (ca, ca_key, previous),
        Verdict::Regenerate { previous, .. } => {
            let (issued, ca_key) = new_ca(now, &settings.lifetimes)?;
            let ca = issued.cert;
            let previous = retained(previous, &ca, now, settings);
            (ca, ca_key, previous)
        }
    };
    let issued = new_serving(&ca, &ca_key, settings, now)?;
    let tls_crt = issued.cert.pem().into_bytes();
    let tls_key = issued.key_pem.into_bytes();
    let serving = load_serving(&tls_crt, &tls_key).map_err(|flaw| TlsError::Unusable {
        what: "the serving certificate",
        reason: flaw.to_string(),
    })?;
    let data = SecretData::from([
        (CA_CRT.to_string(), ca_bundle_pem(&ca, &previous)),
        (CA_KEY.to_string(), ca_key.pem),
        (TLS_CRT.to_string(), tls_crt),
        (TLS_KEY.to_string(), tls_key),
    ]);
    Ok(Material {
        ca,
        previous,
        serving,
        data,
    })
}

/// When to look again: at the next renewal or when an earlier CA stops being trusted, and at the
/// latest after the check interval.
pub fn next_check(
    material: &Material,
    now: OffsetDateTime,
    settings: &TlsSettings,
) -> OffsetDateTime {
    let lifetimes = &settings.lifetimes;
    let renewals = [
        earlier(
            material.serving.leaf.not_after,
            lifetimes.serving_renew_before(),
        ),
        earlier(material.ca.not_after, lifetimes.ca_renew_before()),
    ];
    let drops = material
        .previous
        .iter()
        .map(|p| retired_at(p, &material.ca, settings));
    renewals
        .into_iter()
        .chain(drops)
        .fold(later(now, lifetimes.check_interval), OffsetDateTime::min)
        .max(later(now, MIN_WAIT))
}

#[cfg(test)]
mod tests;
