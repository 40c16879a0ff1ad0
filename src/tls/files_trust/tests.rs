use k8s_openapi::ByteString;
use serde_json::json;

use super::*;
use crate::tls::cluster::Kind;
use crate::tls::testing::{issued, settings, t0};

fn configuration(bundles: &[Option<&CertInfo>]) -> Value {
    let webhooks: Vec<Value> = bundles
        .iter()
        .map(|ca| {
            let bundle = ca.map(|ca| ByteString(ca.pem().into_bytes()));
            json!({"name": "m.kb.io", "clientConfig": {"caBundle": bundle}})
        })
        .collect();
    json!({ "webhooks": webhooks })
}

fn mutating() -> Managed {
    Managed {
        kind: Kind::Mutating,
        name: "kueue-mutating-webhook-configuration".into(),
    }
}

/// The issuer's CA and another.
fn two_cas() -> (CertInfo, CertInfo) {
    let settings = settings();
    (issued(t0(), &settings).ca, issued(t0(), &settings).ca)
}

#[test]
fn a_webhook_configuration_is_trusted_once_every_webhook_holds_the_issuers_ca() {
    let (issuer, other) = two_cas();
    let cas = [issuer.clone()];
    let injected = webhooks_seen(&mutating(), &configuration(&[Some(&issuer)]), &cas);
    assert_eq!(
        injected,
        Seen {
            trusted: Some(true),
            problem: None
        }
    );

    for bundles in [vec![None], vec![Some(&issuer), None], vec![Some(&other)]] {
        let seen = webhooks_seen(&mutating(), &configuration(&bundles), &cas);
        assert_eq!(seen.trusted, Some(false), "{bundles:?}");
        let problem = seen.problem.expect("a problem");
        assert!(
            problem.contains("kueue-mutating-webhook-configuration")
                && problem.contains("caBundle"),
            "{problem}"
        );
    }
}

#[test]
fn trust_needs_every_object_and_keeps_what_it_was_when_one_cannot_be_read() {
    let all = |seen: &[Option<bool>], was| judged(seen.iter().copied(), was);
    assert!(all(&[Some(true), Some(true)], false));
    assert!(!all(&[Some(true), Some(false)], true), "one distrusts");
    assert!(!all(&[None, Some(false)], true));
    assert!(all(&[Some(true), None], true), "a brownout keeps trust");
    assert!(!all(&[Some(true), None], false), "and keeps distrust");
    assert!(all(&[], false), "nothing to trust through");
}
