//! Reading manifests: files, folders (every `.yaml`, `.yml` and `.json` inside, sorted), or `-` for
//! standard input; multi-document YAML, a single JSON object, or a `v1` `List`. Every document keeps
//! where it came from, so errors can name the file and the document.
//!
//! Links to folders are not followed inside a folder (as `kubectl apply -R` does), and no file is
//! read twice. Before parsing, flow nesting is bounded ([`nesting`]); while decoding, a mapping
//! with a repeated key is refused ([`strict_value`]).

mod nesting;
mod strict_value;

use std::collections::HashSet;
use std::fmt;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;
use thiserror::Error;

/// Where a document came from: the file (or `<stdin>`) and its 1-based position there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub file: String,
    pub document: usize,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, document {}", self.file, self.document)
    }
}

/// One parsed document, still untyped.
#[derive(Clone, Debug)]
pub struct Document {
    pub origin: Origin,
    pub value: Value,
}

/// Why the manifests could not be read.
#[derive(Debug, Error)]
pub enum ReadError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{origin}: not valid YAML or JSON: {reason}")]
    Syntax { origin: Origin, reason: String },
    #[error(
        "{origin}: nested more than {} levels deep at line {line}; refused before parsing",
        nesting::MAX_DEPTH
    )]
    TooDeep { origin: Origin, line: usize },
}

/// Reads every document from `paths`, in order; a file reached twice (through a link, or named
/// twice) is read once.
pub fn read_all(paths: &[PathBuf]) -> Result<Vec<Document>, ReadError> {
    let mut documents = Vec::new();
    let mut read = HashSet::new();
    for path in paths {
        if path.as_os_str() == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|source| ReadError::Io {
                    path: "<stdin>".into(),
                    source,
                })?;
            documents.extend(parse_text("<stdin>", &text)?);
            continue;
        }
        let mut files = Vec::new();
        if path.is_dir() {
            files_under(path, &mut files)?;
            files.sort();
        } else {
            files.push(path.clone());
        }
        for file in files {
            let io_error = |source| ReadError::Io {
                path: file.display().to_string(),
                source,
            };
            if !read.insert(fs::canonicalize(&file).map_err(io_error)?) {
                continue;
            }
            let text = fs::read_to_string(&file).map_err(io_error)?;
            documents.extend(parse_text(&file.display().to_string(), &text)?);
        }
    }
    Ok(documents)
}

/// The YAML/JSON files below a folder. Links to folders are not followed, as `kubectl apply -R`
/// does: a link back up the tree would otherwise read it again and again.
fn files_under(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), ReadError> {
    let io_error = |source| ReadError::Io {
        path: dir.display().to_string(),
        source,
    };
    for entry in fs::read_dir(dir).map_err(io_error)? {
        let entry = entry.map_err(io_error)?;
        let path = entry.path();
        let kind = entry.file_type().map_err(io_error)?;
        if kind.is_dir() {
            files_under(&path, files)?;
        } else if matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml" | "json")
        ) && !(kind.is_symlink() && path.is_dir())
        {
            files.push(path);
        }
    }
    Ok(())
}

/// Splits one file's text into documents. `List` objects are unpacked into their items, which keep
/// the list's document number.
pub fn parse_text(file: &str, text: &str) -> Result<Vec<Document>, ReadError> {
    let origin = |document: usize| Origin {
        file: file.to_string(),
        document,
    };
    nesting::check(text).map_err(|e| ReadError::TooDeep {
        origin: origin(e.document),
        line: e.line,
    })?;
    let mut documents = Vec::new();
    for (index, document) in yaml_serde::Deserializer::from_str(text).enumerate() {
        let origin = origin(index + 1);
        let value = strict_value::decode(document).map_err(|e| ReadError::Syntax {
            origin: origin.clone(),
            reason: e.to_string(),
        })?;
        match value {
            Value::Null => {}
            Value::Object(ref object)
                if object.get("kind").and_then(Value::as_str) == Some("List") =>
            {
                let items = object
                    .get("items")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                documents.extend(items.into_iter().map(|value| Document {
                    origin: origin.clone(),
                    value,
                }));
            }
            value => documents.push(Document { origin, value }),
        }
    }
    Ok(documents)
}

#[cfg(test)]
mod tests;
