//! `/metrics` of the deployed controller, served as Kueue's manager serves it: HTTPS, and only to
//! a caller whose bearer token the API server accepts and whose user may `get /metrics` (the
//! chart's `<fullname>-metrics-reader` ClusterRole).

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleRef, Subject};
use kube::api::{DeleteParams, PostParams};
use kube::{Api, Client};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use super::release::Release;
use super::support::{TestNamespace, unique_name};

/// Trusts whatever certificate the server presents, as Kueue's ServiceMonitor does
/// (`insecureSkipVerify`): the controller's metrics certificate is self-signed.
#[derive(Debug)]
pub struct AnyCertificate(pub Arc<rustls::crypto::CryptoProvider>);

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
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `GET /metrics` over TLS with `token` as bearer token; the status code and the body.
async fn scrape(port: u16, token: Option<&str>) -> Result<(u16, String)> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth();
    let authorization = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let request = format!(
        "GET /metrics HTTP/1.1\r\nHost: localhost\r\n{authorization}Connection: close\r\n\r\n"
    );
    let text = tokio::task::spawn_blocking(move || -> Result<String> {
        use std::io::{Read, Write};
        let tcp = std::net::TcpStream::connect(("127.0.0.1", port))
            .with_context(|| format!("connect to the metrics port {port}"))?;
        tcp.set_read_timeout(Some(Duration::from_secs(15)))?;
        let connection =
            rustls::ClientConnection::new(Arc::new(config), ServerName::try_from("localhost")?)?;
        let mut tls = rustls::StreamOwned::new(connection, tcp);
        tls.write_all(request.as_bytes())
            .context("send the request over TLS")?;
        let mut response = Vec::new();
        // The server may close without a TLS close_notify once it has answered.
        if let Err(error) = tls.read_to_end(&mut response) {
            ensure!(!response.is_empty(), "reading the answer: {error}");
        }
        Ok(String::from_utf8_lossy(&response).into_owned())
    })
    .await??;
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .with_context(|| format!("not an HTTP answer: {text:?}"))?;
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default();
    Ok((code, body))
}

/// A token of a new ServiceAccount `name` in `namespace`.
async fn token_of(client: &Client, namespace: &str, name: &str) -> Result<String> {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let mut account = ServiceAccount::default();
    account.metadata.name = Some(name.to_string());
    accounts
        .create(&PostParams::default(), &account)
        .await
        .with_context(|| format!("create ServiceAccount {namespace}/{name}"))?;
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: Vec::new(),
            expiration_seconds: Some(600),
            ..TokenRequestSpec::default()
        },
        ..TokenRequest::default()
    };
    let issued = accounts
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .with_context(|| format!("request a token for {namespace}/{name}"))?;
    issued
        .status
        .map(|s| s.token)
        .context("the TokenRequest answered no token")
}

/// A token bound to the metrics-reader role reads the metrics; no token, a token that is not
/// one, and a ServiceAccount without the role are refused with controller-runtime's answers.
pub async fn served_to_metrics_readers_only(client: &Client, release: &Release) -> Result<()> {
    let port = release.metrics_port()?;
    let ns = TestNamespace::create(client, "deploy-metrics").await?;
    let reader = token_of(client, &ns.name, "scraper").await?;
    let stranger = token_of(client, &ns.name, "stranger").await?;
    let bindings: Api<ClusterRoleBinding> = Api::all(client.clone());
    let binding_name = unique_name("metrics-scraper");
    let binding = ClusterRoleBinding {
        metadata: kube::api::ObjectMeta {
            name: Some(binding_name.clone()),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: format!("{}-metrics-reader", release.fullname),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: "scraper".into(),
            namespace: Some(ns.name.clone()),
            ..Subject::default()
        }]),
    };
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .context("bind the scraper to the metrics-reader role")?;
    let outcome = async {
        let (code, body) = scrape(port, Some(&reader)).await?;
        ensure!(
            code == 200 && body.contains("kueue_"),
            "a metrics reader got {code}: {}\nkuota log:\n{}",
            body.chars().take(300).collect::<String>(),
            release.log_tail()
        );
        let (code, body) = scrape(port, None).await?;
        ensure!(
            code == 401 && body.trim() == "Unauthorized",
            "without a token: {code} {body:?}"
        );
        let (code, body) = scrape(port, Some("not-a-token")).await?;
        ensure!(
            code == 401 && body.trim() == "Unauthorized",
            "with a made-up token: {code} {body:?}"
        );
        let (code, body) = scrape(port, Some(&stranger)).await?;
        let user = format!("system:serviceaccount:{}:stranger", ns.name);
        ensure!(
            code == 403 && body.trim() == format!("Authorization denied for user {user}"),
            "without the metrics-reader role: {code} {body:?}"
        );
        Ok(())
    }
    .await;
    bindings
        .delete(&binding_name, &DeleteParams::default())
        .await
        .with_context(|| format!("delete ClusterRoleBinding {binding_name}"))?;
    ns.delete().await?;
    outcome
}
