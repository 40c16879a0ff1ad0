//! Layering rules, read from the source text of `src/`: the engine names only an allow-list of
//! modules and crates (never the Kubernetes client, the async runtime or the layers built on top
//! of it) and reads no clock, nothing outside `src/clock.rs` and test modules reads a clock,
//! nothing outside `src/api/` compares a condition's status with its text, Kubernetes' name
//! syntax is checked only in `src/api/name_syntax.rs`, and no module depends on itself through
//! other modules (an import cycle).
//!
//! Modules are found by following `mod` declarations from `src/lib.rs` (with `#[path]` and inline
//! `mod name { ... }` blocks); a module depends on another when it names it in a `use` declaration
//! or a `crate::`/`super::`/`self::` path.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

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

/// Where a dependency was seen.
#[derive(Clone, Debug)]
struct Site {
    file: PathBuf,
    line: usize,
    text: String,
}

/// The crate's modules and the dependencies between them.
#[derive(Default)]
struct Graph {
    /// Module path (`crate::engine::flavor`) to the file it lives in.
    modules: BTreeMap<String, PathBuf>,
    /// Module to the modules it names, with the first place it names each.
    edges: BTreeMap<String, BTreeMap<String, Site>>,
    /// Modules compiled only for tests (declared under `#[cfg(test)]`).
    test_modules: BTreeSet<String>,
}

impl Graph {
    /// Whether `module` is compiled only for tests: it or a module around it is.
    fn is_test(&self, module: &str) -> bool {
        let mut at = module;
        loop {
            if self.test_modules.contains(at) {
                return true;
            }
            match at.rfind("::") {
                Some(end) => at = &at[..end],
                None => return false,
            }
        }
    }
}

/// A source line with the module it belongs to (inline modules included).
struct Line {
    module: String,
    number: usize,
    text: String,
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn relative(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(path)
        .display()
        .to_string()
}

fn is_comment(line: &str) -> bool {
    line.trim_start().starts_with("//")
}

/// `mod name {` or `pub(crate) mod name;` without its visibility: the name and whether it is inline.
fn module_declaration(line: &str) -> Option<(String, bool)> {
    let mut rest = line.trim();
    if let Some(after) = rest.strip_prefix("pub") {
        rest = after.trim_start();
        if rest.starts_with('(') {
            rest = rest[rest.find(')')? + 1..].trim_start();
        }
    }
    let rest = rest.strip_prefix("mod ")?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    match rest[name.len()..].trim() {
        ";" => Some((name, false)),
        "{" => Some((name, true)),
        _ => None,
    }
}

fn path_attribute(line: &str) -> Option<String> {
    let rest = line.trim().strip_prefix("#[path")?.trim_start();
    let rest = rest.strip_prefix('=')?.trim_start().strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_string())
}

/// Reads `file` (module `module`), registers it and its inline modules, and follows its `mod`
/// declarations into their files. `children_dir` is where its child modules' files live.
fn load(graph: &mut Graph, lines: &mut Vec<Line>, module: &str, file: &Path, children_dir: &Path) {
    graph.modules.insert(module.to_string(), file.to_path_buf());
    let text = read(file);
    // Inline modules open: the indentation of their `mod` line and their module path.
    let mut open: Vec<(usize, String)> = Vec::new();
    let mut path_attr: Option<String> = None;
    let mut cfg_test = false;
    for (index, raw) in text.lines().enumerate() {
        let indent = raw.len() - raw.trim_start().len();
        if let Some((at, _)) = open.last()
            && *at == indent
            && raw.trim() == "}"
        {
            open.pop();
            continue;
        }
        let current = open.last().map_or(module.to_string(), |(_, m)| m.clone());
        if let Some(path) = path_attribute(raw) {
            path_attr = Some(path);
            continue;
        }
        if raw.trim() == "#[cfg(test)]" {
            cfg_test = true;
        }
        if let Some((name, inline)) = module_declaration(raw) {
            let child = format!("{current}::{name}");
            if std::mem::take(&mut cfg_test) {
                graph.test_modules.insert(child.clone());
            }
            if inline {
                graph.modules.insert(child.clone(), file.to_path_buf());
                open.push((indent, child));
            } else {
                let (child_file, grandchildren) = match path_attr.take() {
                    Some(path) => {
                        let dir = file.parent().unwrap_or(children_dir);
                        let child_file = dir.join(path);
                        let stem = child_file.with_extension("");
                        (child_file, stem)
                    }
                    None if children_dir.join(format!("{name}.rs")).exists() => (
                        children_dir.join(format!("{name}.rs")),
                        children_dir.join(&name),
                    ),
                    None => (
                        children_dir.join(&name).join("mod.rs"),
                        children_dir.join(&name),
                    ),
                };
                load(graph, lines, &child, &child_file, &grandchildren);
            }
            continue;
        }
        if !raw.trim_start().starts_with("#[") {
            path_attr = None;
            cfg_test = false;
        }
        lines.push(Line {
            module: current,
            number: index + 1,
            text: raw.to_string(),
        });
    }
}

/// Expands one `use` tree (`super::{a, b::{c, d as e}}`) into its paths (`super::a`, `super::b::c`,
/// `super::b::d`).
fn expand_use(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    let join = |head: &str| match (prefix.is_empty(), head.is_empty()) {
        (true, _) => head.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}::{head}"),
    };
    if let (Some(open), Some(close)) = (tree.find('{'), tree.rfind('}')) {
        let head = join(tree[..open].trim().trim_end_matches("::"));
        let mut depth = 0;
        let mut start = open + 1;
        for (i, c) in tree.char_indices().take(close).skip(open + 1) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_use(&head, &tree[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand_use(&head, &tree[start..close], out);
        return;
    }
    let path = tree.split(" as ").next().unwrap_or("").trim();
    let path = path.strip_suffix("::self").unwrap_or(path);
    if path == "self" {
        out.push(prefix.to_string());
    } else if !path.is_empty() {
        out.push(join(path));
    }
}

/// The `use` declaration starting on `lines[at]`, if one does: its text up to the `;` and the
/// number of lines it spans.
fn use_declaration(lines: &[Line], at: usize) -> Option<(String, usize)> {
    let first = lines[at].text.trim_start();
    let rest = if let Some(rest) = first.strip_prefix("pub") {
        let rest = rest.trim_start();
        if rest.starts_with('(') {
            rest[rest.find(')')? + 1..].trim_start()
        } else {
            rest
        }
    } else {
        first
    };
    let rest = rest.strip_prefix("use ")?;
    let mut text = String::new();
    for (offset, line) in lines[at..].iter().enumerate() {
        let part = if offset == 0 { rest } else { line.text.trim() };
        if let Some(end) = part.find(';') {
            text.push_str(&part[..end]);
            return Some((text, offset + 1));
        }
        text.push_str(part);
        text.push(' ');
    }
    None
}

/// `crate::`, `super::` and `self::` paths named outside `use` declarations.
fn inline_paths(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in text.match_indices(start) {
            let before = text[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
                continue;
            }
            let path: String = text[at..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            found.push(path.trim_end_matches(':').to_string());
        }
    }
    found
}

/// The module a path names from `module`: its longest prefix that is a module of the crate. `None`
/// for paths into other crates.
fn resolve(graph: &Graph, module: &str, path: &str) -> Option<String> {
    let mut segments = path.split("::").filter(|s| !s.is_empty()).peekable();
    let mut at: Vec<&str> = match *segments.peek()? {
        "crate" => {
            segments.next();
            vec!["crate"]
        }
        "self" => {
            segments.next();
            module.split("::").collect()
        }
        "super" => {
            let mut at: Vec<&str> = module.split("::").collect();
            while segments.next_if_eq(&"super").is_some() {
                at.pop();
            }
            at
        }
        first => {
            // A relative path names a child module, or something outside the crate.
            let child = format!("{module}::{first}");
            if !graph.modules.contains_key(&child) {
                return None;
            }
            module.split("::").collect()
        }
    };
    for segment in segments {
        at.push(segment);
        if !graph.modules.contains_key(&at.join("::")) {
            at.pop();
            break;
        }
    }
    Some(at.join("::"))
}

fn build() -> (Graph, Vec<Line>) {
    let mut graph = Graph::default();
    let mut lines = Vec::new();
    let src = src_dir();
    load(&mut graph, &mut lines, "crate", &src.join("lib.rs"), &src);
    let files: BTreeMap<String, PathBuf> = graph.modules.clone();
    let mut at = 0;
    while at < lines.len() {
        let line = &lines[at];
        if is_comment(&line.text) {
            at += 1;
            continue;
        }
        let (paths, span) = match use_declaration(&lines, at) {
            Some((tree, span)) => {
                let mut paths = Vec::new();
                expand_use("", &tree, &mut paths);
                (paths, span)
            }
            None => (inline_paths(&line.text), 1),
        };
        for path in paths {
            let Some(target) = resolve(&graph, &line.module, &path) else {
                continue;
            };
            if target == line.module || target == "crate" {
                continue;
            }
            graph
                .edges
                .entry(line.module.clone())
                .or_default()
                .entry(target)
                .or_insert_with(|| Site {
                    file: files[&line.module].clone(),
                    line: line.number,
                    text: line.text.trim().to_string(),
                });
        }
        at += span;
    }
    (graph, lines)
}

/// One cycle per strongly connected component of more than one module: the modules along it (the
/// first repeated at the end), and every module of the component.
fn cycles(
    edges: &BTreeMap<String, BTreeMap<String, Site>>,
) -> Vec<(Vec<String>, BTreeSet<String>)> {
    let nodes: BTreeSet<&String> = edges
        .iter()
        .flat_map(|(from, to)| std::iter::once(from).chain(to.keys()))
        .collect();
    let reaches = |from: &String| -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for next in edges.get(&n).into_iter().flat_map(|t| t.keys()) {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&String, BTreeSet<String>> =
        nodes.iter().map(|n| (*n, reaches(n))).collect();
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut found = Vec::new();
    for node in &nodes {
        if done.contains(*node) || !reach[node].contains(*node) {
            continue;
        }
        let component: BTreeSet<String> = reach[node]
            .iter()
            .filter(|other| reach[other].contains(*node))
            .cloned()
            .collect();
        done.extend(component.iter().cloned());
        // Walk the shortest way back to `node` inside the component.
        let mut previous: BTreeMap<String, String> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([(*node).clone()]);
        'search: while let Some(n) = queue.pop_front() {
            for next in edges.get(&n).into_iter().flat_map(|t| t.keys()) {
                if !component.contains(next) || previous.contains_key(next) {
                    continue;
                }
                previous.insert(next.clone(), n.clone());
                if next == *node {
                    break 'search;
                }
                queue.push_back(next.clone());
            }
        }
        let mut cycle = vec![(*node).clone()];
        let mut at = previous[*node].clone();
        while at != **node {
            cycle.push(at.clone());
            at = previous[&at].clone();
        }
        cycle.push((*node).clone());
        cycle.reverse();
        found.push((cycle, component));
    }
    found
}

fn describe(graph: &Graph, cycle: &[String]) -> String {
    let steps: Vec<String> = cycle
        .windows(2)
        .map(|pair| {
            let site = &graph.edges[&pair[0]][&pair[1]];
            format!(
                "  {} -> {}  ({}:{} `{}`)",
                pair[0],
                pair[1],
                relative(&site.file),
                site.line,
                site.text
            )
        })
        .collect();
    steps.join("\n")
}

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

/// The crates `Cargo.toml` depends on, with `-` read as `_` as Rust names them.
fn dependency_crates() -> BTreeSet<String> {
    let manifest = read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"));
    let mut crates = BTreeSet::new();
    let mut in_dependencies = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line.ends_with("dependencies]");
            continue;
        }
        if !in_dependencies || line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some((name, _)) = line.split_once('=') {
            crates.insert(name.trim().replace('-', "_"));
        }
    }
    crates
}

/// The first segment of every path a line names outside `use` declarations (`std` of
/// `std::mem::take`), leaving out paths that continue another (`mem` there) and types (`Self::`).
fn path_roots(text: &str) -> Vec<String> {
    let mut roots = Vec::new();
    for (at, _) in text.match_indices("::") {
        let start = text[..at]
            .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let root = &text[start..at];
        let continues = text[..start].ends_with(':') || text[..start].ends_with('$');
        if continues || !root.starts_with(|c: char| c.is_ascii_lowercase() || c == '_') {
            continue;
        }
        roots.push(root.to_string());
    }
    roots
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
    let (at, _) = text
        .match_indices("fn ")
        .find(|(at, _)| text[..*at].chars().next_back().is_none_or(char::is_whitespace))?;
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
