use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::*;
use crate::api::WorkloadPriorityClassFields;

#[test]
fn from_objects_records_values_and_the_global_default() {
    let wpc = WorkloadPriorityClass::new(
        "high",
        WorkloadPriorityClassFields {
            value: 1000,
            description: None,
        },
    );
    let pc = |name: &str, value, global_default| PriorityClass {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        value,
        global_default,
        ..PriorityClass::default()
    };
    let classes = [pc("batch", 10, None), pc("standard", 5, Some(true))];
    let lookup = PriorityLookup::from_objects([&wpc], &classes);
    assert_eq!(lookup.workload_priority_class("high"), Some(1000));
    assert_eq!(lookup.workload_priority_class("batch"), None);
    assert_eq!(lookup.priority_class("batch"), Some(10));
    assert_eq!(lookup.global_default(), Some(("standard", 5)));
}

#[test]
fn lowest_global_default_wins() {
    let mut lookup = PriorityLookup::new();
    lookup.add_priority_class("b", 7, true);
    lookup.add_priority_class("a", 3, true);
    lookup.add_priority_class("c", 3, true);
    assert_eq!(lookup.global_default(), Some(("a", 3)));
    lookup.add_priority_class("a", 3, false);
    assert_eq!(lookup.global_default(), Some(("c", 3)));
}

#[test]
fn no_global_default_when_none_is_marked() {
    let mut lookup = PriorityLookup::new();
    lookup.add_priority_class("batch", 10, false);
    assert_eq!(lookup.global_default(), None);
}
