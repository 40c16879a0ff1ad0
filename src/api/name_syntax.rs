//! Kubernetes' name syntax, the one home of its checks: DNS-1123 labels and subdomains (object
//! names, label-key prefixes), DNS-1035 labels (Service names), qualified names (label keys,
//! condition types) and label values, as `k8s.io/apimachinery/pkg/util/validation` defines them.
//!
//! Each check returns the reason a value is rejected, so callers can name the object and field
//! that held it.

/// Longest DNS-1123 subdomain (object names, label-key prefixes).
const DNS1123_SUBDOMAIN_MAX: usize = 253;
/// Longest DNS label, and name part of a qualified name (a label key without its prefix).
const QUALIFIED_NAME_MAX: usize = 63;

/// Checks a DNS-1123 subdomain: dot-separated lower-case alphanumeric labels that may contain `-`
/// inside, 253 characters at most.
pub fn check_dns1123_subdomain(value: &str) -> Result<(), String> {
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
pub fn check_dns1123_label(value: &str) -> Result<(), String> {
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
pub fn check_qualified_name(value: &str) -> Result<(), String> {
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
    if is_name_part(name) {
        Ok(())
    } else {
        Err(
            "name part must consist of letters, digits, '-', '_' or '.', \
             and start and end with a letter or digit"
                .to_owned(),
        )
    }
}

/// Letters, digits, `-`, `_` or `.`, starting and ending with a letter or digit: the name part
/// of a qualified name and a non-empty label value.
fn is_name_part(text: &str) -> bool {
    let bytes = text.as_bytes();
    let edge_ok = |b: Option<&u8>| b.is_some_and(u8::is_ascii_alphanumeric);
    edge_ok(bytes.first())
        && edge_ok(bytes.last())
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Checks a label value: empty, or 1 to 63 letters, digits, `-`, `_` or `.`, starting and ending
/// with a letter or digit.
pub fn check_label_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    if value.len() > QUALIFIED_NAME_MAX {
        return Err(format!(
            "must be at most {QUALIFIED_NAME_MAX} characters, not {}",
            value.len()
        ));
    }
    if is_name_part(value) {
        Ok(())
    } else {
        Err(
            "must be empty or consist of letters, digits, '-', '_' or '.', \
             and start and end with a letter or digit"
                .to_owned(),
        )
    }
}

/// Checks a DNS-1035 label, the shape of a Service name: 1 to 63 lower-case letters, digits and
/// `-`, starting with a letter and ending with a letter or digit.
pub fn check_dns1035_label(value: &str) -> Result<(), String> {
    let bytes = value.as_bytes();
    let lower_alphanumeric = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let shaped = match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_lowercase()
                && lower_alphanumeric(last)
                && bytes.iter().all(|b| lower_alphanumeric(b) || *b == b'-')
        }
        _ => false,
    };
    if shaped && bytes.len() <= QUALIFIED_NAME_MAX {
        Ok(())
    } else {
        Err(format!(
            "must be a DNS-1035 label: lowercase letters, digits and '-', starting with a letter, \
             at most {QUALIFIED_NAME_MAX} characters"
        ))
    }
}

/// Kubernetes' domain-prefixed path: a DNS-1123 subdomain, `/`, then a non-empty HTTP path.
pub fn check_domain_prefixed_path(value: &str) -> Result<(), String> {
    let Some((host, path)) = value
        .split_once('/')
        .filter(|(h, p)| !h.is_empty() && !p.is_empty())
    else {
        return Err("must be a domain-prefixed path (such as \"acme.io/foo\")".into());
    };
    check_dns1123_subdomain(host).map_err(|reason| format!("domain {reason}"))?;
    let path_char = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if path.chars().all(path_char) {
        Ok(())
    } else {
        Err(format!(
            "path {path:?} holds a character not allowed in a URL path"
        ))
    }
}

#[cfg(test)]
mod tests;
