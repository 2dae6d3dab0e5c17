//! Project kinds: Python (pytest), Rust (cargo), Node (npm + jest) and Go (`go test`). Pure: detection from the
//! checkout's top-level names, and what each kind means for images and test commands.
//!
//! A prepared image names its kind in the label `patchloop.kind` and the file
//! `/opt/patchloop/kind` (from its base image); images without either are Python (every image
//! built before other kinds existed).

use std::fmt;

use serde::{Deserialize, Serialize};

/// Label of a sandbox image naming its [`ProjectKind`] (absent on Python images).
pub const LABEL_KIND: &str = "patchloop.kind";
/// File inside rust/node base images (and every image built on them) naming the kind.
pub const KIND_FILE: &str = "/opt/patchloop/kind";

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum ProjectKind {
    #[default]
    Python,
    Rust,
    Node,
    Go,
}

impl ProjectKind {
    pub const ALL: [ProjectKind; 4] = [
        ProjectKind::Python,
        ProjectKind::Rust,
        ProjectKind::Node,
        ProjectKind::Go,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            ProjectKind::Python => "python",
            ProjectKind::Rust => "rust",
            ProjectKind::Node => "node",
            ProjectKind::Go => "go",
        }
    }

    /// From a label or the kind file; unknown or empty text is Python (older images).
    pub fn parse(text: &str) -> ProjectKind {
        match text.trim() {
            "rust" => ProjectKind::Rust,
            "node" => ProjectKind::Node,
            "go" => ProjectKind::Go,
            _ => ProjectKind::Python,
        }
    }

    /// The command a user would type to run the tests (image label `patchloop.test_cmd`). For
    /// rust and node the verifier and `run_tests` run the suite through the JUnit harness
    /// (`images/harness/pl_junit.py`) instead; this is what the agent is told.
    pub fn default_test_cmd(&self) -> &'static str {
        match self {
            ProjectKind::Python => "python -m pytest",
            ProjectKind::Rust => "cargo test",
            ProjectKind::Node => "npm test",
            ProjectKind::Go => "go test ./...",
        }
    }

    /// Whether tests run through the JUnit harness (not the hardened pytest path).
    pub fn uses_junit_harness(&self) -> bool {
        !matches!(self, ProjectKind::Python)
    }
}

impl fmt::Display for ProjectKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind of a checkout from its top-level file names. Python markers win (a Python project
/// with a `package.json` for its docs stays Python), then `Cargo.toml`, then `go.mod`, then
/// `package.json`, then any Python file. `None`: nothing patchloop knows how to test.
pub fn detect<'a>(
    top_level_files: impl IntoIterator<Item = &'a str>,
    python_files: usize,
) -> Option<ProjectKind> {
    let names: Vec<&str> = top_level_files.into_iter().collect();
    let has = |n: &str| names.contains(&n);
    let python_marker = [
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "pytest.ini",
        "tox.ini",
    ]
    .iter()
    .any(|n| has(n))
        || names
            .iter()
            .any(|n| n.starts_with("requirements") && n.ends_with(".txt"));
    if python_marker {
        Some(ProjectKind::Python)
    } else if has("Cargo.toml") {
        Some(ProjectKind::Rust)
    } else if has("go.mod") {
        Some(ProjectKind::Go)
    } else if has("package.json") {
        Some(ProjectKind::Node)
    } else if python_files > 0 {
        Some(ProjectKind::Python)
    } else {
        None
    }
}

/// Files that key a kind's dependencies layer (workspace-relative paths).
pub fn is_dependency_file(kind: ProjectKind, rel: &str) -> bool {
    let top = !rel.contains('/');
    let name = rel.rsplit('/').next().unwrap_or(rel);
    match kind {
        ProjectKind::Python => {
            top && (matches!(rel, "pyproject.toml" | "setup.py" | "setup.cfg")
                || (rel.starts_with("requirements") && rel.ends_with(".txt")))
        }
        // Every manifest of a cargo workspace, the lock file and the toolchain pin.
        ProjectKind::Rust => {
            name == "Cargo.toml"
                || (top && matches!(rel, "Cargo.lock" | "rust-toolchain" | "rust-toolchain.toml"))
        }
        ProjectKind::Node => {
            top && matches!(
                rel,
                "package.json" | "package-lock.json" | "npm-shrinkwrap.json"
            )
        }
        ProjectKind::Go => top && matches!(rel, "go.mod" | "go.sum"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_prefers_python_markers_then_cargo_then_npm() {
        assert_eq!(detect(["Cargo.toml", "src"], 0), Some(ProjectKind::Rust));
        assert_eq!(detect(["go.mod", "package.json"], 0), Some(ProjectKind::Go));
        assert_eq!(detect(["go.mod", "setup.py"], 1), Some(ProjectKind::Python));
        assert_eq!(
            detect(["package.json", "README.md"], 0),
            Some(ProjectKind::Node)
        );
        assert_eq!(
            detect(["pyproject.toml", "package.json"], 3),
            Some(ProjectKind::Python)
        );
        assert_eq!(
            detect(["requirements-dev.txt", "Cargo.toml"], 0),
            Some(ProjectKind::Python)
        );
        // A Rust crate with a Python helper script is still Rust.
        assert_eq!(detect(["Cargo.toml"], 2), Some(ProjectKind::Rust));
        assert_eq!(detect(["stats"], 2), Some(ProjectKind::Python));
        assert_eq!(detect(["README.md"], 0), None);
    }

    #[test]
    fn kinds_round_trip_and_unknown_is_python() {
        for k in ProjectKind::ALL {
            assert_eq!(ProjectKind::parse(k.as_str()), k);
        }
        assert_eq!(ProjectKind::parse(""), ProjectKind::Python);
        assert_eq!(ProjectKind::parse("cobol\n"), ProjectKind::Python);
        assert_eq!(ProjectKind::parse("rust\n"), ProjectKind::Rust);
        assert!(!ProjectKind::Python.uses_junit_harness());
        assert!(ProjectKind::Node.uses_junit_harness());
    }

    #[test]
    fn dependency_files_per_kind() {
        use ProjectKind::*;
        assert!(is_dependency_file(Python, "setup.cfg"));
        assert!(!is_dependency_file(Python, "Cargo.toml"));
        assert!(is_dependency_file(Rust, "Cargo.toml"));
        assert!(is_dependency_file(Rust, "crates/a/Cargo.toml"));
        assert!(is_dependency_file(Rust, "Cargo.lock"));
        assert!(!is_dependency_file(Rust, "src/lib.rs"));
        assert!(is_dependency_file(Node, "package.json"));
        assert!(is_dependency_file(Node, "package-lock.json"));
        assert!(!is_dependency_file(Node, "web/package.json"));
        assert!(is_dependency_file(Go, "go.sum"));
        assert!(!is_dependency_file(Go, "stats/stats.go"));
    }
}
