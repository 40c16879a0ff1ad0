use kube::runtime::watcher;
use tokio::sync::mpsc;

use super::*;
use crate::webhooks::ViewChange;

/// A namespace view fed a full list of each kind, or of all but the namespaces.
async fn view(namespaces_listed: bool) -> NamespaceView {
    let (sender, received) = mpsc::channel(8);
    let (view, applying) = NamespaceView::fed(received);
    let namespaces = if namespaces_listed {
        vec![watcher::Event::Init, watcher::Event::InitDone]
    } else {
        vec![watcher::Event::Init]
    };
    for change in [
        ViewChange::Namespaces(namespaces),
        ViewChange::DefaultQueues(vec![watcher::Event::Init, watcher::Event::InitDone]),
        ViewChange::DefaultClass(vec![watcher::Event::Init, watcher::Event::InitDone]),
    ] {
        sender.send(change).await.expect("the view takes changes");
    }
    drop(sender);
    applying.await;
    view
}

#[tokio::test]
async fn not_ready_before_the_pod_webhooks_namespace_cache_is_listed() {
    let readiness = Readiness {
        caches: Ready::synced(),
        webhook_namespaces: Some(view(false).await),
        certificate: None,
    };
    assert_eq!(
        readiness.check(),
        Err("the webhooks' namespace cache is not listed yet")
    );
    let readiness = Readiness {
        webhook_namespaces: Some(view(true).await),
        ..readiness
    };
    assert_eq!(readiness.check(), Ok(()));
    let without_webhooks = Readiness {
        webhook_namespaces: None,
        ..readiness
    };
    assert_eq!(without_webhooks.check(), Ok(()));
}

/// In cert-manager mode the certificate read from files is not enough: the CA bundles the
/// injector writes must be in place.
#[tokio::test]
async fn not_ready_before_the_issuers_ca_is_injected() {
    let store = crate::tls::self_signed_store(time::OffsetDateTime::now_utc())
        .expect("a certificate, presented and trusted");
    store.await_injection();
    let readiness = Readiness {
        caches: Ready::synced(),
        webhook_namespaces: Some(view(true).await),
        certificate: Some(store.clone()),
    };
    assert_eq!(
        readiness.check(),
        Err("the webhook certificate is not served or not trusted yet")
    );
    store.set_injected(true);
    assert_eq!(readiness.check(), Ok(()));
}

/// Callers past the review limit are told to come back, without a review and without the
/// metrics.
#[tokio::test]
async fn metrics_callers_past_the_review_limit_get_429() {
    use crate::controllers::metrics::{BuildInfo, MetricsOptions, ReplicaRole};

    // Never answers: every review asked fails, and the limit is what is looked at.
    let config = kube::Config::new("http://127.0.0.1:9".parse().expect("a URL"));
    let clock = Clock::manual("2026-11-23T10:00:00Z".parse().expect("a time"));
    let auth = MetricsAuth::new(Client::try_from(config).expect("a client"), clock);
    let metrics = Metrics::new(
        ReplicaRole::Standalone,
        MetricsOptions::default(),
        BuildInfo::current(),
    );
    let mut statuses = Vec::new();
    for i in 0..40 {
        let mut headers = HeaderMap::new();
        let token = format!("Bearer random-{i}")
            .parse()
            .expect("a header value");
        headers.insert(header::AUTHORIZATION, token);
        let response = authorized(&auth, &Method::GET, &headers, &metrics).await;
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(response.headers()[header::RETRY_AFTER], "1");
        }
        statuses.push(response.status());
    }
    let reviewed = statuses
        .iter()
        .filter(|s| **s == StatusCode::INTERNAL_SERVER_ERROR)
        .count();
    let throttled = statuses
        .iter()
        .filter(|s| **s == StatusCode::TOO_MANY_REQUESTS)
        .count();
    assert!(reviewed > 0 && reviewed < 40, "{statuses:?}");
    assert_eq!(reviewed + throttled, 40, "{statuses:?}");
}
