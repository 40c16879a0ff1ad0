//! A call's meaning, read from its path and query: which queue, which version, which window.

use thiserror::Error;

use super::{GROUP, VERSIONS};
use crate::api::ObjectKey;
use crate::engine::pending_order::{QueueRef, Window};

/// `limit` when the query leaves it out (Kueue's `DefaultPendingWorkloadsLimit`).
pub const DEFAULT_LIMIT: i64 = 1000;
/// The most `limit` may be (Kueue's `MaxPendingWorkloadsLimit`).
pub const MAX_LIMIT: i64 = 100_000;

/// The queue a call asks about, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Queue {
    Cluster(String),
    Local(ObjectKey),
}

impl Queue {
    pub fn as_ref(&self) -> QueueRef<'_> {
        match self {
            Queue::Cluster(name) => QueueRef::Cluster(name),
            Queue::Local(key) => QueueRef::Local(key),
        }
    }
}

/// One `pendingworkloads` call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingRequest {
    /// One of [`VERSIONS`]; the answer is in it.
    pub version: &'static str,
    pub queue: Queue,
    pub window: Window,
}

/// Why a call cannot be answered as asked.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RequestError {
    #[error("the server could not find the requested resource")]
    NoSuchPath,
    #[error("query parameter {parameter}: {value:?} is not an integer")]
    NotAnInteger {
        parameter: &'static str,
        value: String,
    },
}

/// The version named in a path, as served.
pub fn served_version(version: &str) -> Option<&'static str> {
    VERSIONS.iter().copied().find(|v| *v == version)
}

/// Reads `/apis/<group>/<version>/clusterqueues/<cq>/pendingworkloads` and
/// `/apis/<group>/<version>/namespaces/<ns>/localqueues/<lq>/pendingworkloads` with their query.
pub fn parse(path: &str, query: Option<&str>) -> Result<PendingRequest, RequestError> {
    let rest = path
        .strip_prefix("/apis/")
        .and_then(|p| p.strip_prefix(GROUP))
        .and_then(|p| p.strip_prefix('/'))
        .ok_or(RequestError::NoSuchPath)?;
    let parts: Vec<&str> = rest.split('/').collect();
    let nonempty = |s: &str| !s.is_empty();
    let (version, queue) = match parts.as_slice() {
        [version, "clusterqueues", name, "pendingworkloads"] if nonempty(name) => {
            (*version, Queue::Cluster((*name).to_string()))
        }
        [
            version,
            "namespaces",
            namespace,
            "localqueues",
            name,
            "pendingworkloads",
        ] if nonempty(namespace) && nonempty(name) => {
            (*version, Queue::Local(ObjectKey::new(*namespace, *name)))
        }
        _ => return Err(RequestError::NoSuchPath),
    };
    let version = served_version(version).ok_or(RequestError::NoSuchPath)?;
    Ok(PendingRequest {
        version,
        queue,
        window: window(query)?,
    })
}

/// `offset` and `limit` as Kueue bounds them: a negative offset is 0, the limit is kept within
/// 0..=100000, and unknown parameters are ignored.
fn window(query: Option<&str>) -> Result<Window, RequestError> {
    let (mut offset, mut limit) = (0_i64, DEFAULT_LIMIT);
    for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let target = match key {
            "offset" => &mut offset,
            "limit" => &mut limit,
            _ => continue,
        };
        let parameter = if key == "offset" { "offset" } else { "limit" };
        *target = value.parse().map_err(|_| RequestError::NotAnInteger {
            parameter,
            value: value.to_string(),
        })?;
    }
    let bounded = |n: i64| usize::try_from(n.max(0)).unwrap_or(usize::MAX);
    Ok(Window {
        offset: bounded(offset),
        limit: bounded(limit.min(MAX_LIMIT)),
    })
}

#[cfg(test)]
mod tests;
