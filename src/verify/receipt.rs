//! The receipt: everything a reviewer needs to trust (or not) a verdict, as JSON for machines
//! and Markdown for a PR comment or job summary. Building and rendering are pure.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context as _;
use serde::Serialize;
use sha2::{Digest, Sha256};

pub use super::attempts::RepairAttempt;
use super::diff::FilePatch;
use super::evidence::Layer as FitLayer;
use super::fit::FitReport;
use super::junit::TestOutcome;
use super::policy::{Rule, Violation};
use super::verdict::{Decision, Phase, RunRecord, Verdict};
use crate::config::repair::Strategy;
use crate::sandbox::output::clip_chars;
use crate::sandbox::policy::ContainerPolicy;

pub const SCHEMA: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct ImageInfo {
    pub tag: String,
    /// The image id (`sha256:…`) the runs used, when known.
    pub id: Option<String>,
    /// How the environment differs from the repository's CI (label `patchloop.env_note`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FileChange {
    pub path: String,
    pub old_path: Option<String>,
    pub change: String,
    pub added: usize,
    pub removed: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct PatchInfo {
    pub sha256: String,
    pub bytes: usize,
    pub files: Vec<FileChange>,
}

impl PatchInfo {
    pub fn new(patch: &str, files: &[FilePatch]) -> Self {
        PatchInfo {
            sha256: hex::encode(Sha256::digest(patch.as_bytes())),
            bytes: patch.len(),
            files: files
                .iter()
                .map(|f| {
                    let (added, removed) = f.line_counts();
                    FileChange {
                        path: f.path().to_string(),
                        old_path: f
                            .old_path
                            .clone()
                            .filter(|o| Some(o) != f.new_path.as_ref() && f.new_path.is_some()),
                        change: f.kind.to_string(),
                        added,
                        removed,
                    }
                })
                .collect(),
        }
    }
}

pub use super::scan::AnalysisInfo;

/// One integrity layer's summary line.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Layer {
    pub layer: &'static str,
    /// `clean`, `findings`, `not_run` or `not_applicable`.
    pub status: &'static str,
    pub detail: String,
}

fn layer(layer: &'static str, status: &'static str, detail: String) -> Layer {
    Layer {
        layer,
        status,
        detail,
    }
}

/// The layers of the verdict: patch policy, semantic analysis, the in-process guard, the
/// out-of-process checks (outcome stream, report fingerprints, workspace snapshots) and the
/// second runner; then the generalisation layers (fixed or fitted).
fn layers(
    violations: &[Violation],
    analysis: &AnalysisInfo,
    runs: &[RunRecord],
    second: Option<&super::verdict::SecondRun>,
    fit: Option<&FitReport>,
    hidden: &Hidden,
) -> Vec<Layer> {
    use super::verdict::GuardStatus;
    let mut out = vec![match violations.first() {
        Some(v) => layer(
            "patch_policy",
            "findings",
            format!(
                "{} violation(s), first `{}` on `{}`",
                violations.len(),
                v.rule,
                v.path
            ),
        ),
        None => layer("patch_policy", "clean", "no rule fired".into()),
    }];
    out.push(if analysis.scanned.is_empty() {
        layer(
            "semantic_analysis",
            "not_run",
            "no non-test Python file was read".into(),
        )
    } else if analysis.findings.is_empty() {
        layer(
            "semantic_analysis",
            "clean",
            format!(
                "{} file(s) scanned, no capability added",
                analysis.scanned.len()
            ),
        )
    } else {
        layer(
            "semantic_analysis",
            "findings",
            analysis
                .findings
                .iter()
                .map(|f| f.to_string())
                .collect::<Vec<_>>()
                .join("; "),
        )
    });
    let after: Vec<&RunRecord> = runs.iter().filter(|r| r.phase == Phase::After).collect();
    if after.is_empty() {
        out.push(layer("guard", "not_run", "no patched run".into()));
        out.push(layer(
            "outcome_stream_and_reports",
            "not_run",
            "no patched run".into(),
        ));
    } else {
        let tampered = after
            .iter()
            .filter(|r| matches!(r.guard, GuardStatus::Tampered { .. } | GuardStatus::Missing))
            .count();
        let na = after.iter().all(|r| r.guard == GuardStatus::NotApplicable);
        out.push(if na {
            layer(
                "guard",
                "not_applicable",
                "no in-process guard for this project kind".into(),
            )
        } else if tampered == 0 {
            layer(
                "guard",
                "clean",
                format!("clean in {} patched run(s)", after.len()),
            )
        } else {
            layer(
                "guard",
                "findings",
                format!(
                    "tampered or missing in {tampered} of {} patched run(s)",
                    after.len()
                ),
            )
        });
        let ext: Vec<&String> = after.iter().flat_map(|r| &r.external_findings).collect();
        out.push(if ext.is_empty() {
            layer(
                "outcome_stream_and_reports",
                "clean",
                "every JUnit pass streamed as it happened; reports and workspace unchanged".into(),
            )
        } else {
            layer(
                "outcome_stream_and_reports",
                "findings",
                ext.iter()
                    .take(5)
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        });
    }
    out.push(match second {
        None => layer("second_runner", "not_run", "not run".into()),
        Some(s) => match &s.problem {
            Some(p) => layer("second_runner", "findings", p.clone()),
            None => {
                let count = |o: &str| s.results.values().filter(|r| r.outcome == o).count();
                let na: Vec<String> = s
                    .results
                    .iter()
                    .filter(|(_, r)| r.outcome == "not_applicable")
                    .map(|(id, r)| format!("{id}: {}", r.detail))
                    .collect();
                let mut d = format!(
                    "{} passed, {} failed, {} not applicable",
                    count("passed"),
                    count("failed"),
                    na.len()
                );
                if !na.is_empty() {
                    d.push_str(&format!(" ({})", na.join("; ")));
                }
                let status = if count("failed") > 0 {
                    "findings"
                } else if count("passed") == 0 {
                    "not_applicable"
                } else {
                    "clean"
                };
                layer("second_runner", status, d)
            }
        },
    });
    for l in crate::verify::layers::LAYERS.iter() {
        out.push(fit_layer(l.layer(), fit, hidden));
    }
    out
}

/// Held-out test files and what became of their tests.
#[derive(Debug, Default)]
struct Hidden {
    files: Vec<String>,
    /// Fail-to-pass ids in a held-out file.
    targets: Vec<String>,
    /// Of those, the ones still failing after the patch.
    failing: Vec<String>,
}

fn fit_layer(l: FitLayer, fit: Option<&FitReport>, hidden: &Hidden) -> Layer {
    let name = l.as_str();
    if l == FitLayer::HiddenTargets {
        return if hidden.files.is_empty() {
            layer(name, "not_applicable", "no test was held out".into())
        } else if !hidden.failing.is_empty() {
            layer(
                name,
                "findings",
                format!(
                    "held-out test(s) the patch does not make pass: {}",
                    hidden.failing.join(", ")
                ),
            )
        } else if hidden.targets.is_empty() {
            layer(
                name,
                "clean",
                format!(
                    "{} held-out file(s) copied in for verification; no fail-to-pass test among them",
                    hidden.files.len()
                ),
            )
        } else {
            layer(
                name,
                "clean",
                format!(
                    "{} held-out fail-to-pass test(s) required too: {}",
                    hidden.targets.len(),
                    hidden.targets.join(", ")
                ),
            )
        };
    }
    let Some(f) = fit else {
        return layer(
            name,
            "not_run",
            "not reached: the patch was stopped earlier, or the layers are off".into(),
        );
    };
    if let Some(why) = f.not_run.get(&l) {
        return layer(name, "not_run", why.clone());
    }
    let Some(note) = f.notes.get(&l) else {
        return layer(
            name,
            "not_run",
            if l == FitLayer::ModelReview {
                "off (set `verify.review_model` to turn it on)".into()
            } else {
                "off".into()
            },
        );
    };
    let found: Vec<String> = f.of(l).map(|x| x.to_string()).collect();
    if found.is_empty() {
        layer(name, "clean", note.clone())
    } else {
        layer(name, "findings", found.join("; "))
    }
}

/// What `verified` means, in every receipt (docs/security.md says the same at length).
pub const VERIFIED_COVERS: &str = "the failing tests fail in every run before the patch and pass in every run after it; no passing test regresses; the patch policy, the capability scan, the in-process guard, the outcome stream and workspace snapshots, and the second runner found no tampering; the generalisation layers (structural signals, oracle surface, behaviour beyond the tested points, generated inputs through the code before and after the patch, the repair search's other passing candidates on such inputs when it had any, held-out tests when given, a model review when configured) found no sign of a patch fitted to the tests";
pub const VERIFIED_CANNOT: &str = "prove the patch right on inputs no test, variant or signal reaches; probe functions the patch adds, functions it changes without adding a decision or a type read, inputs the failing tests never pass to a changed function, or non-Python projects; recognise a fitted patch in a shape none of the layers names; vouch for behaviour the tests do not exercise";

#[derive(Debug, Clone, Serialize)]
pub struct PolicyInfo {
    pub rule_fired: Option<Rule>,
    pub violations: Vec<Violation>,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    FailToPass,
    PassToPass,
    Other,
}

#[derive(Debug, Clone, Serialize)]
pub struct TestRow {
    pub id: String,
    pub role: Role,
    pub before: Vec<TestOutcome>,
    pub after: Vec<TestOutcome>,
    /// Mean duration over the patched runs, milliseconds.
    pub mean_ms_after: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Receipt {
    pub schema: u32,
    /// verdict, reason and the id lists, at the top level of the JSON.
    #[serde(flatten)]
    pub decision: Decision,
    pub reruns: usize,
    pub image: ImageInfo,
    pub container_policy: ContainerPolicy,
    pub patch: PatchInfo,
    pub policy: PolicyInfo,
    pub analysis: AnalysisInfo,
    /// The second, independent runner of the fail-to-pass tests (`None`: not run).
    pub second_runner: Option<super::verdict::SecondRun>,
    /// The generalisation layers' findings and notes (`None`: not reached or off).
    #[serde(rename = "generalisation", skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitReport>,
    /// What each layer found, integrity layers first, in the order the verdict consults them.
    pub layers: Vec<Layer>,
    /// What a `verified` verdict covers and what it cannot.
    pub contract: Contract,
    /// The hardened command every run used (before the test ids).
    pub command: Vec<String>,
    pub holdout_files: Vec<String>,
    pub runs: Vec<RunRecord>,
    pub tests: Vec<TestRow>,
    pub total_ms: u64,
    /// Time spent inside the test runs themselves.
    pub tests_ms: u64,
    /// How the patch was found: each strategy × model tier tried, in order, with its spend
    /// (filled by the pipeline; empty when the verifier ran alone, e.g. `patchloop verify`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repair: Vec<RepairAttempt>,
    /// The stages the search skipped and why it ended (filled by the pipeline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<super::attempts::SearchRecord>,
    /// What the whole search spent against its budget, in total and per model tier (filled
    /// by the pipeline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spend: Option<super::attempts::SpendReport>,
    /// How the repair's fault localization ranked the code it showed the model (filled by
    /// the pipeline): the traced spectrum, the static fallback, or why there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub localization: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Contract {
    pub verified_covers: &'static str,
    pub verified_cannot: &'static str,
}

impl Default for Contract {
    fn default() -> Self {
        Contract {
            verified_covers: VERIFIED_COVERS,
            verified_cannot: VERIFIED_CANNOT,
        }
    }
}

pub struct ReceiptInputs<'a> {
    pub decision: Decision,
    pub reruns: usize,
    pub image: ImageInfo,
    pub container_policy: ContainerPolicy,
    pub patch: PatchInfo,
    pub violations: Vec<Violation>,
    pub command: Vec<String>,
    pub holdout_files: Vec<String>,
    pub fail_to_pass: &'a [String],
    pub before: Vec<RunRecord>,
    pub after: Vec<RunRecord>,
    pub analysis: AnalysisInfo,
    pub second_runner: Option<super::verdict::SecondRun>,
    pub fit: Option<FitReport>,
    pub total_ms: u64,
}

pub fn build(inp: ReceiptInputs) -> Receipt {
    let f2p: BTreeSet<&String> = inp.fail_to_pass.iter().collect();
    let p2p: BTreeSet<&String> = inp.decision.pass_to_pass.iter().collect();
    let mut ids: BTreeSet<String> = inp.fail_to_pass.iter().cloned().collect();
    for r in inp.before.iter().chain(&inp.after) {
        if let Some(m) = &r.results {
            ids.extend(m.keys().cloned());
        }
    }
    let mut tests: Vec<TestRow> = ids
        .into_iter()
        .map(|id| {
            let role = if f2p.contains(&id) {
                Role::FailToPass
            } else if p2p.contains(&id) {
                Role::PassToPass
            } else {
                Role::Other
            };
            let durations: Vec<u128> = inp
                .after
                .iter()
                .filter_map(|r| r.results.as_ref()?.get(&id)?.duration)
                .map(|d| d.as_millis())
                .collect();
            TestRow {
                before: inp.before.iter().map(|r| r.outcome(&id)).collect(),
                after: inp.after.iter().map(|r| r.outcome(&id)).collect(),
                mean_ms_after: (!durations.is_empty())
                    .then(|| (durations.iter().sum::<u128>() / durations.len() as u128) as u64),
                id,
                role,
            }
        })
        .collect();
    tests.sort_by(|a, b| (a.role, &a.id).cmp(&(b.role, &b.id)));
    let runs: Vec<RunRecord> = inp.before.into_iter().chain(inp.after).collect();
    let in_hidden = |id: &String| {
        let file = crate::testid::file_of(id);
        inp.holdout_files
            .iter()
            .any(|h| h == file || file.starts_with(&format!("{}/", h.trim_end_matches('/'))))
    };
    let hidden = Hidden {
        files: inp.holdout_files.clone(),
        targets: inp
            .fail_to_pass
            .iter()
            .filter(|i| in_hidden(i))
            .cloned()
            .collect(),
        failing: inp
            .decision
            .still_failing
            .iter()
            .chain(&inp.decision.flaky_ids)
            .filter(|i| in_hidden(i))
            .cloned()
            .collect(),
    };
    let layers = layers(
        &inp.violations,
        &inp.analysis,
        &runs,
        inp.second_runner.as_ref(),
        inp.fit.as_ref(),
        &hidden,
    );
    let tests_ms = runs.iter().map(|r| r.duration.as_millis() as u64).sum();
    Receipt {
        schema: SCHEMA,
        decision: inp.decision,
        reruns: inp.reruns,
        image: inp.image,
        container_policy: inp.container_policy,
        patch: inp.patch,
        policy: PolicyInfo {
            rule_fired: inp.violations.first().map(|v| v.rule),
            violations: inp.violations,
        },
        analysis: inp.analysis,
        second_runner: inp.second_runner,
        fit: inp.fit,
        layers,
        contract: Contract::default(),
        command: inp.command,
        holdout_files: inp.holdout_files,
        runs,
        tests,
        total_ms: inp.total_ms,
        tests_ms,
        repair: Vec::new(),
        search: None,
        spend: None,
        localization: None,
    }
}

fn outcomes(o: &[TestOutcome]) -> String {
    if o.is_empty() {
        return "–".into();
    }
    // Collapse identical runs: "passed ×3".
    let first = o[0];
    if o.iter().all(|x| *x == first) {
        return format!("{} ×{}", first.as_str(), o.len());
    }
    o.iter().map(|x| x.as_str()).collect::<Vec<_>>().join(", ")
}

fn md_escape(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ").replace('`', "'")
}

/// The Markdown receipt. Only target tests and tests that did not pass every time are listed
/// row by row; the rest are counted, so the comment stays readable on large suites.
pub fn render_markdown(r: &Receipt) -> String {
    let mut s = String::new();
    let icon = if r.decision.verdict == Verdict::Verified {
        "✅"
    } else {
        "❌"
    };
    let _ = writeln!(
        s,
        "### {icon} patchloop verification: `{}`\n",
        r.decision.verdict.as_str()
    );
    let _ = writeln!(s, "{}\n", md_escape(&r.decision.reason));
    if !r.policy.violations.is_empty() {
        let _ = writeln!(
            s,
            "**Patch policy**\n\n| rule | path | why |\n|---|---|---|"
        );
        for v in &r.policy.violations {
            let _ = writeln!(
                s,
                "| `{}` | `{}` | {} |",
                v.rule,
                md_escape(&v.path),
                md_escape(&v.detail)
            );
        }
        s.push('\n');
    }
    if !r.layers.is_empty() {
        let _ = writeln!(
            s,
            "**Layers** (integrity, then fixed-or-fitted)\n\n| layer | status | what it found |\n|---|---|---|"
        );
        for l in &r.layers {
            let _ = writeln!(
                s,
                "| {} | `{}` | {} |",
                l.layer,
                l.status,
                md_escape(&l.detail)
            );
        }
        s.push('\n');
    }
    if !r.analysis.findings.is_empty() {
        let _ = writeln!(
            s,
            "**Semantic patch analysis**: capabilities the patch adds\n\n| file | line | capability | what |\n|---|---|---|---|"
        );
        for f in &r.analysis.findings {
            let _ = writeln!(
                s,
                "| `{}` | {} | `{}` | {} |",
                md_escape(&f.path),
                f.line,
                f.capability,
                md_escape(&f.detail)
            );
        }
        s.push('\n');
    }
    let listed: Vec<&TestRow> = r
        .tests
        .iter()
        .filter(|t| {
            t.role != Role::Other
                && (t.role == Role::FailToPass
                    || t.after.iter().any(|o| *o != TestOutcome::Passed)
                    || t.before.iter().any(|o| *o != TestOutcome::Passed))
                || (t.role == Role::Other && t.after.iter().any(|o| *o != TestOutcome::Passed))
        })
        .collect();
    if !r.tests.is_empty() {
        let _ = writeln!(
            s,
            "**Tests** ({} before-runs, {} after-runs)\n\n| test | role | before | after | mean time |\n|---|---|---|---|---|",
            r.runs.iter().filter(|x| x.phase == Phase::Before).count(),
            r.runs.iter().filter(|x| x.phase == Phase::After).count()
        );
        for t in &listed {
            let role = match t.role {
                Role::FailToPass => "fail→pass",
                Role::PassToPass => "pass→pass",
                Role::Other => "other",
            };
            let _ = writeln!(
                s,
                "| `{}` | {role} | {} | {} | {} |",
                md_escape(&t.id),
                outcomes(&t.before),
                outcomes(&t.after),
                t.mean_ms_after
                    .map(|m| format!("{m} ms"))
                    .unwrap_or_else(|| "–".into())
            );
        }
        let rest = r.tests.len() - listed.len();
        if rest > 0 {
            let _ = writeln!(s, "\n{rest} more tests passed in every run.");
        }
        s.push('\n');
    }
    let lists: [(&str, &Vec<String>); 3] = [
        ("Flipping between runs", &r.decision.flaky_ids),
        (
            "Failing before the patch (reported, not counted)",
            &r.decision.pre_existing_failures,
        ),
        (
            "Not collected by the hardened run before the patch (not checked)",
            &r.decision.not_collected,
        ),
    ];
    for (title, ids) in lists {
        if !ids.is_empty() {
            let _ = writeln!(
                s,
                "**{title}**: {}\n",
                ids.iter()
                    .map(|i| format!("`{}`", md_escape(i)))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    // Which pytest ran, when it was not the project's own (its pins did not import here).
    let mut notes: Vec<&str> = r
        .runs
        .iter()
        .filter_map(|x| x.pytest.as_deref())
        .filter(|p| p.starts_with("harness"))
        .collect();
    notes.dedup();
    for n in notes {
        let _ = writeln!(s, "**Test runner**: pytest {}\n", md_escape(n));
    }
    if let Some(f) = r.fit.as_ref().filter(|f| !f.findings.is_empty()) {
        render_fit(&mut s, f);
    }
    let _ = writeln!(
        s,
        "**What `verified` covers**: {}. **What it cannot**: {}.\n",
        r.contract.verified_covers, r.contract.verified_cannot
    );
    if let Some(l) = &r.localization {
        let _ = writeln!(s, "**Fault localization**: {l}.\n");
    }
    render_attempts(&mut s, &r.repair);
    if let Some(x) = &r.search {
        render_search(&mut s, x);
    }
    let _ = writeln!(s, "<details><summary>Patch and environment</summary>\n");
    let _ = writeln!(
        s,
        "- patch sha256 `{}` ({} bytes, {} files)",
        r.patch.sha256,
        r.patch.bytes,
        r.patch.files.len()
    );
    for f in &r.patch.files {
        let from = f
            .old_path
            .as_ref()
            .map(|o| format!(" (from `{}`)", md_escape(o)))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "  - `{}`{from}: {} +{} −{}",
            md_escape(&f.path),
            f.change,
            f.added,
            f.removed
        );
    }
    let _ = writeln!(
        s,
        "- image `{}`{}",
        md_escape(&r.image.tag),
        r.image
            .id
            .as_ref()
            .map(|i| format!(" (`{i}`)"))
            .unwrap_or_default()
    );
    if let Some(n) = &r.image.note {
        let _ = writeln!(s, "- environment note: {}", md_escape(n));
    }
    let p = &r.container_policy;
    if p.hardening != crate::sandbox::policy::Hardening::Hardened {
        let _ = writeln!(
            s,
            "- container: UNHARDENED control policy (not a valid verification)"
        );
    } else {
        let _ = writeln!(
            s,
            "- container: network none, read-only root, all capabilities dropped, no-new-privileges, uid 1000, {} MiB memory, {} pids, workspace {}, tests read-only: {}",
            p.memory_bytes >> 20,
            p.pids_limit,
            if p.workspace_bytes > 0 {
                format!("tmpfs of {} MiB", p.workspace_bytes >> 20)
            } else {
                "on disk (no quota)".to_string()
            },
            if p.read_only_paths.is_empty() {
                "none (hash-checked)".to_string()
            } else {
                p.read_only_paths.join(", ")
            }
        );
    }
    if !r.holdout_files.is_empty() {
        let _ = writeln!(s, "- held-out test files: {}", r.holdout_files.len());
    }
    if !r.command.is_empty() {
        let _ = writeln!(s, "- command: `{}`", md_escape(&r.command.join(" ")));
    }
    let focused = r
        .runs
        .iter()
        .filter(|x| x.scope == super::verdict::RunScope::FailToPass)
        .count();
    let _ = writeln!(
        s,
        "- re-runs: {}{}; time in test runs {:.1} s of {:.1} s total",
        r.reruns,
        if focused > 0 {
            format!(" ({focused} of them only the fail-to-pass tests, after a full run per phase)")
        } else {
            String::new()
        },
        r.tests_ms as f64 / 1000.0,
        r.total_ms as f64 / 1000.0
    );
    let _ = writeln!(s, "\n</details>");
    s
}

/// How the patch was found: one row per strategy × model tier. The model is named without
/// its endpoint (receipts are posted).
fn render_attempts(s: &mut String, attempts: &[RepairAttempt]) {
    if attempts.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "**How the patch was found**\n\n| tier | model | strategy | result | tokens | model time | time |\n|---|---|---|---|---|---|---|"
    );
    for a in attempts {
        let model = a.model.split(" at ").next().unwrap_or("").trim();
        let strategy = match a.strategy {
            Strategy::Candidates | Strategy::Shapes | Strategy::Sampled => format!(
                "{} ({} drawn, {} passed)",
                a.strategy.as_str(),
                a.candidates,
                a.passing
            ),
            other => other.as_str().to_string(),
        };
        let mut strategy = match a.why.as_str() {
            "" => strategy,
            why => format!("{strategy}; routed: {why}"),
        };
        if let Some(ms) = a.share_ms {
            strategy.push_str(&format!("; share {:.0} s", ms as f64 / 1000.0));
        }
        if !a.stop.is_empty() {
            strategy.push_str(&format!("; ended: {}", a.stop));
        }
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | `{}` | {} | {:.1} s | {:.1} s |",
            a.tier,
            md_escape(model),
            md_escape(&strategy),
            md_escape(a.result.as_str()),
            a.tokens,
            a.model_ms as f64 / 1000.0,
            a.wall_ms as f64 / 1000.0
        );
    }
    s.push('\n');
}

fn render_search(s: &mut String, x: &super::attempts::SearchRecord) {
    for k in &x.skipped {
        let _ = writeln!(
            s,
            "- skipped `{}` on tier {}: {}",
            k.strategy.as_str(),
            k.tier,
            md_escape(&k.why)
        );
    }
    if !x.ended.is_empty() {
        let _ = writeln!(s, "\n**The search ended**: {}.\n", md_escape(&x.ended));
    }
}

/// Findings listed in the Markdown receipt (all are in the JSON).
const FIT_ROWS: usize = 10;
const FIT_VALUE_CHARS: usize = 80;

fn render_fit(s: &mut String, f: &FitReport) {
    let _ = writeln!(
        s,
        "**Fixed or fitted?** Evidence that the patch fits the tests rather than fixes the code:\n\n| where | layer | rule | evidence | input | why |\n|---|---|---|---|---|---|"
    );
    let cut = |v: &str| md_escape(&clip_chars(v, FIT_VALUE_CHARS));
    for x in f.findings.iter().take(FIT_ROWS) {
        let at = if x.line > 0 {
            format!("{}:{}", x.path, x.line)
        } else {
            x.path.clone()
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | `{}` | `{}` | {} | {} |",
            md_escape(&at),
            x.layer,
            md_escape(&x.kind),
            cut(&x.evidence),
            x.input
                .as_deref()
                .map(|i| format!("`{}`", cut(i)))
                .unwrap_or_else(|| "–".into()),
            md_escape(&clip_chars(&x.detail, 240)),
        );
    }
    if f.findings.len() > FIT_ROWS {
        let _ = writeln!(s, "\n{} more in receipt.json.", f.findings.len() - FIT_ROWS);
    }
    s.push('\n');
}

/// Write `receipt.json` and `receipt.md` into `dir` (created if needed).
pub fn write(dir: &Path, r: &Receipt) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating the receipt directory {}", dir.display()))?;
    let json = serde_json::to_string_pretty(r).context("serialising the receipt")?;
    let jp = dir.join("receipt.json");
    std::fs::write(&jp, json).with_context(|| format!("writing {}", jp.display()))?;
    let mp = dir.join("receipt.md");
    std::fs::write(&mp, render_markdown(r)).with_context(|| format!("writing {}", mp.display()))?;
    Ok(())
}

/// Index ids by their JUnit key, for naming cases by their real node ids.
pub fn known_ids<'a>(ids: impl IntoIterator<Item = &'a String>) -> BTreeMap<String, String> {
    ids.into_iter()
        .map(|id| (super::junit::key_for_node_id(id), id.clone()))
        .collect()
}

#[cfg(test)]
#[path = "receipt_tests.rs"]
mod tests;
