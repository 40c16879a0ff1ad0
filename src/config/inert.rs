//! Blocks kuota accepts but does not act on. They are still decoded as strictly as Kueue decodes
//! them (unknown or duplicated fields and wrong value types are errors), by walking the YAML against
//! a static description of each block's fields instead of building values nobody reads.

use std::collections::BTreeSet;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::duration::GoDuration;

/// The expected form of a value.
#[derive(Clone, Copy)]
pub enum Shape {
    Bool,
    Int,
    Number,
    Str,
    /// A Go duration string.
    Duration,
    List(&'static Shape),
    /// String keys, no key twice.
    Map(&'static Shape),
    Struct(&'static [(&'static str, Shape)]),
}

/// A block whose form is [`InertShape::SHAPE`]; decoding checks the form and keeps only whether
/// the block says anything (`null`, `[]` and `{}` say nothing).
pub struct Inert<S> {
    set: bool,
    shape: PhantomData<S>,
}

/// Names the form of one inert block.
pub trait InertShape {
    const SHAPE: Shape;
}

impl<S> Inert<S> {
    /// The same block under another version's form (`v1beta1` blocks converted to `v1beta2`).
    pub fn retag<T>(self) -> Inert<T> {
        Inert {
            set: self.set,
            shape: PhantomData,
        }
    }

    /// Whether the block holds a value: a scalar, or a non-empty list or map.
    pub fn is_set(&self) -> bool {
        self.set
    }
}

impl<'de, S: InertShape> Deserialize<'de> for Inert<S> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let set = ShapeSeed(S::SHAPE).deserialize(deserializer)?;
        Ok(Inert {
            set,
            shape: PhantomData,
        })
    }
}

struct ShapeSeed(Shape);

/// Decodes a value of the shape; the result says whether it holds anything.
impl<'de> DeserializeSeed<'de> for ShapeSeed {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(ShapeVisitor(self.0))
    }
}

struct ShapeVisitor(Shape);

impl ShapeVisitor {
    fn accepts(&self, kind: ScalarKind) -> bool {
        matches!(
            (self.0, kind),
            (Shape::Bool, ScalarKind::Bool)
                | (Shape::Int, ScalarKind::Int)
                | (Shape::Number, ScalarKind::Int | ScalarKind::Float)
                | (Shape::Str, ScalarKind::Str)
        )
    }

    fn scalar<E: de::Error>(
        &self,
        kind: ScalarKind,
        unexpected: de::Unexpected,
    ) -> Result<bool, E> {
        if self.accepts(kind) {
            Ok(true)
        } else {
            Err(E::invalid_type(unexpected, self))
        }
    }
}

#[derive(Clone, Copy)]
enum ScalarKind {
    Bool,
    Int,
    Float,
    Str,
}

impl<'de> Visitor<'de> for ShapeVisitor {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            Shape::Bool => "a boolean",
            Shape::Int => "an integer",
            Shape::Number => "a number",
            Shape::Str => "a string",
            Shape::Duration => "a Go duration string such as 1h30m, 90s or 500ms",
            Shape::List(_) => "a list",
            Shape::Map(_) | Shape::Struct(_) => "a map",
        })
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<bool, E> {
        self.scalar(ScalarKind::Bool, de::Unexpected::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<bool, E> {
        self.scalar(ScalarKind::Int, de::Unexpected::Signed(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<bool, E> {
        self.scalar(ScalarKind::Int, de::Unexpected::Unsigned(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<bool, E> {
        self.scalar(ScalarKind::Float, de::Unexpected::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<bool, E> {
        if let Shape::Duration = self.0 {
            return v.parse::<GoDuration>().map(|_| true).map_err(E::custom);
        }
        self.scalar(ScalarKind::Str, de::Unexpected::Str(v))
    }

    /// `null` leaves a Go field at its zero value, whatever its type.
    fn visit_unit<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_none<E: de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        let Shape::List(item) = self.0 else {
            return Err(de::Error::invalid_type(de::Unexpected::Seq, &self));
        };
        let mut set = false;
        while seq.next_element_seed(ShapeSeed(*item))?.is_some() {
            set = true;
        }
        Ok(set)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        if !matches!(self.0, Shape::Map(_) | Shape::Struct(_)) {
            return Err(de::Error::invalid_type(de::Unexpected::Map, &self));
        }
        let mut seen = BTreeSet::new();
        while let Some((key, value_shape)) = map.next_key_seed(KeySeed(self.0))? {
            if !seen.insert(key.clone()) {
                return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
            }
            map.next_value_seed(ShapeSeed(value_shape))?;
        }
        Ok(!seen.is_empty())
    }
}

/// A key of a map or struct shape, with the shape of its value. A struct refuses an unknown field
/// while decoding the key, so that the error's path ends with that field, as for derived structs.
struct KeySeed(Shape);

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = (String, Shape);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        let key = String::deserialize(deserializer)?;
        let fields = match self.0 {
            Shape::Struct(fields) => fields,
            Shape::Map(value) => return Ok((key, *value)),
            _ => &[],
        };
        match fields.iter().find(|(name, _)| *name == key) {
            Some((_, shape)) => Ok((key, *shape)),
            None => {
                let expected: Vec<String> =
                    fields.iter().map(|(name, _)| format!("`{name}`")).collect();
                Err(de::Error::custom(format_args!(
                    "unknown field `{key}`, expected one of {}",
                    expected.join(", ")
                )))
            }
        }
    }
}

/// Declares a marker type per inert block.
macro_rules! inert_blocks {
    ($($(#[$doc:meta])* $name:ident = $shape:expr;)+) => {
        $(
            $(#[$doc])*
            pub enum $name {}

            impl InertShape for $name {
                const SHAPE: Shape = $shape;
            }
        )+
    };
}

const STRINGS: Shape = Shape::List(&Shape::Str);
const LABEL_SELECTOR: Shape = Shape::Struct(&[
    ("matchLabels", Shape::Map(&Shape::Str)),
    (
        "matchExpressions",
        Shape::List(&Shape::Struct(&[
            ("key", Shape::Str),
            ("operator", Shape::Str),
            ("values", STRINGS),
        ])),
    ),
]);
const MULTI_KUEUE_COMMON: [(&str, Shape); 5] = [
    ("gcInterval", Shape::Duration),
    ("origin", Shape::Str),
    ("workerLostTimeout", Shape::Duration),
    ("dispatcherName", Shape::Str),
    (
        "externalFrameworks",
        Shape::List(&Shape::Struct(&[("name", Shape::Str)])),
    ),
];
const ACCESS_PROVIDERS: Shape = Shape::List(&Shape::Struct(&[
    ("name", Shape::Str),
    (
        "execConfig",
        Shape::Struct(&[
            ("command", Shape::Str),
            ("args", STRINGS),
            (
                "env",
                Shape::List(&Shape::Struct(&[
                    ("name", Shape::Str),
                    ("value", Shape::Str),
                ])),
            ),
            ("apiVersion", Shape::Str),
            ("installHint", Shape::Str),
            ("provideClusterInfo", Shape::Bool),
            ("interactiveMode", Shape::Str),
        ]),
    ),
]));
const CUSTOM_LABEL_COMMON: [(&str, Shape); 3] = [
    ("name", Shape::Str),
    ("sourceLabelKey", Shape::Str),
    ("sourceAnnotationKey", Shape::Str),
];
const DEVICE_SELECTOR: Shape =
    Shape::Struct(&[("cel", Shape::Struct(&[("expression", Shape::Str)]))]);
const DEVICE_SOURCE: Shape = Shape::Struct(&[
    ("name", Shape::Str),
    ("driver", Shape::Str),
    ("deviceSelector", DEVICE_SELECTOR),
]);

inert_blocks! {
    /// `multiKueue` of `v1beta2`.
    MultiKueue = Shape::Struct(&[
        MULTI_KUEUE_COMMON[0],
        MULTI_KUEUE_COMMON[1],
        MULTI_KUEUE_COMMON[2],
        MULTI_KUEUE_COMMON[3],
        MULTI_KUEUE_COMMON[4],
        (
            "clusterProfile",
            Shape::Struct(&[
                ("accessProviders", ACCESS_PROVIDERS),
                ("credentialsProviders", ACCESS_PROVIDERS),
            ]),
        ),
        ("incrementalDispatcherConfig", Shape::Struct(&[("stepSize", Shape::Int)])),
    ]);
    /// `multiKueue` of `v1beta1`.
    MultiKueueV1beta1 = Shape::Struct(&MULTI_KUEUE_COMMON);
    /// `admissionFairSharing`.
    AdmissionFairSharing = Shape::Struct(&[
        ("usageHalfLifeTime", Shape::Duration),
        ("usageSamplingInterval", Shape::Duration),
        ("resourceWeights", Shape::Map(&Shape::Number)),
    ]);
    /// `controller.groupKindConcurrency`.
    GroupKindConcurrency = Shape::Map(&Shape::Int);
    /// `metrics.customLabels` of `v1beta2`.
    CustomLabels = Shape::List(&Shape::Struct(&[
        CUSTOM_LABEL_COMMON[0],
        CUSTOM_LABEL_COMMON[1],
        CUSTOM_LABEL_COMMON[2],
        ("sourceKind", Shape::Str),
        ("trackedValues", STRINGS),
    ]));
    /// `metrics.customLabels` of `v1beta1`.
    CustomLabelsV1beta1 = Shape::List(&Shape::Struct(&CUSTOM_LABEL_COMMON));
    /// `resources.deviceClassMappings` of `v1beta2`.
    DeviceClassMappings = Shape::List(&Shape::Struct(&[
        ("name", Shape::Str),
        ("deviceClassNames", STRINGS),
        (
            "sources",
            Shape::List(&Shape::Struct(&[("counter", DEVICE_SOURCE), ("capacity", DEVICE_SOURCE)])),
        ),
    ]));
    /// `resources.deviceClassMappings` of `v1beta1`.
    DeviceClassMappingsV1beta1 = Shape::List(&Shape::Struct(&[
        ("name", Shape::Str),
        ("deviceClassNames", STRINGS),
    ]));
    /// `queueVisibility`, `v1beta1` only.
    QueueVisibility = Shape::Struct(&[
        ("clusterQueues", Shape::Struct(&[("maxCount", Shape::Int)])),
        ("updateIntervalSeconds", Shape::Int),
    ]);
    /// `integrations.podOptions`, `v1beta1` only.
    PodOptions = Shape::Struct(&[
        ("namespaceSelector", LABEL_SELECTOR),
        ("podSelector", LABEL_SELECTOR),
    ]);
}

#[cfg(test)]
mod tests;
