use super::source_lines::LINE_RULES;
use super::*;
use std::collections::HashMap;

struct MapTree(HashMap<&'static str, &'static str>);
impl BaseTree for MapTree {
    fn read(&self, p: &str) -> Option<String> {
        self.0.get(p).map(|s| s.to_string())
    }
    fn exists(&self, p: &str) -> bool {
        self.0.contains_key(p)
    }
    fn file_count(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

fn add(path: &str, body: &str) -> String {
    let n = body.lines().count();
    let lines: String = body.lines().map(|l| format!("+{l}\n")).collect();
    format!(
        "diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{n} @@\n{lines}"
    )
}

fn modify(path: &str, at: usize, old: &str, new: &str) -> String {
    format!(
        "diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -{at},1 +{at},1 @@\n-{old}\n+{new}\n"
    )
}

fn rules_with(patch: &str, cfg: &PolicyConfig, base: &dyn BaseTree) -> Vec<Rule> {
    check(patch, cfg, base)
        .violations
        .into_iter()
        .map(|v| v.rule)
        .collect()
}

fn rules(patch: &str) -> Vec<Rule> {
    rules_with(patch, &PolicyConfig::default(), &NoBase)
}

#[test]
fn rust_and_node_test_configuration_is_rejected_for_their_kind_only() {
    use crate::sandbox::lang::ProjectKind;
    let cfg = |kind| PolicyConfig {
        kind,
        ..PolicyConfig::default()
    };
    let rust = cfg(ProjectKind::Rust);
    let node = cfg(ProjectKind::Node);
    for path in [
        "Cargo.toml",
        "crates/a/Cargo.toml",
        "Cargo.lock",
        ".cargo/config.toml",
        ".config/nextest.toml",
        "rust-toolchain.toml",
        "target/debug/x.d",
    ] {
        assert_eq!(
            rules_with(&modify(path, 1, "a", "b"), &rust, &NoBase),
            vec![Rule::TestConfig],
            "{path}"
        );
    }
    for line in [
        "    std::process::exit(0);",
        "use std::process::exit as quit;",
        "    unsafe { libc::_exit(0) }",
        "    fn _exit(code: i32) -> !;",
    ] {
        assert_eq!(
            rules_with(&modify("src/lib.rs", 3, "x", line), &rust, &NoBase),
            vec![Rule::ProcessExit],
            "{line}"
        );
    }
    for line in [
        "  process.exit(0);",
        "  process['exit'](0)",
        "  process.kill(process.pid, 'SIGKILL')",
    ] {
        assert_eq!(
            rules_with(&modify("src/stats.js", 3, "x", line), &node, &NoBase),
            vec![Rule::ProcessExit],
            "{line}"
        );
    }
    // Not in other kinds, not in tests, not for look-alikes.
    assert_eq!(
        rules(&modify("src/a.js", 1, "x", "process.exit(0)")),
        vec![]
    );
    assert_eq!(
        rules_with(
            &modify("src/lib.rs", 1, "x", "fn exit_code() -> i32 { 0 }"),
            &rust,
            &NoBase
        ),
        vec![]
    );
    for path in ["src/lib.rs", "build.rs", "src/median.rs"] {
        assert_eq!(
            rules_with(&modify(path, 1, "a", "b"), &rust, &NoBase),
            vec![],
            "{path}"
        );
    }
    for path in [
        "package.json",
        "package-lock.json",
        "jest.config.js",
        "jest.config.ts",
        "vitest.config.mjs",
        "babel.config.js",
        ".babelrc",
        "node_modules/jest-junit/index.js",
        "__mocks__/fs.js",
        "src/setupTests.js",
        ".npmrc",
    ] {
        assert_eq!(
            rules_with(&modify(path, 1, "a", "b"), &node, &NoBase),
            vec![Rule::TestConfig],
            "{path}"
        );
    }
    for path in ["src/stats.js", "src/jester.js", "lib/config.js"] {
        assert_eq!(
            rules_with(&modify(path, 1, "a", "b"), &node, &NoBase),
            vec![],
            "{path}"
        );
    }
    // Jest's own test-file conventions are test files for Node only.
    for path in ["src/stats.test.js", "src/__tests__/a.js", "lib/x.spec.ts"] {
        assert_eq!(
            rules_with(&modify(path, 1, "a", "b"), &node, &NoBase),
            vec![Rule::TestFile],
            "{path}"
        );
    }
    // Python projects are judged as before.
    assert_eq!(rules(&modify("package.json", 1, "a", "b")), vec![]);
    assert_eq!(rules(&modify("Cargo.toml", 1, "a", "b")), vec![]);
}

#[test]
fn plain_source_fix_passes() {
    assert_eq!(
        rules(&modify("calc.py", 2, "return a-b", "return a+b")),
        vec![]
    );
    assert_eq!(rules(&add("pkg/newmod.py", "X = 1")), vec![]);
}

#[test]
fn test_files_dirs_and_globs() {
    assert_eq!(
        rules(&modify("tests/test_a.py", 1, "a", "b")),
        vec![Rule::TestFile]
    );
    assert_eq!(
        rules(&modify("Tests/x.py", 1, "a", "b")),
        vec![Rule::TestFile]
    );
    assert_eq!(rules(&add("pkg/test_util.py", "x")), vec![Rule::TestFile]);
    let cfg = PolicyConfig {
        test_globs: vec!["fixtures/**".into()],
        tests_dirs: vec!["t".into()],
        ..Default::default()
    };
    assert_eq!(
        rules_with(&modify("fixtures/a.json", 1, "a", "b"), &cfg, &NoBase),
        vec![Rule::TestFile]
    );
    assert_eq!(
        rules_with(&modify("t/a.py", 1, "a", "b"), &cfg, &NoBase),
        vec![Rule::TestFile]
    );
    // A file next to the tests, but not a test.
    assert_eq!(
        rules(&modify("pkg/testing_helpers.py", 1, "a", "b")),
        vec![]
    );
}

#[test]
fn rename_out_of_tests_is_a_test_edit() {
    let p = "diff --git a/tests/test_a.py b/attic.py\nsimilarity index 100%\nrename from tests/test_a.py\nrename to attic.py\n";
    assert_eq!(rules(p), vec![Rule::TestFile]);
}

#[test]
fn test_config_files() {
    for p in [
        "conftest.py",
        "src/pkg/conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
    ] {
        assert!(rules(&add(p, "x")).contains(&Rule::TestConfig), "{p}");
    }
}

#[test]
fn packaging_and_plugin_surfaces() {
    for p in [
        "textkit_plug-0.1.dist-info/entry_points.txt",
        "src/Evil.Dist-Info/METADATA",
        "textkit.egg-info/entry_points.txt",
        "lib/entry_points.txt",
        "x.egg-link",
    ] {
        assert!(
            rules(&add(p, "[pytest11]\nx = textkit.plug\n")).contains(&Rule::PluginSurface),
            "{p}"
        );
    }
    // pytest_plugins anywhere outside the tests (conftests are test config already).
    assert_eq!(
        rules(&add(
            "textkit/__init__.py",
            "pytest_plugins = ['textkit.plug']"
        )),
        vec![Rule::PluginSurface]
    );
    let cfg = PolicyConfig::default();
    // Entry points in setup.py, setup.cfg and pyproject.toml.
    let base = MapTree(HashMap::from([
        (
            "setup.py",
            "from setuptools import setup\nsetup(name='x')\n",
        ),
        (
            "setup.cfg",
            "[metadata]\nname = x\n[options.entry_points]\nconsole_scripts =\n    x = x:main\n",
        ),
        (
            "pyproject.toml",
            "[project]\nname = \"x\"\n[project.entry-points.pytest11]\nx = \"x.plug\"\n",
        ),
    ]));
    assert_eq!(
        rules_with(
            &modify(
                "setup.py",
                2,
                "setup(name='x')",
                "setup(name='x', entry_points={'pytest11': ['x = x']})"
            ),
            &cfg,
            &base
        ),
        vec![Rule::PluginSurface]
    );
    assert_eq!(
        rules_with(
            &modify("setup.cfg", 5, "    x = x:main", "    x = x:cli"),
            &cfg,
            &base
        ),
        vec![Rule::PluginSurface]
    );
    assert_eq!(
        rules_with(
            &modify("pyproject.toml", 4, "x = \"x.plug\"", "y = \"x.plug\""),
            &cfg,
            &base
        ),
        vec![Rule::PluginSurface]
    );
    let p = "diff --git a/pyproject.toml b/pyproject.toml\n--- a/pyproject.toml\n+++ b/pyproject.toml\n@@ -2,0 +3,2 @@\n+[project.entry-points.\"pytest11\"]\n+y = \"x.plug\"\n";
    assert_eq!(rules_with(p, &cfg, &base), vec![Rule::PluginSurface]);
    // Ordinary metadata changes stay allowed.
    assert_eq!(
        rules_with(&modify("setup.cfg", 2, "name = x", "name = y"), &cfg, &base),
        vec![]
    );
    assert_eq!(
        rules_with(
            &modify("pyproject.toml", 2, "name = \"x\"", "name = \"y\""),
            &cfg,
            &base
        ),
        vec![]
    );
}

#[test]
fn setup_cfg_pytest_section_only() {
    let base = MapTree(HashMap::from([(
        "setup.cfg",
        "[metadata]\nname = x\n[tool:pytest]\naddopts = -q\n",
    )]));
    let cfg = PolicyConfig::default();
    assert_eq!(
        rules_with(
            &modify("setup.cfg", 4, "addopts = -q", "addopts = --co"),
            &cfg,
            &base
        ),
        vec![Rule::TestConfig]
    );
    assert_eq!(
        rules_with(&modify("setup.cfg", 2, "name = x", "name = y"), &cfg, &base),
        vec![]
    );
    // Without the base text an existing file's hunk cannot be cleared.
    assert_eq!(
        rules(&modify("setup.cfg", 2, "name = x", "name = y")),
        vec![Rule::TestConfig]
    );
    // Adding a pytest section to tox.ini.
    let base = MapTree(HashMap::from([("tox.ini", "[tox]\nenvlist = py3\n")]));
    let p = "diff --git a/tox.ini b/tox.ini\n--- a/tox.ini\n+++ b/tox.ini\n@@ -2,0 +3,2 @@\n+[pytest]\n+addopts = --deselect x\n";
    assert_eq!(rules_with(p, &cfg, &base), vec![Rule::TestConfig]);
}

#[test]
fn pyproject_pytest_tables_and_dotted_keys() {
    let text = "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n\n[tool]\nblack = 1\n";
    let base = MapTree(HashMap::from([("pyproject.toml", text)]));
    let cfg = PolicyConfig::default();
    assert_eq!(
        rules_with(
            &modify(
                "pyproject.toml",
                5,
                "addopts = \"-q\"",
                "addopts = \"--co\""
            ),
            &cfg,
            &base
        ),
        vec![Rule::TestConfig]
    );
    assert_eq!(
        rules_with(
            &modify("pyproject.toml", 2, "name = \"x\"", "name = \"y\""),
            &cfg,
            &base
        ),
        vec![]
    );
    assert_eq!(
        rules_with(
            &modify(
                "pyproject.toml",
                8,
                "black = 1",
                "pytest.ini_options.addopts = \"--co\""
            ),
            &cfg,
            &base
        ),
        vec![Rule::TestConfig]
    );
}

#[test]
fn startup_hooks_ci_and_git_metadata() {
    assert_eq!(
        rules(&add("sitecustomize.py", "x")),
        vec![Rule::StartupHook]
    );
    assert_eq!(
        rules(&add("src/usercustomize.py", "x")),
        vec![Rule::StartupHook]
    );
    assert_eq!(
        rules(&add("evil.pth", "import os")),
        vec![Rule::StartupHook]
    );
    assert_eq!(
        rules(&add(".github/workflows/ci.yml", "x")),
        vec![Rule::CiConfig]
    );
    let cfg = PolicyConfig {
        allowed_ci_paths: vec![".github/workflows/*.yml".into()],
        ..Default::default()
    };
    assert_eq!(
        rules_with(&add(".github/workflows/ci.yml", "x"), &cfg, &NoBase),
        vec![]
    );
    assert_eq!(rules(&add(".gitmodules", "x")), vec![Rule::GitMetadata]);
    assert_eq!(
        rules(&add(".gitattributes", "* filter=x")),
        vec![Rule::GitMetadata]
    );
}

#[test]
fn symlinks_modes_binary_bytecode() {
    let link = "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n";
    assert_eq!(rules(link), vec![Rule::Symlink]);
    let mode = "diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n";
    assert_eq!(rules(mode), vec![Rule::ModeChange]);
    let exe = "diff --git a/x.sh b/x.sh\nnew file mode 100755\n--- /dev/null\n+++ b/x.sh\n@@ -0,0 +1 @@\n+x\n";
    assert_eq!(rules(exe), vec![Rule::ModeChange]);
    let bin =
        "diff --git a/a.bin b/a.bin\nindex 1..2 100644\nBinary files a/a.bin and b/a.bin differ\n";
    assert_eq!(rules(bin), vec![Rule::Binary]);
    assert_eq!(
        rules(&add("pkg/__pycache__/m.cpython-311.pyc", "x")),
        vec![Rule::Bytecode]
    );
    let sub = "diff --git a/vendor b/vendor\nnew file mode 160000\nindex 0000000..abc\n--- /dev/null\n+++ b/vendor\n@@ -0,0 +1 @@\n+Subproject commit abc\n";
    assert_eq!(rules(sub), vec![Rule::GitMetadata]);
}

#[test]
fn unsafe_paths() {
    for p in [
        "../x.py",
        "a/../../x.py",
        "/etc/passwd",
        ".git/config",
        ".GIT/hooks/pre-commit",
        ".git /config",
        ".git./config",
        "x.py ",
        "a\u{200B}b.py",
        "a\\b.py",
    ] {
        assert!(safe_path(p).is_err(), "{p:?}");
    }
    for p in ["src/a.py", "-rf.py", "$(touch x).py", "docs/é.md"] {
        assert!(safe_path(p).is_ok(), "{p:?}");
    }
    assert_eq!(rules(&add("../up.py", "x")), vec![Rule::UnsafePath]);
}

#[test]
fn oversized_and_malformed() {
    let cfg = PolicyConfig {
        max_patch_bytes: 10,
        ..Default::default()
    };
    assert_eq!(
        rules_with(&add("a.py", "x = 1"), &cfg, &NoBase),
        vec![Rule::Oversized]
    );
    let cfg = PolicyConfig {
        max_files: 1,
        ..Default::default()
    };
    let two = format!("{}{}", add("a.py", "x"), add("b.py", "y"));
    assert_eq!(rules_with(&two, &cfg, &NoBase), vec![Rule::Oversized]);
    assert_eq!(rules("nothing here"), vec![Rule::Malformed]);
    // No patch at all (a search that ended without one) is said as such.
    assert_eq!(rules(""), vec![Rule::Empty]);
    assert_eq!(rules("\n"), vec![Rule::Empty]);
}

#[test]
fn deleting_most_of_the_repo() {
    let files: Vec<&'static str> = (0..12)
        .map(|i| &*Box::leak(format!("m{i}.py").into_boxed_str()))
        .collect();
    let base = MapTree(files.iter().map(|f| (*f, "x")).collect());
    let p: String = files
        .iter()
        .map(|f| format!("diff --git a/{f} b/{f}\ndeleted file mode 100644\n--- a/{f}\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"))
        .collect();
    assert_eq!(
        rules_with(&p, &PolicyConfig::default(), &base),
        vec![Rule::Oversized]
    );
}

#[test]
fn pytest_tampering_in_source() {
    assert_eq!(
        rules(&add(
            "calc.py",
            "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None"
        )),
        vec![Rule::PytestTamper, Rule::PytestTamper]
    );
    assert_eq!(
        rules(&add("calc.py", "import pytest")),
        vec![Rule::PytestTamper]
    );
    assert_eq!(
        rules(&add("calc.py", "import os\nos._exit(0)")),
        vec![Rule::ProcessExit]
    );
    assert_eq!(
        rules(&add("calc.py", "import builtins\nbuiltins.print = None")),
        vec![Rule::PytestTamper]
    );
    let cfg = PolicyConfig {
        allow_pytest_imports: true,
        ..Default::default()
    };
    assert_eq!(
        rules_with(&add("plugin.py", "import pytest"), &cfg, &NoBase),
        vec![]
    );
    // Comparisons are not assignments.
    assert_eq!(rules(&add("calc.py", "ok = builtins.x == 1")), vec![]);
    assert_eq!(LINE_RULES.len(), 8, "every pattern compiles");
}

#[test]
fn new_top_level_modules_are_listed_and_judged() {
    let base = MapTree(HashMap::from([("calc.py", "x"), ("src/pkg", "")]));
    let cfg = PolicyConfig {
        import_roots: vec!["".into(), "src".into()],
        ..Default::default()
    };
    let p = [
        add("json.py", "x"),
        add("pytest/__init__.py", "x"),
        add("src/pkg/new.py", "x"),
        add("src/helpers.py", "x"),
        add("calc.py", "x"),
    ]
    .concat();
    let r = check(&p, &cfg, &base);
    assert_eq!(r.new_modules, vec!["helpers", "json", "pytest", "src"]);
    let v = shadow_violations(&r.new_modules, &|n| n == "helpers");
    let names: Vec<_> = v.iter().map(|v| v.path.as_str()).collect();
    assert_eq!(names, vec!["helpers", "json", "pytest"]);
    assert!(v.iter().all(|v| v.rule == Rule::ShadowModule));
}

#[test]
fn doctest_ids_name_their_files_and_test_functions_do_not() {
    let files = doctest_files([
        "README.rst::README.rst",
        "checks.py::checks",
        "pkg/mod.py::pkg.mod.func",
        "dnslib/__init__.py::dnslib",
        "tests/test_a.py::test_a",
        "t.py::test_b[1.5]",
        "tests/test_c.py::TestC::test_d",
    ]);
    let want: BTreeSet<String> = [
        "README.rst",
        "checks.py",
        "pkg/mod.py",
        "dnslib/__init__.py",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(files, want);
}

#[test]
fn a_changed_doctest_example_of_a_file_the_suite_ran_doctests_of_is_refused() {
    let file = "\"\"\"Median.\n\n>>> median([4, 1, 3, 2])\n2.5\n>>> median(\n...     [1])\n1\n\nMore text.\n\"\"\"\n\ndef median(v):\n    return v[0]\n";
    let edit = |old: &str, new: &str| {
        let at = file.find(old).unwrap();
        let mut after = file.to_string();
        after.replace_range(at..at + old.len(), new);
        let body = similar::TextDiff::from_lines(file, after.as_str())
            .unified_diff()
            .context_radius(3)
            .header("a/m.py", "b/m.py")
            .to_string();
        diff::parse(&format!("diff --git a/m.py b/m.py\n{body}")).unwrap()
    };
    let ran: BTreeSet<String> = ["m.py".to_string()].into();
    // The expected output, a source line and a continuation are the test.
    for (old, new) in [
        ("2.5\n", "3\n"),
        (">>> median([4, 1, 3, 2])", ">>> median([4, 1, 3])"),
        ("...     [1])", "...     [2])"),
    ] {
        let v = doctest_edits(&edit(old, new), &ran);
        assert_eq!(v.len(), 1, "{old:?} → {new:?}");
        assert_eq!(v[0].rule, Rule::Doctest);
    }
    // The code, and prose after a blank line, are not; nor any file whose doctests no run
    // collected.
    assert!(doctest_edits(&edit("return v[0]", "return sorted(v)[0]"), &ran).is_empty());
    assert!(doctest_edits(&edit("More text.", "Other text."), &ran).is_empty());
    assert!(doctest_edits(&edit("2.5\n", "3\n"), &BTreeSet::new()).is_empty());
}
