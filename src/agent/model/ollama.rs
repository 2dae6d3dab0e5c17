//! Ollama's native `/api/chat` with `tools`, `think`, `options.num_ctx` and `keep_alive`.
//! Non-streaming (`"stream": false`): one JSON object per step.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::retry::{Clock, SystemClock, with_retry};
use super::{
    AssistantMessage, Filled, FinishReason, Infill, Message, Model, ModelError, ModelOptions,
    Request, Response, Usage, textcalls,
};

pub struct Ollama {
    base_url: String,
    model: String,
    opts: ModelOptions,
    client: reqwest::Client,
    clock: Arc<dyn Clock>,
}

impl Ollama {
    pub fn new(base_url: &str, model: &str, opts: ModelOptions) -> Result<Self, ModelError> {
        Ok(Ollama {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            client: super::http_client(opts.request_timeout)?,
            opts,
            clock: Arc::new(SystemClock),
        })
    }

    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    fn unreachable_hint(&self) -> String {
        format!(
            "start one with `ollama serve`, then `ollama pull {}`; or point --ollama-url / OLLAMA_HOST at a running server",
            self.model
        )
    }

    /// The exact request body (pure).
    pub fn body(&self, req: &Request<'_>) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": wire_messages(req.messages),
            "stream": false,
        });
        if !req.tools.is_empty() {
            body["tools"] = super::function_tools(req.tools);
        }
        if let Some(think) = self.opts.think {
            body["think"] = json!(think);
        }
        if let Some(k) = &self.opts.keep_alive {
            body["keep_alive"] = json!(k);
        }
        let mut options = serde_json::Map::new();
        if let Some(n) = self.opts.num_ctx {
            options.insert("num_ctx".into(), json!(n));
        }
        let temperature = req.sample.map(|s| s.temperature).or(self.opts.temperature);
        let seed = req.sample.map(|s| s.seed).or(self.opts.seed);
        if let Some(t) = temperature {
            options.insert("temperature".into(), json!(t));
        }
        if let Some(s) = seed {
            options.insert("seed".into(), json!(s));
        }
        if let Some(m) = self.opts.max_output_tokens {
            options.insert("num_predict".into(), json!(m));
        }
        if !options.is_empty() {
            body["options"] = Value::Object(options);
        }
        body
    }

    /// The exact `/api/generate` body of a fill-in-the-middle request: Ollama builds the
    /// prompt from `suffix` with the model's own template (pure).
    pub fn infill_body(&self, req: &Infill<'_>) -> Value {
        let mut options = serde_json::Map::new();
        options.insert("num_predict".into(), json!(req.max_tokens));
        if !req.stop.is_empty() {
            options.insert("stop".into(), json!(req.stop));
        }
        if let Some(n) = self.opts.num_ctx {
            options.insert("num_ctx".into(), json!(n));
        }
        if let Some(t) = req.sample.map(|s| s.temperature).or(self.opts.temperature) {
            options.insert("temperature".into(), json!(t));
        }
        if let Some(x) = req.sample.map(|s| s.seed).or(self.opts.seed) {
            options.insert("seed".into(), json!(x));
        }
        let mut body = json!({
            "model": self.model,
            "prompt": req.prefix,
            "suffix": req.suffix,
            "stream": false,
            "options": Value::Object(options),
        });
        if let Some(k) = &self.opts.keep_alive {
            body["keep_alive"] = json!(k);
        }
        body
    }

    async fn once(&self, body: &[u8]) -> Result<Value, ModelError> {
        self.post("/api/chat", body).await
    }

    async fn post(&self, path: &str, body: &[u8]) -> Result<Value, ModelError> {
        let rb = self
            .client
            .post(format!("{}{path}", self.base_url))
            .header("content-type", "application/json")
            .body(body.to_vec());
        let super::Reply {
            status,
            retry_after,
            text,
        } = super::send(rb, &self.base_url, &self.unreachable_hint()).await?;
        if status == 404 {
            return Err(ModelError::ModelNotFound {
                model: self.model.clone(),
                url: self.base_url.clone(),
                hint: format!(
                    "pull it with `ollama pull {}` on that server (Ollama said: {})",
                    self.model,
                    error_text(&text)
                ),
            });
        }
        if !(200..300).contains(&status) {
            return Err(super::classify_status(
                status,
                retry_after,
                error_text(&text),
            ));
        }
        let v: Value = serde_json::from_str(&text).map_err(|e| ModelError::Transient {
            status: None,
            retry_after: None,
            message: format!("unreadable response body ({e})"),
        })?;
        // Ollama can report an error inside a 200 body.
        if let Some(err) = v.get("error").and_then(Value::as_str) {
            return Err(ModelError::Transient {
                status: Some(status),
                retry_after: None,
                message: err.to_string(),
            });
        }
        Ok(v)
    }
}

/// Ollama error bodies are `{"error": "..."}`.
fn error_text(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_string))
        .unwrap_or_else(|| body.trim().chars().take(300).collect())
}

/// History → Ollama messages. Tool results carry `tool_name`; assistant messages are replayed raw.
pub fn wire_messages(messages: &[Message]) -> Vec<Value> {
    messages
        .iter()
        .map(|m| match m {
            Message::System { content } => json!({"role": "system", "content": content}),
            Message::User { content } => json!({"role": "user", "content": content}),
            Message::Assistant(a) => a.raw.clone().unwrap_or_else(|| {
                let calls: Vec<Value> = a
                    .tool_calls
                    .iter()
                    .filter(|c| !c.from_text)
                    .map(|c| json!({"function": {"name": c.name, "arguments": c.arguments}}))
                    .collect();
                let mut v = json!({"role": "assistant", "content": a.content});
                if !calls.is_empty() {
                    v["tool_calls"] = Value::Array(calls);
                }
                v
            }),
            Message::Tool {
                name,
                content,
                structured: true,
                ..
            } => json!({"role": "tool", "content": content, "tool_name": name}),
            Message::Tool { name, content, .. } => {
                json!({"role": "user", "content": super::text_tool_result(name, content)})
            }
        })
        .collect()
}

/// Parse one `/api/chat` response (pure).
pub fn parse_response(v: &Value) -> (AssistantMessage, Usage, FinishReason) {
    let msg = v.get("message").cloned().unwrap_or(Value::Null);
    let content = msg
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let calls = textcalls::calls_from_message(&msg, &content);
    let finish = match v.get("done_reason").and_then(Value::as_str) {
        Some("length") => FinishReason::Length,
        _ if !calls.is_empty() && !calls[0].from_text => FinishReason::ToolCalls,
        Some("stop") | None => FinishReason::Stop,
        Some(other) => FinishReason::Other(other.to_string()),
    };
    let usage = Usage {
        prompt_tokens: v
            .get("prompt_eval_count")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        completion_tokens: v.get("eval_count").and_then(Value::as_u64).unwrap_or(0),
    };
    (
        AssistantMessage {
            content,
            tool_calls: calls,
            raw: Some(msg),
        },
        usage,
        finish,
    )
}

#[async_trait]
impl Model for Ollama {
    async fn complete(&self, req: &Request<'_>) -> Result<Response, ModelError> {
        let body = super::encode(&self.body(req))?;
        let bytes_sent = body.len();
        let v = with_retry(&self.opts.retry, self.clock.as_ref(), || self.once(&body)).await?;
        let (message, usage, finish) = parse_response(&v);
        Ok(Response {
            message,
            usage,
            finish,
            bytes_sent,
        })
    }

    fn on_this_machine(&self) -> bool {
        super::is_loopback_url(&self.base_url)
    }

    fn supports_infill(&self) -> bool {
        super::fim_tokens(&self.model).is_some()
    }

    async fn infill(&self, req: &Infill<'_>) -> Result<Filled, ModelError> {
        // Ollama's template ends the prompt at the gap: there is no place for a known start
        // of it. Not asked for: this adapter reports no alternatives to branch at.
        if !req.middle.is_empty() {
            return Err(ModelError::Unsupported(format!(
                "ollama:{}: a fill that continues a given start",
                self.model
            )));
        }
        let body = super::encode(&self.infill_body(req))?;
        let v = with_retry(&self.opts.retry, self.clock.as_ref(), || {
            self.post("/api/generate", &body)
        })
        .await?;
        let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
        Ok(Filled {
            text: v
                .get("response")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            usage: Usage {
                prompt_tokens: n("prompt_eval_count"),
                completion_tokens: n("eval_count"),
            },
            // Ollama reports durations in nanoseconds; its prompt cache is not counted.
            timings: v.get("eval_duration").map(|_| super::FillTimings {
                prompt_tokens: n("prompt_eval_count"),
                cached_tokens: 0,
                prompt_ms: n("prompt_eval_duration") as f64 / 1e6,
                generated_tokens: n("eval_count"),
                generation_ms: n("eval_duration") as f64 / 1e6,
            }),
            alternatives: Vec::new(),
        })
    }

    fn spec(&self) -> String {
        format!("ollama:{}", self.model)
    }

    fn describe(&self) -> String {
        format!("ollama:{} at {}", self.model, self.base_url)
    }
}
