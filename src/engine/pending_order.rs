//! A queue's waiting Workloads in the order the cycles try them, with each one's place in its
//! ClusterQueue and in its LocalQueue: what Kueue's visibility API answers
//! (`pendingworkloads` of a ClusterQueue or of a LocalQueue, with `offset` and `limit`).

use std::cmp::Reverse;
use std::collections::HashMap;

use super::model::{StopPolicy, Workload};
use super::scheduler::Engine;
use crate::api::ObjectKey;

/// The queue whose waiting Workloads are asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueRef<'a> {
    Cluster(&'a str),
    Local(&'a ObjectKey),
}

/// Which part of the list is asked for: `offset` entries skipped, at most `limit` returned. For a
/// LocalQueue both count that queue's entries only, as Kueue does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub offset: usize,
    pub limit: usize,
}

/// One waiting Workload and its places, counted from 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PendingPlace<'a> {
    pub workload: &'a Workload,
    pub position_in_cluster_queue: usize,
    pub position_in_local_queue: usize,
}

/// The queue asked for is not known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnknownQueue {
    ClusterQueue,
    LocalQueue,
}

impl Engine {
    /// The window of `queue`'s waiting Workloads. A ClusterQueue lists its waiting Workloads in
    /// the order its heads are taken (priority, then queue-order time), those found inadmissible
    /// included, and with them `backing_off`, Workloads the engine does not hold while they wait
    /// out a requeue backoff, each in its place (Kueue keeps them among the inadmissible ones); a
    /// LocalQueue lists its own among its ClusterQueue's, and an empty list when that
    /// ClusterQueue does not exist. A Workload that cannot queue as things stand (deactivated,
    /// its LocalQueue stopped) is not listed.
    pub fn pending_window<'a>(
        &'a mut self,
        queue: QueueRef<'_>,
        window: Window,
        backing_off: &'a [Workload],
    ) -> Result<Vec<PendingPlace<'a>>, UnknownQueue> {
        self.restructure();
        let compiled = &self.compiled;
        let (cq_name, local) = match queue {
            QueueRef::Cluster(name) => (name, None),
            QueueRef::Local(key) => match compiled.local_queues.get(key) {
                Some((cq, _)) => (cq.as_str(), Some(key)),
                None => return Err(UnknownQueue::LocalQueue),
            },
        };
        let Some(&cq) = compiled.cq_index.get(cq_name) else {
            return match local {
                Some(_) => Ok(Vec::new()),
                None => Err(UnknownQueue::ClusterQueue),
            };
        };
        let held = compiled.queues[cq as usize]
            .pending
            .iter()
            .map(|key| &compiled.workloads[key.index as usize].model);
        let in_queue = |w: &&Workload| {
            compiled
                .local_queues
                .get(&ObjectKey::new(w.namespace.as_str(), w.queue_name.as_str()))
                .is_some_and(|(queue_cq, stop)| {
                    queue_cq == cq_name && *stop == StopPolicy::None && w.active
                })
        };
        let mut waiting: Vec<&Workload> = backing_off.iter().filter(in_queue).collect();
        waiting.sort_by(|a, b| queue_order(a).cmp(&queue_order(b)));
        let order = merge(held, waiting);
        Ok(match local {
            None => cluster_window(order, window),
            Some(key) => local_window(order, key, window),
        })
    }
}

/// The order of the cycles' heads: higher priority first, then earlier queue-order time, then UID.
fn queue_order(w: &Workload) -> (Reverse<i32>, i64, &str) {
    (Reverse(w.priority), w.creation, w.uid.as_str())
}

/// `held` (in queue order already) and `waiting` (sorted the same way) as one ordered list.
fn merge<'a>(
    held: impl Iterator<Item = &'a Workload>,
    waiting: Vec<&'a Workload>,
) -> impl Iterator<Item = &'a Workload> {
    let mut held = held.peekable();
    let mut waiting = waiting.into_iter().peekable();
    std::iter::from_fn(move || match (held.peek(), waiting.peek()) {
        (Some(h), Some(w)) if queue_order(w) < queue_order(h) => waiting.next(),
        (Some(_), _) => held.next(),
        (None, _) => waiting.next(),
    })
}

/// Kueue's ClusterQueue answer: the window of the whole list, each entry's place in its
/// LocalQueue counted over the entries before it.
fn cluster_window<'a>(
    order: impl Iterator<Item = &'a Workload>,
    window: Window,
) -> Vec<PendingPlace<'a>> {
    let end = window.offset.saturating_add(window.limit);
    let mut seen_per_local: HashMap<(&str, &str), usize> = HashMap::new();
    let mut places = Vec::new();
    for (index, workload) in order.take(end).enumerate() {
        let seen = seen_per_local
            .entry((workload.namespace.as_str(), workload.queue_name.as_str()))
            .or_default();
        let position_in_local_queue = *seen;
        *seen += 1;
        if index >= window.offset {
            places.push(PendingPlace {
                workload,
                position_in_cluster_queue: index,
                position_in_local_queue,
            });
        }
    }
    places
}

/// Kueue's LocalQueue answer: the window of the queue's own entries.
fn local_window<'a>(
    order: impl Iterator<Item = &'a Workload>,
    key: &ObjectKey,
    window: Window,
) -> Vec<PendingPlace<'a>> {
    order
        .enumerate()
        .filter(|(_, w)| w.namespace == key.namespace && w.queue_name == key.name)
        .enumerate()
        .skip(window.offset)
        .take(window.limit)
        .map(
            |(position_in_local_queue, (index, workload))| PendingPlace {
                workload,
                position_in_cluster_queue: index,
                position_in_local_queue,
            },
        )
        .collect()
}

#[cfg(test)]
mod tests;
