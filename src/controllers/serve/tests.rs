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
