//! The patch policy: which changes a candidate fix may make at all, judged on the diff alone
//! (plus the pre-patch text of config files, to tell a `[tool:pytest]` hunk from any other).
//!
//! Pure: no I/O. Every rejection names its [`Rule`], so receipts and corpora can assert the reason.
//! The one check that needs the image (does a new top-level module name resolve to an installed
//! or standard module?) is split: [`new_top_level_modules`] lists candidates here and
//! [`shadow_violations`] judges them with whatever resolver the caller has.

use std::collections::BTreeSet;
use std::fmt;

use serde::Serialize;

use super::diff::{self, ChangeKind, FilePatch, HunkLine};
use super::glob;

mod config_files;
mod modules;
mod source_lines;

use config_files::{config_sections, entry_point_sections};
pub use modules::{KNOWN_MODULES, new_top_level_modules, shadow_violations};
use source_lines::{lang_exit_scan, scan_line};

/// The named rules a patch can break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The patch text could not be parsed.
    Malformed,
    /// There is no patch: the repair ended without a change (an eval task is judged anyway).
    Empty,
    /// A path escapes the repository or names git's own directory.
    UnsafePath,
    Oversized,
    /// A file under the test directories or matching the test globs.
    TestFile,
    /// Test configuration: conftest.py, pytest.ini, the pytest sections of tox/setup/pyproject.
    TestConfig,
    /// Interpreter start-up hooks: sitecustomize, usercustomize, `.pth`.
    StartupHook,
    /// `.github/**` not explicitly allowed.
    CiConfig,
    /// `.gitmodules`, `.gitattributes`, submodules.
    GitMetadata,
    Symlink,
    ModeChange,
    Binary,
    /// `__pycache__` / `*.pyc`.
    Bytecode,
    /// A new top-level module that shadows a standard-library or installed one.
    ShadowModule,
    /// Code outside the tests that reaches into pytest/pluggy internals.
    PytestTamper,
    /// `os._exit` in code under test: it ends the run before any report is written.
    ProcessExit,
    /// Packaging metadata and plugin registration: `*.dist-info`/`*.egg-info`,
    /// `entry_points.txt`, entry points in setup.py/setup.cfg/pyproject.toml, `pytest_plugins`
    /// outside the test tree's conftest. pytest loads plugins from all of them without a conftest.
    PluginSurface,
    /// An example of a doctest the suite runs (its `>>>` source or expected output): a test
    /// inside the code, in a file no test glob names.
    Doctest,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        f.write_str(&s)
    }
}

/// One broken rule, with the file and a sentence a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub rule: Rule,
    pub path: String,
    pub detail: String,
}

/// What the policy knows about the repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(default)]
pub struct PolicyConfig {
    /// Workspace-relative test directories (the prepared image's `patchloop.tests_dirs`).
    pub tests_dirs: Vec<String>,
    /// Further test-owned paths (fixtures, snapshots, test files next to sources).
    pub test_globs: Vec<String>,
    /// Globs under `.github/` a patch may change (off by default).
    pub allowed_ci_paths: Vec<String>,
    pub max_patch_bytes: usize,
    pub max_files: usize,
    /// Directories whose top-level modules are importable (the workspace root, `src`, …).
    pub import_roots: Vec<String>,
    /// Allow `import pytest` in non-test code (for projects that are pytest plugins).
    pub allow_pytest_imports: bool,
    /// The project kind (the prepared image's `patchloop.kind`): adds its test-configuration
    /// rules ([`lang_config_reason`]) and test-file names.
    pub kind: crate::sandbox::lang::ProjectKind,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            tests_dirs: vec!["tests".into()],
            test_globs: default_test_globs(),
            allowed_ci_paths: Vec::new(),
            max_patch_bytes: 1 << 20,
            max_files: 200,
            import_roots: vec![String::new()],
            allow_pytest_imports: false,
            kind: crate::sandbox::lang::ProjectKind::Python,
        }
    }
}

/// The files whose doctests a run collected, read off its test ids
/// ([`crate::testid::is_doctest`]).
pub fn doctest_files<'a>(ids: impl IntoIterator<Item = &'a str>) -> BTreeSet<String> {
    ids.into_iter()
        .filter(|id| crate::testid::is_doctest(id))
        .map(|id| crate::testid::file_of(id).to_string())
        .collect()
}

/// Where [`doctest_edits`]' walk through a hunk is.
#[derive(PartialEq, Eq)]
enum Walk {
    Outside,
    /// A `>>>` line or its `...` continuation.
    Source,
    /// The expected output after it.
    Output,
}

/// Changes the patch makes to the doctest examples of `files` (each file's first): a `>>>`
/// line, its `...` continuation, or the expected output after it, up to a blank line or the
/// docstring's end. A doctest the suite runs is a test, and a patch may not edit tests.
pub fn doctest_edits(patch: &[FilePatch], files: &BTreeSet<String>) -> Vec<Violation> {
    let mut out = Vec::new();
    for f in patch.iter().filter(|f| files.contains(f.path())) {
        let edit = f.hunks.iter().find_map(|h| {
            let mut at = Walk::Outside;
            for line in &h.lines {
                let (text, changed) = match line {
                    HunkLine::Context(t) => (t, false),
                    HunkLine::Added(t) | HunkLine::Removed(t) => (t, true),
                };
                let t = text.trim();
                let part = if t.starts_with(">>>") {
                    at = Walk::Source;
                    true
                } else if at == Walk::Source && t.starts_with("...") {
                    true
                } else if t.is_empty() || t.starts_with("\"\"\"") || t.starts_with("'''") {
                    at = Walk::Outside;
                    false
                } else if at != Walk::Outside {
                    at = Walk::Output;
                    true
                } else {
                    false
                };
                if changed && part {
                    return Some(t.to_string());
                }
            }
            None
        });
        if let Some(line) = edit {
            out.push(Violation {
                rule: Rule::Doctest,
                path: f.path().to_string(),
                detail: format!(
                    "the suite runs this file's doctests, and the patch changes one of their examples (`{}`): a doctest is a test",
                    line.chars().take(120).collect::<String>()
                ),
            });
        }
    }
    out
}

pub fn default_test_globs() -> Vec<String> {
    ["test_*.py", "*_test.py", "**/tests/**", "**/test/**"]
        .into_iter()
        .map(String::from)
        .collect()
}

/// Read access to the pre-patch tree (the user's checkout, never the agent's workspace).
pub trait BaseTree: Sync {
    fn read(&self, path: &str) -> Option<String>;
    fn exists(&self, path: &str) -> bool;
    /// Number of tracked files, when known (to spot "delete most of the repo").
    fn file_count(&self) -> Option<usize>;
}

/// A base tree that knows nothing: config hunks in existing files are judged conservatively.
pub struct NoBase;

impl BaseTree for NoBase {
    fn read(&self, _: &str) -> Option<String> {
        None
    }
    fn exists(&self, _: &str) -> bool {
        false
    }
    fn file_count(&self) -> Option<usize> {
        None
    }
}

/// A directory on the host (the user's `--repo`).
pub struct DirTree(pub std::path::PathBuf);

impl BaseTree for DirTree {
    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.0.join(path)).ok()
    }
    fn exists(&self, path: &str) -> bool {
        self.0.join(path).exists()
    }
    fn file_count(&self) -> Option<usize> {
        None
    }
}

/// The parsed patch and everything the policy found in it.
#[derive(Debug, Clone)]
pub struct PolicyReport {
    pub files: Vec<FilePatch>,
    pub violations: Vec<Violation>,
    /// New top-level module names, still to be checked against the image.
    pub new_modules: Vec<String>,
}

impl PolicyReport {
    pub fn first_rule(&self) -> Option<Rule> {
        self.violations.first().map(|v| v.rule)
    }
}

/// Judge a patch. Violations come in patch order; nothing is rejected silently.
pub fn check(patch: &str, cfg: &PolicyConfig, base: &dyn BaseTree) -> PolicyReport {
    let mut violations = Vec::new();
    if patch.len() > cfg.max_patch_bytes {
        violations.push(Violation {
            rule: Rule::Oversized,
            path: String::new(),
            detail: format!(
                "the patch is {} bytes; the limit is {}",
                patch.len(),
                cfg.max_patch_bytes
            ),
        });
    }
    let files = match diff::parse(patch) {
        Ok(f) => f,
        Err(e) => {
            // Text that is not a diff is malformed; no text at all is no patch.
            violations.push(if patch.trim().is_empty() {
                Violation {
                    rule: Rule::Empty,
                    path: String::new(),
                    detail: "there is no patch to judge: the repair ended without a change".into(),
                }
            } else {
                Violation {
                    rule: Rule::Malformed,
                    path: String::new(),
                    detail: format!("the patch cannot be read: {e}"),
                }
            });
            return PolicyReport {
                files: Vec::new(),
                violations,
                new_modules: Vec::new(),
            };
        }
    };
    if files.len() > cfg.max_files {
        violations.push(Violation {
            rule: Rule::Oversized,
            path: String::new(),
            detail: format!(
                "the patch changes {} files; the limit is {}",
                files.len(),
                cfg.max_files
            ),
        });
    }
    let deleted = files
        .iter()
        .filter(|f| f.kind == ChangeKind::Deleted)
        .count();
    if let Some(total) = base.file_count()
        && deleted > 10
        && deleted * 2 > total
    {
        violations.push(Violation {
            rule: Rule::Oversized,
            path: String::new(),
            detail: format!("the patch deletes {deleted} of the repository's {total} files"),
        });
    }
    for f in &files {
        check_file(f, cfg, base, &mut violations);
    }
    let new_modules = new_top_level_modules(&files, cfg, base);
    PolicyReport {
        files,
        violations,
        new_modules,
    }
}

fn check_file(f: &FilePatch, cfg: &PolicyConfig, base: &dyn BaseTree, out: &mut Vec<Violation>) {
    let mut push = |rule: Rule, path: &str, detail: String| {
        out.push(Violation {
            rule,
            path: path.to_string(),
            detail,
        })
    };
    for path in f.paths() {
        if let Err(why) = safe_path(path) {
            push(Rule::UnsafePath, path, why);
            // Nothing else about an unusable path is worth saying.
            return;
        }
    }
    for path in f.paths() {
        let lower = path.to_ascii_lowercase();
        let name = lower.rsplit('/').next().unwrap_or("");
        if is_test_path(path, cfg) {
            push(
                Rule::TestFile,
                path,
                "tests are read-only for a fix: the patch must change the code, not the tests"
                    .into(),
            );
        }
        if let Some(why) = lang_config_reason(cfg.kind, path) {
            push(
                Rule::TestConfig,
                path,
                format!("`{path}`: {why}; a fix may not change it"),
            );
        }
        if matches!(
            name,
            "conftest.py" | "pytest.ini" | ".pytest.ini" | "pytest.toml" | ".pytest.toml"
        ) {
            push(
                Rule::TestConfig,
                path,
                format!("`{name}` configures how tests run; a fix may not change it"),
            );
        }
        if matches!(name, "sitecustomize.py" | "usercustomize.py") || name.ends_with(".pth") {
            push(
                Rule::StartupHook,
                path,
                format!("`{name}` runs code at interpreter start-up"),
            );
        }
        if lower.starts_with(".github/")
            && !cfg.allowed_ci_paths.iter().any(|g| glob::matches(g, path))
        {
            push(
                Rule::CiConfig,
                path,
                "changes under .github/ need the path listed in the allowed CI paths".into(),
            );
        }
        if matches!(name, ".gitmodules" | ".gitattributes") {
            push(
                Rule::GitMetadata,
                path,
                format!("`{name}` changes how git checks out or filters files"),
            );
        }
        if lower
            .split('/')
            .any(|c| c.ends_with(".dist-info") || c.ends_with(".egg-info") || c.ends_with(".egg"))
            || matches!(name, "entry_points.txt" | "direct_url.json")
            || name.ends_with(".egg-link")
        {
            push(
                Rule::PluginSurface,
                path,
                format!(
                    "`{path}` is packaging metadata: installed-distribution files register plugins (pytest11 entry points) that load without a conftest"
                ),
            );
        }
        if lower.split('/').any(|c| c == "__pycache__")
            || name.ends_with(".pyc")
            || name.ends_with(".pyo")
        {
            push(
                Rule::Bytecode,
                path,
                "compiled bytecode can mask the source".into(),
            );
        }
    }
    let path = f.path();
    if f.new_mode.as_deref() == Some("120000") || f.old_mode.as_deref() == Some("120000") {
        push(Rule::Symlink, path, "symbolic links are not allowed".into());
    } else if f.new_mode.as_deref() == Some("160000") || f.old_mode.as_deref() == Some("160000") {
        push(
            Rule::GitMetadata,
            path,
            "submodule (gitlink) changes are not allowed".into(),
        );
    } else if f.kind == ChangeKind::Added && f.new_mode.as_deref() == Some("100755") {
        push(
            Rule::ModeChange,
            path,
            "new executable files are not allowed".into(),
        );
    } else if let (Some(a), Some(b)) = (&f.old_mode, &f.new_mode)
        && a != b
        && !matches!(f.kind, ChangeKind::Added | ChangeKind::Deleted)
    {
        push(
            Rule::ModeChange,
            path,
            format!("file mode change {a} -> {b}"),
        );
    }
    if f.binary {
        push(Rule::Binary, path, "binary changes are not allowed".into());
    }
    if f.kind != ChangeKind::Deleted {
        config_sections(f, base, &mut push);
        entry_point_sections(f, base, &mut push);
        if !is_test_path(path, cfg)
            && let Some(line) = f.added_lines().find(|l| {
                // Also PYTEST_PLUGINS, the environment variable of the same effect.
                l.to_ascii_lowercase().contains("pytest_plugins")
            })
        {
            push(
                Rule::PluginSurface,
                path,
                format!(
                    "registers pytest plugins outside the test tree's conftest: `{}`",
                    line.trim()
                ),
            );
        }
        if path.ends_with(".py") && !is_test_path(path, cfg) {
            for line in f.added_lines() {
                if let Some((rule, why)) = scan_line(line, cfg) {
                    push(rule, path, format!("{why}: `{}`", line.trim()));
                }
            }
        }
        if !is_test_path(path, cfg) {
            for line in f.added_lines() {
                if let Some(why) = lang_exit_scan(cfg.kind, path, line) {
                    push(Rule::ProcessExit, path, format!("{why}: `{}`", line.trim()));
                }
            }
        }
    }
}

/// Reject `..`, absolute paths, `.git` in any case or disguise, control and invisible characters.
pub fn safe_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("empty path".into());
    }
    if path.starts_with('/') || path.contains('\\') || path.as_bytes().get(1) == Some(&b':') {
        return Err("absolute paths are not allowed".into());
    }
    if path
        .chars()
        .any(|c| c.is_control() || is_invisible_or_lookalike(c))
    {
        return Err("control, invisible or look-alike characters in the path".into());
    }
    for comp in path.split('/') {
        match comp {
            "" | "." => return Err("empty or `.` path component".into()),
            ".." => return Err("`..` leaves the repository".into()),
            _ => {}
        }
        if comp.ends_with(' ') || comp.starts_with(' ') {
            return Err("path component with leading or trailing space".into());
        }
        let folded = comp.trim_end_matches(['.', ' ']).to_ascii_lowercase();
        if folded == ".git" || folded == "git~1" {
            return Err("paths inside .git are not allowed".into());
        }
    }
    Ok(())
}

fn is_invisible_or_lookalike(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{FF01}'..='\u{FF5E}' | '\u{2024}' | '\u{2215}'
        | '\u{2044}')
}

/// Under a tests dir or matching a test glob (case-insensitive); for Node also jest's
/// `__tests__/` and `*.test.*` / `*.spec.*` files next to the sources.
pub fn is_test_path(path: &str, cfg: &PolicyConfig) -> bool {
    let lower = path.to_ascii_lowercase();
    let node_test = cfg.kind == crate::sandbox::lang::ProjectKind::Node && {
        let name = lower.rsplit('/').next().unwrap_or("");
        lower.split('/').any(|c| c == "__tests__")
            || name.contains(".test.")
            || name.contains(".spec.")
    };
    // Go: `*_test.go` next to the code, and `testdata/` (go test's fixtures).
    let go_test = cfg.kind == crate::sandbox::lang::ProjectKind::Go
        && (lower.ends_with("_test.go") || lower.split('/').any(|c| c == "testdata"));
    node_test
        || go_test
        || cfg.tests_dirs.iter().any(|d| {
            let d = d.trim_matches('/').to_ascii_lowercase();
            !d.is_empty() && (lower == d || lower.starts_with(&format!("{d}/")))
        })
        || cfg.test_globs.iter().any(|g| glob::matches(g, path))
}

/// Why a Rust or Node path configures how tests build or run (so a fix may not change it), or
/// `None`. Rust: every `Cargo.toml` (it declares the test targets, `harness = false`,
/// `autotests`, and dependencies fixed in the image), `Cargo.lock`, `.cargo/` (runners,
/// rustflags), `.config/nextest.toml`, toolchain pins, `target/`. Node: `package.json` and lock
/// files (jest config, scripts, dependencies fixed in the image), jest/vitest/babel config,
/// common setup files, `.npmrc`, `node_modules/`, `__mocks__/` (jest mocks packages by these
/// automatically). `build.rs` stays allowed: it is code, and runs in the same build for both
/// sides of the comparison.
pub fn lang_config_reason(
    kind: crate::sandbox::lang::ProjectKind,
    path: &str,
) -> Option<&'static str> {
    use crate::sandbox::lang::ProjectKind;
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or("");
    let parts: Vec<&str> = lower.split('/').collect();
    let stem = name.split('.').next().unwrap_or("");
    match kind {
        ProjectKind::Python => None,
        ProjectKind::Rust => {
            if name == "cargo.toml" || lower == "cargo.lock" {
                Some(
                    "cargo manifests declare the test targets (`[[test]]`, `harness`, `autotests`) and the dependencies built into the image",
                )
            } else if parts.contains(&".cargo") {
                Some(
                    "cargo configuration (runners, rustflags, aliases) changes how tests build and run",
                )
            } else if lower == ".config/nextest.toml" || name == "nextest.toml" {
                Some("nextest configuration changes how tests run")
            } else if lower == "rust-toolchain" || lower == "rust-toolchain.toml" {
                Some("the toolchain pin is part of the image")
            } else if parts.first() == Some(&"target") {
                Some("cargo build output: stale artefacts can replace the code under test")
            } else {
                None
            }
        }
        ProjectKind::Go => {
            if lower == "go.mod"
                || lower == "go.sum"
                || lower == "go.work"
                || lower == "go.work.sum"
            {
                Some("go.mod/go.sum pin the toolchain and the modules built into the image")
            } else if parts.first() == Some(&"vendor") {
                Some("vendored modules replace the ones the image was built with")
            } else {
                None
            }
        }
        ProjectKind::Node => {
            if matches!(
                name,
                "package.json"
                    | "package-lock.json"
                    | "npm-shrinkwrap.json"
                    | ".npmrc"
                    | "yarn.lock"
                    | "pnpm-lock.yaml"
            ) {
                Some(
                    "package.json holds the jest configuration and scripts, and the dependencies built into the image",
                )
            } else if parts.contains(&"node_modules") {
                Some("installed packages (jest, reporters) live outside the repository")
            } else if parts.contains(&"__mocks__") {
                Some("jest applies `__mocks__` automatically")
            } else if matches!(
                stem,
                "jest" | "vitest" | "vite" | "babel" | "setuptests" | "jest-setup"
            ) && (name.contains(".config.")
                || name.contains(".setup.")
                || stem == "setuptests"
                || stem == "jest-setup")
                || name.starts_with(".babelrc")
            {
                Some("test runner configuration or setup changes how tests run")
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests;
