//! The certificates kept in the webhook Secret. Reading is tolerant: whatever is missing or
//! unusable becomes a [`Flaw`] naming the key and the reason, never an error, because a Secret
//! holding garbage is repaired by issuing new certificates.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;
use std::sync::Arc;

use rcgen::{KeyPair, PublicKeyData};
use rustls::crypto::ring::default_provider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;
use time::OffsetDateTime;
use x509_parser::extensions::GeneralName;

/// The serving certificate (and any chain after it), PEM.
pub const TLS_CRT: &str = "tls.crt";
/// The serving certificate's private key, PEM.
pub const TLS_KEY: &str = "tls.key";
/// The CA that signs the serving certificate, then earlier CAs still trusted, PEM.
pub const CA_CRT: &str = "ca.crt";
/// The CA's private key, PEM: kept so that any replica can renew the serving certificate.
pub const CA_KEY: &str = "ca.key";

/// The values of a Secret, by key.
pub type SecretData = BTreeMap<String, Vec<u8>>;

/// What is wrong with the stored certificates, and so why new ones are issued.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Flaw {
    #[error("{0} is missing")]
    Missing(&'static str),
    #[error("{key} is unusable: {reason}")]
    Unusable { key: &'static str, reason: String },
    #[error("tls.crt does not verify against ca.crt now: {0}")]
    Untrusted(String),
    #[error("tls.crt is not valid for {0}")]
    NameNotCovered(String),
    #[error("tls.crt expires at {0}")]
    ServingExpiring(OffsetDateTime),
    #[error("the CA expires at {0}")]
    CaExpiring(OffsetDateTime),
    #[error("the CA is not valid until {0}")]
    CaNotYetValid(OffsetDateTime),
    #[error("{serving}, and ca.key cannot sign a new one: {ca_key}")]
    CannotRenew {
        serving: Box<Flaw>,
        ca_key: Box<Flaw>,
    },
}

/// One certificate, with what the decisions read from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertInfo {
    pub der: CertificateDer<'static>,
    pub not_before: OffsetDateTime,
    pub not_after: OffsetDateTime,
    pub is_ca: bool,
    pub dns_names: BTreeSet<String>,
    pub ips: BTreeSet<IpAddr>,
    /// The DER SubjectPublicKeyInfo.
    pub spki: Vec<u8>,
}

impl CertInfo {
    pub fn from_der(der: CertificateDer<'static>) -> Result<Self, String> {
        let (rest, cert) = x509_parser::parse_x509_certificate(&der).map_err(|e| e.to_string())?;
        if !rest.is_empty() {
            return Err("trailing bytes after the certificate".into());
        }
        let time = |t: x509_parser::time::ASN1Time| {
            OffsetDateTime::from_unix_timestamp(t.timestamp()).map_err(|e| e.to_string())
        };
        let (mut dns_names, mut ips) = (BTreeSet::new(), BTreeSet::new());
        if let Ok(Some(san)) = cert.subject_alternative_name() {
            for name in &san.value.general_names {
                match name {
                    GeneralName::DNSName(name) => {
                        dns_names.insert(name.to_string());
                    }
                    GeneralName::IPAddress(bytes) => {
                        if let Ok(v4) = <[u8; 4]>::try_from(*bytes) {
                            ips.insert(IpAddr::from(v4));
                        } else if let Ok(v6) = <[u8; 16]>::try_from(*bytes) {
                            ips.insert(IpAddr::from(v6));
                        }
                    }
                    _ => {}
                }
            }
        }
        Ok(CertInfo {
            not_before: time(cert.validity().not_before)?,
            not_after: time(cert.validity().not_after)?,
            is_ca: cert.is_ca(),
            dns_names,
            ips,
            spki: cert.public_key().raw.to_vec(),
            der: der.clone(),
        })
    }

    pub fn is_valid_at(&self, t: OffsetDateTime) -> bool {
        self.not_before <= t && t <= self.not_after
    }

    pub fn pem(&self) -> String {
        pem_encode("CERTIFICATE", &self.der)
    }
}

/// PEM with `\n` line ends, as Kubernetes tools write it.
pub(super) fn pem_encode(tag: &str, der: &[u8]) -> String {
    pem::encode_config(
        &pem::Pem::new(tag, der),
        pem::EncodeConfig::new().set_line_ending(pem::LineEnding::LF),
    )
}

/// Every certificate in a PEM bundle; `Err` if the bytes are not PEM or a block is not a
/// certificate.
pub fn parse_bundle(bytes: &[u8]) -> Result<Vec<CertInfo>, String> {
    let blocks = pem::parse_many(bytes).map_err(|e| e.to_string())?;
    blocks
        .into_iter()
        .map(|block| {
            if block.tag() != "CERTIFICATE" {
                return Err(format!(
                    "a {} block where a certificate belongs",
                    block.tag()
                ));
            }
            CertInfo::from_der(CertificateDer::from(block.into_contents()))
        })
        .collect()
}

/// The certificates of a PEM bundle, and whether every block in it was one.
pub fn read_bundle(bytes: &[u8]) -> (Vec<CertInfo>, bool) {
    let Ok(blocks) = pem::parse_many(bytes) else {
        return (Vec::new(), false);
    };
    let mut clean = true;
    let mut certs = Vec::new();
    for block in blocks {
        let cert = (block.tag() == "CERTIFICATE")
            .then(|| CertInfo::from_der(block.into_contents().into()).ok())
            .flatten();
        match cert {
            Some(cert) => certs.push(cert),
            None => clean = false,
        }
    }
    (certs, clean)
}

/// The serving certificate and its key, ready to hand to rustls.
#[derive(Clone, Debug)]
pub struct Serving {
    pub leaf: CertInfo,
    pub key: Arc<CertifiedKey>,
}

/// The Secret as read: each part usable or flawed.
pub struct Parsed {
    /// The first CA certificate of `ca.crt`.
    pub ca: Result<CertInfo, Flaw>,
    /// `ca.key`, once it is known to load and to match `ca`.
    pub ca_key: Result<CaKey, Flaw>,
    /// The other CA certificates of `ca.crt`.
    pub previous: Vec<CertInfo>,
    /// `ca.crt` as stored, if every block in it is a CA certificate.
    pub ca_crt: Option<Vec<u8>>,
    pub serving: Result<Serving, Flaw>,
    /// The Secret's values as read.
    pub stored: SecretData,
}

impl Parsed {
    pub fn from_data(data: &SecretData) -> Parsed {
        let value = |key: &'static str| match data.get(key) {
            Some(bytes) if !bytes.is_empty() => Ok(bytes.as_slice()),
            _ => Err(Flaw::Missing(key)),
        };
        let unusable = |key| move |reason: String| Flaw::Unusable { key, reason };
        // Blocks that are not CA certificates are dropped (and `ca.crt` rewritten without them);
        // the first CA is the current one.
        let (ca, previous, ca_crt) = match value(CA_CRT).map(read_bundle) {
            Err(flaw) => (Err(flaw), Vec::new(), None),
            Ok((certs, clean)) => {
                let clean = clean && certs.iter().all(|c| c.is_ca);
                let mut cas = certs.into_iter().filter(|c| c.is_ca);
                match cas.next() {
                    Some(first) => (
                        Ok(first),
                        cas.collect(),
                        clean.then(|| data.get(CA_CRT).cloned()).flatten(),
                    ),
                    None => (
                        Err(unusable(CA_CRT)("it holds no CA certificate".into())),
                        Vec::new(),
                        None,
                    ),
                }
            }
        };
        let ca_key = match (&ca, value(CA_KEY)) {
            (_, Err(flaw)) => Err(flaw),
            (Err(_), Ok(_)) => Err(unusable(CA_KEY)("ca.crt is unusable".into())),
            (Ok(ca), Ok(bytes)) => CaKey::load(bytes, ca).map_err(unusable(CA_KEY)),
        };
        let serving = value(TLS_CRT).and_then(|crt| {
            let key = value(TLS_KEY)?;
            load_serving(crt, key)
        });
        Parsed {
            ca,
            ca_key,
            previous,
            ca_crt,
            serving,
            stored: data.clone(),
        }
    }
}

/// A CA's private key that can sign.
#[derive(Clone)]
pub struct CaKey {
    /// As stored in the Secret.
    pub pem: Vec<u8>,
    pub pair: Arc<KeyPair>,
}

impl std::fmt::Debug for CaKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CaKey { .. }")
    }
}

impl CaKey {
    /// Loads a CA key the way it will sign, and checks it belongs to `ca`. A key this build
    /// cannot sign with (an RSA key in PKCS#1 form, as Kueue's rotator writes) is unusable for
    /// signing, though the certificates it signed may still be served and trusted.
    pub fn load(bytes: &[u8], ca: &CertInfo) -> Result<CaKey, String> {
        let text = std::str::from_utf8(bytes).map_err(|_| "it is not PEM text".to_string())?;
        let pair = KeyPair::from_pem(text)
            .map_err(|e| format!("{e} (PKCS#8 ECDSA, Ed25519 or RSA keys can sign)"))?;
        if pair.subject_public_key_info() != ca.spki {
            return Err("it does not match ca.crt".into());
        }
        Ok(CaKey {
            pem: bytes.to_vec(),
            pair: Arc::new(pair),
        })
    }
}

pub(super) fn load_serving(crt: &[u8], key: &[u8]) -> Result<Serving, Flaw> {
    let chain = parse_bundle(crt).map_err(|reason| Flaw::Unusable {
        key: TLS_CRT,
        reason,
    })?;
    let Some(leaf) = chain.first().cloned() else {
        return Err(Flaw::Missing(TLS_CRT));
    };
    let unusable_key = |reason: String| Flaw::Unusable {
        key: TLS_KEY,
        reason,
    };
    let private = PrivateKeyDer::from_pem_slice(key).map_err(|e| unusable_key(e.to_string()))?;
    let ders = chain.into_iter().map(|c| c.der).collect();
    let certified = CertifiedKey::from_der(ders, private, &default_provider())
        .map_err(|e| unusable_key(e.to_string()))?;
    Ok(Serving {
        leaf,
        key: Arc::new(certified),
    })
}

/// Certificates that serve: what the Secret holds once the decisions are carried out.
#[derive(Clone)]
pub struct Material {
    /// The CA that signed `serving`.
    pub ca: CertInfo,
    /// Earlier CAs still trusted, because a replica may still serve a certificate they signed.
    pub previous: Vec<CertInfo>,
    pub serving: Serving,
    /// The Secret's values for [`TLS_CRT`], [`TLS_KEY`], [`CA_CRT`] and [`CA_KEY`].
    pub data: SecretData,
}

impl std::fmt::Debug for Material {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The values hold private keys: only their names are shown.
        f.debug_struct("Material")
            .field("ca", &self.ca)
            .field("previous", &self.previous)
            .field("serving", &self.serving.leaf)
            .field("data", &self.data.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Material {
    /// The CAs every webhook configuration must trust, newest first.
    pub fn trust(&self) -> Vec<&CertInfo> {
        std::iter::once(&self.ca).chain(&self.previous).collect()
    }

    /// Whether `stored` already holds exactly this material (other keys are left alone).
    pub fn is_stored_in(&self, stored: &SecretData) -> bool {
        self.data.iter().all(|(k, v)| stored.get(k) == Some(v))
    }
}

/// `ca.crt` for a CA and the earlier CAs kept beside it.
pub(super) fn ca_bundle_pem(ca: &CertInfo, previous: &[CertInfo]) -> Vec<u8> {
    std::iter::once(ca)
        .chain(previous)
        .map(CertInfo::pem)
        .collect::<String>()
        .into_bytes()
}
