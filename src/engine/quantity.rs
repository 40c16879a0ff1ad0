//! Exact Kubernetes quantity arithmetic.
//!
//! A [`Quantity`] holds a value in nano-units (10⁻⁹) as an `i128`, so every quantity Kubernetes
//! accepts, from `1n` to exabytes, is exact and sums never round. Parsing follows the API server's
//! grammar: an optional sign, a decimal number, then a binary suffix (`Ki`..`Ei`), a decimal suffix
//! (`n`, `u`, `m`, `k`, `M`..`E`) or a decimal exponent (`e3`, `E-2`). Precision finer than a
//! nano-unit is rounded up, as the API server does. Like the API server's `resource.Quantity`, no
//! quantity beyond 2⁶³−1 units in magnitude is accepted, so sums of many quantities stay far
//! inside the `i128` range; every operation saturates rather than overflowing.

use std::fmt;
use std::ops::{Add, AddAssign, Neg, Sub, SubAssign};
use std::str::FromStr;

use thiserror::Error;

const NANO: i128 = 1_000_000_000;
/// The largest magnitude `resource.Quantity` accepts: 2⁶³−1 units, in nano-units.
const LIMIT: i128 = i64::MAX as i128 * NANO;

/// An exact resource amount, in nano-units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Quantity(i128);

/// Why a string is not a Kubernetes quantity.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum QuantityError {
    #[error("quantity is empty")]
    Empty,
    #[error("quantity {0:?} has no digits")]
    NoDigits(String),
    #[error("quantity {0:?} has an unknown suffix")]
    UnknownSuffix(String),
    #[error("quantity {0:?} is too large: Kubernetes accepts at most 2^63-1 in magnitude")]
    Overflow(String),
}

impl Quantity {
    /// Zero.
    pub const ZERO: Quantity = Quantity(0);
    /// The largest representable amount, used as "unlimited".
    pub const MAX: Quantity = Quantity(i128::MAX);

    /// A whole number of units (`3` cpus, `1024` bytes).
    pub const fn from_units(units: i64) -> Self {
        Quantity(units as i128 * NANO)
    }

    /// A number of milli-units (`1500` for `1500m`).
    pub const fn from_milli(milli: i64) -> Self {
        Quantity(milli as i128 * 1_000_000)
    }

    /// The raw value in nano-units.
    pub const fn nanos(self) -> i128 {
        self.0
    }

    /// From a raw value in nano-units.
    pub const fn from_nanos(nanos: i128) -> Self {
        Quantity(nanos)
    }

    pub fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// Addition that stops at the representable bounds instead of overflowing.
    pub fn saturating_add(self, other: Quantity) -> Quantity {
        Quantity(self.0.saturating_add(other.0))
    }

    /// Subtraction that stops at the representable bounds instead of overflowing.
    pub fn saturating_sub(self, other: Quantity) -> Quantity {
        Quantity(self.0.saturating_sub(other.0))
    }

    /// Multiplication by a count, saturating.
    pub fn saturating_mul(self, factor: i64) -> Quantity {
        Quantity(self.0.saturating_mul(factor as i128))
    }

    /// `self` times `factor`, both quantities (`2` cpus times `1500m` is `3`), exact to the
    /// nano-unit, finer precision rounded up as the API server rounds a quantity; a product
    /// beyond what a quantity can hold is that bound, with its sign.
    pub fn times(self, factor: Quantity) -> Quantity {
        let nanos = match self.0.checked_mul(factor.0) {
            Some(product) => product.div_euclid(NANO) + i128::from(product.rem_euclid(NANO) != 0),
            None if (self.0 < 0) == (factor.0 < 0) => LIMIT,
            None => -LIMIT,
        };
        Quantity(nanos.clamp(-LIMIT, LIMIT))
    }

    /// How many whole times `per` fits into `self`; `None` when `per` is zero or negative.
    pub fn div_floor(self, per: Quantity) -> Option<i128> {
        (per.0 > 0).then(|| self.0.max(0) / per.0)
    }

    /// `self`, the total of `pods` pods of `resource`, for `needed` of them, rounded as Kueue
    /// does: the amount per pod is cut down to whole milli-units for cpu and whole units for any
    /// other resource, then multiplied. `self` when `pods` is not positive.
    pub fn per_pod_times(self, resource: &str, pods: i32, needed: i32) -> Quantity {
        if pods <= 0 {
            return self;
        }
        let unit = if resource == "cpu" { NANO / 1000 } else { NANO };
        let per_pod = self.0 / i128::from(pods) / unit * unit;
        Quantity(per_pod.saturating_mul(i128::from(needed.max(0))))
    }

    /// `max(0, self)`.
    pub fn clamp_non_negative(self) -> Quantity {
        Quantity(self.0.max(0))
    }
}

impl Add for Quantity {
    type Output = Quantity;
    fn add(self, rhs: Quantity) -> Quantity {
        self.saturating_add(rhs)
    }
}

impl AddAssign for Quantity {
    fn add_assign(&mut self, rhs: Quantity) {
        *self = *self + rhs;
    }
}

impl Sub for Quantity {
    type Output = Quantity;
    fn sub(self, rhs: Quantity) -> Quantity {
        self.saturating_sub(rhs)
    }
}

impl SubAssign for Quantity {
    fn sub_assign(&mut self, rhs: Quantity) {
        *self = *self - rhs;
    }
}

impl Neg for Quantity {
    type Output = Quantity;
    fn neg(self) -> Quantity {
        Quantity(self.0.saturating_neg())
    }
}

impl FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let s = raw.trim();
        if s.is_empty() {
            return Err(QuantityError::Empty);
        }
        let (negative, body) = match s.as_bytes()[0] {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let number_end = body
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(body.len());
        let (number, suffix) = body.split_at(number_end);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
            return Err(QuantityError::NoDigits(raw.to_string()));
        }
        let scale =
            Scale::parse(suffix).ok_or_else(|| QuantityError::UnknownSuffix(raw.to_string()))?;
        let overflow = || QuantityError::Overflow(raw.to_string());

        // value = digits / 10^fraction_len * scale, computed in nano-units, rounding up.
        let mut digits: i128 = 0;
        for c in whole.chars().chain(fraction.chars()) {
            digits = digits
                .checked_mul(10)
                .and_then(|d| d.checked_add(i128::from(c as u8 - b'0')))
                .ok_or_else(overflow)?;
        }
        let mut decimal_exponent = i32::try_from(fraction.len())
            .ok()
            .and_then(|len| scale.decimal_exponent.checked_sub(len))
            .ok_or_else(overflow)?
            + 9;
        let mut numerator = digits
            .checked_mul(scale.binary_factor)
            .ok_or_else(overflow)?;
        while decimal_exponent > 0 {
            numerator = numerator.checked_mul(10).ok_or_else(overflow)?;
            decimal_exponent -= 1;
        }
        let mut denominator: i128 = 1;
        while decimal_exponent < 0 {
            if denominator > i128::MAX / 10 {
                // Anything this small rounds up to one nano-unit (or stays zero).
                return Ok(Quantity(if digits == 0 {
                    0
                } else if negative {
                    -1
                } else {
                    1
                }));
            }
            denominator *= 10;
            decimal_exponent += 1;
        }
        // The API server rounds away from zero to the nearest nano-unit.
        let nanos = numerator / denominator + i128::from(numerator % denominator != 0);
        if nanos > LIMIT {
            return Err(overflow());
        }
        Ok(Quantity(if negative { -nanos } else { nanos }))
    }
}

/// The multiplier a suffix stands for: `binary_factor × 10^decimal_exponent`.
struct Scale {
    binary_factor: i128,
    decimal_exponent: i32,
}

impl Scale {
    fn parse(suffix: &str) -> Option<Scale> {
        let binary = |power: u32| Scale {
            binary_factor: 1i128 << (10 * power),
            decimal_exponent: 0,
        };
        let decimal = |exponent: i32| Scale {
            binary_factor: 1,
            decimal_exponent: exponent,
        };
        Some(match suffix {
            "" => decimal(0),
            "n" => decimal(-9),
            "u" => decimal(-6),
            "m" => decimal(-3),
            "k" => decimal(3),
            "M" => decimal(6),
            "G" => decimal(9),
            "T" => decimal(12),
            "P" => decimal(15),
            "E" => decimal(18),
            "Ki" => binary(1),
            "Mi" => binary(2),
            "Gi" => binary(3),
            "Ti" => binary(4),
            "Pi" => binary(5),
            "Ei" => binary(6),
            _ => {
                let exponent = suffix.strip_prefix(['e', 'E'])?;
                let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
                if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
                    return None;
                }
                decimal(exponent.parse().ok().filter(|e: &i32| e.abs() <= 60)?)
            }
        })
    }
}

impl Quantity {
    /// The form Kubernetes writes for amounts given in binary units: the largest of `Ki`..`Ei` that
    /// divides the value exactly, else the decimal form.
    pub fn to_binary_si_string(self) -> String {
        let units = self.0 / NANO;
        if self.0 % NANO != 0 || units == 0 {
            return self.to_string();
        }
        let suffixes = ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"];
        for (i, suffix) in suffixes.iter().enumerate() {
            let factor = 1i128 << (10 * (6 - i));
            if units % factor == 0 {
                return format!("{}{suffix}", units / factor);
            }
        }
        self.to_string()
    }
}

impl Quantity {
    /// How Kubernetes users read an amount of `resource`: byte-valued resources (`memory`,
    /// `ephemeral-storage`, `hugepages-*`) in binary units (`16Gi`), everything else in decimal.
    pub fn display_for(self, resource: &str) -> String {
        let bytes = matches!(resource, "memory" | "ephemeral-storage")
            || resource.starts_with("hugepages-");
        if bytes {
            self.to_binary_si_string()
        } else {
            self.to_string()
        }
    }
}

impl fmt::Display for Quantity {
    /// The canonical decimal form: whole units when exact, else `m`, `u` or `n`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v % NANO == 0 {
            write!(f, "{}", v / NANO)
        } else if v % 1_000_000 == 0 {
            write!(f, "{}m", v / 1_000_000)
        } else if v % 1_000 == 0 {
            write!(f, "{}u", v / 1_000)
        } else {
            write!(f, "{v}n")
        }
    }
}

#[cfg(test)]
mod tests;
