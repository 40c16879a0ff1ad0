//! What the tests of this module share: settings with seconds-long lifetimes, a fixed clock, and
//! certificates issued the way the loop issues them.

use std::time::Duration;

use time::OffsetDateTime;

use super::decide::{Verdict, carry_out, decide};
use super::material::{Material, Parsed, SecretData};
use super::settings::{Lifetimes, TlsSettings};

pub const NAMESPACE: &str = "kueue-system";
pub const SERVICE: &str = "kueue-webhook-service";

/// CA 40s, serving 8s (renewed with 2s left, the CA with 10s left), backdated 1s.
pub fn settings() -> TlsSettings {
    let mut settings = TlsSettings::kueue(NAMESPACE, SERVICE, "kueue-webhook-server-cert");
    settings.lifetimes = Lifetimes {
        ca: Duration::from_secs(40),
        serving: Duration::from_secs(8),
        backdate: Duration::from_secs(1),
        check_interval: Duration::from_secs(30),
    };
    settings
}

pub fn t0() -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap()
}

pub fn at(seconds: i64) -> OffsetDateTime {
    t0() + time::Duration::seconds(seconds)
}

pub fn decide_data(data: &SecretData, now: OffsetDateTime, settings: &TlsSettings) -> Verdict {
    decide(Parsed::from_data(data), now, settings)
}

/// What the loop stores after reading `data` at `now`.
pub fn next_material(data: &SecretData, now: OffsetDateTime, settings: &TlsSettings) -> Material {
    carry_out(decide_data(data, now, settings), settings, now).unwrap()
}

/// Certificates issued into an empty Secret at `now`.
pub fn issued(now: OffsetDateTime, settings: &TlsSettings) -> Material {
    next_material(&SecretData::new(), now, settings)
}

/// Verifies `material`'s serving chain for `name` at `now` as a TLS client trusting `roots`
/// would (webpki, through rustls).
pub fn verify_as_client(
    material: &Material,
    roots: &[&super::material::CertInfo],
    name: &str,
    now: OffsetDateTime,
) -> Result<(), rustls::Error> {
    use std::sync::Arc;

    use rustls::client::WebPkiServerVerifier;
    use rustls::client::danger::ServerCertVerifier;
    use rustls::crypto::ring::default_provider;
    use rustls::pki_types::{ServerName, UnixTime};

    let mut store = rustls::RootCertStore::empty();
    for root in roots {
        store.add(root.der.clone()).unwrap();
    }
    let verifier =
        WebPkiServerVerifier::builder_with_provider(Arc::new(store), Arc::new(default_provider()))
            .build()
            .unwrap();
    let (leaf, rest) = material.serving.key.cert.split_first().unwrap();
    let name = ServerName::try_from(name.to_string()).unwrap();
    let seconds = u64::try_from(now.unix_timestamp()).unwrap();
    verifier
        .verify_server_cert(
            leaf,
            rest,
            &name,
            &[],
            UnixTime::since_unix_epoch(Duration::from_secs(seconds)),
        )
        .map(|_| ())
}
