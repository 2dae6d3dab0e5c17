//! The generalisation layers (fixed or fitted?) as one list. Each layer's evidence lives in
//! its own file (`signals/`, `oracle.rs`, `probe.rs`, `review.rs`, held-out tests in the
//! runs); here each is one type behind [`EvidenceLayer`], and [`LAYERS`] lists them once.
//! The verifier's run, the repair search's candidate check ([`super::fit::assess_candidate`]),
//! the receipt's rows and the time accounting all walk that list: adding a layer is its
//! evidence file, its type here and one entry in the list.
//!
//! A layer is pure (it reads the changed files and the failing tests' files: [`assess`]) or
//! dynamic (it runs in a sandbox of the prepared image: [`run`]); held-out tests are a layer
//! whose evidence is the test runs themselves, so the receipt fills its row.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use async_trait::async_trait;
use serde::Serialize;

use super::consensus::Evidence;
use super::diff::{ChangeKind, FilePatch};
use super::evidence::{Finding, Layer};
use super::oracle::{self, TestSource};
use super::policy::{self, PolicyConfig};
use super::review::ReviewModel;
use super::signals::{self, ChangedFile};
use super::{probe, review};
use crate::sandbox::Sandbox;
use crate::testcmd::TestCommand;

/// Which generalisation layers verification runs. The default runs the pure layers and the
/// probe of behaviour beyond the tested points; the model review only when a model is given.
#[derive(Debug, Clone)]
pub struct FitOptions {
    /// Structural signals and the oracle surface (pure, ~1 ms a file).
    pub layers: bool,
    /// Behaviour beyond the tested points: two more runs of the failing tests.
    pub probe: bool,
    /// Differential neighbourhood testing ([`super::differential`]): the time box per changed
    /// function (`verify.differential_seconds`); `None`: off.
    pub differential: Option<std::time::Duration>,
    /// The model review (`verify.review_model`); `None`: off.
    pub review: Option<ReviewModel>,
    /// What the repair search's comparison of its passing candidates said about this one
    /// ([`super::consensus`]); `None`: no comparison (one passing candidate, or a patch not
    /// from the search).
    pub consensus: Option<Evidence>,
    /// Findings the caller already made about the patch, judged like the structural
    /// signals' (the repair search's candidate that stops using a parameter or a callee of
    /// the code it replaced: it passes the tests, and a feature may be gone).
    pub given: Vec<Finding>,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            layers: true,
            probe: true,
            differential: Some(super::differential::PER_FUNCTION),
            review: None,
            consensus: None,
            given: Vec::new(),
        }
    }
}

impl FitOptions {
    /// Only the integrity layers (the tamper corpora's pre-#23 behaviour, a quick check).
    pub fn off() -> Self {
        FitOptions {
            layers: false,
            probe: false,
            differential: None,
            review: None,
            consensus: None,
            given: Vec::new(),
        }
    }
}

/// What the pure layers read.
#[derive(Debug, Clone, Default)]
pub struct FitInput {
    /// Every non-test Python file the patch changes or adds, before and after.
    pub files: Vec<ChangedFile>,
    /// The failing tests' files.
    pub tests: Vec<TestSource>,
    pub fail_to_pass: Vec<String>,
    /// Non-Python files the patch adds outside the tests (data an answer table may hide in).
    pub data_files: Vec<String>,
}

impl FitInput {
    /// From the patch (`diff::parse`), the sources read before it by pre-patch path and after
    /// it by post-patch path (`None`: unreadable), and the failing tests' files.
    pub fn new(
        patch: &[FilePatch],
        pre: &BTreeMap<String, Option<String>>,
        post: &BTreeMap<String, Option<String>>,
        tests: Vec<TestSource>,
        fail_to_pass: &[String],
        tests_dirs: &[String],
    ) -> FitInput {
        let cfg = PolicyConfig {
            tests_dirs: tests_dirs.to_vec(),
            ..PolicyConfig::default()
        };
        let mut files = Vec::new();
        let mut data_files = Vec::new();
        for f in patch {
            let Some(new) = f.new_path.clone() else {
                continue;
            };
            if f.kind == ChangeKind::Deleted || policy::is_test_path(&new, &cfg) {
                continue;
            }
            if !new.ends_with(".py") {
                if f.kind == ChangeKind::Added {
                    data_files.push(new);
                }
                continue;
            }
            let Some(Some(text)) = post.get(&new) else {
                continue;
            };
            let old = match f.kind {
                ChangeKind::Added => None,
                _ => f.old_path.clone().or_else(|| Some(new.clone())),
            };
            let before = old.and_then(|o| pre.get(&o).cloned().flatten());
            files.push(changed_file(new, before, text.clone()));
        }
        FitInput {
            files,
            tests,
            fail_to_pass: fail_to_pass.to_vec(),
            data_files,
        }
    }
}

impl FitInput {
    /// From whole-file edits (path, content before — `None`: a new file —, content after),
    /// as a repair strategy holds a candidate before any diff exists. Non-Python files are
    /// data files when new, else ignored.
    pub fn of_edits(
        edits: &[(String, Option<String>, String)],
        tests: Vec<TestSource>,
        fail_to_pass: &[String],
    ) -> FitInput {
        let mut files = Vec::new();
        let mut data_files = Vec::new();
        for (path, pre, post) in edits {
            if !path.ends_with(".py") {
                if pre.is_none() {
                    data_files.push(path.clone());
                }
                continue;
            }
            files.push(changed_file(path.clone(), pre.clone(), post.clone()));
        }
        FitInput {
            files,
            tests,
            fail_to_pass: fail_to_pass.to_vec(),
            data_files,
        }
    }
}

/// A changed Python file with its changed lines read from the two texts.
fn changed_file(path: String, pre: Option<String>, post: String) -> ChangedFile {
    let (removed, added) = line_changes(pre.as_deref().unwrap_or(""), &post);
    ChangedFile {
        path,
        pre,
        post,
        added,
        removed,
    }
}

/// Removed lines (pre numbering) and added lines (post numbering) of code, 1-based, from the
/// two texts themselves: a patch's hunk headers may be off (`git apply` tolerates offsets),
/// the texts are what ran. Blank and comment-only lines change no behaviour.
pub fn line_changes(pre: &str, post: &str) -> (BTreeSet<usize>, BTreeSet<usize>) {
    let code = |l: &str| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('#')
    };
    let (mut removed, mut added) = (BTreeSet::new(), BTreeSet::new());
    for c in similar::TextDiff::from_lines(pre, post).iter_all_changes() {
        match c.tag() {
            similar::ChangeTag::Delete if code(c.value()) => {
                removed.extend(c.old_index().map(|i| i + 1));
            }
            similar::ChangeTag::Insert if code(c.value()) => {
                added.extend(c.new_index().map(|i| i + 1));
            }
            _ => {}
        }
    }
    (removed, added)
}

/// What the generalisation layers found, and what each of them looked at.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FitReport {
    pub findings: Vec<Finding>,
    /// Per layer that ran: what it covered (`2 file(s), 14 test literals`).
    pub notes: BTreeMap<Layer, String>,
    /// Per layer that was asked for but could not run: why (it then decides nothing).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub not_run: BTreeMap<Layer, String>,
    /// Time in the layers, milliseconds.
    pub ms: u64,
}

impl FitReport {
    pub fn of(&self, layer: Layer) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.layer == layer)
    }

    /// Add a layer's result (the dynamic part, a review, held-out tests).
    pub fn merge(&mut self, layer: Layer, note: String, findings: Vec<Finding>, ms: u64) {
        self.notes.insert(layer, note);
        self.findings.extend(findings);
        self.ms += ms;
    }
}

/// What a layer's answer was.
pub enum Outcome {
    /// It ran: what it covered (`2 file(s), 14 test literals`) and what it found.
    Ran {
        note: String,
        findings: Vec<Finding>,
    },
    /// It was asked for and could not run: why (it decides nothing).
    NotRun(String),
}

/// What the dynamic layers read besides the sources: the sandbox with the patch in its
/// workspace (`applied`) or not, and what the run brings.
pub struct RunInput<'a> {
    pub sandbox: &'a dyn Sandbox,
    pub patch: &'a str,
    pub files: &'a [FilePatch],
    pub applied: bool,
    pub test_cmd: &'a TestCommand,
    pub review: Option<&'a ReviewModel>,
    /// The differential layer's time box per function (`FitOptions::differential`).
    pub differential: Option<std::time::Duration>,
}

/// One generalisation layer.
#[async_trait]
pub trait EvidenceLayer: Sync {
    fn layer(&self) -> Layer;
    /// Whether `opts` asks for it.
    fn asked(&self, opts: &FitOptions) -> bool;
    /// The pure part, from the sources alone (and what `opts` brings); `None`: the layer
    /// needs a sandbox.
    fn assess(&self, _fit: &FitInput, _opts: &FitOptions) -> Option<Outcome> {
        None
    }
    /// The dynamic part, in a sandbox of the prepared image.
    async fn run(&self, _fit: &FitInput, _run: &RunInput<'_>) -> Outcome {
        Outcome::NotRun("not a dynamic layer".into())
    }
}

/// The structural signals ([`super::signals`]): pure.
pub struct StructuralSignals;

#[async_trait]
impl EvidenceLayer for StructuralSignals {
    fn layer(&self) -> Layer {
        Layer::StructuralSignals
    }
    fn asked(&self, opts: &FitOptions) -> bool {
        opts.layers
    }
    fn assess(&self, fit: &FitInput, _opts: &FitOptions) -> Option<Outcome> {
        let literals = oracle::test_literals(&fit.tests, &fit.fail_to_pass);
        let findings = signals::signals(&fit.files, &literals, &fit.data_files);
        Some(Outcome::Ran {
            note: format!(
                "{} changed file(s), {} literal(s) of the failing tests",
                fit.files.len(),
                literals.len()
            ),
            findings,
        })
    }
}

/// The oracle surface ([`super::oracle`]): pure. The package is the top-level names of the
/// changed files' modules.
pub struct OracleSurface;

#[async_trait]
impl EvidenceLayer for OracleSurface {
    fn layer(&self) -> Layer {
        Layer::OracleSurface
    }
    fn asked(&self, opts: &FitOptions) -> bool {
        opts.layers
    }
    fn assess(&self, fit: &FitInput, _opts: &FitOptions) -> Option<Outcome> {
        let tops: BTreeSet<String> = fit
            .files
            .iter()
            .flat_map(|f| oracle::modules_of(&f.path))
            .filter_map(|m| m.split('.').next().map(str::to_string))
            .collect();
        let package = |m: &str| {
            let top = m.trim_start_matches('.').split('.').next().unwrap_or("");
            m.starts_with('.') || tops.contains(top)
        };
        let judges = oracle::judges(&fit.tests, &fit.fail_to_pass, &package);
        let note = if judges.is_empty() {
            "the failing tests judge with no name of the package".to_string()
        } else {
            format!(
                "the failing tests judge with {}",
                judges
                    .iter()
                    .map(|j| format!("`{}.{}` ({})", j.module, j.name, j.how))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        Some(Outcome::Ran {
            findings: oracle::findings(&judges, &fit.files),
            note,
        })
    }
}

/// Behaviour beyond the tested points ([`super::probe`]): dynamic, two runs of the failing
/// tests under a profile hook.
pub struct BeyondTestedPoints;

#[async_trait]
impl EvidenceLayer for BeyondTestedPoints {
    fn layer(&self) -> Layer {
        Layer::BeyondTestedPoints
    }
    fn asked(&self, opts: &FitOptions) -> bool {
        opts.probe
    }
    async fn run(&self, fit: &FitInput, run: &RunInput<'_>) -> Outcome {
        let (targets, notes) = probe::targets(&fit.files, &renamed(run.files));
        match probe::neighbourhood(
            run.sandbox,
            run.test_cmd,
            run.patch,
            run.applied,
            &fit.fail_to_pass,
            &targets,
        )
        .await
        {
            Ok(found) => ran_with_notes(found, notes),
            Err(e) => Outcome::NotRun(e),
        }
    }
}

/// A dynamic layer's findings and note, followed by the notes of what its targets left out.
fn ran_with_notes((findings, note): (Vec<Finding>, String), notes: Vec<String>) -> Outcome {
    Outcome::Ran {
        note: joined(note, notes),
        findings,
    }
}

/// A layer's own note, then the notes of what it left out.
fn joined(note: String, mut notes: Vec<String>) -> String {
    notes.insert(0, note);
    notes.join("; ")
}

/// Differential neighbourhood testing ([`super::differential`]): dynamic, one run of the
/// failing tests (and their neighbours) recording calls, then generated inputs through both
/// versions of each changed function.
pub struct Differential;

#[async_trait]
impl EvidenceLayer for Differential {
    fn layer(&self) -> Layer {
        Layer::Differential
    }
    fn asked(&self, opts: &FitOptions) -> bool {
        opts.differential.is_some()
    }
    async fn run(&self, fit: &FitInput, run: &RunInput<'_>) -> Outcome {
        let Some(per_function) = run.differential else {
            return Outcome::NotRun("no time box".into());
        };
        let (targets, notes) = super::differential::targets(&fit.files, &renamed(run.files));
        match super::differential::run(
            run.sandbox,
            run.test_cmd,
            run.patch,
            run.applied,
            &fit.fail_to_pass,
            &fit.files,
            &targets,
            per_function,
        )
        .await
        {
            // Nothing generated went through both versions (no recorded call, every function
            // skipped): nothing was tested, so nothing is claimed.
            Ok((found, note, 0)) if found.is_empty() => Outcome::NotRun(format!(
                "no generated input was tested: {}",
                joined(note, notes)
            )),
            Ok((found, note, _)) => ran_with_notes((found, note), notes),
            Err(e) => Outcome::NotRun(e),
        }
    }
}

/// Consensus among the repair search's passing candidates ([`super::consensus`]): ran in the
/// search, before one was chosen; here its evidence about this patch is reported (pure).
pub struct Consensus;

#[async_trait]
impl EvidenceLayer for Consensus {
    fn layer(&self) -> Layer {
        Layer::Consensus
    }
    fn asked(&self, opts: &FitOptions) -> bool {
        opts.layers || opts.consensus.is_some()
    }
    fn assess(&self, _fit: &FitInput, opts: &FitOptions) -> Option<Outcome> {
        Some(match &opts.consensus {
            Some(Evidence {
                not_run: Some(why),
                ..
            }) => Outcome::NotRun(why.clone()),
            Some(e) => Outcome::Ran {
                note: e.note.clone(),
                findings: e.findings.clone(),
            },
            None => Outcome::NotRun(
                "no other passing candidate to compare (one passed the tests in the repair search, or the patch is not from it)".into(),
            ),
        })
    }
}

/// Failing tests held out of everything the model saw ([`super::holdout`]): the test runs
/// are its evidence (a held-out fail-to-pass test still failing), so the receipt fills its
/// row; nothing runs for it here.
pub struct HiddenTargets;

#[async_trait]
impl EvidenceLayer for HiddenTargets {
    fn layer(&self) -> Layer {
        Layer::HiddenTargets
    }
    fn asked(&self, _opts: &FitOptions) -> bool {
        false
    }
}

/// The model review ([`super::review`]): dynamic, one model call.
pub struct ModelReview;

#[async_trait]
impl EvidenceLayer for ModelReview {
    fn layer(&self) -> Layer {
        Layer::ModelReview
    }
    fn asked(&self, opts: &FitOptions) -> bool {
        opts.review.is_some()
    }
    async fn run(&self, fit: &FitInput, run: &RunInput<'_>) -> Outcome {
        let Some(r) = run.review else {
            return Outcome::NotRun("no review model".into());
        };
        let text = oracle::test_snippets(&fit.tests, &fit.fail_to_pass, 3000);
        let (findings, note) = review::review(r.0.as_ref(), run.patch, run.files, &text).await;
        Outcome::Ran { note, findings }
    }
}

/// Every layer, in the receipt's order. Pure ones run first (their findings lead the
/// verdict's reason), then the dynamic ones.
pub static LAYERS: [&dyn EvidenceLayer; 7] = [
    &StructuralSignals,
    &OracleSurface,
    &BeyondTestedPoints,
    &Differential,
    &Consensus,
    &HiddenTargets,
    &ModelReview,
];

fn record(report: &mut FitReport, layer: Layer, outcome: Outcome, ms: u64) {
    match outcome {
        Outcome::Ran { note, findings } => report.merge(layer, note, findings, ms),
        Outcome::NotRun(why) => {
            report.not_run.insert(layer, why);
            report.ms += ms;
        }
    }
}

/// The pure layers `opts` asks for on `fit`.
pub fn assess(fit: &FitInput, opts: &FitOptions) -> FitReport {
    pure_pass(fit, opts).0
}

/// The pure layers `opts` asks for, each assessed once, and the asked layers that need a
/// sandbox instead.
fn pure_pass(fit: &FitInput, opts: &FitOptions) -> (FitReport, Vec<&'static dyn EvidenceLayer>) {
    let mut report = FitReport::default();
    let mut dynamic = Vec::new();
    for &l in LAYERS.iter().filter(|l| l.asked(opts)) {
        let started = Instant::now();
        match l.assess(fit, opts) {
            Some(o) => record(&mut report, l.layer(), o, ms_since(started)),
            None => dynamic.push(l),
        }
    }
    (report, dynamic)
}

fn ms_since(t: Instant) -> u64 {
    t.elapsed().as_millis() as u64
}

/// Every layer `opts` asks for: the pure ones, the caller's own findings (`opts.given`,
/// judged like the structural signals'), then the dynamic ones in `run`'s sandbox.
pub async fn run(fit: &FitInput, opts: &FitOptions, input: &RunInput<'_>) -> FitReport {
    let (mut report, dynamic) = pure_pass(fit, opts);
    report.findings.extend(opts.given.iter().cloned());
    for l in dynamic {
        let started = Instant::now();
        let o = l.run(fit, input).await;
        record(&mut report, l.layer(), o, ms_since(started));
    }
    report
}

/// The renames of a patch: new path → old path.
pub fn renamed(files: &[FilePatch]) -> BTreeMap<String, String> {
    files
        .iter()
        .filter_map(|f| Some((f.new_path.clone()?, f.old_path.clone()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_layer_is_listed_once_and_the_option_switches_reach_them() {
        let names: Vec<&str> = LAYERS.iter().map(|l| l.layer().as_str()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "{names:?}");
        let asked = |o: &FitOptions| -> Vec<&str> {
            LAYERS
                .iter()
                .filter(|l| l.asked(o))
                .map(|l| l.layer().as_str())
                .collect()
        };
        assert!(asked(&FitOptions::off()).is_empty());
        assert_eq!(
            asked(&FitOptions::default()),
            [
                "structural_signals",
                "oracle_surface",
                "beyond_tested_points",
                "differential",
                "consensus"
            ]
        );
        // The pure layers answer without a sandbox; the dynamic ones do not.
        let fit = FitInput::default();
        let pure: Vec<&str> = LAYERS
            .iter()
            .filter(|l| l.assess(&fit, &FitOptions::default()).is_some())
            .map(|l| l.layer().as_str())
            .collect();
        assert_eq!(pure, ["structural_signals", "oracle_surface", "consensus"]);
    }

    #[test]
    fn the_consensus_layer_reports_what_the_search_found_and_says_when_nothing_was_compared() {
        let finding = Finding {
            layer: Layer::Consensus,
            kind: "no_majority".into(),
            path: "pkg/c.py".into(),
            line: 3,
            evidence: "raises TypeError".into(),
            input: Some("f(129)".into()),
            detail: "disagree".into(),
        };
        let opts = FitOptions {
            consensus: Some(Evidence {
                note: "2 passing candidate(s) compared".into(),
                findings: vec![finding.clone()],
                not_run: None,
            }),
            ..FitOptions::default()
        };
        let r = assess(&FitInput::default(), &opts);
        assert_eq!(r.of(Layer::Consensus).collect::<Vec<_>>(), [&finding]);
        assert_eq!(
            r.notes.get(&Layer::Consensus).map(String::as_str),
            Some("2 passing candidate(s) compared")
        );
        let none = assess(&FitInput::default(), &FitOptions::default());
        assert!(none.of(Layer::Consensus).next().is_none());
        assert!(
            none.not_run[&Layer::Consensus].contains("no other passing candidate"),
            "{:?}",
            none.not_run
        );
        // Only the layers switched off: the search's evidence still reaches the verdict.
        let off = FitOptions {
            consensus: opts.consensus.clone(),
            ..FitOptions::off()
        };
        assert_eq!(assess(&FitInput::default(), &off).findings, [finding]);
    }
}
