// DRAFT, NOT YET COMPILED: written against the agent and verify branches' APIs (episode::run,
// Scripted::from_yaml, verify::verify, verify::policy::DirTree) before they were in main. Once
// they are merged: add `pub mod run;` to src/eval/mod.rs, an `Eval` CLI variant mapping onto
// `EvalArgs`, fix what the merged APIs changed, and test `--model oracle` on bench/tasks.jsonl.

//! `patchloop eval`: every task through the same path as `fix` — prepare the buggy tree,
//! run an episode in a fresh hardened container, verify the patch in another fresh container —
//! in parallel, resumable, sharded, with one result, trajectory and receipt per episode.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::json;
use tokio::sync::Semaphore;

use crate::agent::episode::{self, Budgets, EpisodeConfig};
use crate::agent::model::{self, Model, ModelOptions, scripted::Scripted};
use crate::agent::tools::ToolConfig;
use crate::agent::trajectory::{FORMAT_VERSION, Header, Trajectory};
use crate::bench::task::{Task, read_tasks};
use crate::eval::oracle;
use crate::eval::plan::{self, Shard};
use crate::eval::results::{EpisodeResult, episodes_dir, load_run, run_dir, write_result};
use crate::sandbox::container::Container;
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::prepare::{PrepareOptions, prepare};
use crate::verify::policy::DirTree;
use crate::verify::{PreparedImage as VerifyImage, VerifyRequest, verify};

#[derive(Debug, Clone)]
pub struct EvalArgs {
    pub tasks: PathBuf,
    pub sources: PathBuf,
    /// A model spec (`ollama:…`, `openai:…`, `scripted:FILE`) or `oracle`.
    pub model: String,
    pub run_id: String,
    pub results: PathBuf,
    pub parallel: Option<usize>,
    pub shard: Option<Shard>,
    pub attempts: u32,
    /// Verification re-runs before and after the patch.
    pub reruns: usize,
    pub max_steps: usize,
    pub model_options: ModelOptions,
}

pub struct EvalOutput {
    pub run_dir: PathBuf,
    pub ran: usize,
    pub skipped: usize,
    pub resolved: usize,
    pub total: usize,
    pub wall: Duration,
}

const ORACLE: &str = "oracle";

pub async fn eval(args: &EvalArgs) -> anyhow::Result<EvalOutput> {
    let started = Instant::now();
    let mut tasks = read_tasks(&args.tasks)?;
    if let Some(s) = args.shard {
        tasks = s.select(tasks);
    }
    if args.model != ORACLE {
        // Fail before any container starts when the spec is wrong.
        model::from_spec(&args.model, &args.model_options)?;
    }
    for t in &tasks {
        plan::find_snapshot(&args.sources, t)?;
    }
    let eps = episodes_dir(&args.results, &args.run_id);
    std::fs::create_dir_all(&eps)
        .with_context(|| format!("cannot create {}", eps.display()))?;
    let todo = plan::pending(&tasks, args.attempts.max(1), &eps);
    let total = tasks.len() * args.attempts.max(1) as usize;
    let skipped = total - todo.len();
    if skipped > 0 {
        eprintln!("resuming run {}: {skipped} of {total} episodes already finished", args.run_id);
    }
    let docker = crate::cli::connect_and_reap().await?;
    let parallel = args.parallel.unwrap_or_else(|| {
        plan::default_parallelism(
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            plan::total_memory().unwrap_or(4 << 30),
        )
    });
    let sem = Arc::new(Semaphore::new(parallel.max(1)));
    let done = Arc::new(AtomicUsize::new(0));
    let resolved = Arc::new(AtomicUsize::new(0));
    let tasks = Arc::new(tasks);
    let args_arc = Arc::new(args.clone());
    let mut set = tokio::task::JoinSet::new();
    let n_todo = todo.len();
    for (k, attempt) in todo {
        let (sem, done, resolved, tasks, args, docker, eps) = (
            sem.clone(),
            done.clone(),
            resolved.clone(),
            tasks.clone(),
            args_arc.clone(),
            docker.clone(),
            eps.clone(),
        );
        set.spawn(async move {
            let Ok(_permit) = sem.acquire_owned().await else {
                return;
            };
            let task = &tasks[k];
            let r = run_one(&docker, &args, task, attempt, &eps).await;
            if r.resolved {
                resolved.fetch_add(1, Ordering::SeqCst);
            }
            if let Err(e) = write_result(&eps, &r) {
                eprintln!("cannot write the result of {}: {e}", task.instance_id);
            }
            let d = done.fetch_add(1, Ordering::SeqCst) + 1;
            eprintln!(
                "{}  {} {}",
                plan::progress_line(d, n_todo, resolved.load(Ordering::SeqCst), started.elapsed()),
                task.instance_id,
                r.verdict
            );
        });
    }
    while set.join_next().await.is_some() {}
    let all = load_run(&args.results, &args.run_id)?;
    let dir = run_dir(&args.results, &args.run_id);
    std::fs::write(dir.join("predictions.jsonl"), plan::predictions(&all))?;
    Ok(EvalOutput {
        run_dir: dir,
        ran: n_todo,
        skipped,
        resolved: all.iter().filter(|r| r.resolved).count(),
        total: all.len(),
        wall: started.elapsed(),
    })
}

fn error_result(args: &EvalArgs, task: &Task, attempt: u32, t0: Instant, e: &anyhow::Error) -> EpisodeResult {
    EpisodeResult {
        instance_id: task.instance_id.clone(),
        attempt,
        run_id: args.run_id.clone(),
        model: args.model.clone(),
        resolved: false,
        verdict: "error".into(),
        stop_reason: "error".into(),
        steps: 0,
        wall_ms: t0.elapsed().as_millis() as u64,
        total_tokens: 0,
        cost_usd: 0.0,
        patch: String::new(),
        trajectory: None,
        error: Some(format!("{e:#}")),
        finished_unix: crate::cli::now_unix(),
    }
}

async fn run_one(
    docker: &bollard::Docker,
    args: &EvalArgs,
    task: &Task,
    attempt: u32,
    eps: &Path,
) -> EpisodeResult {
    let t0 = Instant::now();
    match try_run_one(docker, args, task, attempt, eps, t0).await {
        Ok(r) => r,
        Err(e) => error_result(args, task, attempt, t0, &e),
    }
}

async fn try_run_one(
    docker: &bollard::Docker,
    args: &EvalArgs,
    task: &Task,
    attempt: u32,
    eps: &Path,
    t0: Instant,
) -> anyhow::Result<EpisodeResult> {
    let stem = EpisodeResult::file_stem(&task.instance_id, attempt);
    let work = tempfile::tempdir().context("creating a work directory")?;
    let tree = work.path().join("repo");
    let snapshot = plan::find_snapshot(&args.sources, task)?;
    plan::materialize(&snapshot, task, &tree)?;
    let prepared = prepare(
        docker,
        &PrepareOptions {
            path: tree.clone(),
            test_cmd: Some(task.test_command.clone()),
            ..Default::default()
        },
    )
    .await
    .with_context(|| format!("preparing the image of {}", task.instance_id))?;

    let model: Box<dyn Model> = if args.model == ORACLE {
        let script = oracle::script(&task.patch)
            .with_context(|| format!("the gold patch of {} does not parse", task.instance_id))?;
        Box::new(Scripted::from_yaml(&script.to_string(), ORACLE)?)
    } else {
        model::from_spec(&args.model, &args.model_options)?
    };
    let policy = ContainerPolicy {
        read_only_paths: prepared.tests_dirs.clone(),
        ..Default::default()
    };
    let cfg = EpisodeConfig {
        budgets: Budgets {
            max_steps: args.max_steps,
            ..Default::default()
        },
        tools: ToolConfig {
            test_cmd: prepared.test_cmd.clone(),
            ..Default::default()
        },
    };
    let traj_name = format!("{stem}.traj.jsonl");
    let mut traj = Trajectory::create(&eps.join(&traj_name))
        .with_context(|| format!("cannot create the trajectory {traj_name}"))?;
    let container = Container::start(docker, &prepared.tag, &policy, &args.run_id, "episode").await?;
    traj.header(&Header {
        format_version: FORMAT_VERSION,
        started_unix: crate::cli::now_unix(),
        model: model.describe(),
        sandbox: crate::sandbox::Sandbox::id(&container).to_string(),
        config: episode::config_value(&cfg),
        container_policy: serde_json::to_value(&policy).unwrap_or(json!(null)),
        task: task.problem_statement.clone(),
    });
    let outcome = episode::run(model.as_ref(), &container, &task.problem_statement, &cfg, &mut traj).await;
    if let Err(e) = container.remove().await {
        tracing::warn!(error = %e, "could not remove the episode container");
    }

    let mut req = VerifyRequest::new(
        VerifyImage {
            tag: prepared.tag.clone(),
            tests_dirs: prepared.tests_dirs.clone(),
            test_cmd: prepared.test_cmd.clone(),
        },
        outcome.patch.clone(),
        task.fail_to_pass.clone(),
    );
    req.pass_to_pass = task.pass_to_pass.clone();
    req.reruns = args.reruns;
    req.run_id = args.run_id.clone();
    let receipt = verify(docker, &req, &DirTree(tree.clone())).await;
    let receipt_name = format!("{stem}.receipt.json");
    std::fs::write(
        eps.join(&receipt_name),
        serde_json::to_string_pretty(&receipt).unwrap_or_default(),
    )?;
    let verdict = receipt.decision.verdict.as_str().to_string();
    Ok(EpisodeResult {
        instance_id: task.instance_id.clone(),
        attempt,
        run_id: args.run_id.clone(),
        model: args.model.clone(),
        resolved: verdict == "verified",
        verdict,
        stop_reason: outcome.stop.as_str().to_string(),
        steps: outcome.steps,
        wall_ms: t0.elapsed().as_millis() as u64,
        total_tokens: outcome.usage.total(),
        cost_usd: outcome.cost_usd,
        patch: outcome.patch,
        trajectory: Some(traj_name),
        error: None,
        finished_unix: crate::cli::now_unix(),
    })
}
