//! The field corpus's CI subset (issue #41): libraries nobody tuned patchloop for, each with
//! the test command its own CI writes (a different form each: tox, nox, make, an env runner,
//! a plain pytest with options), repaired by `patchloop fix` with the task's gold patch played
//! by a scripted model (the oracle). Each must end verified: the command parsed where it
//! enters, the baseline reproducing the targets, the patch applied through the tools and
//! verified in fresh containers. Preparing needs PyPI (the libraries' test dependencies).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use patchloop::bench::task::{Task, read_tasks};
use patchloop::eval::plan::{find_snapshot, materialize};

fn field() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/field")
}

/// One task per library, chosen for their command forms (see bench/field/README.md).
const SUBSET: &[(&str, &str)] = &[
    (
        "glyph__automat-flipcmp-d444e0cca7",
        "tox -e with a quoted env",
    ),
    (
        "pypa__pyproject-hooks-swapargs-147e097f68",
        "pipx run nox -s",
    ),
    (
        "python__typing_extensions-swapargs-41319f547c",
        "cd src && coverage run -m unittest",
    ),
    ("toumorokoshi__deepmerge-flipcmp-b0b45e26fc", "make test"),
    (
        "msiemens__tinydb-offbyone-2b8a99e0fa",
        "poetry run py.test with options",
    ),
    ("andialbrecht__sqlparse-negate-8db17cc1a5", "uv run --group"),
    // Its bug reads sys.argv: every run must give the tests the same sys.argv.
    (
        "pypa__dependency-groups-negate-1c63769349",
        "tox run -m label",
    ),
    // Its recipes are in a lowercase `makefile` (CI's `make coverage`).
    (
        "stefankoegl__python-json-pointer-noguard-23bf406588",
        "make target in a lowercase makefile",
    ),
    // The fix reads two items of `iter([1, 1])` where the buggy original answered after one:
    // no `reads_whole_input` (it stops early on a longer input).
    (
        "more-itertools__more-itertools-flipcmp-35750cee2d",
        "make target, the differential on a gold fix that reads more",
    ),
    // The arrival round of 2026-12-06: a test script that runs unittest itself, and a given
    // `uv run --with '.[dev]'` whose extra brings the pytest plugin its options need.
    (
        "micheles__decorator-flipcmp-4fc3e9f0e5",
        "python tests/test.py (a unittest script)",
    ),
    (
        "niksite__url-normalize-flipcmp-f05214e833",
        "uv run --with '.[dev]' pytest",
    ),
    // The arrival round of the night: testtools' own unittest runner given a suite function's
    // dotted name, whose job installs the Twisted extra its tests import.
    (
        "testing-cabal__testtools-flipcmp-9220c2fee5",
        "python -W once -m testtools.run tests.test_suite",
    ),
];

fn task(tasks: &[Task], id: &str) -> Task {
    tasks
        .iter()
        .find(|t| t.instance_id == id)
        .unwrap_or_else(|| panic!("{id} is not in bench/field/tasks.jsonl"))
        .clone()
}

#[test]
fn field_subset_gold_patches_are_verified_through_fix() {
    assert!(
        SUBSET.len() >= 5,
        "the subset holds at least five libraries"
    );
    let tasks = read_tasks(&field().join("tasks.jsonl")).unwrap();
    let forms: std::collections::BTreeSet<&str> = SUBSET.iter().map(|(_, f)| *f).collect();
    assert!(forms.len() >= 5, "five different command forms: {forms:?}");
    let started = Instant::now();
    let mut failures = Vec::new();
    for (id, form) in SUBSET {
        let t = task(&tasks, id);
        let dir = tempfile::tempdir().unwrap();
        // The directory's name is the sandbox image's: one per library.
        let repo = dir
            .path()
            .join(format!("field-{}", t.repo.replace('/', "-")));
        let snapshot = find_snapshot(&field().join("sources"), &t).unwrap();
        materialize(&snapshot, &t, &repo).unwrap();
        let script = dir.path().join("oracle.json");
        let oracle = patchloop::eval::oracle::script(&t.patch, &repo).unwrap();
        std::fs::write(&script, serde_json::to_string(&oracle).unwrap()).unwrap();
        let out_dir = dir.path().join("out");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_patchloop"));
        cmd.args(["fix", "--repo"])
            .arg(&repo)
            .arg("--model")
            .arg(format!("scripted:{}", script.display()))
            .args(["--strategy", "loop", "--reruns", "1", "--ci-python", "off"])
            .args(["--test-cmd", t.test_command.as_str()])
            .arg("--out")
            .arg(&out_dir);
        for f in &t.fail_to_pass {
            cmd.args(["--fail-to-pass", f]);
        }
        let one = Instant::now();
        let out = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stdout.lines().last().unwrap_or("");
        eprintln!(
            "{id} ({form}, `{}`): {last} in {:.0}s",
            t.test_command.as_str(),
            one.elapsed().as_secs_f64()
        );
        if out.status.code() != Some(0) || !last.starts_with("fixed: verdict verified") {
            failures.push(format!("{id} ({form}):\n{stdout}{stderr}"));
            continue;
        }
        // The receipt ran the command as CI writes it, not a stand-in.
        let receipt = std::fs::read_to_string(out_dir.join("receipt.json")).unwrap();
        assert!(receipt.contains("\"verified\""), "{id}: {receipt}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    eprintln!(
        "field subset: {} libraries verified in {:.0}s",
        SUBSET.len(),
        started.elapsed().as_secs_f64()
    );
}
