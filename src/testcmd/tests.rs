use super::*;

fn p(s: &str) -> TestCommand {
    TestCommand::parse(s).unwrap()
}

fn kind(c: &TestCommand) -> String {
    match &c.launcher {
        Launcher::Pytest { interpreter } => format!(
            "pytest[{}]",
            interpreter
                .iter()
                .map(|w| w.raw.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        ),
        Launcher::EnvRunner { tool } => format!("runner[{tool}]"),
        other => format!("{other:?}").to_lowercase(),
    }
}

fn args(c: &TestCommand) -> Vec<&str> {
    c.args().iter().map(|w| w.raw.as_str()).collect()
}

#[test]
fn a_command_names_its_environment_by_its_env_session_or_tool() {
    for named in [
        "tox -e \"py310-extras\"",
        "python -m tox -e ci-base -- --verbose",
        "tox run -m ci",
        "tox -epy311",
        "nox -s tests-3.11",
        "uv run --with '.[dev]' pytest",
        "uv run --group=test pytest",
    ] {
        assert!(p(named).names_its_environment(), "{named}");
    }
    for bare in [
        "python -m tox",
        "tox",
        "tox --parallel 0",
        "nox",
        "python -m pytest",
        "make test",
    ] {
        assert!(!p(bare).names_its_environment(), "{bare}");
    }
}

#[test]
fn coverage_running_a_script_runs_that_script() {
    // jsonpatch: `coverage run --source=jsonpointer tests.py`.
    let c = p("coverage run --source=jsonpointer tests.py");
    assert_eq!(c.launcher, Launcher::Python);
    assert_eq!(c.python_script(), Some("tests.py"));
    let c = p("python3 -bb tests/test.py -v");
    assert_eq!(c.python_script(), Some("tests/test.py"));
    assert_eq!(p("python -m tests").python_script(), None);
    assert_eq!(p("coverage run -m pytest").python_script(), None);
}

#[test]
fn every_form_parses_into_its_parts() {
    let c = p("PYTHONPATH=src python3 -m pytest -q tests");
    assert_eq!(c.env[0].0, "PYTHONPATH");
    assert_eq!(c.env[0].1.value.as_deref(), Some("src"));
    assert_eq!(kind(&c), "pytest[python3]");
    assert_eq!(args(&c), ["-q", "tests"]);

    let c = p("CI=1 PYTHONPATH=. python -m pytest tests");
    assert_eq!(c.env.len(), 2);
    assert_eq!(kind(&c), "pytest[python]");

    let c = p("env PYTHONPATH=. python3 -m pytest tests");
    assert_eq!(c.env[0].0, "PYTHONPATH");
    assert_eq!(kind(&c), "pytest[python3]");

    let c = p("cd . && python3 -m pytest -q tests");
    assert_eq!(c.cwd, None);
    let c = p("cd ./sub/ && pytest");
    assert_eq!(c.cwd.as_deref(), Some("sub"));
    assert_eq!(kind(&c), "pytest[]");

    assert_eq!(kind(&p("py.test -x")), "pytest[]");
    assert_eq!(
        kind(&p("python -W error -m pytest")),
        "pytest[python -W error]"
    );
    assert_eq!(kind(&p("coverage run -m pytest tests")), "pytest[]");
    assert_eq!(
        args(&p("coverage run --source=pkg -m pytest tests")),
        ["tests"]
    );
    assert_eq!(kind(&p("python -m coverage run -p -m pytest")), "pytest[]");
    assert_eq!(kind(&p("tox -e py311")), "tox");
    assert_eq!(kind(&p("python -m tox -e py")), "tox");
    assert_eq!(kind(&p("nox -s tests-3.11")), "nox");
    assert_eq!(kind(&p("make test")), "make");
    assert_eq!(kind(&p("python -m unittest discover")), "python");
    assert_eq!(kind(&p("python setup.py test")), "python");

    let c = p("uv run --frozen --extra test pytest -x tests");
    assert_eq!(kind(&c), "runner[uv run]");
    let inner = c.runs.as_deref().unwrap();
    assert_eq!(kind(inner), "pytest[]");
    assert_eq!(args(inner), ["-x", "tests"]);
    assert!(c.runs_pytest());
    assert!(p("poetry run python -m pytest").runs_pytest());
    assert!(p("pdm run pytest").runs_pytest());
    assert!(p("pipenv run pytest").runs_pytest());
    assert!(p("hatch test -c tests").runs_pytest());
    // A script name only pyproject.toml knows: resolved with the files.
    // `-Im tox`: flags clustered with -m.
    assert_eq!(kind(&p("python -Im tox -e py311")), "tox");
    assert!(p("uvx --with tox-uv tox -e py").unresolved());
    assert_eq!(
        kind(
            p("uvx --python 3.11 --with tox-uv tox -e py")
                .runs
                .as_deref()
                .unwrap()
        ),
        "tox"
    );
    assert_eq!(kind(&p("./ci.sh")), "script { path: \"ci.sh\" }");
    assert_eq!(
        kind(&p("bash scripts/test.sh")),
        "script { path: \"scripts/test.sh\" }"
    );
    assert!(p("hatch run +py=3.11 test:with-coverage").unresolved());
    // unittest and zope.testrunner: pytest runs their test cases, from the paths they name.
    let u = p("python -m unittest discover -s tests -p '*_test.py'");
    assert!(u.runs_pytest());
    assert_eq!(
        u.runs.as_deref().unwrap().written,
        "python -m pytest -o 'python_files=*_test.py' tests"
    );
    assert_eq!(
        p("python -m unittest tests.test_x")
            .runs
            .as_deref()
            .unwrap()
            .written,
        "python -m pytest -o 'python_files=test*.py' tests/test_x.py"
    );
    let z = p(
        "PURE_PYTHON=1 python -m coverage run -p -m zope.testrunner --test-path=src --auto-color",
    );
    assert!(z.runs_pytest(), "{z:?}");
    assert_eq!(
        z.runs.as_deref().unwrap().written,
        "python -m pytest -o 'python_files=test*.py tests.py' src"
    );
    let c = p("hatch run test:cov");
    assert!(!c.runs_pytest() && c.unresolved());
    assert!(p("tox").unresolved());
}

#[test]
fn forms_not_understood_are_kept_whole() {
    for s in [
        "pytest | tee log.txt",
        "pytest; echo done",
        "cd a && cd b && pytest",
        "env -i pytest",
        "cd /abs && pytest",
        "npm test -- --ci",
        "$PYTEST tests",
    ] {
        let c = p(s);
        assert_eq!(c.launcher, Launcher::Shell, "{s}");
        assert_eq!(c.written, s);
    }
    assert_eq!(TestCommand::parse("  "), Err(TestCommandError::Empty));
    assert_eq!(
        TestCommand::parse("pytest\nrm -rf /"),
        Err(TestCommandError::NotOneLine)
    );
}

#[test]
fn the_verifier_takes_paths_carried_options_and_plain_env() {
    let s = p("CI=1 PYTHONPATH=src:.:$PYTHONPATH LD_PRELOAD=x.so PYTEST_ADDOPTS=-x python -m pytest -p no:randomly --import-mode importlib --cov=src -x tests")
        .python_setup("/workspace");
    assert_eq!(s.paths, ["/workspace/src", "/workspace"]);
    assert_eq!(s.args, ["-p", "no:randomly", "--import-mode=importlib"]);
    assert_eq!(s.env, [("CI".to_string(), "1".to_string())]);
    assert_eq!(s.cwd, None);
    let s = p("cd pkg && PYTHONPATH=. pytest").python_setup("/workspace");
    assert_eq!(s.paths, ["/workspace/pkg"]);
    assert_eq!(s.cwd.as_deref(), Some("/workspace/pkg"));
    assert_eq!(
        pythonpath_dirs("${{ github.workspace }}/src:{toxinidir}/lib:$PWD/x:../out"),
        ["src", "lib", "x"]
    );
}

#[test]
fn the_value_round_trips_through_json() {
    for s in [
        "PYTHONPATH=src python -m pytest -q",
        "uv run pytest",
        "./x.sh",
        "cd a && tox -e py",
    ] {
        let c = p(s);
        let back: TestCommand = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }
    assert_eq!(
        p("tox -e py").describe(),
        "`tox -e py`",
        "an unresolved delegation names only the command"
    );
    assert_eq!(
        p("uv run pytest -x").describe(),
        "`uv run pytest -x`, which runs `pytest -x` (`uv run` runs it in the environment the image already is)"
    );
}

/// Renders every form and runs the rendering in a real `sh`: a stub `pytest` module (on the
/// path through a `python` wrapper) records what it was run with — its arguments, working
/// directory and environment — so the test checks what the shell made of the rendering.
mod in_a_real_shell {
    use super::*;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    const STUB: &str = r#"
import json, os, sys
__version__ = "8.3.0"
def main(args):
    with open(os.environ["PL_STUB_OUT"], "w") as f:
        json.dump({"args": list(args), "cwd": os.getcwd(),
                   "pythonpath": os.environ.get("PL_STUB_PYTHONPATH"),
                   "env": {k: os.environ.get(k) for k in ("CI", "PYTEST_ADDOPTS", "FOO")}}, f)
    return 0
"#;

    struct Box_ {
        dir: tempfile::TempDir,
    }

    impl Box_ {
        fn new() -> Box_ {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            for d in ["bin", "stub", "ws/sub/tests", "ws/tests"] {
                std::fs::create_dir_all(root.join(d)).unwrap();
            }
            std::fs::write(root.join("stub/pytest.py"), STUB).unwrap();
            let real = which("python3");
            for name in ["python", "python3"] {
                write_exec(
                    &root.join("bin").join(name),
                    &format!(
                        "#!/bin/sh\nexport PL_STUB_PYTHONPATH=\"${{PYTHONPATH-<unset>}}\"\nexport PYTHONPATH={}/stub${{PYTHONPATH:+:$PYTHONPATH}}\nexec {} \"$@\"\n",
                        root.display(),
                        real.display()
                    ),
                );
            }
            // A `tox` on the PATH that records its own arguments (an unresolved tox is run as
            // written).
            write_exec(
                &root.join("bin/tox"),
                "#!/bin/sh\nprintf '{\"tox\": \"%s\", \"addopts\": \"%s\"}' \"$*\" \"$PYTEST_ADDOPTS\" > \"$PL_STUB_OUT\"\n",
            );
            Box_ { dir }
        }

        fn ws(&self) -> PathBuf {
            self.dir.path().join("ws")
        }

        /// Runs `line` with `sh -c` from the workspace; what the stub recorded.
        fn run(&self, line: &str) -> serde_json::Value {
            let out = self.dir.path().join("out.json");
            let _ = std::fs::remove_file(&out);
            let path = format!(
                "{}:{}",
                self.dir.path().join("bin").display(),
                std::env::var("PATH").unwrap_or_default()
            );
            let st = Command::new("sh")
                .arg("-c")
                .arg(line)
                .current_dir(self.ws())
                .env("PATH", path)
                .env("PL_STUB_OUT", &out)
                .env_remove("PYTHONPATH")
                .env_remove("CI")
                .status()
                .unwrap();
            assert!(st.success(), "sh -c {line:?} exited {st}");
            serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap()
        }
    }

    fn which(name: &str) -> PathBuf {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {name}"))
            .output()
            .unwrap();
        let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
        assert!(!p.is_empty(), "{name} not found");
        // pyenv's shim would re-enter the wrapper through PATH: use the real interpreter.
        let real = Command::new(&p)
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .unwrap();
        PathBuf::from(String::from_utf8_lossy(&real.stdout).trim())
    }

    fn write_exec(p: &Path, body: &str) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(p, body).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn rendered(b: &Box_, cmd: &str, options: &[&str], selection: &[&str]) -> serde_json::Value {
        let ws = b.ws();
        let options: Vec<String> = options.iter().map(|s| s.to_string()).collect();
        let selection: Vec<String> = selection.iter().map(|s| s.to_string()).collect();
        let workspace = ws.to_string_lossy().into_owned();
        let line = p(cmd).shell(&Run {
            workspace: &workspace,
            options: &options,
            selection: &selection,
        });
        b.run(&line)
    }

    #[test]
    fn cd_then_a_semicolon_runs_pytest_from_that_directory_without_coverage() {
        // uncertainties' CI: `cd tests; python -m pytest … --cov=uncertainties --cov=.
        // --cov-report=xml` (a YAML plain scalar folded onto one line). The tests directory
        // is read-only in the sandbox, where coverage would write its data file.
        let b = Box_::new();
        let got = rendered(
            &b,
            "cd tests; python -m pytest --ignore=test_x.py -k \"not slow\" --cov=pkg --cov=. --cov-report=xml",
            &[],
            &[],
        );
        assert!(got["cwd"].as_str().unwrap().ends_with("/ws/tests"), "{got}");
        let args: Vec<&str> = got["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert!(
            args.contains(&"--ignore=test_x.py") && args.contains(&"not slow"),
            "{args:?}"
        );
        assert!(!args.iter().any(|a| a.starts_with("--cov")), "{args:?}");
        // Any other sequence is not taken apart.
        assert_eq!(p("pytest; echo done").launcher, Launcher::Shell);
        assert_eq!(p("cd tests; pytest; echo done").launcher, Launcher::Shell);
    }

    #[test]
    fn setup_py_test_resolved_to_pytest_runs_in_a_shell() {
        // Pympler's CI: `python -Wall setup.py test`. Resolved with the files (the suite
        // setup() names), rendered, and run by `sh`: pytest gets the file pattern and the
        // suite's package, the interpreter its flag.
        let b = Box_::new();
        let files = std::collections::BTreeMap::from([(
            "setup.py".to_string(),
            "from setuptools import setup\nsetup(name='p', test_suite='tests.test_all')\n"
                .to_string(),
        )]);
        let (cmd, d) = crate::sandbox::ci_resolve::resolve(
            p("python -Wall setup.py test"),
            &files,
            Some("3.11"),
            &|l: &str| l.contains("pytest"),
        );
        assert!(d.is_some(), "{cmd:?}");
        let ws = b.ws();
        let workspace = ws.to_string_lossy().into_owned();
        let got = b.run(&cmd.shell(&Run {
            workspace: &workspace,
            options: &[],
            selection: &[],
        }));
        let args: Vec<&str> = got["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert!(
            args.ends_with(&["-o", "python_files=test*.py", "tests"]),
            "{args:?}"
        );
    }

    #[test]
    fn a_glob_given_to_unittest_is_expanded_by_the_shell_for_pytest() {
        // cronsim's CI: `python -m unittest tests/test_*`, the shell expanding the glob to the
        // test files. pytest must get the files, not the pattern.
        let b = Box_::new();
        let ws = b.ws();
        for f in ["tests/test_a.py", "tests/test_b.py", "tests/helper.py"] {
            std::fs::write(ws.join(f), "").unwrap();
        }
        let got = rendered(&b, "python -m unittest tests/test_*", &[], &[]);
        let args: Vec<&str> = got["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert!(
            args.ends_with(&["tests/test_a.py", "tests/test_b.py"]),
            "{args:?}"
        );
        assert!(!args.contains(&"tests/test_*"), "{args:?}");
    }

    #[test]
    fn a_program_that_only_wraps_the_test_command_is_left_out() {
        // mss's CI (`xvfb-run python -m pytest`), `timeout 600 pytest`: the sandbox has its own
        // time limit and no display server; what they wrap is the test command. The box has
        // no `xvfb-run`, so the rendering runs only if the wrapper is gone.
        let b = Box_::new();
        let workspace = b.ws().to_string_lossy().into_owned();
        for cmd in [
            "xvfb-run -a -s '-screen 0 1024x768x24' python -m pytest -x tests",
            "timeout --signal=KILL 10m python -m pytest -x tests",
            "nice -n 5 timeout -k 5 600 pytest -x tests",
            "CI=1 time stdbuf -oL pytest -x tests",
            // Not a wrapper of this kind, but the same shape: pytest's console script run by
            // `coverage run` from the PATH.
            "coverage run --source=pkg pytest -x tests",
        ] {
            let c = p(cmd);
            assert!(
                matches!(c.launcher, Launcher::Pytest { .. }),
                "{cmd}: {c:?}"
            );
            assert_eq!(c.written, cmd);
            let r = b.run(&c.shell(&Run {
                workspace: &workspace,
                ..Default::default()
            }));
            let args: Vec<String> = serde_json::from_value(r["args"].clone()).unwrap();
            assert_eq!(args[args.len() - 2..], ["-x", "tests"], "{cmd}: {args:?}");
        }
        // Not a wrapper without what it wraps, nor `timeout` without its duration.
        for cmd in ["timeout pytest", "xvfb-run"] {
            assert!(!matches!(p(cmd).launcher, Launcher::Pytest { .. }), "{cmd}");
        }
    }

    #[test]
    fn green_trial_and_nose2_are_pytest_on_the_packages_and_modules_they_name() {
        // green's CI (`green -tvvvv green`: the runner on its own package), constantly's
        // (`coverage run -m twisted.trial constantly`), nose2's start directory. pytest runs
        // unittest's (and trial's) test cases; the runners' options are theirs.
        let b = Box_::new();
        let ws = b.ws();
        for d in ["pkg/test", "other"] {
            std::fs::create_dir_all(ws.join(d)).unwrap();
        }
        for f in [
            "pkg/__init__.py",
            "pkg/test/__init__.py",
            "pkg/test/test_a.py",
            "other/test_b.py",
        ] {
            std::fs::write(ws.join(f), "").unwrap();
        }
        let workspace = ws.to_string_lossy().into_owned();
        let exists = |p: &str| ws.join(p).exists();
        for (cmd, want) in [
            ("green -tvvvv -s 2 pkg", vec!["pkg"]),
            ("python -m green -r pkg.test", vec!["pkg/test"]),
            ("coverage run -m twisted.trial pkg", vec!["pkg"]),
            (
                "trial --reporter=text -j 2 pkg.test.test_a",
                vec!["pkg/test/test_a.py"],
            ),
            ("python -m nose2 -v -s other", vec!["other"]),
            ("nose2 -v", vec![]),
            // nose2's own tox line: the runner's console script under `coverage run`.
            (
                "coverage run nose2 -v --pretty-assert -s other",
                vec!["other"],
            ),
        ] {
            let c = p(cmd);
            assert_eq!(
                c.via.as_deref(),
                Some(&*format!(
                    "pytest runs `{}`'s test cases",
                    if cmd.contains("trial") {
                        if cmd.starts_with("trial") {
                            "trial"
                        } else {
                            "twisted.trial"
                        }
                    } else if cmd.contains("nose2") {
                        "nose2"
                    } else {
                        "green"
                    }
                )),
                "{cmd}"
            );
            let (m, _) = c.with_module_paths(exists);
            let r = b.run(&m.shell(&Run {
                workspace: &workspace,
                ..Default::default()
            }));
            let args: Vec<String> = serde_json::from_value(r["args"].clone()).unwrap();
            let from = args
                .iter()
                .position(|a| *a == "python_files=test*.py")
                .expect("the pattern")
                + 1;
            assert_eq!(args[from..], want, "{cmd}: {args:?}");
        }
    }

    #[test]
    fn a_start_directory_that_is_a_module_is_run_as_that_module() {
        // pyotp's sdist: `unittest discover -s test` with `test.py` and no `test/`.
        let b = Box_::new();
        let ws = b.ws();
        std::fs::write(ws.join("test.py"), "").unwrap();
        let workspace = ws.to_string_lossy().into_owned();
        let exists = |p: &str| ws.join(p).exists();
        let c = p("coverage run --branch -m unittest discover -s test -v");
        let (m, changed) = c.with_module_paths(exists);
        assert_eq!(changed, vec![("test".to_string(), "test.py".to_string())]);
        let r = b.run(&m.shell(&Run {
            workspace: &workspace,
            ..Default::default()
        }));
        let args = r["args"].to_string();
        assert!(
            args.contains("\"test.py\"") && !args.contains("\"test\""),
            "{args}"
        );
        // A directory that exists, or a path that is no module either, is left as written.
        let (same, changed) = p("pytest tests sub/tests nowhere").with_module_paths(exists);
        assert!(changed.is_empty());
        assert_eq!(same, p("pytest tests sub/tests nowhere"));
    }

    #[test]
    fn a_unittest_runner_given_a_suite_functions_dotted_name_runs_its_package() {
        // testtools' CI: `python -W once -m testtools.run tests.test_suite`, where `test_suite`
        // is a function of tests/__init__.py that lists the test modules; pytest collects the
        // same cases from the package. And a class inside a module runs that module.
        let b = Box_::new();
        let ws = b.ws();
        std::fs::create_dir_all(ws.join("tests/sub")).unwrap();
        for f in [
            "tests/__init__.py",
            "tests/test_x.py",
            "tests/sub/__init__.py",
        ] {
            std::fs::write(ws.join(f), "").unwrap();
        }
        let workspace = ws.to_string_lossy().into_owned();
        let exists = |p: &str| ws.join(p).exists();
        for (line, runner, path) in [
            (
                "python -W once -m testtools.run tests.test_suite",
                "testtools.run",
                "tests",
            ),
            (
                "python -m subunit.run tests.test_x.TestX.test_a",
                "subunit.run",
                "tests/test_x.py",
            ),
            (
                "python -m unittest tests.sub.test_suite",
                "unittest",
                "tests/sub",
            ),
        ] {
            let c = p(line);
            assert_eq!(
                c.via.as_deref(),
                Some(format!("pytest runs `{runner}`'s test cases").as_str()),
                "{line}"
            );
            let (m, changed) = c.with_module_paths(exists);
            assert_eq!(changed.len(), 1, "{line}: {changed:?}");
            assert_eq!(changed[0].1, path, "{line}");
            let r = b.run(&m.shell(&Run {
                workspace: &workspace,
                ..Default::default()
            }));
            let args = r["args"].to_string();
            assert!(args.contains(&format!("\"{path}\"")), "{line}: {args}");
        }
    }

    #[test]
    fn without_pytest_args_keeps_the_directory_assignments_and_interpreter() {
        let b = Box_::new();
        let workspace = b.ws().to_string_lossy().into_owned();
        let options = vec!["-q".to_string()];
        let selection = vec!["tests/test_h.py".to_string()];
        let run = Run {
            workspace: &workspace,
            options: &options,
            selection: &selection,
        };
        let c = p("cd sub && FOO=1 python -m pytest --hypothesis-profile=slow -x tests");
        let r = b.run(&c.without_pytest_args().shell(&run));
        assert_eq!(r["cwd"], format!("{workspace}/sub"));
        assert_eq!(r["env"]["FOO"], "1");
        let args: Vec<String> = serde_json::from_value(r["args"].clone()).unwrap();
        assert!(
            !args.iter().any(|a| a.contains("hypothesis") || a == "-x"),
            "{args:?}"
        );
        assert!(args.iter().any(|a| a == "-q"), "{args:?}");
        // As the project runs it, the options are there.
        let r = b.run(&c.shell(&run));
        assert!(
            r["args"].to_string().contains("--hypothesis-profile=slow"),
            "{r}"
        );
    }

    #[test]
    fn a_directory_the_script_makes_is_made_before_the_tests_run_from_it() {
        let b = Box_::new();
        let ws = b.ws();
        let workspace = ws.to_string_lossy().into_owned();
        let mut c = p("python -m pytest --pyargs pkg");
        c.cwd = Some("empty".into());
        c.makes_cwd = true;
        let line = c.shell(&Run {
            workspace: &workspace,
            ..Default::default()
        });
        assert!(!ws.join("empty").exists());
        let r = b.run(&line);
        assert_eq!(r["cwd"], format!("{workspace}/empty"));
        // Run again: the directory is there now, and that is fine too.
        let r = b.run(&line);
        assert_eq!(r["cwd"], format!("{workspace}/empty"));
    }

    #[test]
    fn assignments_reach_pytest_as_environment() {
        let b = Box_::new();
        let ws = b
            .ws()
            .canonicalize()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let r = rendered(
            &b,
            "PYTHONPATH=src python3 -m pytest -q tests",
            &["--junitxml=/tmp/j.xml"],
            &[],
        );
        assert_eq!(
            r["args"],
            serde_json::json!(["-q", "tests", "--junitxml=/tmp/j.xml"])
        );
        assert_eq!(r["pythonpath"], "src");
        assert_eq!(r["cwd"], ws.as_str());
        let r = rendered(
            &b,
            "CI=1 PYTHONPATH=. python -m pytest tests",
            &[],
            &["tests/test_a.py::t"],
        );
        assert_eq!(r["env"]["CI"], "1");
        assert_eq!(r["pythonpath"], ".");
        // A selection replaces the command's own paths.
        assert_eq!(r["args"], serde_json::json!(["tests/test_a.py::t"]));
        let r = rendered(
            &b,
            "env PYTHONPATH=. FOO='a b' python3 -m pytest tests",
            &[],
            &[],
        );
        assert_eq!(r["pythonpath"], ".");
        assert_eq!(r["env"]["FOO"], "a b");
    }

    #[test]
    fn a_directory_change_runs_there_with_checkout_relative_ids() {
        let b = Box_::new();
        let ws = b
            .ws()
            .canonicalize()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let r = rendered(&b, "cd . && python3 -m pytest -q tests", &[], &[]);
        assert_eq!(r["cwd"], ws.as_str());
        assert_eq!(r["args"], serde_json::json!(["-q", "tests"]));
        let r = rendered(
            &b,
            "cd sub && PYTHONPATH=. pytest tests",
            &[],
            &["sub/tests/test_x.py::t[a b]"],
        );
        assert_eq!(r["cwd"], format!("{ws}/sub"));
        let args: Vec<String> = serde_json::from_value(r["args"].clone()).unwrap();
        assert!(args[0].starts_with("--rootdir="), "{args:?}");
        assert!(
            args[1].ends_with("/sub/tests/test_x.py::t[a b]"),
            "{args:?}"
        );
    }

    #[test]
    fn launchers_render_to_the_pytest_they_run() {
        let b = Box_::new();
        for cmd in [
            "pytest -x tests",
            "py.test -x tests",
            "coverage run --source=pkg -m pytest -x tests",
            "uv run --frozen pytest -x tests",
            "poetry run pytest -x tests",
            "pdm run python -m pytest -x tests",
            "hatch test -x tests",
        ] {
            let r = rendered(&b, cmd, &[], &[]);
            assert_eq!(r["args"], serde_json::json!(["-x", "tests"]), "{cmd}");
        }
        // Reporting-only options are left out; the rest stay as written.
        let r = rendered(
            &b,
            "pytest --cov=pkg --cov-report term -n auto -k 'a or b' tests",
            &[],
            &[],
        );
        assert_eq!(r["args"], serde_json::json!(["-k", "a or b", "tests"]));
        // `--cov NAME` (a value, not a path to run) goes with its value.
        let r = rendered(
            &b,
            "python -m pytest --cov termcolor --cov tests --cov -x tests",
            &[],
            &[],
        );
        assert_eq!(r["args"], serde_json::json!(["-x", "tests"]));
    }

    #[test]
    fn what_is_not_pytest_runs_as_written() {
        let b = Box_::new();
        let r = rendered(
            &b,
            "tox -e py311 -- -x",
            &["--junitxml=/tmp/j.xml"],
            &["tests/a.py::t"],
        );
        assert_eq!(r["tox"], "-e py311 -- -x");
        assert_eq!(r["addopts"], "--junitxml=/tmp/j.xml");
        let r = rendered(&b, "tox -e py | cat", &[], &[]);
        assert_eq!(r["tox"], "-e py");
    }
}
