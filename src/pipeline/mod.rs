//! The one repair pipeline: image → reproduce → strategies × model tiers → verify, assembled
//! here and nowhere else. `fix`, `demo`, the action's [`repair::PipelineRepairer`], `eval` and MCP's
//! `verify_patch` all call into this module; `agent::` keeps the loop, tools, models,
//! compaction and trajectory and reaches Docker only through the [`Sandbox`] trait.
//!
//! Stages (each usable alone):
//! - [`prepare_image`] / [`inspect_image`]: the sandbox image of a checkout (or an existing one).
//! - [`reproduce`]: one test run in the episode's own container; the failing tests.
//! - [`run`] / [`run_tiers`]: a fresh episode container, reproduce (unless the caller gives
//!   the targets), each strategy on each model tier (every patch judged by a fresh-container
//!   verification, the workspace reset between attempts) until one is verified, the removal.
//! - [`verify`]: the verifier in a fresh container; the only source of a verdict.
//!
//! Targets (what "fixed" requires): the ids the caller names (the CI log's failing tests in the
//! action, `--fail-to-pass` on `fix`, a task's `FAIL_TO_PASS` in eval); otherwise every test
//! the reproduction run saw failing. With named targets, other baseline failures are
//! pre-existing: shown to the model as such and not required to pass.

pub mod broken;
pub mod env;
pub mod fix;
mod judge;
pub mod plan;
pub mod repair;
mod result;
pub mod review;
mod search;
mod start;
pub mod targets;
#[doc(hidden)]
pub mod testing;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, anyhow};
use serde_json::json;

use crate::agent::candidates::CandidateConfig;
use crate::agent::episode::{self, EpisodeConfig};
use crate::agent::model::Model;
use crate::agent::strategy;
use crate::agent::tools::{self, TestRun};
use crate::agent::trajectory::{FORMAT_VERSION, Header, Trajectory};
use crate::config::repair::Strategy;
use crate::sandbox::Sandbox;
use crate::sandbox::container::Container;
use crate::sandbox::image::BaseOptions;
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::prepare::{self, PrepareOptions};
use crate::testcmd::TestCommand;
use crate::verify::receipt::Receipt;
use crate::verify::{PreparedImage, RerunScope, VerifyRequest, policy};

pub use judge::MAX_VERIFIED_CANDIDATES;
pub use result::{RepairResult, START_RANKED, StartReport};
pub use targets::{HeldOut, TargetSpec, Targets};

/// Build (or reuse) the sandbox image of a checkout; progress lines go to `progress`.
pub async fn prepare_image(
    docker: &bollard::Docker,
    repo: &Path,
    test_cmd: Option<&TestCommand>,
    progress: Option<crate::sandbox::image::ProgressFn>,
) -> anyhow::Result<PreparedImage> {
    let opts = PrepareOptions {
        path: repo.to_path_buf(),
        test_cmd: test_cmd.cloned(),
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

/// Everything about one repair except the image, the model and Docker.
#[derive(Debug, Clone)]
pub struct Plan {
    pub episode: EpisodeConfig,
    /// A problem statement added to the task (`Given`: the whole task).
    pub statement: Option<String>,
    /// What "fixed" requires, as the caller says it (resolved after the baseline run).
    pub targets: TargetSpec,
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
    /// Tried in order on each model tier until one patch is verified.
    pub strategies: Vec<Strategy>,
    /// `strategies` were not configured: each tier gets its own ([`plan::routed`]: by the
    /// model's size and the tier), and the receipt says why.
    pub routed: bool,
    pub candidates: CandidateConfig,
    /// Verification probes behaviour beyond the tested points (the failing tests' calls of
    /// the changed functions and relation-preserving variants, before and after the patch:
    /// `verify::probe`); off, only the pure generalisation layers run.
    pub edge_probe: bool,
    /// The differential layer's time box per changed function (`None`: off).
    pub differential: Option<std::time::Duration>,
    /// The verifier's optional model review (`verify.review_model`; `None`: off).
    pub review: Option<review::ReviewSpec>,
    /// How the reproduction's failures were told apart from environmental ones (`fix` without
    /// named targets on another Python than the CI's: `pipeline::env`); the receipt's
    /// environment note repeats it.
    pub env_check: Option<String>,
}

impl Plan {
    /// A plan whose outputs (`patch.diff`, `trajectory.jsonl`, `receipt.{json,md}`) go to
    /// `out_dir`: reproduce, then verify with 3 runs before and after.
    pub fn new(episode: EpisodeConfig, out_dir: &Path, run_id: impl Into<String>) -> Plan {
        Plan {
            episode,
            statement: None,
            targets: TargetSpec::reproduced(),
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
            strategies: crate::config::repair::DEFAULT_STRATEGIES.to_vec(),
            routed: false,
            candidates: CandidateConfig::default(),
            edge_probe: true,
            differential: Some(crate::verify::differential::PER_FUNCTION),
            review: None,
            env_check: None,
        }
    }

    /// The stages tier `tier` (model `spec`) runs, and why when they were routed by the
    /// model's size ([`plan::routed`]) rather than configured.
    pub fn tier_strategies(&self, tier: usize, spec: &str) -> (Vec<Strategy>, String) {
        match self.routed {
            true => plan::routed(tier, spec),
            false => (self.strategies.clone(), String::new()),
        }
    }

    /// The validated repair plan's settings: budgets, strategies, candidates, context size,
    /// re-runs and the verifier's policy (its test globs and allowed CI paths).
    pub fn with_plan(mut self, r: &plan::RepairPlan) -> Plan {
        self.episode.budgets = r.budgets.clone();
        self.routed = r.strategies.is_none();
        if let Some(st) = &r.strategies {
            self.strategies = st.clone();
        }
        self.candidates = r.candidates.clone();
        self.episode.tools.context_budget = r.context_bytes;
        self.verify_reruns = r.reruns;
        self.rerun_scope = r.rerun_scope;
        self.episode.tools.test_timeout = r.test_timeout;
        self.verify_policy = r.verify_policy.clone();
        self.edge_probe = r.probe;
        self.differential = (r.differential_seconds > 0)
            .then(|| std::time::Duration::from_secs(r.differential_seconds));
        // The candidates' comparison shares the differential layer's box and switch.
        self.candidates.consensus = self.differential;
        self
    }
}

impl Plan {
    /// The diff goes to `patch_file` (also when nothing was fixed: nothing is lost).
    pub(crate) fn write_patch(&self, patch: &str) -> anyhow::Result<()> {
        if let Some(p) = &self.patch_file {
            std::fs::write(p, patch).with_context(|| format!("cannot write {}", p.display()))?;
        }
        Ok(())
    }

    /// The episode's settings with the tools steering by the failing-code context (view_file
    /// windows, refused test edits, loop nudges) and the image's read-only paths.
    fn episode_for(&self, st: &start::Start, policy: &ContainerPolicy) -> EpisodeConfig {
        let mut cfg = self.episode.clone();
        cfg.tools.test_timeout = after_reproduction(cfg.tools.test_timeout, st.baseline);
        cfg.tools.focus = st.focus.clone();
        cfg.tools.focus.read_only = policy.read_only_paths.clone();
        cfg
    }

    /// The trajectory file with its header.
    fn open_trajectory(
        &self,
        sandbox: &dyn Sandbox,
        model: &str,
        episode: &EpisodeConfig,
        policy: &ContainerPolicy,
        st: &start::Start,
    ) -> anyhow::Result<Trajectory> {
        let mut traj = Trajectory::create(&self.trajectory)
            .with_context(|| format!("cannot create {}", self.trajectory.display()))?;
        traj.header(&Header {
            format_version: FORMAT_VERSION,
            started_unix: crate::clock::now_unix(),
            model: model.to_string(),
            sandbox: sandbox.id().to_string(),
            config: episode::config_value(episode),
            container_policy: serde_json::to_value(policy).unwrap_or(json!(null)),
            task: st.task.clone(),
        });
        Ok(traj)
    }

    /// A strategy's infrastructure failure as the repair's error (exit 2); the workspace diff
    /// it left is written out first.
    fn infrastructure(&self, e: strategy::Infrastructure) -> anyhow::Error {
        if let Err(w) = self.write_patch(&e.patch) {
            tracing::warn!("{w:#}");
        }
        let steps = match e.steps {
            0 => String::new(),
            n => format!("after {n} steps; "),
        };
        anyhow!(
            "{} ({steps}trajectory in {})",
            e.detail,
            self.trajectory.display()
        )
    }
}

/// One test run in `sandbox`, and its failing tests.
pub async fn reproduce(
    sandbox: &dyn Sandbox,
    tools_cfg: &tools::ToolConfig,
) -> anyhow::Result<(TestRun, Vec<String>)> {
    let before = tools::run_tests(sandbox, tools_cfg, &[])
        .await
        .context("running the tests to reproduce the failure")?;
    let failing = before
        .summary
        .as_ref()
        .map(|s| s.failing.clone())
        .unwrap_or_default();
    Ok((before, failing))
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
    let run = reproduce(&c, tools_cfg).await;
    if let Err(e) = c.remove().await {
        tracing::warn!("removing the baseline container failed (the reaper will retry): {e}");
    }
    Ok(run?.1)
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

/// The whole repair: a fresh episode container from `image`, reproduce, the plan's strategies
/// on `model`, the verdict from a fresh verification container. The episode container is
/// removed on every path.
pub async fn run(
    docker: &bollard::Docker,
    image: &PreparedImage,
    model: &dyn Model,
    plan: &Plan,
) -> anyhow::Result<RepairResult> {
    run_tiers(docker, image, &[model], plan).await
}

/// [`run`] over model tiers: every strategy on the first model, then (when none gave a
/// verified patch) every strategy on the next one, until one is verified.
pub async fn run_tiers(
    docker: &bollard::Docker,
    image: &PreparedImage,
    models: &[&dyn Model],
    plan: &Plan,
) -> anyhow::Result<RepairResult> {
    if models.is_empty() {
        return Err(anyhow!("no model to repair with"));
    }
    let started = Instant::now();
    let mut policy = plan.policy.clone();
    policy.read_only_paths = image.tests_dirs.clone();
    let container = Container::start(docker, &image.tag, &policy, &plan.run_id, "episode")
        .await
        .with_context(|| format!("starting the episode container from {}", image.tag))?;
    let search = search::search(docker, image, plan, &container, models, &policy);
    let result = if plan.cancel_on_signal {
        // An interrupted run (Ctrl-C, SIGTERM from CI) still removes its container; the
        // trajectory already holds every finished step.
        tokio::select! {
            r = search => r,
            signal = interrupted() => Err(anyhow!(
                "interrupted by {signal}; partial trajectory in {}", plan.trajectory.display()
            )),
        }
    } else {
        search.await
    };
    if let Err(e) = container.remove().await {
        tracing::warn!("removing the episode container failed (the reaper will retry): {e}");
    }
    let mut outcome = result?;
    outcome.episode_wall = started.elapsed().saturating_sub(outcome.verify_wall);
    Ok(outcome)
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

/// The limit of the episode's test runs once the reproduction took `baseline`: three times
/// it plus a minute (a suite's time varies, an edit may add a little), never above the
/// configured `limit` — a patch that hangs the suite costs a few suite-lengths, not the
/// limit. Without a measured run, the limit.
pub fn after_reproduction(
    limit: std::time::Duration,
    baseline: Option<std::time::Duration>,
) -> std::time::Duration {
    match baseline {
        Some(b) => (b * 3 + std::time::Duration::from_secs(60)).min(limit),
        None => limit,
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
    use super::after_reproduction;
    use std::time::Duration;

    #[test]
    fn the_episodes_runs_are_cut_at_three_reproductions_and_a_minute_within_the_limit() {
        let limit = Duration::from_secs(900);
        let s = Duration::from_secs;
        assert_eq!(after_reproduction(limit, Some(s(10))), s(90));
        assert_eq!(after_reproduction(limit, Some(s(280))), limit);
        assert_eq!(after_reproduction(limit, None), limit);
        assert_eq!(after_reproduction(s(30), Some(s(1))), s(30));
    }
}
