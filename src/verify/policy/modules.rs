//! New top-level modules that could shadow installed or standard ones: listed from the diff
//! here, judged by a resolver the caller brings (the image).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use super::{BaseTree, ChangeKind, FilePatch, PolicyConfig, Rule, Violation};

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
