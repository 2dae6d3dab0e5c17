//! `patchloop bench real`: benchmark tasks from bugs mined in libraries' release histories.
//!
//! Each bug is a fix that shipped between two consecutive releases together with the tests
//! that came with it. Built SWE-bench style: the task's snapshot is the release with the fix,
//! `bug_patch` reverts the fix's code hunks (the tests stay at the fixed release), `patch` is
//! the fix, and FAIL_TO_PASS is what the sandbox shows: the tests that pass on the release and
//! fail, identically twice, without the fix. The statement is written by the mutation
//! generator's code (failing ids and their assertion messages, leak-checked against the fix).
//!
//! The bugs are listed in a YAML file (`bench/real/bugs.yaml`), each with its bug diff:
//!
//! ```yaml
//! - name: lri-update          # unique; names the bug diff, never shown to a model
//!   repo: mahmoud/boltons
//!   library: boltons          # the release tree is TREES/<library>-<fixed_release>/
//!   buggy_release: 26.1.0
//!   fixed_release: 26.2.0
//!   changelog: "Fixed cacheutils.LRI.update rejecting empty and keyword-only updates"
//!   bug: bugs/lri-update.diff # relative to the YAML file: fixed release -> buggy tree
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::bench::commands::write_snapshot;
use crate::bench::generate::{
    SuiteRunner, content_commit, file_diff, is_library_source, read_tree,
};
use crate::bench::sandbox_runner::ContainerRunner;
use crate::bench::statement::{self, FailingTest};
use crate::bench::task::{Origin, Provenance, Task, to_jsonl};
use crate::bench::validate::{self, Baseline, Rejection, SuiteResult};
use crate::sandbox::container::Container;
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::prepare::{PrepareOptions, prepare};
use crate::sandbox::{ExecRequest, Sandbox};
use crate::verify::apply;

/// One mined bug as the spec file lists it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BugSpec {
    pub name: String,
    /// `owner/name` of the upstream repository.
    pub repo: String,
    pub library: String,
    pub buggy_release: String,
    pub fixed_release: String,
    pub changelog: String,
    /// The bug diff, relative to the spec file: applied to the fixed release it gives the
    /// buggy tree (the fix's code hunks reverted).
    pub bug: PathBuf,
}

impl BugSpec {
    /// The release tree under `trees`.
    pub fn tree(&self, trees: &Path) -> PathBuf {
        trees.join(format!("{}-{}", self.library, self.fixed_release))
    }
}

/// Read and check a spec file: names unique and file-safe, repos `owner/name`, bug diffs present.
pub fn read_spec(path: &Path) -> anyhow::Result<Vec<BugSpec>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the bug list {}", path.display()))?;
    let specs: Vec<BugSpec> = serde_yaml::from_str(&text).with_context(|| {
        format!(
            "{} is not a list of bugs (name, repo, library, buggy_release, fixed_release, changelog, bug)",
            path.display()
        )
    })?;
    let mut seen = BTreeSet::new();
    let mut bad = Vec::new();
    for s in &specs {
        if !seen.insert(s.name.as_str()) {
            bad.push(format!("{}: the name is listed twice", s.name));
        }
        if s.name.is_empty()
            || !s
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            bad.push(format!("{:?}: a name is letters, digits and '-'", s.name));
        }
        if s.repo.split('/').filter(|p| !p.is_empty()).count() != 2 {
            bad.push(format!("{}: repo {:?} is not owner/name", s.name, s.repo));
        }
        if s.changelog.trim().is_empty() {
            bad.push(format!("{}: the changelog line is empty", s.name));
        }
        let diff = spec_dir(path).join(&s.bug);
        if !diff.is_file() {
            bad.push(format!(
                "{}: bug diff {} is missing",
                s.name,
                diff.display()
            ));
        }
    }
    if !bad.is_empty() {
        bail!(
            "{} has bad entries:\n  {}",
            path.display(),
            bad.join("\n  ")
        );
    }
    Ok(specs)
}

fn spec_dir(spec: &Path) -> PathBuf {
    spec.parent().map(Path::to_path_buf).unwrap_or_default()
}

/// One changed file of a bug: its text in the fixed release and in the buggy tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    pub fixed: String,
    pub buggy: String,
}

/// Apply the bug diff to the fixed release's files. Every file it touches must be library
/// code (a bug lives in the code; the tests stay at the fixed release) and must change.
pub fn changes(
    files: &BTreeMap<String, Vec<u8>>,
    bug_diff: &str,
    tests_dirs: &[String],
) -> anyhow::Result<Vec<Change>> {
    let texts: BTreeMap<String, String> = files
        .iter()
        .filter_map(|(p, b)| Some((p.clone(), String::from_utf8(b.clone()).ok()?)))
        .collect();
    let buggy = apply::apply(bug_diff, &texts).context("the bug diff does not apply")?;
    let mut out = Vec::new();
    for (path, text) in buggy {
        if !is_library_source(&path, tests_dirs) {
            bail!(
                "the bug diff changes {path}, which is not library code (tests stay as released)"
            );
        }
        let fixed = texts[&path].clone();
        if fixed == text {
            bail!("the bug diff leaves {path} unchanged");
        }
        out.push(Change {
            path,
            fixed,
            buggy: text,
        });
    }
    Ok(out)
}

/// The gold fix (buggy → fixed) and the bug patch (fixed → buggy), one file diff each.
pub fn patches(changes: &[Change]) -> (String, String) {
    let fix = changes
        .iter()
        .map(|c| file_diff(&c.path, &c.buggy, &c.fixed))
        .collect();
    let bug = changes
        .iter()
        .map(|c| file_diff(&c.path, &c.fixed, &c.buggy))
        .collect();
    (fix, bug)
}

/// Lines the fix adds plus lines it removes.
pub fn changed_line_count(changes: &[Change]) -> usize {
    changes
        .iter()
        .map(|c| {
            similar::TextDiff::from_lines(&c.buggy, &c.fixed)
                .iter_all_changes()
                .filter(|ch| ch.tag() != similar::ChangeTag::Equal)
                .count()
        })
        .sum()
}

/// What of one changed file a statement must not mention: the buggy tree's line numbers the
/// fix touches (an insertion counts at the line it goes before) and the changed lines of both
/// versions.
pub fn leak_inputs(c: &Change) -> (Vec<usize>, Vec<String>) {
    let mut lines = BTreeSet::new();
    let mut code = Vec::new();
    for op in similar::TextDiff::from_lines(&c.buggy, &c.fixed).ops() {
        let (_, old, _) = op.as_tag_tuple();
        match op.tag() {
            similar::DiffTag::Equal => continue,
            similar::DiffTag::Insert => {
                lines.insert(old.start + 1);
            }
            _ => lines.extend(old.clone().map(|i| i + 1)),
        }
    }
    let diff = similar::TextDiff::from_lines(&c.buggy, &c.fixed);
    for ch in diff.iter_all_changes() {
        if ch.tag() != similar::ChangeTag::Equal {
            code.push(ch.value().trim_end_matches('\n').to_string());
        }
    }
    (lines.into_iter().collect(), code)
}

/// Does `report` name a changed file, line or code of the fix?
pub fn leaky(report: &str, changes: &[Change]) -> bool {
    changes.iter().any(|c| {
        let (lines, code) = leak_inputs(c);
        !statement::leaks_of_change(report, &c.path, &lines, &code).is_empty()
    })
}

/// `owner__name-real-<10 hex of the bug patch>`: stable, and says nothing about the bug.
pub fn instance_id(repo: &str, bug_patch: &str) -> String {
    let h = hex::encode(Sha256::digest(bug_patch.as_bytes()));
    format!("{}-real-{}", repo.replace('/', "__"), &h[..10])
}

/// A mined bug's task, from both runs of its buggy tree against the release's baseline.
/// `order_dependent` are failing tests that do not fail when run alone (they failed only
/// after other tests had run): the verifier selects tests by id in its own order, so they
/// are left out of both lists.
#[allow(clippy::too_many_arguments)]
pub fn build_task(
    spec: &BugSpec,
    base_commit: &str,
    changes: &[Change],
    base: &Baseline,
    run1: &SuiteResult,
    run2: &SuiteResult,
    order_dependent: &BTreeSet<String>,
    test_command: &crate::testcmd::TestCommand,
) -> Result<Task, Rejection> {
    let mut split = validate::classify(base, run1, run2)?;
    split
        .fail_to_pass
        .retain(|id| !order_dependent.contains(id));
    split
        .pass_to_pass
        .retain(|id| !order_dependent.contains(id));
    if split.fail_to_pass.is_empty() {
        return Err(Rejection::Flaky);
    }
    let failing: Vec<FailingTest> = split
        .fail_to_pass
        .iter()
        .map(|id| FailingTest {
            node_id: id.clone(),
            message: run1.tests.get(id).and_then(|c| c.message.clone()),
        })
        .collect();
    let total = base.passing.len();
    let with_output = statement::problem_statement(&failing, total, true);
    let problem_statement = if !leaky(&with_output, changes) {
        with_output
    } else {
        let names_only = statement::problem_statement(&failing, total, false);
        if leaky(&names_only, changes) {
            return Err(Rejection::Leaky);
        }
        names_only
    };
    let (patch, bug_patch) = patches(changes);
    Ok(Task {
        instance_id: instance_id(&spec.repo, &bug_patch),
        repo: spec.repo.clone(),
        base_commit: base_commit.to_string(),
        patch,
        test_patch: String::new(),
        problem_statement,
        fail_to_pass: split.fail_to_pass,
        pass_to_pass: split.pass_to_pass,
        version: spec.fixed_release.clone(),
        created_at: String::new(),
        hints_text: String::new(),
        bug_patch,
        test_command: test_command.clone(),
        hidden_test_files: Vec::new(),
        mutation_operator: None,
        origin: Some(Origin::Real),
        provenance: Some(Provenance {
            library: spec.library.clone(),
            buggy_release: spec.buggy_release.clone(),
            fixed_release: spec.fixed_release.clone(),
            changelog: spec.changelog.clone(),
            changed_lines: changed_line_count(changes),
        }),
    })
}

/// `patchloop bench real` flags.
#[derive(Debug, Clone, clap::Args)]
pub struct RealArgs {
    /// The bug list (YAML; see `bench/real/bugs.yaml`).
    #[arg(long)]
    pub spec: PathBuf,
    /// Directory of the unpacked (and trimmed) releases, one `<library>-<version>/` each.
    #[arg(long)]
    pub trees: PathBuf,
    /// Output: OUT/tasks.jsonl, OUT/build-report.json and OUT/sources/<snapshot>/.
    #[arg(long)]
    pub out: PathBuf,
    /// Build only these bugs (by name; repeatable).
    #[arg(long)]
    pub only: Vec<String>,
    /// Keep the prepared release images (removed by default).
    #[arg(long)]
    pub keep_images: bool,
}

/// One line of the build report.
#[derive(Debug, Clone, Serialize)]
pub struct Built {
    pub name: String,
    pub instance_id: Option<String>,
    pub library: String,
    pub releases: String,
    pub changed_lines: usize,
    pub fail_to_pass: usize,
    pub pass_to_pass: usize,
    /// Why no task was made (a curated bug must always make one: the build fails).
    pub rejected: Option<String>,
}

/// Build every listed bug's task; fails (after writing the report) when any bug made none.
pub async fn build(args: &RealArgs) -> anyhow::Result<Vec<Built>> {
    let mut specs = read_spec(&args.spec)?;
    if !args.only.is_empty() {
        let unknown: Vec<&String> = args
            .only
            .iter()
            .filter(|n| !specs.iter().any(|s| &&s.name == n))
            .collect();
        if !unknown.is_empty() {
            bail!("--only names bugs the list does not have: {unknown:?}");
        }
        specs.retain(|s| args.only.contains(&s.name));
    }
    for s in &specs {
        let tree = s.tree(&args.trees);
        if !tree.is_dir() {
            bail!(
                "{}: the release tree {} is missing (unpack {}=={} there; bench/real/regen does)",
                s.name,
                tree.display(),
                s.library,
                s.fixed_release
            );
        }
    }
    let docker = crate::sandbox::connect_and_reap().await?;
    // One image, container and baseline per release, in the list's order.
    let mut releases: Vec<PathBuf> = Vec::new();
    for s in &specs {
        let t = s.tree(&args.trees);
        if !releases.contains(&t) {
            releases.push(t);
        }
    }
    let mut tasks: BTreeMap<String, Task> = BTreeMap::new();
    let mut report: BTreeMap<String, Built> = BTreeMap::new();
    for tree in &releases {
        let bugs: Vec<&BugSpec> = specs
            .iter()
            .filter(|s| &s.tree(&args.trees) == tree)
            .collect();
        eprintln!(
            "{}: {} bug(s), preparing the release's image ...",
            tree.display(),
            bugs.len()
        );
        let built = build_release(&docker, args, tree, &bugs).await?;
        for (name, outcome) in built {
            let spec = bugs.iter().find(|s| s.name == name).copied();
            let Some(spec) = spec else { continue };
            let line = match &outcome {
                Ok(t) => Built {
                    name: name.clone(),
                    instance_id: Some(t.instance_id.clone()),
                    library: spec.library.clone(),
                    releases: format!("{} -> {}", spec.buggy_release, spec.fixed_release),
                    changed_lines: t.provenance.as_ref().map_or(0, |p| p.changed_lines),
                    fail_to_pass: t.fail_to_pass.len(),
                    pass_to_pass: t.pass_to_pass.len(),
                    rejected: None,
                },
                Err(reason) => Built {
                    name: name.clone(),
                    instance_id: None,
                    library: spec.library.clone(),
                    releases: format!("{} -> {}", spec.buggy_release, spec.fixed_release),
                    changed_lines: 0,
                    fail_to_pass: 0,
                    pass_to_pass: 0,
                    rejected: Some(reason.clone()),
                },
            };
            eprintln!(
                "  {:<22} {}",
                name,
                match &line.rejected {
                    None => format!(
                        "{} fail-to-pass, {} changed lines",
                        line.fail_to_pass, line.changed_lines
                    ),
                    Some(r) => format!("REJECTED: {r}"),
                }
            );
            report.insert(name.clone(), line);
            if let Ok(t) = outcome {
                tasks.insert(name, t);
            }
        }
    }
    // The list's order, so a regeneration diffs cleanly.
    let ordered: Vec<Task> = specs
        .iter()
        .filter_map(|s| tasks.get(&s.name).cloned())
        .collect();
    let lines: Vec<Built> = specs
        .iter()
        .filter_map(|s| report.get(&s.name).cloned())
        .collect();
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", args.out.display()))?;
    let tasks_path = args.out.join("tasks.jsonl");
    std::fs::write(&tasks_path, to_jsonl(&ordered)?)
        .with_context(|| format!("cannot write {}", tasks_path.display()))?;
    std::fs::write(
        args.out.join("build-report.json"),
        serde_json::to_string_pretty(&lines)?,
    )?;
    let rejected: Vec<String> = lines
        .iter()
        .filter_map(|l| l.rejected.as_ref().map(|r| format!("{}: {r}", l.name)))
        .collect();
    if !rejected.is_empty() {
        bail!(
            "{} of {} bugs made no task (a curated bug must):\n  {}",
            rejected.len(),
            lines.len(),
            rejected.join("\n  ")
        );
    }
    Ok(lines)
}

type Mined = Result<Task, String>;

/// One release: snapshot, image, baseline, then each bug's two runs.
async fn build_release(
    docker: &bollard::Docker,
    args: &RealArgs,
    tree: &Path,
    bugs: &[&BugSpec],
) -> anyhow::Result<Vec<(String, Mined)>> {
    let files =
        read_tree(tree).with_context(|| format!("cannot read the release {}", tree.display()))?;
    let base_commit = content_commit(&files);
    let repo = &bugs[0].repo;
    let snapshot =
        args.out
            .join("sources")
            .join(format!("{}-{}", repo.replace('/', "+"), &base_commit[..12]));
    write_snapshot(&snapshot, &files)
        .with_context(|| format!("cannot write the snapshot {}", snapshot.display()))?;
    let prepared = prepare(
        docker,
        &PrepareOptions {
            path: snapshot.clone(),
            ..Default::default()
        },
    )
    .await
    .with_context(|| format!("preparing the sandbox image of {}", tree.display()))?;
    let policy = ContainerPolicy {
        read_only_paths: prepared.tests_dirs.clone(),
        ..Default::default()
    };
    let run_id = format!("bench-real-{}", std::process::id());
    let container = Container::start(docker, &prepared.tag, &policy, &run_id, "bench-real").await?;
    let result = async {
        let runner = ContainerRunner::new(&container, &prepared.test_cmd, BTreeMap::new()).await?;
        let b1 = runner.run(None).await?;
        let b2 = runner.run(None).await?;
        let (Some(b1), Some(b2)) = (b1, b2) else {
            bail!(
                "the release's suite produced no test report ({}); run `{}` in it by hand",
                tree.display(),
                prepared.test_cmd
            );
        };
        let base = validate::baseline(&b1, &b2)
            .with_context(|| format!("the release {} is not a usable baseline", tree.display()))?;
        let mut out = Vec::new();
        for spec in bugs {
            let outcome = build_bug(
                &container,
                &runner,
                args,
                spec,
                &files,
                &base,
                &base_commit,
                &prepared.tests_dirs,
            )
            .await?;
            out.push((spec.name.clone(), outcome));
        }
        anyhow::Ok(out)
    }
    .await;
    if let Err(e) = container.remove().await {
        tracing::warn!(error = %e, "could not remove the bench container");
    }
    if !args.keep_images {
        let removed = docker
            .remove_image(
                &prepared.tag,
                None::<bollard::query_parameters::RemoveImageOptions>,
                None,
            )
            .await;
        if let Err(e) = removed {
            tracing::warn!(error = %e, image = %prepared.tag, "could not remove the image");
        }
    }
    result
}

/// One bug: the buggy files written over the release, the suite twice, the originals back.
/// `Ok(Err(reason))` is a bug that made no task; `Err` is an infrastructure failure.
#[allow(clippy::too_many_arguments)]
async fn build_bug(
    sandbox: &dyn Sandbox,
    runner: &ContainerRunner<'_>,
    args: &RealArgs,
    spec: &BugSpec,
    files: &BTreeMap<String, Vec<u8>>,
    base: &Baseline,
    base_commit: &str,
    tests_dirs: &[String],
) -> anyhow::Result<Mined> {
    let diff_path = spec_dir(&args.spec).join(&spec.bug);
    let diff = std::fs::read_to_string(&diff_path)
        .with_context(|| format!("cannot read {}", diff_path.display()))?;
    let changes = match changes(files, &diff, tests_dirs) {
        Ok(c) => c,
        Err(e) => return Ok(Err(format!("{e:#}"))),
    };
    let mut runs = Vec::new();
    for _ in 0..2 {
        for c in &changes {
            put_file(sandbox, &c.path, &c.buggy).await?;
        }
        let run = runner.run(None).await;
        for c in &changes {
            put_file(sandbox, &c.path, &c.fixed).await?;
        }
        match run? {
            Some(r) => runs.push(r),
            None => return Ok(Err("the suite produced no report on the buggy tree".into())),
        }
    }
    // Each fail-to-pass test once more on its own: it must fail on the buggy tree and pass on
    // the release, or the verifier (which selects by id, in its order) may not see it fail.
    let mut order_dependent = BTreeSet::new();
    if let Ok(split) = validate::classify(base, &runs[0], &runs[1]) {
        let cmd = runner.command().clone();
        for id in &split.fail_to_pass {
            for c in &changes {
                put_file(sandbox, &c.path, &c.buggy).await?;
            }
            let fails_alone = run_alone(sandbox, &cmd, id).await? == Some(false);
            for c in &changes {
                put_file(sandbox, &c.path, &c.fixed).await?;
            }
            let passes_alone = run_alone(sandbox, &cmd, id).await? == Some(true);
            if !(fails_alone && passes_alone) {
                eprintln!("  {}: {id} does not fail on its own: left out", spec.name);
                order_dependent.insert(id.clone());
            }
        }
    }
    Ok(build_task(
        spec,
        base_commit,
        &changes,
        base,
        &runs[0],
        &runs[1],
        &order_dependent,
        &runner.test_command(),
    )
    .map_err(|r| r.as_str().to_string()))
}

/// One test selected by id: `Some(true)` passed, `Some(false)` failed, `None` neither (no
/// such test, an error of pytest itself, a timeout).
async fn run_alone(
    sandbox: &dyn Sandbox,
    test_cmd: &crate::testcmd::TestCommand,
    id: &str,
) -> anyhow::Result<Option<bool>> {
    let options = ["-q", "-p", "no:cacheprovider"].map(String::from);
    let line = test_cmd.shell(&crate::testcmd::Run {
        workspace: crate::sandbox::WORKSPACE,
        options: &options,
        selection: &[id.to_string()],
    });
    let r = sandbox
        .exec(
            ExecRequest::argv(["bash", "-c", &format!("cd /workspace && {line}")])
                .timeout(Duration::from_secs(600)),
        )
        .await?;
    Ok(match r.status {
        crate::sandbox::ExecStatus::Exited(0) => Some(true),
        crate::sandbox::ExecStatus::Exited(1) => Some(false),
        _ => None,
    })
}

async fn put_file(sandbox: &dyn Sandbox, path: &str, text: &str) -> anyhow::Result<()> {
    let r = sandbox
        .exec(
            ExecRequest::argv(["sh", "-c", "cat > \"$1\"", "sh", path])
                .stdin(text.as_bytes().to_vec())
                .timeout(Duration::from_secs(30)),
        )
        .await?;
    if !r.status.success() {
        bail!("cannot write {path} in the sandbox: {}", r.output.render());
    }
    Ok(())
}

#[cfg(test)]
#[path = "realbench_tests.rs"]
mod tests;
