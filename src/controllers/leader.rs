//! Leader election on a `coordination.k8s.io/v1` Lease, as Kueue's manager elects: every
//! replica keeps its caches warm and serves probes and metrics, only the leader decides and
//! writes. Leadership is published on a watch channel, and the writer checks the leader's
//! [`Tenure`] before every request: a renewal counts from when it was sent, and the tenure ends
//! one renew deadline later unless renewed again, on the leader's own clock. A leader that cannot
//! renew within the renew deadline stops the process (as Kueue's manager exits). A new leader
//! starts deciding once the old leader's writes are surely answered or abandoned.

mod decide;
mod tenure;
#[cfg(test)]
mod tests;

pub use self::tenure::Tenure;

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use tokio::sync::watch;
use tokio::time::{Instant, MissedTickBehavior, interval, timeout};

use self::decide::{Observed, Step, holds, observe, released, step};
use super::error::ControllerError;
use crate::clock::Clock;

/// The Lease and its timing, from Kueue's `leaderElection` configuration.
#[derive(Clone, Debug)]
pub struct LeaseSettings {
    pub name: String,
    /// `None`: the pod's own namespace (`POD_NAMESPACE`), else the client's default namespace.
    pub namespace: Option<String>,
    pub lease_duration: Duration,
    pub renew_deadline: Duration,
    pub retry_period: Duration,
}

/// This replica's name in the Lease: the pod name (or host name) and a random suffix, so a
/// restarted pod never mistakes its predecessor's lease for its own.
pub fn identity() -> String {
    let base = std::env::var("POD_NAME")
        .ok()
        .filter(|n| !n.is_empty())
        .or_else(|| {
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .ok()
                .map(|h| h.trim().to_string())
                .filter(|h| !h.is_empty())
        })
        .unwrap_or_else(|| "kuota".to_string());
    // Every `RandomState` is keyed afresh (random per thread, then counted up), so hashing the
    // process id with a new one differs between processes and between calls.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    format!("{base}_{:016x}", hasher.finish())
}

/// One replica's candidacy for the Lease.
pub struct Candidate {
    api: Api<Lease>,
    settings: LeaseSettings,
    namespace: String,
    me: String,
    clock: Clock,
}

/// The outcome of one try.
enum Tried {
    /// This replica holds the Lease; `took_over`: it was just taken from a holder that let it
    /// run out (not created, renewed, or taken after its holder gave it up).
    Holding {
        took_over: bool,
    },
    HeldBy(String),
    /// Someone else wrote the Lease between our read and our write.
    Raced,
}

impl Candidate {
    pub fn new(client: Client, settings: LeaseSettings, me: String, clock: Clock) -> Self {
        let namespace = settings
            .namespace
            .clone()
            .or_else(|| {
                std::env::var("POD_NAMESPACE")
                    .ok()
                    .filter(|n| !n.is_empty())
            })
            .unwrap_or_else(|| client.default_namespace().to_string());
        Candidate {
            api: Api::namespaced(client, &namespace),
            settings,
            namespace,
            me,
            clock,
        }
    }

    fn lost(&self) -> ControllerError {
        ControllerError::LostLeadership {
            lease: format!("{}/{}", self.namespace, self.settings.name),
        }
    }

    /// Tries for the Lease every retry period, publishing on `leading` when this replica leads
    /// and extending `tenure` with every renewal. Returns only once leadership is lost: another
    /// replica took the Lease, or no renewal succeeded within the renew deadline.
    pub async fn run(&self, leading: &watch::Sender<bool>, tenure: &Tenure) -> ControllerError {
        tracing::info!(
            lease = %format!("{}/{}", self.namespace, self.settings.name),
            identity = %self.me,
            "leader election starts"
        );
        let mut observed = None;
        let mut renewed: Option<Instant> = None;
        let mut tick = interval(self.settings.retry_period);
        tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let sent = self.clock.instant();
            let tried = timeout(self.settings.renew_deadline, self.try_once(&mut observed)).await;
            let is_leader = *leading.borrow();
            match tried {
                Ok(Ok(Tried::Holding { took_over })) => {
                    renewed = Some(sent);
                    tenure.extend_to(sent + self.settings.renew_deadline);
                    if !is_leader {
                        if took_over {
                            self.settle().await;
                        }
                        tracing::info!(identity = %self.me, "became the leader");
                        leading.send_replace(true);
                    }
                }
                Ok(Ok(Tried::HeldBy(holder))) => {
                    if is_leader {
                        tenure.end();
                        tracing::error!(%holder, "another replica took the lease");
                        return self.lost();
                    }
                    tracing::debug!(%holder, "following");
                }
                Ok(Ok(Tried::Raced)) => tracing::debug!("the lease changed while written"),
                Ok(Err(error)) => tracing::warn!(%error, "lease not read or written"),
                Err(_) => tracing::warn!("lease call timed out"),
            }
            let now = self.clock.instant();
            if is_leader
                && renewed.is_none_or(|at| {
                    now.saturating_duration_since(at) >= self.settings.renew_deadline
                })
            {
                tenure.end();
                tracing::error!("the lease was not renewed within the renew deadline");
                return self.lost();
            }
        }
    }

    /// Waits, once the Lease is taken over, for what the previous leader may still have had in flight:
    /// its tenure ended at least `leaseDuration - renewDeadline` before this replica could win
    /// the Lease, its writes were cut off then, and this as long again lets the watches bring
    /// what landed before deciding on it.
    async fn settle(&self) {
        let settle = self
            .settings
            .lease_duration
            .saturating_sub(self.settings.renew_deadline);
        tracing::info!(
            ?settle,
            "lease won; waiting for the previous leader's last writes"
        );
        tokio::time::sleep(settle).await;
    }

    async fn try_once(&self, observed: &mut Option<Observed>) -> Result<Tried, kube::Error> {
        let read = self.api.get_opt(&self.settings.name).await?;
        let reading = self.clock.read();
        let (now, wall) = (reading.instant.into_std(), reading.wall);
        let spec = read
            .as_ref()
            .and_then(|l| l.spec.clone())
            .unwrap_or_default();
        let seen = observe(observed.take(), &spec, now);
        let decided = step(
            read.as_ref().map(|_| (&spec, &seen)),
            &self.me,
            self.settings.lease_duration,
            now,
            wall,
        );
        *observed = Some(seen);
        // A holder that gave the Lease up ended its tenure first; one that let it run out may
        // still have writes on their way.
        let took_over = matches!(decided, Step::Acquire(_))
            && spec
                .holder_identity
                .as_deref()
                .is_some_and(|h| !h.is_empty());
        let written = match decided {
            Step::Wait { holder } => return Ok(Tried::HeldBy(holder)),
            Step::Create(spec) => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.settings.name.clone()),
                        namespace: Some(self.namespace.clone()),
                        ..ObjectMeta::default()
                    },
                    spec: Some(spec),
                };
                self.api.create(&PostParams::default(), &lease).await
            }
            Step::Acquire(spec) | Step::Renew(spec) => {
                let mut lease = read.unwrap_or_default();
                lease.spec = Some(spec);
                self.api
                    .replace(&self.settings.name, &PostParams::default(), &lease)
                    .await
            }
        };
        match written {
            Ok(_) => Ok(Tried::Holding { took_over }),
            Err(kube::Error::Api(status)) if status.code == 409 => Ok(Tried::Raced),
            Err(error) => Err(error),
        }
    }

    /// Frees the Lease if this replica holds it, so the next leader need not wait it out. A
    /// renewal that was cut off on its way may still land first; the release then reads the
    /// Lease again rather than giving up.
    pub async fn release(&self) {
        let released = async {
            loop {
                match self.release_once().await {
                    Err(kube::Error::Api(status)) if status.code == 409 => {
                        tracing::debug!("the lease changed while released; reading it again");
                    }
                    done => return done,
                }
            }
        };
        match timeout(self.settings.renew_deadline, released).await {
            Ok(Ok(true)) => tracing::info!("lease released"),
            Ok(Ok(false)) => {}
            Ok(Err(error)) => tracing::warn!(%error, "lease not released"),
            Err(_) => tracing::warn!("lease release timed out"),
        }
    }

    async fn release_once(&self) -> Result<bool, kube::Error> {
        let Some(mut lease) = self.api.get_opt(&self.settings.name).await? else {
            return Ok(false);
        };
        let spec = lease.spec.clone().unwrap_or_default();
        if !holds(&spec, &self.me) {
            return Ok(false);
        }
        lease.spec = Some(released(&spec, self.clock.wall()));
        self.api
            .replace(&self.settings.name, &PostParams::default(), &lease)
            .await
            .map(|_| true)
    }
}
