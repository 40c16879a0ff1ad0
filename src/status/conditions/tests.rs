use crate::api::Condition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;

fn at(text: &str) -> Time {
    Time(text.parse().unwrap())
}

fn desired(
    type_: &'static str,
    status: bool,
    reason: &'static str,
    message: &str,
) -> Desired<'static> {
    Desired {
        type_,
        status,
        reason,
        message: message.to_string(),
        observed_generation: Some(1),
    }
}

#[test]
fn a_new_type_is_appended_with_now() {
    let mut conditions = Vec::new();
    set_condition(
        &mut conditions,
        desired("Active", true, "Ready", "ok"),
        &at("2026-01-01T00:00:00Z"),
    );
    assert_eq!(
        conditions,
        vec![Condition {
            type_: "Active".into(),
            status: "True".into(),
            reason: "Ready".into(),
            message: "ok".into(),
            last_transition_time: at("2026-01-01T00:00:00Z"),
            observed_generation: Some(1),
        }]
    );
}

#[test]
fn the_transition_time_moves_only_when_the_status_flips() {
    let t0 = at("2026-01-01T00:00:00Z");
    let t1 = at("2026-01-01T01:00:00Z");
    let t2 = at("2026-01-01T02:00:00Z");
    let mut conditions = Vec::new();
    set_condition(&mut conditions, desired("Active", true, "Ready", "ok"), &t0);
    let mut same_status = desired("Active", true, "Other", "changed message");
    same_status.observed_generation = Some(2);
    set_condition(&mut conditions, same_status, &t1);
    assert_eq!(conditions[0].last_transition_time, t0);
    assert_eq!(
        (
            conditions[0].reason.as_str(),
            conditions[0].message.as_str()
        ),
        ("Other", "changed message")
    );
    assert_eq!(conditions[0].observed_generation, Some(2));
    set_condition(
        &mut conditions,
        desired("Active", false, "Stopped", "stopped"),
        &t2,
    );
    assert_eq!(conditions[0].status, "False");
    assert_eq!(conditions[0].last_transition_time, t2);
}

#[test]
fn other_condition_types_are_left_alone() {
    let t0 = at("2026-01-01T00:00:00Z");
    let t1 = at("2026-01-01T01:00:00Z");
    let mut conditions = Vec::new();
    set_condition(
        &mut conditions,
        desired("PodsReady", true, "Started", "pods"),
        &t0,
    );
    set_condition(
        &mut conditions,
        desired("Admitted", false, "NoReservation", "none"),
        &t0,
    );
    let before = conditions[0].clone();
    set_condition(
        &mut conditions,
        desired("Admitted", true, "Admitted", "yes"),
        &t1,
    );
    assert_eq!(conditions[0], before);
    assert_eq!(conditions[1].last_transition_time, t1);
    assert_eq!(conditions.len(), 2);
}

#[test]
fn a_long_message_is_cut_to_kueues_limit_with_an_ellipsis() {
    let mut conditions = Vec::new();
    let now = at("2026-01-01T00:00:00Z");
    let exact = "a".repeat(MAX_MESSAGE_BYTES);
    set_condition(
        &mut conditions,
        desired("Active", true, "Ready", &exact),
        &now,
    );
    assert_eq!(conditions[0].message, exact);
    // A two-byte character straddles the cut: the cut moves before it.
    let long = format!("{}é{}", "a".repeat(MAX_MESSAGE_BYTES - 5), "b".repeat(10));
    set_condition(
        &mut conditions,
        desired("Active", true, "Ready", &long),
        &now,
    );
    let message = &conditions[0].message;
    assert_eq!(message.len(), MAX_MESSAGE_BYTES - 1);
    assert!(
        message.ends_with("a ..."),
        "{}",
        &message[message.len() - 8..]
    );
}

#[test]
fn is_true_and_message_of_read_one_type() {
    let mut conditions = Vec::new();
    let now = at("2026-01-01T00:00:00Z");
    set_condition(
        &mut conditions,
        desired("Evicted", true, "Preempted", "gone"),
        &now,
    );
    set_condition(
        &mut conditions,
        desired("Admitted", false, "NoReservation", "none"),
        &now,
    );
    assert!(is_true(&conditions, "Evicted"));
    assert!(!is_true(&conditions, "Admitted"));
    assert!(!is_true(&conditions, "Finished"));
    assert_eq!(message_of(&conditions, "Admitted"), Some("none"));
    assert_eq!(message_of(&conditions, "Finished"), None);
}
