//! Which pytest runs a Python project's tests: one choice for the verifier's hardened run, the
//! agent's `run_tests` (and so the candidates' checks and the check after `submit`) and
//! prepare's collection check. `images/harness/pl_pytest.py` makes it: the project's pytest when
//! it imports and is at least 6.2, else the harness's own (`/opt/patchloop/harness-site`); its
//! first output line, `patchloop: pytest <project|harness> <version> (why)`, says which.
//!
//! Here (pure): turning the repository's test command (`PYTHONPATH=src python -m pytest -x`,
//! `pytest tests`) into the same command through the chooser, sent as `python -c` source.

/// The chooser's source (defines `choose_pytest` and `_pl_main`).
pub const PL_PYTEST: &str = include_str!("../../images/harness/pl_pytest.py");
/// The first line of the chooser's output.
pub const RUNNER_LINE: &str = "patchloop: pytest ";

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The test command with its pytest invocation replaced by the chooser (`None` when the
/// command does not run pytest directly: `make test`, `tox`, a script). Environment
/// assignments and the arguments after pytest are kept as written.
pub fn through_chooser(test_cmd: &str) -> Option<String> {
    let words = shlex::split(test_cmd)?;
    let mut i = 0;
    while i < words.len() && is_assignment(&words[i]) {
        i += 1;
    }
    let prog = words.get(i)?;
    let name = prog.rsplit('/').next().unwrap_or(prog);
    let (python, rest, cwd_on_path) = if name.starts_with("python") && is_python(name) {
        let m = words.get(i + 1)?;
        let module = words.get(i + 2)?;
        if m != "-m" || !(module == "pytest" || module == "py.test") {
            return None;
        }
        (prog.clone(), i + 3, true)
    } else if name == "pytest" || name == "py.test" {
        ("python".to_string(), i + 1, false)
    } else {
        return None;
    };
    let src = format!(
        "{PL_PYTEST}\n_pl_main(cwd_on_path={})\n",
        if cwd_on_path { "True" } else { "False" }
    );
    let mut out: Vec<String> = words[..i].iter().map(|w| quote(w)).collect();
    out.push(quote(&python));
    out.push("-c".into());
    out.push(quote(&src));
    out.extend(words[rest..].iter().map(|w| quote(w)));
    Some(out.join(" "))
}

fn is_assignment(w: &str) -> bool {
    w.split_once('=').is_some_and(|(k, _)| {
        !k.is_empty()
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !k.starts_with(|c: char| c.is_ascii_digit())
    })
}

/// `python`, `python3`, `python3.11`.
fn is_python(name: &str) -> bool {
    let v = &name["python".len()..];
    v.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// The command that collects the tests (`--collect-only`), through the chooser when it can.
pub fn collect_command(test_cmd: &str, tests_dirs: &[String]) -> String {
    let base = through_chooser(test_cmd).unwrap_or_else(|| test_cmd.to_string());
    let mut cmd = format!("{base} --collect-only -q -p no:cacheprovider");
    for d in tests_dirs {
        cmd.push(' ');
        cmd.push_str(&quote(d));
    }
    cmd
}

/// The chooser's line in a run's output: `harness 7.2.1 (the project's pytest 3.0.7 is not
/// usable: ...)`.
pub fn runner_of(output: &str) -> Option<&str> {
    output
        .lines()
        .find_map(|l| l.trim_end().strip_prefix(RUNNER_LINE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_commands_go_through_the_chooser() {
        let c = through_chooser("PYTHONPATH=src python -m pytest -x 'tests/a b.py'").unwrap();
        assert!(c.starts_with("'PYTHONPATH=src' 'python' -c '"), "{c}");
        assert!(
            c.ends_with("_pl_main(cwd_on_path=True)\n' '-x' 'tests/a b.py'"),
            "{c}"
        );
        assert!(c.contains("def choose_pytest("));
        let c = through_chooser("pytest -q").unwrap();
        assert!(c.starts_with("'python' -c '"), "{c}");
        assert!(c.contains("_pl_main(cwd_on_path=False)"), "{c}");
        assert!(through_chooser("/opt/venv/bin/python3.11 -m pytest").is_some());
        for other in [
            "make test",
            "tox -e py",
            "python -m unittest",
            "python setup.py test",
            "",
        ] {
            assert_eq!(through_chooser(other), None, "{other}");
        }
        let shell_words = shlex::split(&through_chooser("pytest -k 'a or b'").unwrap()).unwrap();
        assert_eq!(shell_words[0], "python");
        assert_eq!(shell_words[3..], ["-k", "a or b"]);
    }

    #[test]
    fn collection_and_the_runner_line() {
        let c = collect_command("make test", &["tests".into()]);
        assert_eq!(c, "make test --collect-only -q -p no:cacheprovider 'tests'");
        assert!(collect_command("python -m pytest", &[]).contains("--collect-only"));
        assert_eq!(
            runner_of("x\npatchloop: pytest harness 7.2.1 (why)\n"),
            Some("harness 7.2.1 (why)")
        );
        assert_eq!(runner_of("nothing"), None);
    }
}
