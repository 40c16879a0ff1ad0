//! The webhook certificate kuota manages, rotated under a running release: a serving certificate
//! close to expiry is renewed from the same CA, a CA close to expiry is replaced, and after each
//! the API server keeps calling the webhooks.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use time::OffsetDateTime;
use tokio::time::{Instant, sleep};

use super::release::Release;

/// How long kuota may take to notice the Secret changed and rotate.
const ROTATED: Duration = Duration::from_secs(30);
const DAY: time::Duration = time::Duration::days(1);

fn secret_value(secret: &Secret, key: &str) -> Result<Vec<u8>> {
    secret
        .data
        .as_ref()
        .and_then(|data| data.get(key))
        .map(|value| value.0.clone())
        .with_context(|| format!("the webhook Secret has no {key}"))
}

fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>> {
    CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .context("parse PEM certificates")
}

/// The Service name the API server verifies the webhook certificate against.
fn service_name(release: &Release) -> String {
    format!(
        "{}-webhook-service.{}.svc",
        release.fullname, release.namespace
    )
}

/// A serving certificate for `release`'s webhook Service, signed by `issuer`, expiring in `days`.
fn serving(release: &Release, issuer: &Issuer<'_, KeyPair>, days: i64) -> Result<(String, String)> {
    let now = OffsetDateTime::now_utc();
    let name = service_name(release);
    let mut params = CertificateParams::new(vec![name.clone(), format!("{name}.cluster.local")])?;
    params.not_before = now - DAY;
    params.not_after = now + time::Duration::days(days);
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    let key = KeyPair::generate()?;
    let cert = params.signed_by(&key, issuer)?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// Connects to the webhook port as the API server would, trusting only `ca`: succeeds only if the
/// certificate presented now was signed by it. Returns that certificate.
async fn presented_by(
    release: &Release,
    ca: &CertificateDer<'static>,
) -> Result<CertificateDer<'static>> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.clone())?;
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_root_certificates(roots)
    .with_no_client_auth();
    let stream = tokio::net::TcpStream::connect(("127.0.0.1", release.webhook_port()?)).await?;
    let name = ServerName::try_from(service_name(release))?;
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, stream)
        .await
        .context("TLS handshake with the webhook server")?;
    tls.get_ref()
        .1
        .peer_certificates()
        .and_then(|chain| chain.first())
        .map(|leaf| leaf.clone().into_owned())
        .context("the webhook server presented no certificate")
}

/// Waits until the webhook port presents the first certificate of `tls_crt`, verified against
/// `ca` alone.
async fn until_presented(
    release: &Release,
    ca: &CertificateDer<'static>,
    tls_crt: &[u8],
) -> Result<()> {
    let expected = certificates(tls_crt)?
        .into_iter()
        .next()
        .context("tls.crt holds no certificate")?;
    let deadline = Instant::now() + ROTATED;
    loop {
        let outcome = match presented_by(release, ca).await {
            Ok(leaf) if leaf == expected => return Ok(()),
            Ok(_) => "it presents another certificate".to_string(),
            Err(error) => format!("{error:#}"),
        };
        if Instant::now() >= deadline {
            bail!(
                "the webhook server does not present the Secret's tls.crt: {outcome}\n\
                 kuota log:\n{}",
                release.log_tail()
            );
        }
        sleep(Duration::from_millis(200)).await;
    }
}

/// Waits until the Secret's value for `key` differs from `before`; returns the Secret.
async fn until_changed(
    secrets: &Api<Secret>,
    name: &str,
    key: &str,
    before: &[u8],
    release: &Release,
) -> Result<Secret> {
    let deadline = Instant::now() + ROTATED;
    loop {
        let secret = secrets.get(name).await?;
        if secret_value(&secret, key)? != before {
            return Ok(secret);
        }
        if Instant::now() >= deadline {
            bail!(
                "kuota did not replace {key} of Secret {name} within {ROTATED:?}\nkuota log:\n{}",
                release.log_tail()
            );
        }
        sleep(Duration::from_millis(200)).await;
    }
}

async fn write_secret(secrets: &Api<Secret>, name: &str, values: &[(&str, Vec<u8>)]) -> Result<()> {
    let data: serde_json::Map<String, serde_json::Value> = values
        .iter()
        .map(|(key, value)| {
            Ok((
                (*key).to_string(),
                serde_json::to_value(ByteString(value.clone()))?,
            ))
        })
        .collect::<Result<_>>()?;
    secrets
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"data": data})),
        )
        .await
        .with_context(|| format!("write Secret {name}"))?;
    Ok(())
}

/// A serving certificate a day from expiry is renewed from the same CA; a CA twenty days from
/// expiry is replaced, the old one still trusted beside it. After each, the server presents the
/// new certificate and the API server's calls succeed.
pub async fn rotation_stays_trusted(client: &Client, release: &Release) -> Result<()> {
    let name = format!("{}-webhook-server-cert", release.fullname);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &release.namespace);
    let secret = secrets.get(&name).await?;

    // Serving certificate renewal: kuota's own CA signs a certificate about to expire.
    let ca_pem = secret_value(&secret, "ca.crt")?;
    let ca = certificates(&ca_pem)?
        .into_iter()
        .next()
        .context("ca.crt holds no certificate")?;
    let ca_key = KeyPair::from_pem(std::str::from_utf8(&secret_value(&secret, "ca.key")?)?)?;
    let issuer = Issuer::from_ca_cert_der(&ca, ca_key)?;
    let (expiring, key) = serving(release, &issuer, 1)?;
    write_secret(
        &secrets,
        &name,
        &[
            ("tls.crt", expiring.clone().into_bytes()),
            ("tls.key", key.into_bytes()),
        ],
    )
    .await?;
    let renewed = until_changed(&secrets, &name, "tls.crt", expiring.as_bytes(), release).await?;
    ensure!(
        secret_value(&renewed, "ca.crt")? == ca_pem,
        "renewing the serving certificate changed the CA"
    );
    until_presented(release, &ca, &secret_value(&renewed, "tls.crt")?).await?;
    super::webhooks_answer(client, release).await?;

    // CA rotation: a CA about to expire, with a serving certificate it signed.
    let old_key = KeyPair::generate()?;
    let mut params = CertificateParams::default();
    params
        .distinguished_name
        .push(DnType::CommonName, "kuota-e2e-expiring-ca");
    params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let now = OffsetDateTime::now_utc();
    params.not_before = now - DAY;
    params.not_after = now + DAY * 20;
    let old_ca = params.self_signed(&old_key)?;
    let old_ca_pem = old_ca.pem();
    let old_ca_key_pem = old_key.serialize_pem();
    let old_issuer = Issuer::new(params, old_key);
    let (old_serving, old_serving_key) = serving(release, &old_issuer, 20)?;
    write_secret(
        &secrets,
        &name,
        &[
            ("ca.crt", old_ca_pem.clone().into_bytes()),
            ("ca.key", old_ca_key_pem.into_bytes()),
            ("tls.crt", old_serving.into_bytes()),
            ("tls.key", old_serving_key.into_bytes()),
        ],
    )
    .await?;
    let rotated = until_changed(&secrets, &name, "ca.crt", old_ca_pem.as_bytes(), release).await?;
    let bundle = certificates(&secret_value(&rotated, "ca.crt")?)?;
    let old_der = old_ca.der().clone();
    ensure!(
        bundle.len() == 2 && bundle[0] != old_der && bundle[1] == old_der,
        "ca.crt must hold the new CA, then the old one while certificates it signed are valid; \
         it holds {} certificates",
        bundle.len()
    );
    until_presented(release, &bundle[0], &secret_value(&rotated, "tls.crt")?).await?;
    super::webhooks_answer(client, release).await
}
