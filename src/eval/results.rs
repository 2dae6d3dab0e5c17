//! Episode results on disk: `results/<run-id>/episodes/<instance>__<attempt>.json`, each with
//! its trajectory beside it (`.traj.jsonl`). A result file is written last, atomically, so its
//! presence means the episode finished (that is what resuming relies on).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bench::task::Origin;

/// What a task's hidden check said about an episode's patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HiddenCheck {
    /// Every test of the check passed on the patched tree.
    Passed,
    /// A test of the check failed (or the patched code did not import, or hung).
    Failed,
    /// The task has no hidden check.
    None,
    /// The patch was not verified, so the check did not run.
    NotRun,
    /// The check itself could not run (no report, no test collected): a defect of the check.
    Error,
}

impl HiddenCheck {
    pub fn as_str(self) -> &'static str {
        match self {
            HiddenCheck::Passed => "passed",
            HiddenCheck::Failed => "failed",
            HiddenCheck::None => "none",
            HiddenCheck::NotRun => "not_run",
            HiddenCheck::Error => "error",
        }
    }

    /// Whether a verified patch with this outcome resolves its task.
    pub fn allows_resolved(self) -> bool {
        matches!(self, HiddenCheck::Passed | HiddenCheck::None)
    }
}

/// One finished episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeResult {
    pub instance_id: String,
    /// 0-based attempt number (`--attempts K` runs 0..K).
    pub attempt: u32,
    pub run_id: String,
    pub model: String,
    /// The task is resolved: the verifier's verdict is `verified` and the task's hidden check
    /// passed on the patch (or the task has none). Older results: the verdict alone.
    pub resolved: bool,
    /// The verifier's verdict, or `error` when the episode could not run.
    pub verdict: crate::verify::verdict::Verdict,
    /// Why the agent stopped (e.g. `submitted`, `step_budget`), or `error`.
    pub stop_reason: String,
    #[serde(default)]
    pub steps: usize,
    /// Whole episode: prepare, agent, verification.
    pub wall_ms: u64,
    #[serde(default)]
    pub total_tokens: u64,
    #[serde(default)]
    pub cost_usd: f64,
    #[serde(default)]
    pub patch: String,
    /// Trajectory file name, relative to the episodes directory.
    #[serde(default)]
    pub trajectory: Option<String>,
    /// What went wrong when the episode itself failed (infrastructure, not the model).
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub finished_unix: u64,
    /// Where the wall time went (absent in results from older versions and on errors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<Timings>,
    /// Time the model server spent answering, over every strategy and tier.
    #[serde(default)]
    pub model_ms: u64,
    /// Each strategy × model tier tried, in order (empty in older results).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<crate::verify::receipt::RepairAttempt>,
    /// The task's bench (absent in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// What the task's hidden check said about the patch (absent in older results, which
    /// had no such stage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden_check: Option<HiddenCheck>,
    /// The hidden check's failing tests and messages, or why it could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden_check_detail: Option<String>,
    /// How far the task got, stage by stage (absent in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub funnel: Option<crate::eval::funnel::Funnel>,
}

/// Milliseconds per phase of one episode. `tests_ms` is the part of `verify_ms` the test
/// command itself ran (the receipt's runs): the floor any harness must pay.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timings {
    /// Building the task's image (first attempt of a task only; later ones reuse it).
    pub prepare_ms: u64,
    pub episode_ms: u64,
    pub verify_ms: u64,
    pub tests_ms: u64,
}

impl EpisodeResult {
    /// The verifier's verdict alone (`resolved` also needs the hidden check).
    pub fn verified(&self) -> bool {
        self.verdict == crate::verify::verdict::Verdict::Verified
    }

    /// The verdict, and the hidden check where it changes the outcome, for progress lines.
    pub fn outcome_label(&self) -> String {
        match self.hidden_check {
            Some(h @ (HiddenCheck::Failed | HiddenCheck::Error)) => {
                format!("{}, hidden check {}", self.verdict.as_str(), h.as_str())
            }
            _ => self.verdict.as_str().to_string(),
        }
    }

    pub fn file_stem(instance_id: &str, attempt: u32) -> String {
        let safe: String = instance_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.+".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        format!("{safe}__{attempt}")
    }
}

pub fn run_dir(results_root: &Path, run_id: &str) -> PathBuf {
    results_root.join(run_id)
}

pub fn episodes_dir(results_root: &Path, run_id: &str) -> PathBuf {
    run_dir(results_root, run_id).join("episodes")
}

#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    #[error(
        "no results for run {run_id:?} under {dir}: run `patchloop eval --run-id {run_id} ...` first, or pass --results with the directory that holds it"
    )]
    NoRun { run_id: String, dir: String },
    #[error("cannot read {path}: {reason}")]
    Read { path: String, reason: String },
}

/// Every result of a run, sorted by instance id then attempt.
pub fn load_run(results_root: &Path, run_id: &str) -> Result<Vec<EpisodeResult>, ResultsError> {
    let dir = episodes_dir(results_root, run_id);
    let entries = std::fs::read_dir(&dir).map_err(|_| ResultsError::NoRun {
        run_id: run_id.to_string(),
        dir: dir.display().to_string(),
    })?;
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| ResultsError::Read {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        let r: EpisodeResult = serde_json::from_str(&text).map_err(|e| ResultsError::Read {
            path: path.display().to_string(),
            reason: format!("not an episode result: {e}"),
        })?;
        out.push(r);
    }
    out.sort_by(|a, b| (&a.instance_id, a.attempt).cmp(&(&b.instance_id, b.attempt)));
    Ok(out)
}

/// Write a result atomically (temp file + rename), so a crash never leaves half a result.
pub fn write_result(dir: &Path, r: &EpisodeResult) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let stem = EpisodeResult::file_stem(&r.instance_id, r.attempt);
    let path = dir.join(format!("{stem}.json"));
    let tmp = dir.join(format!(".{stem}.json.tmp"));
    let text = serde_json::to_string_pretty(r).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn result(id: &str, attempt: u32, resolved: bool) -> EpisodeResult {
        EpisodeResult {
            instance_id: id.into(),
            attempt,
            run_id: "r1".into(),
            model: "oracle".into(),
            resolved,
            verdict: if resolved {
                crate::verify::verdict::Verdict::Verified
            } else {
                crate::verify::verdict::Verdict::StillFailing
            },
            stop_reason: "submitted".into(),
            steps: 3,
            wall_ms: 2000,
            total_tokens: 1000,
            cost_usd: 0.01,
            patch: "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n".into(),
            trajectory: None,
            error: None,
            finished_unix: 1,
            timings: None,
            model_ms: 0,
            attempts: Vec::new(),
            origin: None,
            hidden_check: None,
            hidden_check_detail: None,
            funnel: None,
        }
    }

    #[test]
    fn older_results_load_and_new_fields_round_trip() {
        // A result written before benches and hidden checks existed.
        let old = r#"{"instance_id":"a","attempt":0,"run_id":"r","model":"m","resolved":true,"verdict":"verified","stop_reason":"submitted","wall_ms":1}"#;
        let r: EpisodeResult = serde_json::from_str(old).unwrap();
        assert_eq!((r.origin, r.hidden_check), (None, None));
        assert!(r.verified() && r.resolved);
        let mut r = result("a", 0, false);
        r.origin = Some(Origin::Real);
        r.hidden_check = Some(HiddenCheck::Failed);
        r.hidden_check_detail = Some("test_x: assert 1 == 2".into());
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains(r#""origin":"real""#), "{text}");
        assert!(text.contains(r#""hidden_check":"failed""#), "{text}");
        assert_eq!(serde_json::from_str::<EpisodeResult>(&text).unwrap(), r);
        r.verdict = crate::verify::verdict::Verdict::Verified;
        assert_eq!(r.outcome_label(), "verified, hidden check failed");
        r.hidden_check = Some(HiddenCheck::Passed);
        assert_eq!(r.outcome_label(), "verified");
    }

    #[test]
    fn write_then_load_sorted() {
        let root = tempfile::tempdir().unwrap();
        let dir = episodes_dir(root.path(), "r1");
        write_result(&dir, &result("b/x", 0, true)).unwrap();
        write_result(&dir, &result("a", 1, false)).unwrap();
        write_result(&dir, &result("a", 0, true)).unwrap();
        std::fs::write(dir.join("notes.txt"), "ignored").unwrap();
        let got = load_run(root.path(), "r1").unwrap();
        let keys: Vec<(String, u32)> = got
            .iter()
            .map(|r| (r.instance_id.clone(), r.attempt))
            .collect();
        assert_eq!(
            keys,
            vec![("a".into(), 0), ("a".into(), 1), ("b/x".into(), 0)]
        );
        assert!(dir.join("b_x__0.json").exists());
        let err = load_run(root.path(), "nope").unwrap_err().to_string();
        assert!(err.contains("patchloop eval --run-id nope"), "{err}");
        std::fs::write(dir.join("bad.json"), "{").unwrap();
        let err = load_run(root.path(), "r1").unwrap_err().to_string();
        assert!(err.contains("bad.json"), "{err}");
    }
}
