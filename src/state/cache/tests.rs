use super::*;

fn refused(name: &str) -> ModelError {
    ModelError::invalid("ClusterQueue", name, "spec.resourceGroups", "bad")
}

#[test]
fn apply_reports_changes_and_keeps_refused_objects_aside() {
    let mut cache = Cache::default();
    assert_eq!(cache.apply("a".into(), Ok(1)), Applied::Changed(&1));
    assert_eq!(cache.apply("a".into(), Ok(1)), Applied::Unchanged);
    assert_eq!(cache.apply("a".into(), Ok(2)), Applied::Changed(&2));
    assert_eq!(
        cache.apply("a".into(), Err(refused("a"))),
        Applied::SetAside { had_valid: true }
    );
    assert_eq!(cache.get("a"), None);
    assert_eq!(
        cache
            .set_aside()
            .map(|(k, e)| (k.as_str(), e.clone()))
            .collect::<Vec<_>>(),
        vec![("a", refused("a"))]
    );
    assert_eq!(cache.apply("a".into(), Ok(3)), Applied::Changed(&3));
    assert_eq!(cache.set_aside().count(), 0);
}

#[test]
fn a_full_list_removes_what_it_does_not_name() {
    let mut cache = Cache::default();
    cache.apply("a".into(), Ok(1));
    cache.apply("b".into(), Err(refused("b")));
    cache.apply("c".into(), Ok(3));
    let listed = BTreeSet::from(["c".to_string()]);
    let mut missing = cache.missing_from(&listed);
    missing.sort();
    assert_eq!(missing, vec!["a".to_string(), "b".to_string()]);
    assert!(cache.delete("a"));
    assert!(!cache.delete("b"));
    assert_eq!(cache.iter().count(), 1);
    assert_eq!(cache.set_aside().count(), 0);
}
