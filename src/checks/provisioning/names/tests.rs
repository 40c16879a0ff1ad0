use super::*;

#[test]
fn a_request_is_named_after_its_workload_check_and_attempt() {
    assert_eq!(request_name("job-a-1b2c3", "prov", 1), "job-a-1b2c3-prov-1");
    assert_eq!(request_name("wl", "check", 12), "wl-check-12");
    assert_eq!(
        pod_template_name("wl-check-2", "main"),
        "ppt-wl-check-2-main"
    );
}

#[test]
fn a_name_too_long_is_cut_and_ends_with_kueues_hash() {
    let workload = "w".repeat(200);
    let check = "c".repeat(60);
    let name = request_name(&workload, &check, 1);
    // The hash Kueue's limitObjectName gives this name (Go: sha1, hex, first five).
    let expected = format!("{}-1c504", &format!("{workload}-{check}-1")[..247]);
    assert_eq!(name, expected);
    assert_eq!(name.len(), 253);
}

#[test]
fn the_attempt_is_read_back_only_from_the_checks_own_requests() {
    assert_eq!(attempt_of("wl-prov-1", "wl", "prov"), Some(Attempt(1)));
    assert_eq!(attempt_of("wl-prov-17", "wl", "prov"), Some(Attempt(17)));
    // Another check, another Workload, or no number: not this check's request.
    assert_eq!(attempt_of("wl-prov2-1", "wl", "prov"), None);
    assert_eq!(attempt_of("wl2-prov-1", "wl", "prov"), None);
    assert_eq!(attempt_of("wl-prov-", "wl", "prov"), None);
    assert_eq!(attempt_of("wl-prov-1a", "wl", "prov"), None);
    // A number too big for an attempt counts as the first, as Kueue reads it.
    assert_eq!(
        attempt_of("wl-prov-99999999999", "wl", "prov"),
        Some(Attempt(1))
    );
    assert!(Attempt(2) > Attempt(1));
}
