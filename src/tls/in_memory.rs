//! A certificate made in memory at startup for a server no client is told to trust: how
//! controller-runtime serves Kueue's metrics when internal cert management is on (scrapers skip
//! verification, as Kueue's ServiceMonitor does with `insecureSkipVerify`).

use time::OffsetDateTime;

use super::error::TlsError;
use super::generate::self_signed_serving;
use super::material::load_serving;
use super::store::CertStore;

/// controller-runtime's names for such a certificate.
const NAMES: [&str; 2] = ["localhost", "127.0.0.1"];
/// Longer than any process is expected to live; a restart makes a new one.
const LIFETIME: time::Duration = time::Duration::days(365);

/// A store presenting a new self-signed certificate for `localhost` and `127.0.0.1`.
pub fn self_signed_store(now: OffsetDateTime) -> Result<CertStore, TlsError> {
    const WHAT: &str = "the self-signed certificate";
    let issued = self_signed_serving(&NAMES, now, LIFETIME)?;
    let serving =
        load_serving(issued.cert.pem().as_bytes(), issued.key_pem.as_bytes()).map_err(|flaw| {
            TlsError::Unusable {
                what: WHAT,
                reason: flaw.to_string(),
            }
        })?;
    let store = CertStore::new();
    store.install(serving.key);
    store.set_trusted(true);
    Ok(store)
}

#[cfg(test)]
mod tests;
