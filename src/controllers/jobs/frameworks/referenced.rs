//! The objects a framework kind's jobs build their pod sets from ([`JobKind::reference`], a
//! TrainJob's runtime): one watch per referenced kind feeding the kind's task, the objects held
//! by kind and key, and which jobs a change concerns. As Kueue's TrainJob reconciler reads the
//! runtime at each reconcile, a job is looked at again whenever its runtime changes.

use std::collections::BTreeMap;

use kube::api::DynamicObject;
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::api::ObjectKey;
use crate::controllers::jobs::inputs::JobInput;
use crate::controllers::watches::{self, Change};
use crate::jobs::framework::{JobKind, Reference};

/// What a framework kind's task reads: the job integration's inputs, and the changes of the
/// objects of its `referenced_kinds()[index]`.
#[derive(Debug)]
pub enum FrameworkInput {
    Job(JobInput<DynamicObject>),
    Referenced(usize, Change<DynamicObject>),
}

impl From<JobInput<DynamicObject>> for FrameworkInput {
    fn from(input: JobInput<DynamicObject>) -> Self {
        FrameworkInput::Job(input)
    }
}

/// Starts one watch per kind `kind`'s jobs reference.
pub fn watch(
    client: &Client,
    kind: &dyn JobKind,
    inputs: &mpsc::Sender<FrameworkInput>,
    tasks: &mut JoinSet<()>,
) {
    for (index, referenced) in kind.referenced_kinds().iter().enumerate() {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &referenced.api_resource());
        let wrap = move |change| FrameworkInput::Referenced(index, change);
        watches::spawn(
            tasks,
            api,
            watcher::Config::default(),
            inputs,
            wrap,
            watches::slim,
        );
    }
}

/// Which jobs a change of referenced objects concerns.
#[derive(Debug, PartialEq, Eq)]
pub enum Concerns {
    /// Every job: a kind was listed anew.
    All,
    /// The jobs referencing this object.
    Object(usize, ObjectKey),
}

/// The referenced objects held, by the index of their kind and their key (no namespace for a
/// cluster-scoped kind).
#[derive(Debug)]
pub struct ReferencedObjects {
    objects: BTreeMap<(usize, ObjectKey), DynamicObject>,
    listed: Vec<bool>,
}

impl ReferencedObjects {
    pub fn new(kind: &dyn JobKind) -> Self {
        ReferencedObjects {
            objects: BTreeMap::new(),
            listed: vec![false; kind.referenced_kinds().len()],
        }
    }

    /// Whether every referenced kind has been listed once.
    pub fn listed(&self) -> bool {
        self.listed.iter().all(|listed| *listed)
    }

    /// Takes one change of the kind at `index`.
    pub fn take(&mut self, index: usize, change: Change<DynamicObject>) -> Concerns {
        let key = |object: &DynamicObject| {
            ObjectKey::new(object.namespace().unwrap_or_default(), object.name_any())
        };
        match change {
            Change::Apply(object) => {
                let key = key(&object);
                self.objects.insert((index, key.clone()), *object);
                Concerns::Object(index, key)
            }
            Change::Delete(object) => {
                let key = key(&object);
                self.objects.remove(&(index, key.clone()));
                Concerns::Object(index, key)
            }
            Change::Reset(objects) => {
                self.objects.retain(|(i, _), _| *i != index);
                for object in objects {
                    self.objects.insert((index, key(&object)), object);
                }
                if let Some(listed) = self.listed.get_mut(index) {
                    *listed = true;
                }
                Concerns::All
            }
        }
    }

    /// The object `reference` names, if it exists.
    pub fn get(&self, kind: &dyn JobKind, reference: &Reference) -> Option<&DynamicObject> {
        self.objects.get(&key_of(kind, reference)?)
    }
}

/// Where a reference's object is held.
pub fn key_of(kind: &dyn JobKind, reference: &Reference) -> Option<(usize, ObjectKey)> {
    let index = kind
        .referenced_kinds()
        .iter()
        .position(|k| k == reference.kind)?;
    let namespace = reference.namespace.clone().unwrap_or_default();
    Some((index, ObjectKey::new(namespace, reference.name.clone())))
}

#[cfg(test)]
mod tests;
