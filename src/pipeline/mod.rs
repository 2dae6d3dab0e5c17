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
pub mod plan;
pub mod repair;
pub mod review;
#[doc(hidden)]
pub mod testing;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use serde_json::json;

use crate::agent::attempt::{Attempt, AttemptResult, Ledger, Proposal, Spend, StopReason};
use crate::agent::candidates::{self, CandidateConfig};
use crate::agent::episode::{self, EpisodeConfig};
use crate::agent::model::Model;
use crate::agent::strategy;
use crate::agent::task;
use crate::agent::tools::{self, TestRun};
use crate::agent::trajectory::{FORMAT_VERSION, Header, NodeRecord, Trajectory};
use crate::config::repair::Strategy;
use crate::sandbox::container::{Container, RESET_SCRIPT};
use crate::sandbox::image::BaseOptions;
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::prepare::{self, PrepareOptions};
use crate::sandbox::{ExecRequest, Sandbox};
use crate::testcmd::TestCommand;
use crate::verify::evidence::{Finding, Layer};
use crate::verify::receipt::{Receipt, RepairAttempt};
use crate::verify::{Holdout, PreparedImage, RerunScope, VerifyRequest, policy};

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
    /// The verifier's optional model review (`verify.review_model`; `None`: off).
    pub review: Option<crate::verify::review::ReviewModel>,
    /// Test files held out of the episode (absent from its image) and their failing tests,
    /// which verification requires too (`verify::holdout`; `Reproduce` targets only).
    pub held_out: HeldOut,
    /// How the reproduction's failures were told apart from environmental ones (`fix` without
    /// named targets on another Python than the CI's: `pipeline::env`); the receipt's
    /// environment note repeats it.
    pub env_check: Option<String>,
}

/// Held-out test files and the failing tests in them.
#[derive(Debug, Clone, Default)]
pub struct HeldOut {
    pub files: Vec<Holdout>,
    pub tests: Vec<String>,
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
            strategies: crate::config::repair::DEFAULT_STRATEGIES.to_vec(),
            routed: false,
            candidates: CandidateConfig::default(),
            edge_probe: true,
            review: None,
            held_out: HeldOut::default(),
            env_check: None,
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
        self.verify_policy = r.verify_policy.clone();
        self.edge_probe = r.probe;
        self
    }
}

impl Plan {
    /// The diff goes to `patch_file` (also when nothing was fixed: nothing is lost).
    fn write_patch(&self, patch: &str) -> anyhow::Result<()> {
        if let Some(p) = &self.patch_file {
            std::fs::write(p, patch).with_context(|| format!("cannot write {}", p.display()))?;
        }
        Ok(())
    }

    /// The episode's settings with the tools steering by the failing-code context (view_file
    /// windows, refused test edits, loop nudges) and the image's read-only paths.
    fn episode_for(&self, st: &Start, policy: &ContainerPolicy) -> EpisodeConfig {
        let mut cfg = self.episode.clone();
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
        st: &Start,
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
    crate::testid::TestId::new(reproduced).is_named_by(named)
}

/// The result of [`run`].
#[derive(Debug, Clone)]
pub struct RepairResult {
    pub verdict: FixVerdict,
    /// The verified patch, else the last one proposed (empty when none was).
    pub patch: String,
    /// The test run in the episode container after the loop's episode (`Reproduce` targets).
    pub after: Option<TestRun>,
    /// The model that produced the verified patch, else every tier (`a → b`).
    pub model: String,
    pub baseline: Baseline,
    /// The verifier's receipt, when a patch was verified (the last judged one otherwise).
    pub receipt: Option<Receipt>,
    /// Each strategy × model tier tried, in order, with its spend.
    pub attempts: Vec<RepairAttempt>,
    /// The strategy that produced the verified patch.
    pub strategy: Option<Strategy>,
    /// How the search ended: the verified attempt's stop reason, else the last attempt's, else
    /// the cap that left no room for one (`None`: nothing was failing, no attempt ran).
    pub stop: Option<StopReason>,
    pub detail: String,
    /// Everything the search spent (the ledger's totals), and loop steps.
    pub spent: Spend,
    /// The search's own wall time (reproduction, attempts, verification).
    pub wall: Duration,
    /// Container start to the search's end, verification excluded.
    pub episode_wall: Duration,
    pub verify_wall: Duration,
    /// What the search started from (for the field funnel): targets the baseline reproduced
    /// and the fault localization's best functions.
    pub start: StartReport,
}

/// What the search started from: how many targets the baseline run reproduced, and how the
/// fault localization ranked the code.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StartReport {
    /// The targets (fail-to-pass tests).
    pub targets: usize,
    /// Of them, the ones that failed in the baseline run in the sandbox.
    pub reproduced: usize,
    /// How the ranking was made (`localize::Method::label` and counts).
    pub localization: String,
    pub localization_ms: u64,
    /// The ranked functions, best first (at most [`START_RANKED`]): path, first and last line.
    pub ranked: Vec<(String, usize, usize)>,
}

/// Ranked functions a [`StartReport`] keeps.
pub const START_RANKED: usize = 10;

impl RepairResult {
    /// Everything passes already: no attempt ran.
    fn nothing_failing(baseline: Baseline, model: String) -> RepairResult {
        RepairResult {
            verdict: FixVerdict::NothingFailing,
            patch: String::new(),
            after: None,
            model,
            baseline,
            receipt: None,
            attempts: Vec::new(),
            strategy: None,
            stop: None,
            detail: String::new(),
            spent: Spend::default(),
            wall: Duration::ZERO,
            episode_wall: Duration::ZERO,
            verify_wall: Duration::ZERO,
            start: StartReport::default(),
        }
    }

    /// Exit 0 (fixed or nothing failing) versus 1 (no fix).
    pub fn success(&self) -> bool {
        matches!(self.verdict, FixVerdict::Fixed | FixVerdict::NothingFailing)
    }

    /// The one-line outcome printed last.
    pub fn one_line(&self) -> String {
        let Some(stop) = self.stop else {
            return match self.baseline.pre_existing.len() {
                0 => "nothing failing: the tests already pass".into(),
                n => format!(
                    "nothing to fix: the named tests already pass ({n} other failing tests are pre-existing)"
                ),
            };
        };
        let by = match (self.strategy, self.attempts.len()) {
            (Some(st), n) => format!("strategy {} (attempt {n} of the search), ", st.as_str()),
            (None, 0) => String::new(),
            (None, n) => format!("{n} attempts, "),
        };
        let stats = format!(
            "{by}stop reason {stop}, {} steps, {} tokens, ${:.4}, {:.1}s, model {}",
            self.spent.steps,
            self.spent.usage.total(),
            self.spent.cost_usd,
            self.wall.as_secs_f64(),
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
                format!("not fixed: {why} ({stats}; {})", self.detail)
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
    let mut judge = Judge {
        docker,
        image,
        plan,
        targets: Vec::new(),
    };
    let result = if plan.cancel_on_signal {
        // An interrupted run (Ctrl-C, SIGTERM from CI) still removes its container; the
        // trajectory already holds every finished step.
        tokio::select! {
            r = search(&mut judge, &container, models, &policy) => r,
            signal = interrupted() => Err(anyhow!(
                "interrupted by {signal}; partial trajectory in {}", plan.trajectory.display()
            )),
        }
    } else {
        search(&mut judge, &container, models, &policy).await
    };
    if let Err(e) = container.remove().await {
        tracing::warn!("removing the episode container failed (the reaper will retry): {e}");
    }
    let mut outcome = result?;
    outcome.episode_wall = started.elapsed().saturating_sub(outcome.verify_wall);
    Ok(outcome)
}

/// Turns a patch into a verdict: the tests in the episode container (reproduced targets), then
/// the verifier in a fresh container — the agent's word is never the verdict.
struct Judge<'a> {
    docker: &'a bollard::Docker,
    image: &'a PreparedImage,
    plan: &'a Plan,
    /// The reproduced targets (set once the reproduction ran).
    targets: Vec<String>,
}

/// One patch, judged.
struct Judged {
    verdict: FixVerdict,
    after: Option<TestRun>,
    receipt: Option<Receipt>,
    wall: Duration,
}

impl Judged {
    /// The attempt's result if this patch is its last word.
    fn result(&self) -> AttemptResult {
        match (&self.receipt, self.verdict) {
            (Some(r), _) => AttemptResult::of_verdict(r.decision.verdict),
            (None, FixVerdict::Fixed) => AttemptResult::Passing,
            (None, _) => AttemptResult::Failing,
        }
    }
}

/// What the judge made of one attempt's proposals.
struct Judgement {
    result: AttemptResult,
    fixed: bool,
    /// The last patch judged.
    patch: Option<String>,
    after: Option<TestRun>,
    receipt: Option<Receipt>,
    wall: Duration,
    /// The rule that wrote the fixed patch, when no model did (a rule-based candidate).
    rule: Option<String>,
}

/// The rule named by a rule-based candidate's recorded reply (`rule missing_name: …`).
fn rule_of(reply: &str) -> Option<String> {
    let rest = reply.strip_prefix("rule ")?;
    rest.split(':').next().map(str::to_string)
}

impl Judge<'_> {
    /// The attempt's proposals in its order (checked candidates: the first
    /// [`MAX_VERIFIED_CANDIDATES`]) until one is fixed; each candidate's node records its
    /// verdict.
    async fn attempt(
        &self,
        sandbox: &dyn Sandbox,
        baseline: &Baseline,
        a: &Attempt,
        node: &NodeRecord,
        traj: &mut Trajectory,
    ) -> anyhow::Result<Judgement> {
        let mut j = Judgement {
            result: a.nothing,
            fixed: false,
            patch: None,
            after: None,
            receipt: None,
            wall: Duration::ZERO,
            rule: None,
        };
        let limit = if a.proposals.iter().all(|p| p.checked) {
            MAX_VERIFIED_CANDIDATES
        } else {
            a.proposals.len()
        };
        for p in a.proposals.iter().take(limit) {
            let one = self
                .judge(sandbox, baseline, &p.patch, p.checked, &drops_finding(p))
                .await?;
            j.wall += one.wall;
            j.result = one.result();
            if let Some(id) = &p.node {
                traj.node(&NodeRecord {
                    id: id.clone(),
                    parent: Some(node.id.clone()),
                    node: "candidate".into(),
                    status: j.result.as_str().into(),
                    detail: match &one.receipt {
                        Some(r) => format!("{}; {}", p.note, r.decision.reason),
                        None => p.note.clone(),
                    },
                    diff: p.patch.clone(),
                    tokens: p.tokens,
                    model_ms: p.model_ms,
                    rollback_ms: p.rollback_ms,
                    reply: p.reply.clone(),
                    model: match rule_of(&p.reply) {
                        Some(_) => "rule (no model)".into(),
                        None => node.model.clone(),
                    },
                    ..node.clone()
                });
            }
            j.patch = Some(p.patch.clone());
            j.after = one.after.or(j.after);
            j.receipt = one.receipt.or(j.receipt);
            if one.verdict == FixVerdict::Fixed {
                j.fixed = true;
                j.rule = rule_of(&p.reply);
                break;
            }
        }
        Ok(j)
    }

    /// `checked`: the patch already passed the whole suite in the episode container (a
    /// candidate's check); otherwise it is applied there now and the suite is run. `found`:
    /// the search's own findings in it, judged by the verifier like its layers'.
    async fn judge(
        &self,
        sandbox: &dyn Sandbox,
        baseline: &Baseline,
        patch: &str,
        checked: bool,
        found: &[Finding],
    ) -> anyhow::Result<Judged> {
        let plan = self.plan;
        let mut j = Judged {
            verdict: FixVerdict::NotFixed,
            after: None,
            receipt: None,
            wall: Duration::ZERO,
        };
        if patch.trim().is_empty() {
            return Ok(j);
        }
        let given = matches!(plan.targets, Targets::Given { .. });
        if !given && !checked {
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
            j.after = Some(after);
            if !fixed {
                return Ok(j);
            }
        }
        if plan.verify_reruns == 0 {
            // Tests of the loop alone: the episode container's run is the check.
            j.verdict = FixVerdict::Fixed;
            return Ok(j);
        }
        let (receipt, wall) = self.verify(patch, found).await;
        j.verdict = if receipt.decision.verdict == crate::verify::verdict::Verdict::Verified {
            FixVerdict::Fixed
        } else {
            FixVerdict::NotFixed
        };
        j.receipt = Some(receipt);
        j.wall = wall;
        Ok(j)
    }

    /// The verifier alone, in fresh containers.
    /// `found`: what the search already found in the patch ([`drops_finding`]).
    async fn verify(&self, patch: &str, found: &[Finding]) -> (Receipt, Duration) {
        let plan = self.plan;
        let started = Instant::now();
        let (fail_to_pass, pass_to_pass, holdouts) = match &plan.targets {
            Targets::Given {
                fail_to_pass,
                pass_to_pass,
                holdouts,
            } => (fail_to_pass.clone(), pass_to_pass.clone(), holdouts.clone()),
            Targets::Reproduce { .. } => (
                self.targets
                    .iter()
                    .chain(&plan.held_out.tests)
                    .cloned()
                    .collect(),
                Vec::new(),
                plan.held_out.files.clone(),
            ),
        };
        let mut req = VerifyRequest::new(self.image.clone(), patch.to_string(), fail_to_pass);
        req.pass_to_pass = pass_to_pass;
        req.holdouts = holdouts;
        req.reruns = plan.verify_reruns;
        req.rerun_scope = plan.rerun_scope;
        req.policy = plan.verify_policy.clone();
        req.run_id = format!("{}-verify", plan.run_id);
        req.fit.probe = plan.edge_probe;
        req.fit.review = plan.review.clone();
        req.fit.given = found.to_vec();
        let receipt = verify(self.docker, &req, plan.base_repo.as_deref()).await;
        (receipt, started.elapsed())
    }
}

/// What the first prompt and every strategy start from.
struct Start {
    task: String,
    baseline: Baseline,
    /// Every test failing before (targets and pre-existing).
    failing: Vec<String>,
    problem: candidates::Problem,
    focus: crate::agent::context::Focus,
}

/// The reproduction run (unless the targets are given and nothing needs its output), the
/// failing-code context and the task text. `Err(baseline)`: nothing is failing.
async fn start(sandbox: &dyn Sandbox, plan: &Plan) -> anyhow::Result<Result<Start, Baseline>> {
    let tools = &plan.episode.tools;
    let wants_context = tools.context_budget > 0 || plan.strategies.contains(&Strategy::Candidates);
    let (before, baseline) = match &plan.targets {
        Targets::Given { fail_to_pass, .. } => {
            let baseline = Baseline {
                targets: fail_to_pass.clone(),
                pre_existing: Vec::new(),
            };
            if !wants_context {
                return Ok(Ok(Start {
                    task: plan.statement.clone().unwrap_or_default(),
                    baseline,
                    failing: Vec::new(),
                    problem: candidates::Problem::default(),
                    focus: Default::default(),
                }));
            }
            // The statement is the task; one run gives the traceback the context is read from.
            let (before, _) = reproduce(sandbox, tools, fail_to_pass).await?;
            if let Some(b) = broken::check(&before, &tools.test_cmd) {
                return Err(b.into());
            }
            (before, baseline)
        }
        Targets::Reproduce { named } => {
            let (before, baseline) = reproduce(sandbox, tools, named).await?;
            // A command that cannot run is the user's to fix, before any model call.
            if let Some(b) = broken::check(&before, &tools.test_cmd) {
                return Err(b.into());
            }
            // Nothing to do: everything passes, or every named test passes (the failures
            // left are pre-existing). A run without a report still gets an episode.
            let named_pass =
                !named.is_empty() && before.summary.is_some() && baseline.targets.is_empty();
            if before.green() || named_pass {
                return Ok(Err(baseline));
            }
            (before, baseline)
        }
    };
    let failing: Vec<String> = before
        .summary
        .as_ref()
        .map(|s| s.failing.clone())
        .unwrap_or_default();
    // Candidates read the code even when the prompt's context is off.
    let budget = match tools.context_budget {
        0 => crate::agent::context::DEFAULT_BUDGET,
        b => b,
    };
    let (mut context, mut files) =
        task::failing_context_files(sandbox, &before.output, &baseline.targets, budget).await;
    if context.focus.code.is_empty()
        && let Some(statement) = plan.statement.as_deref().filter(|s| !s.trim().is_empty())
    {
        // No traceback located code (the targets are held out, or nothing raised in the
        // repository): the functions the statement names.
        let listed = task::list_files(sandbox).await;
        let (code, read) = task::locate_named(sandbox, statement, &listed).await;
        context.focus.code = code;
        for (p, src) in read {
            files.entry(p).or_insert(src);
        }
    }
    // The targets the sandbox can run: a task's hidden tests exist only in the verifier's
    // container, so candidates are checked on the visible failing ones (none visible: on the
    // whole suite alone, and the verifier judges the targets).
    let visible: Vec<String> = match &plan.targets {
        Targets::Given { fail_to_pass, .. } => fail_to_pass
            .iter()
            .filter(|t| failing.contains(t))
            .cloned()
            .collect(),
        Targets::Reproduce { .. } => baseline.targets.clone(),
    };
    // The candidates' suspects, and the loop's context when it has one.
    let t_loc = Instant::now();
    let (ranked, localization) = if wants_context {
        let named = failing_line_names(&before.output, &baseline.targets, &files);
        localize(
            sandbox,
            &tools.test_cmd,
            &visible,
            (&context.focus.code, &named),
            &mut files,
        )
        .await
    } else {
        (Vec::new(), String::new())
    };
    let localization_ms = t_loc.elapsed().as_millis() as u64;
    let test_sources = test_sources(sandbox, &visible, &files).await;
    let shown = if tools.context_budget > 0 {
        with_ranking(context.clone(), &ranked)
    } else {
        Default::default()
    };
    let text = match &plan.targets {
        Targets::Given { .. } => {
            let mut t = plan.statement.clone().unwrap_or_default();
            if !shown.text.is_empty() {
                t.push_str("\n\n");
                t.push_str(&shown.text);
            }
            t
        }
        Targets::Reproduce { .. } => {
            let files = task::list_files(sandbox).await;
            task::build_task(
                &before,
                &baseline.targets,
                &baseline.pre_existing,
                plan.statement.as_deref(),
                &files,
                &shown,
            )
        }
    };
    // What the candidates' prompts and rules read: the targets' failures, not the others'.
    let others: Vec<String> = failing
        .iter()
        .filter(|f| !baseline.targets.contains(f))
        .cloned()
        .collect();
    let output = crate::agent::report::for_targets(&before.output, &baseline.targets, &others);
    let report = match (&plan.targets, plan.statement.as_deref()) {
        (Targets::Given { .. }, Some(s)) if !s.trim().is_empty() => format!("{output}\n{s}"),
        _ => output,
    };
    let baseline = match &plan.targets {
        // Given targets: what else failed before is pre-existing (not required to pass).
        Targets::Given { fail_to_pass, .. } => Baseline {
            targets: fail_to_pass.clone(),
            pre_existing: failing
                .iter()
                .filter(|f| !fail_to_pass.contains(f))
                .cloned()
                .collect(),
        },
        Targets::Reproduce { .. } => baseline,
    };
    Ok(Ok(Start {
        task: text,
        problem: candidates::Problem {
            targets: visible,
            report,
            context: context.clone(),
            files,
            ranked,
            localization,
            localization_ms,
            tests: test_sources,
        },
        baseline,
        failing,
        focus: shown.focus,
    }))
}

/// The files of the failing tests `targets` (read from the container unless in `files`).
async fn test_sources(
    sandbox: &dyn Sandbox,
    targets: &[String],
    files: &std::collections::BTreeMap<String, String>,
) -> Vec<crate::verify::oracle::TestSource> {
    let paths = crate::verify::oracle::test_files(targets);
    let missing: Vec<String> = paths
        .iter()
        .filter(|p| !files.contains_key(*p))
        .cloned()
        .collect();
    let read = task::read_files(sandbox, &missing).await;
    paths
        .into_iter()
        .filter_map(|p| {
            let text = files.get(&p).or_else(|| read.get(&p))?.clone();
            Some(crate::verify::oracle::TestSource { path: p, text })
        })
        .collect()
}

/// The names the failing tests' own lines where they failed use (their test-file frames;
/// [`crate::agent::localize::names_on`]): the localization's tie-break. Pure.
fn failing_line_names(
    output: &str,
    targets: &[String],
    files: &std::collections::BTreeMap<String, String>,
) -> Vec<String> {
    let plan = crate::agent::context::plan(output, targets);
    let lines: Vec<&str> = plan
        .frames
        .iter()
        .filter(|f| crate::agent::context::is_test_path(&f.path))
        .filter_map(|f| files.get(&f.path)?.lines().nth(f.line.checked_sub(1)?))
        .collect();
    crate::agent::localize::names_on(&lines)
}

/// The fault localization of the visible targets ([`crate::agent::localize`]): the ranked
/// functions (their files read into `files`) and a line saying how they were ranked. It never
/// quits silently: a tracer that runs no test under the project's pytest runs again under the
/// harness's; with no spectrum at all, the failing tests' traceback frames and calls rank
/// statically.
async fn localize(
    sandbox: &dyn Sandbox,
    test_cmd: &TestCommand,
    targets: &[String],
    (prefer, named): (&[crate::agent::context::Location], &[String]),
    files: &mut std::collections::BTreeMap<String, String>,
) -> (Vec<crate::agent::localize::Ranked>, String) {
    use crate::agent::localize::{self, Method};
    let t0 = Instant::now();
    let traced = match localize::spectrum(sandbox, test_cmd, targets, false).await {
        Ok(s) => Ok(s),
        Err(first) if first.contains("under the project's pytest") => {
            match localize::spectrum(sandbox, test_cmd, targets, true).await {
                Ok(s) => Ok(s),
                Err(second) => Err(format!("{first}; {second}")),
            }
        }
        Err(e) => Err(e),
    };
    let spectrum = match traced {
        Ok(s) => s,
        Err(why) => {
            tracing::info!("no spectrum: {why}");
            let ranked = localize::static_rank(prefer, named, files);
            let method = if ranked.is_empty() {
                Method::None { why }
            } else {
                Method::Static { why }
            };
            let note = format!(
                "{}: {} function(s) ranked in {} ms",
                method.label(),
                ranked.len(),
                t0.elapsed().as_millis()
            );
            tracing::info!("fault localization: {note}");
            return (ranked, note);
        }
    };
    let missing: Vec<String> = spectrum
        .lines
        .iter()
        .filter(|(p, l)| {
            !files.contains_key(*p)
                && !crate::agent::context::is_test_path(p)
                && l.iter().any(|(_, ef, _)| *ef > 0)
        })
        .map(|(p, _)| p.clone())
        .collect();
    files.extend(task::read_files(sandbox, &missing).await);
    let ranked = localize::rank(&spectrum, files, prefer, named);
    let sampled = match spectrum.collected {
        n if n > spectrum.ran => format!(" (of {n} in their files)"),
        _ => String::new(),
    };
    let method = Method::Spectrum {
        runner: match spectrum.runner.as_str() {
            "" => "the project".to_string(),
            r => format!("the {r}"),
        },
    };
    let note = format!(
        "{}: {} failing and {} passing test(s){sampled}: {} function(s) ranked in {} ms",
        method.label(),
        spectrum.failed,
        spectrum.passed,
        ranked.len(),
        t0.elapsed().as_millis()
    );
    tracing::info!("fault localization: {note}");
    (ranked, note)
}

/// Functions of the ranking named to the loop at most.
const RANKED_SHOWN: usize = 3;

/// The loop's context with the fault localization's best functions: listed under the
/// context's text, and first among the code locations the tools steer to. Pure.
fn with_ranking(
    mut context: crate::agent::context::Context,
    ranked: &[crate::agent::localize::Ranked],
) -> crate::agent::context::Context {
    let top: Vec<_> = ranked.iter().take(RANKED_SHOWN).collect();
    if top.is_empty() {
        return context;
    }
    let mut list = String::from(
        "Fault localization (the functions the failing tests run and the passing tests \
         rarely, most suspicious first):\n",
    );
    for r in &top {
        list.push_str(&format!(
            "- {}:{} {}\n",
            r.loc.path, r.loc.start, r.loc.name
        ));
    }
    context.text = if context.text.is_empty() {
        list
    } else {
        format!("{}\n\n{list}", context.text.trim_end())
    };
    let mut code: Vec<_> = top.iter().map(|r| r.loc.clone()).collect();
    for l in context.focus.code.drain(..) {
        if !code.iter().any(|c| c.path == l.path && c.start == l.start) {
            code.push(l);
        }
    }
    context.focus.code = code;
    context
}

/// The search's state, folded over its attempts.
#[derive(Default)]
struct Search {
    attempts: Vec<RepairAttempt>,
    /// The verified patch, else the last one judged.
    patch: String,
    after: Option<TestRun>,
    receipt: Option<Receipt>,
    /// The strategy and tier whose patch was verified.
    winner: Option<(Strategy, usize)>,
    /// The rule that wrote the verified patch, when no model did.
    winner_rule: Option<String>,
    stop: Option<StopReason>,
    detail: String,
    steps: usize,
    verify_wall: Duration,
    /// The workspace holds the last attempt's edits.
    dirty: bool,
}

impl Search {
    /// One attempt and its judgement folded in; the record the receipt keeps of it.
    fn fold(
        &mut self,
        head: &NodeRecord,
        strategy: Strategy,
        a: Attempt,
        j: Judgement,
        wall: Duration,
    ) -> RepairAttempt {
        self.verify_wall += j.wall;
        self.dirty = a.dirty;
        self.steps += a.steps;
        self.stop = Some(a.stop);
        self.detail = a.note;
        if let Some(p) = j.patch {
            self.patch = p;
        } else if strategy == Strategy::Loop {
            // The loop's (empty) workspace is the search's last word.
            self.patch.clear();
        }
        self.after = j.after.or(self.after.take());
        self.receipt = j.receipt.or(self.receipt.take());
        if j.fixed {
            self.winner = Some((strategy, head.tier));
            self.winner_rule = j.rule.clone();
        }
        RepairAttempt {
            tier: head.tier,
            model: head.model.clone(),
            strategy,
            result: j.result,
            tokens: a.spent.usage.total(),
            cost_usd: a.spent.cost_usd,
            model_ms: a.spent.model.as_millis() as u64,
            wall_ms: wall.as_millis() as u64,
            candidates: a.drawn,
            passing: a.passing,
            why: String::new(),
        }
    }

    /// Back to the checkout before the next attempt when the last one left edits.
    async fn reset(&mut self, sandbox: &dyn Sandbox) -> anyhow::Result<String> {
        if !std::mem::take(&mut self.dirty) {
            return Ok(String::new());
        }
        let t0 = Instant::now();
        let r = sandbox
            .exec(ExecRequest::argv(["bash", "-c", RESET_SCRIPT]))
            .await
            .context("resetting the workspace between attempts")?;
        if !r.status.success() {
            return Err(anyhow!(
                "resetting the workspace between attempts failed: {}",
                r.output.render().trim()
            ));
        }
        Ok(format!(
            "workspace reset in {} ms",
            t0.elapsed().as_millis()
        ))
    }
}

/// Reproduce, then fold over strategies × model tiers: the ledger says whether to go on,
/// each strategy returns an [`Attempt`], the judge verifies its proposals, and the first
/// verified patch ends the search.
async fn search(
    judge: &mut Judge<'_>,
    sandbox: &dyn Sandbox,
    models: &[&dyn Model],
    policy: &ContainerPolicy,
) -> anyhow::Result<RepairResult> {
    let plan = judge.plan;
    let ledger = Ledger::new(plan.episode.budgets.clone());
    let describe = models.iter().map(|m| m.describe()).collect::<Vec<_>>();
    let st = match start(sandbox, plan).await? {
        Ok(st) => st,
        Err(baseline) => {
            plan.write_patch("")?;
            return Ok(RepairResult::nothing_failing(
                baseline,
                describe.join(" → "),
            ));
        }
    };
    judge.targets = st.baseline.targets.clone();
    let judge = &*judge;
    let episode = plan.episode_for(&st, policy);
    let mut traj = plan.open_trajectory(sandbox, &describe.join(" → "), &episode, policy, &st)?;
    let start = strategy::Start {
        sandbox,
        task: &st.task,
        problem: &st.problem,
        failing: &st.failing,
        episode: &episode,
        candidates: &plan.candidates,
        ledger: &ledger,
    };
    let mut s = Search::default();
    'tiers: for (tier, model) in models.iter().enumerate() {
        let (strategies, why) = match plan.routed {
            true => plan::routed(tier, &model.spec()),
            false => (plan.strategies.clone(), String::new()),
        };
        for strategy in strategies {
            if let Some(cap) = ledger.check() {
                s.stop = Some(cap);
                s.detail = format!("the budget is spent ({cap}) before {}", strategy.as_str());
                break 'tiers;
            }
            let mut head = NodeRecord::attempt(tier, &describe[tier], strategy);
            head.detail = s.reset(sandbox).await?;
            traj.node(&head);
            let t0 = Instant::now();
            let a = strategy::attempt(strategy, *model, tier, &head.id, &start, &mut traj)
                .await
                .map_err(|e| plan.infrastructure(e))?;
            let j = judge
                .attempt(sandbox, &st.baseline, &a, &head, &mut traj)
                .await?;
            let mut rec = s.fold(&head, strategy, a, j, t0.elapsed());
            rec.why.clone_from(&why);
            head.status = rec.result.as_str().into();
            (head.tokens, head.model_ms) = (rec.tokens, rec.model_ms);
            traj.node(&head);
            s.attempts.push(rec);
            if s.winner.is_some() {
                break 'tiers;
            }
        }
    }
    finish(s, judge, &st, &ledger, &describe).await
}

/// The search's end: the patch file, the eval's verdict on a search that verified nothing,
/// the receipt (attempts, spend, edge probe), the result.
async fn finish(
    mut s: Search,
    judge: &Judge<'_>,
    st: &Start,
    ledger: &Ledger,
    describe: &[String],
) -> anyhow::Result<RepairResult> {
    let plan = judge.plan;
    plan.write_patch(&s.patch)?;
    if s.receipt.is_none()
        && matches!(plan.targets, Targets::Given { .. })
        && plan.verify_reruns > 0
    {
        // An eval task is always judged, an empty patch too (the verifier says why it fails).
        let (r, wall) = judge.verify(&s.patch, &[]).await;
        s.verify_wall += wall;
        s.receipt = Some(r);
    }
    let stopped_by = ledger.check().filter(|_| s.winner.is_none());
    if let Some(r) = &mut s.receipt {
        if let Some(c) = &plan.env_check {
            let check = format!("environment check: {c}");
            r.image.note = Some(match r.image.note.take() {
                Some(n) => format!("{n}; {check}"),
                None => check,
            });
        }
        r.repair = s.attempts.clone();
        r.spend = Some(ledger.report(stopped_by));
        if !st.problem.localization.is_empty() {
            r.localization = Some(st.problem.localization.clone());
        }
        if let Some(dir) = &plan.receipt_dir {
            crate::verify::receipt::write(dir, r)
                .with_context(|| format!("writing the receipt to {}", dir.display()))?;
        }
    }
    let mut spent = ledger.total();
    spent.steps = s.steps;
    Ok(RepairResult {
        verdict: if s.winner.is_some() {
            FixVerdict::Fixed
        } else {
            FixVerdict::NotFixed
        },
        patch: s.patch,
        after: s.after,
        model: match (s.winner, &s.winner_rule) {
            // A rule-based candidate: no model wrote it, and the report says so.
            (Some((_, tier)), Some(rule)) => {
                format!(
                    "rule {rule}, no model call (the tier's model: {})",
                    describe[tier]
                )
            }
            (Some((_, tier)), None) => describe[tier].clone(),
            (None, _) => describe.join(" → "),
        },
        baseline: st.baseline.clone(),
        receipt: s.receipt,
        attempts: s.attempts,
        strategy: s.winner.map(|(st, _)| st),
        stop: s.stop,
        detail: s.detail,
        spent,
        wall: ledger.elapsed(),
        episode_wall: Duration::ZERO,
        verify_wall: s.verify_wall,
        start: StartReport {
            targets: st.baseline.targets.len(),
            reproduced: st.problem.targets.len(),
            localization: st.problem.localization.clone(),
            localization_ms: st.problem.localization_ms,
            ranked: st
                .problem
                .ranked
                .iter()
                .take(START_RANKED)
                .map(|r| (r.loc.path.clone(), r.loc.start, r.loc.end))
                .collect(),
        },
    })
}

/// A proposal that stops using what the code it replaced used (the candidates'
/// faithfulness: a parameter no longer read, a callee no new call takes over) as a finding
/// for the verifier: its tests may pass because a feature is gone (`isinstance(base, list)`
/// filled as `base is None` passed a task's tests and projected strings). None: nothing
/// dropped.
fn drops_finding(p: &Proposal) -> Vec<Finding> {
    if p.drops.is_empty() {
        return Vec::new();
    }
    let path = crate::verify::diff::parse(&p.patch)
        .ok()
        .and_then(|files| files.into_iter().find_map(|f| f.new_path))
        .unwrap_or_default();
    vec![Finding {
        layer: Layer::StructuralSignals,
        kind: "dropped_feature".into(),
        path,
        line: 0,
        evidence: p.drops.join(", "),
        input: None,
        detail: format!(
            "the repair search's candidate stops using what the code it replaced used: {}",
            p.drops.join(", ")
        ),
    }]
}

/// Passing candidates of one attempt that are verified at most (each verification is a few
/// fresh containers; past three, the loop is the better use of the time).
const MAX_VERIFIED_CANDIDATES: usize = 3;

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
    fn a_proposal_that_drops_what_the_code_used_is_a_finding_for_the_verifier() {
        let patch = "--- a/pkg/v.py\n+++ b/pkg/v.py\n@@ -1 +1 @@\n-if isinstance(b, list):\n+if b is None:\n";
        let p = Proposal {
            patch: patch.into(),
            drops: vec!["callee isinstance".into()],
            ..Proposal::default()
        };
        let f = drops_finding(&p);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (
                f[0].path.as_str(),
                f[0].kind.as_str(),
                f[0].evidence.as_str()
            ),
            ("pkg/v.py", "dropped_feature", "callee isinstance")
        );
        assert!(
            drops_finding(&Proposal {
                drops: Vec::new(),
                ..p
            })
            .is_empty()
        );
    }

    #[test]
    fn a_rule_candidates_reply_names_its_rule_and_a_fills_names_none() {
        assert_eq!(
            rule_of("rule missing_name: pkg/s.py: `x` does not exist").as_deref(),
            Some("missing_name")
        );
        assert_eq!(rule_of("pkg/core.py:10 ←         return hi"), None);
    }

    #[test]
    fn the_loop_context_lists_the_ranking_and_steers_to_it_first() {
        use crate::agent::context::{Context, Location};
        use crate::agent::localize::Ranked;
        let loc = |path: &str, start: usize, name: &str| Location {
            path: path.into(),
            start,
            end: start + 3,
            name: name.into(),
            frame_line: None,
        };
        let mut ctx = Context {
            text: "The failing test:\n...\n".into(),
            ..Default::default()
        };
        ctx.focus.code = vec![loc("pkg/a.py", 1, "caller"), loc("pkg/b.py", 9, "bug")];
        let ranked: Vec<Ranked> = [loc("pkg/b.py", 9, "bug"), loc("pkg/c.py", 2, "other")]
            .into_iter()
            .map(|loc| Ranked {
                loc,
                lines: Vec::new(),
            })
            .collect();
        let out = with_ranking(ctx.clone(), &ranked);
        assert!(out.text.starts_with("The failing test:"), "{}", out.text);
        assert!(
            out.text
                .ends_with("most suspicious first):\n- pkg/b.py:9 bug\n- pkg/c.py:2 other\n"),
            "{}",
            out.text
        );
        let names: Vec<&str> = out.focus.code.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["bug", "other", "caller"]);
        // No ranking: the context as it was.
        assert_eq!(with_ranking(ctx.clone(), &[]), ctx);
    }

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
