//! The storage-version migration, a task of the leader: a CRD of kuota's whose
//! `status.storedVersions` still lists `v1beta1` (Kueue up to v0.15 stored it) has every object
//! re-stored as `v1beta2`, a no-op write paced and fenced on the version listed, then its
//! `storedVersions` set to `[v1beta2]`, so that a later CRD may stop serving `v1beta1`. It waits
//! for the webhook certificate to be trusted, since kinds converting through kuota's webhook are
//! read through it, and looks again after a failure or a while.

mod plan;

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind, ListParams, Patch, PatchParams};
use kube::{Api, Client, ResourceExt};
use tokio::sync::watch;

pub use self::plan::ConversionService;
use self::plan::{Restored, Target, Verdict};
use crate::api::keys::field_managers;
use crate::backoff::{Backoff, random_unit};
use crate::tls::CertStore;
use crate::v1beta1::{GROUP, Version};

/// Pause between two re-stores: a migration of many Workloads must not crowd the API server.
const PACE: Duration = Duration::from_millis(20);
/// Objects listed per page.
const PAGE: u32 = 500;
/// Wait before a pass that failed, or found a CRD not ready, is tried again: 10 s doubling to
/// 5 min while passes keep failing, plus up to a fifth.
const RETRY_BACKOFF: Backoff = Backoff {
    first: Duration::from_secs(10),
    cap: Duration::from_secs(300),
    jitter: 0.2,
};
/// Wait before the CRDs are looked at again once every one is current: Kueue's CRDs applied
/// again, then kuota's, bring `v1beta1` back.
const RECHECK_AFTER: Duration = Duration::from_secs(600);

#[derive(Debug, thiserror::Error)]
enum MigrationError {
    #[error("list the CustomResourceDefinitions: {0}")]
    ListCrds(#[source] kube::Error),
    #[error("list the {kind} objects to re-store: {source}")]
    List {
        kind: &'static str,
        #[source]
        source: kube::Error,
    },
    #[error("re-store {object} as v1beta2: {source}")]
    Restore {
        object: String,
        #[source]
        source: kube::Error,
    },
    #[error("set status.storedVersions of CustomResourceDefinition {crd} to [v1beta2]: {source}")]
    StoredVersions {
        crd: String,
        #[source]
        source: kube::Error,
    },
    #[error("this replica stopped leading")]
    NotLeading,
}

/// Whether a pass left every CRD current.
enum Pass {
    Done,
    Again,
}

/// The task: runs while this replica leads and, when `certificate` is given, once the API server
/// trusts the webhook's certificate; `conversion` is the Service kuota's conversion webhook is
/// reached through (`None`: kinds converting through a webhook are not migrated).
pub async fn run(
    client: Client,
    conversion: Option<ConversionService>,
    certificate: Option<CertStore>,
    mut leading: watch::Receiver<bool>,
) {
    let mut failures: u32 = 0;
    loop {
        if leading.wait_for(|l| *l).await.is_err() {
            return std::future::pending().await;
        }
        if certificate.as_ref().is_some_and(|c| !c.is_ready()) {
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        }
        let wait = match pass(&client, conversion.as_ref(), &leading).await {
            Ok(Pass::Done) => {
                failures = 0;
                RECHECK_AFTER
            }
            Ok(Pass::Again) => {
                failures = 0;
                RETRY_BACKOFF.wait(1, random_unit())
            }
            Err(error) => {
                tracing::warn!(%error, "storage-version migration failed; trying again");
                failures = failures.saturating_add(1);
                RETRY_BACKOFF.wait(failures, random_unit())
            }
        };
        tokio::time::sleep(wait).await;
    }
}

async fn pass(
    client: &Client,
    conversion: Option<&ConversionService>,
    leading: &watch::Receiver<bool>,
) -> Result<Pass, MigrationError> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let listed = crds
        .list(&ListParams::default())
        .await
        .map_err(MigrationError::ListCrds)?;
    let mut outcome = Pass::Done;
    for crd in &listed.items {
        match plan::verdict(crd, conversion) {
            Verdict::NotServed | Verdict::Current => {}
            // Someone has to apply kuota's CRDs: looked at again with the next check.
            Verdict::StoresOther { crd, storage } => {
                tracing::warn!(%crd, %storage, "the CRD does not store v1beta2: apply kuota's CRDs");
            }
            // Certificate management points the conversion at kuota's webhook shortly (with
            // certificates from files, once their ca.crt is readable).
            Verdict::AwaitingConversion { crd } => {
                tracing::debug!(%crd, "storage-version migration waits for the CRD to convert through kuota's webhook");
                outcome = Pass::Again;
            }
            Verdict::Migrate(target) => {
                if !migrate(client, &crds, &target, leading).await? {
                    outcome = Pass::Again;
                }
            }
        }
    }
    Ok(outcome)
}

/// Re-stores every object of the target's kind, then sets its CRD's `storedVersions`. Returns
/// false when the CRD changed meanwhile (the next pass looks at it again).
async fn migrate(
    client: &Client,
    crds: &Api<CustomResourceDefinition>,
    target: &Target,
    leading: &watch::Receiver<bool>,
) -> Result<bool, MigrationError> {
    let kind = target.kind.name();
    tracing::info!(crd = %target.crd, stale = ?target.stale, "re-storing every {kind} as v1beta2");
    let gvk = GroupVersionKind::gvk(GROUP, Version::V1beta2.name(), kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, target.kind.plural());
    let all: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let params = PatchParams {
        field_manager: Some(field_managers::KUOTA.to_owned()),
        ..PatchParams::default()
    };
    let mut page = ListParams::default().limit(PAGE);
    let mut restored = 0usize;
    loop {
        let listed = all
            .list_metadata(&page)
            .await
            .map_err(|source| MigrationError::List { kind, source })?;
        for object in &listed.items {
            if !*leading.borrow() {
                return Err(MigrationError::NotLeading);
            }
            let name = object.name_any();
            let api: Api<DynamicObject> = match object.namespace() {
                Some(namespace) => Api::namespaced_with(client.clone(), &namespace, &resource),
                None => Api::all_with(client.clone(), &resource),
            };
            let version = object.resource_version().unwrap_or_default();
            let patch = Patch::Merge(plan::restore_patch(&version));
            let answer = api.patch(&name, &params, &patch).await;
            let code = match &answer {
                Ok(_) => 200,
                Err(kube::Error::Api(status)) => status.code,
                Err(_) => 0,
            };
            match (plan::restored(code), answer) {
                (Some(Restored::Written | Restored::ChangedMeanwhile), _) => restored += 1,
                (Some(Restored::Gone), _) | (None, Ok(_)) => {}
                (None, Err(source)) => return Err(restore_error(kind, object, source)),
            }
            tokio::time::sleep(PACE).await;
        }
        match listed.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => page = page.continue_token(&token),
            None => break,
        }
    }
    let patch = Patch::Merge(plan::stored_versions_patch(target));
    match crds.patch_status(&target.crd, &params, &patch).await {
        Ok(_) => {
            tracing::info!(crd = %target.crd, restored, "every {kind} stored as v1beta2; storedVersions is [v1beta2]");
            Ok(true)
        }
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(false),
        Err(source) => Err(MigrationError::StoredVersions {
            crd: target.crd.clone(),
            source,
        }),
    }
}

fn restore_error<K: ResourceExt>(kind: &str, object: &K, source: kube::Error) -> MigrationError {
    let object = match object.namespace() {
        Some(namespace) => format!("{kind} {namespace}/{}", object.name_any()),
        None => format!("{kind} {}", object.name_any()),
    };
    MigrationError::Restore { object, source }
}
