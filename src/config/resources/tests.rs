//! Kueue's reading of `resources.transformations` (its defaulting and validation) and
//! `excludeResourcePrefixes`.

use crate::config::parse;
use crate::engine::quantity::Quantity;
use crate::engine::resource_counting::TransformationStrategy;

const HEADER: &str = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n";

fn q(text: &str) -> Quantity {
    text.parse().expect("a quantity")
}

#[test]
fn transformations_and_excluded_prefixes_reach_the_engine() {
    let text = format!(
        "{HEADER}resources:\n  excludeResourcePrefixes: [\"example.com/\"]\n  transformations:\n  \
         - input: nvidia.com/mig-1g.5gb\n    strategy: Replace\n    outputs:\n      \
         example.com/accelerator-memory: 5Ki\n      example.com/credits: 10\n  \
         - input: nvidia.com/gpumem\n    multiplyBy: nvidia.com/gpu\n    outputs:\n      \
         quota.example.com/overage: \"-1024\"\n"
    );
    let loaded = parse(&text, "", "x").unwrap_or_else(|e| panic!("{e}"));
    let counting = loaded.config.engine_config().counting;
    assert_eq!(counting.excluded_prefixes, ["example.com/"]);
    let mig = &counting.transformations["nvidia.com/mig-1g.5gb"];
    assert_eq!(mig.strategy, TransformationStrategy::Replace);
    assert_eq!(mig.outputs["example.com/accelerator-memory"], q("5Ki"));
    assert_eq!(
        mig.outputs["example.com/credits"],
        q("10"),
        "a number is a quantity"
    );
    let gpumem = &counting.transformations["nvidia.com/gpumem"];
    assert_eq!(
        gpumem.strategy,
        TransformationStrategy::Retain,
        "Kueue's default"
    );
    assert_eq!(gpumem.multiply_by.as_deref(), Some("nvidia.com/gpu"));
    assert_eq!(gpumem.outputs["quota.example.com/overage"], q("-1024"));
    assert!(
        !loaded.ignored.iter().any(|f| f.starts_with("resources.")),
        "both fields are acted on: {:?}",
        loaded.ignored
    );
}

#[test]
fn a_strategy_kueue_does_not_know_an_input_named_twice_and_a_bad_quantity_are_refused() {
    let text = format!(
        "{HEADER}resources:\n  transformations:\n  - input: a\n    strategy: Keep\n  \
         - input: b\n    outputs:\n      c: lots\n  - input: b\n"
    );
    let Err(error) = parse(&text, "", "x") else {
        panic!("accepted");
    };
    let error = error.to_string();
    for expected in [
        "resources.transformations[0].strategy",
        "\"Keep\"",
        "resources.transformations[1].outputs[c]",
        "resources.transformations[2].input",
    ] {
        assert!(error.contains(expected), "{expected} in {error}");
    }
}
