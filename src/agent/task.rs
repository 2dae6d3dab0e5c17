//! The task given to the model at the start of an episode: the failing tests' output, the
//! failing-code context ([`super::context`]), the targets and the pre-existing failures, the
//! problem statement and the file list. Pure except [`list_files`] and [`failing_context`],
//! which ask the sandbox.

use std::collections::BTreeMap;

use crate::sandbox::output::truncate_text;
use crate::sandbox::{ExecRequest, Sandbox};

use super::context::{self, Context};
use super::tools::TestRun;

/// The task text. `targets` are what the patch must make pass; `pre_existing` failed before
/// too but are not the model's job (an environment or unrelated failure). Pure.
pub fn build_task(
    failing: &TestRun,
    targets: &[String],
    pre_existing: &[String],
    issue: Option<&str>,
    files: &[String],
    context: &Context,
) -> String {
    let mut t = String::from(
        "The repository's tests fail. Fix the code (not the tests) so that they pass.\n\n",
    );
    if let Some(s) = &failing.summary {
        t.push_str(&format!(
            "{} passed, {} failed, {} errors.\n",
            s.passed, s.failed, s.errors
        ));
    }
    if !targets.is_empty() {
        t.push_str(&format!("Failing tests: {}\n", targets.join(", ")));
    }
    if !pre_existing.is_empty() {
        t.push_str(&format!(
            "Also failing before your change, but not your task (they fail for reasons outside \
             the code, e.g. the environment; leave them alone): {}\n",
            pre_existing.join(", ")
        ));
    }
    // The targets' failures only: a pre-existing failure's output would be chased.
    let shown = crate::agent::report::for_targets(&failing.output, targets, pre_existing);
    t.push_str(&format!(
        "\nTest output:\n```\n{}\n```\n",
        truncate_text(shown.trim(), 4000)
    ));
    if !context.text.is_empty() {
        t.push('\n');
        t.push_str(&context.text);
    }
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
    // Small models copy the test output back; a concrete first call gets them moving, to the
    // code under test when the context found it.
    let focus = &context.focus;
    if let Some(code) = focus.code.first() {
        t.push_str(&format!(
            "\nStart by reading the code the failing test runs: {}\n",
            code.view_call()
        ));
    } else if let Some(test) = focus.tests.first() {
        t.push_str(&format!(
            "\nStart by reading the failing test: {}\n",
            test.view_call()
        ));
    } else if let Some(file) = targets.first().and_then(|id| pytest_file_of(id)) {
        t.push_str(&format!(
            "\nStart by reading the failing test: {{\"name\": \"view_file\", \"arguments\": {{\"path\": \"{file}\"}}}}\n"
        ));
    }
    t
}

/// The file part of a pytest id (`tests/test_median.py::test_x` → `tests/test_median.py`). Pure.
fn pytest_file_of(id: &str) -> Option<String> {
    let t = crate::testid::TestId::new(id);
    t.is_pytest().then(|| t.file().to_string())
}

/// Up to 60 workspace files, for the task (small models otherwise guess paths). Best effort.
pub async fn list_files(sandbox: &dyn Sandbox) -> Vec<String> {
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

/// The failing-code context of a reproduction run: the plan from its output, the files read
/// through the sandbox in two rounds (the tests and the frames' files, then the modules the
/// tests import), rendered within `budget` bytes. Best effort: unreadable files are skipped;
/// a `budget` of 0 turns it off.
pub async fn failing_context(
    sandbox: &dyn Sandbox,
    output: &str,
    failing: &[String],
    budget: usize,
) -> Context {
    if budget == 0 {
        return Context::default();
    }
    failing_context_files(sandbox, output, failing, budget)
        .await
        .0
}

/// [`failing_context`] and the files it read (the candidate strategy edits them).
pub async fn failing_context_files(
    sandbox: &dyn Sandbox,
    output: &str,
    failing: &[String],
    budget: usize,
) -> (Context, BTreeMap<String, String>) {
    let plan = context::plan(output, failing);
    let mut files = read_files(sandbox, &plan.files()).await;
    let more = plan.imports(&files);
    files.extend(read_files(sandbox, &more).await);
    (context::render(&plan, &files, budget.max(1)), files)
}

/// Names a text mentions as code: `name(` and `name` in backticks (the last dotted part).
/// Pure.
pub fn named_in(text: &str) -> Vec<String> {
    static CODE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"`([A-Za-z_][A-Za-z0-9_.]*)(?:\(\))?`|\b([A-Za-z_][A-Za-z0-9_]*)\(")
            .expect("static regex")
    });
    let mut out: Vec<String> = Vec::new();
    for c in CODE.captures_iter(text) {
        let Some(m) = c.get(1).or(c.get(2)) else {
            continue;
        };
        let name = m.as_str().rsplit('.').next().unwrap_or("").to_string();
        if name.len() > 2 && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// Non-test Python files read when a statement locates code.
const MAX_NAMED_FILES: usize = 200;
/// Functions a statement locates at most.
const MAX_NAMED: usize = 4;

/// Where a problem statement points when no failing run does (a task's failing tests are
/// held out, so no traceback exists in the sandbox): the definitions of the functions it
/// names, in the repository's non-test Python files, and the files read.
pub async fn locate_named(
    sandbox: &dyn Sandbox,
    text: &str,
    files: &[String],
) -> (Vec<context::Location>, BTreeMap<String, String>) {
    let names = named_in(text);
    if names.is_empty() {
        return (Vec::new(), BTreeMap::new());
    }
    let code: Vec<String> = files
        .iter()
        .filter(|f| f.ends_with(".py") && !context::is_test_path(f))
        .take(MAX_NAMED_FILES)
        .cloned()
        .collect();
    let read = read_files(sandbox, &code).await;
    let mut locs = Vec::new();
    // In the order the text names them: the first named is the most likely subject.
    for n in &names {
        for (p, src) in &read {
            for l in context::defs_named(p, src, std::slice::from_ref(n)) {
                if locs.len() < MAX_NAMED {
                    locs.push(l);
                }
            }
        }
    }
    (locs, read)
}

/// Largest file the context reads, bytes.
const MAX_CONTEXT_FILE: usize = 1 << 20;

/// Read `paths` in one exec (`path NUL size NUL bytes` per file that exists and is small).
pub(crate) async fn read_files(
    sandbox: &dyn Sandbox,
    paths: &[String],
) -> BTreeMap<String, String> {
    if paths.is_empty() {
        return BTreeMap::new();
    }
    let script = format!(
        "for f do [ -f \"$f\" ] || continue; n=$(wc -c < \"$f\") || continue; \
         [ \"$n\" -le {MAX_CONTEXT_FILE} ] || continue; printf '%s\\0%s\\0' \"$f\" \"$n\"; \
         cat -- \"$f\"; done"
    );
    let mut argv = vec!["sh".to_string(), "-c".into(), script, "sh".into()];
    argv.extend(paths.iter().cloned());
    let req = ExecRequest::argv(argv).output_cap(8 << 20);
    match sandbox.exec(req).await {
        Ok(r) if !r.output.is_truncated() => parse_files(&r.output.kept_bytes()),
        _ => BTreeMap::new(),
    }
}

/// The files of [`read_files`]' output; stops at the first malformed record. Pure.
fn parse_files(mut bytes: &[u8]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let field = |b: &mut &[u8]| -> Option<String> {
        let at = b.iter().position(|c| *c == 0)?;
        let s = String::from_utf8_lossy(&b[..at]).into_owned();
        *b = &b[at + 1..];
        Some(s)
    };
    while !bytes.is_empty() {
        let (Some(path), Some(size)) = (field(&mut bytes), field(&mut bytes)) else {
            break;
        };
        let Ok(n) = size.trim().parse::<usize>() else {
            break;
        };
        if n > bytes.len() {
            break;
        }
        out.insert(path, String::from_utf8_lossy(&bytes[..n]).into_owned());
        bytes = &bytes[n..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tools::TestSummary;
    use crate::sandbox::ExecStatus;

    #[test]
    fn a_statement_names_code_by_calls_and_backticks() {
        assert_eq!(
            named_in("median() of an even list; see `stats.mean` and `x`, also run(a)"),
            ["median", "mean", "run"]
        );
    }

    #[test]
    fn task_has_failing_ids_output_and_issue() {
        let run = TestRun {
            status: ExecStatus::Exited(1),
            summary: Some(TestSummary {
                passed: 3,
                failed: 2,
                errors: 0,
                skipped: 0,
                failing: vec![
                    "tests/test_median.py::test_even".into(),
                    "tests/test_env.py::test_locale".into(),
                ],
            }),
            output: "E   assert 3 == 2.5".into(),
        };
        let targets = ["tests/test_median.py::test_even".to_string()];
        let pre = ["tests/test_env.py::test_locale".to_string()];
        let t = build_task(
            &run,
            &targets,
            &pre,
            Some("median is wrong for even lists"),
            &["stats/median.py".into()],
            &Context::default(),
        );
        assert!(t.contains("- stats/median.py"));
        assert!(t.contains("Failing tests: tests/test_median.py::test_even\n"));
        assert!(t.contains("not your task"), "{t}");
        assert!(t.contains("tests/test_env.py::test_locale"));
        assert!(t.contains("E   assert 3 == 2.5"));
        assert!(t.contains("Problem statement:\nmedian is wrong"));
        let plain = build_task(&run, &targets, &[], None, &[], &Context::default());
        assert!(!plain.contains("Problem statement"));
        assert!(!plain.contains("not your task"));
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

    #[test]
    fn files_are_read_back_exactly() {
        let mut raw = b"a.py\x005\x00x\x00y\nzb/c.py\x000\x00".to_vec();
        let files = parse_files(&raw);
        assert_eq!(files["a.py"], "x\x00y\nz");
        assert_eq!(files["b/c.py"], "");
        raw.extend_from_slice(b"d.py\x0099\x00short");
        assert_eq!(parse_files(&raw).len(), 2, "a record cut short is dropped");
    }

    #[tokio::test]
    async fn the_context_is_read_through_the_sandbox_and_leads_the_first_call() {
        let dir = tempfile::tempdir().unwrap();
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/agent/testdata/traceback/repo");
        for rel in ["shop/__init__.py", "shop/prices.py", "tests/test_prices.py"] {
            let to = dir.path().join(rel);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(src.join(rel), &to).unwrap();
        }
        let sandbox = crate::agent::testing::HostDir::new(dir.path())
            .await
            .unwrap();
        let output = include_str!("testdata/traceback/pytest-long.txt");
        let ids = ["tests/test_prices.py::TestCart::test_count".to_string()];
        let cx = failing_context(&sandbox, output, &ids, 3072).await;
        // Second round: the module the test imports, found from the test function's calls.
        assert!(
            cx.text.contains("shop/prices.py:28 Cart.count:"),
            "{}",
            cx.text
        );
        let run = TestRun {
            status: ExecStatus::Exited(1),
            summary: None,
            output: output.into(),
        };
        let t = build_task(&run, &ids, &[], None, &[], &cx);
        assert!(t.contains("Failing-code context"), "{t}");
        assert!(
            t.contains(r#"Start by reading the code the failing test runs: {"name": "view_file", "arguments": {"path": "shop/prices.py", "start_line": 24, "end_line": 26}}"#),
            "{t}"
        );
        assert!(
            failing_context(&sandbox, output, &ids, 0)
                .await
                .text
                .is_empty()
        );
    }
}
