//! Kueue's manager configuration file (`config.kueue.x-k8s.io`, kind `Configuration`), so that a
//! Kueue user's file works unchanged with `kuota controller --config FILE`.
//!
//! The file is decoded strictly (unknown or duplicated fields are errors), in `v1beta2` or the older
//! `v1beta1`; Kueue's defaults and presence rules are applied; feature gates come from
//! `--feature-gates` or the file, never both; startup validation covers every field kuota acts on.
//! [`handling`] records what kuota does with each of Kueue's fields and gates: fields and gates
//! kuota refuses fail loading, those it accepts without acting on them are reported in
//! [`Loaded::ignored`].

mod configuration;
pub mod defaults;
mod duration;
mod error;
mod framework;
mod gates;
mod handling;
mod inert;
mod resolve;
mod resources;
mod selector;
mod tls;
mod types;
mod v1beta1;
mod validate;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Path;

use serde::Deserialize;

pub use configuration::{
    ClientConnection, Configuration, Health, Integrations, InternalCertManagement, LeaderElection,
    LocalQueueMetrics, Metrics, RequeuingStrategy, RequeuingTimestamp, VisibilityServer,
    WaitForPodsReady, Webhook, WorkloadRetention,
};
pub use duration::{DurationError, GoDuration};
pub use error::{ConfigError, FieldError};
pub use framework::{Framework, GroupVersionKind, MANAGED as MANAGED_FRAMEWORKS};
pub use handling::{FIELDS, Handling};

pub use validate::NAMESPACE_NAME_LABEL;

use resolve::Origin;
use types::FileConfiguration;
use v1beta1::FileConfigurationV1beta1;

/// The configuration API's current version.
pub const API_VERSION: &str = "config.kueue.x-k8s.io/v1beta2";
/// The older version, still decoded and converted.
pub const API_VERSION_V1BETA1: &str = "config.kueue.x-k8s.io/v1beta1";
pub const KIND: &str = "Configuration";
/// Kueue's namespace when the pod's own is unknown.
pub const DEFAULT_NAMESPACE: &str = "kueue-system";
/// Where a pod reads its own namespace.
pub const SERVICE_ACCOUNT_NAMESPACE_FILE: &str =
    "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/// A resolved configuration and the fields of the file kuota does not act on.
#[derive(Clone, Debug, PartialEq)]
pub struct Loaded {
    pub config: Configuration,
    /// Fields set in the file (dotted paths such as `controller.groupKindConcurrency`) and gates
    /// set away from their default (`featureGates.VisibilityOnDemand`) that kuota accepts without
    /// acting on them, because their absence changes no admission and no count; the caller logs
    /// them once.
    pub ignored: Vec<String>,
}

/// Loads `--config FILE` (or Kueue's code defaults without one) with the `--feature-gates` value.
/// The namespace defaults to the pod's own, else `kueue-system`.
pub fn load(file: Option<&Path>, cli_feature_gates: &str) -> Result<Loaded, ConfigError> {
    let namespace = pod_namespace();
    let Some(path) = file else {
        return from_decoded(
            FileConfiguration::default(),
            Origin::V1beta2,
            cli_feature_gates,
            &namespace,
            Vec::new(),
        );
    };
    std::fs::read_to_string(path)
        .map_err(ConfigError::Read)
        .and_then(|text| parse(&text, cli_feature_gates, &namespace))
        .map_err(|source| ConfigError::InFile {
            path: path.to_path_buf(),
            source: Box::new(source),
        })
}

/// Decodes, defaults and validates a configuration file's text.
pub fn parse(
    text: &str,
    cli_feature_gates: &str,
    default_namespace: &str,
) -> Result<Loaded, ConfigError> {
    let type_meta: TypeMeta = decode(text)?;
    let kind = type_meta
        .kind
        .filter(|k| !k.is_empty())
        .ok_or(ConfigError::MissingKind)?;
    let api_version = type_meta
        .api_version
        .filter(|v| !v.is_empty())
        .ok_or(ConfigError::MissingApiVersion)?;
    match (api_version.as_str(), kind.as_str()) {
        (API_VERSION, KIND) => {
            let file: FileConfiguration = decode(text)?;
            from_decoded(
                file,
                Origin::V1beta2,
                cli_feature_gates,
                default_namespace,
                Vec::new(),
            )
        }
        (API_VERSION_V1BETA1, KIND) => {
            let file: FileConfigurationV1beta1 = decode(text)?;
            let dropped = file.dropped_fields();
            from_decoded(
                file.into_v1beta2(),
                Origin::V1beta1,
                cli_feature_gates,
                default_namespace,
                dropped,
            )
        }
        _ => Err(ConfigError::UnsupportedType { api_version, kind }),
    }
}

/// Kueue's bind-address spelling as a socket address: `:8081` listens on every interface, `0` or
/// an empty address means "do not serve".
pub fn socket_addr(bind: &str) -> Result<Option<SocketAddr>, ConfigError> {
    if bind.is_empty() || bind == "0" {
        return Ok(None);
    }
    let refuse = |reason: &str| ConfigError::BindAddress {
        address: bind.to_string(),
        reason: reason.to_string(),
    };
    let (host, port) = bind
        .rsplit_once(':')
        .ok_or_else(|| refuse("must have the form [host]:port"))?;
    let port: u16 = port
        .parse()
        .map_err(|_| refuse("the port must be a number from 0 to 65535"))?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    let ip: IpAddr = match host {
        "" => Ipv4Addr::UNSPECIFIED.into(),
        "localhost" => Ipv4Addr::LOCALHOST.into(),
        _ => host
            .parse()
            .map_err(|_| refuse("the host must be an IP address or localhost"))?,
    };
    Ok(Some(SocketAddr::new(ip, port)))
}

/// Only `apiVersion` and `kind`, read first to pick the version to decode strictly.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TypeMeta {
    api_version: Option<String>,
    kind: Option<String>,
}

fn decode<'de, T: Deserialize<'de>>(text: &'de str) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(yaml_serde::Deserializer::from_str(text)).map_err(|error| {
        ConfigError::Decode {
            path: error.path().to_string(),
            message: error.into_inner().to_string(),
        }
    })
}

/// Resolves a decoded file; `dropped` holds the fields its version's conversion dropped. Set fields
/// kuota refuses are reported with every other failing field.
fn from_decoded(
    file: FileConfiguration,
    origin: Origin,
    cli_feature_gates: &str,
    default_namespace: &str,
    dropped: Vec<&'static str>,
) -> Result<Loaded, ConfigError> {
    let mut refused = Vec::new();
    let mut ignored = Vec::new();
    for path in dropped.into_iter().chain(file.set_unhandled_fields()) {
        match handling::field(path) {
            Some(Handling::Refused(reason)) => refused.push(FieldError::Forbidden {
                field: path.to_string(),
                detail: reason.to_string(),
            }),
            Some(Handling::ActedOn | Handling::Harmless) | None => ignored.push(path.to_string()),
        }
    }
    let gates = gates::resolve(cli_feature_gates, file.feature_gates.as_ref())?;
    ignored.extend(gates::ignored(&gates));
    match resolve::resolve(file, origin, default_namespace, gates) {
        Ok(config) if refused.is_empty() => Ok(Loaded { config, ignored }),
        Ok(_) => Err(ConfigError::Invalid(refused)),
        Err(ConfigError::Invalid(errors)) => {
            refused.extend(errors);
            Err(ConfigError::Invalid(refused))
        }
        Err(other) => Err(other),
    }
}

/// The pod's namespace from its service account, else `kueue-system`.
fn pod_namespace() -> String {
    std::fs::read_to_string(SERVICE_ACCOUNT_NAMESPACE_FILE)
        .ok()
        .map(|text| text.trim().to_string())
        .filter(|ns| !ns.is_empty())
        .unwrap_or_else(|| DEFAULT_NAMESPACE.to_string())
}

#[cfg(test)]
mod tests;
