//! Handing a planned write to the writer: the decision it carries is held as in flight until
//! its answer comes back.

use super::AdmissionLoop;
use super::plan::{Effect, Planned};
use super::requests::WriteRequest;

impl AdmissionLoop {
    /// Hands `planned` to the writer, carrying the decision it claims or releases.
    pub(super) fn send(&mut self, key: String, planned: Planned) {
        let Some(read) = self.workloads.shared(&key) else {
            return;
        };
        let carried = match planned.effect {
            Effect::Update => None,
            Effect::Claim | Effect::Release => self.assumed.get(&key).cloned(),
        };
        self.waiting_reasons.forget(&key);
        self.in_flight.insert(key.clone(), carried);
        let flavors: Vec<_> = planned
            .status
            .admission
            .iter()
            .flat_map(|a| {
                a.pod_set_assignments
                    .iter()
                    .flat_map(|p| p.flavors.values())
            })
            .collect();
        tracing::debug!(workload = %key, effect = ?planned.effect, ?flavors, version = ?read.metadata.resource_version, "status write sent");
        let request = WriteRequest::Workload {
            key,
            read,
            planned: Box::new(planned),
        };
        if self.requests.send(request).is_err() {
            tracing::error!("the writer stopped; decisions are no longer written");
        }
    }
}
