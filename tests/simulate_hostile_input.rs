//! Careless and hostile manifests given to `kuota simulate`: links that loop, repeated keys, deep
//! nesting and quantities beyond Kubernetes' range end in a clear error (or are read once), never
//! in a hang, a crash or a silent misreading.

use std::fs;
use std::path::{Path, PathBuf};

use kuota::cli::simulate::documents::{parse_text, read_all};

/// A fresh folder for one test, under Cargo's scratch folder for integration tests.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn kinds(dir: &Path) -> Vec<String> {
    read_all(&[dir.to_path_buf()])
        .unwrap()
        .iter()
        .map(|d| d.value["kind"].as_str().unwrap().to_string())
        .collect()
}

#[cfg(unix)]
#[test]
fn links_to_folders_are_not_followed_and_no_file_is_read_twice() {
    use std::os::unix::fs::symlink;
    let dir = scratch("links");
    fs::create_dir(dir.join("sub")).unwrap();
    fs::write(dir.join("a.yaml"), "kind: A\n").unwrap();
    fs::write(dir.join("sub/b.yaml"), "kind: B\n").unwrap();
    // Two links back up the tree (each read the folder again, endlessly), a link to a sibling
    // folder, and a second name for a file.
    symlink(&dir, dir.join("sub/up")).unwrap();
    symlink(&dir, dir.join("sub/up-again.yaml")).unwrap();
    symlink(dir.join("sub"), dir.join("sub-link")).unwrap();
    symlink(dir.join("a.yaml"), dir.join("sub/a-again.yaml")).unwrap();
    assert_eq!(kinds(&dir), ["A", "B"]);
    // A link named on the command line is followed, and a file named twice is read once.
    let documents = read_all(&[dir.join("sub-link"), dir.join("sub/b.yaml")]).unwrap();
    assert_eq!(documents.len(), 2, "{documents:?}");
}

#[test]
fn a_repeated_key_is_refused_naming_key_file_and_document() {
    let yaml = "kind: A\n---\nkind: ClusterQueue\nspec:\n  resources:\n  - name: cpu\n    \
                nominalQuota: \"100\"\n    nominalQuota: \"1\"\n";
    let error = parse_text("queues.yaml", yaml).unwrap_err().to_string();
    assert!(
        error.starts_with("queues.yaml, document 2: ")
            && error.contains("spec.resources[0]: duplicate key \"nominalQuota\" at line 6"),
        "{error}"
    );
    let json = r#"{"kind": "A", "metadata": {"name": "a", "name": "b"}}"#;
    let error = parse_text("a.json", json).unwrap_err().to_string();
    assert!(
        error.starts_with("a.json, document 1: ")
            && error.contains("metadata: duplicate key \"name\""),
        "{error}"
    );
    // The same key in two mappings is fine.
    assert!(parse_text("ok.yaml", "a: {k: 1}\nb: {k: 2}\n").is_ok());
}

#[test]
fn deep_nesting_is_refused_before_parsing_naming_file_and_document() {
    let levels = 100_000;
    let text = format!(
        "kind: A\n---\nkind: B\nspec: {}{}\n",
        "[".repeat(levels),
        "]".repeat(levels)
    );
    let error = parse_text("deep.yaml", &text).unwrap_err().to_string();
    assert_eq!(
        error,
        "deep.yaml, document 2: nested more than 128 levels deep at line 4; refused before parsing"
    );
}
