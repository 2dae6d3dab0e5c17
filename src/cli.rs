//! Command-line front end: parse, dispatch, map outcomes to documented exit codes.
//!
//! Exit codes: 0 success (fixed / verified / healthy), 1 a negative answer (no fix, not
//! verified, not healthy), 2 configuration or infrastructure error.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::clock::now_unix;
use crate::sandbox::{connect_and_reap, docker, doctor, reaper};

#[derive(Debug, Parser)]
#[command(
    name = "patchloop",
    version,
    about = "Repairs red builds: an agent fixes failing tests inside a locked-down Docker sandbox, \
             a fresh container verifies the patch, and the diff is posted to GitHub.",
    after_help = "Exit codes: 0 success, 1 no fix / not verified / not healthy, \
                  2 configuration or infrastructure error."
)]
pub struct Cli {
    /// Log filter (e.g. `info`, `patchloop=debug`); also RUST_LOG.
    #[arg(long, global = true, env = "PATCHLOOP_LOG", default_value = "warn")]
    pub log: String,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
// One value per process: the size difference between subcommands costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum Command {
    /// Check this machine: the Docker daemon, the sandbox's posture probes (capabilities,
    /// seccomp, io_uring, AF_VSOCK, network, read-only root) in a real hardened container,
    /// the base images, and leftover containers.
    Doctor {
        /// Image to run the probes in (default: the newest patchloop base image).
        #[arg(long)]
        image: Option<String>,
    },
    /// Remove containers and volumes left by dead runs whose deadline passed.
    Reap,
    /// Verify a patch in a fresh container: patch policy, N runs before and after, a verdict
    /// and a receipt (receipt.json, receipt.md). Exit 0 only for a verified patch.
    ///
    /// Layers (each named in the receipt): patch policy on the diff; semantic analysis of
    /// every changed non-test Python file (capabilities the patch adds: test framework,
    /// tracing, audit hooks, import system, frames, code objects, builtins, threads, test
    /// context, process hooks, dynamic code → verdict `needs_review`, exit 1); the in-process
    /// guard; the per-test outcome stream and report fingerprints read outside the test
    /// process; workspace snapshots; a second runner without pytest (unittest or a direct
    /// call) that must agree on the fail-to-pass tests where it applies.
    Verify(Box<crate::verify::cli::VerifyArgs>),
    /// Base images: `images build [--offline]` prints the tag; `images prune` removes old ones.
    Images {
        #[command(subcommand)]
        command: crate::sandbox::image_cli::ImagesCommand,
    },
    /// Build the sandbox image of a checkout; prints its tag.
    Prepare(crate::sandbox::image_cli::PrepareArgs),
    /// Repair a checkout: reproduce the failing tests, run the agent in a fresh sandbox,
    /// verify the patch in another, write DIR/patch.diff, DIR/trajectory.jsonl and
    /// DIR/receipt.{json,md}. Reads the checkout's .github/patchloop.yml like the action
    /// (flags win). Exit 0 fixed (or nothing failing), 1 no fix, 2 configuration or
    /// infrastructure error.
    Fix(crate::pipeline::fix::FixArgs),
    /// Fix the embedded demo repository's planted bug with a scripted model in the real sandbox.
    Demo(crate::pipeline::fix::DemoArgs),
    /// Serve the sandboxed tools and the verifier to an MCP client over stdio.
    Mcp(crate::mcp::McpArgs),
    /// Run as the GitHub Action: read the event, repair, post (see docs/github.md).
    Action(ActionCli),
    /// Configuration: print the JSON Schema, or the merged config with sources.
    #[command(subcommand)]
    Config(crate::config::ConfigCli),
    /// Summarize an eval run as Markdown (resolved rate with a Wilson interval, stop reasons,
    /// verdicts, cost and model time per resolved task, strategies, pass@k; an A/B table with
    /// McNemar against other runs) and write results/ID/viewer.html.
    Report {
        #[arg(long)]
        run_id: String,
        /// Another run on the same tasks to compare with (exact McNemar test against
        /// --run-id); repeat for several arms: `--vs B --vs C`.
        #[arg(long)]
        vs: Vec<String>,
        /// Directory holding the runs.
        #[arg(long, default_value = "results")]
        results: std::path::PathBuf,
    },
    /// Benchmark tasks: generate them from a Python repository by injecting bugs.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Run every task of a tasks file through prepare, episode and verification (resumable):
    /// RESULTS/ID/episodes/*.json, trajectories, receipts and predictions.jsonl.
    Eval(Box<crate::eval::run::EvalCli>),
    /// Print a trajectory (.traj.jsonl) readably.
    Replay {
        file: std::path::PathBuf,
        /// Lines of each tool observation to show.
        #[arg(long, default_value_t = 12)]
        lines: usize,
    },
}

#[derive(Debug, clap::Args)]
pub struct ActionCli {
    /// Event name (default: GITHUB_EVENT_NAME).
    #[arg(long)]
    pub event_name: Option<String>,
    /// Event payload file (default: GITHUB_EVENT_PATH).
    #[arg(long)]
    pub event_path: Option<std::path::PathBuf>,
    /// Post nothing; write what would be posted to the job summary.
    #[arg(long)]
    pub dry_run: bool,
    /// Repository checkout (default: GITHUB_WORKSPACE, else the current directory).
    #[arg(long)]
    pub repo_dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Subcommand)]
// One value per process: the size difference between subcommands costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum BenchCommand {
    /// Inject bugs by syntax-tree mutation, validate each in the sandbox (the original passes;
    /// the mutant fails specific tests, identically twice) and write OUT/tasks.jsonl
    /// (SWE-bench-compatible), OUT/gen-report.json and the snapshot under OUT/sources/.
    Gen {
        #[arg(long)]
        repo: std::path::PathBuf,
        #[arg(long)]
        out: std::path::PathBuf,
        #[arg(long, default_value_t = 18)]
        max_tasks: usize,
        /// owner/name recorded in the tasks (default local/<directory name>).
        #[arg(long)]
        name: Option<String>,
        /// Give up after this many candidates (default 15 per wanted task + 20).
        #[arg(long)]
        max_candidates: Option<usize>,
        /// Candidate order seed: the same seed on the same code gives the same tasks.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// The test command, the way CI runs the tests [default: the prepared image's].
        #[arg(long, value_parser = crate::testcmd::TestCommand::from_flag)]
        test_cmd: Option<crate::testcmd::TestCommand>,
        /// An already prepared image of the repository.
        #[arg(long)]
        image: Option<String>,
        /// Test directory (repeatable), with --image.
        #[arg(long = "tests-dir")]
        tests_dirs: Vec<String>,
        /// Remove the prepared image when done.
        #[arg(long)]
        remove_image: bool,
    },
    /// Build tasks from bugs mined in libraries' release histories (a YAML list of fixes, each
    /// with its bug diff): the fixed release is the snapshot, the fix reverted is the bug, and
    /// the sandbox finds the tests that came with the fix (FAIL_TO_PASS). Writes
    /// OUT/tasks.jsonl, OUT/build-report.json and the snapshots under OUT/sources/.
    Real(crate::eval::realbench::RealArgs),
    /// Validate hidden checks (`hidden/<instance id>.py` beside the tasks file): each must fail
    /// on the task's buggy tree and pass with its gold patch, in the containers `eval` uses.
    Hidden(crate::eval::hidden::ValidateArgs),
    /// Coverage@k of an eval run's candidates: each passing one gets the task's hidden check,
    /// and a bug counts as covered at draw k of a shape (or stage) when one of its first k
    /// draws passes both. Writes RESULTS/RUN/coverage.{json,md} and prints the tables.
    Coverage(crate::eval::coverage::CoverageArgs),
}

/// How a command ended, mapped to the documented exit codes (errors are exit 2).
pub enum CommandOutcome {
    Success,
    Negative,
}

pub async fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing(&cli.log);
    match dispatch(cli.command).await {
        Ok(CommandOutcome::Success) => ExitCode::SUCCESS,
        Ok(CommandOutcome::Negative) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn init_tracing(filter: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .or_else(|_| tracing_subscriber::EnvFilter::try_new(filter))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

fn outcome(success: bool) -> CommandOutcome {
    if success {
        CommandOutcome::Success
    } else {
        CommandOutcome::Negative
    }
}

async fn dispatch(command: Command) -> anyhow::Result<CommandOutcome> {
    match command {
        Command::Doctor { image } => {
            let d = connect_and_reap().await?;
            let report = doctor::run(&d, image).await?;
            print!("{}", report.render());
            Ok(if report.healthy() {
                CommandOutcome::Success
            } else {
                CommandOutcome::Negative
            })
        }
        Command::Verify(args) => {
            match crate::verify::cli::exit_code(crate::verify::cli::run(*args).await?) {
                0 => Ok(CommandOutcome::Success),
                1 => Ok(CommandOutcome::Negative),
                _ => anyhow::bail!("verification could not reach a verdict (see the receipt)"),
            }
        }
        Command::Reap => {
            let d = docker::connect().await?;
            let r = reaper::reap(&d, now_unix()).await?;
            println!(
                "reaped {} containers and {} volumes; {} live containers left alone",
                r.containers_removed.len(),
                r.volumes_removed.len(),
                r.live
            );
            Ok(CommandOutcome::Success)
        }
        Command::Images { command } => {
            crate::sandbox::image_cli::images(command).await?;
            Ok(CommandOutcome::Success)
        }
        Command::Prepare(args) => {
            crate::sandbox::image_cli::prepare(args).await?;
            Ok(CommandOutcome::Success)
        }
        Command::Fix(args) => crate::pipeline::fix::fix(args).await.map(outcome),
        Command::Demo(args) => crate::pipeline::fix::demo(args).await.map(outcome),
        Command::Mcp(args) => crate::mcp::serve(args)
            .await
            .map(|()| CommandOutcome::Success),
        Command::Action(a) => {
            let args = crate::github::action::ActionArgs {
                event_name: a.event_name,
                event_path: a.event_path,
                dry_run: a.dry_run,
                repo_dir: a.repo_dir,
            };
            let fixed = crate::github::action::cli_main(
                args,
                &crate::pipeline::repair::PipelineRepairer::from_env(),
            )
            .await?;
            Ok(if fixed {
                CommandOutcome::Success
            } else {
                CommandOutcome::Negative
            })
        }
        Command::Config(c) => crate::config::cli(c).map(|()| CommandOutcome::Success),
        Command::Report {
            run_id,
            vs,
            results,
        } => {
            let out = crate::eval::commands::report(&results, &run_id, &vs)?;
            print!("{}", out.markdown);
            eprintln!("viewer: {}", out.viewer_path.display());
            Ok(CommandOutcome::Success)
        }
        Command::Bench(BenchCommand::Gen {
            repo,
            out,
            max_tasks,
            name,
            max_candidates,
            seed,
            test_cmd,
            image,
            tests_dirs,
            remove_image,
        }) => {
            let args = crate::bench::commands::GenArgs {
                repo,
                out,
                name,
                max_tasks,
                max_candidates,
                seed,
                test_cmd,
                image,
                tests_dirs,
                remove_image,
            };
            let o = crate::bench::commands::gen_tasks(&args).await?;
            println!(
                "{} tasks written to {} ({} candidates tried; rejected: {:?}); snapshot {}",
                o.report.accepted,
                o.tasks_path.display(),
                o.report.candidates_tried,
                o.report.rejected,
                o.snapshot_dir.display()
            );
            Ok(if o.report.accepted > 0 {
                CommandOutcome::Success
            } else {
                CommandOutcome::Negative
            })
        }
        Command::Bench(BenchCommand::Real(args)) => {
            let built = crate::eval::realbench::build(&args).await?;
            println!(
                "{} tasks written to {}",
                built.len(),
                args.out.join("tasks.jsonl").display()
            );
            Ok(CommandOutcome::Success)
        }
        Command::Bench(BenchCommand::Hidden(args)) => {
            let v = crate::eval::hidden::validate(&args).await?;
            let bad: Vec<_> = v.iter().filter(|v| !v.ok()).collect();
            println!(
                "{} of {} hidden checks fail on the buggy tree and pass with the gold patch",
                v.len() - bad.len(),
                v.len()
            );
            for b in &bad {
                println!(
                    "  {}: buggy {}, gold {}: {}",
                    b.instance_id,
                    b.buggy.as_str(),
                    b.gold.as_str(),
                    b.detail.as_deref().unwrap_or("")
                );
            }
            Ok(outcome(bad.is_empty()))
        }
        Command::Bench(BenchCommand::Coverage(args)) => {
            let c = crate::eval::coverage::cli(&args).await?;
            println!("{}", crate::eval::coverage::render(&c));
            Ok(CommandOutcome::Success)
        }
        Command::Eval(args) => crate::eval::run::cli(*args).await.map(outcome),
        Command::Replay { file, lines } => {
            print!("{}", crate::eval::commands::replay(&file, lines)?);
            Ok(CommandOutcome::Success)
        }
    }
}
