//! OpenAI-compatible `/v1/chat/completions` with `tools` (OpenAI, Ollama's `/v1`, llama.cpp
//! server, vLLM, LM Studio). Non-streaming: one JSON response per step.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::retry::{Clock, SystemClock, with_retry};
use super::{
    AssistantMessage, Filled, FinishReason, Infill, Message, Model, ModelError, ModelOptions,
    Request, Response, ToolChoice, Usage, textcalls,
};

pub struct OpenAi {
    base_url: String,
    model: String,
    opts: ModelOptions,
    client: reqwest::Client,
    clock: Arc<dyn Clock>,
}

impl OpenAi {
    pub fn new(base_url: &str, model: &str, opts: ModelOptions) -> Result<Self, ModelError> {
        Ok(OpenAi {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            client: super::http_client(opts.request_timeout)?,
            opts,
            clock: Arc::new(SystemClock),
        })
    }

    /// Replace the clock (tests: no real sleeping between retries).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }

    fn unreachable_hint(&self) -> String {
        format!(
            "start an OpenAI-compatible server there (`scripts/local-model`, llama.cpp's `llama-server`, or `ollama serve` then `ollama pull {}` and --base-url http://127.0.0.1:11434/v1), or point --base-url / OPENAI_BASE_URL at a running one",
            self.model
        )
    }

    /// The exact request body (pure; tests assert on it through the mock server too).
    pub fn body(&self, req: &Request<'_>) -> Value {
        let mut body = json!({
            "model": self.model,
            "messages": wire_messages(req.messages),
            "stream": false,
        });
        if !req.tools.is_empty() {
            body["tools"] = super::function_tools(req.tools);
            match self.opts.tool_choice {
                ToolChoice::Auto => body["tool_choice"] = json!("auto"),
                ToolChoice::Required => body["tool_choice"] = json!("required"),
                ToolChoice::Omit => {}
            }
        }
        let temperature = req.sample.map(|s| s.temperature).or(self.opts.temperature);
        let seed = req.sample.map(|s| s.seed).or(self.opts.seed);
        if let Some(t) = temperature {
            body["temperature"] = json!(t);
        }
        if let Some(s) = seed {
            body["seed"] = json!(s);
        }
        if let Some(m) = self.opts.max_output_tokens {
            body["max_tokens"] = json!(m);
        }
        body
    }

    /// The exact `/completions` body of a fill-in-the-middle request, or why there is none:
    /// the prompt is raw text with the model family's special tokens (llama.cpp's server,
    /// vLLM and LM Studio pass them through). Pure.
    pub fn infill_body(&self, req: &Infill<'_>) -> Result<Value, ModelError> {
        let Some((p, s, m)) = super::fim_tokens(&self.model) else {
            return Err(ModelError::Unsupported(format!(
                "openai:{}: no known fill-in-the-middle tokens for this model name",
                self.model
            )));
        };
        let mut body = json!({
            "model": self.model,
            "prompt": format!("{p}{}{s}{}{m}{}", req.prefix, req.suffix, req.middle),
            "max_tokens": req.max_tokens,
            "stream": false,
        });
        if !req.stop.is_empty() {
            body["stop"] = json!(req.stop);
        }
        if let Some(x) = req.sample.map(|x| x.temperature).or(self.opts.temperature) {
            body["temperature"] = json!(x);
        }
        if let Some(x) = req.sample.map(|x| x.seed).or(self.opts.seed) {
            body["seed"] = json!(x);
        }
        if req.alternatives > 0 {
            body["logprobs"] = json!(req.alternatives);
        }
        Ok(body)
    }

    async fn once(&self, body: &[u8]) -> Result<Value, ModelError> {
        self.post(&self.url(), body).await
    }

    /// POST one JSON body to `url`: the model-not-found hint, status classification and a
    /// body that must parse, shared by chat and completions.
    async fn post(&self, url: &str, body: &[u8]) -> Result<Value, ModelError> {
        let mut rb = self
            .client
            .post(url)
            .header("content-type", "application/json")
            .body(body.to_vec());
        if let Some(key) = &self.opts.api_key {
            rb = rb.bearer_auth(key);
        }
        let super::Reply {
            status,
            retry_after,
            text,
        } = super::send(rb, &self.base_url, &self.unreachable_hint()).await?;
        if status == 404 && text.to_lowercase().contains("model") {
            return Err(ModelError::ModelNotFound {
                model: self.model.clone(),
                url: self.base_url.clone(),
                hint: format!(
                    "the server does not serve `{}` (list what it serves with `curl {}/models`; on Ollama run `ollama pull {}`). Server said: {}",
                    self.model,
                    self.base_url,
                    self.model,
                    text.trim()
                ),
            });
        }
        if !(200..300).contains(&status) {
            return Err(super::classify_status(status, retry_after, text));
        }
        // A body cut mid-stream fails to parse: worth another attempt.
        serde_json::from_str(&text).map_err(|e| ModelError::Transient {
            status: None,
            retry_after: None,
            message: format!("unreadable response body ({e}): {}", clip(&text)),
        })
    }
}

fn clip(s: &str) -> String {
    s.chars().take(300).collect()
}

/// History → OpenAI messages. Assistant messages replay the raw message as received.
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
                    .map(|c| {
                        json!({"id": c.id, "type": "function", "function": {
                            "name": c.name, "arguments": c.arguments.to_string()}})
                    })
                    .collect();
                let mut v = json!({"role": "assistant", "content": a.content});
                if !calls.is_empty() {
                    v["tool_calls"] = Value::Array(calls);
                }
                v
            }),
            Message::Tool {
                call_id: Some(id),
                content,
                structured: true,
                ..
            } => json!({"role": "tool", "tool_call_id": id, "content": content}),
            Message::Tool { name, content, .. } => {
                json!({"role": "user", "content": super::text_tool_result(name, content)})
            }
        })
        .collect()
}

/// Parse one `/completions` answer (pure).
pub fn parse_completion(v: &Value) -> Result<Filled, ModelError> {
    let text = v
        .get("choices")
        .and_then(|c| c.get(0))
        .and_then(|c| c.get("text"))
        .and_then(Value::as_str)
        .ok_or_else(|| ModelError::Transient {
            status: None,
            retry_after: None,
            message: format!(
                "completion has no choices[0].text: {}",
                clip(&v.to_string())
            ),
        })?;
    let usage = v.get("usage").cloned().unwrap_or(Value::Null);
    let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
    // llama.cpp's server adds `timings` (prompt evaluated vs reused from its cache).
    let timings = v.get("timings").map(|t| {
        let u = |k: &str| t.get(k).and_then(Value::as_u64).unwrap_or(0);
        let f = |k: &str| t.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        super::FillTimings {
            prompt_tokens: u("prompt_n"),
            cached_tokens: u("cache_n"),
            prompt_ms: f("prompt_ms"),
            generated_tokens: u("predicted_n"),
            generation_ms: f("predicted_ms"),
        }
    });
    let alternatives = v
        .get("choices")
        .and_then(|c| c.get(0))
        .and_then(|c| c.get("logprobs"))
        .map(alternatives)
        .unwrap_or_default();
    Ok(Filled {
        text: text.to_string(),
        usage: Usage {
            prompt_tokens: n("prompt_tokens"),
            completion_tokens: n("completion_tokens"),
        },
        timings,
        alternatives,
    })
}

/// The runner-up tokens of a completion's `logprobs`, most likely first: llama.cpp's form
/// (`content[]`, each with `top_logprobs[]`) or OpenAI's legacy one (`tokens`,
/// `token_logprobs`, `top_logprobs` as token → logprob maps). Pure; anything else: none.
pub fn alternatives(lp: &Value) -> Vec<super::Alternative> {
    // Per position: the generated token, its logprob, and the other candidates.
    type Step = (String, f64, Vec<(String, f64)>);
    let mut steps: Vec<Step> = Vec::new();
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let f = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64);
    if let Some(content) = lp.get("content").and_then(Value::as_array) {
        for c in content {
            let (Some(tok), Some(l)) = (s(c, "token"), f(c, "logprob")) else {
                return Vec::new();
            };
            let others = c
                .get("top_logprobs")
                .and_then(Value::as_array)
                .map(|tops| {
                    tops.iter()
                        .filter_map(|t| Some((s(t, "token")?, f(t, "logprob")?)))
                        .collect()
                })
                .unwrap_or_default();
            steps.push((tok, l, others));
        }
    } else if let (Some(tokens), Some(lps)) = (
        lp.get("tokens").and_then(Value::as_array),
        lp.get("token_logprobs").and_then(Value::as_array),
    ) {
        let tops = lp.get("top_logprobs").and_then(Value::as_array);
        for (i, (t, l)) in tokens.iter().zip(lps).enumerate() {
            let (Some(tok), Some(l)) = (t.as_str(), l.as_f64()) else {
                return Vec::new();
            };
            let others = tops
                .and_then(|t| t.get(i))
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                        .collect()
                })
                .unwrap_or_default();
            steps.push((tok.to_string(), l, others));
        }
    }
    let mut out = Vec::new();
    let mut before = String::new();
    let mut sum = 0.0;
    for (tok, l, others) in steps {
        for (t, ol) in others {
            if t != tok {
                out.push(super::Alternative {
                    before: before.clone(),
                    token: t,
                    logprob: sum + ol,
                });
            }
        }
        before.push_str(&tok);
        sum += l;
    }
    out.sort_by(|a, b| b.logprob.total_cmp(&a.logprob));
    out
}

/// Parse one chat completion (pure).
pub fn parse_response(v: &Value) -> Result<(AssistantMessage, Usage, FinishReason), ModelError> {
    let choice = v
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or_else(|| ModelError::Transient {
            status: None,
            retry_after: None,
            message: format!("response has no choices: {}", clip(&v.to_string())),
        })?;
    let msg = choice.get("message").cloned().unwrap_or(Value::Null);
    let content = msg
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let calls = textcalls::calls_from_message(&msg, &content);
    let refusal = msg.get("refusal").and_then(Value::as_str).is_some();
    let finish = match choice.get("finish_reason").and_then(Value::as_str) {
        _ if refusal => FinishReason::Refusal,
        Some("stop") | None => FinishReason::Stop,
        Some("tool_calls") | Some("function_call") => FinishReason::ToolCalls,
        Some("length") => FinishReason::Length,
        Some("content_filter") => FinishReason::Refusal,
        Some(other) => FinishReason::Other(other.to_string()),
    };
    let usage = v.get("usage").cloned().unwrap_or(Value::Null);
    let usage = Usage {
        prompt_tokens: usage
            .get("prompt_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        completion_tokens: usage
            .get("completion_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    };
    Ok((
        AssistantMessage {
            content,
            tool_calls: calls,
            raw: Some(msg),
        },
        usage,
        finish,
    ))
}

#[async_trait]
impl Model for OpenAi {
    async fn complete(&self, req: &Request<'_>) -> Result<Response, ModelError> {
        let body = super::encode(&self.body(req))?;
        let bytes_sent = body.len();
        let (message, usage, finish) =
            with_retry(&self.opts.retry, self.clock.as_ref(), || async {
                let v = self.once(&body).await?;
                parse_response(&v)
            })
            .await?;
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
        let body = super::encode(&self.infill_body(req)?)?;
        let url = format!("{}/completions", self.base_url);
        with_retry(&self.opts.retry, self.clock.as_ref(), || async {
            let v = self.post(&url, &body).await?;
            parse_completion(&v)
        })
        .await
    }

    fn spec(&self) -> String {
        format!("openai:{}", self.model)
    }

    fn describe(&self) -> String {
        format!(
            "openai:{} at {} (tool_choice {:?})",
            self.model, self.base_url, self.opts.tool_choice
        )
    }
}
