//! The edge-case probe (`verify::probe`) against the real Docker daemon on a tiny Python project:
//! a fix that also changes behaviour for inputs the target test never used is listed, an exact
//! fix lists nothing. Fails when Docker is missing.

use crate::verify_common;

use std::time::Instant;

use patchloop::sandbox::docker;
use patchloop::verify::PreparedImage;
use patchloop::verify::probe::{self, EdgeProbe};
use verify_common::{fixture_image, remove_image};

const TAG: &str = "patchloop-verify-probe:test";
const TARGET: &str = "tests/test_grade.py::test_three_is_high";

const GRADE: &str = r#"def level(v):
    if v > 3:
        return "high"
    return "low"


def untouched(s):
    return s.upper()


class Scale:
    def factor(self, x):
        return x * 2
"#;

const TEST: &str = r#"from grade import level, untouched


def test_three_is_high():
    assert untouched("a") == "A"
    assert level(3) == "high"
    assert level(10) == "high"
"#;

/// The target's fix (`>` → `>=`) plus a new rule for negatives the test never tries (through a
/// helper the patch adds), and a method change the probe cannot call (no literal `self`).
const WIDE: &str = "diff --git a/grade.py b/grade.py
--- a/grade.py
+++ b/grade.py
@@ -1,4 +1,10 @@
+def is_negative(v):
+    return v < 0
+
+
 def level(v):
-    if v > 3:
+    if is_negative(v):
+        raise ValueError(\"negative\")
+    if v >= 3:
         return \"high\"
     return \"low\"
@@ -11,3 +17,3 @@ def untouched(s):
 class Scale:
     def factor(self, x):
-        return x * 2
+        return x * 3
";

/// Only the fix: every input but the target's own behaves as before.
const EXACT: &str = "diff --git a/grade.py b/grade.py
--- a/grade.py
+++ b/grade.py
@@ -1,4 +1,4 @@
 def level(v):
-    if v > 3:
+    if v >= 3:
         return \"high\"
     return \"low\"
";

async fn run(d: &bollard::Docker, image: &PreparedImage, patch: &str) -> (EdgeProbe, f64) {
    let t = Instant::now();
    let r = probe::probe(d, image, patch, &[TARGET.to_string()], "probe-test").await;
    let secs = t.elapsed().as_secs_f64();
    eprintln!("probe took {secs:.2} s: {r:#?}");
    (r, secs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_probe_lists_behaviour_changes_beyond_the_target_tests() {
    let d = docker::connect()
        .await
        .expect("Docker is required for this test");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tests")).unwrap();
    std::fs::write(dir.path().join("grade.py"), GRADE).unwrap();
    std::fs::write(dir.path().join("tests/test_grade.py"), TEST).unwrap();
    fixture_image(&d, dir.path(), TAG).await;
    let image = PreparedImage {
        tag: TAG.into(),
        tests_dirs: vec!["tests".into()],
        test_cmd: "python -m pytest".into(),
    };

    let (wide, wide_secs) = run(&d, &image, WIDE).await;
    assert_eq!(wide.functions, vec!["grade.py::level"], "{wide:?}");
    assert!(wide.inputs >= 5, "{wide:?}");
    let neg = wide
        .changed
        .iter()
        .find(|c| c.input == "level(-1)")
        .unwrap_or_else(|| panic!("level(-1) is not listed: {wide:?}"));
    assert_eq!(
        (neg.before.as_str(), neg.after.as_str()),
        ("'low'", "raise ValueError")
    );
    // The target's own calls (3 and 10) are never listed, though 3 changed.
    assert!(
        wide.changed
            .iter()
            .all(|c| c.input != "level(3)" && c.input != "level(10)"),
        "{wide:?}"
    );
    assert!(wide.note.contains("Scale.factor (method)"), "{}", wide.note);
    assert!(
        wide.note
            .contains("added by the patch, not probed: grade.py::is_negative"),
        "{}",
        wide.note
    );

    let (exact, exact_secs) = run(&d, &image, EXACT).await;
    assert_eq!(exact.functions, vec!["grade.py::level"], "{exact:?}");
    assert!(exact.inputs >= 5, "{exact:?}");
    assert!(exact.changed.is_empty(), "{exact:?}");
    assert!(exact.note.contains("0 changed"), "{}", exact.note);

    // Never an error: an unreadable patch is a note.
    let bad = probe::probe(&d, &image, "not a diff", &[TARGET.into()], "probe-test").await;
    assert!(bad.changed.is_empty() && !bad.note.is_empty(), "{bad:?}");
    remove_image(&d, TAG).await;
    assert!(wide_secs < 30.0 && exact_secs < 30.0);
}
