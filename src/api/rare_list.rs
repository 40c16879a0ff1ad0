//! A list most objects leave empty, such as a Workload's reclaimable pods or unhealthy nodes.
//!
//! A `Vec` takes 24 bytes inline even when empty, and every Workload read is held for as long as
//! it exists; [`RareList`] takes one pointer and allocates only when it has entries. It reads and
//! writes as the `Vec` it stands for, and its JSON schema is the `Vec`'s.

use std::borrow::Cow;
use std::fmt;
use std::ops::{Deref, DerefMut};

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A list held in one pointer, allocated only when not empty.
#[derive(Clone, PartialEq, Eq)]
#[expect(
    clippy::box_collection,
    reason = "the box is what keeps an empty list to one pointer inline"
)]
pub struct RareList<T>(Option<Box<Vec<T>>>);

impl<T> RareList<T> {
    /// An empty list; it allocates nothing.
    pub const fn new() -> Self {
        RareList(None)
    }

    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|entries| entries.is_empty())
    }

    pub fn push(&mut self, entry: T) {
        self.0.get_or_insert_default().push(entry);
    }

    pub fn clear(&mut self) {
        self.0 = None;
    }

    /// Drops the spare room a decoder leaves, and the allocation of a list left empty.
    pub fn shrink_to_fit(&mut self) {
        match &mut self.0 {
            Some(entries) if entries.is_empty() => self.0 = None,
            Some(entries) => entries.shrink_to_fit(),
            None => {}
        }
    }
}

impl<T> Default for RareList<T> {
    fn default() -> Self {
        RareList::new()
    }
}

impl<T> Deref for RareList<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl<T> DerefMut for RareList<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.0.as_deref_mut().map_or(&mut [], Vec::as_mut_slice)
    }
}

impl<T> From<Vec<T>> for RareList<T> {
    fn from(entries: Vec<T>) -> Self {
        if entries.is_empty() {
            RareList(None)
        } else {
            RareList(Some(Box::new(entries)))
        }
    }
}

impl<T> FromIterator<T> for RareList<T> {
    fn from_iter<I: IntoIterator<Item = T>>(entries: I) -> Self {
        entries.into_iter().collect::<Vec<T>>().into()
    }
}

impl<'a, T> IntoIterator for &'a RareList<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<T: PartialEq> PartialEq<Vec<T>> for RareList<T> {
    fn eq(&self, other: &Vec<T>) -> bool {
        **self == **other
    }
}

impl<T: fmt::Debug> fmt::Debug for RareList<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: Serialize> Serialize for RareList<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for RareList<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut entries = Vec::<T>::deserialize(deserializer)?;
        entries.shrink_to_fit();
        Ok(entries.into())
    }
}

impl<T: JsonSchema> JsonSchema for RareList<T> {
    fn inline_schema() -> bool {
        <Vec<T>>::inline_schema()
    }

    fn schema_name() -> Cow<'static, str> {
        <Vec<T>>::schema_name()
    }

    fn schema_id() -> Cow<'static, str> {
        <Vec<T>>::schema_id()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        <Vec<T>>::json_schema(generator)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_list_takes_one_pointer_and_no_allocation() {
        assert_eq!(std::mem::size_of::<RareList<String>>(), 8);
        let decoded: RareList<String> = serde_json::from_str("[]").expect("a list");
        assert!(decoded.0.is_none());
        let mut emptied: RareList<String> = vec!["a".to_string()].into();
        emptied.clear();
        assert!(emptied.0.is_none() && emptied.is_empty());
    }

    #[test]
    fn it_reads_and_writes_as_a_list() {
        let decoded: RareList<String> = serde_json::from_str(r#"["a","b"]"#).expect("a list");
        assert_eq!(decoded, vec!["a".to_string(), "b".to_string()]);
        assert_eq!(decoded.len(), 2);
        assert_eq!(
            serde_json::to_string(&decoded).expect("json"),
            r#"["a","b"]"#
        );
        let mut pushed = RareList::new();
        pushed.push("a".to_string());
        pushed.push("b".to_string());
        assert_eq!(pushed, decoded);
        assert_eq!(format!("{pushed:?}"), r#"["a", "b"]"#);
        assert_eq!(
            serde_json::to_string(&RareList::<String>::new()).expect("json"),
            "[]"
        );
    }

    #[test]
    fn its_schema_is_the_lists() {
        let generator = &mut SchemaGenerator::default();
        assert_eq!(
            RareList::<String>::json_schema(generator),
            <Vec<String>>::json_schema(generator)
        );
    }
}
