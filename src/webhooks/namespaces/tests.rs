use kube::api::ObjectMeta;
use kube::core::PartialObjectMetaExt;

use super::*;

fn namespace(name: &str) -> PartialObjectMeta<Namespace> {
    ObjectMeta {
        name: Some(name.to_owned()),
        labels: Some(BTreeMap::from([("team".to_owned(), "a".to_owned())])),
        ..ObjectMeta::default()
    }
    .into_response_partial()
}

/// A view fed `changes`, once it has applied them all.
async fn fed_with(changes: Vec<ViewChange>) -> NamespaceView {
    let (sender, received) = mpsc::channel(16);
    let (view, applying) = NamespaceView::fed(received);
    for change in changes {
        sender.send(change).await.expect("the view takes changes");
    }
    drop(sender);
    applying.await;
    view
}

/// The view is listed only once every kind it holds has delivered its first full list: the
/// namespaces' list alone does not make it so, nor does a list begun and not ended.
#[tokio::test]
async fn a_fed_view_is_listed_once_every_kind_has_listed() {
    let namespaces = || {
        ViewChange::Namespaces(vec![
            watcher::Event::Init,
            watcher::Event::InitApply(namespace("team-a")),
            watcher::Event::InitDone,
        ])
    };
    let class = || ViewChange::DefaultClass(vec![watcher::Event::Init, watcher::Event::InitDone]);
    let partly = fed_with(vec![
        namespaces(),
        ViewChange::DefaultQueues(vec![watcher::Event::Init]),
        class(),
    ])
    .await;
    assert!(
        !partly.is_listed(),
        "the default LocalQueues are not listed yet"
    );

    let listed = fed_with(vec![
        namespaces(),
        ViewChange::DefaultQueues(vec![watcher::Event::Init]),
        class(),
        ViewChange::DefaultQueues(vec![watcher::Event::InitDone]),
    ])
    .await;
    assert!(listed.is_listed());
    assert_eq!(
        listed.labels("team-a").get("team").map(String::as_str),
        Some("a")
    );
}

#[test]
fn a_view_without_watches_waits_for_nothing() {
    assert!(NamespaceView::default().is_listed());
    assert!(NamespaceView::fixed(&[], &[]).is_listed());
}
