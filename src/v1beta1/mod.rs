//! Kueue's `v1beta1` API beside `v1beta2`: the fields in which the two versions differ, per kind,
//! and the conversion between them that Kueue's conversion webhook makes.
//!
//! Objects are converted as JSON, so every field either version shares passes through untouched,
//! whether kuota's `v1beta2` types read it or not. Each kind lists its differing fields as
//! [`fields::FieldGroup`]s and converts them as Kueue's `*_conversion.go` does; what one version
//! cannot hold is kept in an annotation (see [`fields`]), so converting there and back gives the
//! object as it was.

mod convert;
pub mod crd;
#[cfg(test)]
mod crd_tests;
mod error;
mod fields;
mod queues;
#[cfg(test)]
mod tests;
mod topology_assignment;
mod version;
mod workload;

pub use convert::{Kind, convert};
pub use crd::{CONVERSION_PATH, conversion_crd_names, conversion_webhook, crds};
pub use error::ConversionError;
pub use version::{GROUP, Version};
