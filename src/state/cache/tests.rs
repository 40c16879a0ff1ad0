use super::*;

fn refused(name: &str) -> ModelError {
    ModelError::invalid("ClusterQueue", name, "spec.resourceGroups", "bad")
}

#[test]
fn apply_reports_changes_and_keeps_refused_objects_aside() {
    let mut cache: Cache<String, i32> = Cache::default();
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
    let mut cache: Cache<String, i32> = Cache::default();
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

/// A namespace's objects are one range of keys: a namespace whose name starts with another's, or
/// sorts between it and its names, is not part of it.
#[test]
fn the_objects_of_a_namespace_are_those_keyed_in_it() {
    let mut cache = Cache::default();
    for (namespace, name, value) in [
        ("team", "b", 2),
        ("team-a", "a", 3),
        ("team", "a", 1),
        ("tea", "z", 4),
        ("", "team", 5),
    ] {
        cache.apply(ObjectKey::new(namespace, name), Ok(value));
    }
    let team: Vec<(&str, i32)> = cache
        .in_namespace("team")
        .map(|(key, value)| (key.name.as_str(), *value))
        .collect();
    assert_eq!(team, [("a", 1), ("b", 2)]);
    assert_eq!(cache.in_namespace("te").count(), 0);
    assert!(cache.delete(&ObjectKey::new("team", "a")));
    assert_eq!(cache.in_namespace("team").count(), 1);
}
