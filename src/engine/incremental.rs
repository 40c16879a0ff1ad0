//! Updates to a running [`Engine`]: workloads are added, replaced and removed one at a time, in
//! time proportional to the change; quota objects (ResourceFlavors, ClusterQueues, Cohorts,
//! LocalQueues, Namespaces) are replaced or removed by name and take effect at the next cycle, which
//! re-indexes the engine once for any number of such changes.

use super::compile::compile_valid;
use super::decision::{CarriedState, CycleOutcome, EvictionReason, WorkloadKey};
use super::error::ModelError;
use super::model::{
    Admission, ClusterQueue, Cohort, LocalQueue, Namespace, ResourceFlavor, Workload,
};
use super::quota::NodeId;
use super::scheduler::{Engine, warn_ignored_borrowing};
use super::state::{Remembered, WorkloadSlot};
use super::structure::Structure;
use super::validate;
use crate::api::ObjectKey;

/// `model` with what the engine holds of it laid over it: its UID, whether it finished, its
/// preemption credit, its admission and the decision state it carries.
fn input_form(
    mut model: Workload,
    uid: &str,
    finished: bool,
    preemption_credit_spent: bool,
    admission: Option<Admission>,
    carried: CarriedState,
) -> Workload {
    model.uid = uid.to_string();
    model.finished = finished;
    model.preemption_credit_spent = preemption_credit_spent;
    model.admission = admission;
    model.quota_reserved_at = carried.quota_reserved_at;
    model.fair_share_shield = carried.fair_share_shield;
    model
}

/// A workload as the engine would hold it: a finished one holds no admission and keeps no pod
/// sets, and an admission without a reservation time was reserved at creation.
fn as_held(workload: &Workload) -> Workload {
    let mut held = workload.clone();
    if held.finished {
        held.admission = None;
        held.pod_sets = Vec::new();
    }
    if held.admission.is_none() {
        held.quota_reserved_at = None;
        held.fair_share_shield.clear();
    } else if held.quota_reserved_at.is_none() {
        held.quota_reserved_at = Some(held.creation);
    }
    held
}

impl Engine {
    /// Adds a ResourceFlavor or replaces the one of the same name.
    pub fn upsert_resource_flavor(&mut self, flavor: ResourceFlavor) {
        let name = flavor.name.clone();
        self.restructure_if(|s| s.resource_flavors.insert(name, flavor.clone()) != Some(flavor));
    }

    /// Removes a ResourceFlavor; ClusterQueues that name it become inactive.
    pub fn remove_resource_flavor(&mut self, name: &str) {
        self.restructure_if(|s| s.resource_flavors.remove(name).is_some());
    }

    /// Adds a ClusterQueue or replaces the one of the same name.
    pub fn upsert_cluster_queue(&mut self, queue: ClusterQueue) -> Result<(), ModelError> {
        validate::cluster_queue(&queue)?;
        warn_ignored_borrowing(&self.config, &queue);
        let name = queue.name.clone();
        self.restructure_if(|s| s.cluster_queues.insert(name, queue.clone()) != Some(queue));
        Ok(())
    }

    /// Removes a ClusterQueue; workloads queued in it wait with a reason.
    pub fn remove_cluster_queue(&mut self, name: &str) {
        self.restructure_if(|s| s.cluster_queues.remove(name).is_some());
    }

    /// Adds a Cohort or replaces the one of the same name.
    pub fn upsert_cohort(&mut self, cohort: Cohort) -> Result<(), ModelError> {
        validate::cohort(&cohort)?;
        let name = cohort.name.clone();
        self.restructure_if(|s| s.cohorts.insert(name, cohort.clone()) != Some(cohort));
        Ok(())
    }

    /// Removes a Cohort; its members stay in an implicit Cohort of that name while they name it.
    pub fn remove_cohort(&mut self, name: &str) {
        self.restructure_if(|s| s.cohorts.remove(name).is_some());
    }

    /// Adds a LocalQueue or replaces the one of the same namespace and name.
    pub fn upsert_local_queue(&mut self, queue: LocalQueue) {
        let key = ObjectKey::new(queue.namespace.as_str(), queue.name.as_str());
        self.restructure_if(|s| s.local_queues.insert(key, queue.clone()) != Some(queue));
    }

    /// Removes a LocalQueue.
    pub fn remove_local_queue(&mut self, key: &ObjectKey) {
        self.restructure_if(|s| s.local_queues.remove(key).is_some());
    }

    /// Adds a Namespace or replaces the one of the same name.
    pub fn upsert_namespace(&mut self, namespace: Namespace) {
        let name = namespace.name.clone();
        self.restructure_if(|s| s.namespaces.insert(name, namespace.clone()) != Some(namespace));
    }

    /// Removes a Namespace.
    pub fn remove_namespace(&mut self, name: &str) {
        self.restructure_if(|s| s.namespaces.remove(name).is_some());
    }

    /// The quota objects the engine holds.
    pub fn structure(&self) -> &Structure {
        &self.structure
    }

    /// Slots in the workload table: one per workload held, and one per removed workload until the
    /// next re-index drops it. For memory measurements.
    pub fn table_len(&self) -> usize {
        self.compiled.workloads.len()
    }

    fn restructure_if(&mut self, change: impl FnOnce(&mut Structure) -> bool) {
        if change(&mut self.structure) {
            self.structure_changed = true;
            self.quiet = false;
        }
    }

    /// Adds a workload, or replaces the one of the same namespace and name. A replacement that
    /// changes nothing the engine uses is a no-op; otherwise the old version's quota is released and
    /// the new one is queued (or, when it carries an admission, counted) as the object says, keeping
    /// what the engine remembers about it (its last eviction and pending reason). A replacement
    /// takes the slot of the version it replaces, so updates leave no slot behind.
    pub fn upsert_workload(&mut self, workload: Workload) -> Result<(), ModelError> {
        validate::workload(&workload)?;
        let key = WorkloadKey::new(&workload.namespace, &workload.name);
        let held = as_held(&workload);
        let replaced = match self.compiled.slot_of(&key) {
            Some(index) if self.current_model(index) == held => return Ok(()),
            Some(index) => Some((index, self.vacate(index))),
            None => None,
        };
        if held.admission.is_some()
            && let Err(reason) = self.placer.adopt(&held)
        {
            // The old version is gone either way: its slot is left empty, as a removal leaves it.
            if let Some((index, _)) = replaced {
                self.mark_removed(index);
            }
            self.quiet = false;
            let name = format!("{}/{}", workload.namespace, workload.name);
            return Err(ModelError::invalid(
                "Workload",
                name,
                "status.admission",
                reason,
            ));
        }
        let index = match &replaced {
            Some((index, _)) => {
                self.compiled.put_workload(*index, workload);
                *index
            }
            None => self.compiled.add_workload(workload),
        };
        let w = &mut self.compiled.workloads[index as usize];
        if let Some((_, (pending, last_eviction))) = replaced {
            w.pending = pending;
            w.last_eviction = last_eviction;
        }
        if let Some(cq) = w.holding.as_ref().and_then(|h| h.cq).or(w.cq) {
            self.touch(cq);
        }
        self.prelude_pending.push(index);
        self.quiet = false;
        Ok(())
    }

    /// Gives the workload at `key` a new priority, as a change of the priority class it takes its
    /// priority from does, and keeps the rest as the engine holds it. Returns whether the engine
    /// holds the workload.
    pub fn set_priority(&mut self, key: &WorkloadKey, priority: i32) -> Result<bool, ModelError> {
        let Some(index) = self.compiled.slot_of(key) else {
            return Ok(false);
        };
        let w = &mut self.compiled.workloads[index as usize];
        if w.finished {
            // It never queues again and its pod sets are gone: only the priority it is held with
            // changes.
            w.model.priority = priority;
            return Ok(true);
        }
        let mut held = self.current_model(index);
        held.priority = priority;
        self.upsert_workload(held).map(|()| true)
    }

    /// Evicts an admitted workload for a reason found outside admission (its nodes failed): its
    /// quota is released at once and it is queued again. Returns whether it held quota.
    pub fn evict_workload(
        &mut self,
        key: &WorkloadKey,
        reason: EvictionReason,
        message: String,
    ) -> bool {
        let Some(index) = self.compiled.slot_of(key) else {
            return false;
        };
        if self.compiled.workloads[index as usize].holding.is_none() {
            return false;
        }
        self.evict(index, reason, None, message, &mut CycleOutcome::default());
        self.quiet = false;
        true
    }

    /// Removes a workload: its quota is released and it leaves every queue. Returns whether it was
    /// known.
    pub fn remove_workload(&mut self, key: &WorkloadKey) -> bool {
        let Some(index) = self.compiled.slot_of(key) else {
            return false;
        };
        self.detach(index);
        self.quiet = false;
        true
    }

    /// A workload as the engine holds it now (with the admission it holds), in input form. A
    /// finished workload comes without its pod sets: it never queues again, so the engine does not
    /// keep them.
    pub fn workload(&self, key: &WorkloadKey) -> Option<Workload> {
        let index = self.compiled.slot_of(key)?;
        Some(self.current_model(index))
    }

    /// The workload as the engine holds it now, in input form.
    fn current_model(&self, index: u32) -> Workload {
        let w = &self.compiled.workloads[index as usize];
        let admission = w.holding.as_ref().map(|h| h.admission.clone());
        input_form(
            w.model.clone(),
            &w.uid,
            w.finished,
            w.preemption_credit_spent,
            admission,
            self.carried(w),
        )
    }

    /// Takes a workload out: releases its quota, leaves its queue, frees its key. The slot stays
    /// (marked removed) so that other indexes do not move. Returns what the engine remembered.
    fn detach(&mut self, index: u32) -> Remembered {
        let remembered = self.vacate(index);
        self.mark_removed(index);
        remembered
    }

    /// Empties slot `index` for a new version of its workload or for removal: releases its quota,
    /// takes it out of its queue and frees its key, so that nothing names the slot any more, and
    /// frees what it held. Returns what the engine remembered.
    fn vacate(&mut self, index: u32) -> Remembered {
        self.release(index);
        let w = &mut self.compiled.workloads[index as usize];
        let remembered = (w.pending.clone(), w.last_eviction.take());
        if let Some(cq) = w.cq {
            let queue_key = w.queue_key(index);
            self.compiled.queues[cq as usize].pending.remove(&queue_key);
        }
        let w = &self.compiled.workloads[index as usize];
        self.compiled.by_key.remove(
            &self.compiled.workloads[..],
            &w.model.namespace,
            &w.model.name,
        );
        let w = &mut self.compiled.workloads[index as usize];
        w.model = Workload::default();
        w.per_pod = Vec::new();
        w.blocked = None;
        if let Some(cq) = w.cq {
            self.touch(cq);
        }
        remembered
    }

    /// Marks an emptied slot removed: it is finished and holds nothing, so every reader skips it
    /// until the next re-index drops it.
    fn mark_removed(&mut self, index: u32) {
        let w = &mut self.compiled.workloads[index as usize];
        w.removed = true;
        w.finished = true;
        self.removed_slots += 1;
    }

    /// Re-indexes the engine after quota objects changed: the quota tree, queues and workloads are
    /// rebuilt from the objects held, and every workload keeps its quota, pending reason, last
    /// eviction and preemption history.
    pub(super) fn restructure(&mut self) {
        if !self.structure_changed
            && self.removed_slots * 2 <= self.compiled.workloads.len().max(64)
        {
            return;
        }
        let mut snapshot = self.structure.snapshot();
        // Each workload is moved into the new index, not copied: a re-index never holds the
        // workloads twice over.
        let held = std::mem::take(&mut self.compiled.workloads);
        let live = held.len().saturating_sub(self.removed_slots);
        snapshot.workloads = Vec::with_capacity(live);
        let mut remembered = Vec::with_capacity(live);
        for w in held.into_iter().filter(|w| !w.removed) {
            let carried = self.carried(&w);
            let WorkloadSlot {
                model,
                uid,
                pending,
                last_eviction,
                holding,
                finished,
                preemption_credit_spent,
                ..
            } = w;
            let cycle = holding.as_ref().map_or(0, |h| h.cycle);
            remembered.push((pending, last_eviction, cycle));
            snapshot.workloads.push(input_form(
                model,
                &uid,
                finished,
                preemption_credit_spent,
                holding.map(|h| h.admission),
                carried,
            ));
        }
        self.compiled = compile_valid(snapshot);
        // The new index gives the workloads their slots in the order they are given, so the
        // slot of each is where what the engine remembers of it was pushed.
        debug_assert_eq!(self.compiled.workloads.len(), remembered.len());
        for (w, (pending, last_eviction, cycle)) in
            self.compiled.workloads.iter_mut().zip(remembered)
        {
            w.pending = pending;
            w.last_eviction = last_eviction;
            if let Some(h) = &mut w.holding {
                h.cycle = cycle;
            }
        }
        let nodes = self.compiled.node_names.len();
        self.generations = vec![0; nodes];
        self.releases = vec![0; nodes];
        self.settled = vec![false; nodes];
        self.structure_changed = false;
        self.removed_slots = 0;
        self.prelude_pending.clear();
        self.prelude_all = true;
    }

    /// Queues again every workload evicted under `requeue_evicted_next_pass` since the last call.
    /// The controller calls it before each pass, so a victim is never re-admitted in the run that
    /// evicted it (its eviction is written first), and never waits on a read that may not come.
    pub fn requeue_evicted(&mut self) {
        for key in std::mem::take(&mut self.evicted_unqueued) {
            let Some(index) = self.compiled.slot_of(&key) else {
                continue;
            };
            let w = &self.compiled.workloads[index as usize];
            if w.last_eviction.is_none() || w.holding.is_some() || w.blocked.is_some() || w.finished
            {
                continue;
            }
            let Some(cq) = w.cq else {
                continue;
            };
            let queue_key = w.queue_key(index);
            if self.compiled.queues[cq as usize].pending.insert(queue_key) {
                self.touch(cq);
                self.quiet = false;
            }
        }
    }

    /// Usage or the queue of `cq` changed: its tree is looked at again in the next cycle.
    fn touch(&mut self, cq: u32) {
        let root = self.compiled.tree.root(NodeId(cq)).index();
        self.generations[root] += 1;
        self.settled[root] = false;
    }
}

#[cfg(test)]
mod tests;
