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

const GRADE: &str = r#"import functools


def level(v):
    if v > 3:
        return "high"
    return "low"


def untouched(s):
    return s.upper()


class Scale:
    def factor(self, x):
        return x * 2

    @staticmethod
    def half(x):
        return x // 2

    @classmethod
    def label(cls, n):
        return "%s/%d" % (cls.__name__, n)


@functools.lru_cache(maxsize=None)
def tag(name, *, sep="-"):
    return name.strip() + sep
"#;

const TEST: &str = r#"from grade import Scale, level, tag, untouched


def test_three_is_high():
    assert untouched("a") == "A"
    assert Scale.half(8) == 4
    assert Scale.label(2) == "Scale/2"
    assert tag("Ab ", sep=":") == "Ab:"
    assert level(3) == "high"
    assert level(10) == "high"
"#;

/// The target's fix (`>` → `>=`) plus a new rule for negatives the test never tries (through a
/// helper the patch adds), an instance method change the probe cannot call (no literal `self`),
/// static and class methods that now treat negatives differently, and a decorated function with
/// a keyword-only argument that now names empty names.
const WIDE: &str = "diff --git a/grade.py b/grade.py
--- a/grade.py
+++ b/grade.py
@@ -1,8 +1,14 @@
 import functools
 
 
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
 
@@ -13,17 +19,17 @@ def untouched(s):
 
 class Scale:
     def factor(self, x):
-        return x * 2
+        return x * 3
 
     @staticmethod
     def half(x):
-        return x // 2
+        return x // 2 if x > 0 else 0
 
     @classmethod
     def label(cls, n):
-        return \"%s/%d\" % (cls.__name__, n)
+        return \"%s/%d\" % (cls.__name__, abs(n))
 
 
 @functools.lru_cache(maxsize=None)
 def tag(name, *, sep=\"-\"):
-    return name.strip() + sep
+    return (name.strip() or \"anon\") + sep
";

/// Only the fix: every input but the target's own behaves as before.
const EXACT: &str = "diff --git a/grade.py b/grade.py
--- a/grade.py
+++ b/grade.py
@@ -2,7 +2,7 @@ import functools
 
 
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

/// `from` with one more label (a layer with no files: quick).
async fn label_image(d: &bollard::Docker, from: &str, kind: &str) -> String {
    use futures_util::StreamExt;
    let tag = format!("patchloop-verify-probe:{kind}");
    let dockerfile = format!("FROM {from}\nLABEL patchloop.kind=\"{kind}\"\n");
    let mut tar = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(dockerfile.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    tar.append_data(&mut h, "Dockerfile", dockerfile.as_bytes())
        .unwrap();
    let opts = bollard::query_parameters::BuildImageOptionsBuilder::new()
        .t(&tag)
        .rm(true)
        .build();
    let body = bollard::body_full(tar.into_inner().unwrap().into());
    let mut stream = d.build_image(opts, None, Some(body));
    while let Some(item) = stream.next().await {
        let info = item.unwrap_or_else(|e| panic!("building {tag}: {e}"));
        assert!(info.error_detail.is_none(), "building {tag}: {info:?}");
    }
    tag
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
    assert_eq!(
        wide.functions,
        vec![
            "grade.py::level",
            "grade.py::Scale.half",
            "grade.py::Scale.label",
            "grade.py::tag"
        ],
        "{wide:?}"
    );
    let listed = |input: &str| {
        let c = wide
            .changed
            .iter()
            .find(|c| c.input == input)
            .unwrap_or_else(|| panic!("{input} is not listed: {wide:?}"));
        (c.before.as_str(), c.after.as_str())
    };
    assert_eq!(listed("Scale.half(-1)"), ("-1", "0"));
    // The class method's `cls` is the class, not an argument.
    assert_eq!(listed("Scale.label(-1)"), ("'Scale/-1'", "'Scale/1'"));
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
    let empty = wide
        .changed
        .iter()
        .find(|c| c.input == "tag('', sep=':')")
        .unwrap_or_else(|| panic!("tag('', sep=':') is not listed: {wide:?}"));
    assert_eq!(
        (empty.before.as_str(), empty.after.as_str()),
        ("':'", "'anon:'")
    );
    // The target's own calls are never listed, though level(3) and tag('Ab ', ...) changed.
    assert!(
        wide.changed.iter().all(|c| c.input != "level(3)"
            && c.input != "level(10)"
            && !c.input.starts_with("tag('Ab ',")),
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

    // Other languages: a note, no containers.
    let node = PreparedImage {
        tag: label_image(&d, TAG, "node").await,
        ..image.clone()
    };
    let r = probe::probe(&d, &node, EXACT, &[TARGET.into()], "probe-test").await;
    assert_eq!(r.note, "not supported for node");
    remove_image(&d, &node.tag).await;

    // Never an error: an unreadable patch is a note.
    let bad = probe::probe(&d, &image, "not a diff", &[TARGET.into()], "probe-test").await;
    assert!(bad.changed.is_empty() && !bad.note.is_empty(), "{bad:?}");
    remove_image(&d, TAG).await;
    assert!(wide_secs < 30.0 && exact_secs < 30.0);
}
