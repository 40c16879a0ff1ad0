use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
};

use super::*;

struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn ca(name: &str) -> Ca {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::default();
    params.distinguished_name.push(DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).unwrap();
    Ca {
        pem: cert.pem(),
        issuer: Issuer::new(params, key),
    }
}

fn client(ca: &Ca, common_name: &str) -> CertificateDer<'static> {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::default();
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    params.signed_by(&key, &ca.issuer).unwrap().der().clone()
}

fn data(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn now() -> UnixTime {
    UnixTime::since_unix_epoch(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or(Duration::ZERO),
    )
}

fn accepts(proxy: &FrontProxy, cert: &CertificateDer<'_>) -> bool {
    proxy.verify_client_cert(cert, &[], now()).is_ok()
}

#[test]
fn only_the_allowed_names_signed_by_the_front_proxy_ca_get_in() {
    let front = ca("front-proxy-ca");
    let other = ca("another-ca");
    let proxy = FrontProxy::new(provider());
    let proxy_cert = client(&front, "front-proxy-client");
    assert!(
        !accepts(&proxy, &proxy_cert),
        "no one before a trust is read"
    );
    let trust = Trust::from_data(
        &data(&[
            (CA_KEY, &front.pem),
            (ALLOWED_NAMES_KEY, r#"["front-proxy-client"]"#),
        ]),
        proxy.provider(),
    )
    .unwrap();
    proxy.install(trust);
    assert!(accepts(&proxy, &proxy_cert));
    assert!(!accepts(&proxy, &client(&front, "someone-else")));
    assert!(!accepts(&proxy, &client(&other, "front-proxy-client")));
}

#[test]
fn an_empty_allowed_list_admits_any_name_the_ca_signed() {
    let front = ca("front-proxy-ca");
    let proxy = FrontProxy::new(provider());
    let trust = Trust::from_data(
        &data(&[(CA_KEY, &front.pem), (ALLOWED_NAMES_KEY, "[]")]),
        proxy.provider(),
    )
    .unwrap();
    proxy.install(trust);
    assert!(accepts(&proxy, &client(&front, "anyone")));
}

#[test]
fn a_config_map_without_a_usable_ca_is_named() {
    let p = provider();
    assert_eq!(
        Trust::from_data(&data(&[]), &p).err(),
        Some(FrontProxyError::NoCa)
    );
    assert!(matches!(
        Trust::from_data(&data(&[(CA_KEY, "not a certificate")]), &p),
        Err(FrontProxyError::BadCa(_))
    ));
    let front = ca("front-proxy-ca");
    assert!(matches!(
        Trust::from_data(
            &data(&[
                (CA_KEY, &front.pem),
                (ALLOWED_NAMES_KEY, "front-proxy-client")
            ]),
            &p
        ),
        Err(FrontProxyError::BadAllowedNames(_))
    ));
}
