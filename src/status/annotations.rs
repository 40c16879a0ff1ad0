//! The kuota annotations a Workload carries so that a restarted engine decides as the one before
//! it: what the engine remembers across cycles that Kueue's status fields do not hold. (The
//! reservation time needs none: it is the `QuotaReserved` condition's `lastTransitionTime`, as in
//! Kueue.)

use std::collections::BTreeMap;

use crate::api::keys::kuota_annotations::{FAIR_SHARE_SHIELD, PREEMPTION_CREDIT_SPENT};
use crate::engine::CarriedState;

/// Sets the carried-state annotations in `annotations`, removing those that no longer apply.
/// Every other key, such as the `kuota.dev/quota-reserved-at` earlier versions wrote, is left as
/// it is and read by nothing.
pub fn set_carried(annotations: &mut BTreeMap<String, String>, carried: &CarriedState) {
    let mut set = |key: &str, value: Option<String>| match value {
        Some(value) => {
            annotations.insert(key.to_string(), value);
        }
        None => {
            annotations.remove(key);
        }
    };
    set(
        PREEMPTION_CREDIT_SPENT,
        carried.preemption_credit_spent.then(|| "true".to_string()),
    );
    set(
        FAIR_SHARE_SHIELD,
        (!carried.fair_share_shield.is_empty()).then(|| carried.fair_share_shield.join(",")),
    );
}

/// [`set_carried`] as a controller writes it: on a Workload that holds no reservation the
/// reservation's key (`fair-share-shield`) is left as it is instead of removed, since nothing
/// reads it there (a restarted engine drops it with the admission) and the next reservation
/// overwrites it; removing it would cost a request of its own for every finished or evicted
/// Workload, which Kueue does not spend.
pub fn set_carried_unless_stale(
    annotations: &mut BTreeMap<String, String>,
    carried: &CarriedState,
    holds_reservation: bool,
) {
    let kept = annotations
        .get(FAIR_SHARE_SHIELD)
        .filter(|_| !holds_reservation)
        .cloned();
    set_carried(annotations, carried);
    if let Some(value) = kept {
        annotations.insert(FAIR_SHARE_SHIELD.to_string(), value);
    }
}

#[cfg(test)]
mod tests;
