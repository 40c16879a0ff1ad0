//! Self-managed TLS for the webhook server, as Kueue's internal cert management does it: every
//! replica keeps a CA and a serving certificate for the webhook Service in a Secret, keeps the CA
//! in the `caBundle` of the webhook configurations (and of CRD conversion webhooks), and renews
//! both before they expire.
//!
//! - [`manage`] is the loop; [`TlsSettings`] says what it manages ([`TlsSettings::kueue`] builds
//!   them from Kueue's `internalCertManagement`).
//! - [`CertStore`] is what the webhook server presents ([`CertStore::resolver`]), swapped when the
//!   Secret changes, and its readiness ([`CertStore::is_ready`]): ready only once the API server
//!   trusts the presented certificate, so `/readyz` cannot pass while webhook calls would still
//!   fail (Kueue's Deployment can turn Ready tens of seconds before its webhooks answer).
//! - [`watch_dir`] presents a pair someone else manages (cert-manager), read from files, and
//!   [`trust_ca_file`] keeps the converted CRDs and the visibility APIServices trusting its CA.
//! - [`self_signed_store`] presents a certificate made in memory (the metrics server's, with
//!   internal cert management); [`serve_https`] serves a router over TLS with any of these.
//! - The decisions are pure: `decide` (reuse, renew or regenerate, from the Secret's contents,
//!   the time and the settings), `next_check`, and the CA bundle `merge`; `cluster` only reads
//!   and writes. It is the one writer of these objects besides `controllers::writer`: they hold
//!   no decision of the engine.
//!
//! The Secret holds `tls.crt`, `tls.key`, `ca.crt` (the current CA, then earlier ones still
//! trusted) and `ca.key`, so any replica can renew. A restart or another replica reuses valid
//! certificates; unusable contents are logged and replaced; concurrent writers are fenced by the
//! resource version and the loser adopts what the winner wrote. After a CA rotation the old CA
//! stays in `ca.crt` and in every bundle until no certificate it signed can still be valid.

mod bundle;
mod cluster;
mod connections;
mod decide;
mod error;
mod files;
mod files_trust;
mod front_proxy;
mod generate;
mod https;
mod in_memory;
mod manage;
mod material;
mod options;
mod settings;
mod store;
#[cfg(test)]
mod testing;

pub use error::TlsError;
pub use files::{FILE_CHECK_PERIOD, watch_dir};
pub use files_trust::trust_ca_file;
pub use front_proxy::{CONFIG_MAP_NAME, CONFIG_MAP_NAMESPACE, FrontProxy, FrontProxyError, Trust};
pub use https::{Draining, serve_https, serve_https_to, serve_https_until};
pub use in_memory::self_signed_store;
pub use manage::manage;
pub use options::{
    ServerTls, TlsOptions, TlsOptionsError, TlsVersion, go_cipher_suite, go_cipher_suite_names,
    is_go_curve,
};
pub use settings::{
    KUEUE_CONVERSION_CRDS, KUEUE_SECRET_NAME, KUEUE_SERVICE_NAME, Lifetimes, TlsSettings,
};
pub use store::CertStore;
