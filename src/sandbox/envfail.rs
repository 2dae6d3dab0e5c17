//! Failures that are suspected environmental (pure): when the image's Python differs from the
//! one the repository's CI tests with (offline, the CI's interpreter cannot be had), a test that
//! fails only because of that is not the repair's task. Suspected when its traceback ends
//! outside the repository (the standard library or site-packages: a removed or changed API, a
//! changed repr), when the error is a `DeprecationWarning` raised as an error, or when it
//! imports a module the standard library no longer has.

use std::sync::LazyLock;

use regex::Regex;

/// Standard-library modules removed in Python 3.12/3.13 (PEP 594, distutils, imp).
const REMOVED_STDLIB: &[&str] = &[
    "imp",
    "distutils",
    "asynchat",
    "asyncore",
    "smtpd",
    "cgi",
    "cgitb",
    "crypt",
    "imghdr",
    "mailcap",
    "msilib",
    "nis",
    "nntplib",
    "ossaudiodev",
    "pipes",
    "sndhdr",
    "spwd",
    "sunau",
    "telnetlib",
    "uu",
    "xdrlib",
    "lib2to3",
    "audioop",
    "chunk",
];

// pytest's long and short formats (`path.py:12: in f`, `path.py:12: Error`) and the plain
// traceback's `File "path.py", line 12`.
static LOCATION: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"(?m)^\s*(?:File "([^"]+\.py)", line \d+|([^\s:"]+\.py):\d+:)"#).ok()
});
static NO_MODULE: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"No module named '([\w.]+)'").ok());

/// Why a failure (its traceback text, as JUnit keeps it) is suspected environmental, or `None`.
/// `workspace` is where the repository lives (relative paths are inside it).
pub fn suspected(text: &str, workspace: &str) -> Option<String> {
    if text.contains("DeprecationWarning") && !text.contains("DeprecationWarning was not raised") {
        let last = text
            .lines()
            .rev()
            .find(|l| l.contains("DeprecationWarning"))?;
        if last.trim_start().starts_with("E ") || last.contains("Warning:") {
            return Some("a DeprecationWarning raised as an error".into());
        }
    }
    if let Some(m) = NO_MODULE.as_ref().and_then(|r| r.captures(text)) {
        let top = m[1].split('.').next().unwrap_or("");
        if REMOVED_STDLIB.contains(&top) {
            return Some(format!(
                "it imports `{top}`, which this Python's standard library no longer has"
            ));
        }
    }
    let last = LOCATION
        .as_ref()?
        .captures_iter(text)
        .filter_map(|c| c.get(1).or(c.get(2)).map(|m| m.as_str().to_string()))
        .last()?;
    let ws = workspace.trim_end_matches('/');
    let inside = !last.starts_with('/') || last.starts_with(&format!("{ws}/"));
    (!inside).then(|| format!("its traceback ends outside the repository, in {last}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracebacks_ending_outside_the_repository_are_suspected() {
        let stdlib = "tests/test_x.py:5: in test_x\n    assert mod.f() == 1\nmod.py:3: in f\n    return collections.Mapping\n/usr/lib/python3.11/collections/__init__.py:1: in __getattr__\n    raise AttributeError\nE   AttributeError: module 'collections' has no attribute 'Mapping'";
        let why = suspected(stdlib, "/workspace").unwrap();
        assert!(
            why.contains("/usr/lib/python3.11/collections/__init__.py"),
            "{why}"
        );
        let site = "File \"/workspace/pkg/a.py\", line 3, in f\nFile \"/opt/venv/lib/python3.11/site-packages/dateutil/tz.py\", line 9, in g\nTypeError: x";
        assert!(suspected(site, "/workspace").is_some());
        // The bug's own frame last: the repair's task.
        let own = "tests/test_x.py:5: in test_x\n    assert f() == 2\n/usr/lib/python3.11/json/__init__.py:3: in loads\n    x\npkg/mod.py:9: in f\n    return 1\nE   AssertionError";
        assert_eq!(suspected(own, "/workspace"), None);
        assert_eq!(
            suspected(
                "File \"/workspace/pkg/a.py\", line 3\nValueError",
                "/workspace"
            ),
            None
        );
    }

    #[test]
    fn deprecation_errors_and_removed_modules() {
        let dep = "pkg/a.py:4: in f\n    datetime.utcnow()\nE   DeprecationWarning: datetime.datetime.utcnow() is deprecated";
        assert_eq!(
            suspected(dep, "/workspace").as_deref(),
            Some("a DeprecationWarning raised as an error")
        );
        let imp = "tests/test_a.py:1: in <module>\n    import imp\nE   ModuleNotFoundError: No module named 'imp'";
        assert!(suspected(imp, "/workspace").unwrap().contains("`imp`"));
        let own_module = "E   ModuleNotFoundError: No module named 'mypkg'";
        assert_eq!(suspected(own_module, "/workspace"), None);
    }
}
