//! Context compaction as a pure function of the history and a token limit.
//!
//! Near the limit the model writes a progress summary; the loop then starts a fresh history:
//! the system prompt, the task, the summary, and as many of the most recent whole turns as fit.
//! A turn is an assistant message with every message after it up to the next assistant message,
//! so a tool call never loses its result.

use crate::agent::model::Message;
use crate::sandbox::output::truncate_text;

const SUMMARY_HEADER: &str = include_str!("prompts/summary_header.md");

/// Rough token estimate: ~4 characters per token plus a per-message overhead.
pub fn estimate_tokens(messages: &[Message]) -> usize {
    messages.iter().map(|m| m.char_len() / 4 + 4).sum()
}

/// Compact when the history passes three quarters of the limit (room for the reply).
pub fn needs_compaction(messages: &[Message], limit_tokens: usize) -> bool {
    estimate_tokens(messages) > limit_tokens.saturating_mul(3) / 4
}

/// The fresh history: leading system/user messages (prompt and task), the summary, then the most
/// recent whole turns that fit in half of `limit_tokens`. Pure.
pub fn compact(messages: &[Message], summary: &str, limit_tokens: usize) -> Vec<Message> {
    let head_len = messages
        .iter()
        .take_while(|m| matches!(m, Message::System { .. } | Message::User { .. }))
        .count()
        .min(2);
    let mut out: Vec<Message> = messages[..head_len].to_vec();
    let budget = limit_tokens / 2;
    // The summary must fit whatever happens: clip it to a share of the budget.
    let summary_cap = (budget.saturating_sub(estimate_tokens(&out)) * 4).max(256);
    out.push(Message::user(format!(
        "{}{}",
        SUMMARY_HEADER,
        truncate_text(summary, summary_cap)
    )));

    let rest = &messages[head_len..];
    let starts: Vec<usize> = rest
        .iter()
        .enumerate()
        .filter(|(_, m)| matches!(m, Message::Assistant(_)))
        .map(|(i, _)| i)
        .collect();
    // Walk back over whole turns while they fit.
    let mut keep_from = rest.len();
    for &s in starts.iter().rev() {
        let candidate = &rest[s..];
        if estimate_tokens(&out) + estimate_tokens(candidate) > budget {
            break;
        }
        keep_from = s;
    }
    out.extend_from_slice(&rest[keep_from..]);
    out
}

/// A summary without the model (when asking it fails, e.g. the context is already exceeded):
/// the actions taken so far, one per line. Pure.
pub fn mechanical_summary(messages: &[Message]) -> String {
    let mut lines = vec!["Actions so far (the model could not summarise):".to_string()];
    for m in messages {
        if let Message::Assistant(a) = m {
            for c in &a.tool_calls {
                let args = c.arguments.to_string();
                let args: String = args.chars().take(160).collect();
                lines.push(format!("- {} {}", c.name, args));
            }
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::agent::model::{AssistantMessage, ToolCall};

    fn turn(i: usize, obs_len: usize) -> Vec<Message> {
        let call = ToolCall {
            id: Some(format!("c{i}")),
            name: "bash".into(),
            arguments: json!({"command": format!("echo {i}")}),
            invalid_arguments: None,
            from_text: false,
        };
        vec![
            Message::Assistant(AssistantMessage {
                content: String::new(),
                tool_calls: vec![call.clone()],
                raw: None,
            }),
            Message::tool_result(&call, "x".repeat(obs_len)),
        ]
    }

    fn history(turns: usize, obs_len: usize) -> Vec<Message> {
        let mut h = vec![Message::system("sys"), Message::user("task")];
        for i in 0..turns {
            h.extend(turn(i, obs_len));
        }
        h
    }

    /// Every structured tool call has its result, and every result follows its call.
    fn assert_no_orphans(h: &[Message]) {
        let mut open: Vec<String> = Vec::new();
        for m in h {
            match m {
                Message::Assistant(a) => {
                    assert!(open.is_empty(), "calls without results: {open:?}");
                    open = a.tool_calls.iter().filter_map(|c| c.id.clone()).collect();
                }
                Message::Tool {
                    call_id: Some(id), ..
                } => {
                    assert!(open.contains(id), "result {id} without its call");
                    open.retain(|o| o != id);
                }
                _ => {}
            }
        }
    }

    #[test]
    fn keeps_prompt_task_summary_and_recent_whole_turns() {
        let h = history(10, 400); // ~100 tokens per turn
        for limit in [50, 200, 400, 1000, 5000] {
            let c = compact(&h, "did stuff", limit);
            assert_eq!(c[0], Message::system("sys"));
            assert_eq!(c[1], Message::user("task"));
            assert!(matches!(&c[2], Message::User { content } if content.contains("did stuff")));
            assert_no_orphans(&c);
            // The kept turns are the most recent ones, in order.
            assert_eq!(c[3..], h[h.len() - (c.len() - 3)..], "limit {limit}");
            if limit <= 400 {
                assert!(
                    estimate_tokens(&c) <= limit / 2 + 64,
                    "limit {limit}: {}",
                    estimate_tokens(&c)
                );
            }
        }
        assert_eq!(compact(&h, "s", 50).len(), 3, "tiny limit keeps no turn");
        assert!(
            compact(&h, "s", 5000).len() == h.len() + 1,
            "a large limit keeps everything"
        );
    }

    #[test]
    fn a_huge_summary_is_clipped_with_a_marker() {
        let c = compact(&history(2, 10), &"y".repeat(100_000), 400);
        assert!(estimate_tokens(&c) < 1000);
        assert!(matches!(&c[2], Message::User { content } if content.contains("truncated")));
    }

    #[test]
    fn threshold_and_mechanical_summary() {
        let h = history(4, 400);
        assert!(needs_compaction(&h, 400));
        assert!(!needs_compaction(&h, 10_000));
        let s = mechanical_summary(&h);
        assert!(s.contains("- bash {\"command\":\"echo 3\"}"), "{s}");
    }
}
