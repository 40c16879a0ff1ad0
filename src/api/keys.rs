//! Well-known keys.
