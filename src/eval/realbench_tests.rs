use super::*;
use crate::bench::validate::CaseOutcome;

const FIXED: &str = "def interpose(el, seq):\n    inposed = zip(el, seq)\n    try:\n        next(inposed)\n    except StopIteration:\n        return iter([])\n    return inposed\n";
const BUGGY: &str =
    "def interpose(el, seq):\n    inposed = zip(el, seq)\n    next(inposed)\n    return inposed\n";

fn files() -> BTreeMap<String, Vec<u8>> {
    BTreeMap::from([
        ("toolz/itertoolz.py".to_string(), FIXED.as_bytes().to_vec()),
        (
            "toolz/tests/test_itertoolz.py".to_string(),
            b"def test(): pass\n".to_vec(),
        ),
    ])
}

fn spec() -> BugSpec {
    BugSpec {
        name: "interpose-empty".into(),
        repo: "pytoolz/toolz".into(),
        library: "toolz".into(),
        buggy_release: "1.1.0".into(),
        fixed_release: "1.2.0".into(),
        changelog: "interpose on an empty sequence".into(),
        bug: "bugs/interpose-empty.diff".into(),
    }
}

fn run(cases: &[(&str, bool, &str)]) -> SuiteResult {
    SuiteResult {
        tests: cases
            .iter()
            .map(|(id, ok, msg)| {
                (
                    id.to_string(),
                    CaseOutcome {
                        ok: *ok,
                        skipped: false,
                        message: (!ok).then(|| msg.to_string()),
                    },
                )
            })
            .collect(),
    }
}

#[test]
fn the_bug_diff_reverts_the_fix_and_the_gold_patch_restores_it() {
    let bug = file_diff("toolz/itertoolz.py", FIXED, BUGGY);
    let ch = changes(&files(), &bug, &["toolz/tests".into()]).unwrap();
    assert_eq!(ch.len(), 1);
    assert_eq!(ch[0].buggy, BUGGY);
    let (fix, bug_patch) = patches(&ch);
    assert_eq!(bug_patch, bug);
    let buggy_tree = BTreeMap::from([("toolz/itertoolz.py".to_string(), BUGGY.to_string())]);
    assert_eq!(
        apply::apply(&fix, &buggy_tree).unwrap()["toolz/itertoolz.py"],
        FIXED
    );
    // 4 lines added, 1 removed
    assert_eq!(changed_line_count(&ch), 5);
    let (lines, code) = leak_inputs(&ch[0]);
    assert_eq!(lines, vec![3], "the buggy line the fix replaces");
    assert!(
        code.contains(&"        return iter([])".to_string()),
        "{code:?}"
    );
    // tests are not where a bug lives; a diff that changes nothing or misses is refused
    let on_tests = file_diff(
        "toolz/tests/test_itertoolz.py",
        "def test(): pass\n",
        "def test(): fail\n",
    );
    let err = changes(&files(), &on_tests, &["toolz/tests".into()]).unwrap_err();
    assert!(format!("{err:#}").contains("not library code"), "{err:#}");
    let stale = file_diff("toolz/itertoolz.py", "x = 1\n", "x = 2\n");
    assert!(changes(&files(), &stale, &[]).is_err());
}

#[test]
fn a_task_from_the_runs_with_a_leak_free_statement() {
    let bug = file_diff("toolz/itertoolz.py", FIXED, BUGGY);
    let ch = changes(&files(), &bug, &["toolz/tests".into()]).unwrap();
    let green = run(&[
        ("t.py::a", true, ""),
        ("t.py::b", true, ""),
        ("t.py::c", true, ""),
        ("t.py::d", true, ""),
    ]);
    let base = validate::baseline(&green, &green).unwrap();
    let red = run(&[
        ("t.py::a", false, "StopIteration"),
        ("t.py::b", true, ""),
        ("t.py::c", true, ""),
        ("t.py::d", true, ""),
    ]);
    let t = build_task(
        &spec(),
        &"ab".repeat(20),
        &ch,
        &base,
        &red,
        &red,
        &BTreeSet::new(),
        &crate::testcmd::TestCommand::python_pytest(),
    )
    .unwrap();
    assert_eq!(t.fail_to_pass, vec!["t.py::a"]);
    assert_eq!(t.pass_to_pass.len(), 3);
    assert_eq!(t.origin(), Origin::Real);
    assert!(
        t.instance_id.starts_with("pytoolz__toolz-real-"),
        "{}",
        t.instance_id
    );
    assert_eq!(t.instance_id, instance_id("pytoolz/toolz", &t.bug_patch));
    assert!(
        t.problem_statement.contains("StopIteration"),
        "{}",
        t.problem_statement
    );
    let p = t.provenance.as_ref().unwrap();
    assert_eq!((p.changed_lines, p.fixed_release.as_str()), (5, "1.2.0"));
    // a message quoting the fixed code falls back to the test names only
    let quoting = run(&[
        (
            "t.py::a",
            false,
            "expected: except StopIteration: return iter([])",
        ),
        ("t.py::b", true, ""),
        ("t.py::c", true, ""),
        ("t.py::d", true, ""),
    ]);
    let t = build_task(
        &spec(),
        &"ab".repeat(20),
        &ch,
        &base,
        &quoting,
        &quoting,
        &BTreeSet::new(),
        &crate::testcmd::TestCommand::python_pytest(),
    )
    .unwrap();
    assert!(
        !t.problem_statement.contains("iter([])"),
        "{}",
        t.problem_statement
    );
    assert!(t.problem_statement.contains("`t.py::a`"));
    // a failing test id that names the file cannot be hidden: no task
    let named = run(&[
        ("toolz/itertoolz.py::a", false, "x"),
        ("t.py::b", true, ""),
        ("t.py::c", true, ""),
        ("t.py::d", true, ""),
    ]);
    let base2 = validate::baseline(
        &run(&[
            ("toolz/itertoolz.py::a", true, ""),
            ("t.py::b", true, ""),
            ("t.py::c", true, ""),
            ("t.py::d", true, ""),
        ]),
        &run(&[
            ("toolz/itertoolz.py::a", true, ""),
            ("t.py::b", true, ""),
            ("t.py::c", true, ""),
            ("t.py::d", true, ""),
        ]),
    )
    .unwrap();
    assert_eq!(
        build_task(
            &spec(),
            "ab",
            &ch,
            &base2,
            &named,
            &named,
            &BTreeSet::new(),
            &crate::testcmd::TestCommand::python_pytest()
        ),
        Err(Rejection::Leaky)
    );
    // a test that failed only after others ran is in neither list; none left: no task
    let ids: Vec<String> = (0..8).map(|i| format!("t.py::{i}")).collect();
    let suite = |failing: &[usize]| SuiteResult {
        tests: ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let ok = !failing.contains(&i);
                let message = (!ok).then(|| "cache full".to_string());
                (
                    id.clone(),
                    CaseOutcome {
                        ok,
                        skipped: false,
                        message,
                    },
                )
            })
            .collect(),
    };
    let wide = validate::baseline(&suite(&[]), &suite(&[])).unwrap();
    let two = suite(&[0, 1]);
    let after_others = BTreeSet::from(["t.py::1".to_string()]);
    let t = build_task(
        &spec(),
        "ab",
        &ch,
        &wide,
        &two,
        &two,
        &after_others,
        &crate::testcmd::TestCommand::python_pytest(),
    )
    .unwrap();
    assert_eq!(t.fail_to_pass, vec!["t.py::0"]);
    assert_eq!(t.pass_to_pass.len(), 6, "{:?}", t.pass_to_pass);
    assert!(!t.pass_to_pass.contains(&"t.py::1".to_string()));
    let all = BTreeSet::from(["t.py::0".to_string(), "t.py::1".to_string()]);
    assert_eq!(
        build_task(
            &spec(),
            "ab",
            &ch,
            &wide,
            &two,
            &two,
            &all,
            &crate::testcmd::TestCommand::python_pytest()
        ),
        Err(Rejection::Flaky)
    );
    // no failing test: the bug is not witnessed by the release's tests
    assert_eq!(
        build_task(
            &spec(),
            "ab",
            &ch,
            &base,
            &green,
            &green,
            &BTreeSet::new(),
            &crate::testcmd::TestCommand::python_pytest()
        ),
        Err(Rejection::Survived)
    );
}

#[test]
fn spec_files_are_checked_whole() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("bugs")).unwrap();
    std::fs::write(d.path().join("bugs/interpose-empty.diff"), "x").unwrap();
    let good = serde_yaml::to_string(&vec![spec()]).unwrap();
    std::fs::write(d.path().join("bugs.yaml"), &good).unwrap();
    let specs = read_spec(&d.path().join("bugs.yaml")).unwrap();
    assert_eq!(specs, vec![spec()]);
    assert_eq!(
        specs[0].tree(Path::new("/t")),
        PathBuf::from("/t/toolz-1.2.0")
    );
    let mut twice = spec();
    twice.bug = "bugs/missing.diff".into();
    let mut bad_name = spec();
    bad_name.name = "has space".into();
    bad_name.repo = "norepo".into();
    std::fs::write(
        d.path().join("bad.yaml"),
        serde_yaml::to_string(&vec![spec(), twice, bad_name]).unwrap(),
    )
    .unwrap();
    let err = read_spec(&d.path().join("bad.yaml"))
        .unwrap_err()
        .to_string();
    for want in [
        "listed twice",
        "missing.diff is missing",
        "letters, digits",
        "not owner/name",
    ] {
        assert!(err.contains(want), "{want}: {err}");
    }
    std::fs::write(d.path().join("odd.yaml"), "- name: x\n  colour: red\n").unwrap();
    let err = format!("{:#}", read_spec(&d.path().join("odd.yaml")).unwrap_err());
    assert!(err.contains("is not a list of bugs"), "{err}");
}
