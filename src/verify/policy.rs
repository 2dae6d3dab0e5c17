//! The patch policy: which changes a candidate fix may make at all, judged on the diff alone
//! (plus the pre-patch text of config files, to tell a `[tool:pytest]` hunk from any other).
//!
//! Pure: no I/O. Every rejection names its [`Rule`], so receipts and corpora can assert the reason.
//! The one check that needs the image (does a new top-level module name resolve to an installed
//! or standard module?) is split: [`new_top_level_modules`] lists candidates here and
//! [`shadow_violations`] judges them with whatever resolver the caller has.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::diff::{self, ChangeKind, FilePatch, HunkLine};
use super::glob;

/// The named rules a patch can break.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The patch text could not be parsed.
    Malformed,
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
            violations.push(Violation {
                rule: Rule::Malformed,
                path: String::new(),
                detail: format!("the patch cannot be read: {e}"),
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

#[derive(Clone, Copy, PartialEq)]
enum CfgKind {
    Ini,
    Toml,
}

/// pytest sections of setup.cfg/tox.ini (`[tool:pytest]`, `[pytest]`) and pyproject.toml
/// (`[tool.pytest…]`, or `pytest…` keys of `[tool]`): any changed line inside one is rejected.
fn config_sections(f: &FilePatch, base: &dyn BaseTree, push: &mut impl FnMut(Rule, &str, String)) {
    let path = f.path();
    let name = path.rsplit('/').next().unwrap_or("").to_ascii_lowercase();
    let kind = match name.as_str() {
        "setup.cfg" | "tox.ini" => CfgKind::Ini,
        "pyproject.toml" => CfgKind::Toml,
        _ => return,
    };
    let old_text = match (&f.old_path, f.kind) {
        (_, ChangeKind::Added) => Some(String::new()),
        (Some(p), _) => base.read(p),
        (None, _) => Some(String::new()),
    };
    let Some(old_text) = old_text else {
        push(
            Rule::TestConfig,
            path,
            format!(
                "cannot read the pre-patch `{name}` to check that no pytest section changes; refusing"
            ),
        );
        return;
    };
    let old_lines: Vec<&str> = old_text.lines().collect();
    for h in &f.hunks {
        let upto = h.old_start.saturating_sub(1).min(old_lines.len());
        let start = old_lines[..upto]
            .iter()
            .rev()
            .find_map(|l| header(l))
            .unwrap_or_default();
        let (mut old_sec, mut new_sec) = (start.clone(), start);
        for l in &h.lines {
            let hit = match l {
                HunkLine::Context(s) => {
                    if let Some(hd) = header(s) {
                        old_sec = hd.clone();
                        new_sec = hd;
                    }
                    false
                }
                HunkLine::Removed(s) => {
                    let hit = pytest_line(kind, &old_sec, s);
                    if let Some(hd) = header(s) {
                        old_sec = hd;
                    }
                    hit
                }
                HunkLine::Added(s) => {
                    let hit = pytest_line(kind, &new_sec, s);
                    if let Some(hd) = header(s) {
                        new_sec = hd;
                    }
                    hit
                }
            };
            if hit {
                push(
                    Rule::TestConfig,
                    path,
                    format!("the patch changes the pytest configuration in `{name}`"),
                );
                return;
            }
        }
    }
}

/// Entry points in setup.py (any changed line naming them), setup.cfg (`[options.entry_points]`)
/// and pyproject.toml (`[project.entry-points…]`, `[project.scripts]`-style tables of poetry and
/// flit, or an `entry-points` key): any change is rejected, since an entry point is how a
/// distribution registers a pytest plugin.
fn entry_point_sections(
    f: &FilePatch,
    base: &dyn BaseTree,
    push: &mut impl FnMut(Rule, &str, String),
) {
    let path = f.path();
    let name = path.rsplit('/').next().unwrap_or("").to_ascii_lowercase();
    let mentions = |l: &str| {
        let l = l.to_ascii_lowercase().replace(['-', ' '], "_");
        l.contains("entry_points") || l.contains("entrypoints") || l.contains("pytest11")
    };
    let hit = match name.as_str() {
        "setup.py" => f.hunks.iter().any(|h| {
            h.lines.iter().any(|l| match l {
                HunkLine::Added(s) | HunkLine::Removed(s) => mentions(s),
                HunkLine::Context(_) => false,
            })
        }),
        "setup.cfg" | "pyproject.toml" => {
            let old_text = match (&f.old_path, f.kind) {
                (Some(p), k) if k != ChangeKind::Added => base.read(p).unwrap_or_default(),
                _ => String::new(),
            };
            let old_lines: Vec<&str> = old_text.lines().collect();
            let ep = |sec: &str| {
                mentions(sec)
                    || sec.starts_with("tool.poetry.plugins")
                    || sec == "tool.flit.scripts"
            };
            f.hunks.iter().any(|h| {
                let upto = h.old_start.saturating_sub(1).min(old_lines.len());
                let mut sec = old_lines[..upto]
                    .iter()
                    .rev()
                    .find_map(|l| header(l))
                    .unwrap_or_default();
                h.lines.iter().any(|l| match l {
                    HunkLine::Context(s) => {
                        if let Some(hd) = header(s) {
                            sec = hd;
                        }
                        false
                    }
                    HunkLine::Added(s) | HunkLine::Removed(s) => {
                        if let Some(hd) = header(s) {
                            sec = hd;
                        }
                        ep(&sec) || mentions(s)
                    }
                })
            })
        }
        _ => false,
    };
    if hit {
        push(
            Rule::PluginSurface,
            path,
            format!(
                "the patch changes entry points in `{name}` (how distributions register pytest plugins)"
            ),
        );
    }
}

fn header(line: &str) -> Option<String> {
    let t = line.trim();
    let inner = t.strip_prefix('[')?.strip_suffix(']')?;
    let inner = inner.trim_start_matches('[').trim_end_matches(']');
    Some(
        inner
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
            .collect::<String>()
            .to_ascii_lowercase(),
    )
}

fn pytest_section(kind: CfgKind, sec: &str) -> bool {
    match kind {
        CfgKind::Ini => sec == "pytest" || sec == "tool:pytest",
        CfgKind::Toml => sec == "tool.pytest" || sec.starts_with("tool.pytest."),
    }
}

fn pytest_line(kind: CfgKind, sec: &str, line: &str) -> bool {
    if let Some(h) = header(line)
        && pytest_section(kind, &h)
    {
        return true;
    }
    if pytest_section(kind, sec) {
        return true;
    }
    if kind == CfgKind::Toml {
        let key: String = line
            .split('=')
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
            .collect::<String>()
            .to_ascii_lowercase();
        if !line.contains('=') {
            return false;
        }
        return (sec == "tool" && key.starts_with("pytest"))
            || (sec.is_empty() && key.starts_with("tool.pytest"));
    }
    false
}

static LINE_RULES: LazyLock<Vec<(Rule, Regex, &'static str, bool)>> = LazyLock::new(|| {
    // (rule, pattern, why, is-plain-pytest-import)
    [
        (
            Rule::PytestTamper,
            r"^\s*(import|from)\s+(_pytest|pluggy)\b",
            "imports pytest's internals",
            false,
        ),
        (
            Rule::PytestTamper,
            r"\b_pytest\s*\.",
            "reaches into pytest's internals",
            false,
        ),
        (
            Rule::PytestTamper,
            r#"(__import__|import_module)\s*\(\s*['"](_?pytest|pluggy|unittest)"#,
            "imports the test framework dynamically",
            false,
        ),
        (
            Rule::PytestTamper,
            r#"sys\s*\.\s*modules\s*\[\s*['"](_?pytest|pluggy|unittest|builtins)"#,
            "replaces the test framework in sys.modules",
            false,
        ),
        (
            Rule::PytestTamper,
            r"\b(pytest|unittest|builtins|__builtins__)(\s*\.\s*\w+)+\s*=[^=]",
            "monkeypatches the test framework or builtins",
            false,
        ),
        (
            Rule::PytestTamper,
            r"\bsetattr\s*\(\s*(pytest|_pytest|unittest|builtins)\b",
            "monkeypatches the test framework or builtins",
            false,
        ),
        (
            Rule::PytestTamper,
            r"^\s*(import|from)\s+pytest\b",
            "imports pytest outside the tests",
            true,
        ),
        (
            Rule::ProcessExit,
            r"\bos\s*\.\s*_exit\s*\(",
            "exits the interpreter without cleanup, so no test report is written",
            false,
        ),
    ]
    .into_iter()
    .filter_map(|(r, p, w, plain)| Regex::new(p).ok().map(|re| (r, re, w, plain)))
    .collect()
});

static RUST_EXIT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"process\s*::\s*exit\b|libc\s*::\s*_?exit\b|\bfn\s+_?exit\s*\(|\bSYS_exit").ok()
});
static NODE_EXIT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"process\s*\.\s*(exit|reallyExit|abort|kill)\b|process\s*\[\s*['"`](exit|reallyExit|abort|kill)"#).ok()
});

/// Code under test that ends the test process: cargo-nextest counts a test whose process
/// exits 0 as passed, and jest's reporter never sees the run finish. Rust `.rs` and Node
/// sources outside the tests.
fn lang_exit_scan(
    kind: crate::sandbox::lang::ProjectKind,
    path: &str,
    line: &str,
) -> Option<&'static str> {
    use crate::sandbox::lang::ProjectKind;
    let (re, why) = match kind {
        ProjectKind::Rust if path.ends_with(".rs") => (
            &*RUST_EXIT,
            "ending the process from the code under test makes a test runner report it as passed",
        ),
        ProjectKind::Node
            if [".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".jsx", ".tsx"]
                .iter()
                .any(|e| path.ends_with(e)) =>
        {
            (
                &*NODE_EXIT,
                "ending or signalling the process from the code under test cuts the test run short",
            )
        }
        _ => return None,
    };
    re.as_ref()
        .is_some_and(|re| re.is_match(line))
        .then_some(why)
}

fn scan_line(line: &str, cfg: &PolicyConfig) -> Option<(Rule, &'static str)> {
    LINE_RULES
        .iter()
        .find(|(_, re, _, plain)| !(*plain && cfg.allow_pytest_imports) && re.is_match(line))
        .map(|(r, _, w, _)| (*r, *w))
}

/// Standard-library module names (Python 3.11's `sys.stdlib_module_names`) plus the test
/// machinery: a new top-level module with one of these names is always rejected.
pub static KNOWN_MODULES: LazyLock<BTreeSet<&'static str>> = LazyLock::new(|| {
    include_str!("stdlib_modules.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .chain([
            "pytest",
            "_pytest",
            "pluggy",
            "py",
            "iniconfig",
            "packaging",
            "attr",
            "attrs",
            "exceptiongroup",
            "tomli",
            "setuptools",
            "pkg_resources",
            "pip",
            "_distutils_hack",
            "hypothesis",
            "coverage",
            "pytest_cov",
            "xdist",
            "six",
            "typing_extensions",
        ])
        .collect()
});

/// Names of top-level modules/packages the patch creates under any import root, excluding
/// names that already exist in the pre-patch tree.
pub fn new_top_level_modules(
    files: &[FilePatch],
    cfg: &PolicyConfig,
    base: &dyn BaseTree,
) -> Vec<String> {
    let mut out = BTreeSet::new();
    for f in files {
        if !matches!(
            f.kind,
            ChangeKind::Added | ChangeKind::Renamed | ChangeKind::Copied
        ) {
            continue;
        }
        let Some(path) = &f.new_path else { continue };
        if !(path.ends_with(".py") || path.ends_with(".so") || path.ends_with(".pyd")) {
            continue;
        }
        for root in &cfg.import_roots {
            let root = root.trim_matches('/');
            let rel = if root.is_empty() {
                Some(path.as_str())
            } else {
                path.strip_prefix(&format!("{root}/"))
            };
            let Some(rel) = rel else { continue };
            let (first, is_file) = match rel.split_once('/') {
                Some((d, _)) => (d, false),
                None => (rel, true),
            };
            let name = if is_file {
                first.split('.').next().unwrap_or(first)
            } else {
                first
            };
            if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let prefix = if root.is_empty() {
                String::new()
            } else {
                format!("{root}/")
            };
            let existed = base.exists(&format!("{prefix}{name}"))
                || base.exists(&format!("{prefix}{name}.py"));
            if !existed {
                out.insert(name.to_string());
            }
        }
    }
    out.into_iter().collect()
}

/// Judge new module names: `resolves(name)` says whether the unpatched image imports something
/// by that name (e.g. `importlib.util.find_spec` run in a clean container).
pub fn shadow_violations(names: &[String], resolves: &dyn Fn(&str) -> bool) -> Vec<Violation> {
    names
        .iter()
        .filter(|n| KNOWN_MODULES.contains(n.as_str()) || resolves(n))
        .map(|n| Violation {
            rule: Rule::ShadowModule,
            path: n.clone(),
            detail: format!(
                "a new top-level module `{n}` would shadow the installed or standard module of that name"
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
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
        let bin = "diff --git a/a.bin b/a.bin\nindex 1..2 100644\nBinary files a/a.bin and b/a.bin differ\n";
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
}
