//! The names of a check's ProvisioningRequests and of their PodTemplates, as Kueue makes them:
//! `<workload>-<check>-<attempt>` and `ppt-<request>-<pod set>`, a name too long for the API
//! cut and ended with a hash of the whole.

use crate::api::keys::provisioning::POD_TEMPLATE_PREFIX;

/// Characters of a hash that ends a shortened name.
const HASH_LENGTH: usize = 5;
/// The longest name kept whole: 253, less the `-` and the hash.
const MAX_PREFIX_LENGTH: usize = 252 - HASH_LENGTH;

/// The name of attempt `attempt` of the request of `check` for `workload`.
pub fn request_name(workload: &str, check: &str, attempt: i32) -> String {
    limit_object_name(format!("{workload}-{check}-{attempt}"))
}

/// The name of the PodTemplate of pod set `pod_set` of request `request`.
pub fn pod_template_name(request: &str, pod_set: &str) -> String {
    limit_object_name(format!("{POD_TEMPLATE_PREFIX}-{request}-{pod_set}"))
}

/// The attempt a request of `check` for `workload` is, read from its name's suffix; `None` when
/// the name is not one of that check's requests for that Workload.
pub fn attempt_of(request: &str, workload: &str, check: &str) -> Option<Attempt> {
    let prefix = limit_object_name(format!("{workload}-{check}-"));
    let digits = request.strip_prefix(&prefix)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Kueue takes a suffix that does not fit its integer as the first attempt.
    Some(Attempt(digits.parse().unwrap_or(1)))
}

/// A request's attempt number, counted from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Attempt(pub i32);

/// `name` as is when it fits, else its first [`MAX_PREFIX_LENGTH`] bytes, a `-` and the first
/// characters of the SHA-1 of the whole name in hex.
fn limit_object_name(name: String) -> String {
    if name.len() <= MAX_PREFIX_LENGTH {
        return name;
    }
    let hash = sha1_smol::Sha1::from(name.as_bytes()).digest().to_string();
    let mut cut = MAX_PREFIX_LENGTH;
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{}", &name[..cut], &hash[..HASH_LENGTH])
}

#[cfg(test)]
mod tests;
