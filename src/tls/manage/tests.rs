use serde_json::json;

use super::*;
use crate::tls::testing::{issued, settings, t0};

#[test]
fn an_object_that_could_not_be_read_keeps_the_trust_known_before() {
    let material = issued(t0(), &settings());
    let ca = Some(&material.ca);
    assert!(still_trusted(None, Target::Webhooks, ca, true));
    assert!(!still_trusted(None, Target::Webhooks, ca, false));
    assert!(
        !still_trusted(None, Target::Webhooks, None, true),
        "nothing presented yet, nothing trusted"
    );
}

#[test]
fn an_object_read_is_judged_by_its_bundle() {
    let material = issued(t0(), &settings());
    let mut hooks = json!({"webhooks": [{"clientConfig": {}}]});
    assert!(
        !still_trusted(Some(&hooks), Target::Webhooks, Some(&material.ca), true),
        "read without our CA: not trusted, whatever was known"
    );
    inject(&mut hooks, Target::Webhooks, &material.trust(), t0());
    assert!(still_trusted(
        Some(&hooks),
        Target::Webhooks,
        Some(&material.ca),
        false
    ));
}
