//! The task given to the model at the start of an episode: the failing tests' output, the
//! targets and the pre-existing failures, the problem statement and the file list. Pure except
//! [`list_files`], which asks the sandbox.

use crate::sandbox::Sandbox;
use crate::sandbox::output::truncate_text;

use super::tools::TestRun;

/// The task text. `targets` are what the patch must make pass; `pre_existing` failed before
/// too but are not the model's job (an environment or unrelated failure). Pure.
pub fn build_task(
    failing: &TestRun,
    targets: &[String],
    pre_existing: &[String],
    issue: Option<&str>,
    files: &[String],
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
    if let Some(file) = targets.first().and_then(|id| pytest_file_of(id)) {
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
        );
        assert!(t.contains("- stats/median.py"));
        assert!(t.contains("Failing tests: tests/test_median.py::test_even\n"));
        assert!(t.contains("not your task"), "{t}");
        assert!(t.contains("tests/test_env.py::test_locale"));
        assert!(t.contains("E   assert 3 == 2.5"));
        assert!(t.contains("Problem statement:\nmedian is wrong"));
        let plain = build_task(&run, &targets, &[], None, &[]);
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
}
