//! Calls of the visibility API, answered from the engine between passes: every replica keeps
//! its caches and engine current from the watches, so a follower answers as the leader does
//! (the leader's answer also reflects decisions it has made and not yet written, as Kueue's
//! does).

use tokio::sync::oneshot;

use super::{AdmissionLoop, fallback};
use crate::api::ObjectKey;
use crate::engine::pending_order::UnknownQueue;
use crate::visibility::api::{PendingMeta, PendingWorkload, position};
use crate::visibility::request::PendingRequest;

/// Why a call got no list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PendingError {
    /// Not every cache has its first full list yet.
    NotReady,
    Unknown(UnknownQueue),
}

/// One call and where its answer goes.
#[derive(Debug)]
pub struct PendingQuery {
    pub request: PendingRequest,
    pub reply: oneshot::Sender<Result<Vec<PendingWorkload>, PendingError>>,
}

impl AdmissionLoop {
    /// Answers `query` from the engine as it stands; marks nothing for the next pass.
    pub fn answer_pending(&mut self, query: PendingQuery) {
        let answer = if self.synced() {
            self.pending(&query.request)
        } else {
            Err(PendingError::NotReady)
        };
        // The caller may have given up (its client went away); nothing to do then.
        let _ = query.reply.send(answer);
    }

    fn pending(&mut self, request: &PendingRequest) -> Result<Vec<PendingWorkload>, PendingError> {
        // Kept out of the engine while they wait out a requeue backoff, yet pending in Kueue's
        // sense: listed in their places.
        let backing_off: Vec<_> = self
            .backoff
            .keys()
            .filter_map(|key| self.workloads.get(key))
            .filter_map(|workload| self.state.workload_model(workload, fallback()).ok())
            .collect();
        let places = self
            .state
            .engine()
            .pending_window(request.queue.as_ref(), request.window, &backing_off)
            .map_err(PendingError::Unknown)?;
        Ok(places
            .iter()
            .map(|place| {
                let w = place.workload;
                let object = self
                    .workloads
                    .get(&ObjectKey::new(w.namespace.as_str(), w.name.as_str()));
                let meta = object.map(|o| &o.metadata);
                PendingWorkload {
                    metadata: PendingMeta::new(
                        &w.name,
                        &w.namespace,
                        meta.and_then(|m| m.creation_timestamp.clone()),
                        meta.and_then(|m| m.owner_references.as_deref())
                            .unwrap_or_default(),
                    ),
                    priority: w.priority,
                    local_queue_name: w.queue_name.clone(),
                    position_in_cluster_queue: position(place.position_in_cluster_queue),
                    position_in_local_queue: position(place.position_in_local_queue),
                }
            })
            .collect())
    }
}
