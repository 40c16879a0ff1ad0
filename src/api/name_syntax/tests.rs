use super::*;

#[test]
fn subdomain_accepts_dotted_lower_case_labels() {
    assert!(check_dns1123_subdomain("tas-user-queue").is_ok());
    assert!(check_dns1123_subdomain("a.b-c.d1").is_ok());
}

#[test]
fn subdomain_rejects_bad_shapes() {
    for bad in ["", "Queue", "-q", "q-", "a..b", "a_b", "q name"] {
        assert!(check_dns1123_subdomain(bad).is_err(), "{bad:?} accepted");
    }
    assert!(check_dns1123_subdomain(&"a".repeat(254)).is_err());
    assert!(check_dns1123_subdomain(&"a".repeat(253)).is_ok());
}

#[test]
fn qualified_name_accepts_label_keys() {
    for good in [
        "cloud.provider.com/topology-rack",
        "kubernetes.io/hostname",
        "rack",
        "Rack_1.a",
    ] {
        assert!(check_qualified_name(good).is_ok(), "{good:?} rejected");
    }
}

#[test]
fn qualified_name_rejects_bad_shapes() {
    for bad in [
        "",
        "/rack",
        "a/b/c",
        "Cloud.com/rack",
        "cloud.com/",
        "-rack",
        "rack-",
        "ra ck",
    ] {
        assert!(check_qualified_name(bad).is_err(), "{bad:?} accepted");
    }
    assert!(check_qualified_name(&"r".repeat(64)).is_err());
    assert!(check_qualified_name(&format!("x.io/{}", "r".repeat(63))).is_ok());
}

#[test]
fn label_values_may_be_empty_or_name_shaped() {
    for good in ["", "a", "rack-1", "A_b.c", &"v".repeat(63)] {
        assert!(check_label_value(good).is_ok(), "{good:?} rejected");
    }
    for bad in ["-a", "a-", "a b", "a/b", &"v".repeat(64)] {
        assert!(check_label_value(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn dns1123_labels_have_no_dots_and_at_most_63_characters() {
    for good in ["cq", "cluster-queue-1", &"q".repeat(63)] {
        assert!(check_dns1123_label(good).is_ok(), "{good:?} rejected");
    }
    for bad in ["", "a.b", "Cq", "-cq", "cq-", "c_q", &"q".repeat(64)] {
        assert!(check_dns1123_label(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn dns1035_labels_start_with_a_letter() {
    for good in ["kueue-webhook-service", "a", "a1", &"s".repeat(63)] {
        assert!(check_dns1035_label(good).is_ok(), "{good:?} rejected");
    }
    for bad in ["", "1a", "-a", "a-", "A", "a.b", "a_b", &"s".repeat(64)] {
        assert!(check_dns1035_label(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn a_domain_prefixed_path_is_a_subdomain_a_slash_and_a_url_path() {
    for good in ["acme.io/foo", "example.com/gate/v1", "a/b~c"] {
        assert!(
            check_domain_prefixed_path(good).is_ok(),
            "{good:?} rejected"
        );
    }
    for bad in [
        "foo",
        "/foo",
        "acme.io/",
        "Acme.io/foo",
        "acme.io/a b",
        "acme.io/a\"b",
    ] {
        assert!(check_domain_prefixed_path(bad).is_err(), "{bad:?} accepted");
    }
}
