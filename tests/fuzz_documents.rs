//! Fuzzing the document decoder (`kuota simulate`'s reading of YAML and JSON text): random and
//! mutated manifests never panic, every refusal names the file and the document, and the nesting
//! bound refuses only what the YAML parser refuses too.

use proptest::prelude::*;
use serde::Deserialize;

use kuota::cli::simulate::documents::parse_text;

const MANIFEST: &str = include_str!("../examples/tas.yaml");

/// Characters that carry meaning in YAML, and a few that do not.
const ALPHABET: &str = "[\\[\\]{}:,'\"#|>&*!?%@` \\n\\t\\r\\\\a-c0-9.-]";

/// Text of up to `most` characters of [`ALPHABET`].
fn text(most: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("{ALPHABET}{{0,{most}}}")).unwrap()
}

/// Whether the YAML parser, on its own, refuses some document of `text`.
fn parser_refuses(text: &str) -> bool {
    yaml_serde::Deserializer::from_str(text)
        .any(|document| serde_json::Value::deserialize(document).is_err())
}

fn check(text: &str) {
    match parse_text("fuzz.yaml", text) {
        Ok(_) => {}
        Err(error) => {
            let message = error.to_string();
            assert!(message.starts_with("fuzz.yaml, document "), "{message}");
            if message.contains("refused before parsing") {
                assert!(
                    parser_refuses(text),
                    "refused, yet the parser accepts: {text:?}"
                );
            }
        }
    }
}

/// An edit of a text: at a place, remove some characters, then insert some.
fn edits() -> impl Strategy<Value = Vec<(prop::sample::Index, usize, String)>> {
    prop::collection::vec((any::<prop::sample::Index>(), 0..4usize, text(6)), 1..8)
}

fn edit(text: &str, edits: &[(prop::sample::Index, usize, String)]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for (place, remove, insert) in edits {
        let at = place.index(chars.len() + 1);
        let end = (at + remove).min(chars.len());
        chars.splice(at..end, insert.chars());
    }
    chars.into_iter().collect()
}

proptest! {
    #[test]
    fn random_text_is_read_or_refused_by_file_and_document(text in text(300)) {
        check(&text);
    }

    #[test]
    fn edited_manifests_are_read_or_refused_by_file_and_document(edits in edits()) {
        check(&edit(MANIFEST, &edits));
    }

    #[test]
    fn deep_flow_nesting_is_refused_only_when_the_parser_refuses(
        before in text(40),
        opens in prop::collection::vec(prop::sample::select(vec!["[", "{", "{a: ", "[x, ", "- [", "'", "\"", "#", "\n", " "]), 100..220),
        after in text(40),
    ) {
        check(&format!("{before}{}{after}", opens.concat()));
    }
}
