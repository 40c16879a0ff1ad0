use super::*;

fn deep(open: &str, close: &str, levels: usize) -> String {
    format!("{}x{}", open.repeat(levels), close.repeat(levels))
}

#[test]
fn refuses_deep_flow_nesting_naming_document_and_line() {
    let text = format!("a: 1\n---\n---\n\nb: {}\n", deep("[", "]", 100_000));
    assert_eq!(
        check(&text),
        Err(TooDeep {
            document: 3,
            line: 5
        })
    );
    let mapping = format!("b: {}\n", deep("{a: ", "}", MAX_DEPTH + 1));
    assert_eq!(
        check(&mapping),
        Err(TooDeep {
            document: 1,
            line: 1
        })
    );
    let json = format!("{{\"a\":\n{}}}", deep("[", "]", 1_000));
    assert_eq!(check(&json).map_err(|e| e.line), Err(2));
}

#[test]
fn accepts_nesting_up_to_the_limit_and_balanced_siblings() {
    assert_eq!(check(&deep("[", "]", MAX_DEPTH)), Ok(()));
    let siblings = format!("[{}]", vec!["{a: [1]}"; 10_000].join(", "));
    assert_eq!(check(&siblings), Ok(()));
}

#[test]
fn brackets_inside_scalars_and_comments_do_not_nest() {
    let brackets = "[".repeat(MAX_DEPTH + 1);
    let texts = [
        format!("a: \"{brackets}\"\nb: '{brackets}'\n"),
        format!("a: 1 # {brackets}\n# {brackets}\n"),
        format!("a: x{brackets}\n"),
        format!("a: |\n  {brackets}\n   {brackets}\n\n  {brackets}\nb: 1\n"),
        format!("- >2-\n   {brackets}\n- x\n"),
        format!("a: plain\n  {brackets} continued\n"),
        format!("a: [\"{brackets}\", '{brackets}''']\n"),
        format!("a: \"x\\\"{brackets}\"\n"),
    ];
    for text in texts {
        assert_eq!(check(&text), Ok(()), "{text}");
        // The YAML parser agrees: nothing here nests.
        assert!(
            yaml_serde::from_str::<serde_json::Value>(&text).is_ok(),
            "{text}"
        );
    }
}

#[test]
fn quotes_that_do_not_open_a_scalar_hide_nothing() {
    let deep = deep("[", "]", MAX_DEPTH + 1);
    let texts = [
        // An apostrophe inside a plain scalar.
        format!("a: it's\nb: {deep}\n"),
        // A quote at the start of a block scalar's line, then the block ends.
        format!("a: |\n  'open\nb: {deep}\n"),
        // A quote continuing a plain scalar inside a flow collection.
        format!("a: [x\n 'y, {deep}]\n"),
        // A quote at the start of a line that no longer continues a plain scalar.
        format!("- a: x\n  b: {deep}\n"),
    ];
    for text in texts {
        assert!(check(&text).is_err(), "{text}");
        // The YAML parser agrees: it nests past its own limit.
        let parsed = yaml_serde::from_str::<serde_json::Value>(&text);
        assert!(
            parsed.is_err_and(|e| e.to_string().contains("recursion limit")),
            "{text}"
        );
    }
}
