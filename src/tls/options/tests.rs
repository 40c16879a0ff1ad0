//! Handshakes in memory between a server set up from the options and a rustls client that
//! offers only what each case names.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{
    CipherSuite, ClientConfig, ClientConnection, DigitallySignedStruct, NamedGroup,
    ProtocolVersion, ServerConnection, SignatureScheme,
};

use super::*;

#[derive(Debug)]
struct OneCertificate(Arc<CertifiedKey>);

impl ResolvesServerCert for OneCertificate {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }
}

/// Trusts any certificate: these tests are about what is negotiated, not whom.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn verify_tls13_signature(
        &self,
        _: &[u8],
        _: &CertificateDer<'_>,
        _: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Ok(HandshakeSignatureValid::assertion())
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn certified_key() -> Arc<CertifiedKey> {
    let generated = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        generated.signing_key.serialize_der(),
    ));
    let signing = rustls::crypto::ring::sign::any_supported_type(&key).unwrap();
    Arc::new(CertifiedKey::new(
        vec![generated.cert.der().clone()],
        signing,
    ))
}

/// What a client offers.
struct Client {
    versions: &'static [&'static SupportedProtocolVersion],
    suites: Option<&'static [CipherSuite]>,
    groups: Option<&'static [NamedGroup]>,
}

const ANY: Client = Client {
    versions: rustls::ALL_VERSIONS,
    suites: None,
    groups: None,
};

/// What was negotiated, or why the handshake failed.
fn handshake(
    server: &ServerTls,
    client: &Client,
) -> Result<(ProtocolVersion, CipherSuite, NamedGroup), String> {
    let mut provider = rustls::crypto::ring::default_provider();
    if let Some(suites) = client.suites {
        provider
            .cipher_suites
            .retain(|s| suites.contains(&s.suite()));
    }
    if let Some(groups) = client.groups {
        provider.kx_groups.retain(|g| groups.contains(&g.name()));
    }
    let provider = Arc::new(provider);
    let client_config = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(client.versions)
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth();
    let server_config = server
        .server_config(Arc::new(OneCertificate(certified_key())), None)
        .unwrap();
    let mut server_side = ServerConnection::new(Arc::new(server_config)).unwrap();
    let mut client_side = ClientConnection::new(
        Arc::new(client_config),
        ServerName::try_from("localhost").unwrap(),
    )
    .unwrap();
    for _ in 0..20 {
        if !client_side.is_handshaking() && !server_side.is_handshaking() {
            break;
        }
        let mut bytes = Vec::new();
        client_side.write_tls(&mut bytes).unwrap();
        server_side.read_tls(&mut bytes.as_slice()).unwrap();
        server_side
            .process_new_packets()
            .map_err(|e| e.to_string())?;
        let mut bytes = Vec::new();
        server_side.write_tls(&mut bytes).unwrap();
        client_side.read_tls(&mut bytes.as_slice()).unwrap();
        client_side
            .process_new_packets()
            .map_err(|e| e.to_string())?;
    }
    Ok((
        server_side.protocol_version().ok_or("no version")?,
        server_side
            .negotiated_cipher_suite()
            .ok_or("no suite")?
            .suite(),
        server_side
            .negotiated_key_exchange_group()
            .ok_or("no group")?
            .name(),
    ))
}

fn options(min_version: TlsVersion, suites: &[&str], curves: &[u16]) -> TlsOptions {
    TlsOptions {
        min_version,
        cipher_suites: suites.iter().map(|s| s.to_string()).collect(),
        curve_preferences: curves.to_vec(),
    }
}

static TLS12: &[&SupportedProtocolVersion] = &[&rustls::version::TLS12];

#[test]
fn the_defaults_serve_tls_1_2_and_1_3() {
    let server = ServerTls::default();
    assert_eq!(
        handshake(&server, &ANY).unwrap().0,
        ProtocolVersion::TLSv1_3
    );
    let old = Client {
        versions: TLS12,
        ..ANY
    };
    assert_eq!(
        handshake(&server, &old).unwrap().0,
        ProtocolVersion::TLSv1_2
    );
}

#[test]
fn min_version_tls13_turns_tls_1_2_clients_away() {
    let server = ServerTls::new(&options(TlsVersion::Tls13, &[], &[])).unwrap();
    assert_eq!(
        handshake(&server, &ANY).unwrap().0,
        ProtocolVersion::TLSv1_3
    );
    let old = Client {
        versions: TLS12,
        ..ANY
    };
    assert!(handshake(&server, &old).is_err());
}

#[test]
fn only_the_listed_tls12_suites_are_offered_and_every_tls13_suite_stays() {
    let server = ServerTls::new(&options(
        TlsVersion::Tls12,
        &[
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            // Go's name of a suite rustls does not serve: left out, not fatal.
            "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
        ],
        &[],
    ))
    .unwrap();
    let listed = Client {
        versions: TLS12,
        suites: Some(&[CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]),
        groups: None,
    };
    assert_eq!(
        handshake(&server, &listed).unwrap().1,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384
    );
    let unlisted = Client {
        versions: TLS12,
        suites: Some(&[CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]),
        groups: None,
    };
    assert!(handshake(&server, &unlisted).is_err());
    let tls13 = Client {
        suites: Some(&[CipherSuite::TLS13_CHACHA20_POLY1305_SHA256]),
        ..ANY
    };
    assert_eq!(
        handshake(&server, &tls13).unwrap().1,
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256
    );
}

#[test]
fn the_legacy_chacha_names_select_the_same_suites() {
    let server = ServerTls::new(&options(
        TlsVersion::Tls12,
        &["TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305"],
        &[],
    ))
    .unwrap();
    let client = Client {
        versions: TLS12,
        ..ANY
    };
    assert_eq!(
        handshake(&server, &client).unwrap().1,
        CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256
    );
}

#[test]
fn only_the_listed_groups_are_offered() {
    let server = ServerTls::new(&options(TlsVersion::Tls12, &[], &[24, 25])).unwrap();
    let p384 = Client {
        groups: Some(&[NamedGroup::secp384r1]),
        ..ANY
    };
    assert_eq!(handshake(&server, &p384).unwrap().2, NamedGroup::secp384r1);
    let x25519 = Client {
        groups: Some(&[NamedGroup::X25519]),
        ..ANY
    };
    assert!(handshake(&server, &x25519).is_err());
}

#[test]
fn lists_of_which_nothing_can_be_served_are_refused() {
    let cbc_only = ServerTls::new(&options(
        TlsVersion::Tls12,
        &["TLS_RSA_WITH_AES_128_CBC_SHA", "TLS_AES_128_GCM_SHA256"],
        &[],
    ));
    let error = cbc_only.unwrap_err();
    assert!(matches!(error, TlsOptionsError::NoCipherSuite { .. }));
    assert!(error.to_string().contains("TLS_RSA_WITH_AES_128_CBC_SHA"));
    assert!(
        error
            .to_string()
            .contains("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")
    );
    let p521_only = ServerTls::new(&options(TlsVersion::Tls12, &[], &[25, 4588]));
    assert_eq!(
        p521_only.unwrap_err(),
        TlsOptionsError::NoCurve {
            listed: vec![25, 4588],
            served: vec![29, 23, 24],
        }
    );
}

#[test]
fn go_names_and_groups_are_known_as_go_knows_them() {
    assert_eq!(
        go_cipher_suite("TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA"),
        Some(0xc012)
    );
    assert_eq!(go_cipher_suite("TLS_FAKE"), None);
    assert!(go_cipher_suite_names().contains(&"TLS_AES_256_GCM_SHA384"));
    assert!(is_go_curve(29) && is_go_curve(4588) && !is_go_curve(30));
}
