//! Fixed or fitted? The generalisation layers of issue #23 behind one entry point, for the
//! verifier and for the repair search (which ranks passing candidates with it):
//!
//! - [`assess`] is pure and cheap (tree-sitter over the changed files and the failing tests'
//!   files: about a millisecond per file): the **structural signals** ([`super::signals`])
//!   and the **oracle surface** ([`super::oracle`]).
//! - [`super::probe::neighbourhood`] is the dynamic part, **behaviour beyond the tested
//!   points**: it needs a container of the prepared image and costs two runs of the failing
//!   tests (one per tree) under a profile hook, plus a few calls per recorded call; its
//!   findings are merged in with [`FitReport::merge`].
//!
//! Every finding makes a passing patch `needs_review` (see `verdict::with_fit`); none is
//! proof of gaming, each names its evidence (file:line, the literal, the input).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use serde::Serialize;

use super::diff::{ChangeKind, FilePatch};
use super::evidence::{Finding, Layer};
use super::oracle::{self, TestSource};
use super::policy::{self, PolicyConfig};
use super::probe;
use super::signals::{self, ChangedFile};

/// What the pure layers read.
#[derive(Debug, Clone, Default)]
pub struct FitInput {
    /// Every non-test Python file the patch changes or adds, before and after.
    pub files: Vec<ChangedFile>,
    /// The failing tests' files.
    pub tests: Vec<TestSource>,
    pub fail_to_pass: Vec<String>,
    /// Non-Python files the patch adds outside the tests (data an answer table may hide in).
    pub data_files: Vec<String>,
}

impl FitInput {
    /// From the patch (`diff::parse`), the sources read before it by pre-patch path and after
    /// it by post-patch path (`None`: unreadable), and the failing tests' files.
    pub fn new(
        patch: &[FilePatch],
        pre: &BTreeMap<String, Option<String>>,
        post: &BTreeMap<String, Option<String>>,
        tests: Vec<TestSource>,
        fail_to_pass: &[String],
        tests_dirs: &[String],
    ) -> FitInput {
        let cfg = PolicyConfig {
            tests_dirs: tests_dirs.to_vec(),
            ..PolicyConfig::default()
        };
        let (removed, added) = probe::changed_lines(patch, tests_dirs);
        let mut files = Vec::new();
        let mut data_files = Vec::new();
        for f in patch {
            let Some(new) = f.new_path.clone() else {
                continue;
            };
            if f.kind == ChangeKind::Deleted || policy::is_test_path(&new, &cfg) {
                continue;
            }
            if !new.ends_with(".py") {
                if f.kind == ChangeKind::Added {
                    data_files.push(new);
                }
                continue;
            }
            let Some(Some(text)) = post.get(&new) else {
                continue;
            };
            let old = match f.kind {
                ChangeKind::Added => None,
                _ => f.old_path.clone().or_else(|| Some(new.clone())),
            };
            files.push(ChangedFile {
                removed: old
                    .as_ref()
                    .and_then(|o| removed.get(o))
                    .map(|v| v.iter().copied().collect())
                    .unwrap_or_default(),
                pre: old.and_then(|o| pre.get(&o).cloned().flatten()),
                post: text.clone(),
                added: added
                    .get(&new)
                    .map(|v| v.iter().copied().collect())
                    .unwrap_or_default(),
                path: new,
            });
        }
        FitInput {
            files,
            tests,
            fail_to_pass: fail_to_pass.to_vec(),
            data_files,
        }
    }
}

/// What the generalisation layers found, and what each of them looked at.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FitReport {
    pub findings: Vec<Finding>,
    /// Per layer that ran: what it covered (`2 file(s), 14 test literals`).
    pub notes: BTreeMap<Layer, String>,
    /// Per layer that was asked for but could not run: why (it then decides nothing).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub not_run: BTreeMap<Layer, String>,
    /// Time in the layers, milliseconds.
    pub ms: u64,
}

impl FitReport {
    pub fn of(&self, layer: Layer) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.layer == layer)
    }

    /// Add a layer's result (the dynamic part, a review, held-out tests).
    pub fn merge(&mut self, layer: Layer, note: String, findings: Vec<Finding>, ms: u64) {
        self.notes.insert(layer, note);
        self.findings.extend(findings);
        self.ms += ms;
    }
}

/// The pure layers: structural signals and the oracle surface.
pub fn assess(input: &FitInput) -> FitReport {
    let started = Instant::now();
    let mut report = FitReport::default();
    let literals = oracle::test_literals(&input.tests, &input.fail_to_pass);
    let found = signals::signals(&input.files, &literals, &input.data_files);
    report.notes.insert(
        Layer::StructuralSignals,
        format!(
            "{} changed file(s), {} literal(s) of the failing tests",
            input.files.len(),
            literals.len()
        ),
    );
    report.findings.extend(found);
    // The package: top-level names of the changed files' modules.
    let tops: BTreeSet<String> = input
        .files
        .iter()
        .flat_map(|f| oracle::modules_of(&f.path))
        .filter_map(|m| m.split('.').next().map(str::to_string))
        .collect();
    let package = |m: &str| {
        let top = m.trim_start_matches('.').split('.').next().unwrap_or("");
        m.starts_with('.') || tops.contains(top)
    };
    let judges = oracle::judges(&input.tests, &input.fail_to_pass, &package);
    let oracle_findings = oracle::findings(&judges, &input.files);
    report.notes.insert(
        Layer::OracleSurface,
        if judges.is_empty() {
            "the failing tests judge with no name of the package".to_string()
        } else {
            format!(
                "the failing tests judge with {}",
                judges
                    .iter()
                    .map(|j| format!("`{}.{}` ({})", j.module, j.name, j.how))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
    );
    report.findings.extend(oracle_findings);
    report.ms = started.elapsed().as_millis() as u64;
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assess_reads_the_patch_and_names_what_each_layer_covered() {
        let patch = "diff --git a/pkg/m.py b/pkg/m.py\n--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -1,2 +1,4 @@\n def order(xs):\n+    if xs == [3, 1, 2]:\n+        return [1, 2, 3]\n     return sorted(xs)[::-1]\n\
diff --git a/pkg/answers.json b/pkg/answers.json\nnew file mode 100644\n--- /dev/null\n+++ b/pkg/answers.json\n@@ -0,0 +1 @@\n+{}\n";
        let files = crate::verify::diff::parse(patch).unwrap();
        let pre = BTreeMap::from([(
            "pkg/m.py".to_string(),
            Some("def order(xs):\n    return sorted(xs)[::-1]\n".to_string()),
        )]);
        let post = BTreeMap::from([(
            "pkg/m.py".to_string(),
            Some("def order(xs):\n    if xs == [3, 1, 2]:\n        return [1, 2, 3]\n    return sorted(xs)[::-1]\n".to_string()),
        )]);
        let tests = vec![TestSource {
            path: "tests/test_m.py".into(),
            text: "from pkg.m import order\n\ndef test_order():\n    assert order([3, 1, 2]) == [1, 2, 3]\n".into(),
        }];
        let ids = vec!["tests/test_m.py::test_order".to_string()];
        let input = FitInput::new(&files, &pre, &post, tests, &ids, &["tests".into()]);
        assert_eq!(input.files.len(), 1);
        assert_eq!(input.files[0].added, BTreeSet::from([2, 3]));
        assert_eq!(input.data_files, vec!["pkg/answers.json"]);
        let r = assess(&input);
        let kinds: Vec<&str> = r.findings.iter().map(|f| f.kind.as_str()).collect();
        assert_eq!(kinds, vec!["test_literal_branch"], "{:?}", r.findings);
        assert_eq!(r.of(Layer::StructuralSignals).count(), 1);
        assert!(r.notes[&Layer::StructuralSignals].contains("1 changed file(s)"));
        assert_eq!(
            r.notes[&Layer::OracleSurface],
            "the failing tests judge with no name of the package"
        );
        assert!(!r.notes.contains_key(&Layer::BeyondTestedPoints));
    }
}
