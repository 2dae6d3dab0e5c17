//! The one time source: wall-clock seconds, monotonic instants, sleeping and retry jitter.
//! A leaf module (imports nothing of the crate), so every layer can take a [`Clock`] and tests
//! can pass a fake that overrides only what they observe.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Seconds since the Unix epoch (0 if the system clock is before it).
pub fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Time, sleeping and randomness for retry loops (model adapters, the GitHub client). Every
/// method but `sleep` has the real behaviour as its default.
#[async_trait::async_trait]
pub trait Clock: Send + Sync {
    /// Seconds since the Unix epoch (rate-limit resets are given in it).
    fn now_unix(&self) -> u64 {
        now_unix()
    }
    /// A monotonic instant (retry budgets).
    fn now(&self) -> Instant {
        Instant::now()
    }
    async fn sleep(&self, d: Duration);
    /// A uniformly random duration in `[0, max]` (full jitter).
    fn jitter(&self, max: Duration) -> Duration {
        let ms = max.as_millis().min(u64::MAX as u128) as u64;
        Duration::from_millis(rand::random_range(0..=ms))
    }
}

/// The real clock: tokio sleep, system time, `rand` jitter.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

#[async_trait::async_trait]
impl Clock for SystemClock {
    async fn sleep(&self, d: Duration) {
        tokio::time::sleep(d).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_its_bound() {
        for _ in 0..100 {
            assert!(SystemClock.jitter(Duration::from_millis(5)) <= Duration::from_millis(5));
        }
        assert_eq!(SystemClock.jitter(Duration::ZERO), Duration::ZERO);
        assert!(SystemClock.now_unix() > 1_700_000_000);
    }
}
