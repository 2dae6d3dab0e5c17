use super::*;

fn files(list: &[(&str, &str)]) -> BTreeMap<String, String> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn is_test(l: &str) -> bool {
    l.contains("pytest") || l.contains("unittest")
}

fn runs(cmd: &str, f: &BTreeMap<String, String>) -> Option<String> {
    let (c, d) = resolve(TestCommand::parse(cmd).unwrap(), f, Some("3.11"), &is_test);
    d.map(|_| {
        let mut at = &c;
        while let Some(r) = &at.runs {
            at = r;
        }
        at.written.clone()
    })
}

#[test]
fn tox_envs_with_posargs_setenv_factors_and_changedir() {
    let tox = "[tox]\nenvlist = py{310,311}, lint\n\n[testenv]\ndeps = pytest\nsetenv =\n    PYTHONPATH = {toxinidir}/src\n    CI = 1\ncommands =\n    py310: pytest --old {posargs}\n    py311: pytest {posargs:tests -x}\n\n[testenv:lint]\ncommands = flake8\n\n[testenv:sub]\nchangedir = {toxinidir}/pkg\ncommands = {envpython} -m pytest {posargs}\n";
    let f = files(&[("tox.ini", tox)]);
    assert_eq!(
        runs("tox -e py311", &f).as_deref(),
        Some("PYTHONPATH=src CI=1 pytest tests -x")
    );
    assert_eq!(
        runs("tox -e py310", &f).as_deref(),
        Some("PYTHONPATH=src CI=1 pytest --old")
    );
    // No -e: the envlist's first CPython env.
    assert_eq!(
        runs("tox", &f).as_deref(),
        Some("PYTHONPATH=src CI=1 pytest --old")
    );
    let (c, _) = resolve(
        TestCommand::parse("tox -e sub").unwrap(),
        &f,
        None,
        &is_test,
    );
    assert_eq!(c.runs.as_ref().unwrap().cwd.as_deref(), Some("pkg"));
    assert!(c.runs_pytest());
    assert_eq!(
        runs(
            "tox -e lint",
            &files(&[("tox.ini", "[testenv:lint]\ncommands = flake8\n")])
        ),
        None
    );
}

#[test]
fn tox_labels_factors_several_envs_and_toml_configs() {
    let tox = "[tox]\nenvlist = lint, py311-tests, py311-docs\nlabels =\n    ci = lint, py311-tests\n\n[testenv:lint]\ncommands = flake8\n\n[testenv:py311-tests]\ncommands = pytest -x tests\n\n[testenv:py311-docs]\ncommands = sphinx-build docs out\n";
    let f = files(&[("tox.ini", tox)]);
    // The label's first env that runs tests (lint runs none).
    assert_eq!(
        runs("tox run -m ci", &f).as_deref(),
        Some("pytest -x tests")
    );
    assert_eq!(
        runs("tox r -f py311-tests", &f).as_deref(),
        Some("pytest -x tests")
    );
    assert_eq!(
        runs("tox -e lint,py311-tests,coverage", &f).as_deref(),
        Some("pytest -x tests")
    );
    assert_eq!(
        runs("python -Im tox -e py311-tests", &f).as_deref(),
        Some("pytest -x tests")
    );
    assert_eq!(
        runs("uvx --with tox-uv tox -e py311-tests", &f).as_deref(),
        Some("pytest -x tests")
    );
    let toml = "env_list = [\"py311\"]\n[env_run_base]\ndeps = [\"pytest\"]\ncommands = [[\"pytest\", {replace = \"posargs\", default = [\"tests\"], extend = true}]]\n[env_run_base.set_env]\nPYTHONPATH = \"src\"\n";
    let f = files(&[("tox.toml", toml)]);
    assert_eq!(
        runs("tox -e py311", &f).as_deref(),
        Some("PYTHONPATH=src pytest tests")
    );
    let py = format!("[tool.tox]\n{toml}").replace("[env_run_base", "[tool.tox.env_run_base");
    let f = files(&[("pyproject.toml", &py)]);
    assert_eq!(
        runs("tox", &f).as_deref(),
        Some("PYTHONPATH=src pytest tests")
    );
}

#[test]
fn tox_env_paths_and_continued_lines() {
    let tox = "[testenv]\ncommands =\n    pytest --basetemp={envtmpdir} \\\n      --cov termcolor {posargs:tests}\n    {envbindir}/coverage report\n";
    let f = files(&[("tox.ini", tox)]);
    assert_eq!(
        runs("tox -e py", &f).as_deref(),
        Some("pytest --cov termcolor tests")
    );
    let tox = "[testenv]\ncommands = pytest --basetemp {envtmpdir} -x\n";
    assert_eq!(
        runs("tox", &files(&[("tox.ini", tox)])).as_deref(),
        Some("pytest -x")
    );
}

#[test]
fn tox_running_from_its_work_dir_against_the_installed_package_runs_from_the_checkout() {
    // glom 24.11's tox.ini: the suite runs in `.tox` against `{envsitepackagesdir}/glom`.
    let tox = "[testenv]\nchangedir = .tox\ndeps = -rrequirements.txt\ncommands = coverage run --parallel --rcfile {toxinidir}/.tox-coveragerc -m pytest -vv --doctest-modules {envsitepackagesdir}/glom {posargs}\n";
    let f = files(&[("tox.ini", tox)]);
    let (c, d) = resolve(
        TestCommand::parse("tox -e py311,coverage-report").unwrap(),
        &f,
        None,
        &is_test,
    );
    assert!(d.is_some() && c.runs_pytest(), "{c:?}");
    assert_eq!(c.cwd, None, "{c:?}");
    assert!(!c.describe().contains("envsitepackagesdir"), "{c:?}");
}

#[test]
fn tox_env_substitutions_take_their_default() {
    // pluggy 1.6's tox.ini: the command is a variable with pytest as its default.
    let tox = "[testenv]\ncommands=\n  {env:_PLUGGY_TOX_CMD:pytest} {posargs}\n  coverage: coverage report -m\nextras=testing\n";
    let f = files(&[("tox.ini", tox)]);
    assert_eq!(runs("tox -e py310", &f).as_deref(), Some("pytest"));
    let tox = "[testenv]\ncommands = pytest {env:PYTEST_ADDOPTS} -x\n";
    assert_eq!(
        runs("tox", &files(&[("tox.ini", tox)])).as_deref(),
        Some("pytest -x")
    );
}

#[test]
fn tox_env_variables_come_from_setenv_and_its_section_references() {
    // hyperlink 21.0's tox.ini: `{posargs:src/{env:PY_MODULE}}`, PY_MODULE set by a reference.
    let tox = "[default]\nsetenv =\n    PY_MODULE=hyperlink\n\n    PYTHONPYCACHEPREFIX={envtmpdir}/pycache\n\n[testenv]\nsetenv =\n    {[default]setenv}\n\n    COVERAGE_FILE={toxworkdir}/coverage.{envname}\ncommands =\n    pytest --cov={env:PY_MODULE} --cov-report=term-missing:skip-covered --doctest-modules {posargs:src/{env:PY_MODULE}}\n";
    let f = files(&[("tox.ini", tox)]);
    assert_eq!(
        runs("tox -e \"test-py39-coverage_xml\"", &f).as_deref(),
        Some(
            "pytest --cov=hyperlink --cov-report=term-missing:skip-covered --doctest-modules src/hyperlink"
        )
    );
}

#[test]
fn a_nox_session_installing_a_package_variable_tests_the_built_package() {
    // environ-config 26.1's noxfile: `session.install(pkg, "--group", "tests")`, run by
    // `nox --tags tests -- --installpkg dist/*.whl`.
    let nox = "import nox\n\n@nox.session(python=ALL, tags=[\"tests\"])\ndef tests(session: nox.Session) -> None:\n    pkg, posargs = _get_pkg(session.posargs)\n    session.install(pkg, \"--group\", \"tests\")\n\n    session.run(\"pytest\", *posargs)\n";
    let f = files(&[("noxfile.py", nox)]);
    let (c, d) = resolve(
        TestCommand::parse("uvx nox --python 3.11 --tags tests -- --installpkg dist/*.whl")
            .unwrap(),
        &f,
        None,
        &is_test,
    );
    let d = d.expect("resolved");
    assert!(c.runs_pytest(), "{c:?}");
    assert_eq!(d.install, Some(Install::Built));
    // A session that installs only tools runs from the checkout.
    let nox = "import nox\n\n@nox.session\ndef tests(session):\n    session.install(\"pytest\")\n    session.run(\"pytest\")\n";
    let (_, d) = resolve(
        TestCommand::parse("nox -s tests").unwrap(),
        &files(&[("noxfile.py", nox)]),
        None,
        &is_test,
    );
    assert_eq!(d.expect("resolved").install, Some(Install::Checkout));
}

#[test]
fn a_delegation_not_found_stands_in_for_python_m_pytest() {
    let f = files(&[("Makefile", "lint:\n\truff .\n")]);
    let (c, d) = resolve(
        TestCommand::parse("CI=1 make test").unwrap(),
        &f,
        None,
        &is_test,
    );
    assert!(d.is_none() && c.unresolved());
    let (s, note) = stand_in(&c).unwrap();
    assert!(s.runs_pytest() && !s.unresolved(), "{s:?}");
    assert!(
        note.contains("`CI=1 make test`") || note.contains("`make test`"),
        "{note}"
    );
    assert_eq!(s.written, "CI=1 make test");
    // A command that runs pytest needs no stand-in.
    assert!(stand_in(&TestCommand::parse("pytest").unwrap()).is_none());
}

#[test]
fn scripts_and_inherited_hatch_scripts() {
    let sh = "#!/bin/bash\nset -ex\npip install .\nexport TERMINAL_WIDTH=3000\nmkdir empty\ncd empty\ncoverage run -m pytest -W error --pyargs pkg || exit 1\ncurl -Os https://uploader.codecov.io/latest/linux/codecov\n";
    let f = files(&[("ci.sh", sh), ("scripts/test.sh", sh)]);
    assert_eq!(
        runs("./ci.sh", &f).as_deref(),
        Some("TERMINAL_WIDTH=3000 coverage run -m pytest -W error --pyargs pkg")
    );
    let (c, _) = resolve(
        TestCommand::parse("uv run bash scripts/test.sh").unwrap(),
        &f,
        None,
        &is_test,
    );
    assert!(c.runs_pytest(), "{c:?}");
    let mut at = &c;
    while let Some(r) = &at.runs {
        at = r;
    }
    assert_eq!(at.cwd.as_deref(), Some("empty"));
    // The script made that directory: the rendering makes it too (a checkout has no `empty/`).
    assert!(at.makes_cwd, "{at:?}");
    let line = c.shell(&crate::testcmd::Run {
        workspace: "/workspace",
        ..Default::default()
    });
    assert!(
        line.starts_with("mkdir -p 'empty' && cd 'empty' && "),
        "{line}"
    );
    // The same on one line; a `cd` into a directory the script did not make is not made.
    let one = "mkdir -p empty; cd empty; pytest --pyargs pkg\n";
    let other = "mkdir build\ncd docs\npytest -q\n";
    let f = files(&[("ci.sh", one), ("t.sh", other)]);
    let (c, _) = resolve(TestCommand::parse("./ci.sh").unwrap(), &f, None, &is_test);
    let r = c.runs.as_deref().unwrap();
    assert_eq!(
        (r.written.as_str(), r.cwd.as_deref(), r.makes_cwd),
        ("pytest --pyargs pkg", Some("empty"), true)
    );
    let (c, _) = resolve(TestCommand::parse("./t.sh").unwrap(), &f, None, &is_test);
    let r = c.runs.as_deref().unwrap();
    assert_eq!(
        (r.cwd.as_deref(), r.makes_cwd),
        (Some("docs"), false),
        "{r:?}"
    );
    let py = "[tool.hatch.envs.default.scripts]\ntest = \"pytest {args:tests}\"\n[tool.hatch.envs.cov]\ndependencies = [\"coverage\"]\n";
    let f = files(&[("pyproject.toml", py)]);
    assert_eq!(
        runs("hatch run cov:test", &f).as_deref(),
        Some("pytest tests")
    );
    let hatch = "[envs.default.scripts]\ncheck = \"pytest -q\"\n";
    let f = files(&[
        ("pyproject.toml", "[project]\nname = \"x\"\n"),
        ("hatch.toml", hatch),
    ]);
    assert_eq!(
        runs("hatch run +py=3.11 check", &f).as_deref(),
        Some("pytest -q")
    );
}

#[test]
fn nox_sessions_make_targets_and_scripts() {
    let nox = "import nox\n\n@nox.session\ndef lint(session):\n    session.run(\"flake8\")\n\n@nox.session(python=[\"3.11\"])\ndef tests(session):\n    session.install(\"-e\", \".\")\n    session.run(\"pytest\", \"-q\", \"tests dir\")\n";
    let f = files(&[("noxfile.py", nox)]);
    assert_eq!(
        runs("nox -s tests-3.11", &f).as_deref(),
        Some("pytest -q 'tests dir'")
    );
    let mk = "PYTHON ?= python3\nPYTEST_ARGS = -x -q\n\ntest: install\n\t@$(PYTHON) -m pytest $(PYTEST_ARGS) $(UNSET) tests\n\nlint:\n\tflake8\n";
    let f = files(&[("Makefile", mk)]);
    assert_eq!(
        runs("make test", &f).as_deref(),
        Some("python3 -m pytest -x -q tests")
    );
    assert_eq!(
        runs("make", &f).as_deref(),
        Some("python3 -m pytest -x -q tests")
    );
    let py = "[tool.hatch.envs.default.scripts]\ntest = \"pytest {args:tests}\"\ncov = [\"test --cov\", \"coverage report\"]\n\n[tool.hatch.envs.types.scripts]\ncheck = \"mypy src\"\n\n[tool.pdm.scripts]\ntest = {cmd = [\"pytest\", \"-x\"]}\n";
    let f = files(&[("pyproject.toml", py)]);
    assert_eq!(runs("hatch run test", &f).as_deref(), Some("pytest tests"));
    assert_eq!(
        runs("hatch run test -k a", &f).as_deref(),
        Some("pytest -k a")
    );
    assert_eq!(
        runs("hatch run default:cov", &f).as_deref(),
        Some("pytest tests --cov")
    );
    assert_eq!(runs("pdm run test", &f).as_deref(), Some("pytest -x"));
    assert_eq!(runs("hatch run nope", &f), None);
}

/// GNU make reads `GNUmakefile`, `makefile` or `Makefile` (jsonpointer's is `makefile`), or
/// the file `-f` names; a bare `make` builds the default goal (the first target, or
/// `.DEFAULT_GOAL`), not a target called `test`.
#[test]
fn make_reads_the_file_make_would_and_its_default_goal() {
    let mk = "help:\n\t@echo targets\n\ncoverage:\n\tcoverage run --source=jsonpointer -m unittest\n\tcoverage report -m\n\ntest:\n\tpython3 -m unittest\n";
    let f = files(&[("makefile", mk)]);
    assert_eq!(
        runs("make coverage", &f).as_deref(),
        Some("python -m pytest -o 'python_files=test*.py'")
    );
    // `help` is the default goal and runs no test: nothing to delegate to.
    assert_eq!(runs("make", &f), None);
    let goal = format!(".DEFAULT_GOAL := test\n{mk}");
    assert_eq!(
        runs("make", &files(&[("makefile", &goal)])).as_deref(),
        Some("python -m pytest -o 'python_files=test*.py'")
    );
    // GNUmakefile is read first; `-f` names the file, and its value is not the target.
    let f = files(&[
        ("GNUmakefile", "test:\n\tpytest -q gnu\n"),
        ("Makefile", "test:\n\tpytest -q plain\n"),
    ]);
    assert_eq!(runs("make test", &f).as_deref(), Some("pytest -q gnu"));
    assert_eq!(
        runs("make -f Makefile test", &f).as_deref(),
        Some("pytest -q plain")
    );
    assert_eq!(
        runs("make --file=./Makefile", &f).as_deref(),
        Some("pytest -q plain")
    );
    assert_eq!(runs("make -f missing.mk test", &f), None);
}

#[test]
fn a_package_main_that_runs_unittest_is_run_by_pytest() {
    let main = "import unittest\nfrom .test_trees import TestTrees\n\nif __name__ == '__main__':\n    unittest.main()\n";
    let cli = "import sys\nfrom .app import run\nrun(sys.argv)\n";
    let f = files(&[
        ("tests/__main__.py", main),
        ("tests/test_trees.py", ""),
        ("tools/__main__.py", cli),
    ]);
    for form in ["python -m tests", "python3 -Im tests"] {
        assert_eq!(
            runs(form, &f).as_deref(),
            Some("python -m pytest -o python_files=test*.py tests/test_trees.py"),
            "{form}"
        );
    }
    // lark's: the modules it imports, an optional one in a `try` left out (it raises
    // ImportError without a git submodule), one under a version test kept; none: the package.
    let lark = "import unittest\nimport sys\nfrom lark import logger\n\nfrom .test_trees import TestTrees\nfrom .test_parser import *  # suites\n\ntry:\n    from .test_nearley.test_nearley import TestNearley\nexcept ImportError:\n    logger.warning('skipping')\n\nfrom tests.test_logger import Testlogger\nif sys.version_info >= (3, 10):\n    from .test_pattern_matching import TestPatternMatching\n\nif __name__ == '__main__':\n    unittest.main()\n";
    let bare = "from unittest import main\nmain(module=None, argv=['x', 'discover'])\n";
    let f = files(&[("tests/__main__.py", lark), ("test/__main__.py", bare)]);
    assert_eq!(
        runs("python3 -W error -m tests", &f).as_deref(),
        Some(
            "python -m pytest -o python_files=test*.py tests/test_trees.py tests/test_parser.py tests/test_logger.py tests/test_pattern_matching.py"
        )
    );
    assert_eq!(
        runs("python -m test", &f).as_deref(),
        Some("python -m pytest -o python_files=test*.py test")
    );
    // A package whose __main__ is not a unittest runner, or none at all: nothing is read into it.
    assert_eq!(runs("python -m tools", &f), None);
    assert_eq!(runs("python -m absent", &f), None);
}

#[test]
fn a_module_that_runs_unittest_is_run_by_pytest() {
    // pyfakefs 6.2: `python -bb -m pyfakefs.tests.all_tests`, a module (not a package) whose
    // suite loads the modules it imports from its own package, in a parenthesised list.
    let all = "import sys\nimport unittest\n\nfrom pyfakefs.tests import (\n    dynamic_patch_test,\n    fake_os_test,  # the os module\n)\nfrom pyfakefs.tests.fake_open_test import FakeFileOpenTest\n\n\nclass AllTests(unittest.TestSuite):\n    def suite(self):\n        loader = unittest.defaultTestLoader\n        self.addTests([loader.loadTestsFromModule(fake_os_test)])\n        return self\n\n\nif __name__ == '__main__':\n    result = unittest.TextTestRunner(verbosity=2).run(AllTests().suite())\n    sys.exit(int(not result.wasSuccessful()))\n";
    let f = files(&[("pyfakefs/tests/all_tests.py", all)]);
    assert_eq!(
        runs("python -bb -m pyfakefs.tests.all_tests", &f).as_deref(),
        Some(
            "python -m pytest -o python_files=test*.py pyfakefs/tests/dynamic_patch_test.py pyfakefs/tests/fake_os_test.py pyfakefs/tests/fake_open_test.py"
        )
    );
    // A top-level runner: its test modules, not the standard library it imports.
    let top = "import os\nimport unittest\nfrom tests.test_api import *\n\nunittest.main()\n";
    let f = files(&[("runtests.py", top)]);
    assert_eq!(
        runs("python -m runtests", &f).as_deref(),
        Some("python -m pytest -o python_files=test*.py tests/test_api.py")
    );
    // A module that runs no unittest is left as it is.
    let f = files(&[("pkg/cli.py", "import sys\nprint(sys.argv)\n")]);
    assert_eq!(runs("python -m pkg.cli", &f), None);
    // simplejson 4.1: `python -m simplejson.tests._cibw_runner .` calls its package's own
    // `main()`, a `TextTestRunner` over the package's `test_*.py` (found by listing): the
    // package. Calling a package `main()` that runs no unittest is left as it is.
    let cibw = "import sys\nimport simplejson.tests\n\nif __name__ == '__main__':\n    simplejson.tests.main(project_dir=sys.argv[1])\n";
    let init = "import unittest\nimport sys\n\ndef main(project_dir=None):\n    runner = unittest.TextTestRunner(verbosity=1)\n    raise SystemExit(not runner.run(all_tests_suite()).wasSuccessful())\n";
    let f = files(&[
        ("simplejson/tests/_cibw_runner.py", cibw),
        ("simplejson/tests/__init__.py", init),
        (
            "other/tests/run.py",
            "import other.tests\nother.tests.main()\n",
        ),
        ("other/tests/__init__.py", "def main():\n    print('hi')\n"),
    ]);
    assert_eq!(
        runs("python -m simplejson.tests._cibw_runner .", &f).as_deref(),
        Some("python -m pytest -o python_files=test*.py simplejson/tests")
    );
    assert_eq!(runs("python -m other.tests.run", &f), None);
}

#[test]
fn a_script_that_runs_unittest_is_run_by_pytest() {
    // decorator 5.3: `python tests/test.py -v`, its own cases under a `__main__` guard.
    let own = "import unittest\nfrom decorator import decorator\ntry:\n    from . import documentation as doc\nexcept ImportError:\n    import documentation as doc\n\nclass DocumentationTestCase(unittest.TestCase):\n    def test(self):\n        pass\n\nif __name__ == '__main__':\n    unittest.main()\n";
    // jsonpatch 1.33 under coverage: its cases, a suite for a `TextTestRunner`.
    let suite = "import unittest\nimport jsonpatch\n\nclass ApplyPatchTestCase(unittest.TestCase):\n    pass\n\nif __name__ == '__main__':\n    runner = unittest.TextTestRunner(verbosity=1)\n    runner.run(unittest.TestSuite())\n";
    // A runner script that only imports test modules (and runs on import, unguarded).
    let runner = "import unittest\nfrom test_api import *\n\nunittest.main()\n";
    let f = files(&[
        ("tests/test.py", own),
        ("tests.py", suite),
        ("checks/suite.py", suite),
        ("tools/run.py", runner),
        ("cli.py", "import sys\nprint(sys.argv)\n"),
    ]);
    assert_eq!(
        runs("python tests/test.py -v", &f).as_deref(),
        Some("python -m pytest -o 'python_files=test*.py' tests/test.py")
    );
    assert_eq!(
        runs("coverage run --source=jsonpointer tests.py", &f).as_deref(),
        Some("python -m pytest -o 'python_files=test*.py' tests.py")
    );
    assert_eq!(
        runs("python3 -bb tools/run.py", &f).as_deref(),
        Some("python -m pytest -o 'python_files=test*.py' tools/test_api.py")
    );
    // A name the pattern does not match joins it: the verifier collects by the pattern too.
    assert_eq!(
        runs("python checks/suite.py", &f).as_deref(),
        Some("python -m pytest -o 'python_files=test*.py suite.py' checks/suite.py")
    );
    // A script that runs no unittest, or one not read: left as it is.
    assert_eq!(runs("python cli.py", &f), None);
    assert_eq!(runs("python absent.py", &f), None);
}

#[test]
fn a_tox_env_with_several_test_lines_runs_the_one_that_takes_posargs() {
    // natsort: doctests of docs first (the sdist trims docs/), the suite last.
    let tox = "[tox]\nenvlist = flake8, py311\n\n[testenv]\ndeps =\n    pytest\ncommands =\n    # Doctests\n    {envpython} -m doctest -o IGNORE_EXCEPTION_DETAIL docs/howitworks.rst\n    pytest README.rst docs/examples.rst\n    pytest --doctest-modules {envsitepackagesdir}/natsort\n    # Full test suite.\n    pytest --tb=short --cov {envsitepackagesdir}/natsort --cov-report term-missing {posargs:}\n";
    let f = files(&[("tox.ini", tox)]);
    assert_eq!(
        runs("tox", &f).as_deref(),
        Some("pytest --tb=short --cov-report term-missing")
    );
    // One test line, or none with posargs: the first, as before.
    let tox = "[testenv]\ncommands =\n    pytest tests\n    pytest docs\n";
    let f = files(&[("tox.ini", tox)]);
    assert_eq!(runs("tox", &f).as_deref(), Some("pytest tests"));
}

#[test]
fn a_tox_command_wrapped_in_its_posargs_default_is_a_test_line() {
    // tblib: `{posargs:pytest --cov … tests README.rst}`: `ci::is_test_cmd` sees `pytest` only
    // once the default is substituted.
    let tox = "[testenv]\nsetenv =\n    PYTHONPATH={toxinidir}/tests\ncommands =\n    {posargs:pytest --cov --cov-report=term-missing -vv tests README.rst}\n";
    let f = files(&[("tox.ini", tox)]);
    let (c, d) = resolve(
        TestCommand::parse("tox -e py311 -v").unwrap(),
        &f,
        None,
        &crate::sandbox::ci::is_test_cmd,
    );
    assert_eq!(
        d.map(|d| d.note).as_deref(),
        Some("tox.ini [testenv:py311]")
    );
    assert_eq!(
        c.runs.map(|r| r.written).as_deref(),
        Some("PYTHONPATH=tests pytest --cov --cov-report=term-missing -vv tests README.rst")
    );
}

/// A factor-conditional `setenv` line (pluggy's `coverage: _PLUGGY_TOX_CMD=coverage run -m
/// pytest`) applies only to an env with that factor; read as an assignment whatever the env,
/// it became a shell word `coverage:` in front of the test command. Both envs' commands are
/// run by `sh` with stub `pytest` and `coverage` that record how they were called.
#[test]
fn a_factor_conditional_setenv_line_applies_to_its_factors_only() {
    use std::os::unix::fs::PermissionsExt;
    let tox = "[testenv]\ncommands=\n  {env:_PLUGGY_TOX_CMD:pytest} {posargs}\n  coverage: coverage report -m\nsetenv=\n  _PYTEST_SETUP_SKIP_PLUGGY_DEP=1\n  coverage: _PLUGGY_TOX_CMD=coverage run -m pytest\n  !coverage: PL_PLAIN=1\n";
    let f = files(&[("tox.ini", tox)]);
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let out = dir.path().join("out");
    // pytest runs through the harness's chooser (`python -c …`, `import pytest`): a stub
    // module; `coverage` a stub command; `python` the host's python3.
    let stub = dir.path().join("stub");
    std::fs::create_dir_all(&stub).unwrap();
    std::fs::write(
        stub.join("pytest.py"),
        "import os\n__version__ = '8.3.0'\ndef main(args):\n    with open(os.environ['PL_OUT'], 'a') as f:\n        f.write('pytest%s skip=%s plain=%s' % (''.join(' ' + a for a in args), os.environ.get('_PYTEST_SETUP_SKIP_PLUGGY_DEP', ''), os.environ.get('PL_PLAIN', '')))\n    return 0\n",
    )
    .unwrap();
    for (name, body) in [
        (
            "coverage",
            "#!/bin/sh\necho \"coverage $* skip=$_PYTEST_SETUP_SKIP_PLUGGY_DEP plain=$PL_PLAIN\" >> \"$PL_OUT\"\n",
        ),
        ("python", "#!/bin/sh\nexec python3 \"$@\"\n"),
    ] {
        let p = bin.join(name);
        std::fs::write(&p, body).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let run = |cmd: &str| {
        let (c, d) = resolve(TestCommand::parse(cmd).unwrap(), &f, Some("3.11"), &is_test);
        assert!(d.is_some(), "{cmd} resolves");
        let ws = dir.path().to_string_lossy().into_owned();
        let line = c.shell(&crate::testcmd::Run {
            workspace: &ws,
            ..Default::default()
        });
        let _ = std::fs::remove_file(&out);
        let st = std::process::Command::new("sh")
            .arg("-c")
            .arg(&line)
            .current_dir(dir.path())
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    bin.display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .env("PL_OUT", &out)
            .env("PYTHONPATH", &stub)
            .status()
            .unwrap();
        assert!(st.success(), "{cmd}: sh -c {line:?} exited {st}");
        std::fs::read_to_string(&out).unwrap().trim().to_string()
    };
    assert_eq!(run("tox -e py310"), "pytest skip=1 plain=1");
    // `coverage run -m pytest` is run as pytest (the harness's), with the env's assignments.
    assert_eq!(run("tox -e py310-coverage"), "pytest skip=1 plain=");
}

/// just reads `justfile` (or `Justfile`, `.justfile`, `-f FILE`): the recipe named (else the
/// file's first), its parameters bound to the arguments or their defaults, `{{ … }}` filled
/// from them and the file's assignments, a venv's own pytest run as the image's; the recipes it
/// depends on run first (txaio's `test venv="": (install-tools venv) (install venv)`), and
/// their install lines are kept as what runs before the tests.
#[test]
fn just_runs_a_recipes_test_line_with_its_arguments() {
    let jf = r#"set positional-arguments := true
VENV_DIR := "./.venvs"
PYTEST_ARGS := '-x -q'

# the default recipe
default:
    @just --list

[private]
install venv="": (create venv)
    #!/usr/bin/env bash
    set -e
    "{{ VENV_DIR }}/{{ venv }}/bin/python" -m pip install .[all]

create venv="":
    uv venv "{{ VENV_DIR }}/{{ venv }}"

test venv="": (install venv)
    #!/usr/bin/env bash
    set -e
    VENV_PATH="{{ VENV_DIR }}/{{ venv }}"
    echo "==> Running test suite for {{ venv }}..."
    "${VENV_PATH}/bin/pytest" {{ PYTEST_ARGS }} tests/{{ venv }}

ci: lint test
lint:
    ruff check .
"#;
    let f = files(&[("justfile", jf)]);
    assert_eq!(
        runs("just test cpy314", &f).as_deref(),
        Some("pytest -x -q tests/cpy314")
    );
    // Defaults when no argument is given; a dependency's test line when the recipe has none.
    assert_eq!(runs("just ci", &f).as_deref(), Some("pytest -x -q tests/"));
    // A bare `just` runs the first recipe, which runs no test.
    assert_eq!(runs("just", &f), None);
    let (_, d) = resolve(
        TestCommand::parse("just test cpy314").unwrap(),
        &f,
        None,
        &is_test,
    );
    let d = d.unwrap();
    assert_eq!(d.note, "justfile recipe `test`");
    assert_eq!(d.before, vec!["python -m pip install .[all]"]);
    // `-f` names the file; `NAME=VALUE` before the recipe sets a variable.
    let f = files(&[
        (
            "ci/tasks.just",
            "ARGS := \"-q\"\ntest:\n    PYTHONPATH=src .venv/bin/python -m pytest {{ARGS}}\n",
        ),
        ("Justfile", "test:\n    pytest wrong\n"),
    ]);
    assert_eq!(
        runs("just -f ci/tasks.just ARGS=-x test", &f).as_deref(),
        Some("PYTHONPATH=src python -m pytest -x")
    );
    assert_eq!(runs("just test", &f).as_deref(), Some("pytest wrong"));
}

/// confuse's CI: `poe test-with-coverage`, a `ref` to `test` that sets `OPTS` over the
/// `{default = …}` the referenced task gives it (a multi-line string), `cmd = "pytest $OPTS"`;
/// poe exports the env to the command, so the assignments come along.
/// schwifty's `uv run poe test` reaches the same reading through `uv run`.
#[test]
fn poe_runs_a_tasks_command_with_its_env_put_in() {
    let py = r#"[project]
name = "confuse"

[tool.poe.tasks.test]
cmd = "pytest $OPTS"
env.OPTS.default = "-p no:cov"

[tool.poe.tasks.test-with-coverage]
ref = "test"
env.OPTS = """
--cov=confuse
--cov-report=xml:.reports/coverage.xml
"""

[tool.poe.tasks]
lint = "ruff check"
check = ["lint", "test"]
nested = { sequence = ["lint", { ref = "test -x" }] }
"#;
    let f = files(&[("pyproject.toml", py)]);
    assert_eq!(
        runs("poe test-with-coverage", &f).as_deref(),
        Some(
            "OPTS='--cov=confuse --cov-report=xml:.reports/coverage.xml' pytest --cov=confuse --cov-report=xml:.reports/coverage.xml"
        )
    );
    assert_eq!(
        runs("poe -q test tests/unit", &f).as_deref(),
        Some("OPTS='-p no:cov' pytest -p no:cov tests/unit")
    );
    // A sequence runs the tests in its test task.
    let plain = "OPTS='-p no:cov' pytest -p no:cov";
    assert_eq!(runs("poe check", &f).as_deref(), Some(plain));
    assert_eq!(
        runs("poe nested", &f).as_deref(),
        Some(format!("{plain} -x").as_str())
    );
    assert_eq!(runs("uv run poe test", &f).as_deref(), Some(plain));
    // An unknown task, or no poe config: not resolved (run as written).
    assert_eq!(runs("poe nope", &f), None);
    assert_eq!(runs("poe test", &files(&[])), None);
    // poe's own task file.
    let own = files(&[(
        "poe_tasks.toml",
        "[tasks]\ntest = \"python -m pytest -q\"\n",
    )]);
    assert_eq!(
        runs("poe test", &own).as_deref(),
        Some("python -m pytest -q")
    );
}

/// Pint's CI: `pixi run --environment test-py311 test`, the task in a feature of that
/// environment (`[tool.pixi.feature.test.tasks]`); pixi.toml spells the same without
/// `tool.pixi`, and a task with only `depends-on` runs its test task.
#[test]
fn pixi_runs_the_task_of_the_environments_features() {
    let py = r#"[project]
name = "pint"

[tool.pixi.environments]
test-py311 = ["test", "py311"]
lint = { features = ["lint"] }

[tool.pixi.feature.test.tasks]
test = "pytest --benchmark-skip"

[tool.pixi.feature.lint.tasks]
test = "ruff check"

[tool.pixi.tasks]
test = "pytest"
"#;
    let f = files(&[("pyproject.toml", py)]);
    assert_eq!(
        runs("pixi run --environment test-py311 test", &f).as_deref(),
        Some("pytest --benchmark-skip")
    );
    assert_eq!(
        runs("pixi run -e test-py311 --frozen test -x", &f).as_deref(),
        Some("pytest --benchmark-skip -x")
    );
    assert_eq!(runs("pixi run test", &f).as_deref(), Some("pytest"));
    let toml = "[tasks]\nunit = { cmd = [\"python\", \"-m\", \"pytest\", \"tests\"] }\nci = { depends-on = [\"fmt\", \"unit\"] }\nfmt = \"ruff format\"\n";
    let f = files(&[("pixi.toml", toml)]);
    assert_eq!(
        runs("pixi run ci", &f).as_deref(),
        Some("python -m pytest tests")
    );
    assert_eq!(runs("pixi install", &f), None);
}

/// Pympler's CI: `python -Wall setup.py test`, a `test` command of its own that runs its
/// unittest suite (setuptools' own is gone since 72). pytest runs the cases, under the
/// top-level name of `test_suite` when setup() gives one.
#[test]
fn setup_py_test_is_run_by_pytest() {
    let own = files(&[(
        "setup.py",
        "from setuptools import setup\nsetup(name='p', cmdclass={'test': T})\n",
    )]);
    assert_eq!(
        runs("python -Wall setup.py test", &own).as_deref(),
        Some("python -Wall -m pytest -o 'python_files=test*.py'")
    );
    let suite = files(&[(
        "setup.py",
        "from setuptools import setup\nsetup(name='p', test_suite=\"tests.test_all\")\n",
    )]);
    assert_eq!(
        runs("python3 setup.py test", &suite).as_deref(),
        Some("python3 -m pytest -o 'python_files=test*.py' tests")
    );
    // Another setup.py command is not a test run.
    assert_eq!(runs("python setup.py build", &suite), None);
}

/// dnslib's CI: `python -m dnslib.__init__`, a module whose `__main__` block runs its own
/// doctests with `optionflags=doctest.ELLIPSIS`; a script can do the same. pytest collects
/// those doctests with the same flags; a `__main__` block that runs no doctest is left alone.
#[test]
fn a_module_running_its_own_doctests_is_run_by_pytest_with_their_flags() {
    let f = files(&[
        (
            "dnslib/__init__.py",
            "\"\"\"\n>>> 1\n1\n\"\"\"\nif __name__ == '__main__':\n    import doctest,sys\n    sys.exit(0 if doctest.testmod(optionflags=doctest.ELLIPSIS|doctest.NORMALIZE_WHITESPACE).failed == 0 else 1)\n",
        ),
        (
            "tools/check.py",
            "if __name__ == \"__main__\":\n    import doctest\n    doctest.testmod()\n",
        ),
        (
            "tools/serve.py",
            "import doctest\nif __name__ == '__main__':\n    serve()\n",
        ),
    ]);
    assert_eq!(
        runs("python -m dnslib.__init__", &f).as_deref(),
        Some(
            "python -m pytest --doctest-modules -o 'doctest_optionflags=ELLIPSIS NORMALIZE_WHITESPACE' dnslib/__init__.py"
        )
    );
    assert_eq!(
        runs("python3 -W error tools/check.py", &f).as_deref(),
        Some("python3 -W error -m pytest --doctest-modules tools/check.py")
    );
    assert_eq!(runs("python tools/serve.py", &f), None);
}

/// constantly's CI: `coverage run -m twisted.trial constantly`, its tests importing
/// `twisted.trial.unittest`. pytest runs them, and Twisted comes as a test dependency, as the
/// job's own `pip install twisted` said; not for Twisted's own suite, nor for green's (its
/// cases are unittest's own).
#[test]
fn a_runner_whose_test_case_api_the_tests_import_is_a_test_dependency() {
    let before = |cmd: &str, f: &BTreeMap<String, String>| {
        resolve(TestCommand::parse(cmd).unwrap(), f, None, &is_test)
            .1
            .map(|d| d.before)
    };
    let none = files(&[]);
    assert_eq!(
        before("coverage run -m twisted.trial constantly", &none),
        Some(vec!["python -m pip install twisted".to_string()])
    );
    assert_eq!(
        before("nose2 -v", &none),
        Some(vec!["python -m pip install nose2".to_string()])
    );
    assert_eq!(before("green -tvvvv green", &none), None);
    let twisted = files(&[("pyproject.toml", "[project]\nname = \"Twisted\"\n")]);
    assert_eq!(before("python -m twisted.trial twisted", &twisted), None);
}

/// django-js-asset's CI: tox's `python -Wd {envbindir}/coverage run tests/manage.py test -v2
/// --keepdb {posargs:testapp}`. Django's runner reports no test; pytest-django runs the same
/// cases with the settings `manage.py` defaults to, its directory on `PYTHONPATH`, and
/// pytest-django as a test dependency. `--settings` and the command's own
/// `DJANGO_SETTINGS_MODULE` win over the default; a `manage.py` that is not Django's is not.
#[test]
fn djangos_test_runner_is_pytest_django_with_the_settings_it_would_use() {
    let manage = "import os, sys\nif __name__ == '__main__':\n    os.environ.setdefault(\"DJANGO_SETTINGS_MODULE\", \"testapp.settings\")\n    from django.core.management import execute_from_command_line\n    execute_from_command_line(sys.argv)\n";
    let tox = "[tox]\nenvlist = py{310,311}-dj{42,50}\n\n[testenv]\nusedevelop = true\ncommands =\n    python -Wd {envbindir}/coverage run tests/manage.py test -v2 --keepdb {posargs:testapp}\n    coverage report -m\n";
    let f = files(&[
        ("tests/manage.py", manage),
        ("tox.ini", tox),
        ("other/manage.py", "print('not django')\n"),
    ]);
    let (c, d) = resolve(
        TestCommand::parse("python -m tox -e py311-dj42").unwrap(),
        &f,
        Some("3.11"),
        &crate::sandbox::ci::is_test_cmd,
    );
    let d = d.expect("resolved");
    assert_eq!(
        c.levels().last().unwrap().written,
        "PYTHONPATH=tests python -Wd -m coverage run -m pytest --ds=testapp.settings -o 'python_files=test*.py' tests/testapp"
    );
    assert_eq!(d.pythonpath, vec!["tests".to_string()]);
    assert_eq!(
        d.before,
        vec!["python -m pip install pytest-django".to_string()]
    );
    assert_eq!(
        runs("python tests/manage.py test --settings=testapp.other --parallel 2 -p 'check_*.py' testapp.test_x", &f).as_deref(),
        Some("PYTHONPATH=tests python -m pytest --ds=testapp.other -o 'python_files=check_*.py' tests/testapp/test_x")
    );
    assert_eq!(
        runs("DJANGO_SETTINGS_MODULE=proj.ci python -m django test", &f).as_deref(),
        Some("PYTHONPATH=. python -m pytest --ds=proj.ci -o 'python_files=test*.py' .")
    );
    assert_eq!(runs("python -m django test", &f), None);
    assert_eq!(runs("python other/manage.py test", &f), None);
    assert_eq!(runs("python tests/manage.py check", &f), None);
}
