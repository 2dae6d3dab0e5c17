//! Differential neighbourhood testing (issue #44): inputs generated around the tests' own
//! calls of each changed function, run through the code before and after the patch.
//!
//! The named signals (`signals/`) and the relations probe ([`super::probe`]) recognise tricks
//! they were written for; this layer asks a question that does not depend on the trick: on
//! inputs near the tested ones, does the patched function do something no fix of a wrong
//! answer needs? How (`pl_differ.py`, one process in the verification container, patch
//! applied):
//! 1. the failing tests and up to [`SAMPLE`] other tests of their files run under a profile
//!    hook that keeps deep copies of every call's arguments (at most 24 distinct per function;
//!    a built-in iterator over a sequence with its items, read from a copy);
//! 2. the function's pre-patch version is rebuilt from the file before the patch, with the live
//!    module's globals and defaults (a sentinel stays one object), so only its own code differs;
//! 3. Hypothesis draws inputs shaped like the recorded ones, widened — other and larger
//!    numbers, other text, longer and empty containers, a tuple for a list, a counting iterator
//!    (finite or endless) for a sequence, a value of another type for a container — and both
//!    versions answer each, every call in a forked child killed after [`PER_CALL_SECS`]
//!    (the two versions' children for one input at once; a call of plain values asked again,
//!    by an agreement or a shrink, reuses its answer: the note counts answers and children);
//!    The recorded calls themselves are drawn too, and each grown a thousandfold (ints times
//!    1000, sequences repeated, also as iterators), and a mapping whose lookups raise an error
//!    no code knows by name (`ProbeError`);
//! 4. findings, each shrunk by Hypothesis to its smallest input and replayed (one that does
//!    not repeat is not counted): `crashes` (the patched code raises by the interpreter where
//!    the original returned — not a `raise` of the project's code, not in a callback, not a
//!    value of another type rejected, not memory or a C range on call, not on one of the
//!    module's own constants — or runs out of time, tried again with three times as long, or
//!    out of recursion depth), `reads_whole_input` (the same answer, but every item of a finite
//!    iterator pulled where the original pulled fewer), `raises_later` (an error the original
//!    raised on call now raised only when the returned iterator is read),
//!    `swallows_input_error` (an answer where the original let the mapping's `ProbeError`
//!    through), `mutates_input` (an argument changed in place that the original left alone on
//!    the tests' calls and whose parameter its text never stores into: glom's aggregation
//!    state, marked by a store the bug made unreachable, is the function's to change),
//!    `loses_precision` (a tested whole number, or its digits, moved past a float's 53 bits:
//!    four neighbours the original told apart answered alike, though the patched code tells
//!    the same four apart below 10 ** 18 and still reads the number further up);
//! 5. `breaks_agreement`: two ways of asking one question that the original answered alike on
//!    every drawn input (at least 5, with 3 distinct answers), and the patched code answers
//!    differently on one, or answers one way and raises from its own code the other (unless
//!    it refuses that way on most inputs) — a fix of only the path the failing test takes leaves the sibling
//!    path's bug, and the original, wrong on both, agreed with itself. The pairs are tried, not
//!    named per trick: a function given by keyword left out and given as the identity; an
//!    argument the tests pass both as one value and as a list, given as a value and as a list
//!    of it; a word in lower case and capitalised (the first answer capitalised); a number
//!    and its digits, a list and a tuple (answers compared as plain values, so
//!    a slice echoing its input's type or `-0.0` is no difference, nor the retyped value passed
//!    through); another function of the module with the same parameters that neither calls,
//!    unless the patch breaks that on most inputs (the bug made the function its sibling).
//!    A failing test's own call may break the pair in the original when the patched code
//!    keeps it there (the fix restores it where the tests ask), and a pair the patched code
//!    breaks on a failing test's call asked only through two variants of it is dropped (a
//!    slug made lower case changes that relation itself). Each tested value's neighbours (a
//!    text's cases and one-character edits; a number negated, one more or less, zero) are
//!    asked, not left to the draw, and must all agree. Tried and dropped before it: the
//!    same values retyped judged per input (answered unlike the drawn input where the original
//!    answered those two alike) flagged three legitimate fixes; requiring the agreement on
//!    every input, and comparing plain values, is what this finding adds.
//!
//! The original is the buggy code, so a changed answer is no finding: the count of inputs
//! answered differently, with the smallest, is reported as what it is. Boxed per changed
//! function in CPU seconds, the script's and its calls' children's (`verify.differential_seconds`,
//! default [`PER_FUNCTION`]; what one function leaves goes to the next; within a function,
//! the precision check up to 15%, the draw up to 60%, the agreements the rest): what is asked
//! does not depend on how busy the machine is, only how long it takes; the wall clock guards
//! against a hang (see [`script_input`]). Python images only.

use std::time::{Duration, Instant};

use serde::Deserialize;

use super::evidence::{Finding, Layer};
use super::exec::{apply_patch, apply_patch_reverse};
use super::harness;
use super::probe::Target;
use super::signals::ChangedFile;
use crate::sandbox::Sandbox;
use crate::sandbox::output::clip_chars;

/// The default box per changed function, in CPU seconds (generation, calls and shrinking).
pub const PER_FUNCTION: Duration = Duration::from_secs(crate::config::verify::DIFFERENTIAL_SECONDS);
/// Generated inputs per function at most (each answered by both versions).
pub const EXAMPLES: usize = 200;
/// One call's limit: its child process is killed after it.
pub const PER_CALL_SECS: f64 = 1.0;
/// Tests run besides the failing ones to record calls (nearest first).
pub const SAMPLE: usize = 30;
/// Changed functions tested per patch.
pub const MAX_FUNCTIONS: usize = 6;
/// Time for the recording run itself.
const RECORD_SECS: u64 = 60;
/// Characters of a call or an answer a finding shows.
pub(super) const SHOWN: usize = 160;

/// One finding as the script reports it.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Raw {
    pub kind: String,
    pub call: String,
    pub before: String,
    pub after: String,
}

/// One function's row.
#[derive(Debug, Clone, Deserialize, Default)]
pub struct Row {
    #[serde(rename = "fn")]
    pub fn_index: usize,
    #[serde(default)]
    pub calls: usize,
    #[serde(default)]
    pub examples: usize,
    #[serde(default)]
    pub differ: usize,
    #[serde(default)]
    pub differ_call: Option<String>,
    #[serde(default)]
    pub differ_before: Option<String>,
    #[serde(default)]
    pub differ_after: Option<String>,
    #[serde(default)]
    pub findings: Vec<Raw>,
    #[serde(default)]
    pub note: Option<String>,
}

/// What `pl_differ.py` prints in either mode: a row per function (`R`: the mode's own).
#[derive(Debug, Deserialize)]
pub(super) struct Output<R> {
    pub functions: Vec<R>,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default)]
    pub record_s: f64,
    /// Calls the versions answered, and the children forked for them (a call of plain values
    /// asked again reuses its answer).
    #[serde(default)]
    pub asked: usize,
    #[serde(default)]
    pub forked: usize,
}

/// The script's input fields both modes share (how to run the failing tests and record the
/// calls, the functions, the boxes) and the exec's time limit. The boxes count CPU seconds
/// (the script's own and its calls' children's), so a loaded machine slows the layer without
/// changing what it asks; the wall clock only guards against a hang: the script stops at
/// three boxes per function after the recording run, the exec is killed at four (shrinking
/// may run past a box by a few calls) plus `slack`.
pub(super) fn script_input(
    test_cmd: &crate::testcmd::TestCommand,
    fail_to_pass: &[String],
    functions: Vec<serde_json::Value>,
    examples: usize,
    per_function: Duration,
    slack: u64,
) -> (serde_json::Value, u64) {
    let setup = harness::from_test_cmd(test_cmd);
    let budget = per_function.as_secs_f64() * functions.len() as f64;
    let input = serde_json::json!({
        "paths": setup.paths,
        "args": setup.args,
        "env": setup.env.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
        "ids": fail_to_pass,
        "tests": super::oracle::test_files(fail_to_pass),
        "sample": SAMPLE,
        "functions": functions,
        "examples": examples,
        "per_fn_s": per_function.as_secs_f64(),
        "per_call_s": PER_CALL_SECS,
        "deadline_s": RECORD_SECS as f64 + budget * 3.0,
    });
    (input, RECORD_SECS + (budget * 4.0) as u64 + slack)
}

/// The findings of the rows, one per function and kind, in the order the script found them.
pub fn findings(targets: &[Target], rows: &[Row]) -> Vec<Finding> {
    let mut out = Vec::new();
    for r in rows {
        let Some(t) = targets.get(r.fn_index) else {
            continue;
        };
        for f in &r.findings {
            let what = match f.kind.as_str() {
                "crashes" => "crashes where the original code answered",
                "reads_whole_input" => {
                    "reads its whole input for the answer the original code gave after reading less"
                }
                "raises_later" => {
                    "returns an iterator that raises the error the original code raised on call"
                }
                "swallows_input_error" => {
                    "answers where the original code let an argument's own error through"
                }
                "mutates_input" => "changes an argument the original code left alone",
                "loses_precision" => {
                    "answers large whole numbers alike that the original code told apart"
                }
                "breaks_agreement" => {
                    "answers two ways of asking one question differently where the original code answered them alike"
                }
                _ => "behaves unlike the original code",
            };
            out.push(Finding {
                layer: Layer::Differential,
                kind: f.kind.clone(),
                path: t.file.clone(),
                line: t.line,
                evidence: clip_chars(&f.after, SHOWN),
                input: Some(clip_chars(&f.call, SHOWN)),
                detail: format!(
                    "`{}` {what}: on `{}` (the smallest generated input Hypothesis found) the original code {}; the patched code {}",
                    t.qualname,
                    clip_chars(&f.call, SHOWN),
                    clip_chars(&f.before, SHOWN),
                    clip_chars(&f.after, SHOWN),
                ),
            });
        }
    }
    out
}

/// What the layer covered, for the receipt.
pub fn note(targets: &[Target], rows: &[Row], record_s: f64, total: Duration) -> String {
    let examples: usize = rows.iter().map(|r| r.examples).sum();
    let differ: usize = rows.iter().map(|r| r.differ).sum();
    let calls: usize = rows.iter().map(|r| r.calls).sum();
    let mut s = format!(
        "{} changed function(s), {calls} recorded call(s); {examples} generated input(s), {differ} answered differently by the patch",
        targets.len()
    );
    if let Some(r) = rows
        .iter()
        .filter(|r| r.differ_call.is_some())
        .min_by_key(|r| r.differ_call.as_ref().map_or(0, |c| c.len()))
    {
        s.push_str(&format!(
            " (e.g. `{}`: the original {}, the patched code {})",
            clip_chars(r.differ_call.as_deref().unwrap_or(""), 100),
            clip_chars(r.differ_before.as_deref().unwrap_or(""), 80),
            clip_chars(r.differ_after.as_deref().unwrap_or(""), 80),
        ));
    }
    let skipped: Vec<String> = rows
        .iter()
        .filter_map(|r| {
            let t = targets.get(r.fn_index)?;
            Some(format!("{}: {}", t.qualname, r.note.as_deref()?))
        })
        .collect();
    if !skipped.is_empty() {
        s.push_str(&format!("; {}", skipped.join("; ")));
    }
    s.push_str(&format!(
        " (recording {record_s:.1} s, {:.1} s in all)",
        total.as_secs_f64()
    ));
    s
}

/// What the layer found, its note, and how many generated inputs went through both versions
/// (none: it tested nothing, whatever the note says).
pub type Ran = (Vec<Finding>, String, usize);

/// Run the layer in `c`, whose workspace has the patch applied (`applied`) or not; the
/// workspace ends as it started. `Err` when a step failed (the layer then decides nothing).
#[allow(clippy::too_many_arguments)]
pub async fn run(
    c: &dyn Sandbox,
    test_cmd: &crate::testcmd::TestCommand,
    patch: &str,
    applied: bool,
    fail_to_pass: &[String],
    files: &[ChangedFile],
    targets: &[Target],
    per_function: Duration,
) -> Result<Ran, String> {
    if targets.is_empty() {
        return Ok((Vec::new(), "no changed function to test".into(), 0));
    }
    let started = Instant::now();
    let functions: Vec<serde_json::Value> = targets
        .iter()
        .map(|t| {
            let pre = files
                .iter()
                .find(|f| f.path == t.file)
                .and_then(|f| f.pre.clone())
                .unwrap_or_default();
            serde_json::json!({
                "file": t.file,
                "qualname": t.qualname,
                "bound": t.bound,
                "pre_source": pre,
            })
        })
        .collect();
    let (input, timeout) = script_input(
        test_cmd,
        fail_to_pass,
        functions,
        EXAMPLES,
        per_function,
        120,
    );
    if !applied {
        apply_patch(c, patch).await?;
    }
    let out = super::probe::script::<Output<Row>>(c, "differ", input, timeout).await;
    if !applied {
        apply_patch_reverse(c, patch).await?;
    }
    let out = out?;
    let found = findings(targets, &out.functions);
    let mut n = note(targets, &out.functions, out.record_s, started.elapsed());
    n.push_str(&format!(
        "; {} call(s) answered in {} child process(es), the rest asked before",
        out.asked, out.forked
    ));
    if !out.notes.is_empty() {
        n.push_str(&format!("; {}", out.notes.join("; ")));
    }
    let inputs = out.functions.iter().map(|r| r.examples).sum();
    Ok((found, n, inputs))
}

/// The functions to test: every changed function defined before and after the patch that a
/// test can call (not a nested one), at most [`MAX_FUNCTIONS`].
pub fn targets(
    files: &[ChangedFile],
    renamed_from: &std::collections::BTreeMap<String, String>,
) -> (Vec<Target>, Vec<String>) {
    let (all, mut notes) = super::probe::changed_functions(files, renamed_from, false);
    let (mut out, nested): (Vec<Target>, Vec<Target>) = all
        .into_iter()
        .partition(|t| !t.qualname.contains("<locals>"));
    if !nested.is_empty() {
        notes.push(format!(
            "nested, tested through the function that defines them: {}",
            nested
                .iter()
                .map(|t| t.qualname.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if out.len() > MAX_FUNCTIONS {
        notes.push(format!(
            "{} changed functions, the first {MAX_FUNCTIONS} tested",
            out.len()
        ));
        out.truncate(MAX_FUNCTIONS);
    }
    (out, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(q: &str) -> Target {
        Target {
            file: "pkg/m.py".into(),
            pre_file: "pkg/m.py".into(),
            qualname: q.into(),
            line: 3,
            bound: false,
            ints: vec![],
            strs: vec![],
        }
    }

    #[test]
    fn rows_become_findings_with_the_smallest_input_and_both_answers() {
        let rows: Vec<Row> = serde_json::from_str(
            r#"[{"fn": 0, "calls": 2, "examples": 41, "differ": 5, "findings": [
                {"kind": "reads_whole_input", "call": "peekn(2, iter([0, 1, 2]))",
                 "before": "returns `((0, 1), <iterator>)`", "after": "returns `((0, 1), <iterator>)`"}]},
               {"fn": 1, "calls": 0, "note": "no test called it"}]"#,
        )
        .unwrap();
        let t = [target("peekn"), target("other")];
        let f = findings(&t, &rows);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].layer, Layer::Differential);
        assert_eq!(f[0].kind, "reads_whole_input");
        assert_eq!(f[0].input.as_deref(), Some("peekn(2, iter([0, 1, 2]))"));
        assert!(
            f[0].detail.contains("reads its whole input"),
            "{}",
            f[0].detail
        );
        let more: Vec<Row> = serde_json::from_str(
            r#"[{"fn": 0, "calls": 3, "examples": 80, "findings": [
                {"kind": "breaks_agreement", "call": "xfrange(1, 5, -1)",
                 "before": "answers `[1.0, 0.0]` both ways (`xfrange` and `frange` on the same arguments, on 46 drawn inputs alike)",
                 "after": "answers `[]` one way and `[1.0, 0.0]` the other"}]}]"#,
        )
        .unwrap();
        let g = findings(&[target("xfrange")], &more);
        assert_eq!(g[0].kind, "breaks_agreement");
        assert!(
            g[0].detail
                .contains("answers two ways of asking one question differently")
                && g[0].detail.contains("`frange` on the same arguments"),
            "{}",
            g[0].detail
        );
        let n = note(&t, &rows, 0.7, Duration::from_secs(3));
        assert!(n.starts_with("2 changed function(s), 2 recorded call(s); 41 generated input(s), 5 answered differently"), "{n}");
        assert!(n.contains("other: no test called it"), "{n}");
    }
}
