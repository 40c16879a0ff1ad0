//! Waiting for an object to reach a state, with a deadline and a failure message that names the
//! object, what was awaited and the last state seen.

use std::fmt::Debug;
use std::time::Duration;

use anyhow::{Result, bail};
use kube::{Api, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::time::{Instant, sleep};

const POLL: Duration = Duration::from_millis(200);

/// What an object looked like at the last poll, for a failure message.
enum Seen<K> {
    Missing,
    Error(kube::Error),
    Object(Box<K>),
}

/// Renders the object as YAML without managedFields, which only add noise to a failure.
pub fn describe<K: Serialize>(object: &K) -> String {
    let mut value = match serde_json::to_value(object) {
        Ok(value) => value,
        Err(e) => return format!("(cannot serialize: {e})"),
    };
    if let Some(meta) = value
        .get_mut("metadata")
        .and_then(serde_json::Value::as_object_mut)
    {
        meta.remove("managedFields");
    }
    yaml_serde::to_string(&value).unwrap_or_else(|e| format!("(cannot render: {e})"))
}

fn object_ref<K: Resource<DynamicType = ()>>(api: &Api<K>, name: &str) -> String {
    let kind = K::kind(&());
    match api.namespace() {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

fn last_state<K: Serialize>(seen: &Seen<K>) -> String {
    match seen {
        Seen::Missing => "the object does not exist".to_string(),
        Seen::Error(e) => format!("the last read failed: {e}"),
        Seen::Object(object) => format!("\n{}", describe(object.as_ref())),
    }
}

async fn poll<K>(api: &Api<K>, name: &str) -> Seen<K>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    match api.get_opt(name).await {
        Ok(Some(object)) => Seen::Object(Box::new(object)),
        Ok(None) => Seen::Missing,
        Err(e) => Seen::Error(e),
    }
}

/// Waits until `done` holds for the named object and returns the object as it was then.
pub async fn until<K, F>(
    api: &Api<K>,
    name: &str,
    what: &str,
    timeout: Duration,
    done: F,
) -> Result<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug,
    F: Fn(&K) -> bool,
{
    let deadline = Instant::now() + timeout;
    loop {
        let seen = match poll(api, name).await {
            Seen::Object(object) if done(&object) => return Ok(*object),
            other => other,
        };
        if Instant::now() >= deadline {
            bail!(
                "timed out after {timeout:?} waiting for {} to {what}; last state: {}",
                object_ref(api, name),
                last_state(&seen)
            );
        }
        sleep(POLL).await;
    }
}

/// Waits until the named object exists.
pub async fn until_exists<K>(api: &Api<K>, name: &str, timeout: Duration) -> Result<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug,
{
    until(api, name, "exist", timeout, |_| true).await
}

/// Checks that `holds` stays true for the named object during the whole `period`, and fails
/// with the first state in which it did not.
pub async fn holds_for<K, F>(
    api: &Api<K>,
    name: &str,
    what: &str,
    period: Duration,
    holds: F,
) -> Result<K>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug,
    F: Fn(&K) -> bool,
{
    let end = Instant::now() + period;
    loop {
        let seen = poll(api, name).await;
        let object = match seen {
            Seen::Object(object) if holds(&object) => object,
            other => bail!(
                "{} stopped being {what} before {period:?} passed; state: {}",
                object_ref(api, name),
                last_state(&other)
            ),
        };
        if Instant::now() >= end {
            return Ok(*object);
        }
        sleep(POLL).await;
    }
}

/// Waits until the named object no longer exists.
pub async fn until_absent<K>(api: &Api<K>, name: &str, timeout: Duration) -> Result<()>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Serialize + Debug,
{
    let deadline = Instant::now() + timeout;
    loop {
        let seen = poll(api, name).await;
        if matches!(seen, Seen::Missing) {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "timed out after {timeout:?} waiting for {} to be deleted; last state: {}",
                object_ref(api, name),
                last_state(&seen)
            );
        }
        sleep(POLL).await;
    }
}
