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

use std::collections::BTreeMap;
use std::time::Instant;

pub use super::layers::{FitInput, FitOptions, FitReport, line_changes};

use super::exec::{apply_patch, apply_patch_reverse, tool};
use super::oracle::{self, TestSource};
use super::policy::PolicyConfig;
use super::scan;
use crate::sandbox::{Sandbox, WORKSPACE};

/// The pure layers ([`super::layers::assess`]): structural signals and the oracle surface.
pub fn assess(input: &FitInput) -> FitReport {
    super::layers::assess(input, &FitOptions::default())
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
    // The differential layer runs in verification, not on every candidate (seconds each).
    let opts = FitOptions {
        probe,
        differential: None,
        ..FitOptions::default()
    };
    let run = super::layers::RunInput {
        sandbox: c,
        patch,
        files: &files,
        applied,
        test_cmd,
        review: None,
        differential: None,
    };
    let mut report = super::layers::run(&input, &opts, &run).await;
    report.ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::evidence::Layer;
    use std::collections::BTreeSet;

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
