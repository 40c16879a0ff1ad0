//! Every field path the reference (section A) names exists in the generated schema of its kind.
//! The lists in `tests/data/crd-fields/` are written from the reference, not from the code.

use std::fs;
use std::path::Path;

use serde_json::Value;

/// Follows a path such as `spec.resourceGroups[].flavors[].name` through a schema.
fn resolve<'a>(root: &'a Value, path: &str) -> Result<&'a Value, String> {
    let mut node = root;
    for segment in path.split('.') {
        let (name, list_depth) = match segment.find("[]") {
            Some(at) => (&segment[..at], segment[at..].matches("[]").count()),
            None => (segment, 0),
        };
        node = node
            .get("properties")
            .and_then(|p| p.get(name))
            .ok_or_else(|| format!("no property `{name}`"))?;
        for _ in 0..list_depth {
            node = node
                .get("items")
                .ok_or_else(|| format!("`{name}` is not a list"))?;
        }
    }
    Ok(node)
}

fn expected_paths(kind: &str) -> Vec<String> {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/crd-fields")
        .join(format!("{kind}.txt"));
    let text = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_reference_field_is_in_the_schema() {
    let crds = kuota::v1beta1::crds().unwrap();
    assert_eq!(crds.len(), 9);
    let mut missing = Vec::new();
    for one in &crds {
        let kind = &one.spec.names.kind;
        let paths = expected_paths(kind);
        assert!(!paths.is_empty(), "no field list for {kind}");
        let schema = serde_json::to_value(
            one.spec.versions[0]
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref())
                .unwrap(),
        )
        .unwrap();
        for path in paths {
            if let Err(why) = resolve(&schema, &path) {
                missing.push(format!("{kind}: {path}: {why}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "fields missing from the schemas:\n{}",
        missing.join("\n")
    );
}

#[test]
fn resolve_rejects_unknown_paths() {
    let schema = serde_json::json!({
        "properties": {"spec": {"properties": {"items": {"items": {"properties": {"a": {}}}}}}}
    });
    assert!(resolve(&schema, "spec.items[].a").is_ok());
    assert!(resolve(&schema, "spec.items[].b").is_err());
    assert!(resolve(&schema, "spec.items.a").is_err());
}
