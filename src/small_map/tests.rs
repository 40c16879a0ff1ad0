use std::collections::BTreeMap;

use super::*;

fn entries(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn iterates_in_key_order_after_inserts_in_any_order() {
    let mut map = SmallMap::new();
    for (k, v) in entries(&[("memory", "b"), ("cpu", "a"), ("pods", "c"), ("gpu", "d")]) {
        assert_eq!(map.insert(k, v), None);
    }
    let keys: Vec<&str> = map.keys().map(String::as_str).collect();
    assert_eq!(keys, ["cpu", "gpu", "memory", "pods"]);
    let values: Vec<&str> = map.values().map(String::as_str).collect();
    assert_eq!(values, ["a", "d", "b", "c"]);
    assert_eq!(map.len(), 4);
}

#[test]
fn insert_replaces_the_value_and_returns_the_old_one() {
    let mut map = SmallMap::from([("cpu".to_string(), 1), ("memory".to_string(), 2)]);
    assert_eq!(map.insert("cpu".to_string(), 5), Some(1));
    assert_eq!(map.len(), 2);
    assert_eq!(map.get("cpu"), Some(&5));
    assert_eq!(map["memory"], 2);
    assert!(map.contains_key("memory"));
    assert!(!map.contains_key("pods"));
    assert_eq!(map.get("pods"), None);
}

#[test]
fn insert_leaves_no_spare_room() {
    let mut map = SmallMap::new();
    for i in [3, 1, 2] {
        map.insert(i, i);
        assert_eq!(map.entries.capacity(), map.len());
    }
}

#[test]
fn collecting_keeps_the_last_value_of_a_repeated_key_as_a_btree_map_does() {
    let pairs = entries(&[("b", "1"), ("a", "2"), ("b", "3"), ("c", "4"), ("a", "5")]);
    let small: SmallMap<String, String> = pairs.iter().cloned().collect();
    let btree: BTreeMap<String, String> = pairs.into_iter().collect();
    assert!(small.iter().eq(btree.iter()));
    assert_eq!(small.len(), 3);
    assert_eq!(small.entries.capacity(), small.len());
}

#[test]
fn serializes_byte_for_byte_as_a_btree_map() {
    let pairs = entries(&[("pods", "1"), ("cpu", "2"), ("memory", "3Gi")]);
    let small: SmallMap<String, String> = pairs.iter().cloned().collect();
    let btree: BTreeMap<String, String> = pairs.into_iter().collect();
    let json = serde_json::to_string(&small).unwrap();
    assert_eq!(json, serde_json::to_string(&btree).unwrap());
    assert_eq!(json, r#"{"cpu":"2","memory":"3Gi","pods":"1"}"#);
    let back: SmallMap<String, String> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, small);
    assert_eq!(
        serde_json::to_string(&SmallMap::<String, String>::new()).unwrap(),
        "{}"
    );
}

#[test]
fn deserializing_a_repeated_key_keeps_the_last_value() {
    let json = r#"{"memory":"1","cpu":"2","memory":"3"}"#;
    let small: SmallMap<String, String> = serde_json::from_str(json).unwrap();
    let btree: BTreeMap<String, String> = serde_json::from_str(json).unwrap();
    assert!(small.iter().eq(btree.iter()));
    assert_eq!(small.get("memory").map(String::as_str), Some("3"));
    assert_eq!(small.entries.capacity(), small.len());
}

#[test]
fn maps_with_the_same_entries_are_equal_whatever_order_built_them() {
    let forward: SmallMap<String, String> =
        entries(&[("a", "1"), ("b", "2")]).into_iter().collect();
    let mut backward = SmallMap::new();
    backward.insert("b".to_string(), "2".to_string());
    backward.insert("a".to_string(), "1".to_string());
    assert_eq!(forward, backward);
    backward.insert("a".to_string(), "9".to_string());
    assert_ne!(forward, backward);
}

#[test]
fn deserializing_refuses_what_is_not_an_object() {
    assert!(serde_json::from_str::<SmallMap<String, String>>(r#"["cpu"]"#).is_err());
    assert!(serde_json::from_str::<SmallMap<String, i32>>(r#"{"cpu":"x"}"#).is_err());
}

#[test]
fn json_schema_is_the_btree_maps() {
    let small = serde_json::to_value(schemars::schema_for!(SmallMap<String, String>)).unwrap();
    let btree = serde_json::to_value(schemars::schema_for!(BTreeMap<String, String>)).unwrap();
    assert_eq!(small, btree);
    let small = serde_json::to_value(schemars::schema_for!(SmallMap<String, i64>)).unwrap();
    let btree = serde_json::to_value(schemars::schema_for!(BTreeMap<String, i64>)).unwrap();
    assert_eq!(small, btree);
}

/// As a field, where the CRDs meet it: inlined as a `BTreeMap` is, not a reference to a definition.
#[test]
fn json_schema_of_a_field_is_the_btree_maps() {
    let mut generator = schemars::SchemaGenerator::default();
    let small = generator.subschema_for::<SmallMap<String, String>>();
    let btree = generator.subschema_for::<BTreeMap<String, String>>();
    assert_eq!(small, btree);
    assert_eq!(small.get("type"), Some(&serde_json::json!("object")));
    assert!(generator.definitions().is_empty());
}

#[test]
fn debug_prints_a_map_as_a_btree_map_does() {
    let pairs = entries(&[("memory", "1"), ("cpu", "2")]);
    let small: SmallMap<String, String> = pairs.iter().cloned().collect();
    let btree: BTreeMap<String, String> = pairs.into_iter().collect();
    assert_eq!(format!("{small:?}"), format!("{btree:?}"));
}
