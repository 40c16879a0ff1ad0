//! The answers of writes, taken in as reads.

use std::sync::Arc;

use super::super::watches::{SharedWorkload, slim_workload};
use crate::api::Workload;

/// A Workload a write answered with, held as a watch would deliver it: without the
/// `managedFields` the API server returns, which nothing reads and which outweigh the rest.
pub fn answered(workload: Workload) -> SharedWorkload {
    Arc::new(slim_workload(workload))
}
