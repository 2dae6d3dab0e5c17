//! `patchloop fix` and `patchloop demo`: the pipeline from the command line. Reads the
//! checkout's configuration like the action does, prints the diff and a one-line outcome, and
//! writes `patch.diff`, `trajectory.jsonl` and `receipt.{json,md}`.
//!
//! Exit codes (by [`RepairResult::success`]): 0 fixed (or nothing failing), 1 no fix, 2
//! configuration or infrastructure error.

use crate::testcmd::TestCommand;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, anyhow};

use super::plan::{self as repair_plan, RepairPlan};
use super::plan::{Outputs, RunSpec};
use super::targets::ids;
use super::{Plan, RepairResult, TargetSpec};
use crate::agent::attempt::StopReason;
use crate::agent::model::{self, ModelArgs};
use crate::agent::tools::ToolConfig;
use crate::config::repair::RepairArgs;
use crate::config::{BudgetArgs, Config, ConfigFile, Source};
use crate::sandbox::cipython::CiPython;
use crate::verify::PreparedImage;
use crate::verify::outcome::Outcome;

#[derive(Debug, Clone, clap::Args)]
pub struct FixArgs {
    /// The checkout to repair (its .github/patchloop.yml is read, as by the action).
    #[arg(long)]
    pub repo: PathBuf,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Test command, the way CI runs the tests (`PYTHONPATH=src python -m pytest -q tests`,
    /// `tox -e py311`, `cd pkg && pytest`, `uv run pytest`, …) [default: the config's
    /// test_command, else the prepared image's, `python -m pytest`].
    #[arg(long, value_parser = TestCommand::from_flag)]
    pub test_cmd: Option<TestCommand>,
    /// Tests the patch must make pass (repeatable; a file names all its tests). Other tests
    /// failing before the patch are pre-existing: not required to pass. Default: every test
    /// the reproduction run sees failing.
    #[arg(long = "fail-to-pass")]
    pub fail_to_pass: Vec<String>,
    /// A saved log of the failed CI job: its failing tests are the targets (with
    /// --fail-to-pass's), as the action reads them.
    #[arg(long, value_name = "FILE")]
    pub ci_log: Option<PathBuf>,
    /// Without named targets, when the image's Python differs from the CI's: how to get an
    /// image of the CI's Python to run the failing tests on again (a failure that passes there
    /// is environmental, not a target; one that fails there too is a target). `build` (the
    /// default) uses one already here, else pulls python:X.Y-slim, else debootstraps the
    /// Debian suite with that Python (bullseye 3.9, trixie 3.13: minutes once, reused by tag);
    /// `local` only uses images already here; `off` only reads the tracebacks. Without such an
    /// image, failures whose traceback ends outside the repository are suspected environmental,
    /// and the output says why no image could be had.
    #[arg(long, value_enum, default_value_t = CiPython::Build, value_name = "MODE")]
    pub ci_python: CiPython,
    /// A problem statement (Markdown/text) added to the task.
    #[arg(long)]
    pub issue: Option<PathBuf>,
    /// Use an already prepared sandbox image instead of preparing one.
    #[arg(long)]
    pub image: Option<String>,
    #[command(flatten)]
    pub budgets: BudgetArgs,
    #[command(flatten)]
    pub repair: RepairArgs,
    /// Verification runs before and after the patch, in a fresh container [default: the
    /// config's reruns, 3] (0 skips verification: "fixed" then only means the tests passed
    /// in the agent's own container).
    #[arg(long)]
    pub reruns: Option<usize>,
    /// Another config file merged over the repository's .github/patchloop.yml.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// An organisation-level patchloop.yml merged under the repository's.
    #[arg(long)]
    pub org_config: Option<PathBuf>,
    /// Where patch.diff, trajectory.jsonl and receipt.{json,md} go.
    #[arg(long, default_value = "patchloop-out")]
    pub out: PathBuf,
}

/// The merged configuration of a local run over `repo`, flags applied last.
pub fn local_config(
    repo: Option<&Path>,
    config: Option<&Path>,
    org: Option<&Path>,
    flags: Option<ConfigFile>,
) -> anyhow::Result<Config> {
    let mut cfg = crate::config::load_local(repo, config, org)?;
    if let Some(f) = flags {
        cfg.apply(&f, Source::Flag("command line".into()));
    }
    Ok(cfg)
}

fn print_outcome(o: &RepairResult, out_dir: &Path) {
    if !o.patch.is_empty() {
        println!("{}", o.patch.trim_end());
    }
    let t = &o.targets;
    if !t.fail_to_pass.is_empty() || !t.pre_existing.is_empty() {
        // The three groups the receipt records too.
        let p2p = o
            .receipt
            .as_ref()
            .map(|r| {
                format!(
                    "{} tests that passed before, enforced",
                    r.decision.pass_to_pass.len()
                )
            })
            .unwrap_or_else(|| "not verified".into());
        eprintln!(
            "targets: {}\npre-existing failures (not required to pass): {}\npass-to-pass: {p2p}",
            list_or_none(&super::targets::strings(&t.fail_to_pass)),
            list_or_none(&super::targets::strings(&t.pre_existing))
        );
    }
    eprintln!(
        "patch: {}  trajectory: {}",
        out_dir.join("patch.diff").display(),
        out_dir.join("trajectory.jsonl").display()
    );
    println!("{}", o.one_line());
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// The command a repair runs: the given one, unless the image was prepared with it (then the
/// image's, which has what it delegates to resolved from the checkout's files); else the
/// image's.
pub fn chosen_command(given: Option<&TestCommand>, image: &PreparedImage) -> TestCommand {
    match given {
        Some(g) if g.written != image.test_cmd.written => g.clone(),
        _ => image.test_cmd.clone(),
    }
}

/// What a local repair's run brings (`RepairPlan::runtime`): the test command (`test_cmd`,
/// else the config's, else the image's), outputs to `out_dir`, reproduced targets.
pub fn run_spec(
    rp: &RepairPlan,
    image: &PreparedImage,
    out_dir: &Path,
    base_repo: Option<&Path>,
    test_cmd: Option<&TestCommand>,
) -> anyhow::Result<RunSpec> {
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create the output directory {}", out_dir.display()))?;
    Ok(RunSpec {
        test_cmd: chosen_command(test_cmd.or(rp.test_cmd.as_ref()), image),
        targets: TargetSpec::reproduced(),
        statement: None,
        outputs: Outputs::Dir(out_dir.to_path_buf()),
        run_id: super::run_id("fix"),
        base_repo: base_repo.map(Path::to_path_buf),
        review: None,
        cancel_on_signal: true,
        env_check: None,
    })
}

/// The stages each model tier is to run, as printed before the run (`sampled` may run again
/// after them while time is left; the receipt says what ran and what was skipped).
fn planned_stages(plan: &Plan, models: &[&dyn model::Model]) -> String {
    models
        .iter()
        .enumerate()
        .map(|(tier, m)| {
            let (kinds, _) = plan.tier_strategies(tier, &m.spec());
            let names: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
            format!("{}: {}", m.spec(), names.join(" → "))
        })
        .collect::<Vec<_>>()
        .join(", then ")
}

/// Run the plan (the receipt goes next to the patch).
async fn run_and_print_plan(
    docker: &bollard::Docker,
    image: &PreparedImage,
    models: &[&dyn model::Model],
    plan: &Plan,
) -> anyhow::Result<RepairResult> {
    eprintln!("repair: {}", planned_stages(plan, models));
    if plan.verify_reruns > 0 {
        eprintln!(
            "verification: {} runs before and after the patch, in fresh containers",
            plan.verify_reruns
        );
    }
    super::run_tiers(docker, image, models, plan).await
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

async fn fix_inner(args: &FixArgs) -> anyhow::Result<RepairResult> {
    if !args.repo.is_dir() && args.image.is_none() {
        return Err(anyhow!(
            "--repo {} is not a directory: pass the checkout to repair",
            args.repo.display()
        ));
    }
    let repo_dir = args.repo.is_dir().then_some(args.repo.as_path());
    let cfg = local_config(
        repo_dir,
        args.config.as_deref(),
        args.org_config.as_deref(),
        crate::config::flags_layer(&args.budgets, &args.repair, args.model.context_tokens),
    )?;
    let options = args.model.options(cfg.budgets.context_tokens);
    let mut rp = repair_plan::build(&cfg, Some(&args.model.model), true, &options)
        .context("the repair configuration")?;
    if let Some(n) = args.reruns {
        rp.reruns = n;
    }
    let models = rp.models(None, &options)?;
    let issue = match &args.issue {
        Some(p) => Some(
            std::fs::read_to_string(p)
                .with_context(|| format!("cannot read the issue file {}", p.display()))?,
        ),
        None => None,
    };
    let docker = crate::sandbox::connect_and_reap().await?;
    let test_cmd = args.test_cmd.as_ref().or(rp.test_cmd.as_ref());
    let image = match &args.image {
        Some(tag) => super::inspect_image(&docker, tag).await?,
        None => {
            super::prepare_image(&docker, &args.repo, test_cmd, super::stderr_progress()).await?
        }
    };
    let mut run = run_spec(&rp, &image, &args.out, repo_dir, args.test_cmd.as_ref())?;
    run.review = rp.review(&options)?;
    run.statement = issue;
    let tools = ToolConfig {
        test_cmd: run.test_cmd.clone(),
        ..ToolConfig::default()
    };
    let mut named = args.fail_to_pass.clone();
    if let Some(log) = &args.ci_log {
        named.extend(super::env::ci_log_targets(log)?);
    }
    // No named targets and another Python than CI's: failures that pass on the CI's Python (or,
    // without an image of it, whose tracebacks end outside the repository) are not the
    // repair's task (pipeline/env.rs).
    let ci = super::env::CiRun {
        repo: repo_dir,
        mode: args.ci_python,
        progress: super::stderr_progress(),
    };
    if named.is_empty()
        && let Some(split) =
            super::env::split_environmental(&docker, &image, &tools, &run.run_id, &ci).await?
    {
        eprintln!("environment check: {}", split.summary());
        run.env_check = Some(split.summary());
        if !split.environmental.is_empty() {
            let label = match split.method {
                super::env::Method::Rerun { .. } => "environmental (not targets)",
                super::env::Method::Tracebacks { .. } => "suspected environmental (not targets)",
            };
            eprint!("{label}: {}", split.statement());
            if split.targets.is_empty() {
                return Err(anyhow!(
                    "every failing test is environmental ({}); name the real targets with --fail-to-pass or --ci-log",
                    split.note
                ));
            }
            run.statement = Some(match run.statement.take() {
                Some(s) => format!("{s}\n\n{}", split.statement()),
                None => split.statement(),
            });
            named = split.targets;
        }
    }
    run.targets = TargetSpec::named(ids(&named));
    let plan = rp.runtime(run);
    let tiers: Vec<&dyn model::Model> = models.iter().map(|m| m.as_ref()).collect();
    run_and_print_plan(&docker, &image, &tiers, &plan).await
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

async fn demo_inner(args: &DemoArgs) -> anyhow::Result<RepairResult> {
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
    let docker = crate::sandbox::docker::connect().await?;
    let image = match &args.image {
        Some(tag) => super::inspect_image(&docker, tag).await?,
        None => super::prepare_image(&docker, &repo, None, super::stderr_progress()).await?,
    };
    let cfg = crate::config::load_local(Some(&repo), None, None)?;
    let rp = repair_plan::build(&cfg, None, false, &model::ModelOptions::default())
        .context("the demo's configuration")?;
    let plan = rp.runtime(run_spec(&rp, &image, &args.out, Some(&repo), None)?);
    let o = run_and_print_plan(&docker, &image, &[&model], &plan).await?;
    if o.stop != Some(StopReason::Submitted) && o.outcome != Outcome::NothingFailing {
        tracing::warn!("the scripted demo did not submit: {}", o.one_line());
    }
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_the_top_layer_and_name_their_source() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".github")).unwrap();
        std::fs::write(
            d.path().join(".github/patchloop.yml"),
            "test_command: make test\nbudgets:\n  max_steps: 7\n  max_tokens: 5000\n",
        )
        .unwrap();
        let extra = d.path().join("extra.yml");
        std::fs::write(&extra, "budgets:\n  max_tokens: 6000\n").unwrap();
        let flags = BudgetArgs {
            max_steps: Some(3),
            ..BudgetArgs::default()
        };
        let cfg = local_config(Some(d.path()), Some(&extra), None, flags.layer(None)).unwrap();
        assert_eq!(cfg.budgets.max_steps, 3);
        assert_eq!(cfg.budgets.max_tokens, 6000);
        assert_eq!(cfg.test_command.as_deref(), Some("make test"));
        assert_eq!(
            cfg.sources["budgets.max_steps"],
            Source::Flag("command line".into())
        );
        assert!(matches!(cfg.sources["budgets.max_tokens"], Source::File(_)));
        assert!(matches!(cfg.sources["test_command"], Source::Repo(_)));
        assert_eq!(cfg.sources["budgets.max_seconds"], Source::Default);
        // No flag given: no layer, the files decide.
        assert!(BudgetArgs::default().layer(None).is_none());
        let missing = local_config(Some(d.path()), Some(&d.path().join("nope.yml")), None, None);
        assert!(format!("{:#}", missing.unwrap_err()).contains("nope.yml"));
    }
}
