//! Retries with exponential backoff and jitter; a server's `Retry-After` is honoured (it replaces
//! a shorter backoff delay).

use super::BackendError;
use rlbase::splitmix64;
use std::time::Duration;

/// How often and how patiently to retry a failed request.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt (0 = try once).
    pub max_retries: u32,
    /// Delay before the first retry; doubles each retry.
    pub base_delay: Duration,
    /// Cap on one delay.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { max_retries: 6, base_delay: Duration::from_secs(1), max_delay: Duration::from_secs(60) }
    }
}

impl RetryPolicy {
    /// The delay before retry number `retry` (1-based): `base * 2^(retry-1)`, capped, scaled by a
    /// jitter factor in [0.5, 1.0] drawn from `jitter_seed`.
    pub fn delay(&self, retry: u32, jitter_seed: u64) -> Duration {
        let exp = self.base_delay.saturating_mul(1u32 << retry.saturating_sub(1).min(20));
        let capped = exp.min(self.max_delay);
        let unit = (splitmix64(jitter_seed ^ u64::from(retry)) >> 11) as f64 / (1u64 << 53) as f64;
        capped.mul_f64(0.5 + 0.5 * unit)
    }
}

/// A request that failed for good.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("failed after {attempts} attempt(s) in {elapsed:.1}s: {last}")]
pub struct RetryError {
    /// Attempts made.
    pub attempts: u32,
    /// Seconds spent on them.
    pub elapsed: f64,
    /// The last attempt's error.
    pub last: BackendError,
}

/// Call `f` until it succeeds, fails with a non-retryable error, or the retries run out. `f` gets
/// the attempt number (0 for the first).
pub fn with_retries<T>(
    policy: &RetryPolicy,
    jitter_seed: u64,
    f: impl FnMut(u32) -> Result<T, BackendError>,
) -> Result<T, RetryError> {
    with_retries_until(policy, jitter_seed, || false, f)
}

/// [`with_retries`] that also gives up, with the last error, once `give_up` says so: checked
/// before each retry and during its delay (a run that stopped retries nothing).
pub fn with_retries_until<T>(
    policy: &RetryPolicy,
    jitter_seed: u64,
    give_up: impl Fn() -> bool,
    mut f: impl FnMut(u32) -> Result<T, BackendError>,
) -> Result<T, RetryError> {
    /// How often a delay looks at `give_up`.
    const SLICE: Duration = Duration::from_millis(50);
    let start = std::time::Instant::now();
    let mut attempt = 0u32;
    loop {
        let last = match f(attempt) {
            Ok(v) => return Ok(v),
            Err(e) => e,
        };
        if !last.is_retryable() || attempt >= policy.max_retries || give_up() {
            return Err(RetryError { attempts: attempt + 1, elapsed: start.elapsed().as_secs_f64(), last });
        }
        attempt += 1;
        let backoff = policy.delay(attempt, jitter_seed);
        let delay = last.retry_after().map_or(backoff, |asked| asked.max(backoff));
        let until = std::time::Instant::now() + delay;
        loop {
            let left = until.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                break;
            }
            if give_up() {
                return Err(RetryError { attempts: attempt, elapsed: start.elapsed().as_secs_f64(), last });
            }
            std::thread::sleep(left.min(SLICE));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick(max_retries: u32) -> RetryPolicy {
        RetryPolicy { max_retries, base_delay: Duration::from_micros(10), max_delay: Duration::from_micros(40) }
    }

    #[test]
    fn delays_grow_and_are_capped() {
        let p = RetryPolicy { max_retries: 9, base_delay: Duration::from_secs(1), max_delay: Duration::from_secs(8) };
        for seed in 0..50 {
            let d: Vec<f64> = (1..=6).map(|r| p.delay(r, seed).as_secs_f64()).collect();
            let caps = [1.0, 2.0, 4.0, 8.0, 8.0, 8.0];
            for (x, cap) in d.iter().zip(caps) {
                assert!(*x >= cap * 0.5 && *x <= cap, "{d:?}");
            }
        }
    }

    #[test]
    fn retries_transient_errors_then_succeeds() {
        let mut calls = 0;
        let r = with_retries(&quick(3), 1, |_| {
            calls += 1;
            if calls < 3 {
                Err(BackendError::Http { status: 503, body: String::new(), retry_after: None })
            } else {
                Ok(calls)
            }
        });
        assert_eq!(r, Ok(3));
    }

    #[test]
    fn gives_up_and_reports_attempts() {
        let r: Result<(), _> = with_retries(&quick(2), 1, |_| Err(BackendError::Timeout(1.0)));
        assert_eq!(r.map_err(|e| e.attempts), Err(3));
    }

    #[test]
    fn retry_after_replaces_a_shorter_backoff() {
        let mut calls = Vec::new();
        let start = std::time::Instant::now();
        let r = with_retries(&quick(3), 1, |_| {
            calls.push(start.elapsed());
            if calls.len() == 1 {
                Err(BackendError::Http {
                    status: 429,
                    body: String::new(),
                    retry_after: Some(Duration::from_millis(300)),
                })
            } else {
                Ok(())
            }
        });
        assert_eq!(r, Ok(()));
        assert!(calls[1] - calls[0] >= Duration::from_millis(300), "{calls:?}");
    }

    /// Once `give_up` turns true no retry is made, whatever retries are left, and the error is
    /// the last one the server gave.
    #[test]
    fn giving_up_stops_the_retries() {
        let calls = std::cell::Cell::new(0u32);
        let r: Result<(), _> = with_retries_until(
            &quick(100),
            1,
            || calls.get() >= 2,
            |_| {
                calls.set(calls.get() + 1);
                Err(BackendError::Http { status: 503, body: "down".into(), retry_after: None })
            },
        );
        assert_eq!(calls.get(), 2);
        let e = r.expect_err("gave up");
        assert_eq!(e.attempts, 2);
        assert_eq!(e.last, BackendError::Http { status: 503, body: "down".into(), retry_after: None });

        // A delay under way is cut short too: `give_up` turns true at its first look during the
        // delay (a Retry-After of 30 s; without the cut the retry would be made after it).
        let looks = std::cell::Cell::new(0u32);
        let r: Result<(), _> = with_retries_until(
            &quick(1),
            1,
            || {
                looks.set(looks.get() + 1);
                looks.get() >= 2
            },
            |_| {
                Err(BackendError::Http { status: 429, body: String::new(), retry_after: Some(Duration::from_secs(30)) })
            },
        );
        assert_eq!(r.map_err(|e| e.attempts), Err(1));
        assert_eq!(looks.get(), 2);
    }

    #[test]
    fn final_errors_are_not_retried() {
        let mut calls = 0;
        let r: Result<(), _> = with_retries(&quick(5), 1, |_| {
            calls += 1;
            Err(BackendError::Http { status: 400, body: "prompt too long".into(), retry_after: None })
        });
        assert_eq!(calls, 1);
        assert!(r.is_err());
        assert!(!BackendError::Fatal("x".into()).is_retryable());
        assert!(BackendError::Http { status: 429, body: String::new(), retry_after: None }.is_retryable());
        assert!(BackendError::Io("reset".into()).is_retryable());
    }
}
