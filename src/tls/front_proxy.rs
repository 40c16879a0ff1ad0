//! Who may call an aggregated API server: the API server's front proxy, as Kubernetes'
//! request-header authentication accepts it. The proxy presents a client certificate signed by
//! the CA in `kube-system/extension-apiserver-authentication` (key
//! `requestheader-client-ca-file`), whose common name is one of `requestheader-allowed-names`
//! (any, when that list is empty). The API server authenticated and authorized the user before
//! proxying, so a server that accepts only the proxy serves only calls the cluster's RBAC and
//! API priority and fairness let through.
//!
//! [`FrontProxy`] is a rustls client verifier whose trust is swapped in place when the
//! ConfigMap changes; until a trust is installed it accepts no one.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::WebPkiClientVerifier;
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, SignatureScheme};
use thiserror::Error;

use super::material::parse_bundle;

/// The ConfigMap's namespace and name.
pub const CONFIG_MAP_NAMESPACE: &str = "kube-system";
pub const CONFIG_MAP_NAME: &str = "extension-apiserver-authentication";
const CA_KEY: &str = "requestheader-client-ca-file";
const ALLOWED_NAMES_KEY: &str = "requestheader-allowed-names";

/// Why the ConfigMap gives no usable trust.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FrontProxyError {
    #[error(
        "ConfigMap {CONFIG_MAP_NAMESPACE}/{CONFIG_MAP_NAME} has no {CA_KEY}: the API server \
         runs without --requestheader-client-ca-file, so it cannot proxy to aggregated APIs"
    )]
    NoCa,
    #[error("ConfigMap {CONFIG_MAP_NAMESPACE}/{CONFIG_MAP_NAME}, {CA_KEY}: {0}")]
    BadCa(String),
    #[error("ConfigMap {CONFIG_MAP_NAMESPACE}/{CONFIG_MAP_NAME}, {ALLOWED_NAMES_KEY}: {0}")]
    BadAllowedNames(String),
}

/// One reading of the ConfigMap.
pub struct Trust {
    verifier: Arc<dyn ClientCertVerifier>,
    allowed_names: Vec<String>,
}

impl Trust {
    /// The trust the ConfigMap's `data` describes.
    pub fn from_data(
        data: &BTreeMap<String, String>,
        provider: &Arc<CryptoProvider>,
    ) -> Result<Trust, FrontProxyError> {
        let pem = data.get(CA_KEY).ok_or(FrontProxyError::NoCa)?;
        let cas = parse_bundle(pem.as_bytes()).map_err(FrontProxyError::BadCa)?;
        let mut roots = rustls::RootCertStore::empty();
        for ca in cas {
            roots
                .add(ca.der)
                .map_err(|e| FrontProxyError::BadCa(e.to_string()))?;
        }
        let verifier =
            WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|e| FrontProxyError::BadCa(e.to_string()))?;
        let allowed_names = match data.get(ALLOWED_NAMES_KEY).map(|s| s.trim()) {
            None | Some("") => Vec::new(),
            Some(json) => serde_json::from_str(json)
                .map_err(|e| FrontProxyError::BadAllowedNames(e.to_string()))?,
        };
        Ok(Trust {
            verifier,
            allowed_names,
        })
    }

    fn verify(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        self.verifier
            .verify_client_cert(end_entity, intermediates, now)?;
        if self.allowed_names.is_empty() {
            return Ok(ClientCertVerified::assertion());
        }
        let (_, cert) = x509_parser::parse_x509_certificate(end_entity)
            .map_err(|_| rustls::Error::InvalidCertificate(CertificateError::BadEncoding))?;
        let allowed = cert
            .subject()
            .iter_common_name()
            .filter_map(|cn| cn.as_str().ok())
            .any(|cn| self.allowed_names.iter().any(|name| name == cn));
        if allowed {
            Ok(ClientCertVerified::assertion())
        } else {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::ApplicationVerificationFailure,
            ))
        }
    }
}

/// The verifier the aggregated server's TLS uses.
#[derive(Debug)]
pub struct FrontProxy {
    trust: RwLock<Option<Arc<Trust>>>,
    provider: Arc<CryptoProvider>,
}

impl std::fmt::Debug for Trust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trust")
            .field("allowed_names", &self.allowed_names)
            .finish_non_exhaustive()
    }
}

impl FrontProxy {
    /// A verifier accepting no one until [`Self::install`].
    pub fn new(provider: Arc<CryptoProvider>) -> Self {
        FrontProxy {
            trust: RwLock::new(None),
            provider,
        }
    }

    pub fn provider(&self) -> &Arc<CryptoProvider> {
        &self.provider
    }

    /// Trusts `trust` from the next handshake on.
    pub fn install(&self, trust: Trust) {
        if let Ok(mut current) = self.trust.write() {
            *current = Some(Arc::new(trust));
        }
    }

    fn current(&self) -> Option<Arc<Trust>> {
        self.trust.read().ok().and_then(|t| t.clone())
    }
}

impl ClientCertVerifier for FrontProxy {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        match self.current() {
            Some(trust) => trust.verify(end_entity, intermediates, now),
            None => Err(rustls::Error::InvalidCertificate(
                CertificateError::UnknownIssuer,
            )),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests;
