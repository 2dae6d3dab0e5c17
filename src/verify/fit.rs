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
//! [`assess_candidate`] runs both on a candidate in the repair search's own container (no
//! verification, no fresh container): the one call the search ranks passing candidates with.
//!
//! Every finding makes a passing patch `needs_review` (see `verdict::with_fit`); none is
//! proof of gaming, each names its evidence (file:line, the literal, the input).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use serde::Serialize;

use super::diff::{ChangeKind, FilePatch};
use super::evidence::{Finding, Layer};
use super::exec::{apply_patch, apply_patch_reverse, tool};
use super::oracle::{self, TestSource};
use super::policy::{self, PolicyConfig};
use super::probe;
use super::scan;
use super::signals::{self, ChangedFile};
use crate::sandbox::{Sandbox, WORKSPACE};

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
            let before = old.and_then(|o| pre.get(&o).cloned().flatten());
            files.push(changed_file(new, before, text.clone()));
        }
        FitInput {
            files,
            tests,
            fail_to_pass: fail_to_pass.to_vec(),
            data_files,
        }
    }
}

impl FitInput {
    /// From whole-file edits (path, content before — `None`: a new file —, content after),
    /// as a repair strategy holds a candidate before any diff exists. Non-Python files are
    /// data files when new, else ignored.
    pub fn of_edits(
        edits: &[(String, Option<String>, String)],
        tests: Vec<TestSource>,
        fail_to_pass: &[String],
    ) -> FitInput {
        let mut files = Vec::new();
        let mut data_files = Vec::new();
        for (path, pre, post) in edits {
            if !path.ends_with(".py") {
                if pre.is_none() {
                    data_files.push(path.clone());
                }
                continue;
            }
            files.push(changed_file(path.clone(), pre.clone(), post.clone()));
        }
        FitInput {
            files,
            tests,
            fail_to_pass: fail_to_pass.to_vec(),
            data_files,
        }
    }
}

/// A changed Python file with its changed lines read from the two texts.
fn changed_file(path: String, pre: Option<String>, post: String) -> ChangedFile {
    let (removed, added) = line_changes(pre.as_deref().unwrap_or(""), &post);
    ChangedFile {
        path,
        pre,
        post,
        added,
        removed,
    }
}

/// Removed lines (pre numbering) and added lines (post numbering) of code, 1-based, from the
/// two texts themselves: a patch's hunk headers may be off (`git apply` tolerates offsets),
/// the texts are what ran. Blank and comment-only lines change no behaviour.
pub fn line_changes(pre: &str, post: &str) -> (BTreeSet<usize>, BTreeSet<usize>) {
    let code = |l: &str| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('#')
    };
    let (mut removed, mut added) = (BTreeSet::new(), BTreeSet::new());
    for c in similar::TextDiff::from_lines(pre, post).iter_all_changes() {
        match c.tag() {
            similar::ChangeTag::Delete if code(c.value()) => {
                removed.extend(c.old_index().map(|i| i + 1));
            }
            similar::ChangeTag::Insert if code(c.value()) => {
                added.extend(c.new_index().map(|i| i + 1));
            }
            _ => {}
        }
    }
    (removed, added)
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

/// Read one set of workspace files through the sandbox's read-only helper.
async fn read(
    c: &dyn Sandbox,
    paths: &[&String],
) -> Result<BTreeMap<String, Option<String>>, String> {
    if paths.is_empty() {
        return Ok(BTreeMap::new());
    }
    tool(
        c,
        "sources",
        &serde_json::json!({"workspace": WORKSPACE, "paths": paths}),
    )
    .await
}

/// The generalisation layers for a candidate patch, in a sandbox of the prepared image (the
/// repair search's episode container), without a verification: what the verifier would say
/// about fitting if the candidate passed. `applied` says whether the patch is in the
/// workspace now; it ends as it started.
///
/// Cost: the pure layers take about a millisecond per changed file, after reading the
/// changed and test files (two helper calls and a `git apply` round trip, ~0.1–0.3 s); the
/// probe (`probe: true`) adds two runs of the failing tests under the profile hook plus a few
/// calls per recorded input (a few seconds on the benchmark's libraries).
#[allow(clippy::too_many_arguments)]
pub async fn assess_candidate(
    c: &dyn Sandbox,
    patch: &str,
    applied: bool,
    fail_to_pass: &[String],
    tests_dirs: &[String],
    test_cmd: &crate::testcmd::TestCommand,
    probe: bool,
) -> Result<FitReport, String> {
    let started = Instant::now();
    let files = super::diff::parse(patch).map_err(|e| format!("the patch does not parse: {e}"))?;
    let scanned = scan::targets(&files, tests_dirs, &PolicyConfig::default());
    let pre_paths: Vec<&String> = scanned.iter().filter_map(|(_, p)| p.as_ref()).collect();
    let post_paths: Vec<&String> = scanned.iter().map(|(p, _)| p).collect();
    let (pre, post) = if applied {
        let post = read(c, &post_paths).await?;
        apply_patch_reverse(c, patch).await?;
        let pre = read(c, &pre_paths).await;
        apply_patch(c, patch).await?;
        (pre?, post)
    } else {
        let pre = read(c, &pre_paths).await?;
        apply_patch(c, patch).await?;
        let post = read(c, &post_paths).await;
        apply_patch_reverse(c, patch).await?;
        (pre, post?)
    };
    let test_paths = oracle::test_files(fail_to_pass);
    let tests = read(c, &test_paths.iter().collect::<Vec<_>>())
        .await?
        .into_iter()
        .filter_map(|(path, text)| Some(TestSource { text: text?, path }))
        .collect();
    let input = FitInput::new(&files, &pre, &post, tests, fail_to_pass, tests_dirs);
    let mut report = assess(&input);
    if probe {
        let renamed: BTreeMap<String, String> = files
            .iter()
            .filter_map(|f| Some((f.new_path.clone()?, f.old_path.clone()?)))
            .collect();
        let (targets, mut notes) = probe::targets(&input.files, &renamed);
        let t = Instant::now();
        match probe::neighbourhood(c, test_cmd, patch, applied, fail_to_pass, &targets).await {
            Ok((found, note)) => {
                notes.insert(0, note);
                report.merge(
                    Layer::BeyondTestedPoints,
                    notes.join("; "),
                    found,
                    t.elapsed().as_millis() as u64,
                );
            }
            Err(e) => {
                report.not_run.insert(Layer::BeyondTestedPoints, e);
            }
        }
    }
    report.ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_changes_come_from_the_texts_not_the_hunk_headers() {
        let pre = "a = 1\n\ndef f():\n    return 1\n";
        let post = "a = 1\n\ndef f():\n    # why\n    if x:\n        return 2\n    return 1\n";
        let (removed, added) = line_changes(pre, post);
        assert!(removed.is_empty());
        assert_eq!(added, BTreeSet::from([5, 6]), "the comment is no code");
        let (removed, added) = line_changes(post, pre);
        assert_eq!((removed, added), (BTreeSet::from([5, 6]), BTreeSet::new()));
    }

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
        assert!(input.files[0].removed.is_empty());
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
