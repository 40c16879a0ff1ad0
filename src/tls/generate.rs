//! New certificates, made in process: a self-signed CA and a serving certificate it signs, both
//! with ECDSA P-256 keys (Kueue's rotator uses RSA 2048; the API server accepts either, and ring
//! cannot generate RSA keys).

use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, PKCS_ECDSA_P256_SHA256, SanType,
};
use rustls::pki_types::CertificateDer;
use time::OffsetDateTime;

use super::error::TlsError;
use super::material::{CaKey, CertInfo};
use super::settings::{Lifetimes, TlsSettings, earlier, later};

/// The CA's organization; its common name adds the second it was made and a fingerprint of its
/// key, so that CAs in one bundle never share a name (a client picks the issuer by name).
const CA_ORGANIZATION: &str = "kuota";

/// A newly issued certificate with its private key (PKCS#8 PEM).
pub struct Issued {
    pub cert: CertInfo,
    pub key_pem: String,
}

fn failed(what: &'static str) -> impl FnOnce(rcgen::Error) -> TlsError {
    move |source| TlsError::Generate { what, source }
}

fn issued(
    what: &'static str,
    der: CertificateDer<'static>,
    key: &KeyPair,
) -> Result<Issued, TlsError> {
    let cert = CertInfo::from_der(der).map_err(|reason| TlsError::Unusable { what, reason })?;
    Ok(Issued {
        cert,
        key_pem: key.serialize_pem(),
    })
}

/// Whole seconds: certificates carry no fractions, and decisions compare what they carry.
fn second(now: OffsetDateTime) -> OffsetDateTime {
    now.replace_nanosecond(0).unwrap_or(now)
}

/// A self-signed CA valid from `now - backdate` for the CA lifetime, that may sign only
/// end-entity certificates.
pub fn new_ca(now: OffsetDateTime, lifetimes: &Lifetimes) -> Result<(Issued, CaKey), TlsError> {
    const WHAT: &str = "the CA";
    let now = second(now);
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).map_err(failed(WHAT))?;
    let mut params = CertificateParams::default();
    let fingerprint = sha1_smol::Sha1::from(key.public_key_raw())
        .digest()
        .to_string();
    let short = fingerprint.get(..8).unwrap_or(&fingerprint);
    params.distinguished_name.push(
        DnType::CommonName,
        format!("{CA_ORGANIZATION}-ca@{}-{short}", now.unix_timestamp()),
    );
    params
        .distinguished_name
        .push(DnType::OrganizationName, CA_ORGANIZATION);
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    params.not_before = earlier(now, lifetimes.backdate);
    params.not_after = later(now, lifetimes.ca);
    let cert = params.self_signed(&key).map_err(failed(WHAT))?;
    let issued = issued(WHAT, cert.der().clone(), &key)?;
    let ca_key = CaKey {
        pem: issued.key_pem.clone().into_bytes(),
        pair: Arc::new(key),
    };
    Ok((issued, ca_key))
}

/// A serving certificate for the settings' DNS names and IP addresses, signed by `ca`, valid from
/// `now - backdate` for the serving lifetime but never past the CA.
pub fn new_serving(
    ca: &CertInfo,
    ca_key: &CaKey,
    settings: &TlsSettings,
    now: OffsetDateTime,
) -> Result<Issued, TlsError> {
    const WHAT: &str = "the serving certificate";
    let now = second(now);
    let issuer = Issuer::from_ca_cert_der(&ca.der, ca_key.pair.as_ref()).map_err(failed(WHAT))?;
    let names = settings.dns_names();
    let mut params = CertificateParams::new(names.clone()).map_err(failed(WHAT))?;
    params
        .subject_alt_names
        .extend(settings.extra_ips.iter().copied().map(SanType::IpAddress));
    if let Some(first) = names.first() {
        params
            .distinguished_name
            .push(DnType::CommonName, first.as_str());
    }
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.use_authority_key_identifier_extension = true;
    params.not_before = earlier(now, settings.lifetimes.backdate);
    params.not_after = later(now, settings.lifetimes.serving).min(ca.not_after);
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).map_err(failed(WHAT))?;
    let cert = params.signed_by(&key, &issuer).map_err(failed(WHAT))?;
    issued(WHAT, cert.der().clone(), &key)
}

/// A self-signed serving certificate for `names` (DNS names, or IP addresses written as such),
/// valid from an hour before `now` for `lifetime`.
pub fn self_signed_serving(
    names: &[&str],
    now: OffsetDateTime,
    lifetime: time::Duration,
) -> Result<Issued, TlsError> {
    const WHAT: &str = "the self-signed certificate";
    let now = second(now);
    let mut params = CertificateParams::default();
    for name in names {
        let san = match name.parse::<std::net::IpAddr>() {
            Ok(ip) => SanType::IpAddress(ip),
            Err(_) => SanType::DnsName((*name).try_into().map_err(failed(WHAT))?),
        };
        params.subject_alt_names.push(san);
    }
    if let Some(first) = names.first() {
        params.distinguished_name.push(DnType::CommonName, *first);
    }
    params
        .distinguished_name
        .push(DnType::OrganizationName, CA_ORGANIZATION);
    params.is_ca = IsCa::ExplicitNoCa;
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.not_before = now - time::Duration::HOUR;
    params.not_after = now + lifetime;
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).map_err(failed(WHAT))?;
    let cert = params.self_signed(&key).map_err(failed(WHAT))?;
    issued(WHAT, cert.der().clone(), &key)
}

#[cfg(test)]
mod tests;
