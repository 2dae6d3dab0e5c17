//! The chat prompt: the failing tests, what they report, the failing test function, the
//! suspects, and the edit format's instructions.

use super::{EditFormat, Problem, Suspect};
use crate::sandbox::output::truncate_text;

pub(super) const SYSTEM: &str = "You are an expert programmer. You fix bugs with small, exact edits and \
                      reply with code only, in the format asked for.";

/// The user message: the failing tests, what they report, the failing test function, the
/// suspects, and the format's instructions (`infill`'s chat fallback is `lines`). Pure.
pub fn prompt(problem: &Problem, suspects: &[Suspect], format: EditFormat) -> String {
    let mut p = String::from("A test fails. Fix the bug in the code, not in the tests.\n\n");
    if !problem.targets.is_empty() {
        let shown: Vec<&str> = problem.targets.iter().take(5).map(String::as_str).collect();
        p.push_str(&format!("Failing tests: {}\n", shown.join(", ")));
    }
    let report = error_lines(&problem.report);
    if !report.trim().is_empty() {
        p.push_str(&format!(
            "What they report:\n```\n{}\n```\n",
            truncate_text(report.trim(), 1500)
        ));
    }
    for t in problem.context.focus.tests.iter().take(1) {
        if let Some(src) = problem.files.get(&t.path) {
            let lines: Vec<&str> = src.lines().collect();
            if t.start >= 1 && t.end <= lines.len() && t.start <= t.end {
                let body = lines[t.start - 1..t.end].join("\n");
                p.push_str(&format!(
                    "\nThe failing test ({}:{}):\n```python\n{}\n```\n",
                    t.path,
                    t.start,
                    truncate_text(&body, 1500)
                ));
            }
        }
    }
    p.push_str("\nThe code the failing test runs (the bug is in one of these functions):\n");
    for s in suspects {
        let body = match format {
            // Numbered as in the file: the reply names lines by these numbers.
            EditFormat::Lines | EditFormat::Infill => s
                .shown
                .lines()
                .zip(&s.shown_lines)
                .map(|(l, n)| format!("{n:>5}  {l}"))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => s.shown.clone(),
        };
        p.push_str(&format!(
            "\n{} (file {}, line {}):\n```python\n{}\n```\n",
            s.label, s.path, s.start, body
        ));
        if matches!(format, EditFormat::Lines | EditFormat::Infill) && !s.hot.is_empty() {
            // Quoted with their text: a small model reads a line it is shown, not a number.
            p.push_str(
                "Most suspicious lines here (the failing tests run them, the passing tests \
                 rarely):\n```\n",
            );
            for n in &s.hot {
                if let Some(i) = s.shown_lines.iter().position(|l| l == n) {
                    let line = s.shown.lines().nth(i).unwrap_or("");
                    p.push_str(&format!("{n:>5}  {line}\n"));
                }
            }
            p.push_str("```\n");
        }
    }
    p.push('\n');
    match format {
        // A one-line diagnosis first: small models that name the bug change the code, where
        // asked for code alone they often copy the function back unchanged.
        EditFormat::Function => p.push_str(
            "First write one line starting with `Bug:` that says what is wrong. Then reply with \
             the one function that has the bug, corrected and complete, in a single ```python \
             code block. Start at its `def` line and keep its name and parameters. At least one \
             line must change; change only what fixes the bug, and leave out the docstring.",
        ),
        // No example code: small models copy an example into the file.
        EditFormat::Lines | EditFormat::Infill => p.push_str(
            "The numbers on the left are line numbers. First write one line starting with \
             `Bug:` that says what is wrong. Then, for each line that must change, write \
             `LINE <number>: <the corrected line>` and nothing else. Keep the line's \
             indentation; write only lines you change.",
        ),
        EditFormat::SearchReplace => {
            let path = suspects
                .first()
                .map(|s| s.path.as_str())
                .unwrap_or("src/ops.py");
            p.push_str(&format!(
                "Reply with the fix as a SEARCH/REPLACE block: the file path, the exact current \
                 lines to change, then the corrected lines. For example, to change \
                 `return a - b` into `return a + b` in calc/ops.py:\n```\ncalc/ops.py\n\
                 <<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n\
                 The SEARCH lines must differ from the REPLACE lines. Reply with only the \
                 block(s) for {path}."
            ));
        }
    }
    p
}

/// The lines of a test report worth showing a small model: pytest's `E ` lines and the short
/// summary, else the report's tail. Pure.
pub(super) fn error_lines(report: &str) -> String {
    let picked: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("E ") || l.starts_with("FAILED ") || l.starts_with("ERROR "))
        .take(40)
        .collect();
    if picked.is_empty() {
        let lines: Vec<&str> = report.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    } else {
        picked.join("\n")
    }
}
