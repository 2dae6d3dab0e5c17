//! `patchloop eval`: every task through the same path as `fix` — prepare the buggy tree,
//! run an episode in a fresh hardened container, verify the patch in another fresh container —
//! concurrently, resumable, sharded, with one result, trajectory and receipt per episode.
//!
//! Hidden test files of a task are removed from the tree the agent's image is built from and
//! handed to the verifier as holdouts, so they exist only in the verification container.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures_util::StreamExt;

use crate::agent::model::{self, Model, ModelArgs, ModelOptions, scripted::Scripted};
use crate::bench::task::{Task, read_tasks};
use crate::config::repair::RepairArgs;
use crate::config::{BudgetArgs, Budgets, Config, ConfigFile};
use crate::eval::hidden::take_hidden;
use crate::eval::oracle;
use crate::eval::plan::{self, Shard};
use crate::eval::results::{EpisodeResult, Timings, episodes_dir, load_run, run_dir, write_result};
use crate::pipeline::fix::local_config;
use crate::pipeline::plan as repair_plan;
use crate::pipeline::plan::{Outputs, RunSpec};
use crate::pipeline::targets::ids;
use crate::pipeline::{self, TargetSpec};
use crate::sandbox::prepare::{PrepareOptions, prepare};
use crate::verify::attempts::Outcome;
use crate::verify::verdict::Verdict;
use crate::verify::{Holdout, PreparedImage as VerifyImage, RerunScope};

/// `patchloop eval` flags.
#[derive(Debug, Clone, clap::Args)]
pub struct EvalCli {
    /// Tasks file (SWE-bench-compatible JSONL, e.g. bench/tasks.jsonl).
    #[arg(long)]
    pub tasks: PathBuf,
    /// Directory of source snapshots (`<owner>+<name>-<commit12>.tar.gz` or a directory).
    #[arg(long)]
    pub sources: PathBuf,
    /// `oracle` (applies each task's gold patch through the tools) or a model spec.
    #[command(flatten)]
    pub model: ModelArgs,
    /// Name of the run: results go to RESULTS/ID/ and a re-run with the same id resumes.
    #[arg(long)]
    pub run_id: String,
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Concurrent episodes [default: one per core, at most one per 2 GiB of memory].
    #[arg(long)]
    pub parallel: Option<usize>,
    /// Run only the I-th of N interleaved slices of the tasks (CI matrices).
    #[arg(long)]
    pub shard: Option<Shard>,
    /// Episodes per task (pass@k / pass^k).
    #[arg(long, default_value_t = 1)]
    pub attempts: u32,
    /// Verification runs before and after the patch (each).
    #[arg(long, default_value_t = 3)]
    pub reruns: usize,
    /// What verification re-runs select (see `patchloop verify --help`).
    #[arg(long, value_enum, default_value_t = RerunScope::All)]
    pub rerun_scope: RerunScope,
    #[command(flatten)]
    pub budgets: BudgetArgs,
    #[command(flatten)]
    pub repair: RepairArgs,
    /// A config file merged over each task's own .github/patchloop.yml (flags win over both).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Keep each task's sandbox image (default: removed after its episodes).
    #[arg(long)]
    pub keep_images: bool,
}

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
    pub rerun_scope: RerunScope,
    /// Merged over each task tree's `.github/patchloop.yml`.
    pub config: Option<PathBuf>,
    /// The budget flags, the top layer of every task's configuration.
    pub flags: Option<ConfigFile>,
    pub model_options: ModelOptions,
    pub keep_images: bool,
}

impl EvalArgs {
    /// The flags over the `--config` file over the defaults.
    pub fn from_cli(c: EvalCli) -> anyhow::Result<Self> {
        let flags = crate::config::flags_layer(&c.budgets, &c.repair, c.model.context_tokens);
        // The model's context window: flags > --config > default (a task's own file cannot
        // resize the server's window).
        let cfg = local_config(None, c.config.as_deref(), None, flags.clone())?;
        Ok(EvalArgs {
            model_options: c.model.options(cfg.budgets.context_tokens),
            tasks: c.tasks,
            sources: c.sources,
            model: c.model.model,
            run_id: c.run_id,
            results: c.results,
            parallel: c.parallel,
            shard: c.shard,
            attempts: c.attempts,
            reruns: c.reruns.max(1),
            rerun_scope: c.rerun_scope,
            config: c.config,
            flags,
            keep_images: c.keep_images,
        })
    }
}

#[derive(Debug)]
pub struct EvalOutput {
    pub run_dir: PathBuf,
    /// Episodes run now.
    pub ran: usize,
    /// Episodes skipped because a previous invocation finished them.
    pub skipped: usize,
    /// Over every result of the run (this invocation and earlier ones).
    pub resolved: usize,
    pub total: usize,
    /// Episodes that ended in a harness error (retried by the next invocation).
    pub errors: usize,
    /// Tasks whose test command cannot run (a configuration error), with the error.
    pub broken: Vec<(String, String)>,
    pub wall: Duration,
}

pub const ORACLE: &str = "oracle";

/// The CLI entry: run, print the summary; success when no episode hit a harness error and,
/// for the oracle, every task resolved (anything less is a harness defect).
pub async fn cli(c: EvalCli) -> anyhow::Result<bool> {
    let args = EvalArgs::from_cli(c)?;
    let o = eval(&args).await?;
    println!(
        "run {}: {} of {} episodes resolved ({} run now, {} already finished, {} harness errors) in {:.1}s; results in {}",
        args.run_id,
        o.resolved,
        o.total,
        o.ran,
        o.skipped,
        o.errors,
        o.wall.as_secs_f64(),
        o.run_dir.display()
    );
    if !o.broken.is_empty() {
        // A test command that cannot run is the task's configuration: exit 2, as `fix` does.
        let list: Vec<String> = o
            .broken
            .iter()
            .map(|(id, e)| format!("{id}: {e}"))
            .collect();
        bail!(
            "{} task(s) have a test command that cannot run (no model was asked):\n{}",
            o.broken.len(),
            list.join("\n")
        );
    }
    Ok(o.errors == 0 && (args.model != ORACLE || o.resolved == o.total))
}

pub async fn eval(args: &EvalArgs) -> anyhow::Result<EvalOutput> {
    let started = Instant::now();
    let mut tasks = read_tasks(&args.tasks)?;
    if let Some(s) = args.shard {
        tasks = s.select(tasks);
    }
    crate::eval::hidden::announce(&args.tasks, &tasks);
    if args.model != ORACLE {
        // Fail before any container starts when the spec is wrong.
        model::from_spec(&args.model, &args.model_options)?;
    }
    for t in &tasks {
        plan::find_snapshot(&args.sources, t)?;
    }
    let attempts = args.attempts.max(1);
    let eps = episodes_dir(&args.results, &args.run_id);
    std::fs::create_dir_all(&eps).with_context(|| format!("cannot create {}", eps.display()))?;
    let todo = plan::pending(&tasks, attempts, &eps);
    let total = tasks.len() * attempts as usize;
    let skipped = total - todo.len();
    if skipped > 0 {
        eprintln!(
            "resuming run {}: {skipped} of {total} episodes already finished",
            args.run_id
        );
    }
    let n_todo = todo.len();
    let mut errors = 0;
    let mut broken = Vec::new();
    if n_todo > 0 {
        let docker = crate::sandbox::connect_and_reap().await?;
        let parallel = args.parallel.unwrap_or_else(|| {
            plan::default_parallelism(
                std::thread::available_parallelism().map_or(1, |n| n.get()),
                plan::total_memory().unwrap_or(4 << 30),
            )
        });
        // Attempts of one task share its prepared image: group them, one group per future.
        let mut groups: Vec<(usize, Vec<u32>)> = Vec::new();
        for (k, a) in todo {
            match groups.last_mut() {
                Some((gk, v)) if *gk == k => v.push(a),
                _ => groups.push((k, vec![a])),
            }
        }
        let (docker, tasks, eps) = (&docker, &tasks, &eps);
        let mut stream = futures_util::stream::iter(groups)
            .map(|(k, atts)| async move { run_task(docker, args, &tasks[k], &atts, eps).await })
            .buffer_unordered(parallel.max(1));
        let (mut done, mut resolved) = (0, 0);
        let mut images = Vec::new();
        // A live bar on a terminal; one line per episode in logs (indicatif hides itself
        // when stderr is not a terminal).
        let bar = indicatif::ProgressBar::new(n_todo as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "[{bar:24}] {pos}/{len} {msg} elapsed {elapsed} ETA {eta}",
        ) {
            bar.set_style(style.progress_chars("#>-"));
        }
        bar.set_message("resolved 0");
        let finished = async {
            while let Some((results, image)) = stream.next().await {
                images.extend(image);
                for r in results {
                    done += 1;
                    resolved += usize::from(r.resolved);
                    errors += usize::from(r.error.is_some());
                    if r.funnel
                        .as_ref()
                        .is_some_and(|f| f.broken_command.is_some())
                    {
                        broken.push((r.instance_id.clone(), r.error.clone().unwrap_or_default()));
                    }
                    if let Err(e) = write_result(eps, &r) {
                        eprintln!("cannot write the result of {}: {e}", r.instance_id);
                    }
                    let what = match &r.error {
                        Some(e) => format!("error: {e}"),
                        None => r.outcome_label(),
                    };
                    bar.inc(1);
                    bar.set_message(format!(
                        "resolved {resolved} ({:.1}%)",
                        resolved as f64 * 100.0 / done as f64
                    ));
                    let line = format!("{}#{} {what}", r.instance_id, r.attempt);
                    if bar.is_hidden() {
                        eprintln!(
                            "{}  {line}",
                            plan::progress_line(done, n_todo, resolved, started.elapsed())
                        );
                    } else {
                        bar.println(line);
                    }
                }
            }
        };
        let signal = tokio::select! {
            () = finished => None,
            s = pipeline::interrupted() => Some(s),
        };
        drop(stream);
        bar.finish_and_clear();
        if let Some(signal) = signal {
            // Dropped episodes remove their containers from spawned tasks: give those a
            // moment before the runtime ends (the reaper takes whatever is left).
            tokio::time::sleep(Duration::from_secs(2)).await;
            bail!(
                "interrupted by {signal} after {done} of {n_todo} episodes; finished ones are saved in {}: run the same command again to resume",
                eps.display()
            );
        }
        if !args.keep_images {
            // Only now: builds running in parallel share cached layers with these images, and
            // removing one mid-build takes the other's parent away.
            remove_images(docker, &images).await;
        }
    }
    let all = load_run(&args.results, &args.run_id)?;
    let dir = run_dir(&args.results, &args.run_id);
    let pred = dir.join("predictions.jsonl");
    std::fs::write(&pred, plan::predictions(&all))
        .with_context(|| format!("cannot write {}", pred.display()))?;
    Ok(EvalOutput {
        run_dir: dir,
        ran: n_todo,
        skipped,
        resolved: all.iter().filter(|r| r.resolved).count(),
        total: all.len(),
        errors,
        broken,
        wall: started.elapsed(),
    })
}

fn error_result(
    args: &EvalArgs,
    task: &Task,
    attempt: u32,
    t0: Instant,
    e: &anyhow::Error,
    prepared: bool,
) -> EpisodeResult {
    // A test command that cannot run is the task's configuration, named as such in the funnel.
    let broken = e
        .chain()
        .find_map(|c| c.downcast_ref::<crate::pipeline::broken::BrokenCommand>())
        .map(|b| format!("the test command cannot run: {}", b.why));
    EpisodeResult {
        instance_id: task.instance_id.clone(),
        attempt,
        run_id: args.run_id.clone(),
        model: args.model.clone(),
        resolved: false,
        verdict: Verdict::Error,
        stop_reason: "error".into(),
        steps: 0,
        wall_ms: t0.elapsed().as_millis() as u64,
        total_tokens: 0,
        cost_usd: 0.0,
        patch: String::new(),
        trajectory: None,
        error: Some(format!("{e:#}")),
        finished_unix: crate::clock::now_unix(),
        timings: None,
        model_ms: 0,
        attempts: Vec::new(),
        origin: Some(task.origin()),
        hidden_check: None,
        hidden_check_detail: None,
        funnel: Some(crate::eval::funnel::Funnel {
            prepared,
            targets: task.fail_to_pass.len(),
            broken_command: broken,
            ..Default::default()
        }),
    }
}

async fn remove_images(docker: &bollard::Docker, tags: &[String]) {
    for tag in tags {
        let removed = docker
            .remove_image(
                tag,
                None::<bollard::query_parameters::RemoveImageOptions>,
                None,
            )
            .await;
        if let Err(e) = removed {
            tracing::warn!(error = %e, image = %tag, "could not remove the task image");
        }
    }
}

/// Every pending attempt of one task: one buggy tree and one prepared image, then one
/// episode + verification per attempt. Never fails: errors become error results.
async fn run_task(
    docker: &bollard::Docker,
    args: &EvalArgs,
    task: &Task,
    attempts: &[u32],
    eps: &Path,
) -> (Vec<EpisodeResult>, Option<String>) {
    let t0 = Instant::now();
    let setup = async {
        let work = tempfile::tempdir().context("creating a work directory")?;
        // The directory name becomes the image tag's readable part.
        let tree = work
            .path()
            .join(EpisodeResult::file_stem(&task.instance_id, 0));
        let snapshot = plan::find_snapshot(&args.sources, task)?;
        plan::materialize(&snapshot, task, &tree)?;
        let holdouts = take_hidden(&tree, &task.hidden_test_files)?;
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
        anyhow::Ok((work, tree, holdouts, prepared))
    };
    let (_work, tree, holdouts, prepared) = match setup.await {
        Ok(s) => s,
        Err(e) => {
            let errs = attempts
                .iter()
                .map(|&a| error_result(args, task, a, t0, &e, false))
                .collect();
            return (errs, None);
        }
    };
    let image = VerifyImage::from(prepared.clone());
    let prepare_ms = t0.elapsed().as_millis() as u64;
    let mut out = Vec::new();
    for &a in attempts {
        let (t, prep) = if out.is_empty() {
            (t0, prepare_ms)
        } else {
            (Instant::now(), 0)
        };
        let r = run_episode(docker, args, task, a, eps, &image, &tree, &holdouts, t)
            .await
            .map(|mut r| {
                if let Some(tm) = r.timings.as_mut() {
                    tm.prepare_ms = prep;
                }
                r
            });
        out.push(r.unwrap_or_else(|e| error_result(args, task, a, t, &e, true)));
    }
    (out, Some(prepared.tag))
}

/// One task's budgets: defaults < its tree's `.github/patchloop.yml` < `--config` < flags.
pub fn task_budgets(args: &EvalArgs, tree: &Path) -> anyhow::Result<Budgets> {
    Ok(task_config(args, tree)?.budgets)
}

/// One task's configuration, in the same layers as [`task_budgets`].
pub fn task_config(args: &EvalArgs, tree: &Path) -> anyhow::Result<Config> {
    local_config(Some(tree), args.config.as_deref(), None, args.flags.clone())
}

#[allow(clippy::too_many_arguments)]
async fn run_episode(
    docker: &bollard::Docker,
    args: &EvalArgs,
    task: &Task,
    attempt: u32,
    eps: &Path,
    image: &VerifyImage,
    tree: &Path,
    holdouts: &[Holdout],
    t0: Instant,
) -> anyhow::Result<EpisodeResult> {
    let stem = EpisodeResult::file_stem(&task.instance_id, attempt);
    let traj_name = format!("{stem}.traj.jsonl");
    let cfg = task_config(args, tree)?;
    let oracle = args.model == ORACLE;
    let model = (!oracle).then_some(args.model.as_str());
    let mut rp = repair_plan::build(&cfg, model, !oracle, &args.model_options)
        .with_context(|| format!("the configuration of {}", task.instance_id))?;
    rp.reruns = args.reruns;
    let first: Option<Box<dyn Model>> = if oracle {
        let script = oracle::script(&task.patch, tree)
            .with_context(|| format!("the gold patch of {} does not parse", task.instance_id))?;
        Some(Box::new(Scripted::from_yaml(&script.to_string(), ORACLE)?))
    } else {
        None
    };
    let models = rp.models(first, &args.model_options)?;
    rp.rerun_scope = args.rerun_scope;
    let plan = rp.runtime(RunSpec {
        test_cmd: image.test_cmd.clone(),
        targets: TargetSpec::Given {
            fail_to_pass: ids(&task.fail_to_pass),
            pass_to_pass: ids(&task.pass_to_pass),
            holdouts: holdouts.to_vec(),
        },
        statement: Some(task.problem_statement.clone()),
        // One receipts/<stem>.json per episode, written below.
        outputs: Outputs::Trajectory(eps.join(&traj_name)),
        run_id: args.run_id.clone(),
        base_repo: Some(tree.to_path_buf()),
        review: rp.review(&args.model_options)?,
        // The run's own select handles signals for every episode at once.
        cancel_on_signal: false,
        env_check: None,
    });
    let tiers: Vec<&dyn Model> = models.iter().map(|m| m.as_ref()).collect();
    let o = pipeline::run_tiers(docker, image, &tiers, &plan)
        .await
        .with_context(|| format!("trajectory {traj_name}"))?;
    let Some(receipt) = o.receipt.as_ref() else {
        bail!("verification did not run (trajectory {traj_name})");
    };
    let timings = Timings {
        prepare_ms: 0,
        episode_ms: o.episode_wall.as_millis() as u64,
        verify_ms: o.verify_wall.as_millis() as u64,
        tests_ms: receipt.tests_ms,
    };
    // Beside the episodes directory: everything in it that ends in .json is a result.
    let receipts = eps.with_file_name("receipts");
    std::fs::create_dir_all(&receipts)
        .with_context(|| format!("cannot create {}", receipts.display()))?;
    let receipt_path = receipts.join(format!("{stem}.json"));
    let text = serde_json::to_string_pretty(receipt).context("serializing the receipt")?;
    std::fs::write(&receipt_path, text)
        .with_context(|| format!("cannot write {}", receipt_path.display()))?;
    let verdict = receipt.decision.verdict;
    if verdict == Verdict::Error {
        bail!(
            "verification could not reach a verdict: {} (receipt {})",
            receipt.decision.reason,
            receipt_path.display()
        );
    }
    // Resolved = verified and the task's hidden check passes on the patch (eval/hidden.rs).
    let hidden = crate::eval::hidden::after_verdict(
        docker,
        &args.tasks,
        &args.run_id,
        task,
        image,
        verdict,
        &o.patch,
    )
    .await?;
    Ok(EpisodeResult {
        instance_id: task.instance_id.clone(),
        attempt,
        run_id: args.run_id.clone(),
        model: args.model.clone(),
        resolved: verdict == Verdict::Verified && hidden.status.allows_resolved(),
        verdict,
        stop_reason: o.stop.map(|s| s.as_str()).unwrap_or("").to_string(),
        steps: o.spent.steps,
        wall_ms: t0.elapsed().as_millis() as u64,
        total_tokens: o.spent.usage.total(),
        cost_usd: o.spent.cost_usd,
        patch: o.patch,
        trajectory: Some(traj_name),
        error: None,
        finished_unix: crate::clock::now_unix(),
        timings: Some(timings),
        model_ms: o.spent.model.as_millis() as u64,
        attempts: o.attempts.clone(),
        origin: Some(task.origin()),
        hidden_check: Some(hidden.status),
        hidden_check_detail: hidden.detail,
        funnel: Some(crate::eval::funnel::Funnel {
            prepared: true,
            targets: o.start.targets,
            reproduced: o.start.reproduced,
            broken_command: None,
            localization: o.start.localization.clone(),
            localization_ms: o.start.localization_ms,
            bug_rank: crate::eval::funnel::bug_rank(&task.patch, &o.start.ranked),
            candidate_passed: o.attempts.iter().any(|a| {
                a.passing > 0
                    || matches!(
                        a.result,
                        Outcome::VERIFIED | Outcome::Passing | Outcome::Judged(_)
                    )
            }),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_task_reads_its_own_config_under_the_flags() {
        let tree = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tree.path().join(".github")).unwrap();
        std::fs::write(
            tree.path().join(".github/patchloop.yml"),
            "budgets:\n  max_steps: 7\n  max_tokens: 100\n",
        )
        .unwrap();
        let cli = EvalCli {
            tasks: "t.jsonl".into(),
            sources: "s".into(),
            model: crate::agent::model::ModelArgs {
                model: ORACLE.into(),
                base_url: None,
                ollama_url: None,
                tool_choice: Default::default(),
                temperature: 0.0,
                context_tokens: None,
                think: None,
                request_timeout: 1,
            },
            run_id: "r".into(),
            results: "res".into(),
            parallel: None,
            shard: None,
            attempts: 1,
            reruns: 1,
            rerun_scope: RerunScope::All,
            repair: Default::default(),
            budgets: BudgetArgs {
                max_tokens: Some(500),
                ..Default::default()
            },
            config: None,
            keep_images: false,
        };
        let args = EvalArgs::from_cli(cli).unwrap();
        let b = task_budgets(&args, tree.path()).unwrap();
        assert_eq!(b.max_steps, 7, "the task's own file");
        assert_eq!(b.max_tokens, 500, "flags win");
        let other = tempfile::tempdir().unwrap();
        assert_eq!(
            task_budgets(&args, other.path()).unwrap().max_steps,
            Budgets::default().max_steps
        );
    }

    #[test]
    fn hidden_files_leave_the_tree_and_become_holdouts() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("tests")).unwrap();
        std::fs::write(d.path().join("tests/test_h.py"), "def test(): pass\n").unwrap();
        let h = take_hidden(d.path(), &["./tests/test_h.py".into()]).unwrap();
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].dest, "tests/test_h.py");
        assert_eq!(h[0].contents, b"def test(): pass\n");
        assert!(!d.path().join("tests/test_h.py").exists());
        let missing = take_hidden(d.path(), &["tests/test_h.py".into()]).unwrap_err();
        assert!(format!("{missing:#}").contains("not in the task's tree"));
        for bad in ["../x.py", "/etc/passwd", "tests/../../x", ""] {
            assert!(take_hidden(d.path(), &[bad.into()]).is_err(), "{bad}");
        }
    }
}
