//! Feature gates from `--feature-gates` or the file's `featureGates`, never both (Kueue refuses the
//! combination), checked for the TAS profile rule Kueue applies before validating the rest.

use super::error::{ConfigError, FieldError};
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
    if gates.enabled(Feature::TASProfileMixed) && !gates.enabled(Feature::TopologyAwareScheduling) {
        return Err(ConfigError::Invalid(vec![FieldError::Invalid {
            field: "featureGates".into(),
            value: format!("{}=true", Feature::TASProfileMixed),
            detail: "cannot use a TAS profile with TAS disabled".into(),
        }]));
    }
    Ok(gates)
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
