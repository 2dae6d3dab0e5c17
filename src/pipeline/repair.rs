//! The real repair pipeline behind `patchloop action`: prepare → episode → verify, as a
//! [`Repairer`] the GitHub side calls. The GitHub token never reaches this code: the request
//! carries only the checkout, the model endpoint and the budgets.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, anyhow};

use super::{FixVerdict, Plan, Targets};
use crate::agent::episode::EpisodeConfig;
use crate::agent::model::{self, ModelOptions};
use crate::agent::tools::ToolConfig;
use crate::github::{RepairOutcome, RepairRequest, Repairer};

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

/// The adapter spec for the action's `model` (input, config or `--model`). The GitHub side
/// takes bare names (`qwen2.5-coder:7b`, as the examples write them): such a name means
/// `openai:` when a `base-url` is given, else `ollama:` (the `ollama-url` service). A name
/// that already has an adapter prefix is kept. Pure.
pub fn model_spec(model: &str, base_url: Option<&str>) -> String {
    let model = model.trim();
    let prefixed = model
        .split_once(':')
        .is_some_and(|(kind, _)| matches!(kind, "ollama" | "openai" | "anthropic" | "scripted"));
    if prefixed {
        model.to_string()
    } else if base_url.is_some_and(|u| !u.trim().is_empty()) {
        format!("openai:{model}")
    } else {
        format!("ollama:{model}")
    }
}

#[async_trait::async_trait]
impl Repairer for PipelineRepairer {
    async fn repair(&self, req: RepairRequest) -> anyhow::Result<RepairOutcome> {
        let spec = req.model.clone().ok_or_else(|| {
            anyhow!(
                "no model configured: set the action input `model` (e.g. `qwen2.5-coder:7b` with `ollama-url`) \
                 or `model:` in .github/patchloop.yml"
            )
        })?;
        let opts = ModelOptions {
            base_url: req.base_url.clone(),
            ollama_url: req.ollama_url.clone(),
            api_key: req.api_key.as_ref().map(|k| k.0.clone()),
            num_ctx: u32::try_from(req.budgets.context_tokens).ok(),
            ..ModelOptions::default()
        };
        let spec = model_spec(&spec, req.base_url.as_deref());
        let model = model::from_spec(&spec, &opts)?;
        let escalate: Vec<Box<dyn model::Model>> = req
            .repair
            .escalate
            .iter()
            .map(|m| model::from_spec(&model_spec(m, req.base_url.as_deref()), &opts))
            .collect::<Result<_, _>>()?;
        let docker = crate::sandbox::connect_and_reap().await?;
        // Hidden targets: with failing tests in several files, one file stays out of the
        // episode's image and comes back only for verification, which requires its tests.
        let hidden = crate::verify::holdout::choose(&req.failing_tests);
        let (episode_tree, held_out) = hold_out(&req.repo_dir, &hidden)?;
        let image = super::prepare_image(
            &docker,
            episode_tree
                .as_ref()
                .map_or(req.repo_dir.as_path(), |t| t.path()),
            req.test_cmd.as_deref(),
            super::stderr_progress(),
        )
        .await?;
        let out_dir = self.out_dir(&req)?;
        std::fs::create_dir_all(&out_dir)
            .with_context(|| format!("cannot create {}", out_dir.display()))?;
        let plan = Plan::new(
            EpisodeConfig {
                budgets: req.budgets.clone(),
                tools: ToolConfig {
                    test_cmd: req
                        .test_cmd
                        .clone()
                        .unwrap_or_else(|| image.test_cmd.clone()),
                    ..ToolConfig::default()
                },
            },
            &out_dir,
            format!(
                "action-{}",
                req.head_sha.chars().take(12).collect::<String>()
            ),
        );
        let mut plan = plan.with_repair(&req.repair);
        // The CI log's failing tests are the targets; other baseline failures are
        // pre-existing (environment, unrelated), not the patch's job.
        plan.targets = Targets::Reproduce {
            named: hidden.shown.clone(),
        };
        plan.held_out = held_out;
        plan.verify_reruns = req.reruns.map(|n| n as usize).unwrap_or(3).max(1);
        plan.base_repo = Some(req.repo_dir.clone());
        plan.verify_policy.allowed_ci_paths = req.allowed_ci_paths.clone();
        plan.cancel_on_signal = true;
        tracing::info!(repository = %req.repository, pr = ?req.pr, sha = %req.head_sha, "repairing");
        let mut tiers: Vec<&dyn model::Model> = vec![model.as_ref()];
        tiers.extend(escalate.iter().map(|m| m.as_ref()));
        let o = super::run_tiers(&docker, &image, &tiers, &plan)
            .await
            .context("running the repair episode")?;

        let verified = o.verdict == FixVerdict::Fixed && o.receipt.is_some();
        let verdict = match (&o.receipt, o.verdict) {
            (Some(r), _) => r.decision.verdict.as_str().to_string(),
            (None, FixVerdict::NothingFailing) => "nothing_failing".into(),
            (None, _) if o.patch.trim().is_empty() => "no_patch".into(),
            (None, _) => "not_verified".into(),
        };
        let (cost_usd, tokens, seconds) = o
            .episode
            .as_ref()
            .map(|e| (e.cost_usd, e.usage.total(), e.wall.as_secs_f64()))
            .unwrap_or((0.0, 0, Duration::ZERO.as_secs_f64()));
        Ok(RepairOutcome {
            verdict,
            verified,
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
            cost_usd,
            tokens,
            seconds,
            attempts: o.attempts.clone(),
        })
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
            tests: hidden.hidden.clone(),
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
        assert_eq!(held.tests, vec!["tests/test_b.py::test_2"]);
        let none = crate::verify::holdout::choose(&["tests/test_a.py::test_1".to_string()]);
        let (tree, held) = hold_out(repo.path(), &none).unwrap();
        assert!(tree.is_none() && held.files.is_empty());
    }

    #[test]
    fn bare_model_names_get_the_adapter_of_the_endpoint_given() {
        assert_eq!(
            model_spec("qwen2.5-coder:7b", None),
            "ollama:qwen2.5-coder:7b"
        );
        assert_eq!(
            model_spec("qwen2.5-coder:7b", Some("http://vllm:8000/v1")),
            "openai:qwen2.5-coder:7b"
        );
        assert_eq!(model_spec("llama3", Some(" ")), "ollama:llama3");
        for kept in [
            "ollama:qwen2.5-coder:7b",
            "openai:gpt-4o-mini",
            "anthropic:claude-x",
            "scripted:/t/fix.yaml",
        ] {
            assert_eq!(model_spec(kept, Some("http://x")), kept);
        }
    }
}
