//! What a replica does with the Lease it just read: pure, so every case is tested without a
//! server or a clock.

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;

/// The Lease as last read, and when this replica first read it like that. Expiry is measured
/// from that moment on this replica's own clock, as client-go's elector does, so replicas whose
/// clocks disagree still agree on when a silent holder's lease runs out.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    spec: LeaseSpec,
    since: Instant,
}

/// The new observation: the same moment while the Lease is unchanged, `now` once it changed.
pub fn observe(previous: Option<Observed>, current: &LeaseSpec, now: Instant) -> Observed {
    match previous {
        Some(previous) if previous.spec == *current => previous,
        _ => Observed {
            spec: current.clone(),
            since: now,
        },
    }
}

/// What to do with the Lease.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// No Lease exists: create one that this replica holds.
    Create(LeaseSpec),
    /// The Lease is free or its holder stopped renewing it: take it over.
    Acquire(LeaseSpec),
    /// This replica holds the Lease: renew it.
    Renew(LeaseSpec),
    /// Another replica holds the Lease and renews it in time.
    Wait { holder: String },
}

fn holder(spec: &LeaseSpec) -> Option<&str> {
    spec.holder_identity.as_deref().filter(|h| !h.is_empty())
}

fn seconds(duration: Duration) -> i32 {
    i32::try_from(duration.as_secs().max(1)).unwrap_or(i32::MAX)
}

/// The step for `me`, given the Lease read (`None`: there is none) and its observation.
pub fn step(
    current: Option<(&LeaseSpec, &Observed)>,
    me: &str,
    lease_duration: Duration,
    now: Instant,
    wall: Timestamp,
) -> Step {
    let held_by_me = |acquired: Option<MicroTime>, transitions: i32| LeaseSpec {
        holder_identity: Some(me.to_string()),
        lease_duration_seconds: Some(seconds(lease_duration)),
        acquire_time: acquired.or(Some(MicroTime(wall))),
        renew_time: Some(MicroTime(wall)),
        lease_transitions: Some(transitions),
        ..LeaseSpec::default()
    };
    let Some((spec, observed)) = current else {
        return Step::Create(held_by_me(None, 0));
    };
    let transitions = spec.lease_transitions.unwrap_or(0);
    match holder(spec) {
        Some(holder) if holder == me => {
            Step::Renew(held_by_me(spec.acquire_time.clone(), transitions))
        }
        Some(holder) if !expired(spec, observed, lease_duration, now) => Step::Wait {
            holder: holder.to_string(),
        },
        _ => Step::Acquire(held_by_me(None, transitions.saturating_add(1))),
    }
}

/// Whether the holder let its lease run out: unchanged for longer than the duration it
/// promised (or ours, when the Lease names none).
fn expired(spec: &LeaseSpec, observed: &Observed, ours: Duration, now: Instant) -> bool {
    let promised = spec
        .lease_duration_seconds
        .and_then(|s| u64::try_from(s).ok())
        .filter(|s| *s > 0)
        .map_or(ours, Duration::from_secs);
    now.saturating_duration_since(observed.since) > promised
}

/// The Lease a stepping-down leader leaves behind: free, and expiring at once, so another
/// replica takes over without waiting out the lease duration (Kueue releases on cancel).
pub fn released(spec: &LeaseSpec, wall: Timestamp) -> LeaseSpec {
    LeaseSpec {
        holder_identity: None,
        lease_duration_seconds: Some(1),
        acquire_time: Some(MicroTime(wall)),
        renew_time: Some(MicroTime(wall)),
        lease_transitions: spec.lease_transitions,
        ..LeaseSpec::default()
    }
}

/// Whether `me` holds the Lease.
pub fn holds(spec: &LeaseSpec, me: &str) -> bool {
    holder(spec) == Some(me)
}
