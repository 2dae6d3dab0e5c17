//! Anthropic Messages API (`POST /v1/messages`) with tools. Tool results go back as
//! `tool_result` blocks in a user message; consecutive user-side messages are merged into one,
//! since the API expects user and assistant turns to alternate.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::retry::{Clock, SystemClock, with_retry};
use super::{
    AssistantMessage, FinishReason, Message, Model, ModelError, ModelOptions, Request, Response,
    ToolCall, ToolChoice, Usage, textcalls,
};

pub const API_VERSION: &str = "2023-06-01";

pub struct Anthropic {
    base_url: String,
    model: String,
    opts: ModelOptions,
    client: reqwest::Client,
    clock: Arc<dyn Clock>,
}

impl Anthropic {
    pub fn new(base_url: &str, model: &str, opts: ModelOptions) -> Result<Self, ModelError> {
        Ok(Anthropic {
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

    /// The exact request body (pure).
    pub fn body(&self, req: &Request<'_>) -> Value {
        let system: Vec<&str> = req
            .messages
            .iter()
            .filter_map(|m| match m {
                Message::System { content } => Some(content.as_str()),
                _ => None,
            })
            .collect();
        let mut body = json!({
            "model": self.model,
            "max_tokens": self.opts.max_output_tokens.unwrap_or(1024),
            "messages": wire_messages(req.messages),
        });
        if !system.is_empty() {
            body["system"] = json!(system.join("\n\n"));
        }
        if !req.tools.is_empty() {
            body["tools"] = req
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
                .collect();
            match self.opts.tool_choice {
                ToolChoice::Auto => body["tool_choice"] = json!({"type": "auto"}),
                ToolChoice::Required => body["tool_choice"] = json!({"type": "any"}),
                ToolChoice::Omit => {}
            }
        }
        // The Messages API has no seed: samples differ by temperature alone.
        if let Some(t) = req.sample.map(|s| s.temperature).or(self.opts.temperature) {
            body["temperature"] = json!(t);
        }
        body
    }

    async fn once(&self, body: &[u8]) -> Result<Value, ModelError> {
        let hint = "check --base-url / ANTHROPIC_BASE_URL and your network";
        let mut rb = self
            .client
            .post(format!("{}/v1/messages", self.base_url))
            .header("content-type", "application/json")
            .header("anthropic-version", API_VERSION)
            .body(body.to_vec());
        if let Some(key) = &self.opts.api_key {
            rb = rb.header("x-api-key", key);
        }
        let super::Reply {
            status,
            retry_after,
            text,
        } = super::send(rb, &self.base_url, hint).await?;
        if status == 404 && text.contains("model") {
            return Err(ModelError::ModelNotFound {
                model: self.model.clone(),
                url: self.base_url.clone(),
                hint: format!("check the model name (server said: {})", text.trim()),
            });
        }
        if status == 401 {
            return Err(ModelError::Rejected {
                status,
                body: format!("{} (set ANTHROPIC_API_KEY)", text.trim()),
            });
        }
        if !(200..300).contains(&status) {
            return Err(super::classify_status(status, retry_after, text));
        }
        serde_json::from_str(&text).map_err(|e| ModelError::Transient {
            status: None,
            retry_after: None,
            message: format!("unreadable response body ({e})"),
        })
    }
}

/// History → Messages API turns (system messages go to the top-level `system`).
pub fn wire_messages(messages: &[Message]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let push_user_block = |out: &mut Vec<Value>, block: Value| {
        if let Some(last) = out.last_mut()
            && last["role"] == "user"
            && let Some(blocks) = last["content"].as_array_mut()
        {
            blocks.push(block);
            return;
        }
        out.push(json!({"role": "user", "content": [block]}));
    };
    for m in messages {
        match m {
            Message::System { .. } => {}
            Message::User { content } => {
                push_user_block(&mut out, json!({"type": "text", "text": content}))
            }
            Message::Tool {
                call_id: Some(id),
                content,
                structured: true,
                ..
            } => push_user_block(
                &mut out,
                json!({"type": "tool_result", "tool_use_id": id, "content": content}),
            ),
            Message::Tool { name, content, .. } => push_user_block(
                &mut out,
                json!({"type": "text", "text": super::text_tool_result(name, content)}),
            ),
            Message::Assistant(a) => out.push(a.raw.clone().unwrap_or_else(|| {
                let mut blocks = Vec::new();
                if !a.content.is_empty() {
                    blocks.push(json!({"type": "text", "text": a.content}));
                }
                for c in a.tool_calls.iter().filter(|c| !c.from_text) {
                    blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}));
                }
                json!({"role": "assistant", "content": blocks})
            })),
        }
    }
    out
}

/// Parse one Messages API response (pure).
pub fn parse_response(v: &Value) -> (AssistantMessage, Usage, FinishReason) {
    let blocks = v["content"].as_array().cloned().unwrap_or_default();
    let mut content = String::new();
    let mut calls = Vec::new();
    for b in &blocks {
        match b["type"].as_str() {
            Some("text") => content.push_str(b["text"].as_str().unwrap_or_default()),
            Some("tool_use") => {
                let (arguments, invalid) = textcalls::normalize_arguments(b["input"].clone());
                calls.push(ToolCall {
                    id: b["id"].as_str().map(str::to_string),
                    name: b["name"].as_str().unwrap_or_default().to_string(),
                    arguments,
                    invalid_arguments: invalid,
                    from_text: false,
                });
            }
            _ => {}
        }
    }
    if calls.is_empty() {
        calls = textcalls::parse(&content);
    }
    let finish = match v["stop_reason"].as_str() {
        Some("tool_use") => FinishReason::ToolCalls,
        Some("max_tokens") => FinishReason::Length,
        Some("refusal") => FinishReason::Refusal,
        Some("end_turn") | Some("stop_sequence") | None => FinishReason::Stop,
        Some(other) => FinishReason::Other(other.to_string()),
    };
    let usage = Usage {
        prompt_tokens: v["usage"]["input_tokens"].as_u64().unwrap_or(0)
            + v["usage"]["cache_read_input_tokens"].as_u64().unwrap_or(0)
            + v["usage"]["cache_creation_input_tokens"]
                .as_u64()
                .unwrap_or(0),
        completion_tokens: v["usage"]["output_tokens"].as_u64().unwrap_or(0),
    };
    let raw = json!({"role": "assistant", "content": blocks});
    (
        AssistantMessage {
            content,
            tool_calls: calls,
            raw: Some(raw),
        },
        usage,
        finish,
    )
}

#[async_trait]
impl Model for Anthropic {
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

    fn spec(&self) -> String {
        format!("anthropic:{}", self.model)
    }

    fn describe(&self) -> String {
        format!("anthropic:{} at {}", self.model, self.base_url)
    }
}
