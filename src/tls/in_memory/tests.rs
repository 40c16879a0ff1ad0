use x509_parser::prelude::{FromDer, GeneralName, X509Certificate};

use super::*;

#[test]
fn the_store_presents_a_certificate_for_localhost_and_the_loopback_address() {
    let store = self_signed_store(OffsetDateTime::now_utc()).expect("a certificate");
    assert!(store.is_ready());
    let key = store.current().expect("presented");
    let (_, cert) = X509Certificate::from_der(key.cert[0].as_ref()).expect("DER");
    let names: Vec<String> = cert
        .subject_alternative_name()
        .expect("well-formed")
        .expect("has SANs")
        .value
        .general_names
        .iter()
        .map(|n| match n {
            GeneralName::DNSName(d) => d.to_string(),
            GeneralName::IPAddress(ip) => format!("{ip:?}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(names, ["localhost", "[127, 0, 0, 1]"]);
    assert!(cert.validity().is_valid());
}
