//! Which AdmissionChecks are this controller's, the ProvisioningRequestConfig each one's
//! `spec.parameters` names, and its `Active` condition: True while that reference is valid and
//! the config exists, else False with why (Kueue's admission check reconciler).

use crate::api::keys::condition_types::ACTIVE;
use crate::api::keys::provisioning::{
    ACTIVE_MESSAGE, ACTIVE_REASON, BAD_PARAMETERS_REF, CONFIG_GROUP, CONFIG_KIND, CONTROLLER_NAME,
};
use crate::api::{
    AdmissionCheck, CONDITION_FALSE, CONDITION_TRUE, Condition, ConditionEntry, HasConditions,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// Whether `check` is run by this controller.
pub fn is_provisioning_check(check: &AdmissionCheck) -> bool {
    check.spec.controller_name == CONTROLLER_NAME
}

/// The name of the ProvisioningRequestConfig `check`'s parameters name, or why they name none
/// (Kueue's wording).
pub fn config_name(check: &AdmissionCheck) -> Result<&str, String> {
    const BAD: &str = "bad parameters reference";
    let Some(reference) = check.spec.parameters.as_ref() else {
        return Err("missing parameters reference".to_owned());
    };
    if reference.name.is_empty() {
        return Err(format!("empty name: {BAD}"));
    }
    if reference.api_group != CONFIG_GROUP {
        return Err(format!(
            "wrong group {:?}, expecting {CONFIG_GROUP:?}: {BAD}",
            reference.api_group
        ));
    }
    if reference.kind != CONFIG_KIND {
        return Err(format!(
            "wrong kind {:?}, expecting {CONFIG_KIND:?}: {BAD}",
            reference.kind
        ));
    }
    Ok(&reference.name)
}

/// The `Active` condition `check` should have, given whether a config of a name exists, at
/// `now`; `None` when its current one already has that status (Kueue writes only a flip).
pub fn active_condition(
    check: &AdmissionCheck,
    config_exists: impl Fn(&str) -> bool,
    now: &Time,
) -> Option<Condition> {
    let problem = match config_name(check) {
        Ok(name) if config_exists(name) => None,
        Ok(name) => Some(format!(
            "provisioningrequestconfigs.kueue.x-k8s.io {name:?} not found"
        )),
        Err(why) => Some(why),
    };
    let (status, reason, message) = match problem {
        None => (CONDITION_TRUE, ACTIVE_REASON, ACTIVE_MESSAGE.to_owned()),
        Some(why) => (CONDITION_FALSE, BAD_PARAMETERS_REF, why),
    };
    let current = check.condition(ACTIVE).map(|c| c.condition_status());
    if current == Some(status) {
        return None;
    }
    Some(Condition {
        last_transition_time: now.clone(),
        message: message.as_str().into(),
        observed_generation: check.metadata.generation,
        reason: reason.into(),
        status: status.into(),
        type_: ACTIVE.into(),
    })
}

/// `check`'s conditions with `active` in place of its `Active` condition.
pub fn with_active(check: &AdmissionCheck, active: Condition) -> Vec<Condition> {
    let mut conditions: Vec<Condition> = check
        .conditions()
        .iter()
        .filter(|c| !c.is_type(ACTIVE))
        .cloned()
        .collect();
    conditions.push(active);
    conditions
}

#[cfg(test)]
mod tests;
