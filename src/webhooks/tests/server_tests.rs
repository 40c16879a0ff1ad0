//! The server over real HTTPS on 127.0.0.1, with self-signed certificates made in the test.

use std::net::SocketAddr;
use std::sync::{Arc, RwLock};

use axum::body::Bytes;
use axum::http::{Request, StatusCode, header};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, RootCertStore};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use super::*;
use crate::webhooks::serve;

/// A resolver whose certificate the test swaps, as certificate rotation does.
#[derive(Debug)]
struct Swappable(RwLock<Arc<CertifiedKey>>);

impl ResolvesServerCert for Swappable {
    fn resolve(&self, _: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.0.read().ok().map(|key| key.clone())
    }
}

/// A self-signed certificate for `localhost`, and the key rustls serves it with.
fn certificate() -> (CertificateDer<'static>, Arc<CertifiedKey>) {
    let generated =
        rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("a certificate");
    let der = generated.cert.der().clone();
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        generated.signing_key.serialize_der(),
    ));
    let signing = rustls::crypto::ring::sign::any_supported_type(&key).expect("a signing key");
    (der.clone(), Arc::new(CertifiedKey::new(vec![der], signing)))
}

async fn start(resolver: Arc<Swappable>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(serve(
        listener,
        resolver,
        crate::tls::ServerTls::default(),
        Webhooks::default(),
        crate::tls::Draining::never(),
    ));
    addr
}

async fn connect(addr: SocketAddr, trusted: &[&CertificateDer<'static>]) -> TlsStream<TcpStream> {
    let mut roots = RootCertStore::empty();
    for cert in trusted {
        roots.add((*cert).clone()).expect("a root");
    }
    let config =
        ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
    let tcp = TcpStream::connect(addr).await.expect("a connection");
    let name = ServerName::try_from("localhost").expect("a server name");
    TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .expect("a TLS handshake")
}

/// Posts `body` to `path` over `tls`; the status and the body.
async fn post(tls: TlsStream<TcpStream>, path: &str, body: String) -> (StatusCode, Bytes) {
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .expect("an HTTP connection");
    tokio::spawn(connection);
    let request = Request::post(path)
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)))
        .expect("a request");
    let response = sender.send_request(request).await.expect("a response");
    let status = response.status();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    (status, body)
}

fn review_of(body: &Bytes) -> Value {
    serde_json::from_slice(body).expect("an AdmissionReview")
}

#[tokio::test]
async fn reviews_are_answered_over_https() {
    let (cert, key) = certificate();
    let addr = start(Arc::new(Swappable(RwLock::new(key)))).await;
    let validate = "/validate-kueue-x-k8s-io-v1beta2-clusterqueue";

    let good = review_body("CREATE", &cluster_queue("cq", json!({})), None);
    let (status, body) = post(connect(addr, &[&cert]).await, validate, good.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    let review = review_of(&body);
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    assert_eq!(review["response"]["uid"], good["request"]["uid"]);
    assert_eq!(review["response"]["allowed"], true);

    let spec = json!({"fairSharing": {"weight": "-1"}});
    let bad = review_body("CREATE", &cluster_queue("cq", spec), None);
    let (status, body) = post(connect(addr, &[&cert]).await, validate, bad.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    let response = &review_of(&body)["response"];
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 403);
    let message = response["status"]["message"].as_str().expect("a message");
    assert!(
        message
            .contains("ClusterQueue \"cq\": field spec.fairSharing.weight: must not be negative"),
        "{message}"
    );

    let mutate = "/mutate-kueue-x-k8s-io-v1beta2-clusterqueue";
    let (_, body) = post(connect(addr, &[&cert]).await, mutate, good.to_string()).await;
    let response = &review_of(&body)["response"];
    assert_eq!(response["patchType"], "JSONPatch");
    let patch = STANDARD
        .decode(response["patch"].as_str().expect("a patch"))
        .expect("base64");
    assert_eq!(
        serde_json::from_slice::<Value>(&patch).expect("json"),
        json!([{"op": "add", "path": "/metadata/finalizers",
            "value": ["kueue.x-k8s.io/resource-in-use"]}])
    );

    let job = "/mutate-batch-v1-job";
    let (_, body) = post(connect(addr, &[&cert]).await, job, good.to_string()).await;
    assert_eq!(
        review_of(&body)["response"],
        json!({"uid": good["request"]["uid"], "allowed": true})
    );
}

#[tokio::test]
async fn garbage_gets_400_and_unknown_paths_404() {
    let (cert, key) = certificate();
    let addr = start(Arc::new(Swappable(RwLock::new(key)))).await;
    let path = "/validate-kueue-x-k8s-io-v1beta2-workload";
    let (status, body) = post(connect(addr, &[&cert]).await, path, "{not json".into()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let message = String::from_utf8_lossy(&body);
    assert!(
        message.contains("the body is not an AdmissionReview"),
        "{message}"
    );

    let (status, _) = post(
        connect(addr, &[&cert]).await,
        "/validate-nothing",
        "{}".into(),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_swapped_certificate_is_served_on_the_next_connection() {
    let (first, first_key) = certificate();
    let (second, second_key) = certificate();
    let resolver = Arc::new(Swappable(RwLock::new(first_key)));
    let addr = start(resolver.clone()).await;
    let peer = |tls: &TlsStream<TcpStream>| {
        tls.get_ref()
            .1
            .peer_certificates()
            .expect("a peer certificate")[0]
            .clone()
    };

    let before = connect(addr, &[&first, &second]).await;
    assert_eq!(peer(&before), first);

    *resolver.0.write().expect("the lock") = second_key;
    let after = connect(addr, &[&second]).await;
    assert_eq!(peer(&after), second);
    let body = review_body("CREATE", &cluster_queue("cq", json!({})), None).to_string();
    let path = "/validate-kueue-x-k8s-io-v1beta2-cohort";
    let (status, _) = post(after, path, body).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn conversion_reviews_are_answered_over_https() {
    let (cert, key) = certificate();
    let addr = start(Arc::new(Swappable(RwLock::new(key)))).await;
    let body = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {
            "uid": "u-1",
            "desiredAPIVersion": "kueue.x-k8s.io/v1beta1",
            "objects": [{
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": { "name": "lq", "namespace": "ns" },
                "status": { "flavorsUsage": [] },
            }],
        },
    });
    let (status, answer) = post(connect(addr, &[&cert]).await, "/convert", body.to_string()).await;
    assert_eq!(status, StatusCode::OK);
    let response = &review_of(&answer)["response"];
    assert_eq!(response["uid"], "u-1");
    assert_eq!(response["result"]["status"], "Success");
    assert_eq!(
        response["convertedObjects"][0]["status"],
        json!({ "flavorUsage": [] })
    );

    let (status, _) = post(connect(addr, &[&cert]).await, "/convert", "{}".into()).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn a_draining_server_answers_the_call_it_took_then_ends_and_takes_no_more() {
    let (cert, key) = certificate();
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("an address");
    let (drain, draining) = crate::tls::Draining::channel();
    let server = tokio::spawn(serve(
        listener,
        Arc::new(Swappable(RwLock::new(key))),
        crate::tls::ServerTls::default(),
        Webhooks::default(),
        draining,
    ));
    let idle = connect(addr, &[&cert]).await;
    // A call whose body is still on its way when draining starts.
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(connect(addr, &[&cert]).await))
            .await
            .expect("an HTTP connection");
    tokio::spawn(connection);
    let good = review_body("CREATE", &cluster_queue("cq", json!({})), None).to_string();
    let (mut body, sent) =
        futures::channel::mpsc::channel::<Result<hyper::body::Frame<Bytes>, std::io::Error>>(1);
    let request = Request::post("/validate-kueue-x-k8s-io-v1beta2-clusterqueue")
        .header(header::HOST, "localhost")
        .header(header::CONTENT_LENGTH, good.len())
        .body(http_body_util::StreamBody::new(sent))
        .expect("a request");
    let answer = tokio::spawn(async move { sender.send_request(request).await });
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    drain.send_replace(true);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert!(
        !server.is_finished(),
        "a call in flight keeps the server up"
    );
    use futures::SinkExt;
    body.send(Ok(hyper::body::Frame::data(Bytes::from(good))))
        .await
        .expect("the rest of the body");
    let response = answer.await.expect("joined").expect("an answer");
    assert_eq!(response.status(), StatusCode::OK);
    tokio::time::timeout(std::time::Duration::from_secs(5), server)
        .await
        .expect("the server ends once its calls are answered")
        .expect("joined")
        .expect("served");
    drop(idle);
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "the listener is closed"
    );
}

/// One review on a kept-alive connection; its status, or why the connection failed it.
async fn review_on(
    sender: &mut hyper::client::conn::http1::SendRequest<Full<Bytes>>,
) -> Result<StatusCode, hyper::Error> {
    let body = review_body("CREATE", &cluster_queue("cq", json!({})), None).to_string();
    let request = Request::post("/validate-kueue-x-k8s-io-v1beta2-clusterqueue")
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)))
        .expect("a request");
    let response = sender.send_request(request).await?;
    let status = response.status();
    response.into_body().collect().await?;
    Ok(status)
}

/// Lets `idle` pass on the runtime's clock, then lets the server act on its timers.
async fn stay_idle(idle: std::time::Duration) {
    tokio::time::pause();
    tokio::time::advance(idle).await;
    tokio::time::resume();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
}

#[tokio::test]
async fn a_connection_idle_as_long_as_the_api_server_keeps_one_is_still_served() {
    let (cert, key) = certificate();
    let addr = start(Arc::new(Swappable(RwLock::new(key)))).await;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(connect(addr, &[&cert]).await))
            .await
            .expect("an HTTP connection");
    tokio::spawn(connection);
    assert_eq!(review_on(&mut sender).await.ok(), Some(StatusCode::OK));
    // The API server's transport keeps an idle connection 90 s and may send its next review on
    // it until then.
    stay_idle(std::time::Duration::from_secs(90)).await;
    assert_eq!(
        review_on(&mut sender).await.ok(),
        Some(StatusCode::OK),
        "a connection idle for as long as the API server keeps one is served"
    );
    stay_idle(std::time::Duration::from_secs(150)).await;
    assert!(
        review_on(&mut sender).await.is_err(),
        "a connection idle for longer is closed"
    );
}
