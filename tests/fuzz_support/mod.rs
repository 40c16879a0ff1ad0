//! Shared by the fuzz tests: values a careless or hostile manifest may hold, and mutation of a
//! valid object at random places. Each fuzz test runs proptest's default number of cases (a few
//! seconds); `PROPTEST_CASES=100000 cargo test --test fuzz_<target>` runs longer.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Value, json};

/// A value to put where a manifest expects something else, or something valid but extreme.
pub fn hostile_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        prop::sample::select(vec![-1i64, 0, 1, 100_000, i64::from(i32::MAX), 1 << 40])
            .prop_map(Value::from),
        "[-+]?[0-9]{0,25}([.][0-9]{0,12})?(Ki|Mi|Ei|m|n|k|E|e[0-9]{1,3}|e-[0-9]{1,3})?"
            .prop_map(Value::from),
        "[a-z0-9./-]{0,20}".prop_map(Value::from),
        Just(json!({})),
        Just(json!([])),
        Just(json!([{}])),
        Just(json!({"name": ""})),
    ]
}

/// Up to four (place, value) mutations.
pub fn mutations() -> impl Strategy<Value = Vec<(Index, Value)>> {
    prop::collection::vec((any::<Index>(), hostile_value()), 1..5)
}

/// JSON pointers of every node of `value`, the root excepted, each after those below it.
pub fn pointers(value: &Value, at: &str, out: &mut Vec<String>) {
    let children: Vec<(String, &Value)> = match value {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| (k.replace('~', "~0").replace('/', "~1"), v))
            .collect(),
        Value::Array(list) => list
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
        _ => Vec::new(),
    };
    for (key, child) in children {
        let pointer = format!("{at}/{key}");
        pointers(child, &pointer, out);
        out.push(pointer);
    }
}

/// `seed` with each mutation replacing one of its nodes (chosen after the earlier mutations).
pub fn mutate(seed: &Value, mutations: &[(Index, Value)]) -> Value {
    let mut value = seed.clone();
    for (place, replacement) in mutations {
        let mut all = Vec::new();
        pointers(&value, "", &mut all);
        if all.is_empty() {
            break;
        }
        if let Some(node) = value.pointer_mut(&all[place.index(all.len())]) {
            *node = replacement.clone();
        }
    }
    value
}
