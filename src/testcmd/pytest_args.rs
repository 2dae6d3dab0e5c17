//! pytest's arguments in a repository's command, taken apart: options (with the value an option
//! takes), and positional paths, which say what to run. A rendering that runs its own
//! selection of tests leaves the positional paths out; one that runs in the sandbox leaves out
//! options that only report or schedule (coverage, JUnit files, xdist workers), which change
//! no test's outcome and need plugins the sandbox may not have. Pure.

use super::words::Word;

/// One argument (with its value word, when the option takes one as the next word).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    Opt(Vec<Word>),
    Path(Word),
}

/// Long options that take the next word as their value (when not written `--opt=value`).
const LONG_WITH_VALUE: &[&str] = &[
    "--rootdir",
    "--ds",
    "--dc",
    "--import-mode",
    "--tb",
    "--durations",
    "--durations-min",
    "--maxfail",
    "--deselect",
    "--ignore",
    "--ignore-glob",
    "--confcutdir",
    "--basetemp",
    "--junitxml",
    "--junit-xml",
    "--junit-prefix",
    "--log-level",
    "--log-format",
    "--log-cli-level",
    "--log-file",
    "--log-file-level",
    "--capture",
    "--color",
    "--code-highlight",
    "--doctest-glob",
    "--doctest-report",
    "--override-ini",
    "--cov-report",
    "--cov-config",
    "--cov-fail-under",
    "--cov-context",
    "--numprocesses",
    "--maxprocesses",
    "--dist",
    "--html",
    "--json-report-file",
    "--timeout",
    "--timeout-method",
    "--reruns",
    "--reruns-delay",
    "--randomly-seed",
    "--benchmark-save",
    "--benchmark-json",
    "--hypothesis-profile",
    "--hypothesis-seed",
    "--ds",
    "--dc",
    "--asyncio-mode",
    "--mypy-config-file",
];

/// Long options whose value is optional (argparse's `nargs="?"`): the next word is theirs
/// unless it is an option (`--cov termcolor` covers termcolor, it does not run it).
const LONG_WITH_OPTIONAL_VALUE: &[&str] = &["--cov"];

/// Short options that take a value (attached, `-kexpr`, or as the next word).
const SHORT_WITH_VALUE: &[char] = &['k', 'm', 'p', 'c', 'o', 'W', 'n', 'r'];

/// Options that only report or schedule (see the module docs): left out of sandbox runs.
pub fn reporting_only(opt: &str) -> bool {
    let name = opt.split('=').next().unwrap_or(opt);
    name.starts_with("--cov")
        || matches!(
            name,
            "--no-cov"
                | "--no-cov-on-fail"
                | "--junitxml"
                | "--junit-xml"
                | "--junit-prefix"
                | "--html"
                | "--self-contained-html"
                | "--json-report"
                | "--json-report-file"
                | "-n"
                | "--numprocesses"
                | "--maxprocesses"
                | "--dist"
                | "--reruns"
                | "--reruns-delay"
                | "--benchmark-save"
                | "--benchmark-json"
                | "--benchmark-autosave"
                | "--benchmark-disable"
                | "--benchmark-skip"
                | "--mypy"
                | "--ruff"
                | "--ruff-format"
                | "--flake8"
                | "--black"
                | "--isort"
        )
        || (name.starts_with("-n")
            && name.len() > 2
            && name[2..].chars().all(|c| c.is_ascii_alphanumeric()))
}

/// Takes pytest's arguments apart (see [`Arg`]). Unknown `--long` options are taken to take no
/// value unless written with `=`.
pub fn split(args: &[Word]) -> Vec<Arg> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut only_paths = false;
    while i < args.len() {
        let w = &args[i];
        let t = w.text();
        if only_paths || !t.starts_with('-') || t == "-" {
            out.push(Arg::Path(w.clone()));
            i += 1;
            continue;
        }
        if t == "--" {
            only_paths = true;
            i += 1;
            continue;
        }
        let takes_next = if t.starts_with("--") {
            !t.contains('=')
                && (LONG_WITH_VALUE.contains(&t)
                    || (LONG_WITH_OPTIONAL_VALUE.contains(&t)
                        && args.get(i + 1).is_some_and(|v| !v.text().starts_with('-'))))
        } else {
            // `-x`, `-vv`, `-k expr`, `-kexpr`, `-rfE`: a value-taking letter ends the cluster.
            let letters: Vec<char> = t[1..].chars().collect();
            match letters.iter().position(|c| SHORT_WITH_VALUE.contains(c)) {
                Some(at) => at == letters.len() - 1,
                None => false,
            }
        };
        if takes_next && let Some(v) = args.get(i + 1) {
            out.push(Arg::Opt(vec![w.clone(), v.clone()]));
            i += 2;
        } else {
            out.push(Arg::Opt(vec![w.clone()]));
            i += 1;
        }
    }
    out
}

/// The option's name as written (`--cov=src` → `--cov`, `-n4` → `-n4`).
pub fn name(opt: &[Word]) -> &str {
    opt.first().map(Word::text).unwrap_or("")
}

/// Options the verifier's hardened run carries over: they change how tests are imported or
/// which plugins load (`--import-mode`, `--doctest-modules`, `-p`). As plain strings.
pub fn carried(args: &[Arg]) -> Vec<String> {
    let mut out = Vec::new();
    for a in args {
        let Arg::Opt(ws) = a else { continue };
        let n = name(ws);
        let vals: Option<Vec<String>> = ws.iter().map(|w| w.value.clone()).collect();
        let Some(vals) = vals else { continue };
        // What decides which files and names are tests: the verifier must collect the same.
        // And where imports resolve (`pythonpath=`, a Django project's directory).
        let collects = |v: &str| {
            [
                "python_files=",
                "python_classes=",
                "python_functions=",
                "pythonpath=",
            ]
            .iter()
            .any(|k| v.starts_with(k))
        };
        if (n == "-o" || n == "--override-ini") && vals.len() == 2 && collects(&vals[1]) {
            out.extend(["-o".to_string(), vals[1].clone()]);
        } else if let Some(v) = n.strip_prefix("--override-ini=")
            && collects(v)
        {
            out.extend(["-o".to_string(), v.to_string()]);
        } else if n == "--import-mode" {
            if let Some(v) = vals.get(1) {
                out.push(format!("--import-mode={v}"));
            }
        } else if matches!(n, "--ds" | "--dc") && vals.len() == 2 {
            // pytest-django's settings module and configuration: without them a Django
            // project's test cases cannot even be imported.
            out.push(format!("{n}={}", vals[1]));
        } else if n.starts_with("--import-mode=")
            || n.starts_with("--ds=")
            || n.starts_with("--dc=")
            || n == "--doctest-modules"
        {
            out.push(n.to_string());
        } else if n == "-p" && vals.len() == 2 {
            out.extend(vals);
        } else if let Some(p) = n.strip_prefix("-p")
            && !p.is_empty()
            && !p.starts_with('-')
            && vals.len() == 1
        {
            out.push("-p".into());
            out.push(p.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(line: &str) -> Vec<Word> {
        super::super::words::tokenize(line)
            .unwrap()
            .into_iter()
            .filter_map(|t| match t {
                super::super::words::Token::Word(w) => Some(w),
                _ => None,
            })
            .collect()
    }

    fn shape(line: &str) -> Vec<String> {
        split(&ws(line))
            .iter()
            .map(|a| match a {
                Arg::Opt(w) => format!(
                    "opt:{}",
                    w.iter()
                        .map(|w| w.raw.as_str())
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                Arg::Path(w) => format!("path:{}", w.raw),
            })
            .collect()
    }

    #[test]
    fn options_take_their_values_and_paths_stay_paths() {
        assert_eq!(
            shape("-x -k 'a or b' --cov=src --tb short tests -rfE -p no:randomly -- -weird"),
            [
                "opt:-x",
                "opt:-k 'a or b'",
                "opt:--cov=src",
                "opt:--tb short",
                "path:tests",
                "opt:-rfE",
                "opt:-p no:randomly",
                "path:-weird"
            ]
        );
        assert_eq!(
            shape("-vvkfoo tests/a.py::t"),
            ["opt:-vvkfoo", "path:tests/a.py::t"]
        );
        // termcolor 3.3's tox.ini: `--cov` takes the next word unless it is an option.
        assert_eq!(
            shape("--cov termcolor --cov tests --cov -x t"),
            [
                "opt:--cov termcolor",
                "opt:--cov tests",
                "opt:--cov",
                "opt:-x",
                "path:t"
            ]
        );
        assert_eq!(
            shape("-n auto --dist loadfile t"),
            ["opt:-n auto", "opt:--dist loadfile", "path:t"]
        );
    }

    #[test]
    fn reporting_options_and_carried_ones() {
        for o in [
            "--cov",
            "--cov=src",
            "--cov-report=xml",
            "-n",
            "-n4",
            "--junitxml=x.xml",
            "--no-cov",
        ] {
            assert!(reporting_only(o), "{o}");
        }
        for o in ["-x", "-k", "-p", "--import-mode=importlib", "-n-x"] {
            assert!(!reporting_only(o), "{o}");
        }
        let c = carried(&split(&ws(
            "--import-mode importlib -p no:cacheprovider --doctest-modules -pxdist -x",
        )));
        assert_eq!(
            c,
            [
                "--import-mode=importlib",
                "-p",
                "no:cacheprovider",
                "--doctest-modules",
                "-p",
                "xdist"
            ]
        );
        // A Django project's settings and where its apps import from.
        let c = carried(&split(&ws(
            "--ds proj.settings -o pythonpath=tests -o 'python_files=test*.py' -v --dc=Ci tests",
        )));
        assert_eq!(
            c,
            [
                "--ds=proj.settings",
                "-o",
                "pythonpath=tests",
                "-o",
                "python_files=test*.py",
                "--dc=Ci"
            ]
        );
    }
}
