//! Registering metric families, each with `replica_role` as its first label, and the options
//! that say which optional families are reported.

use std::cell::RefCell;
use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use prometheus::core::{MetricVec, MetricVecBuilder};
use prometheus::{GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry};

use super::labelled::Labelled;
use crate::api::label_selector;

/// Which optional families are reported, as Kueue's `metrics` configuration says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricsOptions {
    /// `metrics.localQueueMetrics.enable`.
    pub local_queue_metrics: bool,
    /// `metrics.localQueueMetrics.localQueueSelector`: only LocalQueues whose labels match it
    /// are reported; `None` reports every LocalQueue.
    pub local_queue_selector: Option<LabelSelector>,
    /// `metrics.enableClusterQueueResources`.
    pub cluster_queue_resources: bool,
    /// Fair sharing is on: weighted shares are reported.
    pub fair_sharing: bool,
}

impl MetricsOptions {
    /// Whether the `kueue_local_queue_*` series of a LocalQueue with `labels` are reported, as
    /// Kueue's `ShouldExposeLocalQueueMetrics` decides; `None`: the LocalQueue is unknown, and
    /// Kueue reports nothing for it.
    pub fn reports_local_queue(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        self.local_queue_metrics
            && labels.is_some_and(|labels| {
                self.local_queue_selector
                    .as_ref()
                    .is_none_or(|selector| label_selector::matches(selector, labels))
            })
    }
}

/// Registers metric families on one registry; a name clash is a programming error caught by
/// the tests, so it is logged rather than returned. Keeps every labelled family it makes, so a
/// deleted queue's series can be dropped from all of them.
pub(super) struct Families<'a> {
    registry: &'a Registry,
    labelled: RefCell<Vec<Box<dyn Labelled>>>,
}

impl<'a> Families<'a> {
    pub(super) fn new(registry: &'a Registry) -> Self {
        Families {
            registry,
            labelled: RefCell::new(Vec::new()),
        }
    }

    /// Every labelled family made.
    pub(super) fn into_labelled(self) -> Vec<Box<dyn Labelled>> {
        self.labelled.into_inner()
    }

    fn keep<T: MetricVecBuilder + 'static>(&self, family: MetricVec<T>) -> MetricVec<T> {
        self.labelled.borrow_mut().push(Box::new(family.clone()));
        family
    }

    pub(super) fn register<C: prometheus::core::Collector + Clone + 'static>(
        &self,
        collector: C,
    ) -> C {
        if let Err(error) = self.registry.register(Box::new(collector.clone())) {
            tracing::error!(%error, "metric not registered");
        }
        collector
    }

    pub(super) fn counter(&self, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
        let labels: Vec<&str> = std::iter::once("replica_role")
            .chain(labels.iter().copied())
            .collect();
        let family = IntCounterVec::new(Opts::new(name, help), &labels).expect("valid metric");
        self.keep(self.register(family))
    }

    pub(super) fn histogram(
        &self,
        name: &str,
        help: &str,
        labels: &[&str],
        buckets: Vec<f64>,
    ) -> HistogramVec {
        let labels: Vec<&str> = std::iter::once("replica_role")
            .chain(labels.iter().copied())
            .collect();
        let opts = HistogramOpts::new(name, help).buckets(buckets);
        self.keep(self.register(HistogramVec::new(opts, &labels).expect("valid metric")))
    }

    pub(super) fn gauge(&self, name: &str, help: &str, labels: &[&str]) -> GaugeVec {
        let labels: Vec<&str> = std::iter::once("replica_role")
            .chain(labels.iter().copied())
            .collect();
        let family = GaugeVec::new(Opts::new(name, help), &labels).expect("valid metric");
        self.keep(self.register(family))
    }
}
