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

#[cfg(test)]
mod tests;
