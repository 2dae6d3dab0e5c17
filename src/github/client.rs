//! The GitHub HTTP client: octocrab's raw calls under one retry policy.
//!
//! - Secondary rate limits (403/429 saying so, or carrying `retry-after`) wait for
//!   `retry-after`, else until `x-ratelimit-reset`, else ≥ 60 s growing on repeat.
//! - 5xx/timeouts on GET/PATCH/PUT retry with full-jitter backoff; on POST they are
//!   *ambiguous* (the write may have happened): the caller re-queries by marker first.
//! - Mutations go through one queue, spaced by `mutation_gap`.
//! - The clock is injectable, so tests never sleep.
//! - The token lives only inside octocrab; errors and logs carry routes, never headers.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use http_body_util::BodyExt;
use octocrab::Octocrab;
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use crate::clock::{Clock, SystemClock};

/// Retry and pacing settings.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    pub max_attempts: u32,
    pub base: Duration,
    pub cap: Duration,
    /// Total time the client may spend waiting on one request.
    pub budget: Duration,
    /// Minimum wait for a secondary rate limit without headers.
    pub secondary_min: Duration,
    /// Minimum spacing between two mutations.
    pub mutation_gap: Duration,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 6,
            base: Duration::from_secs(1),
            cap: Duration::from_secs(60),
            budget: Duration::from_secs(15 * 60),
            secondary_min: Duration::from_secs(60),
            mutation_gap: Duration::from_secs(1),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(60),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GitHubError {
    /// A definite answer from GitHub that retrying will not change.
    #[error("GitHub {method} {route} failed with HTTP {status}: {message}")]
    Status {
        method: String,
        route: String,
        status: u16,
        message: String,
    },
    /// No definite answer to a write: it may have been applied.
    #[error("GitHub {method} {route} gave no definite answer ({detail}); it may have been applied")]
    Ambiguous {
        method: String,
        route: String,
        detail: String,
    },
    /// Retries or the time budget ran out.
    #[error("GitHub {method} {route} still failing after {attempts} attempts: {detail}")]
    GaveUp {
        method: String,
        route: String,
        attempts: u32,
        detail: String,
    },
    /// The outgoing body matched a secret pattern: nothing was sent.
    #[error("refused to send GitHub {method} {route}: the body contains what looks like a {kind}")]
    SecretInBody {
        method: String,
        route: String,
        kind: String,
    },
    #[error("GitHub client setup failed: {0}")]
    Setup(String),
    #[error("unexpected response from GitHub {route}: {detail}")]
    Decode { route: String, detail: String },
}

impl GitHubError {
    pub fn status(&self) -> Option<u16> {
        match self {
            GitHubError::Status { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// A response with what the retry policy and callers need.
#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Response {
    pub fn json<T: DeserializeOwned>(&self, route: &str) -> Result<T, GitHubError> {
        let de = &mut serde_json::Deserializer::from_slice(&self.body);
        serde_path_to_error::deserialize(de).map_err(|e| GitHubError::Decode {
            route: route.to_string(),
            detail: e.to_string(),
        })
    }
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// What to do after a response (pure; see module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    Done,
    Retry(Duration),
    /// Retry would not help.
    Fail,
    /// A write got no definite answer.
    Ambiguous,
}

fn header_u64(h: &HeaderMap, name: &str) -> Option<u64> {
    h.get(name)?.to_str().ok()?.trim().parse().ok()
}

/// Decide on a response. `secondary_hits` counts earlier secondary limits for this request
/// (the header-less wait grows with it); `jitter` in [0, 1) scales the backoff.
/// Where a request stands, for [`classify`].
#[derive(Debug, Clone, Copy)]
pub struct Attempt {
    pub number: u32,
    pub secondary_hits: u32,
    pub now_unix: u64,
    pub jitter: f64,
}

pub fn classify(
    method: &Method,
    status: u16,
    headers: &HeaderMap,
    body: &str,
    at: Attempt,
    policy: &RetryPolicy,
) -> Next {
    let Attempt {
        number: attempt,
        secondary_hits,
        now_unix,
        jitter,
    } = at;
    if (200..400).contains(&status) {
        return Next::Done;
    }
    let lower = body.to_ascii_lowercase();
    let rate_limited_status = status == 403 || status == 429;
    let secondary = lower.contains("secondary rate limit");
    let retry_after = header_u64(headers, "retry-after");
    let remaining = header_u64(headers, "x-ratelimit-remaining");
    let reset = header_u64(headers, "x-ratelimit-reset");
    if rate_limited_status && (secondary || retry_after.is_some() || remaining == Some(0)) {
        // A spend/quota limit is permanent for this run.
        if lower.contains("spending limit") || lower.contains("billing") {
            return Next::Fail;
        }
        let wait = if let Some(s) = retry_after {
            Duration::from_secs(s)
        } else if let (Some(0), Some(r)) = (remaining, reset) {
            Duration::from_secs(r.saturating_sub(now_unix) + 1)
        } else {
            policy.secondary_min * 2u32.saturating_pow(secondary_hits.min(4))
        };
        return Next::Retry(wait);
    }
    if matches!(status, 408 | 500 | 502 | 503 | 504) {
        if *method == Method::POST {
            return Next::Ambiguous;
        }
        return Next::Retry(backoff(policy, attempt, jitter));
    }
    Next::Fail
}

/// Full-jitter exponential backoff.
pub fn backoff(policy: &RetryPolicy, attempt: u32, jitter: f64) -> Duration {
    let exp = policy
        .base
        .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1).min(16)));
    let top = exp.min(policy.cap);
    top.mul_f64(jitter.clamp(0.0, 1.0))
}

fn error_message(body: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Msg {
        message: Option<String>,
        #[serde(default)]
        errors: Vec<serde_json::Value>,
    }
    match serde_json::from_str::<Msg>(body) {
        Ok(m) => {
            let mut s = m.message.unwrap_or_default();
            if !m.errors.is_empty() {
                s.push_str(&format!(" ({})", serde_json::Value::Array(m.errors)));
            }
            s
        }
        Err(_) => body.chars().take(300).collect(),
    }
}

/// The client. Cheap to share behind an `Arc`.
pub struct GitHub {
    octo: Octocrab,
    clock: Arc<dyn Clock>,
    policy: RetryPolicy,
    /// Time of the last mutation (unix seconds); the lock serialises mutations.
    mutations: tokio::sync::Mutex<Option<std::time::Instant>>,
    /// Kept only to refuse bodies that contain it (never logged, never sent elsewhere).
    token: Option<String>,
    api_url: String,
}

impl GitHub {
    /// `api_url` e.g. `https://api.github.com` or `http://127.0.0.1:PORT`.
    pub fn new(
        api_url: &str,
        token: Option<&str>,
        clock: Arc<dyn Clock>,
        policy: RetryPolicy,
    ) -> Result<GitHub, GitHubError> {
        let mut b = Octocrab::builder()
            .base_uri(api_url)
            .map_err(|e| GitHubError::Setup(format!("bad API URL `{api_url}`: {e}")))?
            .set_connect_timeout(Some(policy.connect_timeout))
            .set_read_timeout(Some(policy.read_timeout));
        if let Some(t) = token {
            b = b.personal_token(t.to_string());
        }
        let octo = b
            .build()
            .map_err(|e| GitHubError::Setup(format!("cannot build the HTTP client: {e}")))?;
        Ok(GitHub {
            octo,
            clock,
            policy,
            mutations: tokio::sync::Mutex::new(None),
            token: token.map(str::to_string),
            api_url: api_url.trim_end_matches('/').to_string(),
        })
    }

    /// Fetch a redirect target (job logs live in blob storage behind a short-lived signed
    /// URL) with a plain client: no Authorization header ever leaves for another host.
    pub async fn fetch_unauthenticated(
        &self,
        location: &str,
        route: &str,
    ) -> Result<String, GitHubError> {
        let url = if location.starts_with('/') {
            format!("{}{location}", self.api_url)
        } else {
            location.to_string()
        };
        let gave_up = |detail: String| GitHubError::GaveUp {
            method: "GET".into(),
            route: format!("{route} (redirect)"),
            attempts: 1,
            detail,
        };
        let client = reqwest::Client::builder()
            .connect_timeout(self.policy.connect_timeout)
            .timeout(self.policy.read_timeout)
            .redirect(reqwest::redirect::Policy::limited(3))
            .build()
            .map_err(|e| GitHubError::Setup(e.to_string()))?;
        // The signed URL's query is a credential of sorts: keep it out of errors.
        let shown = url.split('?').next().unwrap_or("").to_string();
        let res = client
            .get(&url)
            .send()
            .await
            .map_err(|e| gave_up(format!("{shown}: {}", e.without_url())))?;
        let status = res.status().as_u16();
        if status != 200 {
            return Err(GitHubError::Status {
                method: "GET".into(),
                route: shown,
                status,
                message: "downloading the redirect target".into(),
            });
        }
        res.text()
            .await
            .map_err(|e| gave_up(format!("{shown}: {}", e.without_url())))
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    async fn send_once(
        &self,
        method: &Method,
        route: &str,
        body: Option<&serde_json::Value>,
        accept: Option<&str>,
    ) -> Result<Response, String> {
        let res = match *method {
            Method::GET => {
                let mut h = HeaderMap::new();
                if let Some(a) = accept.and_then(|a| http::HeaderValue::from_str(a).ok()) {
                    h.insert(http::header::ACCEPT, a);
                }
                self.octo._get_with_headers(route, Some(h)).await
            }
            Method::POST => self.octo._post(route, body).await,
            Method::PATCH => self.octo._patch(route, body).await,
            Method::PUT => self.octo._put(route, body).await,
            _ => return Err(format!("method {method} not supported")),
        };
        let res = res.map_err(|e| describe_octo_error(&e))?;
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        let body = res
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("reading the body: {}", describe_octo_error(&e)))?
            .to_bytes();
        Ok(Response {
            status,
            headers,
            body,
        })
    }

    /// Send with the retry policy. 4xx other than rate limits come back as `Status`.
    pub async fn request(
        &self,
        method: Method,
        route: &str,
        body: Option<&serde_json::Value>,
        accept: Option<&str>,
    ) -> Result<Response, GitHubError> {
        let is_mutation = method != Method::GET;
        if let Some(b) = body {
            let text = b.to_string();
            let leaked = self
                .token
                .as_deref()
                .filter(|t| t.len() >= 8 && text.contains(*t))
                .map(|_| "GitHub token")
                .or_else(|| super::render::find_secret(&text));
            if let Some(kind) = leaked {
                return Err(GitHubError::SecretInBody {
                    method: method.to_string(),
                    route: route.to_string(),
                    kind: kind.to_string(),
                });
            }
        }
        // Serialise mutations: hold the queue for the whole request (retries included).
        let mut guard = if is_mutation {
            let mut g = self.mutations.lock().await;
            if let Some(last) = *g {
                let since = last.elapsed();
                if since < self.policy.mutation_gap {
                    self.clock.sleep(self.policy.mutation_gap - since).await;
                }
            }
            *g = Some(std::time::Instant::now());
            Some(g)
        } else {
            None
        };
        let start = self.clock.now_unix();
        let mut secondary_hits = 0;
        let mut attempt = 0;
        let m = method.to_string();
        loop {
            attempt += 1;
            let outcome = self.send_once(&method, route, body, accept).await;
            let next = match &outcome {
                Ok(r) => classify(
                    &method,
                    r.status,
                    &r.headers,
                    &String::from_utf8_lossy(&r.body),
                    Attempt {
                        number: attempt,
                        secondary_hits,
                        now_unix: self.clock.now_unix(),
                        jitter: rand::random::<f64>(),
                    },
                    &self.policy,
                ),
                Err(_) if method == Method::POST => Next::Ambiguous,
                Err(_) => Next::Retry(backoff(&self.policy, attempt, rand::random::<f64>())),
            };
            let detail = match &outcome {
                Ok(r) => format!("HTTP {}: {}", r.status, error_message(&r.text())),
                Err(e) => e.clone(),
            };
            match next {
                Next::Done => {
                    if let Some(g) = guard.as_mut() {
                        **g = Some(std::time::Instant::now());
                    }
                    return outcome.map_err(|detail| GitHubError::GaveUp {
                        method: m,
                        route: route.into(),
                        attempts: attempt,
                        detail,
                    });
                }
                Next::Fail => {
                    let (status, message) = match &outcome {
                        Ok(r) => (r.status, error_message(&r.text())),
                        Err(e) => (0, e.clone()),
                    };
                    return Err(GitHubError::Status {
                        method: m,
                        route: route.into(),
                        status,
                        message,
                    });
                }
                Next::Ambiguous => {
                    return Err(GitHubError::Ambiguous {
                        method: m,
                        route: route.into(),
                        detail,
                    });
                }
                Next::Retry(wait) => {
                    if let Ok(r) = &outcome
                        && (r.status == 403 || r.status == 429)
                    {
                        secondary_hits += 1;
                    }
                    let spent = self.clock.now_unix().saturating_sub(start);
                    if attempt >= self.policy.max_attempts
                        || Duration::from_secs(spent) + wait > self.policy.budget
                    {
                        return Err(GitHubError::GaveUp {
                            method: m,
                            route: route.into(),
                            attempts: attempt,
                            detail,
                        });
                    }
                    tracing::info!(route, wait_s = wait.as_secs_f64(), %detail, "GitHub retry");
                    self.clock.sleep(wait).await;
                }
            }
        }
    }

    pub async fn get_json<T: DeserializeOwned>(&self, route: &str) -> Result<T, GitHubError> {
        self.request(Method::GET, route, None, None)
            .await?
            .json(route)
    }

    pub async fn send_json<B: Serialize, T: DeserializeOwned>(
        &self,
        method: Method,
        route: &str,
        body: &B,
    ) -> Result<T, GitHubError> {
        let v = serde_json::to_value(body).map_err(|e| GitHubError::Decode {
            route: route.to_string(),
            detail: format!("serialising the request: {e}"),
        })?;
        self.request(method, route, Some(&v), None)
            .await?
            .json(route)
    }
}

fn describe_octo_error(e: &octocrab::Error) -> String {
    // octocrab errors carry no credentials; keep the display and the source chain.
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(x) = src {
        s.push_str(": ");
        s.push_str(&x.to_string());
        src = x.source();
    }
    s
}

/// 404 or 403 → the status, for permission hints.
pub fn is_status(e: &GitHubError, code: StatusCode) -> bool {
    e.status() == Some(code.as_u16())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.insert(*k, v.parse().unwrap());
        }
        m
    }

    #[test]
    fn classification() {
        let p = RetryPolicy::default();
        let get = Method::GET;
        let post = Method::POST;
        let c = |m: &Method, s, hd: &HeaderMap, b: &str, hits| {
            let at = Attempt {
                number: 1,
                secondary_hits: hits,
                now_unix: 1000,
                jitter: 0.5,
            };
            classify(m, s, hd, b, at, &p)
        };
        assert_eq!(c(&get, 200, &h(&[]), "", 0), Next::Done);
        assert_eq!(c(&get, 404, &h(&[]), "", 0), Next::Fail);
        assert_eq!(c(&post, 422, &h(&[]), "", 0), Next::Fail);
        assert_eq!(
            c(
                &get,
                403,
                &h(&[]),
                "{\"message\":\"Resource not accessible by integration\"}",
                0
            ),
            Next::Fail
        );
        // retry-after wins.
        assert_eq!(
            c(&post, 403, &h(&[("retry-after", "7")]), "", 0),
            Next::Retry(Duration::from_secs(7))
        );
        // primary limit: until reset.
        assert_eq!(
            c(
                &get,
                403,
                &h(&[
                    ("x-ratelimit-remaining", "0"),
                    ("x-ratelimit-reset", "1090")
                ]),
                "",
                0
            ),
            Next::Retry(Duration::from_secs(91))
        );
        // secondary without headers: ≥ 60 s, growing.
        let body = "{\"message\":\"You have exceeded a secondary rate limit\"}";
        assert_eq!(
            c(&post, 403, &h(&[]), body, 0),
            Next::Retry(Duration::from_secs(60))
        );
        assert_eq!(
            c(&post, 403, &h(&[]), body, 1),
            Next::Retry(Duration::from_secs(120))
        );
        // 5xx: retry reads, ambiguous writes.
        assert!(matches!(c(&get, 502, &h(&[]), "", 0), Next::Retry(_)));
        assert_eq!(c(&post, 502, &h(&[]), "", 0), Next::Ambiguous);
        assert!(matches!(
            c(&Method::PATCH, 503, &h(&[]), "", 0),
            Next::Retry(_)
        ));
    }

    #[test]
    fn backoff_is_capped_and_jittered() {
        let p = RetryPolicy::default();
        assert_eq!(backoff(&p, 1, 1.0), Duration::from_secs(1));
        assert_eq!(backoff(&p, 3, 1.0), Duration::from_secs(4));
        assert_eq!(backoff(&p, 30, 1.0), Duration::from_secs(60));
        assert_eq!(backoff(&p, 3, 0.0), Duration::ZERO);
    }
}
