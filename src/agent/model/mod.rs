//! Model adapters behind one small trait, chosen by a spec string (`ollama:MODEL`, `openai:MODEL`,
//! `scripted:FILE`).
//!
//! History is provider-neutral ([`Message`]) except for one thing: an assistant message keeps the
//! provider's raw JSON as received, and adapters replay it verbatim so server-side prompt caches
//! stay warm and nothing the model said is rewritten.

pub mod anthropic;
mod args;
pub mod ollama;
pub mod openai;
pub mod pricing;
pub mod retry;
pub mod scripted;
pub mod textcalls;

use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use args::ModelArgs;
pub use retry::{Clock, RetryPolicy, SystemClock};

/// A tool as offered to the model: name, description and a JSON schema for the arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// One tool call the model made, structured or recovered from its text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider call id (OpenAI); `None` for Ollama and for calls written as text.
    pub id: Option<String>,
    pub name: String,
    pub arguments: Value,
    /// Set when the arguments were not valid JSON: the raw text and the parse error. The loop
    /// answers such a call with an observation instead of running it.
    pub invalid_arguments: Option<String>,
    /// The call was written as text in the content (fenced JSON, `<tool_call>` tags, bare JSON),
    /// not sent as a structured call; its result goes back as a user message.
    pub from_text: bool,
}

/// The assistant's reply as the loop sees it, plus the provider's raw message for replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    /// The provider's message object exactly as received; replayed verbatim.
    pub raw: Option<Value>,
}

/// One entry of the conversation history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    System {
        content: String,
    },
    User {
        content: String,
    },
    Assistant(AssistantMessage),
    /// The result of one tool call. `structured` mirrors the call's `!from_text`.
    Tool {
        call_id: Option<String>,
        name: String,
        content: String,
        structured: bool,
    },
}

impl Message {
    pub fn system(s: impl Into<String>) -> Self {
        Message::System { content: s.into() }
    }
    pub fn user(s: impl Into<String>) -> Self {
        Message::User { content: s.into() }
    }
    pub fn tool_result(call: &ToolCall, content: impl Into<String>) -> Self {
        Message::Tool {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content: content.into(),
            structured: !call.from_text,
        }
    }
    /// Rough size in characters, for the context estimate.
    pub fn char_len(&self) -> usize {
        match self {
            Message::System { content } | Message::User { content } => content.len(),
            Message::Tool { content, name, .. } => content.len() + name.len(),
            Message::Assistant(a) => {
                a.content.len()
                    + a.tool_calls
                        .iter()
                        .map(|c| c.name.len() + c.arguments.to_string().len())
                        .sum::<usize>()
            }
        }
    }
}

/// Text rendering of a tool result sent as a user message (for calls written as text).
pub fn text_tool_result(name: &str, content: &str) -> String {
    format!("Result of tool `{name}`:\n{content}")
}

/// What the loop asks of a model.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub messages: &'a [Message],
    /// Empty for a plain-text request (the compaction summary, a candidate edit).
    pub tools: &'a [ToolSpec],
    /// Sampling for this request over the adapter's own (candidates draw K samples from one
    /// prompt with different seeds); `None`: the adapter's settings.
    pub sample: Option<Sampling>,
}

/// A fill-in-the-middle request: the code before and after one gap, for models trained on
/// it (most coder models). The answer is what belongs in the gap.
#[derive(Debug, Clone, Copy)]
pub struct Infill<'a> {
    pub prefix: &'a str,
    pub suffix: &'a str,
    /// Generation stops at the first of these.
    pub stop: &'a [&'a str],
    pub max_tokens: u32,
    pub sample: Option<Sampling>,
    /// Text the gap is known to start with: the model continues after it (a branch taken at
    /// one of an earlier fill's [`Alternative`]s). The answer's text excludes it.
    pub middle: &'a str,
    /// How many most likely tokens to report at each generated position (0: none); a server
    /// that does not report them answers without [`Filled::alternatives`].
    pub alternatives: u8,
}

/// What an [`Infill`] answers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filled {
    pub text: String,
    pub usage: Usage,
    /// Where the server's time went, when it says (llama.cpp's `timings`, Ollama's
    /// durations).
    pub timings: Option<FillTimings>,
    /// The tokens the model ranked next to the ones it generated, most likely first (empty
    /// unless asked for and reported).
    pub alternatives: Vec<Alternative>,
}

/// A token the model would have generated instead, at one position of a fill: branching
/// there gives the model's next most likely fill rather than a random sample of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Alternative {
    /// The fill's text before the position.
    pub before: String,
    pub token: String,
    /// The log-probability of `before` and then `token`.
    pub logprob: f64,
}

/// A fill's server-side time: the prompt evaluated (what its prompt cache did not already
/// hold) and the tokens generated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct FillTimings {
    /// Prompt tokens evaluated, and those reused from the server's cache.
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub prompt_ms: f64,
    pub generated_tokens: u64,
    pub generation_ms: f64,
}

/// The special tokens of the fill-in-the-middle families a model name is recognised as
/// (prefix, suffix, middle; the prompt is `P prefix S suffix M`), or `None`. Pure.
pub fn fim_tokens(model: &str) -> Option<(&'static str, &'static str, &'static str)> {
    let m = model.to_lowercase();
    if (m.contains("qwen") && m.contains("coder")) || m.contains("codegemma") {
        Some(("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"))
    } else if m.contains("starcoder") {
        Some(("<fim_prefix>", "<fim_suffix>", "<fim_middle>"))
    } else if m.contains("deepseek-coder") || m.contains("deepseek_coder") {
        Some(("<｜fim▁begin｜>", "<｜fim▁hole｜>", "<｜fim▁end｜>"))
    } else {
        None
    }
}

/// Per-request sampling: temperature and seed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    pub temperature: f64,
    pub seed: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    /// Output cut at the token limit.
    Length,
    /// The provider refused (content filter / refusal field).
    Refusal,
    Other(String),
}

#[derive(Debug, Clone)]
pub struct Response {
    pub message: AssistantMessage,
    pub usage: Usage,
    pub finish: FinishReason,
    /// Bytes of the request body sent (for the bench and trajectory).
    pub bytes_sent: usize,
}

/// Errors a caller must tell apart: retry, compact, or tell the user how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("no model server answers at {url} ({reason})\n  {hint}")]
    Unreachable {
        url: String,
        reason: String,
        hint: String,
    },
    #[error("model `{model}` not found at {url}: {hint}")]
    ModelNotFound {
        model: String,
        url: String,
        hint: String,
    },
    #[error("the conversation exceeds the model's context window: {0}")]
    ContextExceeded(String),
    /// Retryable: 408, 429, 5xx, 529, a cut or unreadable body.
    #[error("transient model server error{}: {message}", status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
    Transient {
        status: Option<u16>,
        retry_after: Option<Duration>,
        message: String,
    },
    /// Not retryable (400, 401, 403, 404, 422, ...).
    #[error("the model server rejected the request (HTTP {status}): {body}")]
    Rejected { status: u16, body: String },
    #[error("retries exhausted after {attempts} attempts over {elapsed:?}: {last}")]
    RetriesExhausted {
        attempts: u32,
        elapsed: Duration,
        last: Box<ModelError>,
    },
    #[error("the scripted model has no turns left (script: {0})")]
    ScriptExhausted(String),
    #[error("{0}")]
    Config(String),
    /// The model or its adapter cannot do what was asked (e.g. fill-in-the-middle).
    #[error("not supported: {0}")]
    Unsupported(String),
    /// The repair's ledger refused the call (a cap is used up, or the wall time left ran out
    /// while it waited): `agent::attempt::Metered`.
    #[error("the repair's budget is spent ({0})")]
    Budget(String),
}

impl ModelError {
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ModelError::Transient { .. } | ModelError::Unreachable { .. }
        )
    }

    /// The server or its setup failed, not this one request: no further request can do
    /// better, so a strategy stops with an infrastructure error instead of drawing on.
    pub fn is_setup(&self) -> bool {
        matches!(
            self,
            ModelError::Unreachable { .. }
                | ModelError::ModelNotFound { .. }
                | ModelError::RetriesExhausted { .. }
                | ModelError::Config(_)
        )
    }
}

/// A chat model that can call tools.
#[async_trait]
pub trait Model: Send + Sync {
    async fn complete(&self, req: &Request<'_>) -> Result<Response, ModelError>;
    /// The spec it was built from, e.g. `ollama:qwen2.5-coder:1.5b`.
    fn spec(&self) -> String;
    /// One line for reports; a scripted model says it is scripted.
    fn describe(&self) -> String;
    /// Dollars for a usage; unknown models cost $0 (their tokens still count).
    fn cost(&self, usage: &Usage) -> f64 {
        pricing::cost(&self.spec(), usage)
    }
    /// Whether [`Model::infill`] can answer (a known fill-in-the-middle family).
    fn supports_infill(&self) -> bool {
        false
    }
    /// Whether the server answers on this machine (a loopback address): its inference then
    /// shares the CPUs with the sandbox's test runs. Default: no.
    fn on_this_machine(&self) -> bool {
        false
    }
    /// Fill in the middle ([`Infill`]). Default: [`ModelError::Unsupported`].
    async fn infill(&self, _req: &Infill<'_>) -> Result<Filled, ModelError> {
        Err(ModelError::Unsupported(format!(
            "{} has no fill-in-the-middle",
            self.spec()
        )))
    }
}

/// Whether `url`'s host is this machine: `localhost`, a 127.0.0.0/8 address, `::1`, or the
/// unspecified address (a client connecting to `0.0.0.0` reaches this machine). Pure.
pub fn is_loopback_url(url: &str) -> bool {
    let Some(host) = reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
    else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback() || ip.is_unspecified())
}

/// How a spec string names a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    Ollama(String),
    OpenAi(String),
    Anthropic(String),
    Scripted(PathBuf),
}

pub const ACCEPTED_SPECS: &str = "ollama:MODEL (e.g. ollama:qwen2.5-coder:1.5b), openai:MODEL (any OpenAI-compatible /v1/chat/completions server; --base-url), anthropic:MODEL (Messages API; ANTHROPIC_API_KEY), scripted:FILE (a file of scripted turns)";

impl ModelSpec {
    pub fn parse(spec: &str) -> Result<ModelSpec, ModelError> {
        let bad = || {
            ModelError::Config(format!(
                "unknown model spec `{spec}`; accepted forms: {ACCEPTED_SPECS}"
            ))
        };
        let (kind, rest) = spec.split_once(':').ok_or_else(bad)?;
        let rest = rest.trim();
        if rest.is_empty() {
            return Err(bad());
        }
        match kind {
            "ollama" => Ok(ModelSpec::Ollama(rest.to_string())),
            "openai" => Ok(ModelSpec::OpenAi(rest.to_string())),
            "anthropic" => Ok(ModelSpec::Anthropic(rest.to_string())),
            "scripted" => Ok(ModelSpec::Scripted(PathBuf::from(rest))),
            _ => Err(bad()),
        }
    }
}

/// `tool_choice` for OpenAI-compatible servers. Small models ignore tools under `auto`; servers
/// that enforce `required` always return a structured call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    #[default]
    Auto,
    Required,
    /// Send no `tool_choice` field at all.
    Omit,
}

/// Adapter settings from flags and environment.
#[derive(Debug, Clone)]
pub struct ModelOptions {
    /// `--base-url` for openai: (else OPENAI_BASE_URL, else https://api.openai.com/v1).
    pub base_url: Option<String>,
    /// `--ollama-url` (else OLLAMA_HOST, else http://127.0.0.1:11434).
    pub ollama_url: Option<String>,
    pub api_key: Option<String>,
    pub tool_choice: ToolChoice,
    pub temperature: Option<f64>,
    pub seed: Option<u64>,
    pub num_ctx: Option<u32>,
    pub think: Option<bool>,
    pub keep_alive: Option<String>,
    pub max_output_tokens: Option<u32>,
    pub request_timeout: Duration,
    pub retry: RetryPolicy,
}

impl Default for ModelOptions {
    fn default() -> Self {
        ModelOptions {
            base_url: None,
            ollama_url: None,
            api_key: None,
            tool_choice: ToolChoice::Auto,
            temperature: Some(0.0),
            seed: Some(1),
            num_ctx: Some(8192),
            think: None,
            keep_alive: Some("10m".into()),
            max_output_tokens: Some(1024),
            // Small CPU models on a busy machine are slow; see LOCAL-MODEL.md.
            request_timeout: Duration::from_secs(300),
            retry: RetryPolicy::default(),
        }
    }
}

/// Ollama base URL: the flag, else `OLLAMA_HOST`, else the default. `OLLAMA_HOST` may omit the
/// scheme (`0.0.0.0:11434`), as Ollama itself allows.
pub fn resolve_ollama_url(flag: Option<&str>, env: Option<&str>) -> String {
    let raw = flag
        .or(env.filter(|s| !s.trim().is_empty()))
        .unwrap_or("http://127.0.0.1:11434")
        .trim()
        .trim_end_matches('/');
    if raw.contains("://") {
        raw.to_string()
    } else {
        format!("http://{raw}")
    }
}

/// OpenAI base URL: the flag, else `OPENAI_BASE_URL`, else api.openai.com.
pub fn resolve_openai_url(flag: Option<&str>, env: Option<&str>) -> String {
    flag.or(env.filter(|s| !s.trim().is_empty()))
        .unwrap_or("https://api.openai.com/v1")
        .trim()
        .trim_end_matches('/')
        .to_string()
}

/// Build an adapter from a spec string, reading OLLAMA_HOST / OPENAI_BASE_URL / OPENAI_API_KEY.
pub fn from_spec(spec: &str, opts: &ModelOptions) -> Result<Box<dyn Model>, ModelError> {
    let env = |k: &str| std::env::var(k).ok();
    match ModelSpec::parse(spec)? {
        ModelSpec::Ollama(model) => {
            let url = resolve_ollama_url(opts.ollama_url.as_deref(), env("OLLAMA_HOST").as_deref());
            Ok(Box::new(ollama::Ollama::new(&url, &model, opts.clone())?))
        }
        ModelSpec::OpenAi(model) => {
            let url =
                resolve_openai_url(opts.base_url.as_deref(), env("OPENAI_BASE_URL").as_deref());
            let mut opts = opts.clone();
            if opts.api_key.is_none() {
                opts.api_key = env("OPENAI_API_KEY").filter(|k| !k.is_empty());
            }
            Ok(Box::new(openai::OpenAi::new(&url, &model, opts)?))
        }
        ModelSpec::Anthropic(model) => {
            let url = opts
                .base_url
                .clone()
                .or_else(|| env("ANTHROPIC_BASE_URL").filter(|s| !s.trim().is_empty()))
                .unwrap_or_else(|| "https://api.anthropic.com".into());
            let mut opts = opts.clone();
            if opts.api_key.is_none() {
                opts.api_key = env("ANTHROPIC_API_KEY").filter(|k| !k.is_empty());
            }
            Ok(Box::new(anthropic::Anthropic::new(&url, &model, opts)?))
        }
        ModelSpec::Scripted(path) => Ok(Box::new(scripted::Scripted::from_file(&path)?)),
    }
}

/// Shared HTTP client construction.
pub(crate) fn http_client(timeout: Duration) -> Result<reqwest::Client, ModelError> {
    reqwest::Client::builder()
        .timeout(timeout)
        .connect_timeout(Duration::from_secs(10))
        .build()
        .map_err(|e| ModelError::Config(format!("cannot build the HTTP client: {e}")))
}

/// Parse a `retry-after` header: seconds (possibly fractional). HTTP dates are rare from model
/// servers and are ignored (the backoff applies).
pub(crate) fn parse_retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let v = headers.get("retry-after")?.to_str().ok()?.trim();
    let secs: f64 = v.parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(3600.0)))
}

/// A raw HTTP reply: status, `retry-after`, body text.
pub(crate) struct Reply {
    pub status: u16,
    pub retry_after: Option<Duration>,
    pub text: String,
}

/// Send a prepared request and read the whole reply; connection problems are classified
/// with `hint` (how to start the server at `url`). Every adapter's one network call.
pub(crate) async fn send(
    rb: reqwest::RequestBuilder,
    url: &str,
    hint: &str,
) -> Result<Reply, ModelError> {
    let resp = rb
        .send()
        .await
        .map_err(|e| classify_send_error(e, url, hint))?;
    let status = resp.status().as_u16();
    let retry_after = parse_retry_after(resp.headers());
    let text = resp
        .text()
        .await
        .map_err(|e| classify_send_error(e, url, hint))?;
    Ok(Reply {
        status,
        retry_after,
        text,
    })
}

/// The request body as bytes (its length is the step's `bytes_sent`).
pub(crate) fn encode(body: &serde_json::Value) -> Result<Vec<u8>, ModelError> {
    serde_json::to_vec(body)
        .map_err(|e| ModelError::Config(format!("cannot encode the request: {e}")))
}

/// Tools in the OpenAI function shape (OpenAI-compatible servers and Ollama's native API).
pub(crate) fn function_tools(tools: &[ToolSpec]) -> serde_json::Value {
    tools
        .iter()
        .map(|t| {
            serde_json::json!({"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}})
        })
        .collect()
}

/// Map a non-success HTTP status to an error class.
pub(crate) fn classify_status(
    status: u16,
    retry_after: Option<Duration>,
    body: String,
) -> ModelError {
    let lower = body.to_lowercase();
    if (status == 400 || status == 413)
        && (lower.contains("context length")
            || lower.contains("context_length")
            || lower.contains("exceed_context")
            || lower.contains("exceeds the available context")
            || lower.contains("maximum context")
            || lower.contains("prompt is too long"))
    {
        return ModelError::ContextExceeded(body);
    }
    match status {
        408 | 429 | 500..=599 => ModelError::Transient {
            status: Some(status),
            retry_after,
            message: body,
        },
        _ => ModelError::Rejected { status, body },
    }
}

/// Map a reqwest send error: connection problems become `Unreachable` (retryable) with a hint.
pub(crate) fn classify_send_error(err: reqwest::Error, url: &str, hint: &str) -> ModelError {
    if err.is_connect() {
        ModelError::Unreachable {
            url: url.to_string(),
            reason: root_cause(&err),
            hint: hint.to_string(),
        }
    } else {
        // Timeouts, resets and bodies cut mid-stream are worth another attempt.
        ModelError::Transient {
            status: None,
            retry_after: None,
            message: root_cause(&err),
        }
    }
}

fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = err.to_string();
    let mut src = err.source();
    while let Some(s) = src {
        msg = format!("{msg}: {s}");
        src = s.source();
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_server_is_on_this_machine_and_a_named_host_is_not() {
        for url in [
            "http://127.0.0.1:8091/v1",
            "http://localhost:11434",
            "http://LOCALHOST/v1",
            "http://127.1.2.3:80",
            "http://[::1]:8080/v1",
            "http://0.0.0.0:8000",
        ] {
            assert!(is_loopback_url(url), "{url}");
        }
        for url in [
            "http://ollama:11434",
            "https://api.openai.com/v1",
            "http://10.0.0.5:8000/v1",
            "not a url",
        ] {
            assert!(!is_loopback_url(url), "{url}");
        }
    }

    #[test]
    fn spec_parsing_keeps_colons_in_model_names() {
        assert_eq!(
            ModelSpec::parse("ollama:qwen2.5-coder:1.5b").unwrap(),
            ModelSpec::Ollama("qwen2.5-coder:1.5b".into())
        );
        assert_eq!(
            ModelSpec::parse("openai:gpt-4o-mini").unwrap(),
            ModelSpec::OpenAi("gpt-4o-mini".into())
        );
        assert_eq!(
            ModelSpec::parse("scripted:examples/x.yaml").unwrap(),
            ModelSpec::Scripted("examples/x.yaml".into())
        );
    }

    #[test]
    fn unknown_spec_lists_accepted_forms() {
        for bad in ["gpt-4", "foo:bar", "ollama:", ""] {
            let e = ModelSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains("accepted forms"), "{e}");
            assert!(
                e.contains("ollama:MODEL") && e.contains("scripted:FILE"),
                "{e}"
            );
        }
    }

    #[test]
    fn ollama_url_precedence_and_scheme() {
        assert_eq!(resolve_ollama_url(None, None), "http://127.0.0.1:11434");
        assert_eq!(
            resolve_ollama_url(None, Some("0.0.0.0:9999")),
            "http://0.0.0.0:9999"
        );
        assert_eq!(
            resolve_ollama_url(Some("http://h:1/"), Some("x:2")),
            "http://h:1"
        );
        assert_eq!(resolve_ollama_url(None, Some("")), "http://127.0.0.1:11434");
    }

    #[test]
    fn status_classes() {
        for s in [408, 429, 500, 502, 503, 529] {
            assert!(classify_status(s, None, "x".into()).is_retryable(), "{s}");
        }
        for s in [400, 401, 403, 404, 422] {
            assert!(!classify_status(s, None, "x".into()).is_retryable(), "{s}");
        }
        assert!(matches!(
            classify_status(
                400,
                None,
                "request exceeds the available context size".into()
            ),
            ModelError::ContextExceeded(_)
        ));
    }
}
