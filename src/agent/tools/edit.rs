//! The `str_replace` edit: the pure matching rules (exactly one occurrence) and the write.

use super::{Observation, ToolConfig, ToolResult, number_lines, read_file};
use crate::agent::context::{self, Focus};
use crate::sandbox::{ExecRequest, Sandbox, SandboxError};

pub(super) async fn str_replace(
    sandbox: &dyn Sandbox,
    cfg: &ToolConfig,
    path: &str,
    old: &str,
    new: &str,
) -> Result<ToolResult, SandboxError> {
    if old.is_empty() {
        return Ok(Err(Observation::text(
            "old_str is empty: copy the exact lines to replace from view_file output (without line numbers).",
        )));
    }
    // Small models "fix" the failing test; answer with where the code is instead.
    if cfg.focus.is_read_only(path) {
        return Ok(Err(Observation::text(read_only_answer(&cfg.focus, path))));
    }
    let text = match read_file(sandbox, path).await? {
        Ok(t) => t,
        Err(o) => return Ok(Err(o)),
    };
    let edited = match plan_replace(&text, old, new) {
        Ok(e) => e,
        Err(msg) if old == new => {
            let tests = if context::is_test_path(path) {
                " Tests are read-only and define the correct behaviour: change the code they run."
            } else {
                ""
            };
            return Ok(Err(Observation::text(format!(
                "{path}: {msg}{tests}\n{}",
                cfg.focus.where_to_look(None)
            ))));
        }
        Err(msg) => return Ok(Err(Observation::text(format!("{path}: {msg}")))),
    };
    let r = write_file(sandbox, path, edited.content.into_bytes()).await?;
    if !r.status.success() {
        let why = r.output.render();
        let mut msg = format!("Cannot write `{path}`: {}", why.trim());
        if why.contains("Read-only file system") {
            msg = format!("{msg}\n{}", read_only_answer(&cfg.focus, path));
        }
        return Ok(Err(Observation::text(msg)));
    }
    Ok(Ok(Observation::text(format!(
        "Edited {path}. Lines {}-{} now read:\n{}",
        edited.first_line, edited.last_line, edited.snippet
    ))))
}

/// Write `bytes` to the workspace file `path` (one exec). The path is an argument, never part
/// of the script: no quoting bugs, no injection. The caller reads the status.
pub async fn write_file(
    sandbox: &dyn Sandbox,
    path: &str,
    bytes: Vec<u8>,
) -> Result<crate::sandbox::ExecResult, SandboxError> {
    sandbox
        .exec(
            ExecRequest::argv(["bash", "-c", "cat > \"$1\"", "patchloop-write", path]).stdin(bytes),
        )
        .await
}

/// The answer to an edit of a read-only test file: nothing changed, and where to look. Pure.
pub fn read_only_answer(focus: &Focus, path: &str) -> String {
    format!(
        "Not edited: `{path}` is a test file in a read-only directory (Read-only file system). \
         The tests define the correct behaviour; the bug is in the code they run.\n{}",
        focus.where_to_look(None)
    )
}

/// A planned single replacement. Pure, so the matching rules are unit-tested.
#[derive(Debug, PartialEq)]
pub struct Replacement {
    pub content: String,
    pub first_line: usize,
    pub last_line: usize,
    /// The edited region with a little context, numbered.
    pub snippet: String,
}

/// Replace exactly one occurrence of `old`; otherwise explain, showing the most similar region
/// (zero matches) or every match's line (several), numbered so the model can copy it.
pub fn plan_replace(text: &str, old: &str, new: &str) -> Result<Replacement, String> {
    if old == new {
        return Err("old_str and new_str are identical: nothing would change.".into());
    }
    let matches: Vec<usize> = text.match_indices(old).map(|(i, _)| i).collect();
    let line_of = |byte: usize| text[..byte].matches('\n').count() + 1;
    match matches.len() {
        1 => {
            let at = matches[0];
            let content = format!("{}{}{}", &text[..at], new, &text[at + old.len()..]);
            let first = line_of(at);
            let last = first + new.matches('\n').count();
            let snippet = number_lines(&content, first.saturating_sub(2).max(1), last + 2);
            Ok(Replacement {
                content,
                first_line: first,
                last_line: last,
                snippet,
            })
        }
        0 => {
            let (s, e) = most_similar_region(text, old);
            let mut msg = "old_str was not found (it must match exactly, including indentation). "
                .to_string();
            if e >= s && s > 0 {
                msg.push_str(&format!(
                    "The most similar region is lines {s}-{e}:\n{}Copy the exact text (without the line numbers).",
                    number_lines(text, s, e)
                ));
            }
            Err(msg)
        }
        n => {
            let lines: Vec<String> = matches.iter().map(|&i| line_of(i).to_string()).collect();
            let mut msg = format!(
                "old_str occurs {n} times (at lines {}); include more surrounding lines so it matches exactly once.\n",
                lines.join(", ")
            );
            let span = old.matches('\n').count();
            for &i in matches.iter().take(3) {
                let l = line_of(i);
                msg.push_str(&number_lines(
                    text,
                    l.saturating_sub(1).max(1),
                    l + span + 1,
                ));
                msg.push_str("---\n");
            }
            Err(msg)
        }
    }
}

/// The 1-based line range of `text` most similar to `needle` (same number of lines). Pure.
pub fn most_similar_region(text: &str, needle: &str) -> (usize, usize) {
    const MAX_LINES: usize = 5000;
    let lines: Vec<&str> = text.lines().take(MAX_LINES).collect();
    let want: Vec<&str> = needle.lines().collect();
    let n = want.len().max(1);
    if lines.is_empty() {
        return (0, 0);
    }
    let line_score = |a: &str, b: &str| -> f32 {
        let (a, b) = (a.trim(), b.trim());
        if a == b {
            return 1.0;
        }
        similar::TextDiff::from_chars(a, b).ratio()
    };
    let mut best = (0usize, -1.0f32);
    for start in 0..lines.len().saturating_sub(n - 1).max(1) {
        let score: f32 = want
            .iter()
            .enumerate()
            .map(|(k, w)| {
                lines
                    .get(start + k)
                    .map(|l| line_score(l, w))
                    .unwrap_or(0.0)
            })
            .sum();
        if score > best.1 {
            best = (start, score);
        }
    }
    let s = best.0 + 1;
    (s, (s + n - 1).min(lines.len()))
}
