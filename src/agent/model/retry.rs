//! Retries with exponential backoff and full jitter, honouring `retry-after`, bounded by attempts
//! and total time. The clock (time, sleep, jitter) is injectable so tests run instantly.

use std::future::Future;
use std::time::{Duration, Instant};

use async_trait::async_trait;

use super::ModelError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included.
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// No new attempt starts (and no sleep begins) past this much time since the first.
    pub max_total: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            max_total: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The ceiling of the full-jitter window before attempt `n + 1` (n = failures so far, ≥ 1).
    pub fn backoff_cap(&self, failures: u32) -> Duration {
        let exp = failures.saturating_sub(1).min(20);
        self.base_delay
            .saturating_mul(1u32 << exp)
            .min(self.max_delay)
    }
}

pub use crate::clock::{Clock, SystemClock};

/// Run `op` until it succeeds, fails with a non-retryable error, or the policy is spent.
pub async fn with_retry<T, F, Fut>(
    policy: &RetryPolicy,
    clock: &dyn Clock,
    mut op: F,
) -> Result<T, ModelError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ModelError>>,
{
    let start = clock.now();
    let mut failures = 0u32;
    loop {
        let err = match op().await {
            Ok(v) => return Ok(v),
            Err(e) if !e.is_retryable() => return Err(e),
            Err(e) => e,
        };
        failures += 1;
        let elapsed = clock.now().saturating_duration_since(start);
        let delay = match &err {
            ModelError::Transient {
                retry_after: Some(ra),
                ..
            } => *ra,
            _ => clock.jitter(policy.backoff_cap(failures)),
        };
        if failures >= policy.max_attempts || elapsed + delay > policy.max_total {
            // A server that was never reachable is reported as such: the hint is the point.
            if failures == 1 || matches!(err, ModelError::Unreachable { .. }) {
                return Err(err);
            }
            return Err(ModelError::RetriesExhausted {
                attempts: failures,
                elapsed,
                last: Box::new(err),
            });
        }
        tracing::warn!(attempt = failures, ?delay, error = %err, "model call failed; retrying");
        clock.sleep(delay).await;
    }
}

/// Virtual time for tests: `sleep` advances it instantly and records the delay; jitter is a fixed
/// fraction of the window.
pub mod test_clock {
    use std::sync::Mutex;

    use super::*;

    pub struct FakeClock {
        start: Instant,
        offset: Mutex<Duration>,
        sleeps: Mutex<Vec<Duration>>,
        /// Fraction of the jitter window returned (1.0 = the cap).
        jitter_fraction: f64,
    }

    impl FakeClock {
        pub fn new(jitter_fraction: f64) -> Self {
            FakeClock {
                start: Instant::now(),
                offset: Mutex::new(Duration::ZERO),
                sleeps: Mutex::new(Vec::new()),
                jitter_fraction,
            }
        }
        pub fn sleeps(&self) -> Vec<Duration> {
            self.sleeps.lock().map(|s| s.clone()).unwrap_or_default()
        }
    }

    #[async_trait]
    impl Clock for FakeClock {
        fn now(&self) -> Instant {
            self.start + self.offset.lock().map(|o| *o).unwrap_or_default()
        }
        async fn sleep(&self, d: Duration) {
            if let Ok(mut o) = self.offset.lock() {
                *o += d;
            }
            if let Ok(mut s) = self.sleeps.lock() {
                s.push(d);
            }
        }
        fn jitter(&self, max: Duration) -> Duration {
            max.mul_f64(self.jitter_fraction.clamp(0.0, 1.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::test_clock::FakeClock;
    use super::*;

    fn transient(ra: Option<u64>) -> ModelError {
        ModelError::Transient {
            status: Some(503),
            retry_after: ra.map(Duration::from_secs),
            message: "busy".into(),
        }
    }

    #[tokio::test]
    async fn backoff_grows_with_full_jitter_and_honours_retry_after() {
        let clock = FakeClock::new(1.0);
        let calls = AtomicU32::new(0);
        let p = RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_secs(1),
            max_delay: Duration::from_secs(3),
            max_total: Duration::from_secs(600),
        };
        let r = with_retry(&p, &clock, || async {
            match calls.fetch_add(1, Ordering::SeqCst) {
                0..=2 => Err(transient(None)),
                3 => Err(transient(Some(7))),
                _ => Ok(42),
            }
        })
        .await;
        assert_eq!(r.unwrap(), 42);
        assert_eq!(
            clock.sleeps(),
            [1, 2, 3, 7].map(Duration::from_secs).to_vec(),
            "1s, 2s, capped 3s, then retry-after 7s"
        );
    }

    #[tokio::test]
    async fn jitter_is_drawn_from_zero_to_cap() {
        let clock = FakeClock::new(0.25);
        let calls = AtomicU32::new(0);
        let p = RetryPolicy {
            base_delay: Duration::from_secs(4),
            ..RetryPolicy::default()
        };
        let _ = with_retry(&p, &clock, || async {
            if calls.fetch_add(1, Ordering::SeqCst) == 0 {
                Err(transient(None))
            } else {
                Ok(())
            }
        })
        .await;
        assert_eq!(clock.sleeps(), vec![Duration::from_secs(1)]);
    }

    #[tokio::test]
    async fn never_retries_client_errors() {
        let clock = FakeClock::new(1.0);
        let calls = AtomicU32::new(0);
        let r: Result<(), _> = with_retry(&RetryPolicy::default(), &clock, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(ModelError::Rejected {
                status: 401,
                body: "no".into(),
            })
        })
        .await;
        assert!(matches!(r, Err(ModelError::Rejected { status: 401, .. })));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(clock.sleeps().is_empty());
    }

    #[tokio::test]
    async fn bounded_by_attempts_and_total_time() {
        let clock = FakeClock::new(1.0);
        let calls = AtomicU32::new(0);
        let p = RetryPolicy {
            max_attempts: 3,
            ..RetryPolicy::default()
        };
        let r: Result<(), _> = with_retry(&p, &clock, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(transient(None))
        })
        .await;
        assert!(matches!(
            r,
            Err(ModelError::RetriesExhausted { attempts: 3, .. })
        ));
        assert_eq!(calls.load(Ordering::SeqCst), 3);

        let clock = FakeClock::new(1.0);
        let calls = AtomicU32::new(0);
        let p = RetryPolicy {
            max_attempts: 100,
            max_total: Duration::from_secs(10),
            ..RetryPolicy::default()
        };
        let r: Result<(), _> = with_retry(&p, &clock, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(transient(Some(4)))
        })
        .await;
        assert!(r.is_err());
        // 0s: fail, sleep 4; 4s: fail, sleep 4; 8s: fail, 8+4 > 10 -> stop.
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }
}
