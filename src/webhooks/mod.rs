//! Kueue's admission webhooks, served over HTTPS at controller-runtime's paths.
//!
//! This module owns the webhook server (`server.rs`: TLS from a certificate resolver, one route per
//! path), the CRD conversion webhook ([`conversion`]), the `admission.k8s.io/v1` AdmissionReview wire format ([`review`]), the path table
//! ([`endpoints`], including every job integration's pair of paths) and what each Kueue kind's
//! webhooks default and refuse. A Kueue object is validated by the same conversion the state caches
//! use (`state::admission_input`), so the API server refuses what the caches would set aside; the
//! rules only a webhook can check (those that compare the old object with the new one, those on
//! fields the engine never reads, those behind feature gates) live here.

mod batch_job;
pub mod conversion;
mod defaulting;
mod deployment;
pub mod endpoints;
mod error;
mod findings;
mod framework_job;
mod intake;
mod leaderworkerset;
mod metadata;
mod namespaces;
mod parent_annotations;
mod pod;
mod queues;
pub mod review;
mod server;
mod settings;
mod statefulset;
mod validation;
mod workload;
mod workload_update;

pub use endpoints::{Endpoint, INTEGRATIONS, Integration, KueueMutating, KueueValidating};
pub use error::WebhookError;
pub use namespaces::{NamespaceView, ViewChange};
pub use review::{AdmissionRequest, Operation, Verdict};
pub use server::{listen, routes, serve};
pub use settings::{PodSettings, Webhooks};

#[cfg(test)]
mod tests;
