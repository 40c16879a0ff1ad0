//! Kubernetes name syntax checks: what the job integration applies to label and annotation values,
//! and what the Kueue objects' conversions and the admission webhooks apply to label keys and values.
//!
//! Each check returns the reason a value is rejected, so callers can name the key that held it.

/// Longest DNS-1123 subdomain (object names, label-key prefixes).
const DNS1123_SUBDOMAIN_MAX: usize = 253;
/// Longest name part of a qualified name (a label key without its prefix).
const QUALIFIED_NAME_MAX: usize = 63;

/// Characters of a Workload name kept before the hash: 253 (the longest object name) less `-`
/// and the hash.
const WORKLOAD_NAME_PREFIX_MAX: usize = 247;
/// Hex characters of the Workload name hash.
const WORKLOAD_NAME_HASH_LEN: usize = 5;

/// The name of the Workload of an owner object: `<kind in lower case>-<name>`, cut to fit, then
/// `-` and 5 hex characters of a SHA-1 over kind, group, name and UID (one per line), so that a
/// re-created owner of the same name gets a new Workload. Digest input and layout are Kueue's,
/// so both name the Workload of an owner alike.
pub(crate) fn owner_workload_name(kind: &str, group: &str, name: &str, uid: &str) -> String {
    let mut prefix = format!("{}-{name}", kind.to_lowercase());
    if prefix.len() > WORKLOAD_NAME_PREFIX_MAX {
        let cut = (0..=WORKLOAD_NAME_PREFIX_MAX)
            .rev()
            .find(|&i| prefix.is_char_boundary(i))
            .unwrap_or(0);
        prefix.truncate(cut);
    }
    let mut digest = sha1_smol::Sha1::new();
    digest.update(format!("{kind}\n{group}\n{name}\n{uid}").as_bytes());
    let hash = digest.digest().to_string();
    format!("{prefix}-{}", &hash[..WORKLOAD_NAME_HASH_LEN])
}

/// Checks a DNS-1123 subdomain: dot-separated lower-case alphanumeric labels that may contain `-`
/// inside, 253 characters at most.
pub(crate) fn check_dns1123_subdomain(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err("must not be empty".to_owned());
    }
    if value.len() > DNS1123_SUBDOMAIN_MAX {
        return Err(format!(
            "must be at most {DNS1123_SUBDOMAIN_MAX} characters, not {}",
            value.len()
        ));
    }
    let label_ok = |label: &str| {
        let bytes = label.as_bytes();
        let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        match (bytes.first(), bytes.last()) {
            (Some(first), Some(last)) => {
                alnum(first) && alnum(last) && bytes.iter().all(|b| alnum(b) || *b == b'-')
            }
            _ => false,
        }
    };
    if value.split('.').all(label_ok) {
        Ok(())
    } else {
        Err(
            "must be a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', \
             starting and ending with a letter or digit"
                .to_owned(),
        )
    }
}

/// Checks a DNS-1123 label: 1 to 63 lower-case letters, digits and `-`, starting and ending with a
/// letter or digit.
pub(crate) fn check_dns1123_label(value: &str) -> Result<(), String> {
    if value.len() > QUALIFIED_NAME_MAX {
        return Err(format!(
            "must be at most {QUALIFIED_NAME_MAX} characters, not {}",
            value.len()
        ));
    }
    if value.contains('.') {
        return Err("must be a DNS-1123 label: no '.'".to_owned());
    }
    check_dns1123_subdomain(value)
}

/// Checks a qualified name, the syntax of a label key: an optional DNS-1123 subdomain prefix and
/// `/`, then 1 to 63 letters, digits, `-`, `_` or `.`, starting and ending with a letter or digit.
pub(crate) fn check_qualified_name(value: &str) -> Result<(), String> {
    let name = match value.split_once('/') {
        None => value,
        Some((prefix, name)) => {
            if name.contains('/') {
                return Err("must contain at most one '/'".to_owned());
            }
            check_dns1123_subdomain(prefix).map_err(|reason| format!("prefix {reason}"))?;
            name
        }
    };
    if name.is_empty() {
        return Err("name part must not be empty".to_owned());
    }
    if name.len() > QUALIFIED_NAME_MAX {
        return Err(format!(
            "name part must be at most {QUALIFIED_NAME_MAX} characters, not {}",
            name.len()
        ));
    }
    let bytes = name.as_bytes();
    let edge_ok = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
    let inner_ok = bytes
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if edge_ok(bytes.first()) && edge_ok(bytes.last()) && inner_ok {
        Ok(())
    } else {
        Err(
            "name part must consist of letters, digits, '-', '_' or '.', \
             and start and end with a letter or digit"
                .to_owned(),
        )
    }
}

/// Checks a label value: empty, or 1 to 63 letters, digits, `-`, `_` or `.`, starting and ending
/// with a letter or digit.
pub(crate) fn check_label_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    if value.len() > QUALIFIED_NAME_MAX {
        return Err(format!(
            "must be at most {QUALIFIED_NAME_MAX} characters, not {}",
            value.len()
        ));
    }
    let bytes = value.as_bytes();
    let edge_ok = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
    let inner_ok = bytes
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if edge_ok(bytes.first()) && edge_ok(bytes.last()) && inner_ok {
        Ok(())
    } else {
        Err(
            "must be empty or consist of letters, digits, '-', '_' or '.', \
             and start and end with a letter or digit"
                .to_owned(),
        )
    }
}

#[cfg(test)]
mod tests;
