//! The model flags shared by every command that talks to a model (`fix`, `eval`).

use std::time::Duration;

use super::{ModelOptions, ToolChoice};

/// Model adapter flags.
#[derive(Debug, Clone, clap::Args)]
pub struct ModelArgs {
    /// Model spec: ollama:MODEL, openai:MODEL, anthropic:MODEL or scripted:FILE.
    #[arg(long)]
    pub model: String,
    /// Base URL of an OpenAI-compatible server (else OPENAI_BASE_URL, else api.openai.com).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Ollama server (else OLLAMA_HOST, else http://127.0.0.1:11434).
    #[arg(long)]
    pub ollama_url: Option<String>,
    /// `tool_choice` for openai: servers: auto, required (small models need it), omit.
    #[arg(long, value_enum, default_value = "auto")]
    pub tool_choice: ToolChoice,
    /// Sampling temperature.
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f64,
    /// The model's context window in tokens (ollama num_ctx; compaction starts at 3/4 of it)
    /// [default: 8192, or the config's budgets.context_tokens].
    #[arg(long)]
    pub context_tokens: Option<u64>,
    /// Ollama `think` flag for reasoning models.
    #[arg(long)]
    pub think: Option<bool>,
    /// Seconds to wait for one model reply (small CPU models are slow).
    #[arg(long, default_value_t = 300)]
    pub request_timeout: u64,
}

impl ModelArgs {
    /// Adapter options; `context_tokens` is the resolved budget (flag > config > default).
    pub fn options(&self, context_tokens: usize) -> ModelOptions {
        ModelOptions {
            base_url: self.base_url.clone(),
            ollama_url: self.ollama_url.clone(),
            tool_choice: self.tool_choice,
            temperature: Some(self.temperature),
            num_ctx: Some(u32::try_from(context_tokens).unwrap_or(u32::MAX)),
            think: self.think,
            request_timeout: Duration::from_secs(self.request_timeout),
            ..ModelOptions::default()
        }
    }
}
