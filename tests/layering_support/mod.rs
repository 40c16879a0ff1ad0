//! The reader of `src/` the layering rules check: modules found by following `mod` declarations
//! from `src/lib.rs` (with `#[path]` and inline `mod name { ... }` blocks, and which are compiled
//! only for tests), each source line with its module, and the dependencies between modules (a
//! module depends on another when it names it in a `use` declaration or a
//! `crate::`/`super::`/`self::` path).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Where a dependency was seen.
#[derive(Clone, Debug)]
pub struct Site {
    pub file: PathBuf,
    pub line: usize,
    pub text: String,
}

/// The crate's modules and the dependencies between them.
#[derive(Default)]
pub struct Graph {
    /// Module path (`crate::engine::flavor`) to the file it lives in.
    pub modules: BTreeMap<String, PathBuf>,
    /// Module to the modules it names, with the first place it names each.
    pub edges: BTreeMap<String, BTreeMap<String, Site>>,
    /// Modules compiled only for tests (declared under `#[cfg(test)]`).
    pub test_modules: BTreeSet<String>,
}

impl Graph {
    /// Whether `module` is compiled only for tests: it or a module around it is.
    pub fn is_test(&self, module: &str) -> bool {
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
pub struct Line {
    pub module: String,
    pub number: usize,
    pub text: String,
}

pub fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

pub fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

pub fn relative(path: &Path) -> String {
    path.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(path)
        .display()
        .to_string()
}

pub fn is_comment(line: &str) -> bool {
    line.trim_start().starts_with("//")
}

/// `mod name {` or `pub(crate) mod name;` without its visibility: the name and whether it is inline.
pub fn module_declaration(line: &str) -> Option<(String, bool)> {
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

pub fn path_attribute(line: &str) -> Option<String> {
    let rest = line.trim().strip_prefix("#[path")?.trim_start();
    let rest = rest.strip_prefix('=')?.trim_start().strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_string())
}

/// Reads `file` (module `module`), registers it and its inline modules, and follows its `mod`
/// declarations into their files. `children_dir` is where its child modules' files live.
pub fn load(
    graph: &mut Graph,
    lines: &mut Vec<Line>,
    module: &str,
    file: &Path,
    children_dir: &Path,
) {
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
pub fn expand_use(prefix: &str, tree: &str, out: &mut Vec<String>) {
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
pub fn use_declaration(lines: &[Line], at: usize) -> Option<(String, usize)> {
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
pub fn inline_paths(text: &str) -> Vec<String> {
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
pub fn resolve(graph: &Graph, module: &str, path: &str) -> Option<String> {
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

pub fn build() -> (Graph, Vec<Line>) {
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
pub fn cycles(
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

pub fn describe(graph: &Graph, cycle: &[String]) -> String {
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

/// The crates `Cargo.toml` depends on, with `-` read as `_` as Rust names them.
pub fn dependency_crates() -> BTreeSet<String> {
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
pub fn path_roots(text: &str) -> Vec<String> {
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
