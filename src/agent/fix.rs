//! `patchloop fix` and `patchloop demo`: prepare the image, reproduce the failure, run the
//! episode in a fresh hardened container, check the patch, write `patch.diff` and
//! `trajectory.jsonl`, print the diff and a one-line outcome.
//!
//! Exit codes: 0 fixed (or nothing failing), 1 no fix, 2 configuration or infrastructure error.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use serde_json::json;

use crate::agent::episode::{self, Budgets, EpisodeConfig, EpisodeOutcome, StopReason};
use crate::agent::model::{self, Model, ModelOptions, ToolChoice};
use crate::agent::tools::{self, TestRun, ToolConfig};
use crate::agent::trajectory::{FORMAT_VERSION, Header, Trajectory};
use crate::sandbox::container::Container;
use crate::sandbox::image::BaseOptions;
use crate::sandbox::output::truncate_text;
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::prepare::{self, PrepareOptions};
use crate::sandbox::{Sandbox, docker};

/// Model adapter flags shared by `fix` and other commands that talk to a model.
#[derive(Debug, Clone, clap::Args)]
pub struct ModelArgs {
    /// Model spec: ollama:MODEL, openai:MODEL or scripted:FILE.
    #[arg(long)]
    pub model: String,
    /// Base URL of an OpenAI-compatible server (else OPENAI_BASE_URL, else api.openai.com).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Ollama server (else OLLAMA_HOST, else http://127.0.0.1:11434).
    #[arg(long)]
    pub ollama_url: Option<String>,
    /// `tool_choice` for openai: servers: auto, required (small models need it), omit.
    #[arg(long, value_enum, default_value = "auto")]
    pub tool_choice: ToolChoice,
    /// Sampling temperature.
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f64,
    /// The model's context window in tokens (ollama num_ctx; compaction starts at 3/4 of it).
    #[arg(long, default_value_t = 8192)]
    pub context_tokens: u32,
    /// Ollama `think` flag for reasoning models.
    #[arg(long)]
    pub think: Option<bool>,
    /// Seconds to wait for one model reply (small CPU models are slow).
    #[arg(long, default_value_t = 300)]
    pub request_timeout: u64,
}

impl ModelArgs {
    pub fn options(&self) -> ModelOptions {
        ModelOptions {
            base_url: self.base_url.clone(),
            ollama_url: self.ollama_url.clone(),
            tool_choice: self.tool_choice,
            temperature: Some(self.temperature),
            num_ctx: Some(self.context_tokens),
            think: self.think,
            request_timeout: Duration::from_secs(self.request_timeout),
            ..ModelOptions::default()
        }
    }
}

#[derive(Debug, Clone, clap::Args)]
pub struct FixArgs {
    /// The checkout to repair.
    #[arg(long)]
    pub repo: PathBuf,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Test command (default: the prepared image's, `python -m pytest`).
    #[arg(long)]
    pub test_cmd: Option<String>,
    /// A problem statement (Markdown/text) added to the task.
    #[arg(long)]
    pub issue: Option<PathBuf>,
    /// Use an already prepared sandbox image instead of preparing one.
    #[arg(long)]
    pub image: Option<String>,
    #[arg(long, default_value_t = 30)]
    pub max_steps: usize,
    /// Dollars; models not in the price table cost $0.
    #[arg(long, default_value_t = 1.0)]
    pub max_cost: f64,
    #[arg(long, default_value_t = 1_000_000)]
    pub max_tokens: u64,
    /// Wall-clock budget of the episode, seconds.
    #[arg(long, default_value_t = 1800)]
    pub max_seconds: u64,
    /// Verification runs before and after the patch, in a fresh container (0 skips
    /// verification: "fixed" then only means the tests passed in the agent's own container).
    #[arg(long, default_value_t = 3)]
    pub reruns: usize,
    /// Where patch.diff, trajectory.jsonl and receipt.{json,md} go.
    #[arg(long, default_value = "patchloop-out")]
    pub out: PathBuf,
}

/// How a fix run ended, mapped to exit codes by [`FixOutcome::exit_code`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixVerdict {
    /// The patch is non-empty, the tests pass with it in the episode container, and (when the
    /// plan asks for it) the verifier's fresh-container verdict is `verified`.
    Fixed,
    /// The tests already pass: nothing to do.
    NothingFailing,
    NotFixed,
}

#[derive(Debug, Clone)]
pub struct FixOutcome {
    pub verdict: FixVerdict,
    pub episode: Option<EpisodeOutcome>,
    pub patch: String,
    /// The test run after the episode, when there was one.
    pub after: Option<TestRun>,
    pub model: String,
    /// The tests that failed before the episode (the verifier's fail-to-pass set).
    pub failing: Vec<String>,
    /// The verifier's receipt, when the patch was verified (see [`FixPlan::verify_reruns`]).
    pub receipt: Option<crate::verify::receipt::Receipt>,
}

impl FixOutcome {
    /// Exit 0 (fixed or nothing failing) versus 1 (no fix).
    pub fn success(&self) -> bool {
        matches!(self.verdict, FixVerdict::Fixed | FixVerdict::NothingFailing)
    }

    /// The one-line outcome printed last.
    pub fn one_line(&self) -> String {
        let Some(e) = &self.episode else {
            return "nothing failing: the tests already pass".into();
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

/// The task given to the model: the failing tests' output, then the problem statement. Pure.
pub fn build_task(failing: &TestRun, issue: Option<&str>, files: &[String]) -> String {
    let mut t = String::from(
        "The repository's tests fail. Fix the code (not the tests) so that they pass.\n\n",
    );
    if let Some(s) = &failing.summary {
        t.push_str(&format!(
            "{} passed, {} failed, {} errors.\n",
            s.passed, s.failed, s.errors
        ));
        if !s.failing.is_empty() {
            t.push_str(&format!("Failing tests: {}\n", s.failing.join(", ")));
        }
    }
    t.push_str(&format!(
        "\nTest output:\n```\n{}\n```\n",
        truncate_text(failing.output.trim(), 4000)
    ));
    if let Some(issue) = issue.filter(|i| !i.trim().is_empty()) {
        t.push_str(&format!(
            "\nProblem statement:\n{}\n",
            truncate_text(issue.trim(), 4000)
        ));
    }
    if !files.is_empty() {
        t.push_str("\nFiles in the repository (the tests are read-only; the bug is in the code they test):\n");
        for f in files {
            t.push_str(&format!("- {f}\n"));
        }
    }
    // Small models copy the test output back; a concrete first call gets them moving.
    if let Some(file) = failing
        .summary
        .as_ref()
        .and_then(|s| s.failing.first())
        .and_then(|id| pytest_file_of(id))
    {
        t.push_str(&format!(
            "\nStart by reading the failing test: {{\"name\": \"view_file\", \"arguments\": {{\"path\": \"{file}\"}}}}\n"
        ));
    }
    t
}

/// The file part of a pytest id (`tests/test_median.py::test_x` → `tests/test_median.py`). Pure.
fn pytest_file_of(id: &str) -> Option<String> {
    let (file, _) = id.split_once("::")?;
    file.ends_with(".py").then(|| file.to_string())
}

/// Up to 60 workspace files, for the task (small models otherwise guess paths). Best effort.
async fn list_files(sandbox: &dyn Sandbox) -> Vec<String> {
    let req = crate::sandbox::ExecRequest::argv([
        "find",
        ".",
        "-type",
        "f",
        "-not",
        "-path",
        "./.git/*",
        "-not",
        "-name",
        "*.pyc",
        "-not",
        "-path",
        "./target/*",
    ])
    .output_cap(64 * 1024);
    match sandbox.exec(req).await {
        Ok(r) if r.status.success() => {
            let text = r.output.render();
            let mut files: Vec<String> = text
                .lines()
                .map(|l| l.strip_prefix("./").unwrap_or(l).to_string())
                .filter(|l| {
                    !l.is_empty() && !l.contains("__pycache__") && !l.starts_with(".pytest_cache")
                })
                .collect();
            files.sort();
            files.truncate(60);
            files
        }
        _ => Vec::new(),
    }
}

/// Everything about a run except the sandbox and model.
#[derive(Debug, Clone)]
pub struct FixPlan {
    pub episode: EpisodeConfig,
    pub issue: Option<String>,
    pub out_dir: PathBuf,
    /// Logged in the trajectory header.
    pub policy: ContainerPolicy,
    /// Verify a candidate patch in a fresh container with this many runs before and after
    /// (0 = trust the episode container's test run, for tests of the loop alone).
    pub verify_reruns: usize,
    /// The checkout the patch is for (the verifier's policy reads pre-patch configs from it).
    pub base_repo: Option<PathBuf>,
    /// The verifier's patch policy (test globs, allowed CI paths from the repo's config).
    pub verify_policy: crate::verify::policy::PolicyConfig,
}

/// Reproduce, run the episode, check the patch, write the outputs: the orchestration over an
/// already started sandbox (a fresh container for real runs).
pub async fn fix_in_sandbox(
    sandbox: &dyn Sandbox,
    model: &dyn Model,
    plan: &FixPlan,
) -> anyhow::Result<FixOutcome> {
    std::fs::create_dir_all(&plan.out_dir).with_context(|| {
        format!(
            "cannot create the output directory {}",
            plan.out_dir.display()
        )
    })?;
    let before = tools::run_tests(sandbox, &plan.episode.tools, &[])
        .await
        .context("running the tests to reproduce the failure")?;
    let patch_path = plan.out_dir.join("patch.diff");
    if before.green() {
        std::fs::write(&patch_path, "")
            .with_context(|| format!("cannot write {}", patch_path.display()))?;
        return Ok(FixOutcome {
            verdict: FixVerdict::NothingFailing,
            episode: None,
            patch: String::new(),
            after: None,
            model: model.describe(),
            failing: Vec::new(),
            receipt: None,
        });
    }
    let files = list_files(sandbox).await;
    let task = build_task(&before, plan.issue.as_deref(), &files);

    let traj_path = plan.out_dir.join("trajectory.jsonl");
    let mut traj = Trajectory::create(&traj_path)
        .with_context(|| format!("cannot create {}", traj_path.display()))?;
    traj.header(&Header {
        format_version: FORMAT_VERSION,
        started_unix: crate::cli::now_unix(),
        model: model.describe(),
        sandbox: sandbox.id().to_string(),
        config: episode::config_value(&plan.episode),
        container_policy: serde_json::to_value(&plan.policy).unwrap_or(json!(null)),
        task: task.clone(),
    });
    let outcome = episode::run(model, sandbox, &task, &plan.episode, &mut traj).await;
    if let Some(e) = &traj.write_error {
        tracing::warn!("the trajectory {} is incomplete: {e}", traj_path.display());
    }
    std::fs::write(&patch_path, &outcome.patch)
        .with_context(|| format!("cannot write {}", patch_path.display()))?;
    if outcome.infrastructure {
        return Err(anyhow!(
            "{} (after {} steps; trajectory in {})",
            outcome.detail,
            outcome.steps,
            traj_path.display()
        ));
    }

    // Until the verifier lands, "fixed" means: a patch, and the tests pass with it here.
    let (verdict, after) = if outcome.patch.trim().is_empty() {
        (FixVerdict::NotFixed, None)
    } else {
        let after = tools::run_tests(sandbox, &plan.episode.tools, &[])
            .await
            .context("running the tests after the episode")?;
        let v = if after.green() {
            FixVerdict::Fixed
        } else {
            FixVerdict::NotFixed
        };
        (v, Some(after))
    };
    Ok(FixOutcome {
        verdict,
        patch: outcome.patch.clone(),
        episode: Some(outcome),
        after,
        model: model.describe(),
        failing: before
            .summary
            .as_ref()
            .map(|s| s.failing.clone())
            .unwrap_or_default(),
        receipt: None,
    })
}

/// The sandbox image a run uses and what the harness needs to know about it.
#[derive(Debug, Clone)]
pub struct SandboxImage {
    pub tag: String,
    pub test_cmd: String,
    pub tests_dirs: Vec<String>,
}

/// Read `patchloop.test_cmd` / `patchloop.tests_dirs` from a prepared image's labels.
pub async fn inspect_image(docker: &bollard::Docker, tag: &str) -> anyhow::Result<SandboxImage> {
    let img = docker.inspect_image(tag).await.map_err(|e| {
        anyhow!("cannot find the sandbox image {tag}: {e}\n  build one with `patchloop prepare --path REPO`")
    })?;
    let labels = img.config.and_then(|c| c.labels).unwrap_or_default();
    let test_cmd = labels
        .get("patchloop.test_cmd")
        .cloned()
        .unwrap_or_else(|| "python -m pytest".into());
    let tests_dirs = labels
        .get("patchloop.tests_dirs")
        .and_then(|s| serde_json::from_str::<Vec<String>>(s).ok())
        .unwrap_or_default();
    Ok(SandboxImage {
        tag: tag.to_string(),
        test_cmd,
        tests_dirs,
    })
}

/// Build (or reuse) the sandbox image of a checkout with `patchloop prepare`'s machinery.
pub async fn prepare_image(
    docker: &bollard::Docker,
    repo: &Path,
    test_cmd: Option<&str>,
) -> anyhow::Result<SandboxImage> {
    let opts = PrepareOptions {
        path: repo.to_path_buf(),
        test_cmd: test_cmd.map(str::to_string),
        base: BaseOptions {
            progress: Some(std::sync::Arc::new(|line: &str| eprintln!("{line}"))),
            ..BaseOptions::default()
        },
        ..PrepareOptions::default()
    };
    let img = prepare::prepare(docker, &opts)
        .await
        .with_context(|| format!("preparing the sandbox image of {}", repo.display()))?;
    Ok(SandboxImage {
        tag: img.tag,
        test_cmd: img.test_cmd,
        tests_dirs: img.tests_dirs,
    })
}

/// Start a fresh episode container from `image` and run [`fix_in_sandbox`] in it; the container
/// is removed on every path.
pub async fn fix_with_image(
    docker: &bollard::Docker,
    image: &SandboxImage,
    model: &dyn Model,
    mut plan: FixPlan,
    run_id: &str,
) -> anyhow::Result<FixOutcome> {
    plan.policy.read_only_paths = image.tests_dirs.clone();
    let container = Container::start(docker, &image.tag, &plan.policy, run_id, "episode")
        .await
        .with_context(|| format!("starting the episode container from {}", image.tag))?;
    // An interrupted run (Ctrl-C, SIGTERM from CI) still removes its container; the trajectory
    // already holds every finished step.
    let result = tokio::select! {
        r = fix_in_sandbox(&container, model, &plan) => r,
        signal = interrupted() => Err(anyhow!("interrupted by {signal}; partial trajectory in {}", plan.out_dir.display())),
    };
    if let Err(e) = container.remove().await {
        tracing::warn!("removing the episode container failed (the reaper will retry): {e}");
    }
    let mut outcome = result?;
    if outcome.verdict == FixVerdict::Fixed && plan.verify_reruns > 0 {
        // The agent's word (and its container) is never the verdict: a fresh container is.
        let receipt = verify_patch(docker, image, &outcome, &plan, run_id).await?;
        if receipt.decision.verdict != crate::verify::verdict::Verdict::Verified {
            outcome.verdict = FixVerdict::NotFixed;
        }
        outcome.receipt = Some(receipt);
    }
    Ok(outcome)
}

/// Run the verifier on the episode's patch; receipts go next to the patch.
async fn verify_patch(
    docker: &bollard::Docker,
    image: &SandboxImage,
    outcome: &FixOutcome,
    plan: &FixPlan,
    run_id: &str,
) -> anyhow::Result<crate::verify::receipt::Receipt> {
    use crate::verify::{PreparedImage, VerifyRequest, policy};
    let failing = outcome.failing.clone();
    let mut req = VerifyRequest::new(
        PreparedImage {
            tag: image.tag.clone(),
            tests_dirs: image.tests_dirs.clone(),
            test_cmd: plan.episode.tools.test_cmd.clone(),
        },
        outcome.patch.clone(),
        failing,
    );
    req.reruns = plan.verify_reruns;
    req.policy = plan.verify_policy.clone();
    req.run_id = format!("{run_id}-verify");
    eprintln!(
        "verifying the patch in a fresh container ({} runs before and after)",
        req.reruns
    );
    let receipt = match &plan.base_repo {
        Some(repo) => crate::verify::verify(docker, &req, &policy::DirTree(repo.clone())).await,
        None => crate::verify::verify(docker, &req, &policy::NoBase).await,
    };
    crate::verify::receipt::write(&plan.out_dir, &receipt)
        .with_context(|| format!("writing the receipt to {}", plan.out_dir.display()))?;
    Ok(receipt)
}

/// Resolves on SIGINT or SIGTERM with the signal's name.
async fn interrupted() -> &'static str {
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

fn print_outcome(o: &FixOutcome, out_dir: &Path) {
    if !o.patch.is_empty() {
        println!("{}", o.patch.trim_end());
    }
    eprintln!(
        "patch: {}  trajectory: {}",
        out_dir.join("patch.diff").display(),
        out_dir.join("trajectory.jsonl").display()
    );
    println!("{}", o.one_line());
}

fn plan_from(args: &FixArgs, test_cmd: String) -> anyhow::Result<FixPlan> {
    let issue = match &args.issue {
        Some(p) => Some(
            std::fs::read_to_string(p)
                .with_context(|| format!("cannot read the issue file {}", p.display()))?,
        ),
        None => None,
    };
    Ok(FixPlan {
        episode: EpisodeConfig {
            budgets: Budgets {
                max_steps: args.max_steps,
                max_wall: Duration::from_secs(args.max_seconds),
                max_tokens: args.max_tokens,
                max_cost_usd: args.max_cost,
                context_tokens: args.model.context_tokens as usize,
                ..Budgets::default()
            },
            tools: ToolConfig {
                test_cmd,
                ..ToolConfig::default()
            },
        },
        issue,
        out_dir: args.out.clone(),
        policy: ContainerPolicy::default(),
        verify_reruns: args.reruns,
        base_repo: args.repo.is_dir().then(|| args.repo.clone()),
        verify_policy: Default::default(),
    })
}

fn run_id() -> String {
    format!(
        "fix-{}-{:04x}",
        crate::cli::now_unix(),
        rand::random::<u16>()
    )
}

/// `patchloop fix`: prints the diff and the outcome; `Ok(true)` fixed or nothing failing,
/// `Ok(false)` no fix, `Err` a configuration or infrastructure error (exit 2).
pub async fn fix(args: FixArgs) -> anyhow::Result<bool> {
    let started = Instant::now();
    let o = fix_inner(&args).await?;
    print_outcome(&o, &args.out);
    tracing::info!(elapsed = ?started.elapsed(), "fix finished");
    Ok(o.success())
}

async fn fix_inner(args: &FixArgs) -> anyhow::Result<FixOutcome> {
    let model = model::from_spec(&args.model.model, &args.model.options())?;
    if !args.repo.is_dir() && args.image.is_none() {
        return Err(anyhow!(
            "--repo {} is not a directory: pass the checkout to repair",
            args.repo.display()
        ));
    }
    let docker = crate::cli::connect_and_reap().await?;
    let image = match &args.image {
        Some(tag) => inspect_image(&docker, tag).await?,
        None => prepare_image(&docker, &args.repo, args.test_cmd.as_deref()).await?,
    };
    let test_cmd = args
        .test_cmd
        .clone()
        .unwrap_or_else(|| image.test_cmd.clone());
    let plan = plan_from(args, test_cmd)?;
    fix_with_image(&docker, &image, model.as_ref(), plan, &run_id()).await
}

#[derive(Debug, Clone, clap::Args)]
pub struct DemoArgs {
    /// Where patch.diff and trajectory.jsonl go.
    #[arg(long, default_value = "patchloop-demo-out")]
    pub out: PathBuf,
    /// Use an already prepared image of the demo repository.
    #[arg(long)]
    pub image: Option<String>,
}

/// `patchloop demo`: the embedded toy repository, fixed by a scripted model in the real sandbox.
pub async fn demo(args: DemoArgs) -> anyhow::Result<bool> {
    let o = demo_inner(&args).await?;
    print_outcome(&o, &args.out);
    Ok(o.success())
}

async fn demo_inner(args: &DemoArgs) -> anyhow::Result<FixOutcome> {
    let dir = tempfile::Builder::new()
        .prefix("patchloop-demo-")
        .tempdir()
        .context("cannot create a temporary directory for the demo repository")?;
    // A stable directory name keeps the prepared image's tag stable, so reruns reuse it.
    let repo = dir.path().join("patchloop-demo");
    crate::agent::demo::write_repo(&repo)
        .with_context(|| format!("cannot write the demo repository to {}", repo.display()))?;
    let model = model::scripted::Scripted::from_yaml(
        crate::agent::demo::SCRIPT,
        "demo-fix.yaml (embedded)",
    )?;
    let docker = docker::connect().await?;
    let image = match &args.image {
        Some(tag) => inspect_image(&docker, tag).await?,
        None => prepare_image(&docker, &repo, None).await?,
    };
    let plan = FixPlan {
        episode: EpisodeConfig {
            budgets: Budgets::default(),
            tools: ToolConfig {
                test_cmd: image.test_cmd.clone(),
                ..ToolConfig::default()
            },
        },
        issue: None,
        out_dir: args.out.clone(),
        policy: ContainerPolicy::default(),
        verify_reruns: 3,
        base_repo: Some(repo.clone()),
        verify_policy: Default::default(),
    };
    let o = fix_with_image(&docker, &image, &model, plan, &run_id()).await?;
    if o.episode.as_ref().map(|e| e.stop) != Some(StopReason::Submitted)
        && o.verdict != FixVerdict::NothingFailing
    {
        tracing::warn!("the scripted demo did not submit: {}", o.one_line());
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tools::TestSummary;
    use crate::sandbox::ExecStatus;

    #[test]
    fn task_has_failing_ids_output_and_issue() {
        let run = TestRun {
            status: ExecStatus::Exited(1),
            summary: Some(TestSummary {
                passed: 3,
                failed: 1,
                errors: 0,
                skipped: 0,
                failing: vec!["tests/test_median.py::test_even".into()],
            }),
            output: "E   assert 3 == 2.5".into(),
        };
        let t = build_task(
            &run,
            Some("median is wrong for even lists"),
            &["stats/median.py".into()],
        );
        assert!(t.contains("- stats/median.py"));
        assert!(t.contains("Failing tests: tests/test_median.py::test_even"));
        assert!(t.contains("E   assert 3 == 2.5"));
        assert!(t.contains("Problem statement:\nmedian is wrong"));
        assert!(!build_task(&run, None, &[]).contains("Problem statement"));
        assert!(
            t.contains(r#"{"name": "view_file", "arguments": {"path": "tests/test_median.py"}}"#),
            "{t}"
        );
        assert_eq!(
            pytest_file_of("a/b.py::TestK::test_x").as_deref(),
            Some("a/b.py")
        );
        assert_eq!(pytest_file_of("noclass"), None);
    }
}
