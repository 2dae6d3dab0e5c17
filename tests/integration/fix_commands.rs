//! `patchloop fix` with the test command written the ways CI workflows write it (issue #41):
//! environment assignments, `env`, `cd DIR &&`, a package's own unittest runner, a `makefile`
//! target; and a command that cannot run, which is a
//! configuration error (exit 2 with its own error lines) before any model call.

use std::process::Command;
use std::time::Instant;

fn patchloop() -> Command {
    Command::new(env!("CARGO_BIN_EXE_patchloop"))
}

fn demo_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    patchloop::agent::demo::write_repo(dir.path()).unwrap();
    dir
}

/// What `patchloop fix` on a checkout printed, and where it wrote.
struct Fixed {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    out: tempfile::TempDir,
}

impl Fixed {
    /// Its last line of output: the verdict.
    fn last(&self) -> &str {
        self.stdout.lines().last().unwrap_or("")
    }
}

/// `patchloop fix --repo REPO ARGS… --out <a fresh directory>`.
fn fix(repo: &std::path::Path, args: &[&str]) -> Fixed {
    let out = tempfile::tempdir().unwrap();
    let o = patchloop()
        .args(["fix", "--repo"])
        .arg(repo)
        .args(args)
        .arg("--out")
        .arg(out.path())
        .output()
        .unwrap();
    Fixed {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        out,
    }
}

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/examples/scripted/demo-fix.yaml"
);

#[test]
fn the_demo_is_verified_with_each_command_form() {
    let repo = demo_repo();
    // The project's own unittest runner (lark's `python -m tests`): pytest runs the modules its
    // `__main__` imports.
    std::fs::write(
        repo.path().join("tests/__main__.py"),
        "import unittest\n\nfrom .test_median import *\n\nif __name__ == '__main__':\n    unittest.main()\n",
    )
    .unwrap();
    // A runner module of the package (pyfakefs' `python -m pyfakefs.tests.all_tests`): pytest
    // runs the modules it imports from its package.
    std::fs::write(
        repo.path().join("tests/all_tests.py"),
        "import sys\nimport unittest\n\nfrom tests import (\n    test_median,\n)\n\nif __name__ == '__main__':\n    suite = unittest.defaultTestLoader.loadTestsFromModule(test_median)\n    sys.exit(not unittest.TextTestRunner().run(suite).wasSuccessful())\n",
    )
    .unwrap();
    // A lowercase `makefile` whose first target is not the tests (jsonpointer's): make reads
    // it, and `make check` runs unittest discovery, which pytest runs.
    std::fs::write(
        repo.path().join("makefile"),
        "help:\n\t@echo 'make check: run the tests'\n\ncheck:\n\tPYTHONPATH=. python3 -m unittest discover -s tests\n",
    )
    .unwrap();
    // A test script that holds its own cases and runs them with `unittest.main()` when run as
    // a script (decorator's `python tests/test.py -v`): pytest runs the cases it holds.
    std::fs::write(
        repo.path().join("tests/script_median.py"),
        "import unittest\n\nfrom stats import median\n\n\nclass Median(unittest.TestCase):\n    def test_even(self):\n        self.assertEqual(median([4, 1, 3, 2]), 2.5)\n\n    def test_odd(self):\n        self.assertEqual(median([3, 1, 2]), 2)\n\n\nif __name__ == '__main__':\n    unittest.main()\n",
    )
    .unwrap();
    // A top-level one that builds its suite for a `TextTestRunner`, run under coverage
    // (jsonpatch's `coverage run --source=jsonpointer tests.py`; the image has no coverage).
    std::fs::write(
        repo.path().join("suite.py"),
        "import sys\nimport unittest\n\nfrom stats import median\n\n\nclass MedianSuite(unittest.TestCase):\n    def test_even(self):\n        self.assertEqual(median([1, 2]), 1.5)\n\n\nif __name__ == '__main__':\n    suite = unittest.defaultTestLoader.loadTestsFromTestCase(MedianSuite)\n    result = unittest.TextTestRunner(verbosity=1).run(suite)\n    sys.exit(not result.wasSuccessful())\n",
    )
    .unwrap();
    // A justfile recipe with a parameter, that runs its venv's own pytest after the recipes it
    // depends on (txaio's `just test cpy314`); the image has no `just`, nor that venv.
    std::fs::write(
        repo.path().join("justfile"),
        "VENV_DIR := \"./.venvs\"\n\ndefault:\n    @just --list\n\ninstall venv=\"\":\n    \"{{ VENV_DIR }}/{{ venv }}/bin/python\" -m pip install -e .\n\ntest venv=\"\": (install venv)\n    #!/usr/bin/env bash\n    set -e\n    VENV_PATH=\"{{ VENV_DIR }}/{{ venv }}\"\n    PYTHONPATH=. \"${VENV_PATH}/bin/pytest\" tests\n",
    )
    .unwrap();
    // A poethepoet task that refers to another with its own env (confuse's `poe
    // test-with-coverage`), and a pixi task of an environment's feature (Pint's `pixi run
    // --environment test-py311 test`); the image has neither tool.
    std::fs::write(
        repo.path().join("poe_tasks.toml"),
        "[tasks.test]\ncmd = \"pytest $OPTS\"\nenv = { PYTHONPATH = \".\", OPTS = { default = \"-x\" } }\n\n[tasks.test-with-coverage]\nref = \"test\"\nenv.OPTS = \"\"\"\n-q\ntests\n\"\"\"\n",
    )
    .unwrap();
    std::fs::write(
        repo.path().join("pixi.toml"),
        "[environments]\ntest-py311 = [\"test\"]\n\n[feature.test.tasks]\ntest = { cmd = \"python -m pytest tests\", env = { PYTHONPATH = \".\" } }\n\n[tasks]\ntest = \"ruff check\"\n",
    )
    .unwrap();
    // A module whose `__main__` block runs its own doctests (dnslib's CI: `python -m
    // dnslib.__init__`, `doctest.testmod(optionflags=doctest.ELLIPSIS)`): no per-test report.
    std::fs::write(
        repo.path().join("checks.py"),
        "\"\"\"\n>>> from stats.median import median\n>>> median([4, 1, 3, 2])\n2.5\n>>> [median([1])] * 9  # doctest: +NORMALIZE_WHITESPACE\n[1, 1, 1, ...]\n\"\"\"\n\nif __name__ == '__main__':\n    import doctest, sys\n    sys.exit(doctest.testmod(optionflags=doctest.ELLIPSIS).failed != 0)\n",
    )
    .unwrap();
    for form in [
        "PYTHONPATH=. python -m checks",
        // Third-party unittest runners given a package (green's CI runs `green -tvvvv green`,
        // constantly's `coverage run -m twisted.trial constantly`); the image has neither.
        "PYTHONPATH=. green -tvvvv tests",
        "PYTHONPATH=. coverage run -m twisted.trial tests",
        "poe test-with-coverage",
        "pixi run --environment test-py311 test",
        "just test cpy311",
        "PYTHONPATH=. python tests/script_median.py -v",
        "PYTHONPATH=. coverage run --source=stats suite.py",
        "make check",
        "PYTHONPATH=. python3 -m pytest -q tests",
        "CI=1 PYTHONPATH=. python -m pytest tests",
        "env PYTHONPATH=. python3 -m pytest tests",
        "cd . && python3 -m pytest -q tests",
        "PYTHONPATH=. python3 -m tests",
        "PYTHONPATH=. python3 -bb -m tests.all_tests",
    ] {
        let model = format!("scripted:{SCRIPT}");
        let f = fix(
            repo.path(),
            &["--model", &model, "--test-cmd", form, "--reruns", "1"],
        );
        let (stdout, stderr) = (&f.stdout, &f.stderr);
        assert_eq!(f.code, Some(0), "{form}\n{stdout}{stderr}");
        let last = f.last();
        assert!(
            last.starts_with("fixed: verdict verified"),
            "{form}: {last}\n{stdout}{stderr}"
        );
        // The command as written is verified too without reading `makefile` (make runs the
        // recipe): that the recipe was read is what this form checks.
        if form == "just test cpy311" {
            assert!(
                stderr.contains("which runs `PYTHONPATH=. pytest tests` (justfile recipe `test`"),
                "{stderr}"
            );
        }
        if form == "poe test-with-coverage" {
            assert!(
                stderr.contains("which runs `OPTS='-q tests' PYTHONPATH=. pytest -q tests` (poe_tasks.toml [tasks] test-with-coverage"),
                "{stderr}"
            );
        }
        if form.starts_with("pixi") {
            assert!(
                stderr.contains("(pixi.toml [feature.test.tasks] test"),
                "{stderr}"
            );
        }
        if form == "make check" {
            assert!(
                stderr.contains("which runs `python -m pytest -o 'python_files=test*.py' tests` (makefile target `check`"),
                "{stderr}"
            );
        }
    }
}

/// A URL nothing listens on: a model call there fails with "cannot reach", so a test can
/// tell that the repair stopped before asking the model.
fn unreachable_ollama() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}")
}

/// A model call would fail with "cannot reach" (nothing listens on the URL): the broken
/// command is reported first.
#[test]
fn a_command_that_cannot_run_is_exit_2_with_its_error_before_any_model_call() {
    let repo = demo_repo();
    let ollama = unreachable_ollama();
    for (form, shows) in [
        (
            "PYTHONPATH=. python3 -m pytset -q tests",
            "No module named pytset",
        ),
        ("runtests-that-do-not-exist -q", "not found"),
        (
            "python3 -m pytest --no-such-option tests",
            "unrecognized arguments",
        ),
    ] {
        let out_dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let out = patchloop()
            .args(["fix", "--repo"])
            .arg(repo.path())
            .args(["--model", "ollama:qwen2.5-coder:1.5b"])
            .args(["--ollama-url", &ollama])
            .args(["--test-cmd", form])
            .arg("--out")
            .arg(out_dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!(
            "{form}: exit {:?} in {:.1}s",
            out.status.code(),
            started.elapsed().as_secs_f64()
        );
        assert_eq!(out.status.code(), Some(2), "{form}\n{stderr}");
        assert!(
            stderr.contains("the test command cannot run"),
            "{form}\n{stderr}"
        );
        assert!(stderr.contains(shows), "{form}: want {shows:?}\n{stderr}");
        assert!(stderr.contains(form), "{form}\n{stderr}");
        assert!(
            !stderr.contains("cannot reach"),
            "a model was asked: {stderr}"
        );
    }
}

/// A suite slower than `test_timeout_seconds` in the sandbox (Pympler's took 280 s against
/// the episode's fixed 300 s, and the episode went on with no failing test to repair): the
/// repair stops before any model call, exit 2, naming the limit and the key that raises it.
#[test]
fn a_suite_that_does_not_finish_within_the_limit_is_exit_2_naming_the_key() {
    let repo = demo_repo();
    std::fs::write(
        repo.path().join("tests/test_slow.py"),
        "import time\n\n\ndef test_slow():\n    time.sleep(40)\n",
    )
    .unwrap();
    let config = repo.path().join("limits.yml");
    std::fs::write(&config, "test_timeout_seconds: 12\n").unwrap();
    let ollama = unreachable_ollama();
    let out_dir = tempfile::tempdir().unwrap();
    let out = patchloop()
        .args(["fix", "--repo"])
        .arg(repo.path())
        .args(["--model", "ollama:qwen2.5-coder:1.5b"])
        .args(["--ollama-url", &ollama])
        .arg("--config")
        .arg(&config)
        .arg("--out")
        .arg(out_dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the tests did not finish within 12 s"),
        "{stderr}"
    );
    assert!(stderr.contains("test_timeout_seconds"), "{stderr}");
    assert!(
        !stderr.contains("cannot reach"),
        "a model was asked: {stderr}"
    );
}

/// A doctest the suite runs is a test inside the code (dnslib's `python -m dnslib.__init__`):
/// a patch that edits its expected output to the bug's answer, rather than fixing the code,
/// is refused by the patch policy (`doctest`) in real Docker, never `verified`.
#[test]
fn a_patch_that_edits_a_doctest_the_suite_runs_is_refused() {
    let repo = demo_repo();
    std::fs::write(
        repo.path().join("checks.py"),
        "\"\"\"\n>>> from stats.median import median\n>>> median([4, 1, 3, 2])\n2.5\n\"\"\"\n\nif __name__ == '__main__':\n    import doctest, sys\n    sys.exit(doctest.testmod().failed != 0)\n",
    )
    .unwrap();
    let script = repo.path().join("edit-doctest.yaml");
    std::fs::write(
        &script,
        "turns:\n  - content: \"The doctest expects 2.5; make it expect what the code says.\"\n    tool_calls:\n      - name: str_replace\n        arguments:\n          path: checks.py\n          old_str: \">>> median([4, 1, 3, 2])\\n2.5\\n\"\n          new_str: \">>> median([4, 1, 3, 2])\\n3\\n\"\n  - content: \"Done.\"\n    tool_calls:\n      - name: submit\n        arguments: {}\n",
    )
    .unwrap();
    let model = format!("scripted:{}", script.display());
    let f = fix(
        repo.path(),
        &[
            "--model",
            &model,
            "--strategy",
            "loop",
            "--test-cmd",
            "PYTHONPATH=. python -m checks",
            "--reruns",
            "1",
        ],
    );
    let (stdout, stderr, last) = (&f.stdout, &f.stderr, f.last());
    eprintln!("{last}");
    assert!(
        last.starts_with("not fixed: verdict policy") && last.contains("`doctest`"),
        "{last}\n{stdout}{stderr}"
    );
    assert_ne!(f.code, Some(0), "{stdout}{stderr}");
}

/// A Django project's own test runner (django-js-asset's tox line, `python -Wd
/// {envbindir}/coverage run tests/manage.py test -v2 --keepdb {posargs:testapp}`): Django's
/// runner prints no per-test report and pytest alone has no settings or test database, so
/// pytest-django runs the cases with the settings `manage.py` defaults to. The case writes a
/// row (the test database is really there), and the second runner leaves Django's cases to
/// pytest-django rather than failing them without settings.
#[test]
fn a_django_projects_manage_py_test_is_run_by_pytest_django_and_verified() {
    let repo = demo_repo();
    let files = [
        (
            "djtests/manage.py",
            "import os\nimport sys\n\nif __name__ == \"__main__\":\n    os.environ.setdefault(\"DJANGO_SETTINGS_MODULE\", \"djproj.settings\")\n    from django.core.management import execute_from_command_line\n\n    execute_from_command_line(sys.argv)\n",
        ),
        ("djtests/djproj/__init__.py", ""),
        (
            "djtests/djproj/settings.py",
            "SECRET_KEY = \"test\"\nDATABASES = {\"default\": {\"ENGINE\": \"django.db.backends.sqlite3\", \"NAME\": \":memory:\"}}\nINSTALLED_APPS = [\"django.contrib.contenttypes\", \"djapp\"]\nUSE_TZ = True\n",
        ),
        ("djtests/djapp/__init__.py", ""),
        (
            "djtests/djapp/models.py",
            "from django.db import models\n\n\nclass Sample(models.Model):\n    value = models.IntegerField()\n",
        ),
        (
            "djtests/djapp/test_samples.py",
            "from django.test import TestCase\n\nfrom djapp.models import Sample\nfrom stats.median import median\n\n\nclass SampleMedian(TestCase):\n    def test_median_of_stored_values(self):\n        for v in (4, 1, 3, 2):\n            Sample.objects.create(value=v)\n        values = list(Sample.objects.values_list(\"value\", flat=True))\n        self.assertEqual(median(values), 2.5)\n",
        ),
        (
            "tox.ini",
            "[tox]\nenvlist = py311\n\n[testenv]\nsetenv =\n    PYTHONPATH = {toxinidir}\ndeps =\n    Django>=4.2,<5.0\n    coverage\ncommands =\n    python -Wd {envbindir}/coverage run djtests/manage.py test -v2 --keepdb {posargs:djapp}\n    coverage report -m\n",
        ),
    ];
    for (rel, body) in files {
        let p = repo.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    let model = format!("scripted:{SCRIPT}");
    let f = fix(
        repo.path(),
        &[
            "--model",
            &model,
            "--test-cmd",
            "tox -e py311",
            "--reruns",
            "1",
        ],
    );
    let (stdout, stderr, last) = (&f.stdout, &f.stderr, f.last());
    assert!(
        last.starts_with("fixed: verdict verified"),
        "{last}\n{stdout}{stderr}"
    );
    assert!(
        stderr.contains("is Django's test runner: pytest-django runs its test cases with settings `djproj.settings`"),
        "{stderr}"
    );
    let receipt = std::fs::read_to_string(f.out.path().join("receipt.md")).unwrap();
    assert!(
        receipt
            .contains("djtests/djapp/test_samples.py::SampleMedian::test_median_of_stored_values"),
        "{receipt}"
    );
}
