//! Go duration strings (`time.ParseDuration`), the form Kubernetes `metav1.Duration` fields take in a
//! configuration file: `1h30m`, `500ms`, `90s`, `-1.5h`, `0`.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use thiserror::Error;

const NANOS_PER_SECOND: u64 = 1_000_000_000;
/// The largest magnitude a Go duration holds: `-(1 << 63)` nanoseconds.
const MAX_MAGNITUDE: u64 = 1 << 63;

/// A signed span of nanoseconds as Go's `time.Duration` holds it. Negative values parse (Go accepts
/// them) so that validation can reject them with the field's name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GoDuration {
    nanos: i64,
}

/// Why a duration string was refused; the messages follow Go's `time.ParseDuration`.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DurationError {
    #[error("time: invalid duration {0:?}")]
    Invalid(String),
    #[error("time: missing unit in duration {0:?}")]
    MissingUnit(String),
    #[error("time: unknown unit {unit:?} in duration {text:?}")]
    UnknownUnit { unit: String, text: String },
}

impl GoDuration {
    pub const ZERO: GoDuration = GoDuration { nanos: 0 };

    pub const fn from_secs(seconds: i64) -> Self {
        GoDuration {
            nanos: seconds * NANOS_PER_SECOND as i64,
        }
    }

    pub fn as_nanos(self) -> i64 {
        self.nanos
    }

    pub fn is_zero(self) -> bool {
        self.nanos == 0
    }

    /// The span as a `std` duration; `None` when negative.
    pub fn to_std(self) -> Option<Duration> {
        u64::try_from(self.nanos).ok().map(Duration::from_nanos)
    }
}

impl FromStr for GoDuration {
    type Err = DurationError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let invalid = || DurationError::Invalid(text.to_string());
        let (negative, mut rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        // Go's special case: a bare zero needs no unit.
        if rest == "0" {
            return Ok(GoDuration::ZERO);
        }
        if rest.is_empty() {
            return Err(invalid());
        }
        let mut total: u64 = 0;
        while !rest.is_empty() {
            let (component, remainder) = parse_component(rest, text)?;
            total = total
                .checked_add(component)
                .filter(|t| *t <= MAX_MAGNITUDE)
                .ok_or_else(invalid)?;
            rest = remainder;
        }
        let nanos = if negative {
            (-i128::from(total)) as i64
        } else {
            i64::try_from(total).map_err(|_| invalid())?
        };
        Ok(GoDuration { nanos })
    }
}

/// One `<number><unit>` component: its nanoseconds and what follows it.
fn parse_component<'a>(rest: &'a str, text: &str) -> Result<(u64, &'a str), DurationError> {
    let invalid = || DurationError::Invalid(text.to_string());
    let int_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (int_digits, mut rest) = rest.split_at(int_end);
    let mut whole: u64 = 0;
    for digit in int_digits.bytes() {
        whole = whole
            .checked_mul(10)
            .and_then(|w| w.checked_add(u64::from(digit - b'0')))
            .filter(|w| *w <= MAX_MAGNITUDE)
            .ok_or_else(invalid)?;
    }
    // Fraction digits past what fits are dropped, as Go does.
    let mut fraction: u64 = 0;
    let mut scale: f64 = 1.0;
    let mut has_fraction = false;
    if let Some(after_dot) = rest.strip_prefix('.') {
        let end = after_dot
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after_dot.len());
        has_fraction = end > 0;
        for digit in after_dot[..end].bytes() {
            if let Some(f) = fraction
                .checked_mul(10)
                .and_then(|f| f.checked_add(u64::from(digit - b'0')))
                .filter(|f| *f < MAX_MAGNITUDE)
            {
                fraction = f;
                scale *= 10.0;
            }
        }
        rest = &after_dot[end..];
    }
    if int_digits.is_empty() && !has_fraction {
        return Err(invalid());
    }
    let unit_end = rest
        .find(|c: char| c == '.' || c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (unit, rest) = rest.split_at(unit_end);
    let unit_nanos: u64 = match unit {
        "" => return Err(DurationError::MissingUnit(text.to_string())),
        "ns" => 1,
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
        "ms" => 1_000_000,
        "s" => NANOS_PER_SECOND,
        "m" => 60 * NANOS_PER_SECOND,
        "h" => 3600 * NANOS_PER_SECOND,
        other => {
            return Err(DurationError::UnknownUnit {
                unit: other.to_string(),
                text: text.to_string(),
            });
        }
    };
    let mut nanos = whole
        .checked_mul(unit_nanos)
        .filter(|n| *n <= MAX_MAGNITUDE)
        .ok_or_else(invalid)?;
    if fraction > 0 {
        // Go scales the fraction in floating point; doing the same keeps rounding identical.
        let fractional = (fraction as f64 * (unit_nanos as f64 / scale)) as u64;
        nanos = nanos
            .checked_add(fractional)
            .filter(|n| *n <= MAX_MAGNITUDE)
            .ok_or_else(invalid)?;
    }
    Ok((nanos, rest))
}

impl fmt::Display for GoDuration {
    /// Go's `Duration.String`: `1h30m0s`, `1.5s`, `500ms`, `0s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nanos == 0 {
            return f.write_str("0s");
        }
        if self.nanos < 0 {
            f.write_str("-")?;
        }
        let magnitude = self.nanos.unsigned_abs();
        if magnitude < NANOS_PER_SECOND {
            let (unit_nanos, digits, suffix) = match magnitude {
                0..1_000 => (1, 0, "ns"),
                1_000..1_000_000 => (1_000, 3, "\u{b5}s"),
                _ => (1_000_000, 6, "ms"),
            };
            write_decimal(f, magnitude / unit_nanos, magnitude % unit_nanos, digits)?;
            return f.write_str(suffix);
        }
        let hours = magnitude / (3600 * NANOS_PER_SECOND);
        let minutes = magnitude / (60 * NANOS_PER_SECOND) % 60;
        let second_nanos = magnitude % (60 * NANOS_PER_SECOND);
        if hours > 0 {
            write!(f, "{hours}h")?;
        }
        if hours > 0 || minutes > 0 {
            write!(f, "{minutes}m")?;
        }
        write_decimal(
            f,
            second_nanos / NANOS_PER_SECOND,
            second_nanos % NANOS_PER_SECOND,
            9,
        )?;
        f.write_str("s")
    }
}

/// `whole[.fraction]` with the fraction zero-padded to `digits` and trailing zeros dropped.
fn write_decimal(
    f: &mut fmt::Formatter<'_>,
    whole: u64,
    fraction: u64,
    digits: usize,
) -> fmt::Result {
    write!(f, "{whole}")?;
    if fraction == 0 {
        return Ok(());
    }
    let padded = format!("{fraction:0digits$}");
    write!(f, ".{}", padded.trim_end_matches('0'))
}

impl<'de> Deserialize<'de> for GoDuration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DurationVisitor;

        impl Visitor<'_> for DurationVisitor {
            type Value = GoDuration;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Go duration string such as 1h30m, 90s or 500ms")
            }

            fn visit_str<E: de::Error>(self, text: &str) -> Result<GoDuration, E> {
                text.parse().map_err(E::custom)
            }
        }

        deserializer.deserialize_str(DurationVisitor)
    }
}

#[cfg(test)]
mod tests;
