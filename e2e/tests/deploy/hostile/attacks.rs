//! The attacks on the webhook port and the bits of HTTP/1.1 over TLS they are written in: each
//! attacker loops until told to stop and tallies the answers it gets.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use super::super::metrics::AnyCertificate;

/// Declared by the oversized bodies: refused unread.
pub(super) const OVERSIZED: usize = 1 << 30;
/// The replica's limit on a body (controller-runtime's).
pub(super) const LIMIT: usize = 7 * 1024 * 1024;

/// Answers seen, by attack and outcome ("413", "503", "closed", ...).
#[derive(Default)]
pub(super) struct Tally(Mutex<BTreeMap<(&'static str, String), u64>>);

impl Tally {
    pub(super) fn add(&self, attack: &'static str, outcome: impl Into<String>) {
        if let Ok(mut counts) = self.0.lock() {
            *counts.entry((attack, outcome.into())).or_default() += 1;
        }
    }

    pub(super) fn count(&self, attack: &'static str, outcome: &str) -> u64 {
        self.0
            .lock()
            .ok()
            .and_then(|c| c.get(&(attack, outcome.to_string())).copied())
            .unwrap_or(0)
    }

    pub(super) fn report(&self) -> String {
        let counts = self.0.lock().map(|c| c.clone()).unwrap_or_default();
        counts
            .iter()
            .map(|((attack, outcome), n)| format!("  {attack:<10} {outcome:<12} {n}\n"))
            .collect()
    }
}

pub(super) fn connector() -> Result<TlsConnector> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth();
    Ok(TlsConnector::from(Arc::new(config)))
}

/// A TLS connection to the webhook port; an error when the replica closes it before the
/// handshake completes, as it does past its connection bounds.
pub(super) async fn connect(tls: &TlsConnector, addr: SocketAddr) -> Result<TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(addr).await?;
    let name = ServerName::try_from("kuota-webhook-service.kuota-system.svc")?.to_owned();
    Ok(tokio::time::timeout(Duration::from_secs(15), tls.connect(name, tcp)).await??)
}

/// The few stream operations the attacks need (tokio's extension traits are not built here).
pub(super) trait Stream: AsyncRead + AsyncWrite + Unpin {
    async fn write_all(&mut self, mut bytes: &[u8]) -> std::io::Result<()> {
        while !bytes.is_empty() {
            let n = std::future::poll_fn(|cx| Pin::new(&mut *self).poll_write(cx, bytes)).await?;
            if n == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            bytes = &bytes[n..];
        }
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_flush(cx)).await
    }

    async fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let mut filled = ReadBuf::new(buffer);
        std::future::poll_fn(|cx| Pin::new(&mut *self).poll_read(cx, &mut filled)).await?;
        Ok(filled.filled().len())
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> Stream for S {}

pub(super) fn head(path: &str, length: Option<usize>) -> String {
    let length = match length {
        Some(n) => format!("Content-Length: {n}\r\n"),
        None => "Transfer-Encoding: chunked\r\n".to_string(),
    };
    format!(
        "POST {path} HTTP/1.1\r\nHost: kuota-webhook-service.kuota-system.svc:443\r\n\
         Content-Type: application/json\r\n{length}\r\n"
    )
}

/// The status code of the next answer on `stream`, its body read and dropped.
pub(super) async fn status_of(stream: &mut impl Stream) -> Result<u16> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            bail!("closed");
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let headers = String::from_utf8_lossy(&buffer[..end]).to_ascii_lowercase();
    let code: u16 = headers
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .context("not an HTTP answer")?;
    let length: usize = headers
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut left = length.saturating_sub(buffer.len() - end);
    while left > 0 {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            bail!("closed");
        }
        left = left.saturating_sub(n);
    }
    Ok(code)
}

pub(super) fn outcome(result: Result<u16>) -> String {
    match result {
        Ok(code) => code.to_string(),
        Err(error) if error.to_string() == "closed" => "closed".into(),
        Err(error) => match error.downcast_ref::<std::io::Error>() {
            Some(io) => format!("{:?}", io.kind()),
            None => "error".into(),
        },
    }
}

/// An AdmissionReview asking to validate the creation of a Job naming a queue.
pub(super) fn job_review(uid: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "batch", "version": "v1", "kind": "Job"},
            "resource": {"group": "batch", "version": "v1", "resource": "jobs"},
            "namespace": "team-a",
            "name": "probe",
            "operation": "CREATE",
            "userInfo": {"username": "alice"},
            "object": {
                "apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "probe", "namespace": "team-a",
                             "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
                "spec": {"suspend": true, "template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "busybox"}]}}},
            },
        },
    }))
    .unwrap_or_default()
}

/// An AdmissionReview whose object is arrays nested as deep as fits in the limit.
pub(super) fn nested_review() -> Vec<u8> {
    let prefix = br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"n","kind":{"group":"batch","version":"v1","kind":"Job"},"operation":"CREATE","object":"#;
    let suffix = b"}}";
    let depth = (LIMIT - 1024 - prefix.len() - suffix.len()) / 2;
    let mut body = Vec::with_capacity(LIMIT);
    body.extend_from_slice(prefix);
    body.resize(body.len() + depth, b'[');
    body.resize(body.len() + depth, b']');
    body.extend_from_slice(suffix);
    body
}

pub(super) const VALIDATE_JOB: &str = "/validate-batch-v1-job";

pub(super) struct Attack {
    pub(super) tls: TlsConnector,
    pub(super) target: SocketAddr,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) tally: Arc<Tally>,
}

impl Attack {
    fn running(&self) -> bool {
        !self.stop.load(Ordering::Relaxed)
    }

    /// Headers declaring a body far over the limit, then nothing.
    pub(super) async fn oversized(self: Arc<Self>) {
        while self.running() {
            let result = async {
                let mut s = connect(&self.tls, self.target).await?;
                s.write_all(head(VALIDATE_JOB, Some(OVERSIZED)).as_bytes())
                    .await?;
                status_of(&mut s).await
            }
            .await;
            self.tally.add("oversized", outcome(result));
        }
    }

    /// The limit's worth of nested arrays.
    pub(super) async fn nested(self: Arc<Self>, body: Arc<Vec<u8>>) {
        while self.running() {
            let result = async {
                let mut s = connect(&self.tls, self.target).await?;
                s.write_all(head(VALIDATE_JOB, Some(body.len())).as_bytes())
                    .await?;
                s.write_all(&body).await?;
                status_of(&mut s).await
            }
            .await;
            self.tally.add("nested", outcome(result));
        }
    }

    /// A quarter of the declared body, then the connection is dropped.
    pub(super) async fn truncated(self: Arc<Self>) {
        let part = vec![b' '; 1 << 20];
        while self.running() {
            let result = async {
                let mut s = connect(&self.tls, self.target).await?;
                s.write_all(head(VALIDATE_JOB, Some(4 * part.len())).as_bytes())
                    .await?;
                s.write_all(&part).await?;
                Ok::<_, anyhow::Error>(())
            }
            .await;
            self.tally.add(
                "truncated",
                match result {
                    Ok(()) => "sent".to_string(),
                    Err(e) => outcome(Err(e)),
                },
            );
        }
    }

    /// A byte a second of a small body, until the replica answers or closes.
    pub(super) async fn slow(self: Arc<Self>) {
        while self.running() {
            let result = async {
                let mut s = connect(&self.tls, self.target).await?;
                s.write_all(head(VALIDATE_JOB, Some(64)).as_bytes()).await?;
                for _ in 0..64 {
                    s.write_all(b" ").await?;
                    let mut peek = [0u8; 1];
                    // The answer may come at any time: read while waiting the second.
                    match tokio::time::timeout(
                        Duration::from_secs(1),
                        s.get_mut().0.peek(&mut peek),
                    )
                    .await
                    {
                        Ok(_) => return status_of(&mut s).await,
                        Err(_) => continue,
                    }
                }
                status_of(&mut s).await
            }
            .await;
            self.tally.add("slow", outcome(result));
        }
    }

    /// A chunked body without a declared length, sent until the replica stops it.
    pub(super) async fn chunked(self: Arc<Self>) {
        let chunk = format!("10000\r\n{}\r\n", " ".repeat(0x10000));
        while self.running() {
            let result = async {
                let mut s = connect(&self.tls, self.target).await?;
                s.write_all(head(VALIDATE_JOB, None).as_bytes()).await?;
                let mut sent = 0;
                while sent < 4 * LIMIT {
                    if s.write_all(chunk.as_bytes()).await.is_err() {
                        break;
                    }
                    sent += 0x10000;
                }
                let _ = s.write_all(b"0\r\n\r\n").await;
                status_of(&mut s).await
            }
            .await;
            self.tally.add("chunked", outcome(result));
        }
    }

    /// Valid-looking reviews, one after another on a kept-alive connection; a connection the
    /// replica refuses is tried again after a pause.
    pub(super) async fn flood(self: Arc<Self>, worker: usize) {
        let mut n = 0;
        while self.running() {
            let result = async {
                let mut s = connect(&self.tls, self.target).await?;
                loop {
                    n += 1;
                    let body = job_review(&format!("flood-{worker}-{n}"));
                    s.write_all(head(VALIDATE_JOB, Some(body.len())).as_bytes())
                        .await?;
                    s.write_all(&body).await?;
                    let code = status_of(&mut s).await?;
                    self.tally.add("flood", code.to_string());
                    if !self.running() {
                        return Ok(code);
                    }
                }
            }
            .await;
            if let Err(error) = result {
                self.tally.add("flood", outcome(Err(error)));
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}
