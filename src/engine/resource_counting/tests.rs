//! Kueue's counting of one pod's requests (`workload.NewInfo`'s cases for excluded prefixes and
//! transformations).

use super::*;

fn q(text: &str) -> Quantity {
    text.parse().expect("a quantity")
}

fn requests(pairs: &[(&str, &str)]) -> PodRequests {
    pairs.iter().map(|(n, v)| ((*n).to_owned(), q(v))).collect()
}

fn transformation(
    strategy: TransformationStrategy,
    multiply_by: Option<&str>,
    outputs: &[(&str, &str)],
) -> Transformation {
    Transformation {
        strategy,
        multiply_by: multiply_by.map(str::to_owned),
        outputs: requests(outputs),
    }
}

fn counting(transformations: Vec<(&str, Transformation)>) -> ResourceCounting {
    ResourceCounting {
        excluded_prefixes: Vec::new(),
        transformations: transformations
            .into_iter()
            .map(|(input, t)| (input.to_owned(), t))
            .collect(),
    }
}

use TransformationStrategy::{Replace, Retain};

#[test]
fn mig_and_gpu_requests_become_memory_and_credits() {
    let counting = counting(vec![
        (
            "nvidia.com/mig-1g.5gb",
            transformation(
                Replace,
                None,
                &[
                    ("example.com/accelerator-memory", "5Ki"),
                    ("example.com/credits", "10"),
                ],
            ),
        ),
        (
            "nvidia.com/mig-2g.10gb",
            transformation(
                Replace,
                None,
                &[
                    ("example.com/accelerator-memory", "10Ki"),
                    ("example.com/credits", "15"),
                ],
            ),
        ),
        (
            "nvidia.com/gpu",
            transformation(
                Retain,
                None,
                &[
                    ("example.com/accelerator-memory", "40Ki"),
                    ("example.com/credits", "100"),
                ],
            ),
        ),
        (
            "nvidia.com/vgpucores",
            transformation(
                Replace,
                Some("nvidia.com/vgpu"),
                &[("nvidia.com/total-vgpucores", "1")],
            ),
        ),
    ]);
    assert_eq!(
        counting.count(requests(&[
            ("nvidia.com/mig-1g.5gb", "2"),
            ("nvidia.com/mig-2g.10gb", "1"),
            ("cpu", "1")
        ])),
        requests(&[
            ("cpu", "1"),
            ("example.com/accelerator-memory", "20Ki"),
            ("example.com/credits", "35")
        ])
    );
    assert_eq!(
        counting.count(requests(&[("nvidia.com/gpu", "1"), ("cpu", "2")])),
        requests(&[
            ("cpu", "2"),
            ("example.com/accelerator-memory", "40Ki"),
            ("example.com/credits", "100"),
            ("nvidia.com/gpu", "1")
        ])
    );
    assert_eq!(
        counting.count(requests(&[
            ("nvidia.com/vgpu", "2"),
            ("nvidia.com/vgpucores", "20")
        ])),
        requests(&[
            ("nvidia.com/vgpu", "2"),
            ("nvidia.com/total-vgpucores", "40")
        ])
    );
}

/// A negative output is a per-unit allowance: what the request exceeds it by is charged, never
/// less than nothing.
#[test]
fn an_allowance_charges_only_what_exceeds_it() {
    let counting = counting(vec![
        (
            "nvidia.com/gpumem",
            transformation(
                Replace,
                Some("nvidia.com/gpu"),
                &[("quota.example.com/overage", "1")],
            ),
        ),
        (
            "nvidia.com/gpu",
            transformation(Retain, None, &[("quota.example.com/overage", "-1024")]),
        ),
    ]);
    for (gpumem, overage) in [("2048", "2048"), ("1024", "0"), ("512", "0")] {
        assert_eq!(
            counting.count(requests(&[
                ("nvidia.com/gpumem", gpumem),
                ("nvidia.com/gpu", "2")
            ])),
            requests(&[
                ("nvidia.com/gpu", "2"),
                ("quota.example.com/overage", overage)
            ]),
            "gpumem {gpumem}"
        );
    }
}

#[test]
fn an_allowance_never_reaches_a_request_made_under_its_name() {
    let counting = counting(vec![(
        "example.com/credit",
        transformation(Replace, None, &[("example.com/gpu", "-1")]),
    )]);
    assert_eq!(
        counting.count(requests(&[
            ("example.com/gpu", "8"),
            ("example.com/credit", "3")
        ])),
        requests(&[("example.com/gpu", "8")])
    );
}

#[test]
fn an_output_named_like_a_request_or_its_retained_input_is_added_to_it() {
    let to_gpu = counting(vec![(
        "example.com/credit",
        transformation(Replace, None, &[("example.com/gpu", "1")]),
    )]);
    assert_eq!(
        to_gpu.count(requests(&[
            ("example.com/gpu", "1"),
            ("example.com/credit", "1")
        ])),
        requests(&[("example.com/gpu", "2")])
    );
    let onto_itself = counting(vec![(
        "example.com/gpu",
        transformation(Retain, None, &[("example.com/gpu", "5")]),
    )]);
    assert_eq!(
        onto_itself.count(requests(&[("example.com/gpu", "1")])),
        requests(&[("example.com/gpu", "6")])
    );
}

/// The multiplier scales only what the outputs are computed from; Retain keeps the input as
/// requested.
#[test]
fn a_multiplier_scales_the_outputs_and_not_the_retained_input() {
    let by_gpu = counting(vec![(
        "example.com/gpumem",
        transformation(
            Retain,
            Some("example.com/gpu"),
            &[("example.com/gpumem-quota", "1")],
        ),
    )]);
    assert_eq!(
        by_gpu.count(requests(&[
            ("example.com/gpumem", "1024"),
            ("example.com/gpu", "2")
        ])),
        requests(&[
            ("example.com/gpu", "2"),
            ("example.com/gpumem", "1024"),
            ("example.com/gpumem-quota", "2048")
        ])
    );
    let by_cpu = counting(vec![(
        "example.com/gpumem",
        transformation(Retain, Some("cpu"), &[("example.com/gpumem-quota", "1")]),
    )]);
    assert_eq!(
        by_cpu.count(requests(&[("example.com/gpumem", "1024"), ("cpu", "500m")])),
        requests(&[
            ("cpu", "500m"),
            ("example.com/gpumem", "1024"),
            ("example.com/gpumem-quota", "512")
        ])
    );
    let absent_multiplier = counting(vec![(
        "example.com/gpumem",
        transformation(
            Replace,
            Some("example.com/gpu"),
            &[("example.com/gpumem-quota", "1")],
        ),
    )]);
    assert_eq!(
        absent_multiplier.count(requests(&[("example.com/gpumem", "1024")])),
        requests(&[("example.com/gpumem-quota", "1024")]),
        "a multiplier the pod does not request leaves the input as it is"
    );
}

#[test]
fn a_product_past_the_range_is_the_largest_quantity_not_a_negative_one() {
    let counting = counting(vec![(
        "example.com/credit",
        transformation(Replace, None, &[("example.com/gpu", "10000000000")]),
    )]);
    assert_eq!(
        counting.count(requests(&[("example.com/credit", "10000000000")])),
        requests(&[("example.com/gpu", "9223372036854775807")])
    );
}

#[test]
fn excluded_prefixes_drop_requests_before_they_are_transformed() {
    let counting = ResourceCounting {
        excluded_prefixes: vec!["example.com/".to_owned(), "ephemeral-".to_owned()],
        transformations: BTreeMap::from([(
            "example.com/credit".to_owned(),
            transformation(Replace, None, &[("vendor.io/gpu", "1")]),
        )]),
    };
    assert_eq!(
        counting.count(requests(&[
            ("cpu", "1"),
            ("ephemeral-storage", "1Gi"),
            ("example.com/credit", "3"),
            ("vendor.io/gpu", "1")
        ])),
        requests(&[("cpu", "1"), ("vendor.io/gpu", "1")])
    );
}

#[test]
fn requests_no_rule_names_count_as_themselves() {
    let counting = counting(vec![(
        "nvidia.com/gpu",
        transformation(Replace, None, &[("example.com/credits", "100")]),
    )]);
    let plain = requests(&[("cpu", "1"), ("memory", "1Gi")]);
    assert_eq!(counting.count(plain.clone()), plain);
    assert!(ResourceCounting::default().is_identity());
}
