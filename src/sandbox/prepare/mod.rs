//! `patchloop prepare`: the sandbox image of a checkout, in layers.
//!
//! base (`patchloop-base:py-*`) → dependencies (`patchloop-deps:<hash of the dependency files>`,
//! reused while they are unchanged) → install (`patchloop-install:<hash of deps + top-level
//! layout>`: the editable install, run as uid 1000 without network; only for pyproject/setup.py
//! projects) → source (`patchloop-sandbox:<name>-<hash of the copied tree>`, built without
//! network). The source stage makes `/workspace` a fresh one-commit git repository and copies it
//! to `/opt/patchloop/baseline.git` (images/sandbox/finalize.sh). See images/README.md.
//!
//! Rust and Node projects ([`ProjectKind`], detected from the top-level files) use their own
//! base (`patchloop-base:rust-*` / `node-*`) and dependencies layer (crates vendored to
//! `/opt/patchloop/vendor`; `npm ci` into `/opt/patchloop/node/node_modules`, linked as
//! `/node_modules`), no install layer, and for Rust a compile step after the baseline commit
//! (`images/sandbox/rust-build.sh`, `target/` kept out of the diff).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bollard::Docker;

use super::builder;
use super::ci;
use super::context::{self, Entry, SourceTree};
use super::image::{
    self, BaseOptions, ImageError, LABEL_BASE, LABEL_DEPS, LABEL_INSTALL, LABEL_TEST_CMD,
    LABEL_TESTS_DIRS,
};
use super::lang::{self, LABEL_KIND, ProjectKind};
pub use super::layer::PREPARE_CONTAINER_PREFIX;
use super::pydeps;
use crate::testcmd::TestCommand;

mod deps;
mod install;
mod source;

pub use deps::LABEL_DEPS_BUILDER;
use deps::{PythonInputs, ensure_deps};
use install::ensure_install;
pub use install::{InstallLayer, install_layer, install_layout};
use source::{commit_source, source_context_for};

/// Runs Rust/Node suites with JUnit output (shared with the verifier and `run_tests`).
pub const PL_JUNIT: &str = include_str!("../../../images/harness/pl_junit.py");

pub const DEPS_REPO: &str = "patchloop-deps";
/// Stage 1 of a Python dependencies layer (the builder plus the wheels); removed after stage 2.
pub const WHEELS_REPO: &str = "patchloop-wheels";
pub const SANDBOX_REPO: &str = "patchloop-sandbox";
pub const INSTALL_REPO: &str = "patchloop-install";
pub const DEFAULT_TEST_CMD: &str = "python -m pytest";
/// How the source layer is made (see [`commit_source`]); part of the image tag.
const SOURCE_RECIPE: &str = "source layer by container commit v1";
/// Bump when the way contexts are written changes (tar metadata, layout): the source tag hashes
/// contents, not the writer, so this keeps a changed writer from reusing stale images.
const CONTEXT_FORMAT: &str = "context-v2 (mtime floor 2000-01-01)";

/// What to prepare.
#[derive(Debug, Clone, Default)]
pub struct PrepareOptions {
    /// The checkout (a directory on the machine patchloop runs on).
    pub path: PathBuf,
    /// Test command (default `python -m pytest`, with CI's `PYTHONPATH`).
    pub test_cmd: Option<TestCommand>,
    /// Workspace-relative test directories; detected when empty.
    pub tests_dirs: Vec<String>,
    /// Project kind; detected from the top-level files when `None`.
    pub kind: Option<ProjectKind>,
    /// Base image options (offline, mirror, CA, progress).
    pub base: BaseOptions,
    /// Requirements to add to / drop from the Python test environment, on top of the
    /// checkout's `.github/patchloop.yml` `dependencies:`.
    pub deps: pydeps::DepsOverrides,
    /// A Python base to build on instead of choosing one (the CI's Python for the second run
    /// of `pipeline::env`); no environment note then.
    pub base_image: Option<String>,
}

/// A built sandbox image and what the harness needs to know about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedImage {
    pub tag: String,
    pub image_id: String,
    /// Workspace-relative test directories (mounted read-only in episodes).
    pub tests_dirs: Vec<String>,
    /// The repository's test command, typed, with what it delegates to resolved from the
    /// checkout's files (labels `patchloop.test_cmd`, as written, and
    /// `patchloop.test_command`, the value).
    pub test_cmd: TestCommand,
    /// The base image tag it was built on.
    pub base: String,
    /// Whether an existing dependencies image was reused (false when built now, or unknown
    /// for [`inspect_prepared`]).
    pub deps_reused: bool,
    pub kind: ProjectKind,
    /// Where the Python test dependencies came from (label `patchloop.deps_source`).
    pub deps_source: Option<String>,
    /// Requirements that failed to install and were left out (label `patchloop.deps_skipped`).
    pub deps_skipped: Vec<String>,
}

/// Dependency files at the checkout root that key the (Python) dependencies layer.
pub fn is_dependency_file(rel: &str) -> bool {
    lang::is_dependency_file(ProjectKind::Python, rel)
}

/// The project kind: the one given, else detected from the checkout's top-level files.
pub fn project_kind(
    path_display: &str,
    tree: &SourceTree,
    given: Option<ProjectKind>,
) -> Result<ProjectKind, ImageError> {
    if let Some(k) = given {
        return Ok(k);
    }
    let top = tree.entries.iter().filter_map(|e| match e {
        Entry::File { dest, .. } if !dest.contains('/') => Some(dest.as_str()),
        _ => None,
    });
    lang::detect(top, tree.python_files).ok_or_else(|| ImageError::Unsupported {
        path: path_display.to_string(),
        reason: "no Python files, Cargo.toml, go.mod or package.json found; patchloop prepares Python, Rust, Go and Node projects (name the kind with --lang)".into(),
    })
}

/// A Docker-tag-safe name for the checkout (lowercase, `[a-z0-9._-]`, ≤ 40 chars).
pub fn slug(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    s = s.trim_matches(|c| c == '-' || c == '.').to_string();
    s.truncate(40);
    if s.is_empty() { "project".into() } else { s }
}

/// Validates the checkout and resolves test directories and command (pure, given the tree).
pub fn plan(
    path_display: &str,
    tree: &SourceTree,
    given_dirs: &[String],
    test_cmd: Option<&TestCommand>,
) -> Result<(Vec<String>, TestCommand), ImageError> {
    plan_for(
        path_display,
        tree,
        ProjectKind::Python,
        given_dirs,
        test_cmd,
    )
}

/// [`plan`] for a project kind: Rust and Node need no Python files; `__tests__/` also counts
/// as a test directory for Node.
pub fn plan_for(
    path_display: &str,
    tree: &SourceTree,
    kind: ProjectKind,
    given_dirs: &[String],
    test_cmd: Option<&TestCommand>,
) -> Result<(Vec<String>, TestCommand), ImageError> {
    if kind == ProjectKind::Python && tree.python_files == 0 {
        return Err(ImageError::Unsupported {
            path: path_display.to_string(),
            reason: "it contains no Python files (.py); patchloop prepares Python projects".into(),
        });
    }
    let tests_dirs = if given_dirs.is_empty() {
        let mut found = match kind {
            ProjectKind::Python => context::detect_tests_dirs(tree),
            _ => context::conventional_tests_dirs(&tree.dirs),
        };
        if kind == ProjectKind::Node && tree.dirs.contains("__tests__") {
            found.push("__tests__".into());
        }
        // Go tests usually sit next to the code (`*_test.go`), and so do some Python
        // projects' (`test_schema.py` at the top, `src/test_x.py`): no directory to mount
        // read-only; the patch policy still refuses changes to test files.
        let loose =
            kind == ProjectKind::Python && !context::loose_test_files(tree, &found).is_empty();
        if found.is_empty() && kind != ProjectKind::Go && !loose {
            return Err(ImageError::NoTests {
                path: path_display.to_string(),
            });
        }
        found
    } else {
        let mut dirs = Vec::new();
        for d in given_dirs {
            let rel = context::normalize_rel_dir(d).map_err(|reason| ImageError::BadTestsDir {
                dir: d.clone(),
                reason: reason.to_string(),
            })?;
            if !tree.dirs.contains(&rel) {
                return Err(ImageError::BadTestsDir {
                    dir: d.clone(),
                    reason: "no such directory in the checkout (or it is excluded from the image)"
                        .into(),
                });
            }
            if !dirs.contains(&rel) {
                dirs.push(rel);
            }
        }
        dirs
    };
    let test_cmd = match test_cmd {
        Some(c) => c.clone(),
        None => TestCommand::parse(kind.default_test_cmd())
            .unwrap_or_else(|_| TestCommand::shell_only(kind.default_test_cmd())),
    };
    Ok((tests_dirs, test_cmd))
}

fn ci_deps_name(req: &str) -> String {
    super::ci_deps::requirement_name(req)
}

/// The test command CI implies when none is given: `PYTHONPATH=<dirs> python -m pytest` when
/// CI puts directories on `PYTHONPATH` (the hardened run appends them to `sys.path`).
pub fn ci_test_cmd(p: &ci::CiPlan) -> Option<TestCommand> {
    (!p.pythonpath.is_empty())
        .then(|| TestCommand::python_pytest().with_env("PYTHONPATH", &p.pythonpath.join(":")))
}

/// Builds (or reuses) the sandbox image of a checkout.
pub async fn prepare(docker: &Docker, opts: &PrepareOptions) -> Result<PreparedImage, ImageError> {
    let progress = opts.base.progress.clone();
    let display = opts.path.display().to_string();
    let root = check_dir(&opts.path)?;
    let tree = {
        let root = root.clone();
        tokio::task::spawn_blocking(move || context::walk_source(&root))
            .await
            .map_err(|e| ImageError::Io {
                what: "walking the checkout".into(),
                cause: std::io::Error::other(e.to_string()),
            })?
            .map_err(ImageError::io(format!(
                "cannot read the checkout {display}"
            )))?
    };
    let kind = project_kind(&display, &tree, opts.kind)?;
    // How the repository's CI installs and runs its tests (Python): mirrored below.
    let repo_files = if kind == ProjectKind::Python {
        ci::read_files(&root, tree.file_paths())
    } else {
        Default::default()
    };
    let ci_plan = if kind == ProjectKind::Python {
        ci::plan(&repo_files)
    } else {
        ci::CiPlan::default()
    };
    for n in &ci_plan.notes {
        image::say(&progress, &format!("CI: {n}"));
    }
    // What deps.py installs for the tests: the CI's evidence, the repository's corrections.
    let overrides = if kind == ProjectKind::Python {
        let mut ov = pydeps::repo_overrides(&root).map_err(|reason| ImageError::Unsupported {
            path: display.clone(),
            reason,
        })?;
        ov.extend(opts.deps.clone());
        // Plugins the pytest configuration cannot run without (CI installs them from a file
        // the checkout may not carry).
        for (req, why) in super::plugins::implied(&repo_files) {
            let skipped = ov
                .skip
                .iter()
                .any(|s| ci_deps_name(s) == ci_deps_name(&req));
            if !skipped && !ov.add.contains(&req) {
                image::say(&progress, &format!("dependencies: adding {req} ({why})"));
                ov.add.push(req);
            }
        }
        if !ov.add.is_empty() || !ov.skip.is_empty() {
            image::say(
                &progress,
                &format!(
                    "dependencies: add [{}], skip [{}] (dependencies: in .github/patchloop.yml, --add-dep/--skip-dep)",
                    ov.add.join(", "),
                    ov.skip.join(", ")
                ),
            );
        }
        Some(ov)
    } else {
        None
    };
    let as_of = match overrides.as_ref().and_then(|o| o.as_of.as_deref()) {
        Some(a) => {
            let v = pydeps::as_of_value(&root, a).map_err(|reason| ImageError::Unsupported {
                path: display.clone(),
                reason,
            })?;
            let what = match (&v["release"][0], &v["release"][1]) {
                (serde_json::Value::String(n), serde_json::Value::String(ver)) => {
                    format!("the checkout's release, {n} {ver}")
                }
                _ => v.as_str().unwrap_or(a).to_string(),
            };
            image::say(
                &progress,
                &format!("dependencies: resolved as of {what}: only what the index had then"),
            );
            Some(v)
        }
        None => None,
    };
    let ci_cmd = ci_test_cmd(&ci_plan);
    let (tests_dirs, test_cmd) = plan_for(
        &display,
        &tree,
        kind,
        &opts.tests_dirs,
        opts.test_cmd.as_ref().or(ci_cmd.as_ref()),
    )?;
    // What a delegating command (tox, nox, make, a hatch/pdm script) runs, from the files.
    let python = ci_plan.python.as_ref().map(|(v, _)| v.as_str());
    // A module the command runs with `python -m` (a project's own unittest runner,
    // `python -m pkg.tests.all_tests`): what it runs is read from its source, like a script's.
    let mut repo_files = repo_files;
    if kind == ProjectKind::Python {
        read_runners(&root, &test_cmd, &mut repo_files);
    }
    let plain = test_cmd.clone();
    let (mut test_cmd, mut delegation) =
        super::ci_resolve::resolve(test_cmd, &repo_files, python, &ci::is_test_cmd);
    // What a delegate runs may itself be a runner read from its source (a tox env's
    // `python tests/manage.py test`): read it, and resolve again with it.
    if kind == ProjectKind::Python && read_runners(&root, &test_cmd, &mut repo_files) > 0 {
        (test_cmd, delegation) =
            super::ci_resolve::resolve(plain, &repo_files, python, &ci::is_test_cmd);
    }

    // How the command that will run installs the project, when its delegation says (a nox
    // session's `session.install("-e", ".[test]")`): the CI plan's mode is for the CI's own
    // line, which may be another command.
    let install_mode = delegation
        .as_ref()
        .and_then(|d| d.install)
        .or(ci_plan.install);
    // What the command that will run installs, when it is given and its own environment says
    // (`uv run --with '.[dev]' pytest`, `tox -e cov`, a nox session): CI's evidence is for
    // CI's own line. Else CI's: a bare `python -m tox` names no more than CI's `tox` did
    // (pyjwt's crypto env, which its tests need, is the one CI's reading found).
    let ci_line = ci_plan.test_cmd.as_ref().map(|c| c.written.as_str());
    let given_deps = opts
        .test_cmd
        .as_ref()
        .filter(|g| {
            ci_plan.deps.is_none()
                || (ci_line != Some(g.written.as_str()) && g.names_its_environment())
        })
        .and_then(|_| ci::deps_of_command(&test_cmd, delegation.as_ref(), &repo_files, python));
    if let Some(d) = &given_deps {
        image::say(
            &progress,
            &format!(
                "dependencies: what the given test command installs: {}",
                d.source
            ),
        );
    }
    // What the command that will run installs before its tests (pytest-django where pytest
    // runs Django's runner's cases, read from a script CI's reading did not open): added here,
    // once, to whichever source decides the dependencies (a tox env's, a nox session's, CI's).
    let mut deps_owned = given_deps.clone().or_else(|| ci_plan.deps.clone());
    if let (Some(d), Some(dl)) = (
        deps_owned.as_mut(),
        delegation.as_ref().filter(|dl| !dl.before.is_empty()),
    ) {
        d.merge(super::ci_deps::pip_deps(&dl.before));
    }
    let deps_source = deps_owned.as_ref();
    let (ci_json, ci_files) = match &overrides {
        Some(ov) => {
            let mut files = deps_source
                .map(|d| pydeps::referenced_files(&root, d))
                .unwrap_or_default();
            if let Some(setup) = repo_files.get("setup.py") {
                for f in pydeps::setup_py_files(setup, tree.file_paths()) {
                    if !files.contains(&f) {
                        files.push(f);
                    }
                }
            }
            (
                Some(pydeps::ci_deps_json(deps_source, ov, as_of.as_ref())),
                files,
            )
        }
        None => (None, Vec::new()),
    };
    let test_cmd = match super::ci_resolve::stand_in(&test_cmd) {
        Some((c, note)) if kind == ProjectKind::Python => {
            image::say(&progress, &format!("note: {note}"));
            c
        }
        _ => test_cmd,
    };
    let test_cmd = {
        // Asked for the command's few positional paths only: a scan of the entries is enough.
        let exists = |p: &str| tree.dirs.contains(p) || tree.entries.iter().any(|e| e.dest() == p);
        let (c, changed) = test_cmd.with_module_paths(exists);
        for (p, new) in changed {
            image::say(
                &progress,
                &format!(
                    "note: `{p}` is nothing in the checkout, `{new}` is: the tests run from that module or package"
                ),
            );
        }
        c
    };
    let test_cmd_json = serde_json::to_string(&test_cmd).unwrap_or_default();
    image::say(
        &progress,
        &format!(
            "{kind} project: {} entries to copy, {} left out; tests: {}; test command: {}",
            tree.entries.len(),
            tree.excluded.len(),
            tests_dirs.join(", "),
            test_cmd.describe()
        ),
    );
    for (rel, why) in tree.excluded.iter().take(20) {
        image::say(&progress, &format!("  not copied: {rel} ({why})"));
    }
    if tree.excluded.len() > 20 {
        image::say(
            &progress,
            &format!("  ... and {} more not copied", tree.excluded.len() - 20),
        );
    }

    let mut env_note: Option<String> = None;
    let base = if let (ProjectKind::Python, Some(b)) = (kind, &opts.base_image) {
        image::say(&progress, &format!("base image {b} (given)"));
        b.clone()
    } else if kind == ProjectKind::Python {
        let want = ci_plan.python.as_ref().map(|(v, _)| v.as_str());
        let (tag, note) = image::ensure_python_base(docker, &opts.base, want).await?;
        if let Some(n) = &note {
            image::say(&progress, &format!("note: {n}"));
        }
        env_note = note;
        tag
    } else {
        image::ensure_base_image_for(docker, &opts.base, kind).await?
    };
    let ca = opts.base.ca_bytes()?;
    // Python's wheels are built where a C toolchain is, as on the CI's runners.
    let builder = match kind {
        ProjectKind::Python => Some(builder::ensure_builder(docker, &base, &opts.base).await?),
        _ => None,
    };
    let (deps, deps_reused) = ensure_deps(
        docker,
        &base,
        kind,
        &tree,
        &ca,
        &progress,
        PythonInputs {
            ci_json: ci_json.as_deref(),
            ci_files: &ci_files,
            builder: builder.as_ref(),
        },
    )
    .await?;
    let installable = tree.entries.iter().any(
        |e| matches!(e, Entry::File { dest, .. } if dest == "pyproject.toml" || dest == "setup.py"),
    );
    let parent = match install_layer(kind, installable, install_mode) {
        InstallLayer::Editable => ensure_install(docker, &deps, &tree, &progress).await?,
        InstallLayer::EditableForBuilt => {
            image::say(
                &progress,
                "note: CI tests a built install; the sandbox installs editable so a patch takes effect without a rebuild",
            );
            ensure_install(docker, &deps, &tree, &progress).await?
        }
        InstallLayer::None => {
            if installable {
                image::say(
                    &progress,
                    "CI runs the tests from the checkout: no install layer (as in CI)",
                );
            }
            deps.clone()
        }
    };

    let tests_json = serde_json::to_string(&tests_dirs).unwrap_or_else(|_| "[]".into());
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut labels = vec![
        (LABEL_TEST_CMD, test_cmd.as_str()),
        (image::LABEL_TEST_COMMAND, test_cmd_json.as_str()),
        (LABEL_TESTS_DIRS, tests_json.as_str()),
        (LABEL_BASE, base.as_str()),
        (LABEL_DEPS, deps.as_str()),
        (LABEL_INSTALL, parent.as_str()),
    ];
    // Python images carry no kind label (absent means Python), so their tags are unchanged.
    if kind != ProjectKind::Python {
        labels.push((LABEL_KIND, kind.as_str()));
    }
    // The receipt repeats it, so a verdict on another interpreter says so.
    if let Some(n) = &env_note {
        labels.push((image::LABEL_ENV_NOTE, n.as_str()));
    }
    // One LABEL instruction in the Dockerfile: each build-API label would be a build step.
    let entries = source_context_for(kind, &parent, &label_instruction(&labels), tree.entries);
    let hash = hashed(
        entries.clone(),
        vec![
            CONTEXT_FORMAT.into(),
            SOURCE_RECIPE.into(),
            parent.clone(),
            test_cmd_json.clone(),
            tests_json.clone(),
        ],
    )
    .await?;
    let tag = format!("{SANDBOX_REPO}:{}-{}", slug(&name), &hash[..16]);
    if let Ok(existing) = docker.inspect_image(&tag).await {
        image::say(
            &progress,
            &format!("{tag} exists (same source); reusing it"),
        );
        let labels = existing
            .config
            .as_ref()
            .and_then(|c| c.labels.clone())
            .unwrap_or_default();
        let (deps_source, deps_skipped) = deps_labels(&labels);
        return Ok(PreparedImage {
            tag,
            image_id: existing.id.unwrap_or_default(),
            tests_dirs,
            test_cmd,
            base,
            deps_reused,
            kind,
            deps_source,
            deps_skipped,
        });
    }
    image::say(&progress, &format!("building {tag}"));
    let (image_id, report) =
        commit_source(docker, &parent, kind, &labels, entries, &tag, &progress).await?;
    let img = PreparedImage {
        tag,
        image_id,
        tests_dirs,
        test_cmd,
        base,
        deps_reused,
        kind,
        deps_source: report.as_ref().map(|r| r.source.clone()),
        deps_skipped: report
            .as_ref()
            .map(pydeps::DepsReport::skipped_names)
            .unwrap_or_default(),
    };
    if let Some(r) = &report {
        image::say(&progress, &format!("dependencies: {}", r.note()));
    }
    // Dependencies resolved now are checked by collecting the tests once, for both checks
    // below (a reused layer was checked when it was built).
    let fresh = kind == ProjectKind::Python && !img.deps_reused && as_of.is_none();
    let collected = if fresh || !img.deps_skipped.is_empty() {
        collection_failure(docker, &img).await
    } else {
        None
    };
    // Degrade, don't die: requirements left out fail the prepare only when the tests then
    // cannot even be collected (the image is removed, so a rerun checks again).
    if !img.deps_skipped.is_empty() {
        if let Some(failure) = collected {
            let log_tail = failure.tail;
            let _ = docker
                .remove_image(
                    &img.tag,
                    Some(
                        bollard::query_parameters::RemoveImageOptionsBuilder::new()
                            .force(true)
                            .build(),
                    ),
                    None,
                )
                .await;
            return Err(ImageError::MissingDependencies {
                skipped: img.deps_skipped.join(", "),
                log_tail,
                hint: pydeps::fix_hint(&img.deps_skipped),
            });
        }
        image::say(
            &progress,
            "the tests are collected without the requirements left out",
        );
    }
    // Today's index may answer an old checkout's unpinned requirements with releases its suite
    // never ran with (pytest 9 refuses a 2023 conftest's hook). Dependencies resolved now that
    // cannot even collect the tests are resolved again as of the checkout's release.
    if fresh
        && let Some(failure) = collected
        && let Some(dated) = dated_fallback(
            docker,
            opts,
            &root,
            &img,
            &failure,
            (deps.as_str(), parent.as_str()),
        )
        .await
    {
        return Ok(dated);
    }
    Ok(img)
}

/// How long a checkout's own dependencies stay today's: one committed within this many days
/// is not resolved as of its date (nothing older would be chosen).
const RECENT_DAYS: i64 = 30;

/// [`prepare`] again as of the checkout's release, when `img` (dependencies resolved today)
/// cannot collect its tests (`failure`): the dated image when it can, adopted for later
/// prepares too (its dependencies image takes the undated tag; the undated install and source
/// images go). `None` keeps `img`, each reason said on the progress lines.
async fn dated_fallback(
    docker: &Docker,
    opts: &PrepareOptions,
    root: &Path,
    img: &PreparedImage,
    failure: &CollectFailure,
    (deps, parent): (&str, &str),
) -> Option<PreparedImage> {
    let progress = &opts.base.progress;
    let why = failure.error_line();
    let Some(release) = pydeps::checkout_release(root) else {
        image::say(
            progress,
            &format!(
                "note: the tests cannot be collected ({why}); the checkout names no release to \
                 resolve its dependencies as of (no PKG-INFO, no git history): \
                 `dependencies.as_of: <date>` in .github/patchloop.yml does"
            ),
        );
        return None;
    };
    if let Some(date) = release.as_str()
        && pydeps::days_before_now(date).is_some_and(|d| d < RECENT_DAYS)
    {
        image::say(
            progress,
            &format!(
                "note: the tests cannot be collected ({why}); the checkout is from {date}, so \
                 today's dependencies are its own"
            ),
        );
        return None;
    }
    image::say(
        progress,
        &format!(
            "the tests cannot be collected with the dependencies resolved today ({why}): \
             resolving them again as of the checkout's release"
        ),
    );
    let mut dated_opts = opts.clone();
    dated_opts.deps.as_of = Some("release".into());
    dated_opts.deps.as_of_reason = Some(format!("today's could not collect the tests: {why}"));
    let dated = match Box::pin(prepare(docker, &dated_opts)).await {
        Ok(d) => d,
        Err(e) => {
            image::say(
                progress,
                &format!("note: resolving as of the release failed ({e}); keeping today's"),
            );
            return None;
        }
    };
    if let Some(f) = collection_failure(docker, &dated).await {
        image::say(
            progress,
            &format!(
                "note: as of the release the tests cannot be collected either ({}); keeping today's",
                f.error_line()
            ),
        );
        return None;
    }
    // Adopted: later prepares of these dependency files reuse the dated layer under the
    // undated tag, and rebuild the install and source layers on it.
    let dated_deps = docker
        .inspect_image(&dated.tag)
        .await
        .ok()
        .and_then(|i| i.config?.labels?.get(LABEL_DEPS).cloned());
    if let Some(dd) = dated_deps
        && let Some((repo, tag)) = deps.split_once(':')
    {
        for stale in [img.tag.as_str(), parent]
            .into_iter()
            .filter(|t| *t != deps)
        {
            super::layer::remove_tag(docker, stale).await;
        }
        let tagged = docker
            .tag_image(
                &dd,
                Some(
                    bollard::query_parameters::TagImageOptionsBuilder::new()
                        .repo(repo)
                        .tag(tag)
                        .build(),
                ),
            )
            .await;
        if let Err(e) = tagged {
            tracing::warn!("tagging {dd} as {deps} failed: {e}");
        }
    }
    image::say(
        progress,
        &format!(
            "the tests are collected with the dependencies as of the checkout's release: {}",
            dated.tag
        ),
    );
    Some(dated)
}

/// (source, skipped) from a prepared image's labels.
fn deps_labels(
    labels: &std::collections::HashMap<String, String>,
) -> (Option<String>, Vec<String>) {
    let source = labels.get(pydeps::LABEL_DEPS_SOURCE).cloned();
    let skipped = labels
        .get(pydeps::LABEL_DEPS_SKIPPED)
        .and_then(|s| serde_json::from_str::<Vec<pydeps::Skipped>>(s).ok())
        .unwrap_or_default()
        .into_iter()
        .map(|s| s.requirement)
        .collect();
    (source, skipped)
}

/// A test collection that failed: the exit status and the output's last lines.
struct CollectFailure {
    status: Option<i64>,
    tail: String,
}

impl CollectFailure {
    /// The line that says what went wrong: the last error line (`E   …`, `…Error: …`), else
    /// the last line.
    fn error_line(&self) -> String {
        let lines: Vec<&str> = self
            .tail
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let is_error = |l: &&str| {
            l.starts_with("E ")
                || l.contains("Error:")
                || l.contains("error:")
                || l.starts_with("ERROR")
        };
        let line = lines
            .iter()
            .rev()
            .find(|l| is_error(l))
            .or(lines.last())
            .copied()
            .unwrap_or("");
        let line: String = line.chars().take(200).collect();
        match self.status {
            Some(s) => format!("exit {s}: {line}"),
            None => line,
        }
    }
}

/// Collects the tests of a fresh image in a hardened, network-less container: `None` when
/// collection works (or finds no tests), else the exit status and the output's tail.
async fn collection_failure(docker: &Docker, img: &PreparedImage) -> Option<CollectFailure> {
    use super::Sandbox;
    let policy = super::policy::ContainerPolicy {
        read_only_paths: img.tests_dirs.clone(),
        lifetime_secs: 600,
        ..Default::default()
    };
    let run_id = format!("prepare-collect-{:08x}", rand::random::<u32>());
    let c = match super::container::Container::start(docker, &img.tag, &policy, &run_id, "collect")
        .await
    {
        Ok(c) => c,
        Err(e) => {
            return Some(CollectFailure {
                status: None,
                tail: format!("cannot start a container to collect the tests: {e}"),
            });
        }
    };
    let cmd = super::pytest::collect_command(&img.test_cmd, &img.tests_dirs);
    let r = c
        .exec(super::ExecRequest::shell(cmd).timeout(std::time::Duration::from_secs(300)))
        .await;
    let _ = c.remove().await;
    match r {
        Ok(r)
            if matches!(
                r.status,
                super::ExecStatus::Exited(0) | super::ExecStatus::Exited(5)
            ) =>
        {
            None
        }
        Ok(r) => {
            let text = r.output.render();
            let lines: Vec<&str> = text.lines().collect();
            Some(CollectFailure {
                status: match r.status {
                    super::ExecStatus::Exited(n) => Some(n),
                    _ => None,
                },
                tail: lines[lines.len().saturating_sub(30)..].join("\n"),
            })
        }
        Err(e) => Some(CollectFailure {
            status: None,
            tail: format!("collecting the tests failed: {e}"),
        }),
    }
}

fn check_dir(path: &Path) -> Result<PathBuf, ImageError> {
    let bad = |reason: &str| ImageError::BadPath {
        path: path.display().to_string(),
        reason: reason.to_string(),
    };
    let meta = std::fs::metadata(path).map_err(|e| bad(&format!("cannot open it ({e})")))?;
    if !meta.is_dir() {
        return Err(bad("not a directory"));
    }
    std::fs::canonicalize(path).map_err(|e| bad(&format!("cannot resolve it ({e})")))
}

async fn hashed(entries: Vec<Entry>, extra: Vec<String>) -> Result<String, ImageError> {
    tokio::task::spawn_blocking(move || {
        let extra: Vec<&str> = extra.iter().map(String::as_str).collect();
        context::hash_entries(&entries, &extra)
    })
    .await
    .map_err(|e| ImageError::Io {
        what: "hashing the checkout".into(),
        cause: std::io::Error::other(e.to_string()),
    })?
    .map_err(ImageError::io("cannot read the checkout to hash it"))
}

fn dir(dest: &str) -> Entry {
    Entry::Dir {
        dest: dest.to_string(),
        mode: 0o755,
    }
}

/// The checkout under `workspace/` of a context.
fn workspace_entries(tree: impl IntoIterator<Item = Entry>) -> Vec<Entry> {
    let mut entries = vec![dir("workspace")];
    entries.extend(
        tree.into_iter()
            .filter_map(|e| e.moved(|d| Some(format!("workspace/{d}")))),
    );
    entries
}

/// A Dockerfile `LABEL` instruction with every value double-quoted; `\\`, `"` and `$` are
/// escaped (LABEL substitutes variables). Values never hold newlines ([`plan`] rejects them).
pub fn label_instruction(labels: &[(&str, &str)]) -> String {
    let quote = |v: &str| {
        let mut out = String::with_capacity(v.len() + 2);
        out.push('"');
        for c in v.chars() {
            if matches!(c, '\\' | '"' | '$') {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('"');
        out
    };
    let parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}={}", quote(v)))
        .collect();
    format!("LABEL {}", parts.join(" "))
}

/// The typed test command of an image: its JSON label, else (images prepared before the
/// label existed) the written command parsed.
pub fn test_command_of(
    labels: &std::collections::HashMap<String, String>,
    written: &str,
) -> TestCommand {
    labels
        .get(image::LABEL_TEST_COMMAND)
        .and_then(|j| serde_json::from_str(j).ok())
        .unwrap_or_else(|| {
            TestCommand::parse(written).unwrap_or_else(|_| TestCommand::shell_only(written))
        })
}

/// Reads a prepared image's labels back.
pub async fn inspect_prepared(docker: &Docker, tag: &str) -> Result<PreparedImage, ImageError> {
    let inspect = docker
        .inspect_image(tag)
        .await
        .map_err(|e| ImageError::NotPrepared {
            tag: tag.to_string(),
            reason: format!("cannot inspect it ({e})"),
        })?;
    let labels = inspect.config.and_then(|c| c.labels).unwrap_or_default();
    let get = |key: &str| {
        labels
            .get(key)
            .cloned()
            .ok_or_else(|| ImageError::NotPrepared {
                tag: tag.to_string(),
                reason: format!("label {key} is missing"),
            })
    };
    let (deps_source, deps_skipped) = deps_labels(&labels);
    let tests_dirs: Vec<String> =
        serde_json::from_str(&get(LABEL_TESTS_DIRS)?).map_err(|e| ImageError::NotPrepared {
            tag: tag.to_string(),
            reason: format!("label {LABEL_TESTS_DIRS} is not a JSON array of strings ({e})"),
        })?;
    Ok(PreparedImage {
        tag: tag.to_string(),
        image_id: inspect.id.unwrap_or_default(),
        tests_dirs,
        test_cmd: test_command_of(&labels, &get(LABEL_TEST_CMD)?),
        base: get(LABEL_BASE)?,
        deps_reused: false,
        kind: ProjectKind::parse(labels.get(LABEL_KIND).map(String::as_str).unwrap_or("")),
        deps_source,
        deps_skipped,
    })
}

/// Reads into `files` the source of each module (`python -m pkg.runner`, with its `__main__`
/// and its package's `__init__`) and script (`python tests/test.py`) a level of `cmd` runs
/// with Python, so what they run can be read from them. Returns how many files were added.
fn read_runners(root: &Path, cmd: &TestCommand, files: &mut BTreeMap<String, String>) -> usize {
    let before = files.len();
    for m in cmd.levels().filter_map(|c| c.python_module()) {
        let dir = m.replace('.', "/");
        // Its package's `__init__.py` too: a runner may call the package's own `main()`.
        let init = dir
            .rsplit_once('/')
            .map(|(p, _)| format!("{p}/__init__.py"));
        for rel in [format!("{dir}.py"), format!("{dir}/__main__.py")]
            .into_iter()
            .chain(init)
        {
            if !files.contains_key(&rel) {
                files.extend(ci::read_module(root, &rel));
            }
        }
    }
    // A script it runs with `python` (`python tests/test.py`): read the same way.
    for level in cmd.levels() {
        let Some(s) = level.python_script() else {
            continue;
        };
        let rel = match level.cwd.as_ref().or(cmd.cwd.as_ref()) {
            Some(d) => format!("{d}/{s}"),
            None => s.to_string(),
        };
        if !files.contains_key(s) && !rel.contains("..") {
            files.extend(ci::read_module(root, &rel).map(|(_, t)| (s.to_string(), t)));
        }
    }
    files.len() - before
}

#[cfg(test)]
mod tests;
