//! The chaos suite's seeded randomness: `KUOTA_CHAOS_SEED=<seed>` replays a run's storm and
//! the moments of its disruptions.

use anyhow::{Context, Result};

/// SplitMix64: a seeded, reproducible sequence without a dependency.
pub struct Rng(u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A number of milliseconds in `[from, to)`.
    pub fn millis(&mut self, (from, to): (u64, u64)) -> std::time::Duration {
        std::time::Duration::from_millis(from + self.below(to - from))
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// The case's seed, `KUOTA_CHAOS_SEED` or the clock's nanoseconds, printed with how to replay
/// it, and its sequence.
pub fn seeded(case: &str) -> Result<(u64, Rng)> {
    let seed = match std::env::var("KUOTA_CHAOS_SEED") {
        Ok(seed) => seed
            .parse()
            .with_context(|| format!("KUOTA_CHAOS_SEED={seed:?} is not a number"))?,
        Err(_) => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)?
            .as_nanos() as u64,
    };
    println!("chaos {case}: seed {seed} (KUOTA_CHAOS_SEED={seed} replays this case)");
    Ok((seed, Rng(seed)))
}
