//! Objects are found by `api::ObjectKey` (namespace and name) or, cluster-scoped, by their
//! name; never by a `"namespace/name"` string that has to be parsed back (kube-runtime's
//! `ObjectRef`, Kueue's `NamespacedName`). Read from the source text of `src/`: no string is split
//! at `/` but where the syntax being read has a `/` of its own, and in `src/state`,
//! `src/controllers` and `src/engine` no `format!` makes a bare `"{a}/{b}"` (the shape of such a
//! key) but for the log fields and messages listed. Each exception names its reason.

use std::fs;
use std::path::{Path, PathBuf};

/// A place allowed to do what the checks refuse: its file, a text the offending line or
/// format string contains, and why it is no object key.
struct Allowed {
    file: &'static str,
    text: &'static str,
    reason: &'static str,
}

/// Splits of a string at `/`.
const SLASH_SPLITS: &[&str] = &[
    "split_once('/')",
    "split_once(\"/\")",
    "rsplit_once('/')",
    "rsplit_once(\"/\")",
    "split('/')",
    "split(\"/\")",
    "rsplit('/')",
    "rsplit(\"/\")",
    "splitn(2, '/')",
    "rsplitn(2, '/')",
];

const SPLITS_ALLOWED: &[Allowed] = &[
    Allowed {
        file: "src/api/name_syntax.rs",
        text: "value.split_once('/')",
        reason: "a label key's optional DNS-1123 prefix (Kubernetes' IsQualifiedName)",
    },
    Allowed {
        file: "src/api/name_syntax.rs",
        text: ".split_once('/')",
        reason: "a domain-prefixed path (a finalizer name): its host, then its path",
    },
    Allowed {
        file: "src/engine/topology/quality.rs",
        text: "key.rsplit('/')",
        reason: "the last segment of a topology level's label key, for its short metric name",
    },
    Allowed {
        file: "src/jobs/framework/start_stop.rs",
        text: "pointer.rsplit_once('/')",
        reason: "a JSON pointer into a job: its parent's pointer, then its last token",
    },
    Allowed {
        file: "src/webhooks/tests/mod.rs",
        text: "op.path.rsplit_once('/')",
        reason: "a JSON pointer of a patch the webhook answered",
    },
    Allowed {
        file: "src/visibility/request.rs",
        text: "rest.split('/')",
        reason: "a visibility API call's URL path, segment by segment",
    },
    Allowed {
        file: "src/v1beta1/fields.rs",
        text: "pointer.split('/')",
        reason: "a JSON pointer to a group of converted fields, written as a field path in errors",
    },
    Allowed {
        file: "src/v1beta1/crd_tests.rs",
        text: ".split('/')",
        reason: "a JSON pointer to a group of converted fields, followed through a CRD schema",
    },
];

/// The directories where a bare `"{a}/{b}"` is refused.
const KEYED_DIRS: &[&str] = &["src/state", "src/controllers", "src/engine"];

const FORMATS_ALLOWED: &[Allowed] = &[
    Allowed {
        file: "src/controllers/leader.rs",
        text: "\"{}/{}\"",
        reason: "the Lease's namespace and name, in a log field",
    },
    Allowed {
        file: "src/controllers/events.rs",
        text: "\"{}/{}\"",
        reason: "the object of a dropped event, in a log field",
    },
    Allowed {
        file: "src/controllers/jobs/steps.rs",
        text: "\"{}/{}\"",
        reason: "the Workload named in a Job's event note (Kueue's `CreatedWorkload` and others)",
    },
    Allowed {
        file: "src/controllers/pods/steps.rs",
        text: "\"{}/{}\"",
        reason: "the Workload named in a pod's event note",
    },
    Allowed {
        file: "src/controllers/metrics.rs",
        text: "\"{}/{}\"",
        reason: "the build-info metric's `platform` label, OS/architecture as Go spells it",
    },
    Allowed {
        file: "src/engine/incremental.rs",
        text: "\"{}/{}\"",
        reason: "the Workload named in the error refusing its admission",
    },
    Allowed {
        file: "src/engine/validate.rs",
        text: "\"{}/{}\"",
        reason: "the Workload named in the error refusing it",
    },
    Allowed {
        file: "src/engine/validate.rs",
        text: "\"{namespace}/{name}\"",
        reason: "the duplicated object named in the error refusing the snapshot",
    },
    Allowed {
        file: "src/state/topology_input.rs",
        text: "\"{namespace}/{name}\"",
        reason: "the Pod named in the error setting it aside",
    },
    Allowed {
        file: "src/state/topology_input.rs",
        text: "\"{}/{}\"",
        reason: "the Workload named in the error setting its admission aside",
    },
    Allowed {
        file: "src/state/limit_ranges.rs",
        text: "\"{}/{}\"",
        reason: "the LimitRange named in the error setting it aside",
    },
    Allowed {
        file: "src/state/admission_input.rs",
        text: "\"{namespace}/{name}\"",
        reason: "the Workload named in the errors setting it aside",
    },
];

/// One offending place: file (relative to the crate), line and what was found.
#[derive(Debug, PartialEq)]
struct Site {
    file: String,
    line: usize,
    found: String,
}

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, as paths relative to the crate, sorted.
fn rust_files(root: &Path, dir: &str) -> Vec<String> {
    let mut files = Vec::new();
    let mut pending = vec![root.join(dir)];
    while let Some(at) = pending.pop() {
        let entries = fs::read_dir(&at).unwrap_or_else(|e| panic!("reading {}: {e}", at.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(root).expect("under the crate");
                files.push(relative.display().to_string());
            }
        }
    }
    files.sort();
    files
}

/// The text with comment lines blanked, so line numbers stay and comments are not read.
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|line| match line.trim_start().starts_with("//") {
            true => "",
            false => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The splits at `/` in `text`: line number and the line.
fn slash_splits(text: &str) -> Vec<(usize, String)> {
    without_comments(text)
        .lines()
        .enumerate()
        .filter(|(_, line)| SLASH_SPLITS.iter().any(|split| line.contains(split)))
        .map(|(index, line)| (index + 1, line.trim().to_string()))
        .collect()
}

/// Whether a format string is two placeholders joined by one `/` (`"{}/{}"`,
/// `"{namespace}/{name}"`), or a placeholder and a trailing `/` (a namespace prefix): the shape
/// of an `"ns/name"` key, with nothing around it that would make it a message.
fn is_bare_key(literal: &str) -> bool {
    let placeholder = |part: &str| {
        part.len() >= 2
            && part.starts_with('{')
            && part.ends_with('}')
            && !part[1..part.len() - 1].contains(['{', '}'])
    };
    match literal.split_once('/') {
        Some((first, "")) => placeholder(first),
        Some((first, second)) => placeholder(first) && placeholder(second),
        None => false,
    }
}

/// The `format!` calls of `text` whose format string is a bare key: line number and the string
/// with its quotes.
fn bare_key_formats(text: &str) -> Vec<(usize, String)> {
    let text = without_comments(text);
    let mut found = Vec::new();
    for (at, _) in text.match_indices("format!(") {
        let rest = &text[at + "format!(".len()..];
        let Some(literal) = rest.trim_start().strip_prefix('"') else {
            continue;
        };
        let Some(end) = literal.find('"') else {
            continue;
        };
        let literal = &literal[..end];
        if is_bare_key(literal) {
            let line = text[..at].matches('\n').count() + 1;
            found.push((line, format!("\"{literal}\"")));
        }
    }
    found
}

/// The sites no entry of `allowed` covers, and the entries that cover no site.
fn judge(sites: Vec<Site>, allowed: &[Allowed]) -> (Vec<Site>, Vec<&Allowed>) {
    let covers =
        |entry: &Allowed, site: &Site| entry.file == site.file && site.found.contains(entry.text);
    let unused = allowed
        .iter()
        .filter(|entry| !sites.iter().any(|site| covers(entry, site)))
        .collect();
    let refused = sites
        .into_iter()
        .filter(|site| !allowed.iter().any(|entry| covers(entry, site)))
        .collect();
    (refused, unused)
}

fn sites_in(root: &Path, dirs: &[&str], find: fn(&str) -> Vec<(usize, String)>) -> Vec<Site> {
    let mut sites = Vec::new();
    for dir in dirs {
        for file in rust_files(root, dir) {
            let path = root.join(&file);
            let text = fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
            for (line, found) in find(&text) {
                sites.push(Site {
                    file: file.clone(),
                    line,
                    found,
                });
            }
        }
    }
    sites
}

fn report(refused: &[Site], unused: &[&Allowed]) -> String {
    let mut lines: Vec<String> = refused
        .iter()
        .map(|s| format!("  {}:{} `{}`", s.file, s.line, s.found))
        .collect();
    lines.extend(unused.iter().map(|entry| {
        format!(
            "  allowed but not found any more (drop the entry): {} `{}` ({})",
            entry.file, entry.text, entry.reason
        )
    }));
    lines.join("\n")
}

#[test]
fn no_string_is_split_at_a_slash_but_where_its_syntax_has_one() {
    let sites = sites_in(&crate_dir(), &["src"], slash_splits);
    let (refused, unused) = judge(sites, SPLITS_ALLOWED);
    assert!(
        refused.is_empty() && unused.is_empty(),
        "a string split at `/` is an object key parsed back: key the map by ObjectKey (or by \
         name, cluster-scoped) instead\n{}",
        report(&refused, &unused)
    );
}

#[test]
fn no_namespace_slash_name_string_is_made_where_objects_are_keyed() {
    let sites = sites_in(&crate_dir(), KEYED_DIRS, bare_key_formats);
    let (refused, unused) = judge(sites, FORMATS_ALLOWED);
    assert!(
        refused.is_empty() && unused.is_empty(),
        "a bare `\"{{a}}/{{b}}\"` is the shape of an `ns/name` key: key the map by ObjectKey, or \
         name what it is in a message or log field and allow it here with its reason\n{}",
        report(&refused, &unused)
    );
}

/// The readers find what they must and nothing else, so the tests above can fail.
#[test]
fn the_checks_see_keys_and_leave_messages() {
    let source = r#"
        let key = format!("{}/{}", ns, name);
        let prefix = format!("{namespace}/");
        let other = format!(
            "{namespace}/{name}",
        );
        // let commented = format!("{}/{}", a, b);
        let message = format!("Workload {namespace}/{name} is gone");
        let version = format!("{}/{}/{}", group, version, kind);
        let (ns, name) = key.split_once('/').unwrap_or(("", key));
        let parts = key.split(':');
    "#;
    assert_eq!(
        bare_key_formats(source),
        [
            (2, "\"{}/{}\"".to_string()),
            (3, "\"{namespace}/\"".to_string()),
            (4, "\"{namespace}/{name}\"".to_string()),
        ]
    );
    assert_eq!(
        slash_splits(source),
        [(
            10,
            "let (ns, name) = key.split_once('/').unwrap_or((\"\", key));".to_string()
        )]
    );
    let site = |file: &str, found: &str| Site {
        file: file.to_string(),
        line: 1,
        found: found.to_string(),
    };
    let allowed = [Allowed {
        file: "src/a.rs",
        text: "\"{}/{}\"",
        reason: "a log field",
    }];
    let (refused, unused) = judge(
        vec![site("src/a.rs", "\"{}/{}\""), site("src/b.rs", "\"{}/{}\"")],
        &allowed,
    );
    assert_eq!(refused, [site("src/b.rs", "\"{}/{}\"")]);
    assert!(unused.is_empty());
    let (_, unused) = judge(vec![site("src/b.rs", "\"{}/{}\"")], &allowed);
    assert_eq!(unused.len(), 1, "an entry that covers nothing is reported");
}
