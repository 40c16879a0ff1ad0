//! Feature gates from `--feature-gates` or the file's `featureGates`, never both (Kueue refuses the
//! combination), checked for the TAS profile rule Kueue applies before validating the rest. A gate
//! set away from its default is refused when kuota does not implement its other value and that
//! would change what is admitted (see [`handling::gate`]).

use super::error::{ConfigError, FieldError};
use super::handling::{self, Handling};
use super::types::StrictMap;
use crate::engine::features::{Feature, FeatureGates};

/// The gates in force. `cli` is the `--feature-gates` value; `file` the `featureGates` map, which
/// counts as given whenever the key is present, even empty.
pub fn resolve(cli: &str, file: Option<&StrictMap<bool>>) -> Result<FeatureGates, ConfigError> {
    let gates = match file {
        Some(_) if !cli.is_empty() => return Err(ConfigError::FeatureGateSourcesConflict),
        _ if !cli.is_empty() => cli.parse().map_err(|source| ConfigError::FeatureGate {
            field: "--feature-gates",
            source,
        })?,
        Some(map) => from_map(map).map_err(|source| ConfigError::FeatureGate {
            field: "featureGates",
            source,
        })?,
        None => FeatureGates::default(),
    };
    let field = if cli.is_empty() {
        "featureGates"
    } else {
        "--feature-gates"
    };
    let refused = refused_gates(&gates, field);
    if !refused.is_empty() {
        return Err(ConfigError::Invalid(refused));
    }
    if gates.enabled(Feature::TASProfileMixed) && !gates.enabled(Feature::TopologyAwareScheduling) {
        return Err(ConfigError::Invalid(vec![FieldError::Invalid {
            field: "featureGates".into(),
            value: format!("{}=true", Feature::TASProfileMixed),
            detail: "cannot use a TAS profile with TAS disabled".into(),
        }]));
    }
    Ok(gates)
}

/// Gates set away from Kueue's default whose other value kuota does not implement
/// ([`handling::gate`]).
fn refused_gates(gates: &FeatureGates, field: &str) -> Vec<FieldError> {
    let defaults = FeatureGates::default();
    Feature::all()
        .filter(|f| gates.enabled(*f) != defaults.enabled(*f))
        .filter_map(|f| match handling::gate(f) {
            Handling::Refused(reason) => Some(FieldError::Invalid {
                field: field.to_string(),
                value: format!("{f}={}", gates.enabled(f)),
                detail: reason.to_string(),
            }),
            Handling::ActedOn | Handling::Harmless => None,
        })
        .collect()
}

/// Gates set away from Kueue's default that kuota accepts without acting on them, as
/// `featureGates.Name`.
pub fn ignored(gates: &FeatureGates) -> Vec<String> {
    let defaults = FeatureGates::default();
    Feature::all()
        .filter(|f| gates.enabled(*f) != defaults.enabled(*f))
        .filter(|f| handling::gate(*f) == Handling::Harmless)
        .map(|f| format!("featureGates.{f}"))
        .collect()
}

fn from_map(
    map: &StrictMap<bool>,
) -> Result<FeatureGates, crate::engine::features::FeatureGateError> {
    let mut gates = FeatureGates::default();
    for (name, enabled) in &map.0 {
        gates.try_set(name.parse()?, *enabled)?;
    }
    Ok(gates)
}
