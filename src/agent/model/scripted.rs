//! `scripted:FILE`: a deterministic test double that replays turns from a YAML file. Used by
//! tests and `patchloop demo`; reports always say the model was scripted.
//!
//! ```yaml
//! turns:
//!   - content: "Let me look at the code."
//!     tool_calls:
//!       - name: view_file
//!         arguments: {path: stats/median.py}
//!   - content: "```json\n{\"name\": \"run_tests\", \"arguments\": {}}\n```"   # a call written as text
//!     repeat: 3            # optional: send this turn 3 times
//! candidates:              # optional: replies to the candidate strategy's sampled requests
//!   - "```python\ndef median(xs): ...\n```"
//! infills:                 # optional: answers to fill-in-the-middle requests, in order
//!   - "    return (a + b) / 2"
//! ```
//!
//! Sampled requests (the candidate strategy's, [`Request::sample`]) are answered from
//! `candidates` in order, and with an empty reply once those run out, so a script written for
//! the loop plays the same under the default stages (candidates, shapes, sampled, then the loop).

use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::Value;

use super::{
    AssistantMessage, Filled, FinishReason, Infill, Model, ModelError, Request, Response, ToolCall,
    Usage, textcalls,
};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    #[serde(default)]
    pub turns: Vec<Turn>,
    #[serde(default)]
    pub candidates: Vec<String>,
    #[serde(default)]
    pub infills: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    pub tool_calls: Vec<ScriptedCall>,
    #[serde(default)]
    pub usage: Option<Usage>,
    #[serde(default = "one")]
    pub repeat: usize,
}

fn one() -> usize {
    1
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    pub name: String,
    /// An object, or a string (possibly broken JSON, to exercise malformed calls).
    #[serde(default)]
    pub arguments: Value,
}

pub struct Scripted {
    source: String,
    turns: Vec<Turn>,
    next: Mutex<usize>,
    candidates: Vec<String>,
    next_candidate: Mutex<usize>,
    infills: Vec<String>,
    next_infill: Mutex<usize>,
}

impl Scripted {
    pub fn from_file(path: &Path) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            ModelError::Config(format!(
                "cannot read the scripted model file {}: {e}",
                path.display()
            ))
        })?;
        Self::from_yaml(&text, &path.display().to_string())
    }

    pub fn from_yaml(text: &str, source: &str) -> Result<Self, ModelError> {
        let script: Script = serde_yaml::from_str(text).map_err(|e| {
            ModelError::Config(format!(
                "{source} is not a valid script (expected `turns: [{{content, tool_calls: [{{name, arguments}}]}}]`): {e}"
            ))
        })?;
        let turns = script
            .turns
            .into_iter()
            .flat_map(|t| std::iter::repeat_n(t.clone(), t.repeat.max(1)))
            .collect();
        Ok(Scripted {
            source: source.to_string(),
            turns,
            next: Mutex::new(0),
            candidates: script.candidates,
            next_candidate: Mutex::new(0),
            infills: script.infills,
            next_infill: Mutex::new(0),
        })
    }
}

/// The counter's value, advanced by one (each list is answered in order).
fn take(counter: &Mutex<usize>) -> Result<usize, ModelError> {
    let mut next = counter
        .lock()
        .map_err(|_| ModelError::Config("scripted model state poisoned".into()))?;
    *next += 1;
    Ok(*next - 1)
}

impl Scripted {
    /// The next `candidates` reply (empty once they run out).
    fn candidate(&self, req: &Request<'_>) -> Result<Response, ModelError> {
        let i = take(&self.next_candidate)?;
        let content = self.candidates.get(i).cloned().unwrap_or_default();
        let prompt_chars: usize = req.messages.iter().map(|m| m.char_len()).sum();
        Ok(Response {
            usage: Usage {
                prompt_tokens: (prompt_chars / 4) as u64,
                completion_tokens: (content.len() / 4) as u64,
            },
            message: AssistantMessage {
                content,
                tool_calls: Vec::new(),
                raw: None,
            },
            finish: FinishReason::Stop,
            bytes_sent: 0,
        })
    }
}

#[async_trait]
impl Model for Scripted {
    async fn complete(&self, req: &Request<'_>) -> Result<Response, ModelError> {
        if req.sample.is_some() {
            return self.candidate(req);
        }
        let index = take(&self.next)?;
        let turn = self
            .turns
            .get(index)
            .ok_or_else(|| ModelError::ScriptExhausted(self.source.clone()))?;
        let mut calls: Vec<ToolCall> = turn
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let (arguments, invalid) = textcalls::normalize_arguments(c.arguments.clone());
                ToolCall {
                    id: Some(format!("call_{index}_{i}")),
                    name: c.name.clone(),
                    arguments,
                    invalid_arguments: invalid,
                    from_text: false,
                }
            })
            .collect();
        if calls.is_empty() {
            calls = textcalls::parse(&turn.content);
        }
        // Without scripted usage, estimate ~4 characters per token so token budgets still bite.
        let prompt_chars: usize = req.messages.iter().map(|m| m.char_len()).sum();
        let usage = turn.usage.unwrap_or(Usage {
            prompt_tokens: (prompt_chars / 4) as u64,
            completion_tokens: (turn.content.len() / 4 + 8 * calls.len()) as u64,
        });
        let finish = if calls.iter().any(|c| !c.from_text) {
            FinishReason::ToolCalls
        } else {
            FinishReason::Stop
        };
        Ok(Response {
            message: AssistantMessage {
                content: turn.content.clone(),
                tool_calls: calls,
                raw: None,
            },
            usage,
            finish,
            bytes_sent: 0,
        })
    }

    fn supports_infill(&self) -> bool {
        !self.infills.is_empty()
    }

    /// The next `infills` answer (empty once they run out: "nothing to change").
    async fn infill(&self, req: &Infill<'_>) -> Result<Filled, ModelError> {
        let i = take(&self.next_infill)?;
        let text = self.infills.get(i).cloned().unwrap_or_default();
        Ok(Filled {
            usage: Usage {
                prompt_tokens: ((req.prefix.len() + req.suffix.len()) / 4) as u64,
                completion_tokens: (text.len() / 4) as u64,
            },
            text,
            timings: None,
            alternatives: Vec::new(),
        })
    }

    fn spec(&self) -> String {
        format!("scripted:{}", self.source)
    }

    fn describe(&self) -> String {
        format!(
            "scripted:{} (a scripted test double, not a real model: {} turns)",
            self.source,
            self.turns.len()
        )
    }
}
