//! The histogram bucket sets the metrics use: Kueue's, and kuota's own for its own series.

/// Kueue's bucket sets, in seconds.
pub(super) const B14: [f64; 14] = [
    1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0, 640.0, 1280.0, 2560.0, 5120.0, 10240.0,
];
const B16_EXTRA: [f64; 2] = [20480.0, 40960.0];
pub(super) const DEF: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];
/// Seconds from a node's failure to its replacement being written.
pub(super) const REPLACEMENT_BUCKETS: [f64; 12] = [
    0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 320.0,
];
/// Domains a placement uses at the topology's lowest level.
pub(super) const DOMAIN_BUCKETS: [f64; 10] =
    [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];

pub(super) fn b16() -> Vec<f64> {
    B14.iter().chain(&B16_EXTRA).copied().collect()
}
