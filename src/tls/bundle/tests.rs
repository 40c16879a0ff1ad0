use serde_json::json;

use super::*;
use crate::tls::material::parse_bundle;
use crate::tls::testing::{at, issued, next_material, settings, t0};

fn b64(certs: &[&CertInfo]) -> Value {
    let pem: String = certs.iter().map(|c| c.pem()).collect();
    serde_json::to_value(ByteString(pem.into_bytes())).unwrap()
}

fn bundle_of(config: &Value) -> Vec<CertInfo> {
    let bytes: ByteString = serde_json::from_value(config["caBundle"].clone()).unwrap();
    parse_bundle(&bytes.0).unwrap()
}

fn webhooks(bundles: [Value; 2]) -> Value {
    let [first, second] = bundles;
    json!({
        "webhooks": [
            {
                "name": "mworkload.kb.io",
                "clientConfig": {"service": {"name": "kueue-webhook-service", "namespace": "kueue-system", "path": "/mutate"}, "caBundle": first},
                "matchConditions": [{"name": "a", "expression": "true"}],
                "someFutureField": {"kept": true},
            },
            {
                "name": "mclusterqueue.kb.io",
                "clientConfig": {"service": {"name": "kueue-webhook-service", "namespace": "kueue-system"}, "caBundle": second},
            },
        ]
    })
}

#[test]
fn merging_keeps_our_cas_first_and_a_newer_one_from_another_replica() {
    let settings = settings();
    let old = issued(t0(), &settings);
    let ours = next_material(&old.data, at(31), &settings);
    let newer = issued(at(32), &settings);
    let stranger_expired = issued(at(-100), &settings);
    let existing = [
        old.ca.clone(),
        newer.ca.clone(),
        stranger_expired.ca.clone(),
        newer.serving.leaf.clone(),
    ];
    let merged = merge(&existing, &ours.trust(), at(33));
    assert_eq!(merged, [ours.ca.clone(), old.ca.clone(), newer.ca.clone()]);
    // An older CA that is not ours is dropped, as is anything expired or not a CA.
    let merged = merge(&existing, &[&newer.ca], at(33));
    assert_eq!(merged, std::slice::from_ref(&newer.ca));
}

#[test]
fn every_webhook_gets_the_bundle_and_a_second_pass_changes_nothing() {
    let settings = settings();
    let ours = issued(t0(), &settings);
    let mut config = webhooks([Value::Null, json!("")]);
    assert!(!trusts(&config, Target::Webhooks, &ours.ca));
    assert!(inject(&mut config, Target::Webhooks, &ours.trust(), at(1)));
    for webhook in config["webhooks"].as_array().unwrap() {
        assert_eq!(
            bundle_of(&webhook["clientConfig"]),
            std::slice::from_ref(&ours.ca)
        );
    }
    assert!(trusts(&config, Target::Webhooks, &ours.ca));
    assert!(!inject(&mut config, Target::Webhooks, &ours.trust(), at(1)));
    // Fields this build does not model survive.
    assert_eq!(
        config["webhooks"][0]["someFutureField"],
        json!({"kept": true})
    );
    assert_eq!(config["webhooks"][0]["matchConditions"][0]["name"], "a");
    assert_eq!(
        config["webhooks"][0]["clientConfig"]["service"]["path"],
        "/mutate"
    );
}

#[test]
fn a_reset_or_garbled_bundle_is_injected_again() {
    let settings = settings();
    let ours = issued(t0(), &settings);
    let stranger = issued(t0(), &settings);
    for reset in [
        json!(""),
        json!("bm90IHBlbQ=="),
        json!(42),
        b64(&[&stranger.ca]),
    ] {
        let mut config = webhooks([b64(&[&ours.ca]), reset.clone()]);
        assert!(!trusts(&config, Target::Webhooks, &ours.ca), "{reset}");
        assert!(inject(&mut config, Target::Webhooks, &ours.trust(), at(1)));
        assert_eq!(
            bundle_of(&config["webhooks"][1]["clientConfig"]),
            std::slice::from_ref(&ours.ca)
        );
        assert!(trusts(&config, Target::Webhooks, &ours.ca));
    }
}

#[test]
fn an_equal_set_in_another_order_is_left_alone() {
    let settings = settings();
    let old = issued(t0(), &settings);
    let ours = next_material(&old.data, at(31), &settings);
    let both = b64(&[&old.ca, &ours.ca]);
    let mut config = webhooks([both.clone(), both]);
    assert!(!inject(
        &mut config,
        Target::Webhooks,
        &ours.trust(),
        at(32)
    ));
}

#[test]
fn a_replica_that_is_behind_does_not_take_trust_from_one_that_rotated() {
    let settings = settings();
    let old = issued(t0(), &settings);
    let rotated = next_material(&old.data, at(31), &settings);
    let mut config = webhooks([b64(&rotated.trust()), b64(&rotated.trust())]);
    // The replica behind still trusts only the old CA.
    assert!(!inject(&mut config, Target::Webhooks, &old.trust(), at(31)));
    assert!(trusts(&config, Target::Webhooks, &rotated.ca));
}

#[test]
fn a_configuration_without_webhooks_trusts_vacuously() {
    let ours = issued(t0(), &settings());
    let mut config = json!({"webhooks": []});
    assert!(trusts(&config, Target::Webhooks, &ours.ca));
    assert!(!inject(&mut config, Target::Webhooks, &ours.trust(), at(1)));
}

#[test]
fn only_a_crd_that_converts_through_a_webhook_gets_a_bundle() {
    let ours = issued(t0(), &settings());
    let mut none = json!({"spec": {"conversion": {"strategy": "None"}}});
    assert!(!inject(&mut none, Target::Conversion, &ours.trust(), at(1)));
    assert_eq!(none, json!({"spec": {"conversion": {"strategy": "None"}}}));
    assert!(trusts(&none, Target::Conversion, &ours.ca));

    let mut webhook = json!({"spec": {"conversion": {"strategy": "Webhook", "webhook": {
        "clientConfig": {"service": {"name": "kueue-webhook-service", "namespace": "kueue-system", "path": "/convert"}},
        "conversionReviewVersions": ["v1"],
    }}}});
    assert!(!trusts(&webhook, Target::Conversion, &ours.ca));
    assert!(inject(
        &mut webhook,
        Target::Conversion,
        &ours.trust(),
        at(1)
    ));
    let config = &webhook["spec"]["conversion"]["webhook"]["clientConfig"];
    assert_eq!(bundle_of(config), std::slice::from_ref(&ours.ca));
    assert_eq!(config["service"]["path"], "/convert");
    assert!(trusts(&webhook, Target::Conversion, &ours.ca));
}

#[test]
fn a_crd_is_made_to_convert_through_the_release_service() {
    let webhook = |name: &str, namespace: &str| {
        json!({"spec": {"group": "kueue.x-k8s.io", "conversion": {"strategy": "Webhook", "webhook": {
            "clientConfig": {"service": {"name": name, "namespace": namespace, "path": "/convert", "port": 443}},
            "conversionReviewVersions": ["v1"],
        }}}})
    };
    let mut crd = json!({"spec": {"group": "kueue.x-k8s.io"}});
    assert!(point_conversion_at(
        &mut crd,
        "kueue-webhook-service",
        "kueue-system"
    ));
    assert_eq!(crd, webhook("kueue-webhook-service", "kueue-system"));

    let ours = issued(t0(), &settings());
    assert!(inject(&mut crd, Target::Conversion, &ours.trust(), at(1)));
    assert!(point_conversion_at(
        &mut crd,
        "team-kuota-webhook-service",
        "team"
    ));
    assert!(!point_conversion_at(
        &mut crd,
        "team-kuota-webhook-service",
        "team"
    ));
    assert!(
        trusts(&crd, Target::Conversion, &ours.ca),
        "the CA bundle is kept"
    );
    let service = &crd["spec"]["conversion"]["webhook"]["clientConfig"]["service"];
    assert_eq!(service["name"], "team-kuota-webhook-service");
    assert_eq!(service["namespace"], "team");
}

#[test]
fn an_api_service_holds_its_bundle_in_its_spec() {
    let material = issued(t0(), &settings());
    let mut api_service = json!({
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1beta2.visibility.kueue.x-k8s.io"},
        "spec": {
            "group": "visibility.kueue.x-k8s.io",
            "version": "v1beta2",
            "service": {"name": "kueue-visibility-server", "namespace": "kueue-system", "port": 443},
        },
    });
    assert!(!trusts(&api_service, Target::ApiService, &material.ca));
    assert!(inject(
        &mut api_service,
        Target::ApiService,
        &material.trust(),
        t0()
    ));
    assert_eq!(bundle_of(&api_service["spec"])[0].der, material.ca.der);
    assert!(trusts(&api_service, Target::ApiService, &material.ca));
    assert_eq!(
        api_service["spec"]["service"]["port"], 443,
        "the rest is kept"
    );
    assert!(!inject(
        &mut api_service,
        Target::ApiService,
        &material.trust(),
        t0()
    ));
}
