use rustls::crypto::ring::default_provider;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, ServerConfig, ServerConnection};

use super::*;
use crate::tls::material::{CertInfo, Material};
use crate::tls::testing::{issued, t0};
use crate::tls::{Lifetimes, TlsSettings};

/// Handshakes check validity against the real clock, so these certificates live long.
fn settings() -> TlsSettings {
    let mut settings = crate::tls::testing::settings();
    settings.lifetimes = Lifetimes::default();
    settings
}

fn now() -> time::OffsetDateTime {
    time::OffsetDateTime::now_utc()
}

fn server_config(store: &CertStore) -> Arc<ServerConfig> {
    let config = ServerConfig::builder_with_provider(Arc::new(default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_cert_resolver(store.resolver());
    Arc::new(config)
}

/// A TLS handshake in memory with a client that trusts `root`; returns the certificate the
/// server presented.
fn handshake(
    server: &Arc<ServerConfig>,
    root: &CertInfo,
    name: &str,
) -> Result<CertificateDer<'static>, rustls::Error> {
    let mut roots = RootCertStore::empty();
    roots.add(root.der.clone()).unwrap();
    let client_config = ClientConfig::builder_with_provider(Arc::new(default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = ServerName::try_from(name.to_string()).unwrap();
    let mut client = ClientConnection::new(Arc::new(client_config), name)?;
    let mut server = ServerConnection::new(server.clone())?;
    for _ in 0..10 {
        if !client.is_handshaking() && !server.is_handshaking() {
            break;
        }
        let mut wire = Vec::new();
        client.write_tls(&mut wire).unwrap();
        server.read_tls(&mut wire.as_slice()).unwrap();
        server.process_new_packets()?;
        let mut wire = Vec::new();
        server.write_tls(&mut wire).unwrap();
        client.read_tls(&mut wire.as_slice()).unwrap();
        client.process_new_packets()?;
    }
    let presented = client.peer_certificates().and_then(|chain| chain.first());
    Ok(presented.unwrap().clone().into_owned())
}

fn leaf(material: &Material) -> CertificateDer<'static> {
    material.serving.leaf.der.clone()
}

#[test]
fn ready_only_with_a_certificate_the_api_server_trusts() {
    let store = CertStore::new();
    assert!(!store.is_ready());
    store.set_trusted(true);
    assert!(!store.is_ready(), "trusted, but nothing to present");
    store.set_trusted(false);
    store.install(issued(t0(), &settings()).serving.key);
    assert!(!store.is_ready(), "presented, but not trusted yet");
    store.set_trusted(true);
    assert!(store.is_ready());
    store.set_trusted(false);
    assert!(!store.is_ready());
}

/// With cert-manager's files, a pair read and trusted by what kuota keeps is not enough to serve:
/// the webhook configurations' bundles, which its injector writes, must hold the CA too.
#[test]
fn serving_waits_for_injected_bundles_only_when_they_are_awaited() {
    let store = CertStore::new();
    store.install(issued(t0(), &settings()).serving.key);
    store.set_trusted(true);
    assert!(
        store.serves_trusted(),
        "internal management: nothing else is awaited"
    );

    store.await_injection();
    assert!(store.is_ready(), "the watches may start");
    assert!(
        !store.serves_trusted(),
        "the injector has not written the bundles yet"
    );
    store.set_injected(true);
    assert!(store.serves_trusted());
    store.set_injected(false);
    assert!(!store.serves_trusted());
    store.set_injected(true);
    store.set_trusted(false);
    assert!(!store.serves_trusted());
}

#[test]
fn no_certificate_means_no_handshake() {
    let store = CertStore::new();
    let material = issued(now(), &settings());
    let name = &settings().dns_names()[0];
    assert!(handshake(&server_config(&store), &material.ca, name).is_err());
}

#[test]
fn a_swap_is_presented_from_the_next_handshake_on() {
    let settings = settings();
    let name = &settings.dns_names()[0];
    let first = issued(now(), &settings);
    let second = issued(now(), &settings);
    let store = CertStore::new();
    let server = server_config(&store);
    assert!(store.install(first.serving.key.clone()));
    assert!(
        !store.install(first.serving.key.clone()),
        "the same certificate again"
    );
    assert_eq!(handshake(&server, &first.ca, name).unwrap(), leaf(&first));

    // A clone is the same store: the loop swaps, the server sees it.
    assert!(store.clone().install(second.serving.key.clone()));
    assert_eq!(handshake(&server, &second.ca, name).unwrap(), leaf(&second));
    assert!(matches!(
        handshake(&server, &first.ca, name),
        Err(rustls::Error::InvalidCertificate(_))
    ));
}
