//! The one repair pipeline: image → reproduce → episode → verify, assembled here and nowhere
//! else. `fix`, `demo`, the action's [`repair::PipelineRepairer`], `eval` and MCP's
//! `verify_patch` all call into this module; `agent::` keeps the loop, tools, models,
//! compaction and trajectory and reaches Docker only through the [`Sandbox`] trait.
//!
//! Stages (each usable alone):
//! - [`prepare_image`] / [`inspect_image`]: the sandbox image of a checkout (or an existing one).
//! - [`reproduce`]: one test run in the episode's own container; the failing tests.
//! - [`run`]: a fresh episode container, reproduce (unless the caller gives the targets), the
//!   episode, the container's removal overlapping verification, the verdict.
//! - [`verify`]: the verifier in a fresh container; the only source of a verdict.
//!
//! Targets (what "fixed" requires): the ids the caller names (the CI log's failing tests in the
//! action, `--fail-to-pass` on `fix`, a task's `FAIL_TO_PASS` in eval); otherwise every test
//! the reproduction run saw failing. With named targets, other baseline failures are
//! pre-existing: shown to the model as such and not required to pass.

pub mod fix;
pub mod repair;
#[doc(hidden)]
pub mod testing;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use serde_json::json;

use crate::agent::episode::{self, EpisodeConfig, EpisodeOutcome};
use crate::agent::model::Model;
use crate::agent::task;
use crate::agent::tools::{self, TestRun};
use crate::agent::trajectory::{FORMAT_VERSION, Header, Trajectory};
use crate::sandbox::Sandbox;
use crate::sandbox::container::Container;
use crate::sandbox::image::BaseOptions;
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::prepare::{self, PrepareOptions};
use crate::verify::receipt::Receipt;
use crate::verify::{Holdout, PreparedImage, RerunScope, VerifyRequest, policy};

/// Build (or reuse) the sandbox image of a checkout; progress lines go to `progress`.
pub async fn prepare_image(
    docker: &bollard::Docker,
    repo: &Path,
    test_cmd: Option<&str>,
    progress: Option<crate::sandbox::image::ProgressFn>,
) -> anyhow::Result<PreparedImage> {
    let opts = PrepareOptions {
        path: repo.to_path_buf(),
        test_cmd: test_cmd.map(str::to_string),
        base: BaseOptions {
            progress,
            ..BaseOptions::default()
        },
        ..PrepareOptions::default()
    };
    let img = prepare::prepare(docker, &opts)
        .await
        .with_context(|| format!("preparing the sandbox image of {}", repo.display()))?;
    Ok(PreparedImage::from(img))
}

/// An already prepared image, read from its labels.
pub async fn inspect_image(docker: &bollard::Docker, tag: &str) -> anyhow::Result<PreparedImage> {
    let img = prepare::inspect_prepared(docker, tag).await.map_err(|e| {
        anyhow!(
            "cannot use the sandbox image {tag}: {e}\n  build one with `patchloop prepare PATH`"
        )
    })?;
    Ok(PreparedImage::from(img))
}

/// Progress lines on stderr (the CLI's default).
pub fn stderr_progress() -> Option<crate::sandbox::image::ProgressFn> {
    Some(std::sync::Arc::new(|line: &str| eprintln!("{line}")))
}

/// What "fixed" is judged against.
#[derive(Debug, Clone)]
pub enum Targets {
    /// Reproduce in the episode container first; the named ids (may be empty: then every
    /// reproduced failure) are the fail-to-pass set.
    Reproduce { named: Vec<String> },
    /// Given by the caller (an eval task): no reproduction run, the statement is the task.
    Given {
        fail_to_pass: Vec<String>,
        pass_to_pass: Vec<String>,
        holdouts: Vec<Holdout>,
    },
}

impl Targets {
    /// Reproduce, and let every reproduced failure be a target.
    pub fn reproduced() -> Targets {
        Targets::Reproduce { named: Vec::new() }
    }
}

/// Everything about one repair except the image, the model and Docker.
#[derive(Debug, Clone)]
pub struct Plan {
    pub episode: EpisodeConfig,
    /// A problem statement added to the task (`Given`: the whole task).
    pub statement: Option<String>,
    pub targets: Targets,
    /// Logged in the trajectory header; `read_only_paths` is filled from the image.
    pub policy: ContainerPolicy,
    /// Verification runs before and after the patch, each in a fresh container (0: trust
    /// the episode container's test run, for tests of the loop alone).
    pub verify_reruns: usize,
    pub rerun_scope: RerunScope,
    /// The checkout the patch is for (the verifier's policy reads pre-patch configs from it).
    pub base_repo: Option<PathBuf>,
    /// The verifier's patch policy (test globs, allowed CI paths from the repo's config).
    pub verify_policy: policy::PolicyConfig,
    /// Where the JSONL trajectory goes.
    pub trajectory: PathBuf,
    /// Where the final diff goes (also when the episode failed), if anywhere.
    pub patch_file: Option<PathBuf>,
    /// Where `receipt.json` and `receipt.md` go, if anywhere.
    pub receipt_dir: Option<PathBuf>,
    /// Stop on SIGINT/SIGTERM with an error (the CLI); `false` when the caller handles them.
    pub cancel_on_signal: bool,
    pub run_id: String,
}

impl Plan {
    /// A plan whose outputs (`patch.diff`, `trajectory.jsonl`, `receipt.{json,md}`) go to
    /// `out_dir`: reproduce, then verify with 3 runs before and after.
    pub fn new(episode: EpisodeConfig, out_dir: &Path, run_id: impl Into<String>) -> Plan {
        Plan {
            episode,
            statement: None,
            targets: Targets::reproduced(),
            policy: ContainerPolicy::default(),
            verify_reruns: 3,
            rerun_scope: RerunScope::default(),
            base_repo: None,
            verify_policy: policy::PolicyConfig::default(),
            trajectory: out_dir.join("trajectory.jsonl"),
            patch_file: Some(out_dir.join("patch.diff")),
            receipt_dir: Some(out_dir.to_path_buf()),
            cancel_on_signal: false,
            run_id: run_id.into(),
        }
    }
}

/// How a repair ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixVerdict {
    /// A non-empty patch whose tests pass in the episode container and (when the plan asks
    /// for it) that the verifier's fresh-container verdict calls `verified`.
    Fixed,
    /// The tests already pass: nothing to do.
    NothingFailing,
    NotFixed,
}

/// The baseline groups of a reproduction run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline {
    /// What the patch must make pass.
    pub targets: Vec<String>,
    /// Failing before the patch but not targets: not required to pass.
    pub pre_existing: Vec<String>,
}

impl Baseline {
    /// Split the reproduced failures: named ids that failed are the targets (a named id that
    /// did not fail is dropped: it cannot be a fail-to-pass test), the other failures are
    /// pre-existing. With no names every failure is a target. Pure.
    pub fn split(failing: &[String], named: &[String]) -> Baseline {
        if named.is_empty() {
            return Baseline {
                targets: failing.to_vec(),
                pre_existing: Vec::new(),
            };
        }
        let matches = |f: &String| named.iter().any(|n| same_test(f, n));
        Baseline {
            targets: failing.iter().filter(|f| matches(f)).cloned().collect(),
            pre_existing: failing.iter().filter(|f| !matches(f)).cloned().collect(),
        }
    }
}

/// A named id matches a reproduced one exactly or as its file / class prefix
/// (`tests/test_a.py` names every failing test in that file). Pure.
fn same_test(reproduced: &str, named: &str) -> bool {
    reproduced == named
        || reproduced
            .strip_prefix(named)
            .is_some_and(|rest| rest.starts_with("::"))
}

/// The result of [`run`].
#[derive(Debug, Clone)]
pub struct Outcome {
    pub verdict: FixVerdict,
    pub episode: Option<EpisodeOutcome>,
    pub patch: String,
    /// The test run in the episode container after the episode (`Reproduce` targets only).
    pub after: Option<TestRun>,
    pub model: String,
    pub baseline: Baseline,
    /// The verifier's receipt, when the patch was verified.
    pub receipt: Option<Receipt>,
    /// Container start to episode end (includes the reproduction run).
    pub episode_wall: Duration,
    pub verify_wall: Duration,
}

impl Outcome {
    /// Exit 0 (fixed or nothing failing) versus 1 (no fix).
    pub fn success(&self) -> bool {
        matches!(self.verdict, FixVerdict::Fixed | FixVerdict::NothingFailing)
    }

    /// The one-line outcome printed last.
    pub fn one_line(&self) -> String {
        let Some(e) = &self.episode else {
            return match self.baseline.pre_existing.len() {
                0 => "nothing failing: the tests already pass".into(),
                n => format!(
                    "nothing to fix: the named tests already pass ({n} other failing tests are pre-existing)"
                ),
            };
        };
        let stats = format!(
            "stop reason {}, {} steps, {} tokens, ${:.4}, {:.1}s, model {}",
            e.stop,
            e.steps,
            e.usage.total(),
            e.cost_usd,
            e.wall.as_secs_f64(),
            self.model
        );
        let verified = self.receipt.as_ref().map(|r| {
            format!(
                "verdict {}: {}",
                r.decision.verdict.as_str(),
                r.decision.reason
            )
        });
        if let (FixVerdict::NotFixed, Some(v)) = (self.verdict, &verified) {
            return format!("not fixed: {v} ({stats})");
        }
        match self.verdict {
            FixVerdict::Fixed => match &verified {
                Some(v) => format!("fixed: {v} ({stats})"),
                None => format!("fixed: the tests pass with the patch ({stats})"),
            },
            FixVerdict::NothingFailing => "nothing failing".into(),
            FixVerdict::NotFixed => {
                let why = if self.patch.trim().is_empty() {
                    "no patch".to_string()
                } else {
                    match self.after.as_ref().and_then(|a| a.summary.as_ref()) {
                        Some(s) => format!("{} tests still failing", s.failed + s.errors),
                        None => "the tests still fail".to_string(),
                    }
                };
                format!("not fixed: {why} ({stats}; {})", e.detail)
            }
        }
    }
}

/// One test run in `sandbox`: the failing tests, split by the named targets.
pub async fn reproduce(
    sandbox: &dyn Sandbox,
    tools_cfg: &tools::ToolConfig,
    named: &[String],
) -> anyhow::Result<(TestRun, Baseline)> {
    let before = tools::run_tests(sandbox, tools_cfg, &[])
        .await
        .context("running the tests to reproduce the failure")?;
    let failing = before
        .summary
        .as_ref()
        .map(|s| s.failing.clone())
        .unwrap_or_default();
    let baseline = Baseline::split(&failing, named);
    Ok((before, baseline))
}

/// The failing tests of the unmodified image, from one run in a fresh container.
pub async fn reproduce_fresh(
    docker: &bollard::Docker,
    image: &PreparedImage,
    policy: &ContainerPolicy,
    tools_cfg: &tools::ToolConfig,
    run_id: &str,
) -> anyhow::Result<Vec<String>> {
    let c = Container::start(docker, &image.tag, policy, run_id, "baseline")
        .await
        .with_context(|| format!("starting the baseline container from {}", image.tag))?;
    let run = reproduce(&c, tools_cfg, &[]).await;
    if let Err(e) = c.remove().await {
        tracing::warn!("removing the baseline container failed (the reaper will retry): {e}");
    }
    Ok(run?.1.targets)
}

/// The verifier on a patch, in a fresh container: the only place a verdict comes from.
pub async fn verify(docker: &bollard::Docker, req: &VerifyRequest, base: Option<&Path>) -> Receipt {
    match base {
        Some(repo) => {
            crate::verify::verify(docker, req, &policy::DirTree(repo.to_path_buf())).await
        }
        None => crate::verify::verify(docker, req, &policy::NoBase).await,
    }
}

/// The whole repair: a fresh episode container from `image`, reproduce, the episode, the
/// verdict from a fresh verification container. The episode container is removed on every
/// path (its removal overlaps verification).
pub async fn run(
    docker: &bollard::Docker,
    image: &PreparedImage,
    model: &dyn Model,
    plan: &Plan,
) -> anyhow::Result<Outcome> {
    let started = Instant::now();
    let mut policy = plan.policy.clone();
    policy.read_only_paths = image.tests_dirs.clone();
    let container = Container::start(docker, &image.tag, &policy, &plan.run_id, "episode")
        .await
        .with_context(|| format!("starting the episode container from {}", image.tag))?;
    let result = if plan.cancel_on_signal {
        // An interrupted run (Ctrl-C, SIGTERM from CI) still removes its container; the
        // trajectory already holds every finished step.
        tokio::select! {
            r = in_sandbox(&container, model, plan, &policy) => r,
            signal = interrupted() => Err(anyhow!(
                "interrupted by {signal}; partial trajectory in {}", plan.trajectory.display()
            )),
        }
    } else {
        in_sandbox(&container, model, plan, &policy).await
    };
    let episode_wall = started.elapsed();
    // Removed while verification runs (dockerd's work, not ours): awaited below, so nothing
    // outlives the result.
    let removal = tokio::spawn(async move {
        if let Err(e) = container.remove().await {
            tracing::warn!("removing the episode container failed (the reaper will retry): {e}");
        }
    });
    let mut outcome = match result {
        Ok(o) => o,
        Err(e) => {
            let _ = removal.await;
            return Err(e);
        }
    };
    outcome.episode_wall = episode_wall;
    let verify_started = Instant::now();
    let candidate = match &plan.targets {
        // An eval task is always judged; a local repair only once its patch passed here.
        Targets::Given { .. } => true,
        _ => outcome.verdict == FixVerdict::Fixed,
    };
    if candidate && plan.verify_reruns > 0 {
        let (fail_to_pass, pass_to_pass, holdouts) = match &plan.targets {
            Targets::Given {
                fail_to_pass,
                pass_to_pass,
                holdouts,
            } => (fail_to_pass.clone(), pass_to_pass.clone(), holdouts.clone()),
            _ => (outcome.baseline.targets.clone(), Vec::new(), Vec::new()),
        };
        let mut req = VerifyRequest::new(image.clone(), outcome.patch.clone(), fail_to_pass);
        req.pass_to_pass = pass_to_pass;
        req.holdouts = holdouts;
        req.reruns = plan.verify_reruns;
        req.rerun_scope = plan.rerun_scope;
        req.policy = plan.verify_policy.clone();
        req.run_id = format!("{}-verify", plan.run_id);
        // The agent's word (and its container) is never the verdict: a fresh container is.
        let receipt = verify(docker, &req, plan.base_repo.as_deref()).await;
        outcome.verdict = if receipt.decision.verdict == crate::verify::verdict::Verdict::Verified {
            FixVerdict::Fixed
        } else {
            FixVerdict::NotFixed
        };
        if let Some(dir) = &plan.receipt_dir
            && let Err(e) = crate::verify::receipt::write(dir, &receipt)
        {
            let _ = removal.await;
            return Err(e).with_context(|| format!("writing the receipt to {}", dir.display()));
        }
        outcome.receipt = Some(receipt);
    }
    let _ = removal.await;
    outcome.verify_wall = verify_started.elapsed();
    Ok(outcome)
}

/// Reproduce (unless the targets are given), run the episode, check the patch: the flow over
/// an already started sandbox.
async fn in_sandbox(
    sandbox: &dyn Sandbox,
    model: &dyn Model,
    plan: &Plan,
    policy: &ContainerPolicy,
) -> anyhow::Result<Outcome> {
    let empty = || Outcome {
        verdict: FixVerdict::NothingFailing,
        episode: None,
        patch: String::new(),
        after: None,
        model: model.describe(),
        baseline: Baseline::default(),
        receipt: None,
        episode_wall: Duration::ZERO,
        verify_wall: Duration::ZERO,
    };
    let write_patch = |patch: &str| -> anyhow::Result<()> {
        if let Some(p) = &plan.patch_file {
            std::fs::write(p, patch).with_context(|| format!("cannot write {}", p.display()))?;
        }
        Ok(())
    };
    let (task_text, baseline, mut focus) = match &plan.targets {
        Targets::Given { fail_to_pass, .. } => (
            plan.statement.clone().unwrap_or_default(),
            Baseline {
                targets: fail_to_pass.clone(),
                pre_existing: Vec::new(),
            },
            Default::default(),
        ),
        Targets::Reproduce { named } => {
            let (before, baseline) = reproduce(sandbox, &plan.episode.tools, named).await?;
            // Nothing to do: everything passes, or every named test passes (the failures
            // left are pre-existing). A run without a report still gets an episode.
            let named_pass =
                !named.is_empty() && before.summary.is_some() && baseline.targets.is_empty();
            if before.green() || named_pass {
                write_patch("")?;
                let mut o = empty();
                o.baseline = baseline;
                return Ok(o);
            }
            let files = task::list_files(sandbox).await;
            let tools = &plan.episode.tools;
            let context = task::failing_context(
                sandbox,
                &before.output,
                &baseline.targets,
                tools.context_budget,
            )
            .await;
            let text = task::build_task(
                &before,
                &baseline.targets,
                &baseline.pre_existing,
                plan.statement.as_deref(),
                &files,
                &context,
            );
            (text, baseline, context.focus)
        }
    };
    // The tools steer with the context (view_file windows, refused test edits, loop nudges).
    focus.read_only = policy.read_only_paths.clone();
    let mut episode_cfg = plan.episode.clone();
    episode_cfg.tools.focus = focus;

    let mut traj = Trajectory::create(&plan.trajectory)
        .with_context(|| format!("cannot create {}", plan.trajectory.display()))?;
    traj.header(&Header {
        format_version: FORMAT_VERSION,
        started_unix: crate::clock::now_unix(),
        model: model.describe(),
        sandbox: sandbox.id().to_string(),
        config: episode::config_value(&episode_cfg),
        container_policy: serde_json::to_value(policy).unwrap_or(json!(null)),
        task: task_text.clone(),
    });
    let outcome = episode::run(model, sandbox, &task_text, &episode_cfg, &mut traj).await;
    if let Some(e) = &traj.write_error {
        tracing::warn!(
            "the trajectory {} is incomplete: {e}",
            plan.trajectory.display()
        );
    }
    write_patch(&outcome.patch)?;
    if outcome.infrastructure {
        return Err(anyhow!(
            "{} (after {} steps; trajectory in {})",
            outcome.detail,
            outcome.steps,
            plan.trajectory.display()
        ));
    }

    // Before the verifier: a patch, and (when reproduced here) the targets pass with it here.
    let (verdict, after) = if outcome.patch.trim().is_empty() {
        (FixVerdict::NotFixed, None)
    } else if matches!(plan.targets, Targets::Given { .. }) {
        (FixVerdict::Fixed, None)
    } else {
        let after = tools::run_tests(sandbox, &plan.episode.tools, &[])
            .await
            .context("running the tests after the episode")?;
        let still: Vec<&String> = after
            .summary
            .as_ref()
            .map(|s| s.failing.iter().collect())
            .unwrap_or_default();
        let fixed = after.summary.is_some()
            && (after.green()
                || (!baseline.pre_existing.is_empty()
                    && still.iter().all(|f| baseline.pre_existing.contains(f))));
        let v = if fixed {
            FixVerdict::Fixed
        } else {
            FixVerdict::NotFixed
        };
        (v, Some(after))
    };
    Ok(Outcome {
        verdict,
        patch: outcome.patch.clone(),
        episode: Some(outcome),
        after,
        model: model.describe(),
        baseline,
        receipt: None,
        episode_wall: Duration::ZERO,
        verify_wall: Duration::ZERO,
    })
}

/// Resolves on SIGINT or SIGTERM with the signal's name.
pub async fn interrupted() -> &'static str {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "SIGINT",
        _ = term => "SIGTERM",
    }
}

/// A run id: `PREFIX-<unix seconds>-<random>`.
pub fn run_id(prefix: &str) -> String {
    format!(
        "{prefix}-{}-{:04x}",
        crate::clock::now_unix(),
        rand::random::<u16>()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_targets_split_the_baseline() {
        let failing: Vec<String> = [
            "tests/test_a.py::test_x",
            "tests/test_a.py::test_y",
            "tests/test_b.py::test_env",
        ]
        .map(String::from)
        .to_vec();
        let all = Baseline::split(&failing, &[]);
        assert_eq!(all.targets, failing);
        assert!(all.pre_existing.is_empty());
        let b = Baseline::split(&failing, &["tests/test_a.py::test_y".into()]);
        assert_eq!(b.targets, ["tests/test_a.py::test_y"]);
        assert_eq!(
            b.pre_existing,
            ["tests/test_a.py::test_x", "tests/test_b.py::test_env"]
        );
        let by_file = Baseline::split(&failing, &["tests/test_a.py".into()]);
        assert_eq!(by_file.targets.len(), 2);
        assert_eq!(by_file.pre_existing, ["tests/test_b.py::test_env"]);
        // A prefix that is not a whole path segment names nothing.
        let none = Baseline::split(&failing, &["tests/test_a.py::test_".into()]);
        assert!(none.targets.is_empty());
    }
}
