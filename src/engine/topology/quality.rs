//! Placement quality: how compact the pods of one pod set ended up, as the number of domains used
//! at each Topology level and the lowest level where every pod shares one domain. Every TAS
//! placement carries one ([`super::PodSetPlacement::quality`]); an admitted assignment's can be
//! rebuilt from the full level paths of its domains ([`PlacementQuality::from_paths`]).

use std::collections::BTreeSet;
use std::fmt;

use super::model::HOSTNAME_LABEL;

/// Domains used per level by one pod set's placement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlacementQuality {
    /// Topology level keys, coarsest first.
    pub levels: Vec<String>,
    /// Distinct domains holding pods at each level, coarsest first.
    pub domains_per_level: Vec<usize>,
}

impl PlacementQuality {
    /// The quality of a placement whose domains have these full level paths (values of `levels`,
    /// coarsest first); shorter paths are ignored.
    pub fn from_paths<'a>(
        levels: Vec<String>,
        paths: impl IntoIterator<Item = &'a [String]>,
    ) -> Self {
        let mut seen: Vec<BTreeSet<&[String]>> = vec![BTreeSet::new(); levels.len()];
        for path in paths {
            if path.len() != levels.len() {
                continue;
            }
            for (depth, used) in seen.iter_mut().enumerate() {
                used.insert(&path[..=depth]);
            }
        }
        PlacementQuality {
            domains_per_level: seen.iter().map(BTreeSet::len).collect(),
            levels,
        }
    }

    /// Index of the deepest level where every pod is in one domain; `None` when the pods span
    /// several top-level domains (or there are none).
    pub fn lowest_common_level(&self) -> Option<usize> {
        self.domains_per_level.iter().rposition(|count| *count == 1)
    }
}

/// The short name of a level key: `cloud.provider.com/topology-rack` → `rack`,
/// `kubernetes.io/hostname` → `host`.
pub fn short_level_name(key: &str) -> &str {
    if key == HOSTNAME_LABEL {
        return "host";
    }
    let last = key.rsplit('/').next().unwrap_or(key);
    last.strip_prefix("topology-").unwrap_or(last)
}

/// `blocks 1, racks 2, hosts 3; lowest common level: block`.
impl fmt::Display for PlacementQuality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let counts: Vec<String> = self
            .levels
            .iter()
            .zip(&self.domains_per_level)
            .map(|(level, count)| format!("{}s {count}", short_level_name(level)))
            .collect();
        write!(f, "{}; ", counts.join(", "))?;
        match self.lowest_common_level().and_then(|l| self.levels.get(l)) {
            Some(level) => write!(f, "lowest common level: {}", short_level_name(level)),
            None => f.write_str("no common level"),
        }
    }
}

#[cfg(test)]
mod tests;
