use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::engine::features::FeatureGates;

/// One row of `docs/configuration.md`'s table: the handling and the default it states.
struct Row {
    handling: String,
    default: String,
}

/// The rows of the table whose first cell is a field (`` `path` ``) or a gate
/// (``gate `Name` ``), by that name; a name given twice fails.
fn documented() -> (BTreeMap<String, Row>, BTreeMap<String, Row>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md");
    let text = std::fs::read_to_string(path).unwrap();
    let (mut fields, mut gates) = (BTreeMap::new(), BTreeMap::new());
    for line in text.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        let [name, handling, default, ..] = cells[..] else {
            continue;
        };
        let row = Row {
            handling: handling.to_string(),
            default: default.to_string(),
        };
        let (table, name) = match name.strip_prefix("gate ") {
            Some(gate) => (&mut gates, gate),
            None => (&mut fields, name),
        };
        let Some(name) = name.split('`').nth(1) else {
            continue;
        };
        assert!(
            table.insert(name.to_string(), row).is_none(),
            "{name} documented twice"
        );
    }
    (fields, gates)
}

#[test]
fn the_documented_table_is_the_record_of_every_field() {
    let (documented, _) = documented();
    let recorded: BTreeSet<&str> = FIELDS.iter().map(|(path, _)| *path).collect();
    assert_eq!(recorded.len(), FIELDS.len(), "a field is recorded twice");
    let documented_names: BTreeSet<&str> = documented.keys().map(String::as_str).collect();
    assert_eq!(documented_names, recorded);
    for (path, handling) in FIELDS {
        assert_eq!(documented[*path].handling, handling.label(), "{path}");
    }
}

#[test]
fn the_documented_table_is_the_record_of_every_gate() {
    let (_, documented) = documented();
    let known: BTreeSet<String> = Feature::all().map(|f| f.to_string()).collect();
    let documented_names: BTreeSet<String> = documented.keys().cloned().collect();
    assert_eq!(documented_names, known);
    let defaults = FeatureGates::default();
    for feature in Feature::all() {
        let row = &documented[feature.name()];
        assert_eq!(row.handling, gate(feature).label(), "{feature}");
        assert_eq!(
            row.default,
            format!("`{}`", defaults.enabled(feature)),
            "{feature}"
        );
    }
}

#[test]
fn fields_the_loader_looks_up_are_recorded_as_refused_or_ignored() {
    use crate::config::types::FileConfiguration;
    let text = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n\
        multiKueue: {gcInterval: 1m}\nadmissionFairSharing: {usageHalfLifeTime: 1h}\n\
        pprofBindAddress: :8082\ncontroller: {groupKindConcurrency: {Pod: 5}}\n\
        metrics: {customLabels: [{name: team}]}\n\
        resources: {excludeResourcePrefixes: [x], transformations: [{input: cpu}], \
        deviceClassMappings: [{name: gpu}]}\n";
    let file: FileConfiguration = yaml_serde::from_str(text).unwrap_or_else(|e| panic!("{e}"));
    let set = file.set_unhandled_fields();
    assert_eq!(set.len(), 6);
    for path in set
        .into_iter()
        .chain(["queueVisibility", "integrations.podOptions"])
    {
        assert!(
            matches!(field(path), Some(Handling::Refused(_) | Handling::Harmless)),
            "{path}"
        );
    }
}
