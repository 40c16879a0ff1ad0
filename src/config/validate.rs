//! Kueue's startup validation for the blocks kuota acts on. Each check returns what the block
//! resolves to and records every failing field, so that one run reports them all.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::configuration::{ClientConnection, Integrations, WorkloadRetention};
use super::defaults;
use super::duration::GoDuration;
use super::error::FieldError;
use super::framework::{Framework, GroupVersionKind, MANAGED};
use super::selector;
use super::types;
use crate::api::label_selector;
use crate::engine::features::{Feature, FeatureGates};
use crate::engine::model::{FairPreemptionStrategy, FairSharingConfig, QuotaCheckStrategy};

/// The label every namespace carries with its own name.
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";
/// The namespace a managed-jobs selector must never match, besides Kueue's own.
pub const KUBE_SYSTEM: &str = "kube-system";
/// Kubernetes' message for a negative value.
const NEGATIVE: &str = "must be greater than or equal to 0";

/// Records failing fields.
#[derive(Default)]
pub struct Problems(pub Vec<FieldError>);

impl Problems {
    pub fn invalid(&mut self, field: &str, value: impl std::fmt::Display, detail: &str) {
        self.0.push(FieldError::Invalid {
            field: field.to_string(),
            value: value.to_string(),
            detail: detail.to_string(),
        });
    }

    pub fn required(&mut self, field: &str, detail: &str) {
        self.0.push(FieldError::Required {
            field: field.to_string(),
            detail: detail.to_string(),
        });
    }

    pub fn not_supported(&mut self, field: &str, value: &str, supported: &[&str]) {
        self.0.push(FieldError::NotSupported {
            field: field.to_string(),
            value: format!("{value:?}"),
            supported: supported.iter().map(|s| s.to_string()).collect(),
        });
    }

    pub fn duplicate(&mut self, field: &str, value: &str) {
        self.0.push(FieldError::Duplicate {
            field: field.to_string(),
            value: value.to_string(),
        });
    }

    /// A duration that must not be negative, as a `std` duration (zero when it was negative).
    pub fn non_negative(&mut self, field: &str, value: GoDuration) -> std::time::Duration {
        value.to_std().unwrap_or_else(|| {
            self.invalid(field, format!("{:?}", value.to_string()), NEGATIVE);
            std::time::Duration::ZERO
        })
    }

    /// An integer that must not be negative.
    pub fn non_negative_int(&mut self, field: &str, value: i32) -> u32 {
        u32::try_from(value).unwrap_or_else(|_| {
            self.invalid(field, value, NEGATIVE);
            0
        })
    }
}

/// `clientConnection`: a token bucket that can pass requests. Kueue builds client-go's token
/// bucket from any non-negative `qps` (a negative one turns client-side limiting off): at `qps`
/// 0, or `burst` below 1, the bucket refuses every request past the first burst (or all of
/// them), so the controller would start and then write nothing; client-go's own check asks for
/// a positive `burst` with a positive `qps`. A `qps` that is not a number cannot be counted.
pub fn client_connection(
    block: types::ClientConnection,
    problems: &mut Problems,
) -> ClientConnection {
    let qps = block.qps.unwrap_or(defaults::CLIENT_QPS);
    let burst = block.burst.unwrap_or(defaults::CLIENT_BURST);
    if !qps.is_finite() {
        problems.invalid(
            "clientConnection.qps",
            qps,
            "must be a finite number; a negative value turns client-side rate limiting off",
        );
    } else if qps == 0.0 {
        problems.invalid(
            "clientConnection.qps",
            qps,
            "must not be 0: no request past the first burst would be sent; a negative value \
             turns client-side rate limiting off",
        );
    } else if qps > 0.0 && burst < 1 {
        problems.invalid(
            "clientConnection.burst",
            burst,
            "must be greater than 0 when clientConnection.qps is greater than 0",
        );
    }
    ClientConnection { qps, burst }
}

/// `integrations`: known, non-duplicated frameworks that kuota manages (gate-guarded ones only
/// with their gate), well-formed external kinds that duplicate nothing, and the frameworks implied by the listed ones.
pub fn integrations(
    block: types::Integrations,
    gates: &FeatureGates,
    problems: &mut Problems,
) -> Integrations {
    const FIELD: &str = "integrations.frameworks";
    let names = block
        .frameworks
        .filter(|names| !names.is_empty())
        .unwrap_or_else(|| vec![Framework::BatchJob.name().to_string()]);
    let mut frameworks = BTreeSet::new();
    for (i, name) in names.iter().enumerate() {
        let field = format!("{FIELD}[{i}]");
        let Some(framework) = Framework::from_name(name) else {
            let known: Vec<&str> = Framework::all().map(Framework::name).collect();
            problems.not_supported(&field, name, &known);
            continue;
        };
        if !frameworks.insert(framework) {
            problems.duplicate(&field, name);
        }
        if !framework.is_managed() {
            problems.invalid(&field, format_args!("{name:?}"), &unmanaged_detail());
        }
        if framework == Framework::SparkApplication
            && !gates.enabled(Feature::SparkApplicationIntegration)
        {
            problems.invalid(
                &field,
                format_args!("{name:?}"),
                "sparkoperator.k8s.io/sparkapplication integration is alpha feature. please \
                 enable SparkApplicationIntegration featuregate",
            );
        }
    }
    let mut kinds: BTreeSet<GroupVersionKind> = frameworks.iter().map(|f| f.kind()).collect();
    let mut external_frameworks = Vec::new();
    for (i, name) in block.external_frameworks.into_iter().flatten().enumerate() {
        let field = format!("integrations.externalFrameworks[{i}]");
        match parse_kind_arg(&name) {
            None => problems.invalid(
                &field,
                format_args!("{name:?}"),
                "must be format, 'Kind.version.group.com'",
            ),
            Some(kind) if !kinds.insert(kind.clone()) => problems.duplicate(&field, &name),
            Some(kind) => external_frameworks.push(kind),
        }
    }
    let implicit_frameworks =
        if frameworks.iter().any(|f| f.implies_pod()) && !frameworks.contains(&Framework::Pod) {
            BTreeSet::from([Framework::Pod])
        } else {
            BTreeSet::new()
        };
    Integrations {
        frameworks,
        implicit_frameworks,
        external_frameworks,
        label_keys_to_copy: block.label_keys_to_copy.unwrap_or_default(),
    }
}

/// Why a framework Kueue knows but kuota does not integrate is refused.
fn unmanaged_detail() -> String {
    let managed: Vec<String> = MANAGED.iter().map(|f| format!("{:?}", f.name())).collect();
    format!(
        "kuota does not manage this framework, so its jobs would run outside quota; kuota \
         manages {}",
        managed.join(", ")
    )
}

/// `Kind.version.group` (the group may itself hold dots), as Kubernetes' `ParseKindArg` reads it.
fn parse_kind_arg(text: &str) -> Option<GroupVersionKind> {
    let mut parts = text.splitn(3, '.');
    let (kind, version, group) = (parts.next()?, parts.next()?, parts.next()?);
    Some(GroupVersionKind {
        group: group.to_string(),
        version: version.to_string(),
        kind: kind.to_string(),
    })
}

/// `managedJobsNamespaceSelector` must be a valid selector that leaves out `kube-system` and
/// Kueue's own namespace.
pub fn managed_jobs_namespace_selector(
    selector: &LabelSelector,
    namespace: &str,
    problems: &mut Problems,
) {
    const FIELD: &str = "managedJobsNamespaceSelector";
    let errors = selector::validate(selector, FIELD);
    if !errors.is_empty() {
        problems.0.extend(errors);
        return;
    }
    let prohibited = [KUBE_SYSTEM, namespace];
    for name in prohibited.into_iter().filter(|n| !n.is_empty()) {
        let labels = BTreeMap::from([(NAMESPACE_NAME_LABEL.to_string(), name.to_string())]);
        if label_selector::matches(selector, &labels) {
            let shown = serde_json::to_string(selector).unwrap_or_default();
            problems.invalid(
                FIELD,
                shown,
                &format!("should not match the {name:?} namespace"),
            );
        }
    }
}

/// The three strategy lists Kueue accepts for `fairSharing.preemptionStrategies`.
const FAIR_SHARING_STRATEGY_SETS: [&[&str]; 3] = [
    &["LessThanOrEqualToFinalShare"],
    &["LessThanInitialShare"],
    &["LessThanOrEqualToFinalShare", "LessThanInitialShare"],
];

/// `fairSharing`: present means on, and then `preemptionStrategies` is one of the accepted lists.
pub fn fair_sharing(
    block: Option<types::FairSharing>,
    problems: &mut Problems,
) -> FairSharingConfig {
    const FIELD: &str = "fairSharing.preemptionStrategies";
    let Some(block) = block else {
        return FairSharingConfig::default();
    };
    let names = block.preemption_strategies.unwrap_or_default();
    if names.is_empty() {
        problems.required(FIELD, "must be specified");
    } else if !FAIR_SHARING_STRATEGY_SETS.contains(
        &names
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
    ) {
        let supported = FAIR_SHARING_STRATEGY_SETS.map(|set| set.join(","));
        let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
        problems.not_supported(FIELD, &names.join(","), &supported);
    }
    FairSharingConfig {
        enabled: true,
        preemption_strategies: names
            .iter()
            .filter_map(|n| preemption_strategy(n))
            .collect(),
    }
}

fn preemption_strategy(name: &str) -> Option<FairPreemptionStrategy> {
    match name {
        "LessThanOrEqualToFinalShare" => Some(FairPreemptionStrategy::LessThanOrEqualToFinalShare),
        "LessThanInitialShare" => Some(FairPreemptionStrategy::LessThanInitialShare),
        _ => None,
    }
}

/// `resources.quotaCheckStrategy`, read (and checked) only while gate `QuotaCheckStrategy` is on.
pub fn quota_check(
    resources: Option<&types::Resources>,
    gates: &FeatureGates,
    problems: &mut Problems,
) -> QuotaCheckStrategy {
    const FIELD: &str = "resources.quotaCheckStrategy";
    const IGNORE_UNDECLARED: &str = "IgnoreUndeclared";
    const BLOCK_UNDECLARED: &str = "BlockUndeclared";
    let Some(resources) = resources.filter(|_| gates.enabled(Feature::QuotaCheckStrategy)) else {
        return QuotaCheckStrategy::BlockUndeclared;
    };
    let Some(strategy) = resources.quota_check_strategy.as_deref() else {
        return QuotaCheckStrategy::BlockUndeclared;
    };
    let excludes_prefixes = resources
        .exclude_resource_prefixes
        .as_ref()
        .is_some_and(|prefixes| !prefixes.is_empty());
    if strategy == IGNORE_UNDECLARED && excludes_prefixes {
        problems.invalid(
            FIELD,
            strategy,
            "excludeResourcePrefixes is not allowed when quotaCheckStrategy is IgnoreUndeclared",
        );
    }
    match strategy {
        IGNORE_UNDECLARED => QuotaCheckStrategy::IgnoreUndeclared,
        BLOCK_UNDECLARED => QuotaCheckStrategy::BlockUndeclared,
        other => {
            problems.not_supported(FIELD, other, &[IGNORE_UNDECLARED, BLOCK_UNDECLARED]);
            QuotaCheckStrategy::BlockUndeclared
        }
    }
}

#[cfg(test)]
mod tests;

/// `objectRetentionPolicies.workloads`: neither period may be negative.
pub fn workload_retention(
    block: types::WorkloadRetentionPolicy,
    problems: &mut Problems,
) -> WorkloadRetention {
    const FIELD: &str = "objectRetentionPolicies.workloads";
    let after_deactivated_by_kueue = block
        .after_deactivated_by_kueue
        .map(|after| problems.non_negative(&format!("{FIELD}.afterDeactivatedByKueue"), after));
    let after_finished = block
        .after_finished
        .map(|after| problems.non_negative(&format!("{FIELD}.afterFinished"), after));
    WorkloadRetention {
        after_finished,
        after_deactivated_by_kueue,
    }
}
