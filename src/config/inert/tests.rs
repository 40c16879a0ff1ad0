use super::*;

fn check<S: InertShape>(text: &str) -> Result<(), String> {
    serde_path_to_error::deserialize::<_, Inert<S>>(yaml_serde::Deserializer::from_str(text))
        .map(drop)
        .map_err(|e| format!("{} | {}", e.path(), e.inner()))
}

#[test]
fn accepts_every_documented_field() {
    let multi_kueue = "gcInterval: 1m\norigin: multikueue\nworkerLostTimeout: 15m\n\
        dispatcherName: kueue.x-k8s.io/multikueue-dispatcher-incremental\n\
        externalFrameworks:\n- name: Foo.v1.example.com\n\
        clusterProfile:\n  accessProviders:\n  - name: p\n    execConfig:\n      command: /bin/x\n      \
        args: [a]\n      env:\n      - {name: A, value: b}\n      apiVersion: client.authentication.k8s.io/v1\n      \
        installHint: none\n      provideClusterInfo: true\n      interactiveMode: Never\n\
        incrementalDispatcherConfig:\n  stepSize: 3\n";
    assert_eq!(check::<MultiKueue>(multi_kueue), Ok(()));
    let mappings = "- name: example.com/gpu\n  deviceClassNames: [gpu.example.com]\n";
    assert_eq!(check::<DeviceClassMappingsV1beta1>(mappings), Ok(()));
    let afs = "usageHalfLifeTime: 168h\nusageSamplingInterval: 5m\nresourceWeights:\n  cpu: 0\n  example.com/gpu: 1.5\n";
    assert_eq!(check::<AdmissionFairSharing>(afs), Ok(()));
}

#[test]
fn refuses_unknown_fields_with_their_path() {
    let error =
        check::<MultiKueue>("clusterProfile:\n  accessProviders:\n  - name: p\n    exec: {}\n")
            .unwrap_err();
    assert!(
        error.starts_with("clusterProfile.accessProviders[0].exec |"),
        "{error}"
    );
    assert!(
        error.contains("unknown field `exec`, expected one of `name`, `execConfig`"),
        "{error}"
    );
}

#[test]
fn refuses_fields_only_the_other_version_has() {
    assert!(check::<MultiKueueV1beta1>("incrementalDispatcherConfig: {stepSize: 3}\n").is_err());
    assert!(check::<CustomLabelsV1beta1>("- name: team\n  sourceKind: Workload\n").is_err());
    assert_eq!(
        check::<CustomLabels>("- name: team\n  sourceKind: Workload\n"),
        Ok(())
    );
}

#[test]
fn refuses_duplicates_and_wrong_types() {
    assert!(
        check::<QueueVisibility>("updateIntervalSeconds: 1\nupdateIntervalSeconds: 2\n")
            .unwrap_err()
            .contains("duplicate field `updateIntervalSeconds`")
    );
    assert!(check::<AdmissionFairSharing>("usageHalfLifeTime: maybe\n").is_err());
    assert!(check::<QueueVisibility>("updateIntervalSeconds: \"5\"\n").is_err());
    assert!(check::<MultiKueue>("gcInterval: 60\n").is_err());
    assert!(check::<MultiKueue>("gcInterval: 1 minute\n").is_err());
    assert!(check::<GroupKindConcurrency>("Pod: five\n").is_err());
}

#[test]
fn null_stands_for_the_zero_value() {
    assert_eq!(
        check::<QueueVisibility>("clusterQueues: null\nupdateIntervalSeconds: ~\n"),
        Ok(())
    );
    assert_eq!(check::<QueueVisibility>("clusterQueues:\n"), Ok(()));
}

#[test]
fn a_block_is_set_only_when_it_holds_something() {
    let set = |text: &str| {
        serde_path_to_error::deserialize::<_, Inert<DeviceClassMappingsV1beta1>>(
            yaml_serde::Deserializer::from_str(text),
        )
        .map(|block| block.is_set())
        .unwrap_or_else(|e| panic!("{e}"))
    };
    assert!(!set("[]\n"));
    assert!(!set("null\n"));
    assert!(set("- name: example.com/gpu\n"));
    let afs = |text: &str| {
        serde_path_to_error::deserialize::<_, Inert<AdmissionFairSharing>>(
            yaml_serde::Deserializer::from_str(text),
        )
        .map(|block| block.is_set())
        .unwrap_or_else(|e| panic!("{e}"))
    };
    assert!(!afs("{}\n"));
    assert!(afs("usageHalfLifeTime: 1h\n"));
}
