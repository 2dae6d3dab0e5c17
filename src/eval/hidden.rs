//! Hidden checks: one small pytest file per task that tests the fixed behaviour on inputs the
//! task's own tests do not use. A verified patch that fails it passed the tests without fixing
//! the bug (a special case for the tested inputs, a dropped feature), so the eval counts a task
//! as resolved only when its patch is verified **and** passes the check.
//!
//! A task's check is `<directory of the tasks file>/hidden/<instance id>.py` (e.g.
//! `bench/hidden/…`, `bench/real/hidden/…`). It never enters the sandbox image or the agent's
//! container: after a `verified` verdict the eval starts one more fresh container from the
//! task's image, hardened like the verifier's (the same `ContainerPolicy`, tests read-only, no
//! step loop), applies the patch with the verifier's `git apply`, writes the check to `/tmp`
//! and runs it with the image's test command under an empty `pytest.ini` (the project's
//! pytest configuration and conftests do not apply to it), the checkout first on `sys.path`
//! as pytest puts it for the project's own tests. The check is an evaluation
//! measure, not a security layer: code under test runs in the same process as the check.
//!
//! `patchloop bench hidden` validates the checks the same way: each must fail on the buggy
//! tree (so it witnesses the bug) and pass with the gold patch.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde::Serialize;

use crate::bench::task::{Task, read_tasks};
use crate::eval::plan::{self, Shard};
use crate::sandbox::container::Container;
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::prepare::{PrepareOptions, prepare};
use crate::sandbox::{ExecRequest, ExecStatus, Sandbox};
use crate::verify::junit::{self, TestOutcome};
use crate::verify::verdict::Verdict;
use crate::verify::{Holdout, PreparedImage};

pub use crate::eval::results::HiddenCheck;

/// The outcome of one check run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRun {
    pub status: HiddenCheck,
    /// Failing tests and their messages, or why the check could not run.
    pub detail: Option<String>,
}

impl CheckRun {
    fn bare(status: HiddenCheck) -> Self {
        CheckRun {
            status,
            detail: None,
        }
    }
}

/// The checks' directory beside a tasks file.
pub const CHECKS_DIR: &str = "hidden";

/// Where the check of `instance_id` lives for the tasks file `tasks_file`.
pub fn check_path(tasks_file: &Path, instance_id: &str) -> PathBuf {
    let safe: String = instance_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    tasks_file
        .parent()
        .unwrap_or(Path::new(""))
        .join(CHECKS_DIR)
        .join(format!("{safe}.py"))
}

/// The task's check, if it has one.
pub fn load(tasks_file: &Path, instance_id: &str) -> anyhow::Result<Option<String>> {
    let p = check_path(tasks_file, instance_id);
    match std::fs::read_to_string(&p) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read the hidden check {}", p.display())),
    }
}

/// The tasks without a check (said at the start of a run, so a missing check is never silent).
pub fn without_check(tasks_file: &Path, tasks: &[Task]) -> Vec<String> {
    tasks
        .iter()
        .filter(|t| !check_path(tasks_file, &t.instance_id).is_file())
        .map(|t| t.instance_id.clone())
        .collect()
}

/// Say which tasks have no check before a run starts: their verified patches count as
/// resolved, and a check file under the wrong name must not pass unnoticed.
pub fn announce(tasks_file: &Path, tasks: &[Task]) {
    let missing = without_check(tasks_file, tasks);
    if !missing.is_empty() {
        eprintln!(
            "{} of {} tasks have no hidden check ({}/<instance id>.py beside the tasks file), e.g. {}: a verified patch resolves them alone",
            missing.len(),
            tasks.len(),
            CHECKS_DIR,
            missing[0]
        );
    }
}

/// Where the check runs inside its container (never the workspace, so no project file,
/// conftest or ini applies to it).
const DIR: &str = "/tmp/patchloop-hidden";
const FILE: &str = "test_patchloop_hidden_check.py";
/// Prints the directories the project's pytest configuration puts on `sys.path` (its
/// `pythonpath`, read where pytest reads it), for the check's `PYTHONPATH`: a check runs
/// outside that configuration, but a project that is not installed is found through it.
const INI_PYTHONPATH: &str = include_str!("../../images/harness/pl_ini_path.py");

/// A check tests a few calls; a patched function that loops on its inputs fails it.
const TIMEOUT: Duration = Duration::from_secs(300);

/// Run `check` in a fresh hardened container of `image` with `patch` applied (none when empty).
/// `Err` is an infrastructure failure (Docker); everything the check or patch does is a status.
pub async fn run_check(
    docker: &bollard::Docker,
    image: &PreparedImage,
    patch: &str,
    check: &str,
    run_id: &str,
) -> anyhow::Result<CheckRun> {
    // The verifier's hardening: the default policy, tests read-only, one Docker exec per step.
    let policy = ContainerPolicy {
        read_only_paths: image.tests_dirs.clone(),
        step_loop: false,
        ..Default::default()
    };
    let container = Container::start(docker, &image.tag, &policy, run_id, "hidden-check")
        .await
        .context("starting the hidden check's container")?;
    let result = run_in(&container, &image.test_cmd, patch, check).await;
    if let Err(e) = container.remove().await {
        tracing::warn!(error = %e, "could not remove the hidden check's container");
    }
    result
}

async fn run_in(
    c: &dyn Sandbox,
    test_cmd: &crate::testcmd::TestCommand,
    patch: &str,
    check: &str,
) -> anyhow::Result<CheckRun> {
    if !patch.trim().is_empty()
        && let Err(e) = crate::verify::exec::apply_patch(c, patch).await
    {
        // The verifier applied this patch to the same tree; failing now is infrastructure.
        bail!("the patch does not apply in the hidden check's container: {e}");
    }
    let put = c
        .exec(
            ExecRequest::argv([
                "sh",
                "-c",
                "mkdir -p \"$1\" && printf '[pytest]\\n' > \"$1/pytest.ini\" && cat > \"$1/$2\"",
                "sh",
                DIR,
                FILE,
            ])
            .stdin(check.as_bytes().to_vec())
            .timeout(Duration::from_secs(30)),
        )
        .await?;
    if !put.status.success() {
        bail!(
            "cannot write the hidden check into its container: {}",
            put.output.render()
        );
    }
    let junit_path = format!("{DIR}/junit.xml");
    let run = c
        .exec(
            // The checkout first on sys.path, as the project's own tests find it (pytest puts
            // their rootdir there): a check must import the patched code even where the image
            // installs none (funcy) or a dependency installed a registry copy (Automat).
            // And what the project's pytest configuration adds (`pythonpath = src`).
            ExecRequest::shell(format!(
                "cd /workspace && export PYTHONPATH=/workspace${{PYTHONPATH:+:$PYTHONPATH}} && \
                 pp=$(python3 -c {} /workspace 2>/dev/null); \
                 if [ -n \"$pp\" ]; then export PYTHONPATH=\"$pp:$PYTHONPATH\"; fi; {}",
                crate::testcmd::words::quote(INI_PYTHONPATH),
                test_cmd.without_pytest_args().shell(&crate::testcmd::Run {
                    workspace: crate::sandbox::WORKSPACE,
                    options: &[
                        "-p".into(),
                        "no:cacheprovider".into(),
                        "-q".into(),
                        "-rfE".into(),
                        format!("--rootdir={DIR}"),
                        "-c".into(),
                        format!("{DIR}/pytest.ini"),
                        format!("--junitxml={junit_path}"),
                    ],
                    selection: &[format!("{DIR}/{FILE}")],
                })
            ))
            .timeout(TIMEOUT)
            .output_cap(64 << 10),
        )
        .await?;
    let junit = c
        .exec(ExecRequest::argv(["cat", junit_path.as_str()]).output_cap(4 << 20))
        .await?;
    let xml = junit.status.success().then(|| junit.output.render());
    Ok(classify(run.status, xml.as_deref(), &run.output.render()))
}

const MAX_DETAIL: usize = 1500;

/// The check's outcome from its exit status and JUnit report.
pub fn classify(status: ExecStatus, junit_xml: Option<&str>, output: &str) -> CheckRun {
    if status == ExecStatus::TimedOut {
        return CheckRun {
            status: HiddenCheck::Failed,
            detail: Some(format!(
                "the check did not finish in {} s (the patched code hangs on its inputs)",
                TIMEOUT.as_secs()
            )),
        };
    }
    let tail = || crate::sandbox::output::truncate_text(output.trim(), MAX_DETAIL);
    let Some(cases) = junit_xml.and_then(|x| junit::raw_cases(x).ok()) else {
        return CheckRun {
            status: HiddenCheck::Error,
            detail: Some(format!(
                "the check wrote no test report ({status:?}): {}",
                tail()
            )),
        };
    };
    let bad: Vec<String> = cases
        .iter()
        .filter(|c| matches!(c.result.outcome, TestOutcome::Failed | TestOutcome::Error))
        .map(|c| {
            let msg = c.result.message.as_deref().unwrap_or("").trim();
            let msg: String = msg.chars().take(300).collect();
            format!("{}: {msg}", c.name)
        })
        .collect();
    if !bad.is_empty() {
        let mut d = bad.join("\n");
        // A collection error's message says only that (`collection failure`): the why is in
        // the output.
        if cases.iter().any(|c| {
            c.result.outcome == TestOutcome::Error
                && c.result
                    .message
                    .as_deref()
                    .is_some_and(|m| m.contains("collection"))
        }) {
            d = format!("{d}\n{}", tail());
        }
        if d.len() > MAX_DETAIL {
            d = d.chars().take(MAX_DETAIL).collect::<String>() + " [...]";
        }
        return CheckRun {
            status: HiddenCheck::Failed,
            detail: Some(d),
        };
    }
    let passed = cases
        .iter()
        .filter(|c| c.result.outcome == TestOutcome::Passed)
        .count();
    if passed == 0 || status != ExecStatus::Exited(0) {
        return CheckRun {
            status: HiddenCheck::Error,
            detail: Some(format!(
                "the check ran no passing test and reported no failure ({status:?}): {}",
                tail()
            )),
        };
    }
    CheckRun::bare(HiddenCheck::Passed)
}

/// The eval's hook after a verdict: the task's check on a `verified` patch.
pub async fn after_verdict(
    docker: &bollard::Docker,
    tasks_file: &Path,
    run_id: &str,
    task: &Task,
    image: &PreparedImage,
    verdict: Verdict,
    patch: &str,
) -> anyhow::Result<CheckRun> {
    let Some(check) = load(tasks_file, &task.instance_id)? else {
        return Ok(CheckRun::bare(HiddenCheck::None));
    };
    if verdict != Verdict::Verified {
        return Ok(CheckRun::bare(HiddenCheck::NotRun));
    }
    run_check(docker, image, patch, &check, run_id)
        .await
        .with_context(|| format!("running the hidden check of {}", task.instance_id))
}

/// `patchloop bench hidden` flags.
#[derive(Debug, Clone, clap::Args)]
pub struct ValidateArgs {
    /// Tasks file; its checks are `hidden/<instance id>.py` beside it.
    #[arg(long)]
    pub tasks: PathBuf,
    /// Directory of source snapshots.
    #[arg(long)]
    pub sources: PathBuf,
    /// Only the I-th of N interleaved slices of the tasks.
    #[arg(long)]
    pub shard: Option<Shard>,
    /// Only these tasks (instance ids; repeatable).
    #[arg(long)]
    pub only: Vec<String>,
    /// Keep each task's sandbox image (removed by default).
    #[arg(long)]
    pub keep_images: bool,
}

/// One task's two check runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Validation {
    pub instance_id: String,
    /// On the buggy tree: must be `failed`.
    pub buggy: HiddenCheck,
    /// With the gold patch: must be `passed`.
    pub gold: HiddenCheck,
    pub detail: Option<String>,
}

impl Validation {
    pub fn ok(&self) -> bool {
        self.buggy == HiddenCheck::Failed && self.gold == HiddenCheck::Passed
    }
}

/// Check every task's hidden check: failed on the buggy tree, passed with the gold patch, in
/// the same containers the eval uses. Tasks without a check fail the validation.
pub async fn validate(args: &ValidateArgs) -> anyhow::Result<Vec<Validation>> {
    let mut tasks = read_tasks(&args.tasks)?;
    if let Some(s) = args.shard {
        tasks = s.select(tasks);
    }
    if !args.only.is_empty() {
        tasks.retain(|t| args.only.contains(&t.instance_id));
    }
    for t in &tasks {
        plan::find_snapshot(&args.sources, t)?;
    }
    let docker = crate::sandbox::connect_and_reap().await?;
    let run_id = format!("bench-hidden-{}", std::process::id());
    let mut out = Vec::new();
    for (i, t) in tasks.iter().enumerate() {
        let t0 = Instant::now();
        let v = match load(&args.tasks, &t.instance_id)? {
            None => Validation {
                instance_id: t.instance_id.clone(),
                buggy: HiddenCheck::None,
                gold: HiddenCheck::None,
                detail: Some(format!(
                    "no check at {}",
                    check_path(&args.tasks, &t.instance_id).display()
                )),
            },
            Some(check) => validate_one(&docker, args, t, &check, &run_id).await?,
        };
        eprintln!(
            "[{}/{}] {} buggy: {}, gold: {} ({:.1}s){}",
            i + 1,
            tasks.len(),
            t.instance_id,
            v.buggy.as_str(),
            v.gold.as_str(),
            t0.elapsed().as_secs_f64(),
            if v.ok() {
                String::new()
            } else {
                format!("  <-- {}", v.detail.as_deref().unwrap_or(""))
            }
        );
        out.push(v);
    }
    Ok(out)
}

async fn validate_one(
    docker: &bollard::Docker,
    args: &ValidateArgs,
    task: &Task,
    check: &str,
    run_id: &str,
) -> anyhow::Result<Validation> {
    let image = TaskImage::prepare(docker, &args.sources, task).await?;
    let runs = async {
        let buggy = run_check(docker, &image.image, "", check, run_id).await?;
        let gold = run_check(docker, &image.image, &task.patch, check, run_id).await?;
        anyhow::Ok((buggy, gold))
    }
    .await;
    if !args.keep_images {
        image.remove(docker).await;
    }
    let (buggy, gold) = runs?;
    let detail = match (buggy.status, gold.status) {
        (HiddenCheck::Failed, HiddenCheck::Passed) => None,
        (HiddenCheck::Failed, _) => gold.detail.map(|d| format!("with the gold patch: {d}")),
        _ => Some(format!(
            "the check does not fail on the buggy tree{}",
            buggy.detail.map(|d| format!(": {d}")).unwrap_or_default()
        )),
    };
    Ok(Validation {
        instance_id: task.instance_id.clone(),
        buggy: buggy.status,
        gold: gold.status,
        detail,
    })
}

/// A task's sandbox image as the eval prepares it (its hidden test files taken out), for
/// running checks in: `bench hidden`'s validation, `bench coverage`'s candidates.
pub struct TaskImage {
    pub image: PreparedImage,
    /// The tree it was built from lives as long as the image is used.
    _work: tempfile::TempDir,
}

impl TaskImage {
    pub async fn prepare(
        docker: &bollard::Docker,
        sources: &Path,
        task: &Task,
    ) -> anyhow::Result<TaskImage> {
        let work = tempfile::tempdir().context("creating a work directory")?;
        let tree = work.path().join(format!(
            "hidden-{}",
            crate::eval::results::EpisodeResult::file_stem(&task.instance_id, 0)
        ));
        let snapshot = plan::find_snapshot(sources, task)?;
        plan::materialize(&snapshot, task, &tree)?;
        // As in the eval: the image lacks the task's hidden test files.
        take_hidden(&tree, &task.hidden_test_files)?;
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
        Ok(TaskImage {
            image: PreparedImage::from(prepared),
            _work: work,
        })
    }

    /// Remove the image (a failure is logged: the run's result does not depend on it).
    pub async fn remove(self, docker: &bollard::Docker) {
        let removed = docker
            .remove_image(
                &self.image.tag,
                None::<bollard::query_parameters::RemoveImageOptions>,
                None,
            )
            .await;
        if let Err(e) = removed {
            tracing::warn!(error = %e, image = %self.image.tag, "could not remove the task image");
        }
    }
}

/// Take the hidden test files out of `tree` (so the agent's image lacks them) and return them
/// as holdouts for verification.
pub fn take_hidden(tree: &Path, hidden: &[String]) -> anyhow::Result<Vec<Holdout>> {
    let mut out = Vec::new();
    for rel in hidden {
        let clean = rel.trim_start_matches("./");
        if clean.is_empty()
            || Path::new(clean).is_absolute()
            || Path::new(clean)
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            bail!("hidden test file {rel:?} must be a plain path relative to the repository");
        }
        let p = tree.join(clean);
        let contents = std::fs::read(&p)
            .with_context(|| format!("hidden test file {rel} is not in the task's tree"))?;
        std::fs::remove_file(&p).with_context(|| format!("cannot hide {}", p.display()))?;
        out.push(Holdout {
            dest: clean.to_string(),
            contents,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSING: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="2" time="0.1"><testcase classname="test_patchloop_hidden_check" name="test_a" time="0.001" /><testcase classname="test_patchloop_hidden_check" name="test_b" time="0.001" /></testsuite></testsuites>"#;
    const FAILING: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="1" skipped="0" tests="2" time="0.1"><testcase classname="test_patchloop_hidden_check" name="test_a" time="0.001" /><testcase classname="test_patchloop_hidden_check" name="test_b" time="0.001"><failure message="assert [] == [1, 'a', 2]">trace</failure></testcase></testsuite></testsuites>"#;
    const SKIPPED: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" failures="0" skipped="1" tests="1" time="0.1"><testcase classname="c" name="test_a" time="0.001"><skipped type="pytest.skip" message="no">s</skipped></testcase></testsuite></testsuites>"#;
    const COLLECTION_ERROR: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="0" skipped="0" tests="1" time="0.1"><testcase classname="" name="tmp.patchloop-hidden.test_patchloop_hidden_check" time="0.001"><error message="collection failure">ImportError: cannot import name 'interpose'</error></testcase></testsuite></testsuites>"#;

    /// The configuration reader, run by python3 on checkouts written each way pytest reads
    /// `pythonpath` from (pytest's order: `pytest.ini` wins even without the key).
    #[test]
    fn the_ini_pythonpath_is_read_where_pytest_reads_it() {
        let read = |files: &[(&str, &str)]| {
            let d = tempfile::tempdir().unwrap();
            for (f, body) in files {
                std::fs::write(d.path().join(f), body).unwrap();
            }
            let out = std::process::Command::new("python3")
                .args(["-c", INI_PYTHONPATH])
                .arg(d.path())
                .output()
                .expect("python3 runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let root = d.path().to_string_lossy().to_string();
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .replace(&root, "ROOT")
        };
        assert_eq!(
            read(&[(
                ".pytest.ini",
                "[pytest]\ntestpaths = tests\npythonpath = src tests\n"
            )]),
            "ROOT/src:ROOT/tests"
        );
        assert_eq!(
            read(&[(
                "pyproject.toml",
                "[tool.pytest.ini_options]\npythonpath = [\"src\"]\n"
            )]),
            "ROOT/src"
        );
        assert_eq!(
            read(&[(
                "pyproject.toml",
                "[tool.pytest]\npythonpath = [\"lib\", \".\"]\n"
            )]),
            "ROOT/lib:ROOT"
        );
        assert_eq!(
            read(&[
                ("setup.cfg", "[tool:pytest]\npythonpath = src\n"),
                ("tox.ini", "[tox]\n")
            ]),
            "ROOT/src"
        );
        // pytest.ini without the key still wins over setup.cfg's.
        assert_eq!(
            read(&[
                ("pytest.ini", "[pytest]\n"),
                ("setup.cfg", "[tool:pytest]\npythonpath = src\n")
            ]),
            ""
        );
        assert_eq!(read(&[("pyproject.toml", "[project]\nname = \"x\"\n")]), "");
        assert_eq!(read(&[("setup.cfg", "not ini at all [")]), "");
    }

    #[test]
    fn outcomes_from_the_report() {
        let ok = classify(ExecStatus::Exited(0), Some(PASSING), "2 passed");
        assert_eq!(ok, CheckRun::bare(HiddenCheck::Passed));
        let bad = classify(ExecStatus::Exited(1), Some(FAILING), "1 failed");
        assert_eq!(bad.status, HiddenCheck::Failed);
        assert_eq!(
            bad.detail.as_deref(),
            Some("test_b: assert [] == [1, 'a', 2]")
        );
        // the patched code does not import: the check fails, it is not broken
        let import = classify(
            ExecStatus::Exited(2),
            Some(COLLECTION_ERROR),
            "E   ImportError: cannot import name 'Batch' from 'lib'",
        );
        assert_eq!(import.status, HiddenCheck::Failed);
        // pytest's message says only "collection failure": the output's tail says why.
        let detail = import.detail.unwrap();
        assert!(
            detail.contains("collection failure") && detail.contains("cannot import name 'Batch'"),
            "{detail}"
        );
        let hung = classify(ExecStatus::TimedOut, None, "");
        assert_eq!(hung.status, HiddenCheck::Failed);
        assert!(hung.detail.unwrap().contains("did not finish"));
        // a check that ran nothing, or wrote nothing, is a defect of the check
        let none = classify(ExecStatus::Exited(5), Some(SKIPPED), "1 skipped");
        assert_eq!(none.status, HiddenCheck::Error);
        let silent = classify(ExecStatus::Exited(4), None, "usage: error");
        assert_eq!(silent.status, HiddenCheck::Error);
        assert!(silent.detail.unwrap().contains("usage: error"));
        // a clean report with a non-zero exit is not trusted as a pass
        let odd = classify(ExecStatus::Exited(3), Some(PASSING), "INTERNALERROR");
        assert_eq!(odd.status, HiddenCheck::Error);
        assert!(HiddenCheck::None.allows_resolved() && HiddenCheck::Passed.allows_resolved());
        assert!(!HiddenCheck::Failed.allows_resolved() && !HiddenCheck::Error.allows_resolved());
    }

    #[test]
    fn checks_live_beside_the_tasks_file() {
        let d = tempfile::tempdir().unwrap();
        let tasks = d.path().join("real/tasks.jsonl");
        assert_eq!(
            check_path(&tasks, "o__n-real-0123/x"),
            d.path().join("real/hidden/o__n-real-0123_x.py")
        );
        assert_eq!(load(&tasks, "a").unwrap(), None);
        std::fs::create_dir_all(d.path().join("real/hidden")).unwrap();
        std::fs::write(d.path().join("real/hidden/a.py"), "def test(): pass\n").unwrap();
        assert_eq!(
            load(&tasks, "a").unwrap().as_deref(),
            Some("def test(): pass\n")
        );
        let t = |id: &str| -> Task {
            serde_json::from_value(serde_json::json!({
                "instance_id": id, "repo": "o/n", "base_commit": "0123456789abcdef", "patch": "",
                "problem_statement": "", "FAIL_TO_PASS": ["t::a"], "PASS_TO_PASS": []
            }))
            .unwrap()
        };
        assert_eq!(
            without_check(&tasks, &[t("a"), t("b")]),
            vec!["b".to_string()]
        );
    }
}
