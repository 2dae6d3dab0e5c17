//! The generation loop: enumerate mutations of a snapshot's library code, run each candidate's
//! suite twice through a [`SuiteRunner`], keep the ones the rules accept, and write tasks.
//! The runner is a trait so the loop is tested without Docker; the sandbox-backed runner lives
//! in [`crate::bench::sandbox_runner`].

use std::collections::BTreeMap;
use std::path::Path;

use async_trait::async_trait;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::bench::mutate::{self, Mutation, Operator};
use crate::bench::statement::{self, FailingTest};
use crate::bench::task::Task;
use crate::bench::validate::{self, Baseline, Dedup, Rejection, SuiteResult};

/// Runs the repository's suite with at most one file replaced.
#[async_trait]
pub trait SuiteRunner: Send + Sync {
    /// The whole suite, with `replace = Some((path, text))` written over that file for this
    /// run only. `Ok(None)` when the suite produced no report (timeout, crash).
    async fn run(&self, replace: Option<(&str, &str)>) -> anyhow::Result<Option<SuiteResult>>;
    /// The command tasks record as their `test_command`.
    fn test_command(&self) -> crate::testcmd::TestCommand;
}

#[derive(Debug, Clone)]
pub struct GenOptions {
    /// `owner/name` of the repository.
    pub repo: String,
    pub max_tasks: usize,
    /// Stop after trying this many candidates even if fewer tasks were accepted.
    pub max_candidates: usize,
    /// Candidate order is a hash of the mutation id with this seed: same seed, same tasks.
    pub seed: u64,
}

/// What a generation did.
#[derive(Debug, Clone, Serialize)]
pub struct GenReport {
    pub repo: String,
    pub base_commit: String,
    pub mutations: usize,
    pub candidates_tried: usize,
    pub accepted: usize,
    pub rejected: BTreeMap<&'static str, usize>,
    pub accepted_by_operator: BTreeMap<String, usize>,
    /// Tests whose result differed between the two baseline runs (left out of every task).
    pub flaky_baseline_tests: Vec<String>,
    /// Tests that failed on the original in both runs (pre-existing, left out of every task).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failing_baseline_tests: Vec<String>,
    pub baseline_tests: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum GenError {
    #[error(transparent)]
    Baseline(#[from] validate::BaselineError),
    #[error(
        "the original suite produced no test report; run the test command by hand in the repository to see why"
    )]
    NoBaselineReport,
    #[error("{0:#}")]
    Runner(anyhow::Error),
}

/// Whether a repository-relative path is library code (not tests, docs, build files).
pub fn is_library_source(path: &str, tests_dirs: &[String]) -> bool {
    if !path.ends_with(".py") {
        return false;
    }
    if tests_dirs.iter().any(|d| {
        !d.is_empty() && (path == d || path.starts_with(&format!("{}/", d.trim_end_matches('/'))))
    }) {
        return false;
    }
    let parts: Vec<&str> = path.split('/').collect();
    let (file, dirs) = match parts.split_last() {
        Some((f, d)) => (*f, d),
        None => return false,
    };
    const SKIP_DIRS: [&str; 14] = [
        "test",
        "tests",
        "testing",
        "docs",
        "doc",
        "examples",
        "example",
        "benchmarks",
        "bench",
        "scripts",
        "build",
        "dist",
        "venv",
        "site-packages",
    ];
    if dirs
        .iter()
        .any(|d| d.starts_with('.') || SKIP_DIRS.contains(d) || d.ends_with(".egg-info"))
    {
        return false;
    }
    !(file.starts_with("test_")
        || file.ends_with("_test.py")
        || matches!(
            file,
            "conftest.py" | "setup.py" | "noxfile.py" | "fabfile.py" | "tasks.py" | "docs_conf.py"
        ))
}

/// A stable content id for a snapshot (40 hex): SHA-256 over sorted paths and contents.
pub fn content_commit(files: &BTreeMap<String, Vec<u8>>) -> String {
    let mut h = Sha256::new();
    for (path, bytes) in files {
        h.update((path.len() as u64).to_le_bytes());
        h.update(path.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    hex::encode(h.finalize())[..40].to_string()
}

/// Candidates in trial order: shuffled by a seeded hash, then interleaved by operator so every
/// kind of bug gets its turn early.
pub fn candidate_order(mut all: Vec<Mutation>, seed: u64) -> Vec<Mutation> {
    let key = |m: &Mutation| {
        let mut h = Sha256::new();
        h.update(seed.to_le_bytes());
        h.update(m.file.as_bytes());
        h.update(m.id.as_bytes());
        h.finalize().to_vec()
    };
    all.sort_by_cached_key(key);
    let mut groups: BTreeMap<Operator, Vec<Mutation>> = BTreeMap::new();
    for m in all {
        groups.entry(m.operator).or_default().push(m);
    }
    let mut iters: Vec<std::vec::IntoIter<Mutation>> =
        groups.into_values().map(|v| v.into_iter()).collect();
    let mut out = Vec::new();
    loop {
        let mut any = false;
        for it in iters.iter_mut() {
            if let Some(m) = it.next() {
                out.push(m);
                any = true;
            }
        }
        if !any {
            break;
        }
    }
    out
}

/// A unified diff of one file, `git apply`-able.
pub fn file_diff(path: &str, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let body = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    format!("diff --git a/{path} b/{path}\n{body}")
}

/// Generate tasks from `sources` (library files: path → text) of a snapshot whose id is
/// `base_commit`. `progress` is told about every candidate (id, outcome).
pub async fn generate(
    runner: &dyn SuiteRunner,
    sources: &BTreeMap<String, String>,
    base_commit: &str,
    opts: &GenOptions,
    progress: &mut (dyn FnMut(&Mutation, Result<(), Rejection>) + Send),
) -> Result<(Vec<Task>, GenReport), GenError> {
    let b1 = runner
        .run(None)
        .await
        .map_err(GenError::Runner)?
        .ok_or(GenError::NoBaselineReport)?;
    let b2 = runner
        .run(None)
        .await
        .map_err(GenError::Runner)?
        .ok_or(GenError::NoBaselineReport)?;
    let base = validate::baseline(&b1, &b2)?;

    let mut all = Vec::new();
    for (path, text) in sources {
        match mutate::mutations(path, text) {
            Ok(ms) => all.extend(ms),
            Err(e) => {
                tracing::warn!(file = %path, error = %e, "skipping a file the parser rejects")
            }
        }
    }
    let mut report = GenReport {
        repo: opts.repo.clone(),
        base_commit: base_commit.to_string(),
        mutations: all.len(),
        candidates_tried: 0,
        accepted: 0,
        rejected: BTreeMap::new(),
        accepted_by_operator: BTreeMap::new(),
        flaky_baseline_tests: base.flaky.iter().cloned().collect(),
        failing_baseline_tests: base.failing.iter().cloned().collect(),
        baseline_tests: base.passing.len(),
    };
    let mut dedup = Dedup::default();
    let mut tasks = Vec::new();
    for m in candidate_order(all, opts.seed) {
        if tasks.len() >= opts.max_tasks || report.candidates_tried >= opts.max_candidates {
            break;
        }
        report.candidates_tried += 1;
        let Some(original) = sources.get(&m.file) else {
            continue;
        };
        let outcome =
            try_candidate(runner, &base, &m, original, base_commit, opts, &mut dedup).await;
        match outcome {
            Ok(Ok(task)) => {
                progress(&m, Ok(()));
                *report
                    .accepted_by_operator
                    .entry(m.operator.slug().to_string())
                    .or_insert(0) += 1;
                tasks.push(task);
            }
            Ok(Err(r)) => {
                progress(&m, Err(r));
                *report.rejected.entry(r.as_str()).or_insert(0) += 1;
            }
            Err(e) => return Err(GenError::Runner(e)),
        }
    }
    report.accepted = tasks.len();
    Ok((tasks, report))
}

async fn try_candidate(
    runner: &dyn SuiteRunner,
    base: &Baseline,
    m: &Mutation,
    original: &str,
    base_commit: &str,
    opts: &GenOptions,
    dedup: &mut Dedup,
) -> anyhow::Result<Result<Task, Rejection>> {
    let Some(mutant) = m.apply(original) else {
        return Ok(Err(Rejection::NoReport));
    };
    let Some(run1) = runner.run(Some((&m.file, &mutant))).await? else {
        return Ok(Err(Rejection::NoReport));
    };
    if let Err(r) = validate::screen(base, &run1) {
        return Ok(Err(r));
    }
    let Some(run2) = runner.run(Some((&m.file, &mutant))).await? else {
        return Ok(Err(Rejection::NoReport));
    };
    let split = match validate::classify(base, &run1, &run2) {
        Ok(s) => s,
        Err(r) => return Ok(Err(r)),
    };
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
    let problem_statement = if statement::leaks(&with_output, m, original).is_empty() {
        with_output
    } else {
        let names_only = statement::problem_statement(&failing, total, false);
        if !statement::leaks(&names_only, m, original).is_empty() {
            return Ok(Err(Rejection::Leaky));
        }
        names_only
    };
    if let Err(r) = dedup.check_and_insert(&m.file, &mutant, m.line, &split.fail_to_pass) {
        return Ok(Err(r));
    }
    let owner_name = opts.repo.replace('/', "__");
    Ok(Ok(Task {
        instance_id: format!("{owner_name}-{}", m.id),
        repo: opts.repo.clone(),
        base_commit: base_commit.to_string(),
        patch: file_diff(&m.file, &mutant, original),
        test_patch: String::new(),
        problem_statement,
        fail_to_pass: split.fail_to_pass,
        pass_to_pass: split.pass_to_pass,
        version: String::new(),
        created_at: String::new(),
        hints_text: String::new(),
        bug_patch: file_diff(&m.file, original, &mutant),
        test_command: runner.test_command(),
        hidden_test_files: Vec::new(),
        mutation_operator: Some(m.operator.slug().to_string()),
        origin: Some(crate::bench::task::Origin::Mutation),
        provenance: None,
    }))
}

/// Library sources of a snapshot directory (path → text), for [`generate`].
pub fn library_sources(
    files: &BTreeMap<String, Vec<u8>>,
    tests_dirs: &[String],
) -> BTreeMap<String, String> {
    files
        .iter()
        .filter(|(p, _)| is_library_source(p, tests_dirs))
        .filter_map(|(p, b)| Some((p.clone(), String::from_utf8(b.clone()).ok()?)))
        .collect()
}

/// Every regular file of a checkout (path → bytes), skipping VCS data, caches, virtualenvs and
/// build artefacts: what a task snapshot holds.
pub fn read_tree(root: &Path) -> std::io::Result<BTreeMap<String, Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let ft = entry.file_type()?;
            if ft.is_symlink() {
                continue;
            }
            if ft.is_dir() {
                if skip_dir(&name) {
                    continue;
                }
                stack.push(entry.path());
            } else if ft.is_file() && !name.ends_with(".pyc") && !name.ends_with(".pyo") {
                let rel = entry
                    .path()
                    .strip_prefix(root)
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
                    .unwrap_or(name);
                out.insert(rel, std::fs::read(entry.path())?);
            }
        }
    }
    Ok(out)
}

fn skip_dir(name: &str) -> bool {
    matches!(
        name,
        ".git"
            | ".hg"
            | ".svn"
            | "__pycache__"
            | ".pytest_cache"
            | ".mypy_cache"
            | ".ruff_cache"
            | ".tox"
            | ".nox"
            | ".venv"
            | "venv"
            | "build"
            | "dist"
            | "node_modules"
    ) || name.ends_with(".egg-info")
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::bench::validate::CaseOutcome;

    #[test]
    fn library_sources_exclude_tests_and_tooling() {
        let dirs = vec!["spec".to_string()];
        for ok in ["pkg/core.py", "mod.py", "pkg/sub/x.py"] {
            assert!(is_library_source(ok, &dirs), "{ok}");
        }
        for no in [
            "tests/test_x.py",
            "pkg/tests/helpers.py",
            "pkg/test_core.py",
            "pkg/core_test.py",
            "conftest.py",
            "setup.py",
            "docs/conf.py",
            "spec/x.py",
            ".venv/lib/x.py",
            "pkg/data.txt",
            "build/lib/pkg/core.py",
        ] {
            assert!(!is_library_source(no, &dirs), "{no}");
        }
    }

    #[test]
    fn content_commit_is_stable_and_content_sensitive() {
        let mut a = BTreeMap::new();
        a.insert("x.py".to_string(), b"a".to_vec());
        a.insert("y.py".to_string(), b"b".to_vec());
        let c = content_commit(&a);
        assert_eq!(c.len(), 40);
        assert_eq!(c, content_commit(&a.clone()));
        a.insert("y.py".to_string(), b"c".to_vec());
        assert_ne!(c, content_commit(&a));
    }

    #[test]
    fn file_diff_applies_both_ways() {
        let d = file_diff("p/m.py", "a\nb\nc\n", "a\nB\nc\n");
        assert!(
            d.starts_with("diff --git a/p/m.py b/p/m.py\n--- a/p/m.py\n+++ b/p/m.py\n@@"),
            "{d}"
        );
        assert!(d.contains("\n-b\n+B\n"), "{d}");
    }

    #[test]
    fn order_is_deterministic_and_interleaves_operators() {
        let src = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/minilib/minilib/core.py"
        ))
        .unwrap();
        let all = mutate::mutations("minilib/core.py", &src).unwrap();
        let a = candidate_order(all.clone(), 7);
        assert_eq!(a, candidate_order(all.clone(), 7));
        assert_ne!(a, candidate_order(all.clone(), 8));
        let first: std::collections::BTreeSet<Operator> =
            a.iter().take(7).map(|m| m.operator).collect();
        assert_eq!(first.len(), 7, "the first round tries every operator");
        assert_eq!(a.len(), all.len());
    }

    /// A fake suite: test `t::<n>` fails when the file text contains the marker for n;
    /// a candidate containing "FLAKY" fails on alternate runs.
    struct Fake {
        calls: Mutex<usize>,
    }

    #[async_trait]
    impl SuiteRunner for Fake {
        async fn run(&self, replace: Option<(&str, &str)>) -> anyhow::Result<Option<SuiteResult>> {
            let mut calls = self.calls.lock().unwrap();
            *calls += 1;
            let text = replace.map(|(_, t)| t).unwrap_or("");
            let mut tests = BTreeMap::new();
            for n in 0..8 {
                let broken = match n {
                    0 => text.contains("x <= 1"),
                    1 => text.contains("x > 1 or") || text.contains("not (x > 1"),
                    2 => text.contains("FLAKY") && (*calls).is_multiple_of(2),
                    _ => text.contains("or y"),
                };
                tests.insert(
                    format!("tests/test_m.py::t{n}"),
                    CaseOutcome {
                        ok: !broken,
                        skipped: false,
                        message: broken.then(|| format!("assert f(2) == {n}")),
                    },
                );
            }
            Ok(Some(SuiteResult { tests }))
        }
        fn test_command(&self) -> crate::testcmd::TestCommand {
            crate::testcmd::TestCommand::python_pytest()
        }
    }

    #[tokio::test]
    async fn generation_accepts_specific_bugs_and_rejects_the_rest() {
        let src = "def f(x, y):\n    if x > 1 and y:\n        return 2\n    return x < 1\n";
        let mut sources = BTreeMap::new();
        sources.insert("m.py".to_string(), src.to_string());
        let runner = Fake {
            calls: Mutex::new(0),
        };
        let opts = GenOptions {
            repo: "o/n".into(),
            max_tasks: 100,
            max_candidates: 1000,
            seed: 1,
        };
        let mut seen = Vec::new();
        let (tasks, report) = generate(
            &runner,
            &sources,
            "ab".repeat(20).as_str(),
            &opts,
            &mut |m, r| seen.push((m.id.clone(), r)),
        )
        .await
        .unwrap();
        // and→or breaks 5 of 8 tests: too broad; `x < 1` → `x <= 1` breaks t0 only.
        let flip = tasks
            .iter()
            .find(|t| t.bug_patch.contains("+    return x <= 1"))
            .expect("the comparison flip is a task");
        assert_eq!(flip.fail_to_pass, vec!["tests/test_m.py::t0"]);
        assert_eq!(flip.pass_to_pass.len(), 7);
        assert!(flip.instance_id.starts_with("o__n-flipcmp-"));
        assert!(
            flip.patch
                .contains("-    return x <= 1\n+    return x < 1\n"),
            "{}",
            flip.patch
        );
        assert!(flip.problem_statement.contains("assert f(2) == 0"));
        assert!(!flip.problem_statement.contains("return x"));
        assert!(
            report.rejected.get("too_broad").is_some_and(|n| *n >= 1),
            "{report:?}"
        );
        assert!(
            report.rejected.get("survived").is_some_and(|n| *n >= 1),
            "{report:?}"
        );
        assert_eq!(report.accepted, tasks.len());
        assert_eq!(seen.len(), report.candidates_tried);
        // every task's bug patch turns the original into a mutant that the fix turns back
        for t in &tasks {
            assert!(!t.fail_to_pass.is_empty());
            assert_eq!(t.base_commit, "ab".repeat(20));
        }
        // max_tasks is honoured
        let (few, _) = generate(
            &runner,
            &sources,
            "ab",
            &GenOptions {
                max_tasks: 1,
                ..opts.clone()
            },
            &mut |_, _| {},
        )
        .await
        .unwrap();
        assert_eq!(few.len(), 1);
    }

    #[tokio::test]
    async fn flaky_candidates_are_rejected() {
        // The only mutation sites produce text with FLAKY in it; t2 alternates.
        let src = "FLAKY = x < 1\n";
        let mut sources = BTreeMap::new();
        sources.insert("m.py".to_string(), src.to_string());
        let runner = Fake {
            calls: Mutex::new(0),
        };
        let opts = GenOptions {
            repo: "o/n".into(),
            max_tasks: 10,
            max_candidates: 10,
            seed: 1,
        };
        let (tasks, report) = generate(&runner, &sources, "ab", &opts, &mut |_, _| {})
            .await
            .unwrap();
        // the flip makes `x <= 1` (t0 fails every run) and t2 fails every other run
        assert!(tasks.is_empty(), "{tasks:?}");
        assert_eq!(report.rejected.get("flaky"), Some(&1), "{report:?}");
    }

    #[tokio::test]
    async fn a_red_baseline_names_its_failing_tests() {
        struct Red;
        #[async_trait]
        impl SuiteRunner for Red {
            async fn run(&self, _: Option<(&str, &str)>) -> anyhow::Result<Option<SuiteResult>> {
                let mut tests = BTreeMap::new();
                tests.insert(
                    "tests/t.py::ok".into(),
                    CaseOutcome {
                        ok: true,
                        skipped: false,
                        message: None,
                    },
                );
                // Most of the suite red: no baseline (a few red tests are pre-existing).
                for bad in ["tests/t.py::bad", "tests/t.py::bad2"] {
                    tests.insert(
                        bad.into(),
                        CaseOutcome {
                            ok: false,
                            skipped: false,
                            message: None,
                        },
                    );
                }
                Ok(Some(SuiteResult { tests }))
            }
            fn test_command(&self) -> crate::testcmd::TestCommand {
                crate::testcmd::TestCommand::python_pytest()
            }
        }
        let opts = GenOptions {
            repo: "o/n".into(),
            max_tasks: 1,
            max_candidates: 1,
            seed: 0,
        };
        let err = generate(&Red, &BTreeMap::new(), "ab", &opts, &mut |_, _| {})
            .await
            .unwrap_err();
        assert!(err.to_string().contains("tests/t.py::bad"), "{err}");
    }
}
