//! Layering rules, read from the source text of `src/`: the engine names only an allow-list of
//! modules and crates (never the Kubernetes client, the async runtime or the layers built on top
//! of it) and reads no clock, nothing outside `src/clock.rs` and test modules reads a clock,
//! nothing outside `src/api/` compares a condition's status with its text, Kubernetes' name
//! syntax is checked only in `src/api/name_syntax.rs`, and no module depends on itself through
//! other modules (an import cycle).
//!
//! The source is read by [`layering_support`].

mod layering_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use layering_support::*;

/// The modules of the crate the engine may name: itself, the API types it reads, and the small
/// shared containers it stores them in. Anything else of the crate is a layer built on the engine.
const ENGINE_ALLOWED_MODULES: &[&str] = &[
    "crate::engine",
    "crate::api",
    "crate::small_map",
    "crate::name_table",
];

/// The crates the engine may name: the standard library, the Kubernetes API types, error and
/// log macros, and the property-test crate of its tests. Never the client nor the async runtime.
const ENGINE_ALLOWED_CRATES: &[&str] = &[
    "std",
    "core",
    "alloc",
    "k8s_openapi",
    "serde_json",
    "thiserror",
    "tracing",
    "proptest",
];

/// Reads of a clock. The engine is handed the time it decides at, so its decisions repeat; the
/// rest of the crate is handed a `clock::Clock`, so tests set the time instead of waiting on it.
const CLOCK_READS: &[&str] = &[
    "Instant::now",
    "SystemTime::now",
    "Timestamp::now",
    "Utc::now",
    "OffsetDateTime::now",
    "chrono",
];

/// Comparisons of a condition's status with its text: the API types answer that
/// (`api::condition_lookup`), so `Unknown` is told apart the same way everywhere.
const CONDITION_STATUS_COMPARISONS: &[&str] = &[
    "== \"True\"",
    "== \"False\"",
    "!= \"True\"",
    "!= \"False\"",
    "\"True\" ==",
    "\"False\" ==",
];

/// What a function checking Kubernetes' name syntax is called: such checks live in one module.
const NAME_SYNTAX_WORDS: &[&str] = &[
    "dns1123",
    "dns1035",
    "dns_label",
    "dns_subdomain",
    "subdomain",
    "qualified_name",
    "name_part",
    "domain_prefixed",
];

/// The one module of name syntax checks.
const NAME_SYNTAX_HOME: &str = "src/api/name_syntax.rs";

/// The files of `src/` that may read a clock outside tests: the one clock itself.
const CLOCK_READERS: &[&str] = &["src/clock.rs"];

#[test]
fn no_module_cycles_in_src() {
    let (graph, _) = build();
    let found = cycles(&graph.edges);
    let report: Vec<String> = found
        .iter()
        .map(|(cycle, component)| {
            let members: Vec<&str> = component.iter().map(String::as_str).collect();
            format!(
                "cycle among {}:\n{}",
                members.join(", "),
                describe(&graph, cycle)
            )
        })
        .collect();
    assert!(
        found.is_empty(),
        "{} import cycle(s) between modules of src/:\n{}",
        found.len(),
        report.join("\n")
    );
}

/// What one line of engine module `module` names that the engine may not: crate modules outside
/// [`ENGINE_ALLOWED_MODULES`], crates outside [`ENGINE_ALLOWED_CRATES`], and clock reads.
/// `used` holds the paths of the `use` declaration starting on the line, if one does.
fn engine_line_offences(
    graph: &Graph,
    module: &str,
    text: &str,
    used: Option<&[String]>,
    dependencies: &BTreeSet<String>,
) -> Vec<String> {
    let mut offences = Vec::new();
    let allowed_module = |target: &str| {
        ENGINE_ALLOWED_MODULES
            .iter()
            .any(|m| target == *m || target.starts_with(&format!("{m}::")))
    };
    let allowed_crate = |root: &str| ENGINE_ALLOWED_CRATES.contains(&root);
    let paths = match used {
        Some(paths) => paths.to_vec(),
        None => inline_paths(text),
    };
    for path in &paths {
        match resolve(graph, module, path) {
            Some(target) if !allowed_module(&target) => {
                offences.push(format!("names {target}"));
            }
            Some(_) => {}
            None => {
                let root = path.split("::").next().unwrap_or("");
                if used.is_some()
                    && root.starts_with(|c: char| c.is_ascii_lowercase())
                    && !allowed_crate(root)
                {
                    offences.push(format!("uses crate {root}"));
                }
            }
        }
    }
    if used.is_none() {
        for root in path_roots(text) {
            if dependencies.contains(&root) && !allowed_crate(&root) {
                offences.push(format!("names crate {root}"));
            }
        }
    }
    for clock in CLOCK_READS {
        if text.contains(clock) {
            offences.push(format!("reads a clock ({clock})"));
        }
    }
    offences
}

/// Every line of the engine, checked by [`engine_line_offences`], as `file:line what: text`.
fn engine_offences(graph: &Graph, lines: &[Line], dependencies: &BTreeSet<String>) -> Vec<String> {
    let mut offences = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let line = &lines[at];
        let mut span = 1;
        if line.module.starts_with("crate::engine") && !is_comment(&line.text) {
            let used = use_declaration(lines, at).map(|(tree, lines_spanned)| {
                span = lines_spanned;
                let mut paths = Vec::new();
                expand_use("", &tree, &mut paths);
                paths
            });
            for what in engine_line_offences(
                graph,
                &line.module,
                &line.text,
                used.as_deref(),
                dependencies,
            ) {
                offences.push(format!(
                    "{}:{} {what}: `{}`",
                    relative(&graph.modules[&line.module]),
                    line.number,
                    line.text.trim()
                ));
            }
        }
        at += span;
    }
    offences
}

#[test]
fn engine_names_only_what_it_may_and_reads_no_clock() {
    let (graph, lines) = build();
    let offences = engine_offences(&graph, &lines, &dependency_crates());
    assert!(
        offences.is_empty(),
        "the engine names what it must not:\n{}",
        offences.join("\n")
    );
}

#[test]
fn the_engine_check_refuses_other_layers_crates_and_clocks() {
    let mut graph = Graph::default();
    for module in [
        "crate",
        "crate::engine",
        "crate::engine::model",
        "crate::api",
        "crate::state",
        "crate::small_map",
    ] {
        graph.modules.insert(module.to_string(), PathBuf::new());
    }
    let dependencies: BTreeSet<String> = ["kube", "tokio", "serde_json", "time"]
        .map(String::from)
        .into();
    let check = |text: &str| {
        let mut used = Vec::new();
        let tree = text.trim().strip_prefix("use ").map(|rest| {
            expand_use("", rest.trim_end_matches(';'), &mut used);
            used.as_slice()
        });
        engine_line_offences(&graph, "crate::engine", text, tree, &dependencies)
    };
    for allowed in [
        "use std::collections::BTreeMap;",
        "use crate::api::{Workload, keys};",
        "use super::small_map::SmallMap;",
        "use model::Flavor;",
        "use PendingReason as P;",
        "use serde_json::json;",
        "let n = std::mem::take(&mut self.rows) + serde_json::to_string(&x)?;",
        "let d = std::time::Duration::from_secs(1);",
    ] {
        assert_eq!(check(allowed), Vec::<String>::new(), "{allowed}");
    }
    for (refused, why) in [
        ("use crate::state::Cluster;", "names crate::state"),
        (
            "let c = crate::state::Cluster::new();",
            "names crate::state",
        ),
        ("use kube::Api;", "uses crate kube"),
        ("use rand::Rng;", "uses crate rand"),
        ("tokio::spawn(work);", "names crate tokio"),
        (
            "let t = time::OffsetDateTime::now_utc();",
            "names crate time",
        ),
        ("let at = Instant::now();", "reads a clock (Instant::now)"),
        (
            "let at = std::time::SystemTime::now();",
            "reads a clock (SystemTime::now)",
        ),
        (
            "let at = Timestamp::now();",
            "reads a clock (Timestamp::now)",
        ),
        ("let at = chrono::Utc::now();", "reads a clock (Utc::now)"),
    ] {
        assert!(
            check(refused).iter().any(|offence| offence == why),
            "{refused}: {:?}",
            check(refused)
        );
    }
}

/// The clock reads `text` makes, outside a line comment.
fn clock_reads_in(text: &str) -> Vec<&'static str> {
    let code = text.split("//").next().unwrap_or_default();
    CLOCK_READS
        .iter()
        .copied()
        .filter(|read| code.contains(read))
        .collect()
}

/// Every clock read in `src/` outside [`CLOCK_READERS`] and test modules, as `file:line what: text`.
fn clock_reads(graph: &Graph, lines: &[Line]) -> Vec<String> {
    let mut found = Vec::new();
    for line in lines {
        let file = relative(&graph.modules[&line.module]);
        if graph.is_test(&line.module) || CLOCK_READERS.contains(&file.as_str()) {
            continue;
        }
        for read in clock_reads_in(&line.text) {
            found.push(format!(
                "{file}:{} reads a clock ({read}): `{}`",
                line.number,
                line.text.trim()
            ));
        }
    }
    found
}

#[test]
fn only_the_clock_reads_the_time() {
    let (graph, lines) = build();
    let found = clock_reads(&graph, &lines);
    assert!(
        found.is_empty(),
        "the time is read outside src/clock.rs; take a `clock::Clock` instead:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_clock_check_sees_reads_and_leaves_tests_and_comments_alone() {
    for read in [
        "let at = tokio::time::Instant::now();",
        "let wall = Timestamp::now();",
        "let now = time::OffsetDateTime::now_utc();",
        "std::time::SystemTime::now().duration_since(UNIX_EPOCH)",
    ] {
        assert_eq!(clock_reads_in(read).len(), 1, "{read}");
    }
    for not_a_read in [
        "let at = clock.instant();",
        "// Instant::now() would be wrong here",
        "let later = start + Duration::from_secs(1);",
    ] {
        assert_eq!(
            clock_reads_in(not_a_read),
            Vec::<&str>::new(),
            "{not_a_read}"
        );
    }
    let (graph, _) = build();
    assert!(graph.is_test("crate::controllers::leader::tests"));
    assert!(graph.is_test("crate::clock::tests"));
    assert!(!graph.is_test("crate::controllers::leader"));
    assert!(!graph.is_test("crate::tls::manage"));
}

/// The condition status comparisons `text` makes, outside a line comment.
fn status_comparisons_in(text: &str) -> Vec<&'static str> {
    let code = text.split("//").next().unwrap_or_default();
    CONDITION_STATUS_COMPARISONS
        .iter()
        .copied()
        .filter(|comparison| code.contains(comparison))
        .collect()
}

#[test]
fn condition_statuses_are_compared_only_in_the_api_types() {
    let (graph, lines) = build();
    let mut found = Vec::new();
    for line in &lines {
        let file = relative(&graph.modules[&line.module]);
        if graph.is_test(&line.module) || file.starts_with("src/api/") {
            continue;
        }
        for comparison in status_comparisons_in(&line.text) {
            found.push(format!(
                "{file}:{} compares a status (`{comparison}`): `{}`",
                line.number,
                line.text.trim()
            ));
        }
    }
    assert!(
        found.is_empty(),
        "use `HasConditions`/`ConditionEntry` (is_true, is_false, has_status):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_status_check_sees_comparisons_and_not_accessors() {
    for comparison in [
        ".any(|c| c.type_ == FINISHED && c.status == \"True\")",
        "Some(current) if current.status == \"False\" => return None,",
        "if \"True\" == c.status {",
    ] {
        assert_eq!(status_comparisons_in(comparison).len(), 1, "{comparison}");
    }
    for accessor in [
        "workload.condition_is_true(FINISHED)",
        "let text = if status { \"True\" } else { \"False\" };",
        "// c.status == \"True\" would miss Unknown",
    ] {
        assert_eq!(
            status_comparisons_in(accessor),
            Vec::<&str>::new(),
            "{accessor}"
        );
    }
}

/// The name of the function `text` defines, if it defines one.
fn defined_function(text: &str) -> Option<&str> {
    let (at, _) = text.match_indices("fn ").find(|(at, _)| {
        text[..*at]
            .chars()
            .next_back()
            .is_none_or(char::is_whitespace)
    })?;
    let rest = &text[at + 3..];
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

#[test]
fn name_syntax_is_checked_in_one_module() {
    let (graph, lines) = build();
    let mut found = Vec::new();
    for line in &lines {
        let file = relative(&graph.modules[&line.module]);
        if graph.is_test(&line.module) || file == NAME_SYNTAX_HOME || is_comment(&line.text) {
            continue;
        }
        let Some(name) = defined_function(&line.text) else {
            continue;
        };
        if NAME_SYNTAX_WORDS.iter().any(|word| name.contains(word)) {
            found.push(format!("{file}:{} defines {name}", line.number));
        }
    }
    assert!(
        found.is_empty(),
        "Kubernetes' name syntax is checked outside {NAME_SYNTAX_HOME}; call it instead:\n{}",
        found.join("\n")
    );
    assert_eq!(
        defined_function("pub(super) fn is_dns_subdomain(name: &str) -> bool {"),
        Some("is_dns_subdomain")
    );
    assert_eq!(defined_function("let often = |x| x;"), None);
}

/// The reader finds the modules and dependencies it must, so the tests above can fail.
#[test]
fn the_reader_sees_modules_and_dependencies() {
    let (graph, _) = build();
    for module in [
        "crate::engine",
        "crate::engine::cycle",
        "crate::engine::topology::placement::select",
        "crate::state::topology_input::tests",
        "crate::api::keys",
    ] {
        assert!(graph.modules.contains_key(module), "{module} not found");
    }
    let depends = |from: &str, to: &str| graph.edges.get(from).is_some_and(|t| t.contains_key(to));
    assert!(depends("crate::engine::cycle", "crate::engine::flavor"));
    assert!(depends(
        "crate::engine::decision",
        "crate::api::keys::evicted_reasons"
    ));
    assert!(depends("crate::api", "crate::api::workload"));
}

#[test]
fn use_trees_expand_to_every_path() {
    let mut paths = Vec::new();
    expand_use(
        "",
        "super::{self, a::{b, c as d}, e::*, f::g::self}",
        &mut paths,
    );
    assert_eq!(
        paths,
        [
            "super",
            "super::a::b",
            "super::a::c",
            "super::e::*",
            "super::f::g"
        ]
    );
    assert_eq!(
        inline_paths("let x = super::workload::NAME + crate::a::B; $crate::c"),
        ["crate::a::B", "super::workload::NAME"]
    );
}

#[test]
fn a_cycle_is_found_and_listed() {
    let site = || Site {
        file: PathBuf::new(),
        line: 0,
        text: String::new(),
    };
    let mut edges: BTreeMap<String, BTreeMap<String, Site>> = BTreeMap::new();
    for (from, to) in [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d"), ("d", "e")] {
        edges
            .entry(from.to_string())
            .or_default()
            .insert(to.to_string(), site());
    }
    let found = cycles(&edges);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0, ["a", "b", "c", "a"]);
    assert_eq!(
        found[0].1,
        BTreeSet::from(["a", "b", "c"].map(String::from))
    );
    if let Some(targets) = edges.get_mut("c") {
        targets.remove("a");
    }
    assert!(cycles(&edges).is_empty());
}
