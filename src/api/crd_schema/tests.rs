use super::*;

#[test]
fn int_or_string_union_becomes_the_extension() {
    let mut schema =
        json!({"anyOf": [{"type": "integer"}, {"type": "string"}], "description": "port"});
    normalise(&mut schema);
    assert_eq!(
        schema,
        json!({"x-kubernetes-int-or-string": true, "description": "port"})
    );
}

#[test]
fn optional_union_becomes_nullable() {
    let mut schema = json!({"anyOf": [{"type": "string", "enum": ["A"]}, {"enum": [null]}]});
    normalise(&mut schema);
    assert_eq!(
        schema,
        json!({"type": "string", "enum": ["A"], "nullable": true})
    );
}

#[test]
fn single_all_of_is_merged_and_untyped_nodes_get_types() {
    let mut schema = json!({
        "properties": {
            "ref": {"allOf": [{"properties": {"a": {"type": "string"}}}], "description": "d"},
            "list": {"items": {"type": "string"}},
            "raw": {"description": "any JSON"},
            "title": {"type": "string", "title": "kept as a property name"}
        }
    });
    normalise(&mut schema);
    assert_eq!(
        schema,
        json!({
            "type": "object",
            "properties": {
                "ref": {"type": "object", "properties": {"a": {"type": "string"}}, "description": "d"},
                "list": {"type": "array", "items": {"type": "string"}},
                "raw": {
                    "type": "object",
                    "description": "any JSON",
                    "x-kubernetes-preserve-unknown-fields": true
                },
                "title": {"type": "string"}
            }
        })
    );
}

#[test]
fn quantity_boilerplate_is_dropped() {
    let mut schema = json!({
        "x-kubernetes-int-or-string": true,
        "description": "Quantity is a fixed-point representation of a number. More text."
    });
    normalise(&mut schema);
    assert_eq!(schema, json!({"x-kubernetes-int-or-string": true}));
}

#[test]
fn kinds_without_required_fields_may_omit_spec() {
    let mut root =
        json!({"type": "object", "properties": {"spec": {"type": "object"}}, "required": ["spec"]});
    apply_kind_rules("ResourceFlavor", &mut root);
    assert!(root.get("required").is_none());
    let mut topology =
        json!({"type": "object", "properties": {"spec": {"type": "object"}}, "required": ["spec"]});
    apply_kind_rules("Topology", &mut topology);
    assert_eq!(topology["required"], json!(["spec"]));
    assert_eq!(
        topology["properties"]["metadata"],
        json!({"type": "object"})
    );
}

#[test]
fn workload_rules_guard_on_quota_reservation() {
    let rules = workload_rules();
    let rules = rules.as_array().unwrap();
    assert_eq!(rules.len(), 4);
    assert!(
        rules
            .iter()
            .all(|r| r["rule"].as_str().unwrap().contains("QuotaReserved")
                || r["rule"].as_str().unwrap().contains("Admitted"))
    );
}
