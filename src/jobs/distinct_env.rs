//! One environment variable per name in a pod set's containers, as Kueue's `SanitizePodSet`
//! leaves them. Kubernetes accepts a container listing a name twice (the last value wins when
//! the pod starts), but the Workload CRD declares `env` a list-map keyed by name, so the API
//! server refuses a Workload carrying both. The Workload keeps each name once, where it first
//! appears, with its last value; the Job itself keeps its list as written.

use std::collections::HashMap;

use k8s_openapi::api::core::v1::{Container, EnvVar, PodSpec};

/// `spec` with each container's and init container's `env` reduced to one variable per name.
pub(crate) fn distinct_env(spec: &mut PodSpec) {
    let init = spec.init_containers.iter_mut().flatten();
    for container in spec.containers.iter_mut().chain(init) {
        keep_last_per_name(container);
    }
}

fn keep_last_per_name(container: &mut Container) {
    let Some(env) = container.env.as_mut() else {
        return;
    };
    let mut distinct: Vec<EnvVar> = Vec::with_capacity(env.len());
    let mut place: HashMap<String, usize> = HashMap::with_capacity(env.len());
    for var in env.drain(..) {
        match place.get(&var.name).and_then(|&at| distinct.get_mut(at)) {
            Some(kept) => *kept = var,
            None => {
                place.insert(var.name.clone(), distinct.len());
                distinct.push(var);
            }
        }
    }
    *env = distinct;
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(value: serde_json::Value) -> PodSpec {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_name_listed_twice_keeps_its_first_place_and_its_last_value() {
        let mut twice = spec(json!({"containers": [{"name": "c", "env": [
            {"name": "A", "value": "first"},
            {"name": "B", "value": "kept"},
            {"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "A", "value": "last"},
        ]}]}));
        distinct_env(&mut twice);
        assert_eq!(
            twice,
            spec(json!({"containers": [{"name": "c", "env": [
                {"name": "A", "value": "last"},
                {"name": "B", "value": "kept"},
            ]}]}))
        );
    }

    #[test]
    fn init_containers_are_reduced_too_and_distinct_lists_are_left_as_they_are() {
        let mut both = spec(json!({
            "initContainers": [{"name": "i", "env": [
                {"name": "X", "value": "1"}, {"name": "X", "value": "2"}
            ]}],
            "containers": [{"name": "c", "env": [
                {"name": "B", "value": "b"}, {"name": "A", "value": "a"}
            ]}, {"name": "d"}]
        }));
        distinct_env(&mut both);
        assert_eq!(
            both,
            spec(json!({
                "initContainers": [{"name": "i", "env": [{"name": "X", "value": "2"}]}],
                "containers": [{"name": "c", "env": [
                    {"name": "B", "value": "b"}, {"name": "A", "value": "a"}
                ]}, {"name": "d"}]
            }))
        );
    }
}
