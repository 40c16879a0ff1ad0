//! The TLS the webhook and metrics servers offer, as Kueue's `tls` block sets it for both
//! (`minVersion`, `cipherSuites`, `curvePreferences`, applied by Kueue to every server of its
//! manager). The block names suites and groups as Go's `crypto/tls` does; this module knows
//! those names, which of them rustls serves, and builds the server configuration from them.
//!
//! Go applies `cipherSuites` to TLS 1.2 only (TLS 1.3 suites are not configurable there), so a
//! TLS 1.3 handshake offers every TLS 1.3 suite whatever the list says; kuota does the same. A
//! listed suite or group that Go knows but rustls cannot serve (CBC, RSA key exchange, P-521,
//! the ML-KEM hybrids) is not offered, and is logged; a list of which nothing can be served is
//! refused, since serving something the admin did not list is not what they asked for.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::server::ResolvesServerCert;
use rustls::server::danger::ClientCertVerifier;
use rustls::{ServerConfig, SupportedProtocolVersion};
use thiserror::Error;

/// The lowest TLS version the servers accept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TlsVersion {
    #[default]
    Tls12,
    Tls13,
}

impl TlsVersion {
    /// Go's spelling (`VersionTLS12`).
    pub fn go_name(self) -> &'static str {
        match self {
            TlsVersion::Tls12 => "VersionTLS12",
            TlsVersion::Tls13 => "VersionTLS13",
        }
    }
}

/// What the admin asked the servers to offer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsOptions {
    pub min_version: TlsVersion,
    /// Go's suite names (see [`go_cipher_suite`]); empty offers every suite rustls serves.
    pub cipher_suites: Vec<String>,
    /// TLS named-group IDs (Go's `CurveID`) in order of preference; empty offers rustls' groups.
    pub curve_preferences: Vec<u16>,
}

/// Why the options cannot be served.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum TlsOptionsError {
    #[error(
        "tls.cipherSuites: none of {listed:?} can be served over TLS 1.2; the suites kuota \
         serves are {served:?}"
    )]
    NoCipherSuite {
        listed: Vec<String>,
        served: Vec<&'static str>,
    },
    #[error(
        "tls.curvePreferences: none of {listed:?} can be served; the groups kuota serves are \
         {served:?} (X25519, P-256, P-384)"
    )]
    NoCurve { listed: Vec<u16>, served: Vec<u16> },
}

/// Every cipher suite name Go's `crypto/tls` accepts (its secure and insecure lists and the two
/// legacy ChaCha20 names Kubernetes keeps), with its IANA number.
const GO_CIPHER_SUITES: &[(&str, u16)] = &[
    ("TLS_AES_128_GCM_SHA256", 0x1301),
    ("TLS_AES_256_GCM_SHA384", 0x1302),
    ("TLS_CHACHA20_POLY1305_SHA256", 0x1303),
    ("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", 0xc009),
    ("TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", 0xc00a),
    ("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", 0xc013),
    ("TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", 0xc014),
    ("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", 0xc02b),
    ("TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", 0xc02c),
    ("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", 0xc02f),
    ("TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", 0xc030),
    ("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", 0xcca8),
    ("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", 0xcca9),
    ("TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", 0xcca8),
    ("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", 0xcca9),
    ("TLS_RSA_WITH_RC4_128_SHA", 0x0005),
    ("TLS_RSA_WITH_3DES_EDE_CBC_SHA", 0x000a),
    ("TLS_RSA_WITH_AES_128_CBC_SHA", 0x002f),
    ("TLS_RSA_WITH_AES_256_CBC_SHA", 0x0035),
    ("TLS_RSA_WITH_AES_128_CBC_SHA256", 0x003c),
    ("TLS_RSA_WITH_AES_128_GCM_SHA256", 0x009c),
    ("TLS_RSA_WITH_AES_256_GCM_SHA384", 0x009d),
    ("TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", 0xc007),
    ("TLS_ECDHE_RSA_WITH_RC4_128_SHA", 0xc011),
    ("TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", 0xc012),
    ("TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", 0xc023),
    ("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", 0xc027),
];

/// The named groups Go's `crypto/tls` knows (P-256, P-384, P-521, X25519, X25519MLKEM768).
const GO_CURVES: &[u16] = &[23, 24, 25, 29, 4588];

/// The IANA number of a suite Go knows by `name`.
pub fn go_cipher_suite(name: &str) -> Option<u16> {
    GO_CIPHER_SUITES
        .iter()
        .find(|(known, _)| *known == name)
        .map(|(_, id)| *id)
}

/// Every suite name Go accepts, sorted (for messages).
pub fn go_cipher_suite_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = GO_CIPHER_SUITES.iter().map(|(name, _)| *name).collect();
    names.sort_unstable();
    names
}

/// Whether Go knows the named group `id`.
pub fn is_go_curve(id: u16) -> bool {
    GO_CURVES.contains(&id)
}

/// The rustls setup the options become; [`ServerTls::default`] is rustls' safe defaults, TLS
/// 1.2 and 1.3.
#[derive(Clone, Debug)]
pub struct ServerTls {
    provider: Arc<CryptoProvider>,
    versions: &'static [&'static SupportedProtocolVersion],
}

impl Default for ServerTls {
    fn default() -> Self {
        ServerTls {
            provider: Arc::new(rustls::crypto::ring::default_provider()),
            versions: rustls::DEFAULT_VERSIONS,
        }
    }
}

static TLS13_ONLY: &[&SupportedProtocolVersion] = &[&rustls::version::TLS13];

impl ServerTls {
    /// The setup for `options`; what is listed but cannot be served is logged.
    pub fn new(options: &TlsOptions) -> Result<Self, TlsOptionsError> {
        let mut provider = rustls::crypto::ring::default_provider();
        let versions = match options.min_version {
            TlsVersion::Tls12 => rustls::DEFAULT_VERSIONS,
            TlsVersion::Tls13 => TLS13_ONLY,
        };
        if !options.cipher_suites.is_empty() {
            provider.cipher_suites = cipher_suites(&provider, &options.cipher_suites)?;
        }
        if !options.curve_preferences.is_empty() {
            provider.kx_groups = kx_groups(&provider, &options.curve_preferences)?;
        }
        Ok(ServerTls {
            provider: Arc::new(provider),
            versions,
        })
    }

    /// A server configuration presenting what `certs` resolves, speaking HTTP/1.1; with
    /// `clients`, a client must present a certificate it accepts.
    pub fn server_config(
        &self,
        certs: Arc<dyn ResolvesServerCert>,
        clients: Option<Arc<dyn ClientCertVerifier>>,
    ) -> Result<ServerConfig, rustls::Error> {
        let builder = ServerConfig::builder_with_provider(self.provider.clone())
            .with_protocol_versions(self.versions)?;
        let mut config = match clients {
            Some(verifier) => builder.with_client_cert_verifier(verifier),
            None => builder.with_no_client_auth(),
        }
        .with_cert_resolver(certs);
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(config)
    }

    /// The cryptography the servers use, for verifiers that check signatures with it.
    pub fn provider(&self) -> &Arc<CryptoProvider> {
        &self.provider
    }
}

/// Every TLS 1.3 suite, then the listed TLS 1.2 suites rustls serves, in the listed order.
fn cipher_suites(
    provider: &CryptoProvider,
    listed: &[String],
) -> Result<Vec<rustls::SupportedCipherSuite>, TlsOptionsError> {
    let is_tls12 = |suite: &rustls::SupportedCipherSuite| suite.tls13().is_none();
    let mut chosen: Vec<_> = provider
        .cipher_suites
        .iter()
        .filter(|suite| !is_tls12(suite))
        .copied()
        .collect();
    let tls13 = chosen.len();
    for name in listed {
        let id = go_cipher_suite(name);
        let served = provider
            .cipher_suites
            .iter()
            .find(|suite| Some(u16::from(suite.suite())) == id);
        match served {
            Some(suite) if is_tls12(suite) => {
                if !chosen.contains(suite) {
                    chosen.push(*suite);
                }
            }
            // TLS 1.3 suites are always offered, as Go does.
            Some(_) => {}
            None => tracing::warn!(
                suite = %name,
                "tls.cipherSuites names a suite kuota cannot serve; it is not offered"
            ),
        }
    }
    if chosen.len() == tls13 {
        return Err(TlsOptionsError::NoCipherSuite {
            listed: listed.to_vec(),
            served: provider
                .cipher_suites
                .iter()
                .filter(|suite| is_tls12(suite))
                .filter_map(|suite| suite.suite().as_str())
                .collect(),
        });
    }
    Ok(chosen)
}

/// The listed groups rustls serves, in the listed order.
fn kx_groups(
    provider: &CryptoProvider,
    listed: &[u16],
) -> Result<Vec<&'static dyn rustls::crypto::SupportedKxGroup>, TlsOptionsError> {
    let mut chosen = Vec::new();
    for id in listed {
        match provider
            .kx_groups
            .iter()
            .find(|group| u16::from(group.name()) == *id)
        {
            Some(group) => chosen.push(*group),
            None => tracing::warn!(
                curve = id,
                "tls.curvePreferences names a group kuota cannot serve; it is not offered"
            ),
        }
    }
    if chosen.is_empty() {
        return Err(TlsOptionsError::NoCurve {
            listed: listed.to_vec(),
            served: provider
                .kx_groups
                .iter()
                .map(|group| u16::from(group.name()))
                .collect(),
        });
    }
    Ok(chosen)
}

#[cfg(test)]
mod tests;
