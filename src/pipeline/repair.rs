//! The real repair pipeline behind `patchloop action`: prepare → episode → verify, as a
//! [`Repairer`] the GitHub side calls. The GitHub token never reaches this code: the request
//! carries only the checkout, the model endpoint and the budgets.

use std::path::PathBuf;

use anyhow::Context;

use super::plan::{self, Outputs, RunSpec};
use super::targets::ids;
use super::{RepairResult, TargetSpec};
use crate::agent::model::{self, ModelOptions};
use crate::github::{Outcome, RepairOutcome, RepairRequest, Repairer};
use crate::verify::verdict::Verdict;

/// prepare + agent episode + fresh-container verification.
#[derive(Debug, Clone, Default)]
pub struct PipelineRepairer {
    /// Where patch.diff, trajectory.jsonl and the receipts go (one directory per SHA).
    /// `None`: `.patchloop/` inside the checkout, see [`OUT_DIR`].
    pub out_root: Option<PathBuf>,
}

/// Outputs directory inside the checkout. Not `$RUNNER_TEMP`: in a Docker action that
/// variable names a runner path that is not mounted into the action container, so files
/// written there are lost; the workspace is mounted, and later steps (on the host or in
/// containers) start in it, so a workspace-relative output path works for all of them.
pub const OUT_DIR: &str = ".patchloop";

impl PipelineRepairer {
    /// Outputs inside the checkout (`.patchloop/<sha>/`).
    pub fn from_env() -> Self {
        PipelineRepairer::default()
    }

    fn out_dir(&self, req: &RepairRequest) -> anyhow::Result<PathBuf> {
        let root = match &self.out_root {
            Some(r) => r.clone(),
            None => {
                let root = req.repo_dir.join(OUT_DIR);
                std::fs::create_dir_all(&root)
                    .with_context(|| format!("cannot create {}", root.display()))?;
                // Ignored by git (a clean `git status` for later steps) and left out of
                // sandbox images built from this checkout later.
                std::fs::write(root.join(".gitignore"), "*\n")
                    .with_context(|| format!("cannot write {}/.gitignore", root.display()))?;
                root
            }
        };
        Ok(root.join(&req.head_sha))
    }
}

#[async_trait::async_trait]
impl Repairer for PipelineRepairer {
    async fn repair(&self, req: RepairRequest) -> anyhow::Result<RepairOutcome> {
        let opts = ModelOptions {
            base_url: req.base_url.clone(),
            ollama_url: req.ollama_url.clone(),
            api_key: req.api_key.as_ref().map(|k| k.0.clone()),
            num_ctx: u32::try_from(req.config.budgets.context_tokens).ok(),
            ..ModelOptions::default()
        };
        let mut rp = plan::build(&req.config, req.model.as_deref(), true, &opts)
            .context("the repair configuration")?;
        // The action always verifies (a `reruns: 0` would post an unverified patch).
        rp.reruns = rp.reruns.max(1);
        let models = rp.models(None, &opts)?;
        let docker = crate::sandbox::connect_and_reap().await?;
        let test_cmd = req.test_cmd.clone().or(rp.test_cmd.clone());
        // Hidden targets: with failing tests in several files, one file stays out of the
        // episode's image and comes back only for verification, which requires its tests.
        let hidden = crate::verify::holdout::choose(&req.failing_tests);
        let (episode_tree, held_out) = hold_out(&req.repo_dir, &hidden)?;
        let image = super::prepare_image(
            &docker,
            episode_tree
                .as_ref()
                .map_or(req.repo_dir.as_path(), |t| t.path()),
            test_cmd.as_ref(),
            super::stderr_progress(),
        )
        .await?;
        let out_dir = self.out_dir(&req)?;
        std::fs::create_dir_all(&out_dir)
            .with_context(|| format!("cannot create {}", out_dir.display()))?;
        // The CI log's failing tests are the targets (the held-out file's are verified only);
        // other baseline failures are pre-existing (environment, unrelated), not the patch's job.
        let plan = rp.runtime(RunSpec {
            test_cmd: super::fix::chosen_command(test_cmd.as_ref(), &image),
            targets: TargetSpec::Reproduce {
                named: ids(&hidden.shown),
                held_out,
            },
            statement: None,
            outputs: Outputs::Dir(out_dir.clone()),
            run_id: format!(
                "action-{}",
                req.head_sha.chars().take(12).collect::<String>()
            ),
            base_repo: Some(req.repo_dir.clone()),
            review: rp.review(&opts)?,
            cancel_on_signal: true,
            env_check: None,
        });
        tracing::info!(repository = %req.repository, pr = ?req.pr, sha = %req.head_sha, "repairing");
        let tiers: Vec<&dyn model::Model> = models.iter().map(|m| m.as_ref()).collect();
        let o = super::run_tiers(&docker, &image, &tiers, &plan)
            .await
            .context("running the repair episode")?;
        Ok(outcome(o, &out_dir))
    }
}

/// The GitHub side's view of a repair result. Pure.
fn outcome(o: RepairResult, out_dir: &std::path::Path) -> RepairOutcome {
    let verdict = match &o.receipt {
        // Only the verifier's `verified` counts, and only when the search took that patch.
        Some(r) if o.fixed() => Outcome::of_verdict(r.decision.verdict),
        Some(r) if r.decision.verdict != Verdict::Verified => {
            Outcome::of_verdict(r.decision.verdict)
        }
        _ if o.outcome == Outcome::NothingFailing => Outcome::NothingFailing,
        _ if o.patch.trim().is_empty() => Outcome::NoPatch,
        _ => Outcome::NotVerified,
    };
    let verified = verdict.verified();
    RepairOutcome {
        verdict,
        patch: o.patch.clone(),
        receipt_md: o
            .receipt
            .as_ref()
            .map(crate::verify::receipt::render_markdown)
            .unwrap_or_default(),
        receipt_json_path: o.receipt.as_ref().map(|_| out_dir.join("receipt.json")),
        patch_path: Some(out_dir.join("patch.diff")),
        explanation: String::new(),
        reason: if verified {
            String::new()
        } else {
            o.one_line()
        },
        model: o.model.clone(),
        cost_usd: o.spent.cost_usd,
        tokens: o.spent.usage.total(),
        seconds: o.wall.as_secs_f64(),
        spend: o.receipt.as_ref().and_then(|r| r.spend.clone()),
        attempts: o.attempts,
    }
}

/// A copy of the checkout without its `.git` and the held-out files (`None`: nothing held
/// out), and the held-out files' contents for verification.
fn hold_out(
    repo: &std::path::Path,
    hidden: &crate::verify::holdout::HiddenChoice,
) -> anyhow::Result<(Option<tempfile::TempDir>, super::HeldOut)> {
    if hidden.files.is_empty() {
        return Ok((None, super::HeldOut::default()));
    }
    let mut files = Vec::new();
    for f in &hidden.files {
        let contents = std::fs::read(repo.join(f))
            .with_context(|| format!("reading the held-out test file {f}"))?;
        files.push(crate::verify::Holdout {
            dest: f.clone(),
            contents,
        });
    }
    let tmp = tempfile::tempdir().context("creating the episode's copy of the checkout")?;
    copy_tree(repo, tmp.path(), &|rel| {
        rel == std::path::Path::new(".git")
            || hidden.files.iter().any(|f| rel == std::path::Path::new(f))
    })
    .with_context(|| format!("copying {} without the held-out tests", repo.display()))?;
    Ok((
        Some(tmp),
        super::HeldOut {
            files,
            tests: ids(&hidden.hidden),
        },
    ))
}

/// Files and directories of `src` into `dest`, but those `skip` names (by relative path);
/// symlinks are copied as links.
fn copy_tree(
    src: &std::path::Path,
    dest: &std::path::Path,
    skip: &dyn Fn(&std::path::Path) -> bool,
) -> std::io::Result<()> {
    let mut stack = vec![std::path::PathBuf::new()];
    while let Some(rel) = stack.pop() {
        std::fs::create_dir_all(dest.join(&rel))?;
        for e in std::fs::read_dir(src.join(&rel))? {
            let e = e?;
            let r = rel.join(e.file_name());
            if skip(&r) {
                continue;
            }
            let ft = e.file_type()?;
            if ft.is_dir() {
                stack.push(r);
            } else if ft.is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(e.path())?, dest.join(&r))?;
            } else if ft.is_file() {
                std::fs::copy(e.path(), dest.join(&r))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::{PreparedImage, VerifyRequest, error_receipt, policy::NoBase};

    fn result(outcome: Outcome, receipt: Option<Verdict>, patch: &str) -> RepairResult {
        let image = PreparedImage {
            tag: "t".into(),
            test_cmd: crate::testcmd::TestCommand::parse("python -m pytest").unwrap(),
            tests_dirs: vec!["tests".into()],
        };
        let req = VerifyRequest::new(image, String::new(), Vec::new());
        RepairResult {
            outcome,
            patch: patch.into(),
            after: None,
            model: "m".into(),
            targets: Default::default(),
            receipt: receipt.map(|v| {
                let mut r = error_receipt(&req, "x".into(), &NoBase);
                r.decision.verdict = v;
                r
            }),
            attempts: Vec::new(),
            strategy: None,
            stop: None,
            detail: String::new(),
            search: Default::default(),
            spent: Default::default(),
            wall: Default::default(),
            episode_wall: Default::default(),
            start: Default::default(),
            verify_wall: Default::default(),
        }
    }

    #[test]
    fn a_held_out_file_leaves_the_episode_tree_and_goes_to_verification() {
        let repo = tempfile::tempdir().unwrap();
        for (p, text) in [
            (".git/config", "x"),
            ("pkg/m.py", "def f(): pass\n"),
            ("tests/test_a.py", "def test_1(): pass\n"),
            ("tests/test_b.py", "def test_2(): pass\n"),
        ] {
            let f = repo.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
        }
        let choice = crate::verify::holdout::choose(&[
            "tests/test_a.py::test_1".to_string(),
            "tests/test_b.py::test_2".to_string(),
        ]);
        let (tree, held) = hold_out(repo.path(), &choice).unwrap();
        let tree = tree.unwrap();
        assert!(tree.path().join("pkg/m.py").is_file());
        assert!(tree.path().join("tests/test_a.py").is_file());
        assert!(!tree.path().join("tests/test_b.py").exists());
        assert!(!tree.path().join(".git").exists());
        assert_eq!(held.files.len(), 1);
        assert_eq!(held.files[0].dest, "tests/test_b.py");
        assert_eq!(held.files[0].contents, b"def test_2(): pass\n");
        assert_eq!(
            held.tests,
            vec![crate::testid::TestId::new("tests/test_b.py::test_2")]
        );
        let none = crate::verify::holdout::choose(&["tests/test_a.py::test_1".to_string()]);
        let (tree, held) = hold_out(repo.path(), &none).unwrap();
        assert!(tree.is_none() && held.files.is_empty());
    }

    #[test]
    fn the_action_verdict_is_the_verifiers_and_only_a_taken_patch_is_verified() {
        let dir = std::path::Path::new("/o");
        let v = |r: RepairResult| outcome(r, dir).verdict;
        assert_eq!(
            v(result(Outcome::VERIFIED, Some(Verdict::Verified), "d")),
            Outcome::VERIFIED
        );
        assert_eq!(
            v(result(
                Outcome::Judged(Verdict::NeedsReview),
                Some(Verdict::NeedsReview),
                "d"
            )),
            Outcome::Judged(Verdict::NeedsReview)
        );
        // A verified receipt the search did not take (never happens, but never posts).
        assert_eq!(
            v(result(Outcome::NotPassing, Some(Verdict::Verified), "d")),
            Outcome::NotVerified
        );
        assert_eq!(
            v(result(Outcome::NothingFailing, None, "")),
            Outcome::NothingFailing
        );
        assert_eq!(v(result(Outcome::NoPatch, None, "")), Outcome::NoPatch);
        assert_eq!(v(result(Outcome::Failing, None, "d")), Outcome::NotVerified);
        assert!(outcome(result(Outcome::VERIFIED, Some(Verdict::Verified), "d"), dir).verified());
    }

    #[tokio::test]
    async fn the_action_takes_the_model_forms_fix_takes() {
        // The same builder as `fix --escalate` (tests/integration/agent_cli.rs): a bare name
        // is a tier, an empty spec is refused by its key before anything is prepared.
        let mut config = crate::config::Config::default();
        config.repair.escalate = vec!["qwen2.5-coder:14b".into(), "anthropic:".into()];
        let req = RepairRequest {
            repo_dir: "/nonexistent".into(),
            test_cmd: None,
            failing_tests: Vec::new(),
            head_sha: "abc".into(),
            pr: None,
            repository: "o/r".into(),
            model: Some("qwen2.5-coder:1.5b".into()),
            config,
            ollama_url: None,
            base_url: None,
            api_key: None,
        };
        let e = PipelineRepairer::default().repair(req).await.unwrap_err();
        let e = format!("{e:#}");
        assert!(e.contains("`repair.escalate[1]` (default)"), "{e}");
    }
}
