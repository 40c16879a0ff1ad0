//! `tls` and `controller.cacheSyncTimeout`, checked as Kueue checks them at startup: the
//! version is `VersionTLS12` or `VersionTLS13` (TLS 1.0 and 1.1 are refused), suites and groups
//! are ones Go's `crypto/tls` knows, without duplicates, and suites are not listed with TLS 1.3
//! as the minimum (Go cannot configure TLS 1.3 suites). What kuota can serve of a valid block is
//! decided by [`crate::tls::ServerTls`].

use std::time::Duration;

use super::types;
use super::validate::Problems;
use crate::tls::{TlsOptions, TlsVersion, go_cipher_suite, go_cipher_suite_names, is_go_curve};

/// controller-runtime's wait for first lists when `cacheSyncTimeout` is not set.
pub const DEFAULT_CACHE_SYNC_TIMEOUT: Duration = Duration::from_secs(120);

const VERSION_HINT: &str = "Please use VersionTLS12 or VersionTLS13";

/// The `tls` block as options for the servers; every failing field is recorded.
pub fn tls(block: Option<types::Tls>, problems: &mut Problems) -> TlsOptions {
    let Some(block) = block else {
        return TlsOptions::default();
    };
    let min_version = match block.min_version.as_deref() {
        None | Some("") | Some("VersionTLS12") => TlsVersion::Tls12,
        Some("VersionTLS13") => TlsVersion::Tls13,
        Some(old @ ("VersionTLS10" | "VersionTLS11")) => {
            problems.invalid(
                "tls.minVersion",
                format!("{old:?}"),
                &format!("invalid minVersion. {VERSION_HINT}"),
            );
            TlsVersion::Tls12
        }
        Some(other) => {
            problems.invalid(
                "tls.minVersion",
                format!("{other:?}"),
                &format!("invalid minVersion: unknown tls version {other:?}. {VERSION_HINT}"),
            );
            TlsVersion::Tls12
        }
    };
    let cipher_suites = block.cipher_suites.unwrap_or_default();
    for suite in &cipher_suites {
        if go_cipher_suite(suite).is_none() {
            problems.invalid(
                "tls.cipherSuites",
                format!("{suite:?}"),
                &format!(
                    "invalid cipher suites: Cipher suite {suite} not supported or doesn't \
                     exist. Please use the secure cipher names: {}",
                    go_cipher_suite_names().join(", ")
                ),
            );
        }
    }
    if min_version == TlsVersion::Tls13 && !cipher_suites.is_empty() {
        problems.invalid(
            "tls.cipherSuites",
            format!("{cipher_suites:?}"),
            "may not be specified when `minVersion` is 'VersionTLS13'",
        );
    }
    let mut curve_preferences = Vec::new();
    for id in block.curve_preferences.unwrap_or_default() {
        let curve = u16::try_from(id).ok().filter(|c| *c > 0);
        let detail = match curve {
            None => format!("curve preference {id} is out of range (must be 1-65535)"),
            Some(c) if curve_preferences.contains(&c) => format!("duplicate curve preference {id}"),
            Some(c) if !is_go_curve(c) => format!("curve preference {id} is not supported"),
            Some(c) => {
                curve_preferences.push(c);
                continue;
            }
        };
        problems.invalid(
            "tls.curvePreferences",
            id,
            &format!("invalid curve preferences: {detail}"),
        );
    }
    TlsOptions {
        min_version,
        cipher_suites,
        curve_preferences,
    }
}

/// `controller.cacheSyncTimeout` (nanoseconds, as Go writes a `time.Duration`); unset or zero
/// is controller-runtime's default. A negative one could never be met, so it is refused.
pub fn cache_sync_timeout(nanoseconds: Option<i64>, problems: &mut Problems) -> Duration {
    match nanoseconds {
        None | Some(0) => DEFAULT_CACHE_SYNC_TIMEOUT,
        Some(n) => u64::try_from(n)
            .map(Duration::from_nanos)
            .unwrap_or_else(|_| {
                problems.invalid(
                    "controller.cacheSyncTimeout",
                    n,
                    "must be greater than or equal to 0",
                );
                DEFAULT_CACHE_SYNC_TIMEOUT
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::error::FieldError;

    fn block(min: Option<&str>, suites: &[&str], curves: &[i32]) -> Option<types::Tls> {
        Some(types::Tls {
            min_version: min.map(str::to_string),
            cipher_suites: Some(suites.iter().map(|s| s.to_string()).collect()),
            curve_preferences: Some(curves.to_vec()),
        })
    }

    fn fields(problems: &Problems) -> Vec<String> {
        problems.0.iter().map(FieldError::to_string).collect()
    }

    #[test]
    fn a_valid_block_becomes_the_servers_options() {
        let mut problems = Problems::default();
        let options = tls(
            block(
                Some("VersionTLS12"),
                &["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"],
                &[29, 23],
            ),
            &mut problems,
        );
        assert!(problems.0.is_empty(), "{:?}", fields(&problems));
        assert_eq!(
            options,
            TlsOptions {
                min_version: TlsVersion::Tls12,
                cipher_suites: vec!["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into()],
                curve_preferences: vec![29, 23],
            }
        );
        assert_eq!(tls(None, &mut problems), TlsOptions::default());
    }

    #[test]
    fn old_and_unknown_versions_are_refused() {
        for version in ["VersionTLS10", "VersionTLS11", "TLS1.3"] {
            let mut problems = Problems::default();
            tls(block(Some(version), &[], &[]), &mut problems);
            let errors = fields(&problems);
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert!(errors[0].starts_with("tls.minVersion: Invalid value"));
            assert!(errors[0].contains(VERSION_HINT));
        }
    }

    #[test]
    fn unknown_suites_and_suites_with_tls13_are_refused() {
        let mut problems = Problems::default();
        tls(block(None, &["TLS_NOT_A_SUITE"], &[]), &mut problems);
        let errors = fields(&problems);
        assert_eq!(errors.len(), 1);
        assert!(errors[0].contains("Cipher suite TLS_NOT_A_SUITE not supported"));
        let mut problems = Problems::default();
        let suite = "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256";
        tls(block(Some("VersionTLS13"), &[suite], &[]), &mut problems);
        assert_eq!(
            fields(&problems),
            [format!(
                "tls.cipherSuites: Invalid value: [{suite:?}]: may not be specified when \
                 `minVersion` is 'VersionTLS13'"
            )]
        );
    }

    #[test]
    fn curves_out_of_range_duplicated_or_unknown_are_refused() {
        let mut problems = Problems::default();
        let options = tls(block(None, &[], &[0, 70_000, 29, 29, 30]), &mut problems);
        let errors = fields(&problems);
        assert_eq!(errors.len(), 4, "{errors:?}");
        assert!(errors[0].contains("0 is out of range"));
        assert!(errors[1].contains("70000 is out of range"));
        assert!(errors[2].contains("duplicate curve preference 29"));
        assert!(errors[3].contains("30 is not supported"));
        assert_eq!(options.curve_preferences, [29]);
    }

    #[test]
    fn the_cache_sync_timeout_defaults_to_two_minutes_and_may_not_be_negative() {
        let mut problems = Problems::default();
        assert_eq!(
            cache_sync_timeout(None, &mut problems),
            DEFAULT_CACHE_SYNC_TIMEOUT
        );
        assert_eq!(
            cache_sync_timeout(Some(0), &mut problems),
            DEFAULT_CACHE_SYNC_TIMEOUT
        );
        assert_eq!(
            cache_sync_timeout(Some(5_000_000_000), &mut problems),
            Duration::from_secs(5)
        );
        assert!(problems.0.is_empty());
        cache_sync_timeout(Some(-1), &mut problems);
        assert_eq!(
            fields(&problems),
            ["controller.cacheSyncTimeout: Invalid value: -1: must be greater than or equal to 0"]
        );
    }
}
