use super::*;

#[test]
fn junit_from_real_pytest() {
    let s = summarize_junit(include_str!("../testdata/pytest-junit.xml")).unwrap();
    assert_eq!((s.passed, s.failed, s.errors, s.skipped), (1, 1, 1, 1));
    assert_eq!(
        s.failing,
        vec!["test_a.py::test_bad", "test_a.py::TestK::test_err"]
    );
    assert!(!s.all_passed());
    assert!(summarize_junit("not xml").is_none());
}

/// Runs a `run_tests` script in a real `sh` (no `/opt/patchloop/kind` on this machine: the
/// Python branch) with recording `python` and `make` stubs on the PATH; what they got.
fn run_script_in_sh(script: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("argv");
    for name in ["python", "make"] {
        let p = dir.path().join(name);
        std::fs::write(
            &p,
            format!(
                "#!/bin/sh\n[ \"$1\" = -c ] && shift 2\nprintf '{name} addopts=[%s]' \"$PYTEST_ADDOPTS\" > {out}\nfor a in \"$@\"; do printf ' <%s>' \"$a\" >> {out}; done\n",
                out = out.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        dir.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let st = std::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .env("PATH", path)
        .status()
        .unwrap();
    assert!(st.success(), "{script}");
    std::fs::read_to_string(out).unwrap()
}

#[test]
fn run_tests_script_branches_on_the_image_kind() {
    let cmd = |s: &str| TestCommand::parse(s).unwrap();
    let s = run_tests_script(
        &cmd("python -m pytest -q tests"),
        "/tmp/j.xml",
        "/tmp/j",
        &[
            "tests/stats.test.js::median › odd".into(),
            "tests/t.py::x".into(),
        ],
    );
    assert!(s.contains("cat /opt/patchloop/kind"), "{s}");
    // pytest runs through the verifier's chooser (the project's pytest, else the harness's),
    // the ids replacing the command's own paths.
    assert!(s.contains("def choose_pytest("), "{s}");
    assert_eq!(
        run_script_in_sh(&s),
        "python addopts=[] <-q> <--junitxml=/tmp/j.xml> <tests/stats.test.js::median › odd> <tests/t.py::x>"
    );
    // A command that does not run pytest itself is run as written; the report option
    // reaches pytest, should it run, through PYTEST_ADDOPTS.
    let make = run_tests_script(&cmd("make test"), "/tmp/j.xml", "/tmp/j", &[]);
    assert_eq!(
        run_script_in_sh(&make),
        "make addopts=[--junitxml=/tmp/j.xml] <test>"
    );
    assert!(
        s.contains("python3 -I -B /opt/patchloop/harness/pl_junit.py"),
        "{s}"
    );
    // Node runs the files of the ids; Rust the whole suite.
    let node_line = s.lines().find(|l| l.starts_with("node)")).unwrap();
    assert!(
        node_line.contains(r#""files":["tests/stats.test.js","tests/t.py"]"#),
        "{node_line}"
    );
    let rust_line = s.lines().find(|l| l.starts_with("rust)")).unwrap();
    assert!(rust_line.contains(r#""files":[]"#), "{rust_line}");
}

#[test]
fn junit_results_of_rust_and_node_are_summarised() {
    let xml = include_str!("../../verify/testdata/jest_junit.xml");
    let json = serde_json::json!({
        "kind": "node", "runner": "jest", "rc": 1,
        "reports": [{"executable": null, "xml": xml}],
    })
    .to_string();
    let s = summarize_junit_result(&json).unwrap();
    assert_eq!((s.passed, s.failed, s.errors), (3, 1, 0));
    assert_eq!(
        s.failing,
        vec!["tests/stats.test.js::median › even length averages the middle pair"]
    );
    let broken = serde_json::json!({"kind": "rust", "problem": "does not compile", "reports": []});
    assert!(summarize_junit_result(&broken.to_string()).is_none());
    assert!(summarize_junit_result("not json").is_none());
}

#[test]
fn junit_ids_become_runnable_pytest_ids_as_the_verifier_reads_them() {
    let xml = r#"<testsuites><testsuite name="pytest" tests="3">
<testcase classname="tests.test_m" name="test_x"><failure message="boom"/></testcase>
<testcase classname="a.b.TestK" name="t"><error message="e"/></testcase>
<testcase classname="tests.test_m" name="test_ok"/>
</testsuite></testsuites>"#;
    let s = summarize_junit(xml).unwrap();
    assert_eq!((s.passed, s.failed, s.errors), (1, 1, 1));
    assert_eq!(
        s.failing,
        vec!["tests/test_m.py::test_x", "a/b.py::TestK::t"]
    );
    // One meaning of a missing test everywhere: it did not pass.
    use crate::verify::junit::TestOutcome;
    let m = TestSummary::from_outcomes([("t.py::gone".to_string(), TestOutcome::Missing)]);
    assert_eq!((m.errors, m.failing.len()), (1, 1));
    assert!(!m.all_passed());
}

#[test]
fn replace_exactly_one() {
    let t = "a\nb\nc\nd\n";
    let r = plan_replace(t, "b\nc", "B\nC\nX").unwrap();
    assert_eq!(r.content, "a\nB\nC\nX\nd\n");
    assert_eq!((r.first_line, r.last_line), (2, 4));
    assert!(r.snippet.contains("2  B"), "{}", r.snippet);
}

#[test]
fn replace_zero_matches_shows_most_similar_region() {
    let t = "def f():\n    return 1\n\ndef median(xs):\n    xs = sorted(xs)\n    return xs[len(xs) // 2]\n";
    let e = plan_replace(t, "  return xs[len(xs)/2]", "x").unwrap_err();
    assert!(e.contains("not found"), "{e}");
    assert!(e.contains("lines 6-6"), "{e}");
    assert!(e.contains("6      return xs[len(xs) // 2]"), "{e}");
}

#[test]
fn replace_several_matches_lists_lines() {
    let e = plan_replace("x = 1\ny = 2\nx = 1\n", "x = 1", "x = 3").unwrap_err();
    assert!(e.contains("occurs 2 times (at lines 1, 3)"), "{e}");
}

#[test]
fn replace_identical_is_refused() {
    assert!(
        plan_replace("a\n", "a", "a")
            .unwrap_err()
            .contains("identical")
    );
}

#[test]
fn numbering_and_quoting() {
    assert_eq!(number_lines("a\nb\nc\n", 2, 3), "2  b\n3  c\n");
    assert_eq!(number_lines("a\n", 1, 10), " 1  a\n");
    assert_eq!(shell_quote("it's"), r"'it'\''s'");
}

#[test]
fn every_tool_has_an_object_schema() {
    let s = specs();
    assert_eq!(
        s.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        names()
    );
    // Names are unique (dedup alone only drops adjacent repeats: sort first), and every
    // name finds its own entry.
    let mut uniq = names();
    uniq.sort_unstable();
    uniq.dedup();
    assert_eq!(uniq.len(), TOOLS.len());
    for t in &TOOLS {
        assert_eq!(find(t.name).map(|d| d.tool), Some(t.tool));
    }
    assert!(s.iter().all(|t| t.parameters["type"] == "object"));
}

fn focused() -> ToolConfig {
    use crate::agent::context::Location;
    let mut cfg = ToolConfig::default();
    cfg.focus.code = vec![Location {
        path: "shop/prices.py".into(),
        start: 15,
        end: 17,
        name: "total".into(),
        frame_line: Some(16),
    }];
    cfg.focus
        .lines
        .insert("tests/test_big.py".into(), vec![501, 900]);
    cfg.focus.read_only = vec!["tests".into()];
    cfg
}

#[test]
fn a_long_file_without_a_range_shows_a_window_and_how_to_page() {
    let big: String = (1..=7078).map(|i| format!("line {i}\n")).collect();
    let cfg = focused();
    let v = render_view(&cfg, "tests/test_big.py", &big, None, None).unwrap();
    assert!(
        v.starts_with("tests/test_big.py has 7078 lines; showing lines 481-580 (around line 501, which the failing test's traceback names).\n"),
        "{v}"
    );
    assert!(
        v.contains("\n481  line 481\n") && v.contains("\n580  line 580\n"),
        "{v}"
    );
    assert!(!v.contains("line 581\n") && !v.contains("line 480\n"));
    assert!(
        v.contains(r#"the next lines: {"name": "view_file", "arguments": {"path": "tests/test_big.py", "start_line": 581, "end_line": 680}}"#),
        "{v}"
    );
    assert!(v.contains(r#""start_line": 381, "end_line": 480"#), "{v}");
    assert!(v.len() < 2000, "{}", v.len());
    // No line named for the file: its start; an explicit range or a short file: as asked.
    let start = render_view(&cfg, "other.py", &big, None, None).unwrap();
    assert!(start.contains("showing lines 1-100 (its start)"), "{start}");
    assert!(!start.contains("lines before"), "{start}");
    let ranged = render_view(&cfg, "other.py", &big, Some(10), Some(400)).unwrap();
    assert!(
        ranged.starts_with("other.py (lines 10-400 of 7078):\n"),
        "{ranged}"
    );
    let small: String = (1..=200).map(|i| format!("l{i}\n")).collect();
    let whole = render_view(&cfg, "s.py", &small, None, None).unwrap();
    assert!(whole.starts_with("s.py (lines 1-200 of 200):\n"), "{whole}");
    let past = render_view(&cfg, "s.py", &small, Some(300), None).unwrap();
    assert!(
        past.contains("has only 200 lines; here it is whole.\ns.py (lines 1-200 of 200):\n"),
        "{past}"
    );
    assert!(render_view(&cfg, "s.py", &small, Some(50), Some(10)).is_err());
    assert!(render_view(&cfg, "other.py", &big, Some(8000), None).is_err());
}

#[tokio::test]
async fn edits_of_tests_or_no_ops_answer_with_the_code_to_look_at() {
    let dir = tempfile::tempdir().unwrap();
    let sb = crate::agent::testing::HostDir::with_files(
        dir.path(),
        &[
            (
                "tests/test_p.py",
                "def test_x():\n    assert total([]) == 0\n",
            ),
            ("shop/prices.py", "def total(xs):\n    return 1\n"),
        ],
    )
    .await
    .unwrap();
    let cfg = focused();
    let call =
        |path: &str, old: &str, new: &str| json!({"path": path, "old_str": old, "new_str": new});
    let o = execute(
        &sb,
        &cfg,
        "str_replace",
        &call("tests/test_p.py", "== 0", "== 1"),
    )
    .await
    .unwrap();
    assert!(o.text.contains("Read-only file system"), "{}", o.text);
    assert!(
        o.text
            .contains("- shop/prices.py:15 total (traceback line 16)"),
        "{}",
        o.text
    );
    assert!(
        o.text.contains(r#"Read it: {"name": "view_file", "arguments": {"path": "shop/prices.py", "start_line": 15, "end_line": 17}}"#),
        "{}",
        o.text
    );
    assert!(sb.diff().await.unwrap().is_empty(), "nothing was edited");
    let same = execute(
        &sb,
        &cfg,
        "str_replace",
        &call("shop/prices.py", "return 1", "return 1"),
    )
    .await
    .unwrap();
    assert!(same.text.contains("identical"), "{}", same.text);
    assert!(
        same.text.contains("shop/prices.py:15 total"),
        "{}",
        same.text
    );
    // Without a context the read-only check is the file system's, as before.
    let plain = ToolConfig::default();
    let ok = execute(
        &sb,
        &plain,
        "str_replace",
        &call("shop/prices.py", "return 1", "return sum(xs)"),
    )
    .await
    .unwrap();
    assert!(ok.text.starts_with("Edited shop/prices.py."), "{}", ok.text);
}
