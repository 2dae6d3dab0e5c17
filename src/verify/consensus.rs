//! Consensus among passing candidates (issue #44 item 2): when the repair search has two or
//! more candidates that pass every test, they are run against each other on generated inputs
//! before one is chosen.
//!
//! Two candidates can pass the same tests and still be different programs: `RRCache(128,
//! choice)` and `RRCache(128, 128)` agree until the cache evicts, which no test does. The tests
//! cannot tell them apart; their answers on inputs the tests never pass can. How
//! (`pl_differ.py`'s `consensus` mode, one process in the search's sandbox, nothing applied):
//! 1. the failing tests and their neighbours run once under the differential layer's profile
//!    hook, recording each changed function's calls ([`super::differential`]);
//! 2. for each candidate, each changed function's code is rebuilt from that candidate's text of
//!    its file (with the live module's globals) and swapped into the live function object in
//!    the forked child of each call, so one candidate's versions of all the functions answer
//!    together;
//! 3. Hypothesis draws inputs shaped like the recorded calls (the differential layer's
//!    strategies) and every candidate answers each. An input where an answer runs out of time,
//!    is a deliberate `raise` of the project's code, is an error on a value of another type, or
//!    is memory or a C type's range on call decides nothing (a contract the tests do not state,
//!    a size drawn too large), nor does an error on an input holding a drawn iterator or value
//!    of another type (whether it is accepted is the differential layer's question, asked
//!    against the original). Otherwise the candidates fall into groups of equal answers (every
//!    error alike, whole floats as ints, iterators in an answer read): one group, they agree;
//!    a group of more than half, the others are **outvoted**; else a **split** (no majority).
//!
//! What the search does with it ([`crate::agent::strategy`]): an outvoted candidate is not
//! chosen first; the chosen one carries its findings to the verifier (this layer's row in the
//! receipt), where any finding makes `verified` `needs_review` with the inputs shown. Identical
//! diffs count once (the same wrong fill drawn twice is not a majority).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::differential::{self, SHOWN};
use super::evidence::{Finding, Layer};
use super::probe::Target;
use super::signals::ChangedFile;
use crate::sandbox::Sandbox;
use crate::sandbox::output::clip_chars;

/// Candidates compared at most (the best ones of the search's ranking).
pub const MAX_CANDIDATES: usize = 5;
/// Generated inputs per function at most (each answered by every candidate).
pub const EXAMPLES: usize = 100;

/// One candidate outvoted on a function's inputs, as the script reports it.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Outvoted {
    /// Index among the compared candidates.
    pub candidate: usize,
    pub inputs: usize,
    /// The shortest such input, the candidate's answer and the majority's.
    pub call: String,
    pub answer: String,
    pub majority: String,
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
    /// The candidates whose code rebuilt (the others are not compared).
    #[serde(default)]
    pub compared: Vec<usize>,
    #[serde(default)]
    pub outvoted: Vec<Outvoted>,
    /// Inputs with no majority.
    #[serde(default)]
    pub split: usize,
    #[serde(default)]
    pub split_call: Option<String>,
    /// Each compared candidate's answer on `split_call`.
    #[serde(default)]
    pub split_answers: Vec<(usize, String)>,
    #[serde(default)]
    pub note: Option<String>,
}

/// What the comparison found, for every candidate.
#[derive(Debug, Clone, Default)]
pub struct Consensus {
    /// Candidates given (after identical diffs were merged).
    pub candidates: usize,
    pub targets: Vec<Target>,
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
    pub record_s: f64,
    pub wall: Duration,
}

/// What the search hands the verifier about its chosen candidate: the layer's note and its
/// findings (judged like every layer's).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Evidence {
    pub note: String,
    pub findings: Vec<Finding>,
    /// The comparison was due and decided nothing (it failed, or no input was answered by two
    /// candidates): why. The layer then reports it as not run.
    pub not_run: Option<String>,
}

impl Evidence {
    /// The comparison was due and could not run.
    pub fn failed(why: String) -> Evidence {
        Evidence {
            not_run: Some(format!("the comparison in the repair search failed: {why}")),
            ..Evidence::default()
        }
    }
}

impl Consensus {
    /// Inputs on which candidate `k` was outvoted, over every function.
    pub fn outvoted(&self, k: usize) -> usize {
        self.rows
            .iter()
            .flat_map(|r| &r.outvoted)
            .filter(|o| o.candidate == k)
            .map(|o| o.inputs)
            .sum()
    }

    /// Inputs with no majority among candidates `k` was compared with.
    pub fn split(&self, k: usize) -> usize {
        self.rows
            .iter()
            .filter(|r| r.compared.contains(&k))
            .map(|r| r.split)
            .sum()
    }

    /// Candidate `k`'s findings: `outvoted` (the others agree on an answer it does not give)
    /// and `no_majority` (the candidates disagree and no answer has more than half).
    pub fn findings(&self, k: usize) -> Vec<Finding> {
        let mut out = Vec::new();
        for r in &self.rows {
            let Some(t) = self.targets.get(r.fn_index) else {
                continue;
            };
            if !r.compared.contains(&k) {
                continue;
            }
            if let Some(o) = r.outvoted.iter().find(|o| o.candidate == k) {
                out.push(Finding {
                    layer: Layer::Consensus,
                    kind: "outvoted".into(),
                    path: t.file.clone(),
                    line: t.line,
                    evidence: clip_chars(&o.answer, SHOWN),
                    input: Some(clip_chars(&o.call, SHOWN)),
                    detail: format!(
                        "`{}`: on {} generated input(s) the other passing candidates agree on an answer this one does not give; e.g. on `{}` they {}, this one {}",
                        t.qualname,
                        o.inputs,
                        clip_chars(&o.call, SHOWN),
                        clip_chars(&o.majority, SHOWN),
                        clip_chars(&o.answer, SHOWN),
                    ),
                });
            }
            if r.split > 0 {
                let call = r.split_call.as_deref().unwrap_or("");
                let mine = r
                    .split_answers
                    .iter()
                    .find(|(c, _)| *c == k)
                    .map(|(_, a)| a.as_str())
                    .unwrap_or("");
                let others: Vec<String> = r
                    .split_answers
                    .iter()
                    .filter(|(c, _)| *c != k)
                    .map(|(c, a)| format!("candidate {} {}", c + 1, clip_chars(a, 80)))
                    .collect();
                out.push(Finding {
                    layer: Layer::Consensus,
                    kind: "no_majority".into(),
                    path: t.file.clone(),
                    line: t.line,
                    evidence: clip_chars(mine, SHOWN),
                    input: Some(clip_chars(call, SHOWN)),
                    detail: format!(
                        "`{}`: the passing candidates disagree with no majority on {} generated input(s); e.g. on `{}` this one {}, {}",
                        t.qualname,
                        r.split,
                        clip_chars(call, SHOWN),
                        clip_chars(mine, SHOWN),
                        others.join(", "),
                    ),
                });
            }
        }
        out
    }

    /// What the comparison covered (the same for every candidate), for the receipt.
    pub fn note(&self) -> String {
        let examples: usize = self.rows.iter().map(|r| r.examples).sum();
        let calls: usize = self.rows.iter().map(|r| r.calls).sum();
        let split: usize = self.rows.iter().map(|r| r.split).sum();
        let outvoted: usize = self
            .rows
            .iter()
            .flat_map(|r| &r.outvoted)
            .map(|o| o.inputs)
            .sum();
        let mut s = format!(
            "{} passing candidate(s) compared in the repair search on {} changed function(s), {calls} recorded call(s); {examples} generated input(s) decided, {outvoted} outvoting one, {split} with no majority",
            self.candidates,
            self.targets.len()
        );
        let skipped: Vec<String> = self
            .rows
            .iter()
            .filter_map(|r| {
                let t = self.targets.get(r.fn_index)?;
                Some(format!("{}: {}", t.qualname, r.note.as_deref()?))
            })
            .chain(self.notes.iter().cloned())
            .collect();
        if !skipped.is_empty() {
            s.push_str(&format!("; {}", skipped.join("; ")));
        }
        s.push_str(&format!(
            " (recording {:.1} s, {:.1} s in all)",
            self.record_s,
            self.wall.as_secs_f64()
        ));
        s
    }

    /// What the verifier is told about candidate `k`.
    pub fn evidence(&self, k: usize) -> Evidence {
        let note = self.note();
        let decided = self.rows.iter().any(|r| r.examples > 0);
        Evidence {
            not_run: (!decided).then(|| format!("nothing was compared: {note}")),
            findings: self.findings(k),
            note,
        }
    }
}

/// The functions to compare: every function any candidate changes that a test can call
/// (differential's choice), each once, at most [`differential::MAX_FUNCTIONS`]; and per
/// candidate the text of every file those live in, as the candidate leaves it (its own
/// version, else the file before any candidate). Pure.
pub fn plan(candidates: &[Vec<ChangedFile>]) -> (Vec<Target>, Vec<BTreeMap<String, String>>) {
    let mut targets: Vec<Target> = Vec::new();
    let mut pre: BTreeMap<String, String> = BTreeMap::new();
    for files in candidates {
        let (ts, _) = differential::targets(files, &BTreeMap::new());
        for t in ts {
            if !targets
                .iter()
                .any(|x| x.file == t.file && x.qualname == t.qualname)
            {
                targets.push(t);
            }
        }
        for f in files {
            if let Some(p) = &f.pre {
                pre.entry(f.path.clone()).or_insert_with(|| p.clone());
            }
        }
    }
    targets.truncate(differential::MAX_FUNCTIONS);
    let versions = candidates
        .iter()
        .map(|files| {
            targets
                .iter()
                .filter_map(|t| {
                    let text = files
                        .iter()
                        .find(|f| f.path == t.file)
                        .map(|f| f.post.clone())
                        .or_else(|| pre.get(&t.file).cloned())?;
                    Some((t.file.clone(), text))
                })
                .collect()
        })
        .collect();
    (targets, versions)
}

/// Compare `candidates` (each one's changed files, before and after) in `c`, whose workspace
/// is the unpatched checkout (left as it is). `Err` when the step failed (nothing is decided).
pub async fn run(
    c: &dyn Sandbox,
    test_cmd: &crate::testcmd::TestCommand,
    fail_to_pass: &[String],
    candidates: &[Vec<ChangedFile>],
    per_function: Duration,
) -> Result<Consensus, String> {
    let started = Instant::now();
    let (targets, versions) = plan(candidates);
    let mut out = Consensus {
        candidates: candidates.len(),
        targets,
        ..Consensus::default()
    };
    if out.targets.is_empty() {
        out.notes
            .push("no changed function a test can call to compare".into());
        return Ok(out);
    }
    let functions: Vec<serde_json::Value> = out
        .targets
        .iter()
        .map(|t| serde_json::json!({"file": t.file, "qualname": t.qualname, "bound": t.bound}))
        .collect();
    let (mut input, timeout) = differential::script_input(
        test_cmd,
        fail_to_pass,
        functions,
        EXAMPLES,
        per_function,
        60,
    );
    input["versions"] = serde_json::json!(versions);
    let o =
        super::probe::script::<differential::Output<Row>>(c, "consensus", input, timeout).await?;
    out.rows = o.functions;
    out.notes.extend(o.notes);
    out.record_s = o.record_s;
    out.wall = started.elapsed();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(q: &str) -> Target {
        Target {
            file: "pkg/c.py".into(),
            pre_file: "pkg/c.py".into(),
            qualname: q.into(),
            line: 7,
            bound: false,
            ints: vec![],
            strs: vec![],
        }
    }

    fn consensus(rows: &str) -> Consensus {
        Consensus {
            candidates: 3,
            targets: vec![target("make_cache"), target("other")],
            rows: serde_json::from_str(rows).unwrap(),
            ..Consensus::default()
        }
    }

    #[test]
    fn an_outvoted_candidate_gets_a_finding_with_both_answers_and_the_others_none() {
        let c = consensus(
            r#"[{"fn": 0, "calls": 2, "examples": 40, "compared": [0, 1, 2],
                 "outvoted": [{"candidate": 1, "inputs": 6, "call": "make_cache(129)",
                   "answer": "raises TypeError", "majority": "returns `128`"}], "split": 0},
                {"fn": 1, "calls": 0, "compared": [0, 1, 2], "note": "no test called it"}]"#,
        );
        assert_eq!((c.outvoted(0), c.outvoted(1), c.outvoted(2)), (0, 6, 0));
        assert!(c.findings(0).is_empty() && c.findings(2).is_empty());
        let f = c.findings(1);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (f[0].layer, f[0].kind.as_str(), f[0].input.as_deref()),
            (Layer::Consensus, "outvoted", Some("make_cache(129)"))
        );
        assert!(
            f[0].detail
                .contains("they returns `128`, this one raises TypeError"),
            "{}",
            f[0].detail
        );
        let n = c.note();
        assert!(
            n.starts_with("3 passing candidate(s) compared in the repair search on 2 changed function(s), 2 recorded call(s); 40 generated input(s) decided, 6 outvoting one, 0 with no majority"),
            "{n}"
        );
        assert!(n.contains("other: no test called it"), "{n}");
    }

    #[test]
    fn a_split_is_a_finding_for_every_compared_candidate_and_names_the_others_answers() {
        let c = consensus(
            r#"[{"fn": 0, "calls": 1, "examples": 12, "compared": [0, 1], "split": 3,
                 "split_call": "make_cache(129)",
                 "split_answers": [[0, "returns `1`"], [1, "returns `2`"]]}]"#,
        );
        assert_eq!((c.split(0), c.split(1), c.split(2)), (3, 3, 0));
        let f = c.findings(0);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].kind, "no_majority");
        assert!(
            f[0].detail
                .contains("this one returns `1`, candidate 2 returns `2`"),
            "{}",
            f[0].detail
        );
        // Candidate 3 was not compared (its code did not rebuild): nothing is said of it.
        assert!(c.findings(2).is_empty());
        assert_eq!(c.evidence(0).not_run, None);
    }

    #[test]
    fn a_comparison_that_decided_no_input_is_reported_as_not_run_not_clean() {
        let c = consensus(
            r#"[{"fn": 0, "calls": 3, "examples": 0, "compared": [0],
                 "note": "fewer than two candidates rebuild"}]"#,
        );
        let e = c.evidence(0);
        assert!(e.findings.is_empty());
        let why = e.not_run.expect("not run");
        assert!(
            why.starts_with("nothing was compared: ") && why.contains("fewer than two"),
            "{why}"
        );
    }

    fn changed(path: &str, pre: &str, post: &str) -> ChangedFile {
        let (removed, added) = super::super::layers::line_changes(pre, post);
        ChangedFile {
            path: path.into(),
            pre: Some(pre.into()),
            post: post.into(),
            added,
            removed,
        }
    }

    #[test]
    fn the_plan_takes_every_changed_function_once_and_each_candidates_text_of_its_file() {
        let pre_a = "def f(x):\n    return x\n\n\ndef g(x):\n    return x\n";
        let pre_b = "def h(x):\n    return x\n";
        let one = vec![changed(
            "a.py",
            pre_a,
            "def f(x):\n    return x + 1\n\n\ndef g(x):\n    return x\n",
        )];
        let two = vec![
            changed(
                "a.py",
                pre_a,
                "def f(x):\n    return 1 + x\n\n\ndef g(x):\n    return -x\n",
            ),
            changed("b.py", pre_b, "def h(x):\n    return 2 * x\n"),
        ];
        let (targets, versions) = plan(&[one, two.clone()]);
        let names: Vec<&str> = targets.iter().map(|t| t.qualname.as_str()).collect();
        assert_eq!(names, ["f", "g", "h"]);
        assert_eq!(versions.len(), 2);
        // The first candidate leaves b.py as it was: its text is the file before any.
        assert_eq!(versions[0]["b.py"], pre_b);
        assert!(versions[0]["a.py"].contains("x + 1"));
        assert_eq!(versions[1]["b.py"], two[1].post);
    }
}
