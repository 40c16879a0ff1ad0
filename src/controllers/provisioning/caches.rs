//! What the provisioning task reads, kept current from its watches: the Workloads that have
//! admission checks, the AdmissionChecks, the ProvisioningRequestConfigs, the ResourceFlavors
//! (for the PodTemplates) and the ProvisioningRequests, those indexed by the Workload owning
//! them. Each change marks what it touches (Kueue's event handlers): a request its Workload, a
//! check itself and the Workloads naming it, a config the checks naming it and their Workloads.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kube::ResourceExt;

use crate::api::{
    AdmissionCheck, ObjectKey, ProvisioningRequest, ProvisioningRequestConfig, ResourceFlavor,
};
use crate::checks::provisioning::{config_name, is_provisioning_check};
use crate::controllers::watches::{Change, SharedWorkload, is_older};
use crate::controllers::work_queue::Dirty;
use crate::jobs::FlavorInfo;

/// What the task decides for: a Workload's requests and check entries, or an AdmissionCheck's
/// `Active` condition.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    Workload(ObjectKey),
    Check(String),
}

/// A change delivered to the task.
#[derive(Debug)]
pub enum ProvisioningInput {
    Workload(Change<SharedWorkload>),
    Check(Change<Arc<AdmissionCheck>>),
    Config(Change<Arc<ProvisioningRequestConfig>>),
    Flavor(Change<Arc<ResourceFlavor>>),
    Request(Change<ProvisioningRequest>),
}

/// The number of watches the task reads.
const SOURCES: usize = 5;

impl ProvisioningInput {
    fn source(&self) -> (usize, bool) {
        match self {
            ProvisioningInput::Workload(c) => (0, c.is_reset()),
            ProvisioningInput::Check(c) => (1, c.is_reset()),
            ProvisioningInput::Config(c) => (2, c.is_reset()),
            ProvisioningInput::Flavor(c) => (3, c.is_reset()),
            ProvisioningInput::Request(c) => (4, c.is_reset()),
        }
    }
}

/// The task's view of the cluster.
#[derive(Default)]
pub struct Caches {
    pub workloads: BTreeMap<ObjectKey, SharedWorkload>,
    pub checks: BTreeMap<String, Arc<AdmissionCheck>>,
    pub configs: BTreeMap<String, Arc<ProvisioningRequestConfig>>,
    pub flavors: BTreeMap<String, FlavorInfo>,
    requests: BTreeMap<ObjectKey, ProvisioningRequest>,
    /// The requests each Workload owns, by the Workload's key.
    owned: BTreeMap<ObjectKey, BTreeSet<ObjectKey>>,
    listed: [bool; SOURCES],
}

impl Caches {
    /// Whether every watch has delivered its first list (the requests' only once their CRD is
    /// established).
    pub fn listed(&self) -> bool {
        self.listed.iter().all(|l| *l)
    }

    /// Takes one change in, marking the keys it touches.
    pub fn take(&mut self, input: ProvisioningInput, dirty: &mut Dirty<Key>) {
        let (source, reset) = input.source();
        if reset {
            self.listed[source] = true;
            dirty.all();
        }
        match input {
            ProvisioningInput::Workload(change) => {
                if let Change::Reset(_) = change {
                    self.workloads.clear();
                }
                change.for_each(|workload, present| {
                    let key = ObjectKey::of(&*workload);
                    dirty.insert(Key::Workload(key.clone()));
                    if present {
                        self.workloads.insert(key, workload);
                    } else {
                        self.workloads.remove(&key);
                    }
                });
            }
            ProvisioningInput::Check(change) => {
                if let Change::Reset(_) = change {
                    self.checks.clear();
                }
                change.for_each(|check, present| {
                    let name = check.name_any();
                    self.touch_check(&name, dirty);
                    if present {
                        self.checks.insert(name, check);
                    } else {
                        self.checks.remove(&name);
                    }
                });
            }
            ProvisioningInput::Config(change) => {
                if let Change::Reset(_) = change {
                    self.configs.clear();
                }
                change.for_each(|config, present| {
                    let name = config.name_any();
                    let users: Vec<String> = self
                        .checks
                        .values()
                        .filter(|c| is_provisioning_check(c) && config_name(c) == Ok(&name))
                        .map(|c| c.name_any())
                        .collect();
                    for user in users {
                        self.touch_check(&user, dirty);
                    }
                    if present {
                        self.configs.insert(name, config);
                    } else {
                        self.configs.remove(&name);
                    }
                });
            }
            ProvisioningInput::Flavor(change) => {
                if let Change::Reset(_) = change {
                    self.flavors.clear();
                }
                change.for_each(|flavor, present| {
                    if present {
                        self.flavors
                            .insert(flavor.name_any(), FlavorInfo::of(&flavor));
                    } else {
                        self.flavors.remove(&flavor.name_any());
                    }
                });
            }
            ProvisioningInput::Request(change) => {
                if let Change::Reset(_) = change {
                    self.requests.clear();
                    self.owned.clear();
                }
                change.for_each(|request, present| {
                    if present {
                        self.put_request(request, dirty);
                    } else {
                        self.remove_request(&ObjectKey::of(&request), dirty);
                    }
                });
            }
        }
    }

    /// Marks check `name` and every Workload with an entry for it.
    fn touch_check(&self, name: &str, dirty: &mut Dirty<Key>) {
        dirty.insert(Key::Check(name.to_owned()));
        for (key, workload) in &self.workloads {
            let names_it = workload
                .status
                .as_ref()
                .is_some_and(|s| s.admission_checks.iter().any(|e| e.name == name));
            if names_it {
                dirty.insert(Key::Workload(key.clone()));
            }
        }
    }

    /// Stores a request read from the watch or written, unless a newer version is known.
    pub fn put_request(&mut self, request: ProvisioningRequest, dirty: &mut Dirty<Key>) {
        let key = ObjectKey::of(&request);
        if is_older(&request, self.requests.get(&key)) {
            return;
        }
        self.remove_request(&key, dirty);
        for owner in owners(&request) {
            dirty.insert(Key::Workload(owner.clone()));
            self.owned.entry(owner).or_default().insert(key.clone());
        }
        self.requests.insert(key, request);
    }

    /// Forgets a request that was deleted.
    pub fn remove_request(&mut self, key: &ObjectKey, dirty: &mut Dirty<Key>) {
        let Some(gone) = self.requests.remove(key) else {
            return;
        };
        for owner in owners(&gone) {
            dirty.insert(Key::Workload(owner.clone()));
            if let Some(keys) = self.owned.get_mut(&owner) {
                keys.remove(key);
                if keys.is_empty() {
                    self.owned.remove(&owner);
                }
            }
        }
    }

    /// Stores a Workload as a write stored it, unless the watch brought a newer version.
    pub fn put_workload(&mut self, workload: SharedWorkload) {
        let key = ObjectKey::of(&*workload);
        if !is_older(&*workload, self.workloads.get(&key).map(|w| &**w)) {
            self.workloads.insert(key, workload);
        }
    }

    /// Stores an AdmissionCheck as a write stored it, unless the watch brought a newer version.
    pub fn put_check(&mut self, check: Arc<AdmissionCheck>) {
        let name = check.name_any();
        if !is_older(&*check, self.checks.get(&name).map(|c| &**c)) {
            self.checks.insert(name, check);
        }
    }

    /// The requests `workload` owns.
    pub fn requests_of(&self, workload: &ObjectKey) -> Vec<&ProvisioningRequest> {
        self.owned
            .get(workload)
            .into_iter()
            .flatten()
            .filter_map(|key| self.requests.get(key))
            .collect()
    }
}

/// The Workloads a request names as owners.
fn owners(request: &ProvisioningRequest) -> Vec<ObjectKey> {
    let namespace = request.namespace().unwrap_or_default();
    request
        .owner_references()
        .iter()
        .filter(|o| o.kind == "Workload")
        .map(|o| ObjectKey::new(namespace.clone(), o.name.clone()))
        .collect()
}

#[cfg(test)]
mod tests;
