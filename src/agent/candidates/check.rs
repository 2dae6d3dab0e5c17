//! Checking one candidate in the run's container: apply its edits, run the target tests
//! (then the whole suite), take the diff and restore the files' original bytes; a second look
//! for fixes that span places.

use std::collections::BTreeSet;
use std::time::Instant;

use super::candidate::Candidate;
use super::propagate::{combine, equality_twin, propagate};
use super::{FileEdit, Outcome, Problem};
use crate::agent::tools::{self, TestRun, ToolConfig};
use crate::sandbox::{Sandbox, SandboxError};

/// What a candidate is checked against.
#[derive(Clone, Copy)]
pub(super) struct Against<'a> {
    pub sandbox: &'a dyn Sandbox,
    pub problem: &'a Problem,
    pub baseline_failing: &'a [String],
    pub tools: &'a ToolConfig,
}

/// Check `edits` unless an earlier candidate had them (then `duplicate`), give it its second
/// look, and set the candidate's status, detail, diff and edits from the result. Ok(true):
/// it was checked. Err: the container failed.
pub(super) async fn assess(
    at: Against<'_>,
    edits: Vec<FileEdit>,
    earlier: &[Candidate],
    seen: &mut BTreeSet<Vec<(String, String)>>,
    cand: &mut Candidate,
) -> Result<bool, SandboxError> {
    let key: Vec<(String, String)> = edits
        .iter()
        .map(|e| (e.path.clone(), e.content.clone()))
        .collect();
    if !seen.insert(key) {
        cand.status = Outcome::Duplicate;
        cand.detail = "the same edit as an earlier candidate".into();
        return Ok(false);
    }
    let first = check(
        at.sandbox,
        &edits,
        at.problem,
        at.baseline_failing,
        at.tools,
    )
    .await?;
    let (edits, c) = match second_look(at, &edits, &first, earlier, seen).await? {
        Some(more) => more,
        None => (edits, first),
    };
    cand.status = c.status;
    cand.detail = c.detail;
    cand.diff = c.diff;
    cand.edits = edits;
    cand.fixed = c.fixed;
    cand.check_ms = c.check_ms;
    cand.rollback_ms = c.rollback_ms;
    Ok(true)
}

/// One more check a candidate may earn, for fixes that span places. A one-line change that
/// still fails is checked with its rewrite wherever else the file has the replaced text
/// ([`propagate`]); a `partial` one together with an earlier partial one that fixes other
/// targets ([`combine`]). Some((edits, check)) replaces the candidate's own when it got
/// further (a pass, or more targets passing). Edits seen before are not checked again.
async fn second_look(
    at: Against<'_>,
    edits: &[FileEdit],
    first: &Checked,
    earlier: &[Candidate],
    seen: &mut BTreeSet<Vec<(String, String)>>,
) -> Result<Option<(Vec<FileEdit>, Checked)>, SandboxError> {
    let mut tries: Vec<(Vec<FileEdit>, String)> = Vec::new();
    match first.status {
        Outcome::Failing => {
            if let [e] = edits
                && let Some(orig) = at.problem.files.get(&e.path)
                && let Some(p) = propagate(orig, e)
            {
                let lines: Vec<String> = p.lines.iter().map(|l| l.to_string()).collect();
                tries.push((
                    vec![p.edit],
                    format!("with the same change on line {} too", lines.join(", ")),
                ));
            }
        }
        // A pass through identity with a literal (`mod is "builtins"`) holds only while the
        // interpreter shares the object: the same edit with equality is checked, and taken
        // when it passes too (the verifier flags the identity).
        Outcome::Passing => {
            if let [e] = edits
                && let Some(orig) = at.problem.files.get(&e.path)
                && let Some(t) = equality_twin(orig, e)
            {
                tries.push((vec![t], "with `==` for identity with a literal".into()));
            }
        }
        Outcome::Partial => {
            for c in earlier.iter().filter(|c| c.status == Outcome::Partial) {
                let covers = |a: &[String], b: &[String]| b.iter().all(|t| a.contains(t));
                if covers(&c.fixed, &first.fixed) || covers(&first.fixed, &c.fixed) {
                    continue;
                }
                if let Some(both) = combine(&at.problem.files, &c.edits, edits) {
                    tries.push((both, format!("with candidate {}'s edit too", c.index)));
                }
            }
        }
        _ => {}
    }
    for (more, how) in tries {
        let key: Vec<(String, String)> = more
            .iter()
            .map(|e| (e.path.clone(), e.content.clone()))
            .collect();
        if !seen.insert(key) {
            continue;
        }
        let c = check(at.sandbox, &more, at.problem, at.baseline_failing, at.tools).await?;
        let further = c.status == Outcome::Passing
            || (c.status == Outcome::Partial && c.fixed.len() > first.fixed.len());
        if further {
            let detail = format!("{how}: {}; alone: {}", c.detail, first.detail);
            let c = Checked {
                detail,
                check_ms: c.check_ms + first.check_ms,
                rollback_ms: c.rollback_ms + first.rollback_ms,
                ..c
            };
            return Ok(Some((more, c)));
        }
    }
    Ok(None)
}

pub(super) struct Checked {
    status: Outcome,
    detail: String,
    /// `Partial`: the targets that pass.
    fixed: Vec<String>,
    diff: String,
    check_ms: u64,
    rollback_ms: u64,
}

/// Apply `edits`, run the targets (then the whole suite when they pass), take the diff, and
/// restore the files' original bytes.
async fn check(
    sandbox: &dyn Sandbox,
    edits: &[FileEdit],
    problem: &Problem,
    baseline_failing: &[String],
    tools_cfg: &ToolConfig,
) -> Result<Checked, SandboxError> {
    let t0 = Instant::now();
    for e in edits {
        write_file(sandbox, &e.path, e.content.as_bytes()).await?;
    }
    let verdict = async {
        // No target visible here (a task's hidden tests): the whole suite alone, below.
        if !problem.targets.is_empty() {
            let targets = tools::run_tests(sandbox, tools_cfg, &problem.targets).await?;
            if let Some(why) = targets_fail(&targets, &problem.targets) {
                let fixed = fixed_targets(&targets, &problem.targets);
                if fixed.is_empty() {
                    return Ok::<_, SandboxError>((Outcome::Failing, why, Vec::new()));
                }
                // Some targets pass: a step, if the whole suite says nothing else broke.
                let all = tools::run_tests(sandbox, tools_cfg, &[]).await?;
                let broken = all.summary.as_ref().map(|s| {
                    s.failing
                        .iter()
                        .filter(|f| {
                            fixed.contains(f)
                                || (!baseline_failing.contains(f) && !problem.targets.contains(f))
                        })
                        .collect::<Vec<_>>()
                });
                return Ok(match broken {
                    Some(b) if b.is_empty() => (
                        Outcome::Partial,
                        format!(
                            "{} of {} targets pass ({}); {why}",
                            fixed.len(),
                            problem.targets.len(),
                            join_ids(&fixed.iter().collect::<Vec<_>>())
                        ),
                        fixed,
                    ),
                    Some(b) => (
                        Outcome::Failing,
                        format!("{why}; and it breaks tests that passed: {}", join_ids(&b)),
                        Vec::new(),
                    ),
                    None => (Outcome::Failing, why, Vec::new()),
                });
            }
        }
        // The targets pass: nothing else may break.
        let all = tools::run_tests(sandbox, tools_cfg, &[]).await?;
        let Some(s) = &all.summary else {
            return Ok((
                Outcome::Failing,
                "the whole suite produced no report".into(),
                Vec::new(),
            ));
        };
        let broken: Vec<&String> = s
            .failing
            .iter()
            .filter(|f| !baseline_failing.contains(f) && !problem.targets.contains(f))
            .collect();
        let still: Vec<&String> = s
            .failing
            .iter()
            .filter(|f| problem.targets.contains(f))
            .collect();
        if !still.is_empty() {
            return Ok((
                Outcome::Failing,
                format!("targets fail in the whole suite: {}", join_ids(&still)),
                Vec::new(),
            ));
        }
        if !broken.is_empty() {
            return Ok((
                Outcome::Failing,
                format!("breaks tests that passed: {}", join_ids(&broken)),
                Vec::new(),
            ));
        }
        if problem.targets.is_empty() {
            return Ok((
                Outcome::Passing,
                format!(
                    "{} passed; the targets are not in the sandbox (the verifier runs them)",
                    s.passed
                ),
                Vec::new(),
            ));
        }
        Ok((Outcome::Passing, format!("{} passed", s.passed), Vec::new()))
    }
    .await;
    let diff = sandbox.diff().await;
    let r0 = Instant::now();
    for e in edits {
        match problem.files.get(&e.path) {
            Some(orig) => write_file(sandbox, &e.path, orig.as_bytes()).await?,
            None => {
                return Err(SandboxError::Other(format!(
                    "no original of {} to roll back to",
                    e.path
                )));
            }
        }
    }
    let rollback_ms = r0.elapsed().as_millis() as u64;
    let (status, detail, fixed) = verdict?;
    Ok(Checked {
        status,
        detail,
        fixed,
        diff: diff?,
        check_ms: t0.elapsed().as_millis() as u64,
        rollback_ms,
    })
}

pub(super) fn join_ids(ids: &[&String]) -> String {
    let shown: Vec<&str> = ids.iter().take(5).map(|s| s.as_str()).collect();
    let more = ids.len().saturating_sub(5);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// Why the target run does not pass (None: every target passed). Pure.
pub(super) fn targets_fail(run: &TestRun, targets: &[String]) -> Option<String> {
    let Some(s) = &run.summary else {
        return Some("the target tests produced no report".into());
    };
    let failing: Vec<&String> = s.failing.iter().collect();
    if !failing.is_empty() {
        return Some(format!("still failing: {}", join_ids(&failing)));
    }
    if s.passed == 0 || (!targets.is_empty() && s.passed < targets.len()) {
        return Some(format!(
            "{} of {} target tests ran and passed",
            s.passed,
            targets.len()
        ));
    }
    None
}

/// The targets a target run passed while others failed (empty: none, only one target, or
/// the run does not account for every target). Pure.
pub fn fixed_targets(run: &TestRun, targets: &[String]) -> Vec<String> {
    let Some(s) = &run.summary else {
        return Vec::new();
    };
    if targets.len() < 2 || s.failing.iter().any(|f| !targets.contains(f)) {
        return Vec::new();
    }
    let fixed: Vec<String> = targets
        .iter()
        .filter(|t| !s.failing.contains(t))
        .cloned()
        .collect();
    // Every target ran: the passing ones are the ones not failing.
    if fixed.len() == targets.len() || s.passed < fixed.len() {
        return Vec::new();
    }
    fixed
}

/// [`tools::write_file`], its failure an error.
async fn write_file(sandbox: &dyn Sandbox, path: &str, bytes: &[u8]) -> Result<(), SandboxError> {
    let r = tools::write_file(sandbox, path, bytes.to_vec()).await?;
    if r.status.success() {
        Ok(())
    } else {
        Err(SandboxError::Other(format!(
            "cannot write {path}: {}",
            r.output.render().trim()
        )))
    }
}

/// Write every edit's content to the workspace.
pub(super) async fn write_all(
    sandbox: &dyn Sandbox,
    edits: &[FileEdit],
) -> Result<(), SandboxError> {
    for e in edits {
        write_file(sandbox, &e.path, e.content.as_bytes()).await?;
    }
    Ok(())
}
