//! The kuota annotations a Workload carries so that a restarted engine decides as the one before
//! it: what the engine remembers across cycles that Kueue's status fields do not hold.

use std::collections::BTreeMap;

use crate::api::keys::kuota_annotations::{
    FAIR_SHARE_SHIELD, PREEMPTION_CREDIT_SPENT, QUOTA_RESERVED_AT,
};
use crate::engine::CarriedState;

/// Sets the carried-state annotations in `annotations`, removing those that no longer apply.
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
        QUOTA_RESERVED_AT,
        carried.quota_reserved_at.map(|at| at.to_string()),
    );
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
/// reservation's keys (`quota-reserved-at`, `fair-share-shield`) are left as they are instead of
/// removed, since nothing reads them there (a restarted engine drops them with the admission)
/// and the next reservation overwrites them; removing them would cost a request of its own for
/// every finished or evicted Workload, which Kueue does not spend.
pub fn set_carried_unless_stale(
    annotations: &mut BTreeMap<String, String>,
    carried: &CarriedState,
    holds_reservation: bool,
) {
    let kept: Vec<(&str, String)> = if holds_reservation {
        Vec::new()
    } else {
        [QUOTA_RESERVED_AT, FAIR_SHARE_SHIELD]
            .into_iter()
            .filter_map(|key| annotations.get(key).map(|v| (key, v.clone())))
            .collect()
    };
    set_carried(annotations, carried);
    for (key, value) in kept {
        annotations.insert(key.to_string(), value);
    }
}

#[cfg(test)]
mod tests;
