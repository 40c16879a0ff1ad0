//! The condition merge every status writer uses: Kubernetes' `meta.SetStatusCondition`, with
//! messages truncated as Kueue truncates them.

use crate::api::Condition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

/// The longest message Kueue writes on a condition, in bytes (apimachinery's limit for a
/// condition's `message`).
const MAX_MESSAGE_BYTES: usize = 32 * 1024;

/// What Kueue puts at the end of a message it had to cut.
const CUT_SUFFIX: &str = " ...";

/// A condition as a writer decides it; the merge gives it its `lastTransitionTime`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Desired<'a> {
    pub type_: &'a str,
    pub status: bool,
    pub reason: &'a str,
    pub message: String,
    pub observed_generation: Option<i64>,
}

fn status_text(status: bool) -> &'static str {
    if status { "True" } else { "False" }
}

/// Sets `new` in `conditions`: a condition of another type is left alone; a new type is appended
/// with `now`; an existing one takes the new reason, message and observed generation, and `now` as
/// its `lastTransitionTime` only when its status flips.
pub fn set_condition(conditions: &mut Vec<Condition>, new: Desired<'_>, now: &Time) {
    let status = status_text(new.status);
    let message = truncate_message(new.message);
    let Some(existing) = conditions.iter_mut().find(|c| c.type_ == new.type_) else {
        conditions.push(Condition {
            type_: new.type_.into(),
            status: status.into(),
            reason: new.reason.into(),
            message: message.into(),
            last_transition_time: now.clone(),
            observed_generation: new.observed_generation,
        });
        return;
    };
    // A text that stays the same is kept, so it stays shared with the other Workloads'.
    if existing.status != status {
        existing.status = status.into();
        existing.last_transition_time = now.clone();
    }
    if existing.reason != new.reason {
        existing.reason = new.reason.into();
    }
    if existing.message != message {
        existing.message = message.into();
    }
    existing.observed_generation = new.observed_generation;
}

/// Whether `conditions` hold a condition of `type_` with status True.
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    conditions
        .iter()
        .any(|c| c.type_ == type_ && c.status == status_text(true))
}

/// The message of the condition of `type_`, when there is one.
pub fn message_of<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a str> {
    conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| c.message.as_str())
}

/// Kueue's `TruncateConditionMessage`: a message over the limit keeps its first bytes and ends in
/// `" ..."`. The cut falls on a character boundary, so the result stays valid UTF-8.
fn truncate_message(mut message: String) -> String {
    if message.len() <= MAX_MESSAGE_BYTES {
        return message;
    }
    let mut end = MAX_MESSAGE_BYTES - CUT_SUFFIX.len();
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    message.truncate(end);
    message.push_str(CUT_SUFFIX);
    message
}

#[cfg(test)]
mod tests;
