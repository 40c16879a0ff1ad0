//! Fuzzing the webhook server: AdmissionReview and ConversionReview bodies for every path it
//! serves, made from valid ones and then damaged (fields replaced by values of the wrong type,
//! removed or added, numbers too large for any type, nesting deeper than the decoder allows,
//! strings of megabytes, bodies truncated or holding bytes that are not UTF-8, objects of another
//! kind than the path's), posted through the server's own routes ([`kuota::webhooks::routes`],
//! what it serves over HTTPS). Every call must be answered within [`LIMIT`], with a well-formed
//! review echoing the request's `uid`, or with a 4xx status and a reason.

mod fuzz_support;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use proptest::prelude::*;
use proptest::sample::Index;
use serde::Deserialize;
use serde_json::{Value, json};
use tower::ServiceExt;

use kuota::jobs::JobScope;
use kuota::webhooks::conversion::PATH as CONVERT;
use kuota::webhooks::{Endpoint, INTEGRATIONS, NamespaceView, PodSettings, Webhooks, routes};

/// The longest one call may take, in a debug build, for the largest bodies made here.
const LIMIT: Duration = Duration::from_secs(10);
/// controller-runtime's, and the server's, limit on a body.
const MAX_BODY: usize = 7 * 1024 * 1024;
const UID: &str = "705ab4f5-6393-11e8-b7cc-42010a800002";

/// The server's routes with every integration enabled, and the runtime they are called on.
fn server() -> &'static (tokio::runtime::Runtime, Router) {
    static SERVER: OnceLock<(tokio::runtime::Runtime, Router)> = OnceLock::new();
    SERVER.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let webhooks = Webhooks {
            frameworks: INTEGRATIONS.iter().map(|i| i.framework).collect(),
            pods: PodSettings {
                plain_pods: true,
                scope: JobScope::default(),
                namespaces: NamespaceView::default(),
            },
            ..Webhooks::default()
        };
        (runtime, routes(webhooks))
    })
}

/// Every path the server answers, the conversion webhook's last.
fn paths() -> &'static [String] {
    static PATHS: OnceLock<Vec<String>> = OnceLock::new();
    PATHS.get_or_init(|| {
        Endpoint::all()
            .into_iter()
            .map(Endpoint::path)
            .chain([CONVERT.to_owned()])
            .collect()
    })
}

/// Posts `body` to `path` as the API server does; the status and body of the answer, and how
/// long it took. Fails the test if the handler panics or does not answer within [`LIMIT`].
fn post(path: &str, body: Vec<u8>) -> (StatusCode, Vec<u8>, Duration) {
    let (runtime, router) = server();
    let request = Request::post(path)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_LENGTH, body.len())
        .body(Body::from(body))
        .expect("a request");
    let (answered, answer) = std::sync::mpsc::channel();
    let router = router.clone();
    let started = Instant::now();
    // On the runtime's threads, so that a handler that never returns fails the test here.
    runtime.spawn(async move {
        let response = router.oneshot(request).await.expect("routers do not fail");
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("an answer's body");
        let _ = answered.send((status, bytes.to_vec()));
    });
    match answer.recv_timeout(LIMIT) {
        Ok((status, bytes)) => (status, bytes, started.elapsed()),
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("{path}: no answer within {LIMIT:?}")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            panic!("{path}: the handler panicked")
        }
    }
}

/// The `request.uid` a body holds, as the server would read it, when it is a string.
fn sent_uid(body: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Sent {
        request: Option<SentRequest>,
    }
    #[derive(Deserialize)]
    struct SentRequest {
        uid: Option<Value>,
    }
    let sent: Sent = serde_json::from_slice(body).ok()?;
    sent.request?.uid?.as_str().map(str::to_owned)
}

/// Posts `body` to `path` and checks the answer: a review of the path's kind that echoes the
/// request's `uid`, or a 4xx with a reason. Returns the answer's status.
fn check(path: &str, body: Vec<u8>) -> StatusCode {
    let uid = sent_uid(&body);
    let size = body.len();
    let (status, answer, took) = post(path, body);
    assert!(took < LIMIT, "{path}: {took:?} for a body of {size} bytes");
    let text = String::from_utf8_lossy(&answer);
    if status != StatusCode::OK {
        assert!(
            status.is_client_error(),
            "{path}: {status} for a body of {size} bytes: {text}"
        );
        assert!(!text.trim().is_empty(), "{path}: {status} without a reason");
        return status;
    }
    let review: Value = serde_json::from_slice(&answer)
        .unwrap_or_else(|e| panic!("{path}: the answer is not JSON ({e}): {text}"));
    let Some(uid) = uid else {
        panic!("{path}: answered 200 to a body without a string request.uid: {text}")
    };
    assert_eq!(review["response"]["uid"], json!(uid), "{path}: {text}");
    if path == CONVERT {
        check_conversion(path, &review);
    } else {
        check_admission(path, &review);
    }
    status
}

fn check_admission(path: &str, review: &Value) {
    assert_eq!(
        review["apiVersion"], "admission.k8s.io/v1",
        "{path}: {review}"
    );
    assert_eq!(review["kind"], "AdmissionReview", "{path}: {review}");
    let response = &review["response"];
    let Some(allowed) = response["allowed"].as_bool() else {
        panic!("{path}: no response.allowed: {review}")
    };
    if !allowed {
        let code = response["status"]["code"].as_i64();
        assert!(matches!(code, Some(400 | 403)), "{path}: {review}");
        let message = response["status"]["message"].as_str().unwrap_or_default();
        assert!(
            !message.is_empty(),
            "{path}: a refusal without a reason: {review}"
        );
    }
    if let Some(patch) = response.get("patch") {
        assert!(allowed, "{path}: a patch on a refusal: {review}");
        assert_eq!(response["patchType"], "JSONPatch", "{path}: {review}");
        let bytes = STANDARD
            .decode(patch.as_str().unwrap_or_default())
            .unwrap_or_else(|e| panic!("{path}: the patch is not base64 ({e}): {review}"));
        let ops: Vec<Value> = serde_json::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{path}: the patch is not a JSON list ({e}): {review}"));
        for op in &ops {
            assert!(
                op["op"].is_string() && op["path"].is_string(),
                "{path}: a patch operation without op or path: {op}"
            );
        }
    }
}

fn check_conversion(path: &str, review: &Value) {
    assert_eq!(
        review["apiVersion"], "apiextensions.k8s.io/v1",
        "{path}: {review}"
    );
    assert_eq!(review["kind"], "ConversionReview", "{path}: {review}");
    let response = &review["response"];
    assert!(response["convertedObjects"].is_array(), "{path}: {review}");
    match response["result"]["status"].as_str() {
        Some("Success") => {}
        Some("Failure") => assert!(
            !response["result"]["message"]
                .as_str()
                .unwrap_or_default()
                .is_empty(),
            "{path}: a failure without a message: {review}"
        ),
        _ => panic!("{path}: no result status: {review}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Valid bodies, one per path.

fn pod_template() -> Value {
    json!({
        "metadata": {"labels": {"app": "fuzz"}, "annotations": {"note": "x"}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [{
                "name": "c",
                "image": "busybox",
                "resources": {
                    "requests": {"cpu": "1", "memory": "1Gi"},
                    "limits": {"cpu": "2", "memory": "2Gi"},
                },
            }],
            "initContainers": [{"name": "init", "image": "busybox",
                "resources": {"requests": {"cpu": "500m"}}}],
            "nodeSelector": {"zone": "a"},
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
            "priorityClassName": "high",
        },
    })
}

fn metadata(name: &str) -> Value {
    json!({
        "name": name,
        "namespace": "team",
        "uid": "0f1e2d3c-aaaa-bbbb-cccc-000000000001",
        "resourceVersion": "17",
        "generation": 2,
        "labels": {
            "kueue.x-k8s.io/queue-name": "user-queue",
            "kueue.x-k8s.io/priority-class": "high",
        },
        "annotations": {"kueue.x-k8s.io/pod-group-total-count": "2"},
    })
}

/// Kubeflow's replica specs under `field`, one per role.
fn replicas(field: &str, roles: &[&str]) -> Value {
    let specs: serde_json::Map<String, Value> = roles
        .iter()
        .map(|role| {
            (
                (*role).to_owned(),
                json!({"replicas": 2, "restartPolicy": "OnFailure", "template": pod_template()}),
            )
        })
        .collect();
    json!({field: specs, "runPolicy": {"suspend": false}})
}

fn ray_cluster_spec() -> Value {
    json!({
        "headGroupSpec": {"rayStartParams": {}, "template": pod_template()},
        "workerGroupSpecs": [{"groupName": "workers", "replicas": 2, "minReplicas": 1,
            "maxReplicas": 4, "rayStartParams": {}, "template": pod_template()}],
        "enableInTreeAutoscaling": false,
    })
}

/// A valid object of `kind` (lower-cased, as in the paths), with its API version and kind.
fn object(kind: &str) -> Value {
    let (api_version, kind_name, spec) = match kind {
        "clusterqueue" => (
            "kueue.x-k8s.io/v1beta2",
            "ClusterQueue",
            json!({
                "cohortName": "all",
                "namespaceSelector": {},
                "queueingStrategy": "BestEffortFIFO",
                "resourceGroups": [{
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [{"name": "default", "resources": [
                        {"name": "cpu", "nominalQuota": "10", "borrowingLimit": "5"},
                        {"name": "memory", "nominalQuota": "10Gi", "lendingLimit": "1Gi"},
                    ]}],
                }],
                "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority",
                    "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100}},
                "flavorFungibility": {"whenCanBorrow": "MayStopSearch", "whenCanPreempt": "TryNextFlavor"},
                "admissionChecksStrategy": {"admissionChecks": [{"name": "check",
                    "onFlavors": ["default"]}]},
                "fairSharing": {"weight": "1"},
            }),
        ),
        "cohort" => (
            "kueue.x-k8s.io/v1beta2",
            "Cohort",
            json!({
                "parentName": "root",
                "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "default",
                    "resources": [{"name": "cpu", "nominalQuota": "4"}]}]}],
                "fairSharing": {"weight": "2"},
            }),
        ),
        "resourceflavor" => (
            "kueue.x-k8s.io/v1beta2",
            "ResourceFlavor",
            json!({
                "nodeLabels": {"zone": "a"},
                "nodeTaints": [{"key": "t", "value": "v", "effect": "NoSchedule"}],
                "tolerations": [{"key": "t", "operator": "Equal", "value": "v",
                    "effect": "NoSchedule"}],
                "topologyName": "default",
            }),
        ),
        "workload" => (
            "kueue.x-k8s.io/v1beta2",
            "Workload",
            json!({
                "queueName": "user-queue",
                "priorityClassName": "high",
                "priority": 100,
                "active": true,
                "podSets": [{"name": "main", "count": 3, "minCount": 1,
                    "template": pod_template(),
                    "topologyRequest": {"preferred": "rack"}}],
            }),
        ),
        "job" => (
            "batch/v1",
            "Job",
            json!({"parallelism": 2, "completions": 4, "suspend": true,
                "completionMode": "Indexed", "template": pod_template()}),
        ),
        "pod" => {
            let mut pod = pod_template();
            pod["apiVersion"] = json!("v1");
            pod["kind"] = json!("Pod");
            pod["metadata"] = metadata("fuzz-pod");
            pod["metadata"]["labels"]["kueue.x-k8s.io/pod-group-name"] = json!("group");
            return pod;
        }
        "deployment" => (
            "apps/v1",
            "Deployment",
            json!({"replicas": 2, "selector": {"matchLabels": {"app": "fuzz"}},
                "template": pod_template()}),
        ),
        "statefulset" => (
            "apps/v1",
            "StatefulSet",
            json!({"replicas": 2, "serviceName": "s", "selector": {"matchLabels": {"app": "fuzz"}},
                "template": pod_template()}),
        ),
        "jobset" => (
            "jobset.x-k8s.io/v1alpha2",
            "JobSet",
            json!({"suspend": true, "replicatedJobs": [{"name": "workers", "replicas": 2,
                "template": {"spec": {"parallelism": 2, "completions": 2,
                    "template": pod_template()}}}]}),
        ),
        "pytorchjob" => (
            "kubeflow.org/v1",
            "PyTorchJob",
            replicas("pytorchReplicaSpecs", &["Master", "Worker"]),
        ),
        "tfjob" => (
            "kubeflow.org/v1",
            "TFJob",
            replicas("tfReplicaSpecs", &["Chief", "PS", "Worker"]),
        ),
        "xgboostjob" => (
            "kubeflow.org/v1",
            "XGBoostJob",
            replicas("xgbReplicaSpecs", &["Master", "Worker"]),
        ),
        "paddlejob" => (
            "kubeflow.org/v1",
            "PaddleJob",
            replicas("paddleReplicaSpecs", &["Master", "Worker"]),
        ),
        "jaxjob" => (
            "kubeflow.org/v1",
            "JAXJob",
            replicas("jaxReplicaSpecs", &["Worker"]),
        ),
        "mpijob" => (
            "kubeflow.org/v2beta1",
            "MPIJob",
            json!({"slotsPerWorker": 1, "runPolicy": {"suspend": true},
                "mpiReplicaSpecs": {
                    "Launcher": {"replicas": 1, "template": pod_template()},
                    "Worker": {"replicas": 2, "template": pod_template()}}}),
        ),
        "rayjob" => (
            "ray.io/v1",
            "RayJob",
            json!({"entrypoint": "python x.py", "suspend": true,
                "shutdownAfterJobFinishes": true, "rayClusterSpec": ray_cluster_spec()}),
        ),
        "raycluster" => ("ray.io/v1", "RayCluster", ray_cluster_spec()),
        "rayservice" => (
            "ray.io/v1",
            "RayService",
            json!({"rayClusterConfig": ray_cluster_spec()}),
        ),
        "appwrapper" => (
            "workload.codeflare.dev/v1beta2",
            "AppWrapper",
            json!({"suspend": true, "components": [{
                "template": {"apiVersion": "batch/v1", "kind": "Job",
                    "metadata": {"name": "inner"},
                    "spec": {"parallelism": 2, "template": pod_template()}},
                "podSets": [{"path": "template.spec.template", "replicas": 2}],
            }]}),
        ),
        "trainjob" => (
            "trainer.kubeflow.org/v1alpha1",
            "TrainJob",
            json!({"suspend": true, "trainer": {"numNodes": 2},
                "runtimeRef": {"apiGroup": "trainer.kubeflow.org",
                    "kind": "ClusterTrainingRuntime", "name": "torch"}}),
        ),
        "leaderworkerset" => (
            "leaderworkerset.x-k8s.io/v1",
            "LeaderWorkerSet",
            json!({"replicas": 2, "leaderWorkerTemplate": {"size": 3,
                "leaderTemplate": pod_template(), "workerTemplate": pod_template()}}),
        ),
        other => panic!("no object for kind {other}"),
    };
    json!({
        "apiVersion": api_version,
        "kind": kind_name,
        "metadata": metadata(&format!("fuzz-{kind}")),
        "spec": spec,
    })
}

/// Every kind with an object here, in the order of the paths.
fn kinds() -> Vec<&'static str> {
    let mut kinds = vec!["clusterqueue", "cohort", "resourceflavor", "workload"];
    kinds.extend(INTEGRATIONS.iter().map(|i| i.kind));
    kinds
}

/// The kind a path's webhook reads.
fn kind_of(path: &str) -> &'static str {
    kinds()
        .into_iter()
        .filter(|kind| path.ends_with(&format!("-{kind}")))
        .max_by_key(|kind| kind.len())
        .unwrap_or("workload")
}

/// An AdmissionReview of `operation` on `object` (and `old` on UPDATE).
fn admission_review(object: &Value, operation: &str, old: Option<&Value>) -> Value {
    let api_version = object["apiVersion"].as_str().unwrap_or("v1");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let kind = object["kind"].clone();
    let mut request = json!({
        "uid": UID,
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": "things"},
        "requestKind": {"group": group, "version": version, "kind": kind},
        "name": object["metadata"]["name"],
        "namespace": "team",
        "operation": operation,
        "userInfo": {"username": "system:admin", "groups": ["system:masters"]},
        "object": object,
        "dryRun": false,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
    });
    match operation {
        "UPDATE" => request["oldObject"] = old.cloned().unwrap_or_else(|| object.clone()),
        "DELETE" => {
            request["oldObject"] = object.clone();
            request["object"] = Value::Null;
        }
        _ => {}
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})
}

/// `object` as Kueue's v1beta1 serves it.
fn v1beta1(mut object: Value) -> Value {
    object["apiVersion"] = json!("kueue.x-k8s.io/v1beta1");
    if let Some(cohort) = object["spec"]
        .as_object_mut()
        .and_then(|spec| spec.remove("cohortName"))
    {
        object["spec"]["cohort"] = cohort;
    }
    object
}

/// A ConversionReview of the Kueue objects to `desired`.
fn conversion_review(desired: &str) -> Value {
    let objects: Vec<Value> = ["clusterqueue", "cohort", "resourceflavor", "workload"]
        .into_iter()
        .map(object)
        .map(|o| {
            if desired.ends_with("v1beta2") {
                v1beta1(o)
            } else {
                o
            }
        })
        .collect();
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": UID, "desiredAPIVersion": desired, "objects": objects},
    })
}

/// The valid body for `path`: a review of an object of the path's kind, or a conversion.
fn valid_body(path: &str, operation: &str) -> Value {
    if path == CONVERT {
        let desired = if operation == "CREATE" {
            "kueue.x-k8s.io/v1beta1"
        } else {
            "kueue.x-k8s.io/v1beta2"
        };
        return conversion_review(desired);
    }
    let new = object(kind_of(path));
    let mut old = new.clone();
    old["metadata"]["resourceVersion"] = json!("16");
    old["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = json!("other-queue");
    admission_review(&new, operation, Some(&old))
}

// ---------------------------------------------------------------------------------------------
// Damage.

/// Text put in place of a marker string once the body is serialised: JSON that no `Value` holds.
const RAW_MARKER: &str = "\u{1}raw:";

/// JSON text for the raw value numbered `n`: huge or tiny numbers, nesting past the decoder's
/// limit, megabyte strings, escapes of invalid code points.
fn raw_text(n: usize) -> String {
    let nest = |depth: usize, open: &str, close: &str| {
        format!("{}0{}", open.repeat(depth), close.repeat(depth))
    };
    match n % 16 {
        0 => "1e400".into(),
        1 => "-1e400".into(),
        2 => "18446744073709551616".into(),
        3 => "-9223372036854775809".into(),
        4 => "123456789012345678901234567890123456789012345678901234567890".into(),
        5 => "1.5e-400".into(),
        6 => nest(127, "[", "]"),
        7 => nest(129, "[", "]"),
        8 => nest(5_000, "[", "]"),
        9 => nest(300, "{\"a\":", "}"),
        10 => format!("\"{}\"", "a".repeat(1 << 20)),
        11 => format!("\"{}\"", "\\u00e9\\\"".repeat(1 << 15)),
        12 => "\"\\ud800\"".into(),
        13 => "\"\\u0000\\udfff x\"".into(),
        14 => format!("{{{}\"a\":1}}", "\"k\":1,".repeat(10_000)),
        _ => format!("[{}0]", "0,".repeat(100_000)),
    }
}

/// One change to a review, applied to its JSON before it is serialised.
#[derive(Clone, Debug)]
enum Change {
    /// Remove a node (an object's field, a list's item).
    Remove(Index),
    /// Add a field no schema knows to an object.
    Unknown(Index, Value),
    /// Replace a node with raw text no `Value` holds ([`raw_text`]).
    Raw(Index, usize),
}

fn changes() -> impl Strategy<Value = Vec<Change>> {
    let change = prop_oneof![
        3 => any::<Index>().prop_map(Change::Remove),
        1 => (any::<Index>(), fuzz_support::hostile_value())
            .prop_map(|(at, value)| Change::Unknown(at, value)),
        1 => (any::<Index>(), 0..16usize).prop_map(|(at, n)| Change::Raw(at, n)),
    ];
    prop::collection::vec(change, 0..5)
}

/// One change to the serialised body.
#[derive(Clone, Debug)]
enum Bytes {
    Truncate(Index),
    /// Bytes that are not UTF-8, inserted.
    Invalid(Index, Vec<u8>),
    /// A byte overwritten.
    Flip(Index, u8),
}

fn byte_changes() -> impl Strategy<Value = Vec<Bytes>> {
    let invalid = prop::sample::select(vec![
        vec![0xff],
        vec![0xc3, 0x28],
        vec![0xed, 0xa0, 0x80],
        vec![0xf4, 0x90, 0x80, 0x80],
        vec![0xe2, 0x82],
        vec![0x00],
    ]);
    let change = prop_oneof![
        any::<Index>().prop_map(Bytes::Truncate),
        (any::<Index>(), invalid).prop_map(|(at, bytes)| Bytes::Invalid(at, bytes)),
        (any::<Index>(), any::<u8>()).prop_map(|(at, byte)| Bytes::Flip(at, byte)),
    ];
    prop::collection::vec(change, 0..3)
}

/// The pointer `at` picks among the nodes of `value` (the root when there are none).
fn pick(value: &Value, at: &Index, objects_only: bool) -> String {
    let mut all = vec![String::new()];
    fuzz_support::pointers(value, "", &mut all);
    if objects_only {
        all.retain(|p| value.pointer(p).is_some_and(Value::is_object));
    }
    all.get(at.index(all.len().max(1)))
        .cloned()
        .unwrap_or_default()
}

/// The body `review` becomes with nodes replaced by hostile values, then `changes`, then `bytes`
/// applied.
fn damaged(
    review: Value,
    replaced: &[(Index, Value)],
    changes: &[Change],
    bytes: &[Bytes],
) -> Vec<u8> {
    let mut review = fuzz_support::mutate(&review, replaced);
    for change in changes {
        match change {
            Change::Remove(at) => {
                let pointer = pick(&review, at, false);
                if let Some((parent, key)) = pointer.rsplit_once('/') {
                    let key = key.replace("~1", "/").replace("~0", "~");
                    match review.pointer_mut(parent) {
                        Some(Value::Object(map)) => {
                            map.remove(&key);
                        }
                        Some(Value::Array(list)) => {
                            if let Ok(i) = key.parse::<usize>()
                                && i < list.len()
                            {
                                list.remove(i);
                            }
                        }
                        _ => {}
                    }
                }
            }
            Change::Unknown(at, value) => {
                let pointer = pick(&review, at, true);
                if let Some(Value::Object(map)) = review.pointer_mut(&pointer) {
                    map.insert("fuzzUnknownField".into(), value.clone());
                }
            }
            Change::Raw(at, n) => {
                let pointer = pick(&review, at, false);
                if let Some(node) = review.pointer_mut(&pointer) {
                    *node = Value::String(format!("{RAW_MARKER}{n}"));
                }
            }
        }
    }
    let mut text = review.to_string();
    for n in 0..16 {
        let marker = serde_json::to_string(&format!("{RAW_MARKER}{n}")).expect("a string");
        if text.contains(&marker) {
            text = text.replace(&marker, &raw_text(n));
        }
    }
    let mut body = text.into_bytes();
    for change in bytes {
        match change {
            Bytes::Truncate(at) => body.truncate(at.index(body.len() + 1)),
            Bytes::Invalid(at, invalid) => {
                let at = at.index(body.len() + 1);
                body.splice(at..at, invalid.iter().copied());
            }
            Bytes::Flip(at, byte) => {
                if !body.is_empty() {
                    let at = at.index(body.len());
                    body[at] = *byte;
                }
            }
        }
    }
    body
}

/// Nodes replaced by values of another type or extreme ones, in most cases.
fn replacements() -> impl Strategy<Value = Vec<(Index, Value)>> {
    prop::option::weighted(0.7, fuzz_support::mutations()).prop_map(Option::unwrap_or_default)
}

fn operation() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["CREATE", "UPDATE", "DELETE", "CONNECT"])
}

// ---------------------------------------------------------------------------------------------
// The properties, and each damage on every path.

proptest! {
    #[test]
    fn damaged_reviews_are_answered_on_every_path(
        path in any::<Index>(),
        operation in operation(),
        replaced in replacements(),
        changes in changes(),
        bytes in byte_changes(),
    ) {
        let path = &paths()[path.index(paths().len())];
        check(path, damaged(valid_body(path, operation), &replaced, &changes, &bytes));
    }

    #[test]
    fn reviews_of_another_kind_or_review_type_are_answered(
        path in any::<Index>(),
        other in any::<Index>(),
        operation in operation(),
        replaced in replacements(),
        changes in changes(),
    ) {
        let path = &paths()[path.index(paths().len())];
        let other = &paths()[other.index(paths().len())];
        check(path, damaged(valid_body(other, operation), &replaced, &changes, &[]));
    }

    #[test]
    fn arbitrary_bytes_are_refused_with_a_reason(
        path in any::<Index>(),
        body in prop::collection::vec(any::<u8>(), 0..512),
    ) {
        let path = &paths()[path.index(paths().len())];
        check(path, body);
    }
}

/// The valid bodies of the Kueue kinds' paths and the conversion's, and each kind of damage
/// applied to them once.
#[test]
fn every_kueue_path_answers_its_valid_review_and_each_damage() {
    answers_valid_and_damaged(|path| path.contains("kueue") || path == CONVERT);
}

/// The same for the job integrations' paths.
#[test]
fn every_job_path_answers_its_valid_review_and_each_damage() {
    answers_valid_and_damaged(|path| !path.contains("kueue") && path != CONVERT);
}

/// The valid body of every path `chosen` picks, and each kind of damage applied to it once.
fn answers_valid_and_damaged(chosen: impl Fn(&str) -> bool) {
    for path in paths().iter().filter(|p| chosen(p)) {
        for operation in ["CREATE", "UPDATE", "DELETE"] {
            let body = valid_body(path, operation).to_string().into_bytes();
            let status = check(path, body);
            assert_eq!(status, StatusCode::OK, "{path} {operation}");
        }
        let valid = valid_body(path, "UPDATE");
        let text = valid.to_string();
        let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
        cases.push((
            "truncated".into(),
            text.as_bytes()[..text.len() / 2].to_vec(),
        ));
        cases.push(("empty".into(), Vec::new()));
        for pointer in [
            "/request",
            "/request/uid",
            "/request/object",
            "/request/oldObject",
            "/request/operation",
            "/request/kind",
            "/request/desiredAPIVersion",
            "/request/objects",
            "/apiVersion",
        ] {
            let mut missing = valid.clone();
            let (parent, key) = pointer.rsplit_once('/').expect("a pointer");
            if let Some(Value::Object(map)) = missing.pointer_mut(parent) {
                map.remove(key);
            }
            cases.push((
                format!("without {pointer}"),
                missing.to_string().into_bytes(),
            ));
        }
        for (pointer, value) in [
            ("/request/uid", json!(7)),
            ("/request/uid", json!("")),
            ("/request/object", json!("a string")),
            ("/request/object", json!([1, 2])),
            ("/request/object/spec", json!(null)),
            ("/request/object/metadata", json!(1)),
            ("/request/object/kind", json!("Secret")),
            ("/request/objects", json!([{}, null, 1])),
            ("/request", json!([])),
            ("/kind", json!("ConversionReview")),
        ] {
            let mut wrong = valid.clone();
            if let Some(node) = wrong.pointer_mut(pointer) {
                *node = value.clone();
                cases.push((
                    format!("{pointer} = {value}"),
                    wrong.to_string().into_bytes(),
                ));
            }
        }
        for n in 0..16 {
            for pointer in [
                "/request/object/spec",
                "/request/uid",
                "/request/objects/0/spec",
            ] {
                let mut raw = valid.clone();
                if let Some(node) = raw.pointer_mut(pointer) {
                    *node = Value::String(format!("{RAW_MARKER}{n}"));
                    cases.push((format!("{pointer} = raw {n}"), damaged(raw, &[], &[], &[])));
                }
            }
        }
        let mut invalid_utf8 = text.clone().into_bytes();
        let at = text.find("fuzz-").unwrap_or(0);
        invalid_utf8.splice(at..at, [0xff, 0xfe]);
        cases.push(("invalid UTF-8 in a name".into(), invalid_utf8));
        let mut huge = valid.clone();
        if let Some(node) = huge.pointer_mut("/request/object/metadata/annotations") {
            *node = json!({"big": "x".repeat(MAX_BODY - text.len() - 4096)});
            cases.push((
                "a body just within the limit".into(),
                huge.to_string().into_bytes(),
            ));
        }
        cases.push(("a body over the limit".into(), vec![b' '; MAX_BODY + 1]));
        for (what, body) in cases {
            let size = body.len();
            let started = Instant::now();
            check(path, body);
            assert!(started.elapsed() < LIMIT, "{path}: {what} ({size} bytes)");
        }
    }
}

/// What [`check`] accepts must be able to fail: an answer without the request's uid is caught.
#[test]
fn the_uid_of_a_request_is_read_as_the_server_reads_it() {
    assert_eq!(
        sent_uid(br#"{"request": {"uid": "a", "object": {"x": [[[]]]}}}"#).as_deref(),
        Some("a")
    );
    assert_eq!(sent_uid(br#"{"request": {"uid": 7}}"#), None);
    assert_eq!(sent_uid(b"{\"request\": {\"uid\": \"a\""), None);
}
