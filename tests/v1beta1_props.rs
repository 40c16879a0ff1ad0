//! Property tests for the `v1beta1` conversion: for every kind, a generated `v1beta1` object
//! converted to `v1beta2` and back is the object again, and so is a generated `v1beta2` object
//! converted to `v1beta1` and back; converting the result once more changes nothing.

use kuota::engine::features::{Feature, FeatureGates};
use kuota::v1beta1::{Version, convert};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Builds an object from optional members, leaving the absent ones out.
fn members(pairs: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_string(), v?)))
            .collect::<Map<_, _>>(),
    )
}

fn name() -> impl Strategy<Value = String> {
    "[a-z]{1,3}(-[a-z0-9]{1,2})?"
}

/// Any small JSON value, for the fields both versions share.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        name().prop_map(Value::String),
        (0i64..1000).prop_map(Value::from),
        any::<bool>().prop_map(Value::Bool),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map(name(), inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn opt<S: Strategy>(s: S) -> impl Strategy<Value = Option<S::Value>> {
    prop::option::of(s)
}

fn names() -> impl Strategy<Value = Value> {
    prop::collection::vec(name(), 0..3).prop_map(|n| json!(n))
}

fn strategy() -> impl Strategy<Value = Value> {
    prop::collection::vec((name(), prop::collection::vec(name(), 0..2)), 1..3).prop_map(|rules| {
        let rules: Vec<Value> = rules
            .into_iter()
            .map(|(n, f)| {
                members(vec![
                    ("name", Some(json!(n))),
                    ("onFlavors", (!f.is_empty()).then(|| json!(f))),
                ])
            })
            .collect();
        json!({ "admissionChecks": rules })
    })
}

fn one_of(values: &'static [&'static str]) -> impl Strategy<Value = Value> {
    prop::sample::select(values).prop_map(|v| json!(v))
}

fn object(
    version: &str,
    kind: &str,
    spec: Option<Value>,
    status: Option<Value>,
    annotated: bool,
) -> Value {
    let mut metadata = json!({ "name": "obj", "namespace": "ns", "uid": "u-1" });
    if annotated {
        metadata["annotations"] = json!({ "team": "a" });
    }
    members(vec![
        (
            "apiVersion",
            Some(json!(format!("kueue.x-k8s.io/{version}"))),
        ),
        ("kind", Some(json!(kind))),
        ("metadata", Some(metadata)),
        ("spec", spec),
        ("status", status),
    ])
}

fn fair_sharing(v1beta1: bool) -> impl Strategy<Value = Value> {
    (0i64..100, opt(any_json())).prop_map(move |(share, afs)| {
        members(vec![
            ("weightedShare", Some(json!(share))),
            ("admissionFairSharingStatus", afs.filter(|_| v1beta1)),
        ])
    })
}

fn cluster_queue(v1: bool) -> impl Strategy<Value = Value> {
    let borrow: &'static [&'static str] = if v1 {
        &["Borrow", "MayStopSearch", "TryNextFlavor"]
    } else {
        &["MayStopSearch", "TryNextFlavor"]
    };
    let preempt: &'static [&'static str] = if v1 {
        &["Preempt", "MayStopSearch", "TryNextFlavor"]
    } else {
        &["MayStopSearch", "TryNextFlavor"]
    };
    let fungibility =
        (opt(one_of(borrow)), opt(one_of(preempt)), opt(any_json())).prop_map(|(b, p, x)| {
            members(vec![
                ("whenCanBorrow", b),
                ("whenCanPreempt", p),
                ("preference", x),
            ])
        });
    let spec = (
        opt(name().prop_map(Value::String)),
        opt(names()),
        opt(strategy()),
        opt(fungibility),
        opt(any_json()),
        opt(any_json()),
    )
        .prop_map(
            move |(cohort, checks, strategy, fungibility, policy, extra)| {
                let (cohort_key, checks) = if v1 {
                    ("cohort", checks)
                } else {
                    ("cohortName", None)
                };
                members(vec![
                    (cohort_key, cohort),
                    ("admissionChecks", checks),
                    ("admissionChecksStrategy", strategy),
                    ("flavorFungibility", fungibility),
                    ("concurrentAdmissionPolicy", policy.filter(|_| !v1)),
                    ("queueingStrategy", extra),
                ])
            },
        );
    let status =
        (opt(fair_sharing(v1)), opt(any_json()), opt(0i64..9)).prop_map(move |(fs, pending, n)| {
            members(vec![
                ("fairSharing", fs),
                ("pendingWorkloadsStatus", pending.filter(|_| v1)),
                ("pendingWorkloads", n.map(Value::from)),
            ])
        });
    (opt(spec), opt(status), any::<bool>()).prop_map(move |(spec, status, a)| {
        object(
            if v1 { "v1beta1" } else { "v1beta2" },
            "ClusterQueue",
            spec,
            status,
            a,
        )
    })
}

fn local_queue(v1: bool) -> impl Strategy<Value = Value> {
    let status = (opt(any_json()), opt(any_json()), opt(any_json())).prop_map(
        move |(usage, flavors, reservation)| {
            members(vec![
                (if v1 { "flavorUsage" } else { "flavorsUsage" }, usage),
                ("flavors", flavors.filter(|_| v1)),
                ("flavorsReservation", reservation),
            ])
        },
    );
    (opt(any_json()), opt(status), any::<bool>()).prop_map(move |(spec, status, a)| {
        object(
            if v1 { "v1beta1" } else { "v1beta2" },
            "LocalQueue",
            spec,
            status,
            a,
        )
    })
}

fn cohort(v1: bool) -> impl Strategy<Value = Value> {
    let status = opt(fair_sharing(v1)).prop_map(|fs| members(vec![("fairSharing", fs)]));
    (opt(any_json()), opt(status), any::<bool>()).prop_map(move |(spec, status, a)| {
        object(
            if v1 { "v1beta1" } else { "v1beta2" },
            "Cohort",
            spec,
            status,
            a,
        )
    })
}

fn admission_check(v1: bool) -> impl Strategy<Value = Value> {
    let spec = (name(), opt(0i64..60), opt(any_json())).prop_map(move |(c, retry, params)| {
        members(vec![
            ("controllerName", Some(json!(c))),
            ("retryDelayMinutes", retry.filter(|_| v1).map(Value::from)),
            ("parameters", params),
        ])
    });
    (opt(spec), opt(any_json()), any::<bool>()).prop_map(move |(spec, status, a)| {
        object(
            if v1 { "v1beta1" } else { "v1beta2" },
            "AdmissionCheck",
            spec,
            status,
            a,
        )
    })
}

fn same_in_both(kind: &'static str, v1: bool) -> impl Strategy<Value = Value> {
    (opt(any_json()), any::<bool>()).prop_map(move |(spec, a)| {
        object(if v1 { "v1beta1" } else { "v1beta2" }, kind, spec, None, a)
    })
}

/// A `v1beta1` domain list: every domain has a value per level.
fn domains() -> impl Strategy<Value = Value> {
    (1usize..3).prop_flat_map(|levels| {
        let domain = (prop::collection::vec(name(), levels), 1i64..4)
            .prop_map(|(values, count)| json!({ "values": values, "count": count }));
        let level_names = if levels == 1 {
            vec!["kubernetes.io/hostname"]
        } else {
            vec!["rack", "kubernetes.io/hostname"]
        };
        prop::collection::vec(domain, 0..6)
            .prop_map(move |d| json!({ "levels": level_names.clone(), "domains": d }))
    })
}

/// A `v1beta2` assignment in any valid slice shape, not only the one Kueue writes.
fn slices() -> impl Strategy<Value = Value> {
    (1usize..3).prop_flat_map(|levels| {
        let slice = (1usize..4).prop_flat_map(move |n| {
            let level = prop_oneof![
                name().prop_map(|u| json!({ "universal": u })),
                (opt(name().prop_map(Value::String)), opt(name().prop_map(Value::String)), prop::collection::vec("[a-z0-9]{0,2}", n))
                    .prop_map(|(p, s, roots)| json!({ "individual": members(vec![("prefix", p), ("suffix", s), ("roots", Some(json!(roots)))]) })),
            ];
            let counts = prop_oneof![
                (1i64..5).prop_map(|u| json!({ "universal": u })),
                prop::collection::vec(1i64..5, n).prop_map(|c| json!({ "individual": c })),
            ];
            (prop::collection::vec(level, levels), counts)
                .prop_map(move |(v, c)| json!({ "domainCount": n, "valuesPerLevel": v, "podCounts": c }))
        });
        let level_names: Vec<String> = (0..levels).map(|l| format!("level-{l}")).collect();
        prop::collection::vec(slice, 0..3).prop_map(move |s| json!({ "levels": level_names.clone(), "slices": s }))
    })
}

fn workload(v1: bool) -> impl Strategy<Value = Value> {
    let priority = if v1 {
        (
            opt(one_of(&[
                "kueue.x-k8s.io/workloadpriorityclass",
                "scheduling.k8s.io/priorityclass",
                "",
                "other",
            ])),
            opt(name().prop_map(Value::String)),
        )
            .prop_map(|(source, name)| {
                vec![("priorityClassSource", source), ("priorityClassName", name)]
            })
            .boxed()
    } else {
        opt((
            one_of(&["kueue.x-k8s.io", "scheduling.k8s.io", "other"]),
            one_of(&["WorkloadPriorityClass", "PriorityClass", "Other"]),
            name(),
        )
            .prop_map(|(g, k, n)| json!({ "group": g, "kind": k, "name": n })))
        .prop_map(|r| vec![("priorityClassRef", r)])
        .boxed()
    };
    let pod_set = (name(), opt(name().prop_map(Value::String)), opt(any_json())).prop_map(
        move |(n, required, constraints)| {
            let request = members(vec![
                ("required", required),
                (
                    "podsetSliceRequiredTopologyConstraints",
                    constraints.filter(|_| !v1),
                ),
            ]);
            json!({ "name": n, "count": 1, "topologyRequest": request })
        },
    );
    let spec = (
        priority,
        opt(any_json()),
        prop::collection::vec(pod_set, 0..3),
        opt(0i64..9),
    )
        .prop_map(move |(mut priority, gates, pod_sets, p)| {
            priority.push(("preemptionGates", gates.filter(|_| !v1)));
            priority.push(("podSets", Some(json!(pod_sets))));
            priority.push(("priority", p.map(Value::from)));
            members(priority)
        });
    let assignment = if v1 {
        domains().boxed()
    } else {
        slices().boxed()
    };
    let psa = (name(), opt(assignment))
        .prop_map(|(n, ta)| members(vec![("name", Some(json!(n))), ("topologyAssignment", ta)]));
    let admission = prop::collection::vec(psa, 0..3)
        .prop_map(|a| json!({ "clusterQueue": "cq", "podSetAssignments": a }));
    let status = (opt(admission), opt(0i64..10_000), opt(any_json())).prop_map(
        move |(admission, seconds, gates)| {
            let seconds_key = if v1 {
                "accumulatedPastExexcutionTimeSeconds"
            } else {
                "accumulatedPastExecutionTimeSeconds"
            };
            members(vec![
                ("admission", admission),
                (seconds_key, seconds.map(Value::from)),
                ("preemptionGates", gates.filter(|_| !v1)),
            ])
        },
    );
    (opt(spec), opt(status), any::<bool>()).prop_map(move |(spec, status, a)| {
        object(
            if v1 { "v1beta1" } else { "v1beta2" },
            "Workload",
            spec,
            status,
            a,
        )
    })
}

fn any_object(v1: bool) -> impl Strategy<Value = Value> {
    prop_oneof![
        cluster_queue(v1).boxed(),
        local_queue(v1).boxed(),
        cohort(v1).boxed(),
        admission_check(v1).boxed(),
        workload(v1).boxed(),
        same_in_both("ResourceFlavor", v1).boxed(),
        same_in_both("Topology", v1).boxed(),
        same_in_both("WorkloadPriorityClass", v1).boxed(),
        same_in_both("ProvisioningRequestConfig", v1).boxed(),
    ]
}

fn gates() -> impl Strategy<Value = FeatureGates> {
    any::<bool>().prop_map(|on| {
        FeatureGates::default().with(Feature::TASAssignmentsEncodingByHostnamePrefix, on)
    })
}

fn to(object: &Value, version: Version, gates: &FeatureGates) -> Result<Value, TestCaseError> {
    convert(object.clone(), version, gates).map_err(|e| TestCaseError::fail(e.to_string()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn v1beta1_to_v1beta2_and_back_is_the_object(object in any_object(true), gates in gates()) {
        let up = to(&object, Version::V1beta2, &gates)?;
        prop_assert_eq!(up["apiVersion"].as_str(), Some("kueue.x-k8s.io/v1beta2"));
        let back = to(&up, Version::V1beta1, &gates)?;
        prop_assert_eq!(&back, &object);
        prop_assert_eq!(to(&back, Version::V1beta2, &gates)?, up);
    }

    #[test]
    fn v1beta2_to_v1beta1_and_back_is_the_object(object in any_object(false), gates in gates()) {
        let down = to(&object, Version::V1beta1, &gates)?;
        prop_assert_eq!(down["apiVersion"].as_str(), Some("kueue.x-k8s.io/v1beta1"));
        let back = to(&down, Version::V1beta2, &gates)?;
        prop_assert_eq!(&back, &object);
        prop_assert_eq!(to(&back, Version::V1beta1, &gates)?, down);
    }
}
