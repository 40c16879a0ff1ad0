use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use rustls::{CertificateError, Error};

use super::*;
use crate::tls::testing::{NAMESPACE, SERVICE, at, issued, settings, t0, verify_as_client};

#[test]
fn the_serving_certificate_names_the_service_in_cluster_and_the_extra_names() {
    let mut settings = settings();
    settings.extra_dns_names = vec!["localhost".into()];
    settings.extra_ips = vec![IpAddr::V4(Ipv4Addr::LOCALHOST)];
    let material = issued(t0(), &settings);
    let leaf = &material.serving.leaf;
    assert_eq!(
        leaf.dns_names,
        BTreeSet::from([
            format!("{SERVICE}.{NAMESPACE}.svc"),
            format!("{SERVICE}.{NAMESPACE}.svc.cluster.local"),
            "localhost".to_string(),
        ])
    );
    assert_eq!(leaf.ips, BTreeSet::from([IpAddr::V4(Ipv4Addr::LOCALHOST)]));
    assert!(!leaf.is_ca);
    assert!(material.ca.is_ca);
    assert!(material.ca.dns_names.is_empty());
}

#[test]
fn validity_starts_backdated_and_lasts_the_configured_lifetime() {
    let settings = settings();
    let material = issued(t0(), &settings);
    assert_eq!(material.ca.not_before, at(-1));
    assert_eq!(material.ca.not_after, at(40));
    assert_eq!(material.serving.leaf.not_before, at(-1));
    assert_eq!(material.serving.leaf.not_after, at(8));
}

#[test]
fn a_serving_certificate_never_outlives_its_ca() {
    let settings = settings();
    let (ca, ca_key) = new_ca(t0(), &settings.lifetimes).unwrap();
    let serving = new_serving(&ca.cert, &ca_key, &settings, at(35)).unwrap();
    assert_eq!(serving.cert.not_after, ca.cert.not_after);
}

#[test]
fn the_chain_verifies_as_a_tls_client_checks_it() {
    let mut settings = settings();
    settings.extra_ips = vec![IpAddr::V4(Ipv4Addr::LOCALHOST)];
    let material = issued(t0(), &settings);
    for name in settings
        .dns_names()
        .iter()
        .chain(&["127.0.0.1".to_string()])
    {
        verify_as_client(&material, &[&material.ca], name, at(1))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    assert!(matches!(
        verify_as_client(&material, &[&material.ca], "other.kueue-system.svc", at(1)),
        Err(Error::InvalidCertificate(
            CertificateError::NotValidForNameContext { .. }
        ))
    ));
    assert!(matches!(
        verify_as_client(&material, &[&material.ca], &settings.dns_names()[0], at(9)),
        Err(Error::InvalidCertificate(
            CertificateError::ExpiredContext { .. }
        ))
    ));
    let stranger = issued(t0(), &settings);
    assert!(matches!(
        verify_as_client(&material, &[&stranger.ca], &settings.dns_names()[0], at(1)),
        Err(Error::InvalidCertificate(CertificateError::UnknownIssuer))
    ));
}

#[test]
fn successive_cas_differ_in_key_and_name() {
    let lifetimes = settings().lifetimes;
    let (first, _) = new_ca(t0(), &lifetimes).unwrap();
    let (second, _) = new_ca(t0() + Duration::from_secs(1), &lifetimes).unwrap();
    assert_ne!(first.cert.spki, second.cert.spki);
    assert_ne!(first.cert.der, second.cert.der);
}
