use super::*;

#[test]
fn splits_multi_document_yaml_and_skips_empty_documents() {
    let text = "kind: A\n---\n---\nkind: B\n";
    let docs = parse_text("f.yaml", text).unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[1].value["kind"], "B");
    assert_eq!(
        docs[1].origin,
        Origin {
            file: "f.yaml".into(),
            document: 3
        }
    );
}

#[test]
fn unpacks_lists_and_reads_json() {
    let text = r#"{"apiVersion":"v1","kind":"List","items":[{"kind":"A"},{"kind":"B"}]}"#;
    let docs = parse_text("f.json", text).unwrap();
    assert_eq!(
        docs.iter()
            .map(|d| d.value["kind"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["A", "B"]
    );
}

#[test]
fn names_the_document_with_a_syntax_error() {
    let err = parse_text("bad.yaml", "kind: A\n---\nkind: [unclosed\n").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("bad.yaml, document 2: not valid YAML or JSON"),
        "{err}"
    );
}
