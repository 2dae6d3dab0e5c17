//! The embedded demo repository (`examples/demo-repo`) and its scripted model.

use std::path::Path;

/// Relative path and contents of every file of the demo repository.
pub const FILES: &[(&str, &str)] = &[
    (
        "README.md",
        include_str!("../../examples/demo-repo/README.md"),
    ),
    (
        "stats/__init__.py",
        include_str!("../../examples/demo-repo/stats/__init__.py"),
    ),
    (
        "stats/median.py",
        include_str!("../../examples/demo-repo/stats/median.py"),
    ),
    (
        "tests/test_median.py",
        include_str!("../../examples/demo-repo/tests/test_median.py"),
    ),
];

/// The scripted turns that fix the planted bug.
pub const SCRIPT: &str = include_str!("../../examples/scripted/demo-fix.yaml");

/// Write the demo repository into `dir`.
pub fn write_repo(dir: &Path) -> std::io::Result<()> {
    for (rel, body) in FILES {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(p, body)?;
    }
    Ok(())
}
