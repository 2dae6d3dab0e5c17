//! A test's id, parsed where it enters (a CI log, a JUnit report, a task file, a flag) and
//! taken apart only here: `tests/test_x.py::TestK::test_m[a-b]` is a file, the classes and the
//! test's name with its parameters. Parameters may hold `::` and brackets of their own (an
//! IPv6 URL, `test_y[a::b]`), so every split respects them; nothing outside this module
//! splits an id on `::`. Pure.

use std::fmt;

use serde::{Deserialize, Serialize};

/// One test's id (pytest's node id for Python; `file::name` for the JUnit harness's runners).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(transparent)]
pub struct TestId(String);

impl TestId {
    pub fn new(id: impl Into<String>) -> TestId {
        let s: String = id.into();
        match s.trim() {
            t if t.len() == s.len() => TestId(s),
            t => TestId(t.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The file part (`tests/test_x.py`; the whole id when it has no `::`).
    pub fn file(&self) -> &str {
        file_of(&self.0)
    }

    /// The names after the file: classes, then the test's name with its parameters.
    pub fn names(&self) -> Vec<&str> {
        let mut p = parts(&self.0);
        p.remove(0);
        p
    }

    /// The test's name with its parameters (`test_m[a-b]`).
    pub fn name(&self) -> Option<&str> {
        self.names().last().copied()
    }

    /// The test function's name, without parameters (`test_m`).
    pub fn function(&self) -> Option<&str> {
        self.name().map(|n| n.split('[').next().unwrap_or(n))
    }

    /// The innermost class, when the test is a method.
    pub fn class(&self) -> Option<&str> {
        let n = self.names();
        (n.len() >= 2).then(|| n[n.len() - 2])
    }

    /// pytest's section title of the test in a report: `TestK.test_m[a-b]`.
    pub fn title(&self) -> String {
        self.names().join(".")
    }

    /// A pytest node id of a `.py` file with a name after it.
    pub fn is_pytest(&self) -> bool {
        self.file().ends_with(".py") && !self.names().is_empty()
    }

    /// pytest can select it on the command line: a `path.py::…` id whose parameters hold no
    /// `::` (pytest would split the id there).
    pub fn selectable(&self) -> bool {
        self.is_pytest()
            && self
                .name()
                .and_then(|n| n.find('[').map(|i| &n[i..]))
                .is_none_or(|p| !p.contains("::"))
    }

    /// Whether a name given by a user or a log (`tests/test_a.py`, `tests/test_a.py::TestK`)
    /// names this test: the same id, or a file / class prefix of it.
    pub fn is_named_by(&self, named: &str) -> bool {
        self.0 == named
            || self
                .0
                .strip_prefix(named)
                .is_some_and(|rest| rest.starts_with("::"))
    }

    /// The key pytest's JUnit report gives this test: `tests.test_x.TestK::test_m[a-b]`.
    pub fn junit_key(&self) -> String {
        let p = parts(&self.0);
        let module = p[0].strip_suffix(".py").unwrap_or(p[0]).replace('/', ".");
        match p[1..].split_last() {
            Some((name, classes)) => {
                let mut classname = module;
                for c in classes {
                    classname.push('.');
                    classname.push_str(c);
                }
                junit_key(&classname, name)
            }
            // A module-level entry (a collection error): no classname, the module as name.
            None => junit_key("", &module),
        }
    }

    /// Best-effort id of a JUnit key whose file is unknown: classes are the trailing dotted
    /// parts that start with an upper-case letter (pytest's default `python_classes = Test*`).
    pub fn from_junit_key(k: &str) -> TestId {
        // The dotted classname never contains `::`; the name may (in its parameters).
        let (classname, name) = k.split_once("::").unwrap_or(("", k));
        if classname.is_empty() {
            return TestId(format!("{}.py", name.replace('.', "/")));
        }
        let dotted: Vec<&str> = classname.split('.').collect();
        let mut split = dotted.len();
        while split > 1
            && dotted[split - 1]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_uppercase())
        {
            split -= 1;
        }
        let mut id = format!("{}.py", dotted[..split].join("/"));
        for c in &dotted[split..] {
            id.push_str("::");
            id.push_str(c);
        }
        id.push_str("::");
        id.push_str(name);
        TestId(id)
    }
}

/// The JUnit lookup key of a testcase element.
pub fn junit_key(classname: &str, name: &str) -> String {
    format!("{classname}::{name}")
}

/// The file part of an id given as text (see [`TestId::file`]).
pub fn file_of(id: &str) -> &str {
    id.split_once("::").map_or(id, |(f, _)| f)
}

/// The id split on `::` outside its parameters: file, classes, name (with parameters). The
/// parameter part starts at the first `[` after the file part; names never contain `[`.
pub fn parts(id: &str) -> Vec<&str> {
    let file_end = id.find("::").unwrap_or(id.len());
    let params_at = id[file_end..].find('[').map_or(id.len(), |i| file_end + i);
    let (head, params) = id.split_at(params_at);
    let mut out: Vec<&str> = head.split("::").collect();
    if !params.is_empty() {
        // The parameters stay on the last name (a sub-slice of the original id).
        let last = out.pop().unwrap_or("");
        let start = head.len() - last.len();
        out.push(&id[start..]);
    }
    out
}

/// Whether `id` is a doctest pytest collected: `README.rst::README.rst` (a text file),
/// `pkg/mod.py::pkg.mod.func` or `checks.py::checks` (a module's docstrings: the name is
/// dotted, or the module's or its package's own). A test function's id (`tests/t.py::test_a`,
/// `t.py::test_b[1.5]`) is not one; nor is `tests/test_a.py::test_a`, a function named for
/// its test file.
pub fn is_doctest(id: &str) -> bool {
    let [file, name] = parts(id)[..] else {
        return false;
    };
    if name.contains('[') {
        return false;
    }
    let stem = file.rsplit('/').next().unwrap_or(file);
    let stem = stem.strip_suffix(".py").unwrap_or(stem);
    let package = file
        .strip_suffix("/__init__.py")
        .map(|d| d.rsplit('/').next().unwrap_or(d));
    let test_file = stem.starts_with("test") || stem.ends_with("_test");
    !file.ends_with(".py")
        || name.contains('.')
        || (name == stem && !test_file)
        || package == Some(name)
}

/// The distinct files of `ids`, in order.
pub fn files<'a>(ids: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in ids {
        let f = file_of(id);
        if !f.is_empty() && !out.iter().any(|o| o == f) {
            out.push(f.to_string());
        }
    }
    out
}

impl fmt::Display for TestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for TestId {
    fn from(s: &str) -> TestId {
        TestId::new(s)
    }
}

impl From<String> for TestId {
    fn from(s: String) -> TestId {
        TestId::new(s)
    }
}

impl AsRef<str> for TestId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for TestId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for TestId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_is_taken_apart_around_its_parameters() {
        let t = TestId::new(" tests/test_x.py::TestK::test_m[https://[::1]:80/] ");
        assert_eq!(t.file(), "tests/test_x.py");
        assert_eq!(t.names(), ["TestK", "test_m[https://[::1]:80/]"]);
        assert_eq!(t.function(), Some("test_m"));
        assert_eq!(t.class(), Some("TestK"));
        assert_eq!(t.title(), "TestK.test_m[https://[::1]:80/]");
        assert!(t.is_pytest() && !t.selectable());
        let p = TestId::new("tests/test_c.py::test_evicts[LRU]");
        assert!(p.selectable());
        assert_eq!(p.class(), None);
        assert!(p.is_named_by("tests/test_c.py"));
        assert!(!p.is_named_by("tests/test_c"));
        assert!(!TestId::new("tests/stats.test.js::median › odd").is_pytest());
    }

    #[test]
    fn junit_keys_round_trip() {
        for id in [
            "tests/test_x.py::TestK::test_m[a::b]",
            "tests/test_x.py::test_f",
            "pkg/tests/test_y.py::TestA::TestB::t",
        ] {
            let t = TestId::new(id);
            assert_eq!(TestId::from_junit_key(&t.junit_key()), t, "{id}");
        }
        assert_eq!(TestId::new("tests/test_x.py").junit_key(), "::tests.test_x");
        assert_eq!(files(["a.py::x", "b.py::y", "a.py::z"]), ["a.py", "b.py"]);
    }
}
