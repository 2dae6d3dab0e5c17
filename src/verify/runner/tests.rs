use super::checks::{MARKER, Marker, parse_marker, parse_stream, stream_vs_junit, tree_changes};
use super::second::parse_second;
use super::*;
use crate::sandbox::{CappedOutput, ExecRequest, ExecResult, ExecStatus, SandboxError};

/// `pl_second.py` under this machine's `python3 -I`, with `shadow` on sys.path ahead of
/// the workspace as an installed copy of the project is (site- or dist-packages).
fn second_here(ws: &std::path::Path, shadow: &std::path::Path, ids: &[&str]) -> String {
    let wrapper = format!(
        "import sys\nsys.path.insert(0, {:?})\nexec(compile({:?}, 'pl_second', 'exec'), {{'__name__': '__main__'}})\n",
        shadow.display().to_string(),
        harness::PL_SECOND
    );
    let input = serde_json::json!({"workspace": ws, "paths": [], "ids": ids, "nonce": "n1"});
    String::from_utf8_lossy(&python_here(&["-c", &wrapper], &input)).into_owned()
}

/// `python3 -I -B ARGS` on this machine with `input` as JSON on stdin, as the harness's
/// scripts run in a container; its stdout.
fn python_here(args: &[&str], input: &serde_json::Value) -> Vec<u8> {
    use std::io::Write;
    let mut child = std::process::Command::new("python3")
        .args(["-I", "-B"])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 is needed for this test");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap().stdout
}

#[test]
fn the_second_runner_imports_the_workspaces_project_not_an_installed_copy() {
    let ws = tempfile::tempdir().unwrap();
    let shadow = tempfile::tempdir().unwrap();
    for (root, version) in [(ws.path(), "workspace"), (shadow.path(), "installed")] {
        std::fs::create_dir_all(root.join("mylib")).unwrap();
        std::fs::write(
            root.join("mylib/__init__.py"),
            format!("VERSION = {version:?}\n"),
        )
        .unwrap();
    }
    std::fs::create_dir_all(ws.path().join("tests")).unwrap();
    std::fs::write(ws.path().join("tests/__init__.py"), "").unwrap();
    std::fs::write(
        ws.path().join("tests/test_v.py"),
        "import unittest\nimport mylib\n\n\ndef test_plain():\n    assert mylib.VERSION == 'workspace', mylib.VERSION\n\n\nclass T(unittest.TestCase):\n    def test_case(self):\n        self.assertEqual(mylib.VERSION, 'workspace')\n",
    )
    .unwrap();
    let out = second_here(
        ws.path(),
        shadow.path(),
        &[
            "tests/test_v.py::test_plain",
            "tests/test_v.py::T::test_case",
        ],
    );
    let run = parse_second(&out, "n1");
    assert!(run.problem.is_none(), "{out}");
    for (id, r) in &run.results {
        assert_eq!(r.outcome, "passed", "{id}: {r:?}");
    }
    assert_eq!(run.results.len(), 2, "{out}");
}
#[test]
fn the_second_runner_iterates_sets_as_the_seeded_pytest_runs_do() {
    // A test whose outcome follows string hashes: it passes under the sandbox's
    // PYTHONHASHSEED=0 (the pytest runs' seed), and would fail under most random seeds.
    let words: Vec<String> = (0..20).map(|i| format!("w{i}")).collect();
    let set = format!(
        "{{{}}}",
        words
            .iter()
            .map(|w| format!("{w:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let first = std::process::Command::new("python3")
        .args(["-c", &format!("print(next(iter({set})))")])
        .env("PYTHONHASHSEED", "0")
        .output()
        .expect("python3 is needed for this test");
    let first = String::from_utf8_lossy(&first.stdout).trim().to_string();
    let ws = tempfile::tempdir().unwrap();
    let shadow = tempfile::tempdir().unwrap();
    std::fs::write(
        ws.path().join("test_order.py"),
        format!("def test_first():\n    assert next(iter({set})) == {first:?}\n"),
    )
    .unwrap();
    let out = second_here(ws.path(), shadow.path(), &["test_order.py::test_first"]);
    let run = parse_second(&out, "n1");
    assert!(run.problem.is_none(), "{out}");
    assert_eq!(
        run.results["test_order.py::test_first"].outcome, "passed",
        "{out}"
    );
}

use async_trait::async_trait;
use std::sync::Mutex;

/// Answers the harness's execs from a script: (argv contains, exit code, output).
struct Fake {
    script: Vec<(&'static str, i64, String)>,
    seen: Mutex<Vec<String>>,
}

#[async_trait]
impl Sandbox for Fake {
    async fn exec(&self, req: ExecRequest) -> Result<ExecResult, SandboxError> {
        let joined = req.argv.join(" ");
        let key = if joined.contains("@@PATCHLOOP-RUN@@") {
            "pl_run".to_string()
        } else {
            req.argv.last().cloned().unwrap_or_default()
        };
        self.seen.lock().unwrap().push(key.clone());
        let (_, code, out) = self
            .script
            .iter()
            .find(|(k, _, _)| *k == key)
            .unwrap_or_else(|| panic!("unexpected exec {key}"));
        let mut o = CappedOutput::new(1 << 20);
        o.push(out.as_bytes());
        Ok(ExecResult {
            status: ExecStatus::Exited(*code),
            output: o,
            duration: Duration::from_millis(5),
        })
    }
    async fn diff(&self) -> Result<String, SandboxError> {
        Ok(String::new())
    }
    fn id(&self) -> &str {
        "fake"
    }
}

#[tokio::test]
async fn a_run_without_junit_says_so_and_what_was_run() {
    let setup = serde_json::json!({
        "ini": {"ini_text": "[pytest]\n", "source": null},
        "snapshot": {},
        "found": {},
    });
    let collect = serde_json::json!({
        "junit": null, "guard": null, "junit_sha256": "-", "guard_sha256": "-", "snapshot": {},
    });
    let fake = Fake {
        script: vec![
            ("setup", 0, setup.to_string()),
            // No read-only helper in this sandbox: the baseline snapshot is an exec too.
            ("snapshot", 0, "{}".into()),
            ("pl_run", 4, "ERROR: usage: pytest [options]\n".into()),
            ("collect", 0, collect.to_string()),
        ],
        seen: Mutex::new(Vec::new()),
    };
    let image = PreparedImage {
        tag: "img".into(),
        tests_dirs: vec!["tests".into()],
        test_cmd: crate::testcmd::TestCommand::python_pytest(),
    };
    let req = VerifyRequest::new(image, String::new(), vec!["tests/t.py::test_a".into()]);
    let mut ctx = Ctx {
        req: &req,
        kind: ProjectKind::Python,
        started: Instant::now(),
        image_id: None,
        env_note: None,
        container_policy: ContainerPolicy::default(),
        patch_info: PatchInfo::new("", &[]),
        violations: Vec::new(),
        command: Vec::new(),
        before: Vec::new(),
        after: Vec::new(),
        analysis: Default::default(),
        second: None,
        fit: None,
    };
    let err = run_all(&fake, None, &mut ctx, &[], &[]).await.err();
    let r = ctx.finish(err);
    assert_eq!(r.decision.verdict, Verdict::Error);
    let reason = &r.decision.reason;
    assert!(reason.contains("no usable JUnit report"), "{reason}");
    assert!(reason.contains("usage: pytest"), "{reason}");
    assert!(reason.contains("[command: python3 -I -B"), "{reason}");
    // The baseline decided it: the patch was never applied.
    assert!(!fake.seen.lock().unwrap().iter().any(|k| k == "-"));
    assert!(r.runs.iter().all(|x| x.phase == Phase::Before));
}

#[test]
fn only_new_failures_outside_fail_to_pass_bring_back_full_reruns() {
    use crate::verify::junit::TestOutcome;
    let rec =
        |outs: &[(&str, TestOutcome)]| crate::verify::verdict::tests::run(Phase::After, 0, outs);
    let f2p = vec!["f".to_string()];
    let before = rec(&[
        ("f", TestOutcome::Failed),
        ("p", TestOutcome::Passed),
        ("x", TestOutcome::Failed),
    ]);
    let clean = rec(&[
        ("f", TestOutcome::Passed),
        ("p", TestOutcome::Passed),
        ("x", TestOutcome::Failed),
    ]);
    assert!(
        !new_failures(&before, &clean, &f2p),
        "pre-existing failures do not count"
    );
    let f_fails = rec(&[("f", TestOutcome::Failed), ("p", TestOutcome::Passed)]);
    assert!(
        !new_failures(&before, &f_fails, &f2p),
        "fail-to-pass is re-run anyway"
    );
    let p_fails = rec(&[("f", TestOutcome::Passed), ("p", TestOutcome::Error)]);
    assert!(new_failures(&before, &p_fails, &f2p));
    let no_report = RunRecord {
        results: None,
        ..clean.clone()
    };
    assert!(new_failures(&before, &no_report, &f2p));
}

#[test]
fn tree_changes_name_each_file() {
    let a = BTreeMap::from([
        ("a.py".to_string(), "1".to_string()),
        ("b.py".into(), "2".into()),
    ]);
    let b = BTreeMap::from([
        ("a.py".to_string(), "9".to_string()),
        ("c.py".into(), "3".into()),
    ]);
    assert_eq!(
        tree_changes(&a, &b),
        vec![
            "the run modified a.py",
            "the run deleted b.py",
            "the run created c.py"
        ]
    );
    assert!(tree_changes(&a, &a).is_empty());
}

#[test]
fn markers_must_be_unique() {
    assert_eq!(parse_marker("no marker\n"), Ok(None));
    let one = "....\n@@PATCHLOOP-RUN@@ rc=1 junit=ab guard=cd\n";
    assert_eq!(
        parse_marker(one),
        Ok(Some(Marker {
            rc: 1,
            junit: "ab".into(),
            guard: "cd".into(),
            pytest: String::new(),
            why: String::new(),
        }))
    );
    let harness = "@@PATCHLOOP-RUN@@ rc=0 junit=a guard=b pytest=harness:8.3.4 why=626f6f6d\n";
    let m = parse_marker(harness).unwrap().unwrap();
    assert_eq!(m.pytest_note().as_deref(), Some("harness 8.3.4: boom"));
    let project = "@@PATCHLOOP-RUN@@ rc=0 junit=a guard=b pytest=project:7.2.1 why=-\n";
    let m = parse_marker(project).unwrap().unwrap();
    assert_eq!(m.pytest_note().as_deref(), Some("project 7.2.1"));
    let two = format!("@@PATCHLOOP-RUN@@ rc=0 junit=x guard=y\n{one}");
    assert!(parse_marker(&two).is_err());
}

#[test]
fn outcome_stream_is_cross_checked_with_junit() {
    use crate::verify::junit::{CaseResult, TestOutcome};
    let out = "x\n@@PATCHLOOP-T@@ n1 setup passed \"t.py::a\"\n@@PATCHLOOP-T@@ n1 call passed \"t.py::a\"\n\
                   @@PATCHLOOP-T@@ n1 call failed \"t.py::b[x::y]\"\n\
                   @@PATCHLOOP-T@@ forged call passed \"t.py::b[x::y]\"\n";
    let s = parse_stream(out, "n1");
    assert!(s.problems.is_empty(), "{:?}", s.problems);
    assert_eq!(s.outcomes.get("t.py::a"), Some(&TestOutcome::Passed));
    assert_eq!(s.outcomes.get("t.py::b[x::y]"), Some(&TestOutcome::Failed));
    let case = |o| CaseResult {
        outcome: o,
        duration: None,
        message: None,
    };
    let junit = BTreeMap::from([
        ("t.py::a".to_string(), case(TestOutcome::Passed)),
        ("t.py::b[x::y]".to_string(), case(TestOutcome::Failed)),
    ]);
    assert!(stream_vs_junit(&s, &junit).is_empty());
    // A JUnit report rewritten to say passed, and a passed test never streamed.
    let forged = BTreeMap::from([
        ("t.py::b[x::y]".to_string(), case(TestOutcome::Passed)),
        ("t.py::c".to_string(), case(TestOutcome::Passed)),
    ]);
    assert_eq!(stream_vs_junit(&s, &forged).len(), 2);
    // Records after the end-of-run marker are late.
    let late =
        format!("{MARKER}rc=0 junit=- guard=-\n@@PATCHLOOP-T@@ n1 call passed \"t.py::a\"\n");
    assert_eq!(parse_stream(&late, "n1").problems.len(), 1);
}

/// A unittest case whose module or class sets the stage (`setUpModule` makes the directory
/// CPython's test_tarfile writes into; `setUpClass` an attribute) runs with it under pytest,
/// so the second runner must run it too, or it calls a correct patch tampering.
#[test]
fn the_second_runner_runs_module_and_class_fixtures_as_pytest_does() {
    let ws = tempfile::tempdir().unwrap();
    let none = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("tests")).unwrap();
    std::fs::write(
        ws.path().join("tests/test_fx.py"),
        "import os\nimport tempfile\nimport unittest\n\nDIR = os.path.join(tempfile.gettempdir(), 'pl-second-fx-%d' % os.getpid())\n\n\ndef setUpModule():\n    os.makedirs(DIR)\n\n\ndef tearDownModule():\n    os.rmdir(DIR)\n\n\nclass T(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n        cls.name = 'ready'\n\n    def test_module_stage(self):\n        self.assertTrue(os.path.isdir(DIR))\n\n    def test_class_stage(self):\n        self.assertEqual(self.name, 'ready')\n\n    def test_really_fails(self):\n        self.assertEqual(1, 2)\n",
    )
    .unwrap();
    let ids = [
        "tests/test_fx.py::T::test_module_stage",
        "tests/test_fx.py::T::test_class_stage",
        "tests/test_fx.py::T::test_really_fails",
    ];
    let out = second_here(ws.path(), none.path(), &ids);
    let run = parse_second(&out, "n1");
    assert!(run.problem.is_none(), "{out}");
    let outcome = |id: &str| run.results[id].outcome.clone();
    assert_eq!(outcome(ids[0]), "passed", "{out}");
    assert_eq!(outcome(ids[1]), "passed", "{out}");
    assert_eq!(outcome(ids[2]), "failed", "{out}");
    // A conftest hook that acts on every test (backports.tarfile's swaps `findfile` in
    // `pytest_configure`) acts on unittest cases too: without it they prove nothing.
    std::fs::write(
        ws.path().join("conftest.py"),
        "def pytest_configure():\n    pass\n",
    )
    .unwrap();
    let out = second_here(ws.path(), none.path(), &ids[..1]);
    let run = parse_second(&out, "n1");
    assert_eq!(run.results[ids[0]].outcome, "not_applicable", "{out}");
    assert!(run.results[ids[0]].detail.contains("conftest.py"), "{out}");
    // So does an autouse fixture of the test module itself (platformdirs 4.11's Windows tests
    // patch the folder lookup for every test of the file): the gold patch came back
    // `tampered` when the second runner called the test without it.
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("tests")).unwrap();
    std::fs::write(
        ws.path().join("tests/test_own.py"),
        "try:\n    import pytest\nexcept ImportError:  # this host runs the harness without pytest\n    pytest = None\n\nSTAGE = []\n\nif pytest:\n    @pytest.fixture(autouse=True)\n    def _stage():\n        STAGE.append(1)\n\n\ndef test_needs_the_stage():\n    assert STAGE\n",
    )
    .unwrap();
    let id = "tests/test_own.py::test_needs_the_stage";
    let out = second_here(ws.path(), none.path(), &[id]);
    let run = parse_second(&out, "n1");
    assert_eq!(run.results[id].outcome, "not_applicable", "{out}");
    assert!(
        run.results[id]
            .detail
            .contains("autouse fixture in tests/test_own.py"),
        "{out}"
    );
}

#[test]
fn second_runner_output_needs_exactly_one_nonce_line() {
    let ok = "noise\n@@PATCHLOOP-SECOND@@ k1 {\"t.py::a\": {\"outcome\": \"passed\", \"detail\": \"\"}}\n";
    let r = parse_second(ok, "k1");
    assert!(r.problem.is_none());
    assert_eq!(r.results["t.py::a"].outcome, "passed");
    assert!(parse_second(ok, "other").problem.is_some());
    let twice = format!("{ok}{ok}");
    assert!(parse_second(&twice, "k1").problem.is_some());
}

/// `pl_tool.py snapshot` under this machine's `python3 -I`: a `.pyc` compiled from its source
/// (or one the import system would not use for it) is derived data, digested as such; a
/// `.pyc` Python would load in place of its source with other code keeps its own digest, so
/// a run that writes one still counts as a change.
#[test]
fn a_pyc_compiled_from_its_source_is_derived_a_crafted_one_is_not() {
    let ws = tempfile::tempdir().unwrap();
    // Writes the three .pyc files with CPython's own helpers.
    let setup = r#"
import importlib._bootstrap_external as be, os, py_compile, sys
ws = sys.argv[1]
for name in ("good", "stale", "crafted"):
    os.makedirs(os.path.join(ws, "pkg"), exist_ok=True)
    with open(os.path.join(ws, "pkg", name + ".py"), "w") as f:
        f.write("def f():\n    return 1\n")
    py_compile.compile(os.path.join(ws, "pkg", name + ".py"),
                       cfile=os.path.join(ws, "pkg", "__pycache__", name + ".cpython-311.pyc"))
# The source changed after it was compiled (another size): the .pyc is never used.
with open(os.path.join(ws, "pkg", "stale.py"), "w") as f:
    f.write("def f():\n    return 22\n")
# Other code under the header of the source's own stat: Python would load it.
src = os.path.join(ws, "pkg", "crafted.py")
st = os.stat(src)
code = compile("def f():\n    return 2\n", src, "exec")
with open(os.path.join(ws, "pkg", "__pycache__", "crafted.cpython-311.pyc"), "wb") as f:
    f.write(be._code_to_timestamp_pyc(code, int(st.st_mtime), st.st_size))
"#;
    let ok = std::process::Command::new("python3")
        .args(["-I", "-c", setup])
        .arg(ws.path())
        .status()
        .expect("python3 is needed for this test");
    assert!(ok.success());
    let input = serde_json::json!({"workspace": ws.path(), "tests_dirs": []});
    let stdout = python_here(&["-c", crate::verify::harness::PL_TOOL, "snapshot"], &input);
    let snap: BTreeMap<String, String> = serde_json::from_slice(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&stdout)));
    let digest = |n: &str| snap[&format!("pkg/__pycache__/{n}.cpython-311.pyc")].clone();
    assert_eq!(digest("good"), "compiled from its source", "{snap:?}");
    assert_eq!(digest("stale"), "compiled from its source", "{snap:?}");
    assert_eq!(digest("crafted").len(), 64, "{snap:?}");
}
