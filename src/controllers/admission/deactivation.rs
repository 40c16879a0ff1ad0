//! Kueue's deactivation of a Workload that a controller gave up on: the PodsReady timer past
//! `backoffLimitCount` marks it `DeactivationTarget=True` (a status write); a Workload so marked
//! and still active gets `spec.active: false` (a spec write); the engine then evicts it as
//! deactivated, which releases its quota, and its status names the target's reason.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::plan::{Effect, Planned};
use super::{AdmissionLoop, RETRY_AFTER, WriteRequest};
use crate::api::Workload;
use crate::api::keys::deactivation_reasons;
use crate::controllers::writer::WriteError;
use crate::status::deactivation::{awaits_deactivation, deactivation_target};

impl AdmissionLoop {
    /// Marks `read` for deactivation: its requeues reached `backoffLimitCount`.
    pub(super) fn requeuing_limit_exceeded(
        &mut self,
        key: String,
        read: &Workload,
        message: &str,
        now: &Time,
    ) {
        tracing::info!(workload = %key, message, "requeuing limit reached; the Workload is deactivated");
        let status = deactivation_target(
            &read.status.clone().unwrap_or_default(),
            deactivation_reasons::REQUEUING_LIMIT_EXCEEDED,
            message,
            now,
            read.metadata.generation,
        );
        let planned = Planned {
            effect: Effect::Update,
            status,
            annotations: None,
        };
        self.send(key, planned);
    }

    /// Notes whether a Workload just read awaits `spec.active: false`.
    pub(super) fn track_deactivation(&mut self, key: &str, workload: &Workload) {
        if awaits_deactivation(workload) {
            self.deactivating.insert(key.to_string());
        } else {
            self.deactivating.remove(key);
        }
    }

    /// Asks for `spec.active: false` on every Workload marked for deactivation that has no write
    /// in flight, no retry pending and no conflict at the version read.
    pub(super) fn deactivations(&mut self) {
        let due: Vec<String> = self
            .deactivating
            .iter()
            .filter(|key| !self.in_flight.contains_key(*key) && !self.retries.contains_key(*key))
            .cloned()
            .collect();
        for key in due {
            let Some(read) = self.workloads.shared(&key) else {
                continue;
            };
            if self
                .stale
                .get(&key)
                .is_some_and(|rv| *rv == read.metadata.resource_version)
            {
                continue;
            }
            self.in_flight.insert(key.clone(), None);
            if self
                .requests
                .send(WriteRequest::Deactivate { key, read })
                .is_err()
            {
                tracing::error!("the writer stopped; decisions are no longer written");
            }
        }
    }

    /// The answer to a `spec.active: false` write.
    pub(super) fn deactivation_written(
        &mut self,
        key: String,
        result: Result<Box<Workload>, WriteError>,
    ) {
        self.in_flight.remove(&key);
        match result {
            Ok(stored) => {
                tracing::debug!(workload = %key, "deactivated");
                if self.workloads.contains_key(&key) {
                    self.seen(super::read::answered(*stored));
                }
            }
            Err(error) => {
                tracing::info!(workload = %key, %error, "deactivation not written; tried again");
                if error.is_transient() {
                    self.retries
                        .insert(key, tokio::time::Instant::now() + RETRY_AFTER);
                } else if let Some(read) = self.workloads.get(&key) {
                    let version = read.metadata.resource_version.clone();
                    self.stale.insert(key, version);
                }
            }
        }
    }
}
