//! API requests a phase costs: the kube-apiserver's own `apiserver_request_total` counter,
//! scraped from its `/metrics` before and after a phase, summed by verb, resource and
//! subresource, with what the benchmark itself sent there taken out. The counter does not say
//! which client sent a request, so rows only the control plane's own components send here are
//! dropped too ([`Counts::without_control_plane`]); what is left is the controller's.

use std::collections::BTreeMap;
use std::fmt::Write;

use anyhow::{Context, Result};
use kube::Client;

/// Resources no controller under test reads one by one or writes here.
const CONTROL_PLANE_ONLY: [&str; 2] = ["coordination.k8s.io/leases", "nodes"];

/// One row: verb, resource (`group/resource`, bare for the core group) and subresource.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub verb: String,
    pub resource: String,
    pub subresource: String,
}

impl Key {
    pub fn new(verb: &str, resource: &str, subresource: &str) -> Self {
        Key {
            verb: verb.to_string(),
            resource: resource.to_string(),
            subresource: subresource.to_string(),
        }
    }

    fn label(&self) -> String {
        match self.subresource.as_str() {
            "" => format!("{} {}", self.verb, self.resource),
            sub => format!("{} {}/{sub}", self.verb, self.resource),
        }
    }
}

/// Requests by row; `conflicts` counts those answered 409.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counts {
    pub all: BTreeMap<Key, f64>,
    pub conflicts: BTreeMap<Key, f64>,
}

/// The value of label `name` in a Prometheus label set (`a="x",b="y"`); label values here
/// hold no quotes or commas.
fn label<'a>(labels: &'a str, name: &str) -> &'a str {
    labels
        .split(',')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| key.trim() == name)
        .map(|(_, value)| value.trim().trim_matches('"'))
        .unwrap_or_default()
}

impl Counts {
    /// Sums `apiserver_request_total` of a `/metrics` text by row.
    pub fn parse(text: &str) -> Counts {
        let mut counts = Counts::default();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix("apiserver_request_total{") else {
                continue;
            };
            let Some((labels, value)) = rest.rsplit_once('}') else {
                continue;
            };
            let Ok(value) = value.trim().parse::<f64>() else {
                continue;
            };
            let resource = match label(labels, "group") {
                "" => label(labels, "resource").to_string(),
                group => format!("{group}/{}", label(labels, "resource")),
            };
            let key = Key::new(
                label(labels, "verb"),
                &resource,
                label(labels, "subresource"),
            );
            if label(labels, "code") == "409" {
                *counts.conflicts.entry(key.clone()).or_default() += value;
            }
            *counts.all.entry(key).or_default() += value;
        }
        counts
    }

    /// What was counted after `before` was.
    pub fn since(&self, before: &Counts) -> Counts {
        let minus = |now: &BTreeMap<Key, f64>, then: &BTreeMap<Key, f64>| {
            now.iter()
                .map(|(k, v)| (k.clone(), v - then.get(k).copied().unwrap_or_default()))
                .filter(|(_, v)| *v > 0.0)
                .collect()
        };
        Counts {
            all: minus(&self.all, &before.all),
            conflicts: minus(&self.conflicts, &before.conflicts),
        }
    }

    /// Takes out requests someone else is known to have sent.
    pub fn without(mut self, known: &[(Key, f64)]) -> Counts {
        for (key, count) in known {
            if let Some(v) = self.all.get_mut(key) {
                *v = (*v - count).max(0.0);
            }
        }
        self
    }

    /// Drops the rows that in this benchmark only the control plane's own components send: both
    /// controllers run without leader election and write no Node, so Lease and Node requests
    /// are kwok's heartbeats for its fake nodes (which grow with a phase's length, not with
    /// what a controller does), and non-resource paths are discovery.
    pub fn without_control_plane(mut self) -> Counts {
        let theirs = |key: &Key| {
            CONTROL_PLANE_ONLY.contains(&key.resource.as_str())
                || key.resource.is_empty()
                || key.resource.starts_with('/')
        };
        self.all.retain(|key, _| !theirs(key));
        self.conflicts.retain(|key, _| !theirs(key));
        self
    }

    pub fn total(&self) -> f64 {
        self.all.values().sum()
    }
}

/// The API server's counters now.
pub async fn scrape(client: &Client) -> Result<Counts> {
    let request = hyper::Request::get("/metrics")
        .body(Vec::new())
        .context("build GET /metrics")?;
    let text = client
        .request_text(request)
        .await
        .context("GET the API server's /metrics")?;
    Ok(Counts::parse(&text))
}

/// One column of the table: a controller on a shape, its counts and its Workloads.
pub struct Column<'a> {
    pub title: String,
    pub counts: &'a Counts,
    pub workloads: usize,
}

/// Requests per Workload, a row per verb/resource/subresource that reaches `floor` per Workload
/// in some column (conflicts in parentheses), then the total of every row.
pub fn table(columns: &[Column], floor: f64) -> String {
    let per = |c: &Column, v: f64| v / c.workloads.max(1) as f64;
    let mut keys: Vec<&Key> = columns.iter().flat_map(|c| c.counts.all.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.retain(|k| {
        columns
            .iter()
            .any(|c| per(c, c.counts.all.get(*k).copied().unwrap_or_default()) >= floor)
    });
    let mut out = String::from("| Requests per Workload |");
    for c in columns {
        let _ = write!(out, " {} |", c.title);
    }
    out.push_str("\n|---|");
    out.push_str(&"---|".repeat(columns.len()));
    for key in keys {
        let _ = write!(out, "\n| {} |", key.label());
        for c in columns {
            let all = per(c, c.counts.all.get(key).copied().unwrap_or_default());
            let conflicts = per(c, c.counts.conflicts.get(key).copied().unwrap_or_default());
            if conflicts >= 0.005 {
                let _ = write!(out, " {all:.2} ({conflicts:.2} conflicts) |");
            } else {
                let _ = write!(out, " {all:.2} |");
            }
        }
    }
    out.push_str("\n| total |");
    for c in columns {
        let _ = write!(out, " {:.2} |", per(c, c.counts.total()));
    }
    out
}
