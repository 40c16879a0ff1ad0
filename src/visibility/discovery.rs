//! The discovery documents of the visibility group, in the legacy form the aggregator reads
//! from an aggregated server that does not offer the aggregated one: `/apis`, `/apis/<group>`
//! and `/apis/<group>/<version>`, listing what Kueue's server lists (the parents `clusterqueues`
//! and `localqueues` with no verb, and their `pendingworkloads` with `get`).

use serde_json::{Value, json};

use super::{GROUP, VERSIONS};

fn versions() -> Vec<Value> {
    VERSIONS
        .iter()
        .map(|v| json!({"groupVersion": format!("{GROUP}/{v}"), "version": v}))
        .collect()
}

fn group() -> Value {
    let versions = versions();
    json!({
        "name": GROUP,
        "versions": versions,
        "preferredVersion": versions[0],
    })
}

/// `/apis`.
pub fn group_list() -> Value {
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [group()]})
}

/// `/apis/<group>`.
pub fn api_group() -> Value {
    let mut group = group();
    group["kind"] = json!("APIGroup");
    group["apiVersion"] = json!("v1");
    group
}

/// `/apis/<group>/<version>`.
pub fn resource_list(version: &str) -> Value {
    let resource = |name: &str, singular: &str, namespaced: bool, verbs: &[&str]| {
        json!({
            "name": name,
            "singularName": singular,
            "namespaced": namespaced,
            "kind": "PendingWorkloadsSummary",
            "verbs": verbs,
        })
    };
    json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": format!("{GROUP}/{version}"),
        "resources": [
            resource("clusterqueues", "clusterqueue", false, &[]),
            resource("clusterqueues/pendingworkloads", "", false, &["get"]),
            resource("localqueues", "localqueue", true, &[]),
            resource("localqueues/pendingworkloads", "", true, &["get"]),
        ],
    })
}
