//! Behaviour beyond the tested points (`verify::probe`), end to end through `verify::verify`
//! against the real Docker daemon on a tiny Python project: patches that fit the failing tests
//! break a relation the original code kept at the tested input and come back `needs_review`;
//! the genuine fixes of the same bugs (a boundary among them) stay `verified`. Fails when
//! Docker is missing.

use crate::verify_common;

use std::time::Instant;

use patchloop::sandbox::docker;
use patchloop::verify::FitOptions;
use patchloop::verify::receipt::Receipt;
use patchloop::verify::verdict::Verdict;
use verify_common::{fixture_of, layer, remove_image, verify_fixture};

const TAG: &str = "patchloop-verify-probe:test";

/// Three bugs: `order` sorts descending, `first` skips the first item, `level` is off by one.
const LIB: &str = r#"def order(xs):
    return sorted(xs)[::-1]


def first(seq):
    it = iter(seq)
    next(it)
    return next(it)


def level(v):
    if v > 3:
        return "high"
    return "low"


class Sorter:
    def __init__(self, reverse=False):
        self.reverse = reverse

    def order(self, xs):
        return sorted(xs, reverse=not self.reverse)
"#;

/// A generator with an off-by-one: it drops the last window.
const GEN: &str = r#"def windows(xs, n):
    for i in range(len(xs) - n):
        yield xs[i:i + n]
"#;

const TEST: &str = r#"from lib import Sorter, first, level, order


def test_order():
    assert order([3, 1, 2]) == [1, 2, 3]


def test_first():
    assert first([5, 6, 7]) == 5


def test_level():
    assert level(3) == "high"


def test_sorter():
    assert Sorter().order([3, 1, 2]) == [1, 2, 3]
"#;

const GEN_TEST: &str = r#"from gen import windows


def test_windows():
    got = [list(windows(xs, n)) for xs, n in (([1, 2, 3], 2), ([1, 2, 3, 4], 3), ([5, 6], 1))]
    assert got == [[[1, 2], [2, 3]], [[1, 2, 3], [2, 3, 4]], [[5], [6]]]
"#;

/// `windows`' genuine fix, written as a loop with a new condition (so the probe runs on it).
const WINDOWS_FIXED: &str = "diff --git a/gen.py b/gen.py
--- a/gen.py
+++ b/gen.py
@@ -1,3 +1,5 @@
 def windows(xs, n):
-    for i in range(len(xs) - n):
+    i = 0
+    while i + n <= len(xs):
         yield xs[i:i + n]
+        i += 1
";

const IDS: [&str; 4] = [
    "tests/test_lib.py::test_order",
    "tests/test_lib.py::test_first",
    "tests/test_lib.py::test_level",
    "tests/test_lib.py::test_sorter",
];

/// The genuine fixes.
const FIXED: &str = "diff --git a/lib.py b/lib.py
--- a/lib.py
+++ b/lib.py
@@ -1,15 +1,14 @@
 def order(xs):
-    return sorted(xs)[::-1]
+    return sorted(xs)
 
 
 def first(seq):
     it = iter(seq)
-    next(it)
     return next(it)
 
 
 def level(v):
-    if v > 3:
+    if v >= 3:
         return \"high\"
     return \"low\"
 
@@ -20,4 +19,4 @@ class Sorter:
         self.reverse = reverse
 
     def order(self, xs):
-        return sorted(xs, reverse=not self.reverse)
+        return sorted(xs, reverse=self.reverse)
";

/// Fitted to the tests: `first` special-cases lists (the tested type), the method
/// `Sorter.order` the tested list; `level` gets a genuine fix written with a new condition (so
/// the probe runs on it), which the layer must not flag.
const FITTED: &str = "diff --git a/lib.py b/lib.py
--- a/lib.py
+++ b/lib.py
@@ -3,13 +3,15 @@ def order(xs):
 
 
 def first(seq):
+    if isinstance(seq, list):
+        return seq[0]
     it = iter(seq)
     next(it)
     return next(it)
 
 
 def level(v):
-    if v > 3:
+    if v > 3 or v == 3:
         return \"high\"
     return \"low\"
 
@@ -20,4 +22,6 @@ class Sorter:
         self.reverse = reverse
 
     def order(self, xs):
+        if xs == [3, 1, 2]:
+            return [1, 2, 3]
         return sorted(xs, reverse=not self.reverse)
";

async fn run(d: &bollard::Docker, patch: &str, ids: &[&str], fit: FitOptions) -> (Receipt, f64) {
    let t = Instant::now();
    let base = [("lib.py", LIB), ("gen.py", GEN)];
    let r = verify_fixture(d, TAG, patch, ids, fit, "test-verify-probe", &base).await;
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "{}: {} ({secs:.1} s)\n{}",
        r.decision.verdict.as_str(),
        r.decision.reason,
        serde_json::to_string_pretty(&r.layers).unwrap()
    );
    (r, secs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fitted_patches_break_relations_genuine_fixes_keep_them() {
    let d = docker::connect()
        .await
        .expect("Docker is required for this test");
    let files = [
        ("lib.py", LIB),
        ("tests/test_lib.py", TEST),
        ("gen.py", GEN),
        ("tests/test_gen.py", GEN_TEST),
    ];
    let _dir = fixture_of(&d, &files, TAG).await;
    // The probe alone: the pure layers are measured on their own elsewhere.
    let probe_only = FitOptions {
        layers: false,
        ..FitOptions::default()
    };

    let (fixed, fixed_secs) = run(&d, FIXED, &IDS, probe_only.clone()).await;
    assert_eq!(
        fixed.decision.verdict,
        Verdict::Verified,
        "{}",
        fixed.decision.reason
    );
    let l = layer(&fixed, "beyond_tested_points");
    assert_eq!(l.status, "clean", "{l:?}");
    // One-line fixes that add no decision cost no probe run, and the receipt says so.
    assert!(
        l.detail.contains(
            "not probed: lib.py::order, lib.py::first, lib.py::level, lib.py::Sorter.order"
        ),
        "{}",
        l.detail
    );

    let fitted_ids = [
        "tests/test_lib.py::test_first",
        "tests/test_lib.py::test_sorter",
        "tests/test_lib.py::test_level",
    ];
    let (fitted, fitted_secs) = run(&d, FITTED, &fitted_ids, probe_only).await;
    assert_eq!(
        fitted.decision.verdict,
        Verdict::NeedsReview,
        "{}",
        fitted.decision.reason
    );
    let found = &fitted.fit.as_ref().unwrap().findings;
    let by_fn = |q: &str| {
        found
            .iter()
            .find(|f| f.detail.starts_with(&format!("`{q}`")))
    };
    let first = by_fn("first").unwrap_or_else(|| panic!("first not flagged: {found:#?}"));
    assert_eq!(first.input.as_deref(), Some("first([5, 6, 7])"));
    assert!(
        first.evidence.starts_with("first((5, 6, 7))")
            || first.evidence.starts_with("first(iter(...))"),
        "{first:?}"
    );
    // A method: the object is passed as it was, the list moves.
    let method =
        by_fn("Sorter.order").unwrap_or_else(|| panic!("Sorter.order not flagged: {found:#?}"));
    assert_eq!(
        (method.path.as_str(), method.input.as_deref()),
        ("lib.py", Some("order([3, 1, 2])"))
    );
    assert!(
        by_fn("level").is_none(),
        "the genuine boundary fix is not flagged: {found:#?}"
    );
    assert!(
        fitted.decision.reason.contains("breaks_relation"),
        "{}",
        fitted.decision.reason
    );

    // Off: the same patch is verified by the tests and integrity layers alone.
    let (off, _) = run(&d, FITTED, &fitted_ids, FitOptions::off()).await;
    assert_eq!(
        off.decision.verdict,
        Verdict::Verified,
        "{}",
        off.decision.reason
    );
    assert_eq!(layer(&off, "beyond_tested_points").status, "not_run");

    // What the caller already found (the repair search's candidate that drops a callee of the
    // code it replaced) is judged like a layer's finding, every layer off: `needs_review`.
    let dropped = patchloop::verify::evidence::Finding {
        layer: patchloop::verify::evidence::Layer::StructuralSignals,
        kind: "dropped_feature".into(),
        path: "lib.py".into(),
        line: 0,
        evidence: "callee sorted".into(),
        input: None,
        detail: "the candidate stops using callee sorted".into(),
    };
    let given = FitOptions {
        given: vec![dropped.clone()],
        ..FitOptions::off()
    };
    let (told, _) = run(&d, FITTED, &fitted_ids, given).await;
    assert_eq!(
        told.decision.verdict,
        Verdict::NeedsReview,
        "{}",
        told.decision.reason
    );
    assert!(
        told.decision.reason.contains("callee sorted"),
        "{}",
        told.decision.reason
    );
    assert_eq!(told.fit.as_ref().unwrap().findings, [dropped]);

    // The repair search's call: the same layers on a candidate in an episode-like container,
    // without a verification; the workspace ends as it started.
    use patchloop::sandbox::Sandbox;
    let c = patchloop::sandbox::container::Container::start(
        &d,
        TAG,
        &patchloop::sandbox::policy::ContainerPolicy::default(),
        "test-verify-probe",
        "candidate",
    )
    .await
    .unwrap();
    let ids: Vec<String> = fitted_ids.iter().map(|s| s.to_string()).collect();
    let t = Instant::now();
    let r = patchloop::verify::fit::assess_candidate(
        &c,
        FITTED,
        false,
        &ids,
        &["tests".into()],
        &patchloop::testcmd::TestCommand::python_pytest(),
        true,
    )
    .await
    .unwrap();
    let candidate_secs = t.elapsed().as_secs_f64();
    use patchloop::verify::evidence::Layer;
    assert_eq!(r.of(Layer::BeyondTestedPoints).count(), 2, "{r:#?}");
    assert!(
        r.of(Layer::StructuralSignals)
            .any(|f| f.kind == "test_literal_branch"),
        "{r:#?}"
    );
    assert!(
        c.diff().await.unwrap().trim().is_empty(),
        "the workspace changed"
    );
    let _ = c.remove().await;

    // A generator called three times in one test: each call is an input of its own (a
    // finished generator's frame address is reused by the next one's, which once hid every
    // call after the first).
    let (windowed, _) = run(
        &d,
        WINDOWS_FIXED,
        &["tests/test_gen.py::test_windows"],
        FitOptions {
            layers: false,
            ..FitOptions::default()
        },
    )
    .await;
    assert_eq!(
        windowed.decision.verdict,
        Verdict::Verified,
        "{}",
        windowed.decision.reason
    );
    let l = layer(&windowed, "beyond_tested_points");
    assert!(
        l.detail
            .starts_with("3 tested input(s) of 1 changed function(s)"),
        "{l:?}"
    );

    remove_image(&d, TAG).await;
    eprintln!(
        "verify with the probe: fixed {fixed_secs:.1} s, fitted {fitted_secs:.1} s; a candidate assessed in {candidate_secs:.1} s"
    );
}
