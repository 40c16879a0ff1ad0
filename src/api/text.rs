//! An immutable string that clones without copying. The texts of Workload conditions repeat
//! across thousands of Workloads (a handful of types, reasons and messages per ClusterQueue), so
//! the Workload watch makes equal ones share one allocation instead of each holding its own.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, LazyLock};

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A shared, immutable string; reads, writes and has the JSON schema of a `String`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Text(Arc<str>);

static EMPTY: LazyLock<Text> = LazyLock::new(|| Text(Arc::from("")));

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `self` and `other` share one allocation.
    pub fn shares(&self, other: &Text) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Default for Text {
    fn default() -> Self {
        EMPTY.clone()
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<Arc<str>> for Text {
    fn from(text: Arc<str>) -> Self {
        Text(text)
    }
}

impl From<Text> for Arc<str> {
    fn from(text: Text) -> Self {
        text.0
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        if text.is_empty() {
            return Text::default();
        }
        Text(Arc::from(text))
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Text::from(text.as_str())
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Self {
        Text::from(text.as_str())
    }
}

impl From<Text> for String {
    fn from(text: Text) -> Self {
        text.0.to_string()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        **self == *other.0
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Text, E> {
                Ok(Text::from(text))
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

impl JsonSchema for Text {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        String::schema_name()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        String::json_schema(generator)
    }

    fn inline_schema() -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_reads_and_writes_as_a_string_and_compares_with_one() {
        let text: Text = serde_json::from_str(r#""Quota reserved \u00e9""#).expect("a string");
        assert_eq!(text, "Quota reserved é");
        assert_eq!(
            serde_json::to_string(&text).expect("serializes"),
            r#""Quota reserved é""#
        );
        assert!(serde_json::from_str::<Text>("5").is_err());
        assert_eq!(Text::from(String::from("a")), Text::from("a"));
        assert!(Text::default().shares(&Text::from("")));
        let schema = serde_json::to_value(schemars::schema_for!(Text)).expect("schema");
        assert_eq!(schema["type"], "string");
    }
}
