//! `--model oracle`: a scripted agent that applies a task's gold patch through the agent's own
//! tools (one `str_replace` per hunk, then `submit`). Resolving 100% with it checks the
//! harness end to end: tools, diff, verification, receipts.

use serde_json::{Value, json};

use crate::verify::apply::{self, ApplyError};

/// The oracle's script for `patch`, in the scripted model's format
/// (`{"turns": [{"content", "tool_calls": [{"name", "arguments"}]}]}`).
pub fn script(patch: &str) -> Result<Value, ApplyError> {
    let mut calls = Vec::new();
    for fp in apply::parse(patch)? {
        for h in &fp.hunks {
            calls.push(json!({
                "name": "str_replace",
                "arguments": {
                    "path": fp.path,
                    "old_str": h.old.join("\n"),
                    "new_str": h.new.join("\n"),
                }
            }));
        }
    }
    Ok(json!({
        "turns": [
            {"content": "Applying the reference fix.", "tool_calls": calls},
            {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {}}]}
        ]
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::generate::file_diff;

    #[test]
    fn one_replace_per_hunk_then_submit() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n";
        let new = "a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\nk\n";
        let s = script(&file_diff("p/m.py", old, new)).unwrap();
        let calls = s["turns"][0]["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0]["name"], "str_replace");
        assert_eq!(calls[0]["arguments"]["path"], "p/m.py");
        assert_eq!(calls[0]["arguments"]["old_str"], "a\nb\nc\nd\ne");
        assert_eq!(calls[0]["arguments"]["new_str"], "a\nB\nc\nd\ne");
        assert_eq!(s["turns"][1]["tool_calls"][0]["name"], "submit");
        // applying the replacements in order yields the fixed text
        let mut text = old.to_string();
        for c in calls {
            let (o, n) = (
                c["arguments"]["old_str"].as_str().unwrap(),
                c["arguments"]["new_str"].as_str().unwrap(),
            );
            assert_eq!(text.matches(o).count(), 1);
            text = text.replacen(o, n, 1);
        }
        assert_eq!(text, new);
        assert!(script("not a diff").is_err());
    }
}
