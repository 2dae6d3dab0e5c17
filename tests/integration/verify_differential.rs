//! The differential layer (`verify::differential`) claims only what it tested, end to end
//! through `verify::verify` against the real Docker daemon: a fix whose changed function no
//! test calls sends no generated input through both versions, and its row says `not_run` with
//! why (a receipt row of `clean` over nothing tested read as evidence); a fix of the called
//! function is tested and `clean`. Both stay `verified` (a layer that did not run decides
//! nothing). Fails when Docker is missing.

use crate::verify_common;

use patchloop::verify::FitOptions;
use patchloop::verify::receipt::{Layer, Receipt};
use patchloop::verify::verdict::Verdict;
use verify_common::{fixture_of, layer, remove_image, verify_fixture, verify_fixture_runs};

const TAG: &str = "patchloop-verify-differential:test";

/// `cap` clips at a limit ten times too low (the bug); `describe` no test calls.
const LIB: &str = r#"LIMIT = 5


def cap(x):
    return min(x, LIMIT)


def describe(x):
    return "value %s" % x
"#;

const TEST: &str = r#"from lib import cap


def test_cap_keeps_ordinary_values():
    assert cap(10) == 10


def test_cap_clips():
    assert cap(500) == 50
"#;

const IDS: [&str; 1] = ["tests/test_lib.py::test_cap_keeps_ordinary_values"];

/// The limit fixed at module level; the only function it changes is one no test calls.
const UNCALLED: &str = "\
--- a/lib.py
+++ b/lib.py
@@ -1,4 +1,4 @@
-LIMIT = 5
+LIMIT = 50
 
 
 def cap(x):
@@ -6,4 +6,4 @@ def cap(x):
 
 
 def describe(x):
-    return \"value %s\" % x
+    return \"value %r\" % (x,)
";

/// The limit fixed inside the function the failing test calls.
const CALLED: &str = "\
--- a/lib.py
+++ b/lib.py
@@ -2,7 +2,7 @@ LIMIT = 5
 
 
 def cap(x):
-    return min(x, LIMIT)
+    return min(x, LIMIT * 10)
 
 
 def describe(x):
";

/// `patch` verified on the fixture image `tag` whose `lib.py` is `lib`, every layer on.
async fn run(
    d: &bollard::Docker,
    (tag, lib): (&str, &str),
    patch: &str,
    ids: &[&str],
    run_id: &str,
) -> Receipt {
    let base = [("lib.py", lib)];
    verify_fixture(d, tag, patch, ids, FitOptions::default(), run_id, &base).await
}

/// The fixture image `tag` of `lib.py` and its tests, built on the daemon; the directory is
/// kept alive by the caller.
async fn lib_fixture(tag: &str, lib: &str, test: &str) -> (bollard::Docker, tempfile::TempDir) {
    let d = patchloop::sandbox::docker::connect()
        .await
        .expect("Docker is required for this test");
    let dir = fixture_of(&d, &[("lib.py", lib), ("tests/test_lib.py", test)], tag).await;
    (d, dir)
}

/// The receipt's differential row, once the verdict is `want` (the reason shown if not).
fn differential(r: &Receipt, want: Verdict) -> &Layer {
    let l = layer(r, "differential");
    assert_eq!(r.decision.verdict, want, "{}\n{l:?}", r.decision.reason);
    l
}

/// The note's "N call(s) answered in M child process(es)": (N, M).
fn answered(detail: &str) -> (usize, usize) {
    const MID: &str = " call(s) answered in ";
    let (before, after) = detail
        .split_once(MID)
        .unwrap_or_else(|| panic!("no count of calls answered: {detail}"));
    let number = |s: Option<&str>| -> usize {
        s.and_then(|w| w.parse().ok())
            .unwrap_or_else(|| panic!("{detail}"))
    };
    (
        number(before.rsplit(' ').next()),
        number(after.split(' ').next()),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_differential_says_not_run_when_it_tested_nothing() {
    let d = patchloop::sandbox::docker::connect()
        .await
        .expect("Docker is required for this test");
    let _dir = fixture_of(&d, &[("lib.py", LIB), ("tests/test_lib.py", TEST)], TAG).await;

    let r = run(&d, (TAG, LIB), UNCALLED, &IDS, "test-verify-differential").await;
    let l = differential(&r, Verdict::Verified);
    assert_eq!(l.status, "not_run", "{l:?}");
    assert!(
        l.detail.starts_with("no generated input was tested: ") && l.detail.contains("describe"),
        "{l:?}"
    );

    let r = run(&d, (TAG, LIB), CALLED, &IDS, "test-verify-differential").await;
    let l = differential(&r, Verdict::Verified);
    assert_eq!(l.status, "clean", "{l:?}");
    assert!(!l.detail.contains(" 0 generated input(s)"), "{l:?}");
    // A call asked again (a tested call by each check, a drawn one by each agreement) reuses
    // its answer: fewer children than answers, and some.
    let (asked, forked) = answered(&l.detail);
    assert!(0 < forked && forked < asked, "{l:?}");

    remove_image(&d, TAG).await;
}

const STORES_TAG: &str = "patchloop-verify-differential:stores";

/// `first` marks the tree it is given (that is its job) but tests the mark the wrong way
/// round, so no test's call reaches the store; `update` returns a copy without the key.
const STORES_LIB: &str = r#"STOP = "stop"


def first(target, tree):
    if "first" in tree:
        tree["first"] = STOP
        return target
    return STOP


def update(d, key, value):
    out = dict(d)
    out[key] = value
    return dict(d)
"#;

const STORES_TEST: &str = r#"from lib import STOP, first, update


def test_first_keeps_the_first():
    tree = {}
    assert first(1, tree) == 1
    assert first(2, tree) == STOP


def test_update_sets_the_key():
    assert update({"a": 1}, "b", 2) == {"a": 1, "b": 2}
"#;

/// The fix of `first`: the store its own text makes is now reached.
const FIRST_FIXED: &str = "\
--- a/lib.py
+++ b/lib.py
@@ -2,7 +2,7 @@ STOP = \"stop\"
 
 
 def first(target, tree):
-    if \"first\" in tree:
+    if \"first\" not in tree:
         tree[\"first\"] = STOP
         return target
     return STOP
";

/// `update` made to pass by writing into the caller's dict, which its text never did.
const UPDATE_IN_PLACE: &str = "\
--- a/lib.py
+++ b/lib.py
@@ -11,4 +11,5 @@ def first(target, tree):
 def update(d, key, value):
     out = dict(d)
     out[key] = value
-    return dict(d)
+    d[key] = value
+    return d
";

/// A change in place is a finding only where the original's own text never changes that
/// argument: a fix that reaches the store the function is for stays `verified`, a patch that
/// starts writing into its caller's dict is stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_the_original_makes_is_its_contract_a_new_one_is_a_finding() {
    let (d, _dir) = lib_fixture(STORES_TAG, STORES_LIB, STORES_TEST).await;
    let fixture = (STORES_TAG, STORES_LIB);

    let ids = ["tests/test_lib.py::test_first_keeps_the_first"];
    let r = run(&d, fixture, FIRST_FIXED, &ids, "test-diff-stores-1").await;
    let l = differential(&r, Verdict::Verified);
    assert_eq!(l.status, "clean", "{l:?}");

    let ids = ["tests/test_lib.py::test_update_sets_the_key"];
    let r = run(&d, fixture, UPDATE_IN_PLACE, &ids, "test-diff-stores-2").await;
    let l = differential(&r, Verdict::NeedsReview);
    assert!(
        l.detail.contains("mutates_input") || l.detail.contains("in place"),
        "{l:?}"
    );

    remove_image(&d, STORES_TAG).await;
}

const NEAR_TAG: &str = "patchloop-verify-differential:near";

/// Two bugs: `suffix` forgets the sign (`-1` gets 'th'); `singular` doubles the capital of a
/// capitalised irregular word ('Geese' gives 'GGoose' less one letter: 'Ggoose').
const NEAR_LIB: &str = r#"IRREGULAR = {"geese": "goose", "mice": "mouse", "teeth": "tooth"}


def suffix(n):
    """The ordinal suffix of a whole number or its digits."""
    n = int(n)
    if n % 100 in (11, 12, 13):
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def singular(word):
    low = word.lower()
    if low in IRREGULAR:
        out = IRREGULAR[low]
        if word[:1].isupper():
            out = word[0] + out
        return out
    return word[:-1] if low.endswith("s") else word
"#;

const NEAR_TEST: &str = r#"from lib import singular, suffix


def test_suffix_of_positive_numbers():
    assert [suffix(n) for n in (1, 2, 3, 4, 11, 12, 21, 102)] == \
        ["st", "nd", "rd", "th", "th", "th", "st", "nd"]


def test_suffix_of_negative_numbers():
    assert [suffix(n) for n in ("-1", "-2", "-23", "-101")] == ["st", "nd", "rd", "st"]


def test_singular_of_regular_words():
    assert [singular(w) for w in ("cats", "Cats", "dogs", "Bus", "sheep")] == \
        ["cat", "Cat", "dog", "Bu", "sheep"]


def test_singular_of_irregular_words():
    assert singular("geese") == "goose"
    assert singular("Geese") == "Goose"
    assert singular("Mice") == "Mouse"
"#;

/// The sign dropped after a conversion to float: right for every number a float holds
/// exactly, 'th' for 10 ** 18 + 1.
const THROUGH_FLOAT: &str = "\
--- a/lib.py
+++ b/lib.py
@@ -3,7 +3,7 @@
 
 def suffix(n):
     \"\"\"The ordinal suffix of a whole number or its digits.\"\"\"
-    n = int(n)
+    n = abs(float(n))  # numbers, digits and floats alike
     if n % 100 in (11, 12, 13):
         return \"th\"
     return {1: \"st\", 2: \"nd\", 3: \"rd\"}.get(n % 10, \"th\")
";

const SIGN_FIXED: &str = "\
--- a/lib.py
+++ b/lib.py
@@ -3,7 +3,7 @@
 
 def suffix(n):
     \"\"\"The ordinal suffix of a whole number or its digits.\"\"\"
-    n = int(n)
+    n = abs(int(n))
     if n % 100 in (11, 12, 13):
         return \"th\"
     return {1: \"st\", 2: \"nd\", 3: \"rd\"}.get(n % 10, \"th\")
";

/// The doubled capital stripped from every answer: 'Ccats' now gives 'Cat'.
const CAPITAL_STRIPPED: &str = "\
--- a/lib.py
+++ b/lib.py
@@ -15,5 +15,9 @@
         out = IRREGULAR[low]
         if word[:1].isupper():
             out = word[0] + out
-        return out
-    return word[:-1] if low.endswith(\"s\") else word
+    else:
+        out = word[:-1] if low.endswith(\"s\") else word
+    # a capitalised irregular can come back with its capital doubled
+    if len(out) > 1 and out[0].isupper() and out[1] == out[0].lower():
+        out = out[0] + out[2:]
+    return out
";

const CAPITAL_FIXED: &str = "\
--- a/lib.py
+++ b/lib.py
@@ -14,6 +14,6 @@
     if low in IRREGULAR:
         out = IRREGULAR[low]
         if word[:1].isupper():
-            out = word[0] + out
+            out = out.capitalize()
         return out
     return word[:-1] if low.endswith(\"s\") else word
";

/// Evidence from the tests' own neighbourhood: a whole number moved past a float's
/// precision (the original tells 10 ** 18 + 1 … + 4 apart, a patch through `float` does not),
/// and an agreement the bug broke only on the failing test's call (a word lower-cased and
/// capitalised) that the patched code restores there and breaks on a neighbour ('Ccats').
/// The fixes of both bugs stay `verified`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_number_through_a_float_and_a_fix_of_only_the_tested_word_are_findings() {
    let (d, _dir) = lib_fixture(NEAR_TAG, NEAR_LIB, NEAR_TEST).await;
    let fixture = (NEAR_TAG, NEAR_LIB);

    let ids = ["tests/test_lib.py::test_suffix_of_negative_numbers"];
    let r = run(&d, fixture, THROUGH_FLOAT, &ids, "test-diff-near-1").await;
    let l = differential(&r, Verdict::NeedsReview);
    assert!(l.detail.contains("loses_precision"), "{l:?}");
    let r = run(&d, fixture, SIGN_FIXED, &ids, "test-diff-near-2").await;
    assert_eq!(differential(&r, Verdict::Verified).status, "clean");

    let ids = ["tests/test_lib.py::test_singular_of_irregular_words"];
    let r = run(&d, fixture, CAPITAL_STRIPPED, &ids, "test-diff-near-3").await;
    let l = differential(&r, Verdict::NeedsReview);
    assert!(
        l.detail.contains("breaks_agreement") && l.detail.contains("capitalised"),
        "{l:?}"
    );
    let r = run(&d, fixture, CAPITAL_FIXED, &ids, "test-diff-near-4").await;
    assert_eq!(differential(&r, Verdict::Verified).status, "clean");

    remove_image(&d, NEAR_TAG).await;
}

const EXTENDS_TAG: &str = "patchloop-verify-differential:extends";

/// `parse` registers its option tokens in the list it is given through a helper, but its
/// test is flipped (docopt's `parse_argv` of the field corpus, in small): a token of dashes
/// only never reaches the helper; `tail` reads any sequence.
const EXTENDS_LIB: &str = r#"def _register(options, name):
    options.append(name)
    return "option " + name


def parse(tokens, options):
    out = []
    for t in tokens:
        if not t.startswith("-"):
            out.append(_register(options, t))
        else:
            out.append("argument " + t)
    return out


def tail(items, x):
    return list(items) + [x]
"#;

const EXTENDS_TEST: &str = r#"from lib import parse, tail


def test_parse_registers_options():
    opts = []
    assert parse(["-v", "file"], opts) == ["option -v", "argument file"]
    assert parse(["-q"], opts) == ["option -q"]
    assert opts == ["-v", "-q"]


def test_tail_appends():
    assert tail([1, 2], 3) == [1, 2, 3]
"#;

/// The fix: an option token goes to the helper that appends it to the caller's list, a
/// plain one is an argument.
const REGISTERS: &str = "\
--- a/lib.py
+++ b/lib.py
@@ -6,8 +6,8 @@
 def parse(tokens, options):
     out = []
     for t in tokens:
-        if not t.startswith(\"-\"):
+        if t.startswith(\"-\"):
             out.append(_register(options, t))
         else:
             out.append(\"argument \" + t)
     return out
";

/// `tail` narrowed to lists: it concatenates what it was given (a hunk for after
/// [`REGISTERS`]).
const NARROWS: &str = "\
@@ -16,2 +16,2 @@
 def tail(items, x):
-    return list(items) + [x]
+    return items + [x]
";

/// A tuple or an iterator drawn where the tests pass a list is refused by code that extends
/// the list it was given (a parser registering options, as docopt's does): the fix that
/// reaches that code is `verified`. A patch that stops reading tuples and iterators where
/// the original read them (`items + [x]`) still crashes where the original answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stand_in_refused_by_code_that_extends_its_list_is_no_crash_a_narrowed_reader_is() {
    let (d, _dir) = lib_fixture(EXTENDS_TAG, EXTENDS_LIB, EXTENDS_TEST).await;
    let fixture = (EXTENDS_TAG, EXTENDS_LIB);
    let ids = ["tests/test_lib.py::test_parse_registers_options"];

    let r = run(&d, fixture, REGISTERS, &ids, "test-diff-extends-1").await;
    let l = differential(&r, Verdict::Verified);
    assert_eq!(l.status, "clean", "{l:?}");

    let r = run(
        &d,
        fixture,
        &format!("{REGISTERS}{NARROWS}"),
        &ids,
        "test-diff-extends-2",
    )
    .await;
    let l = differential(&r, Verdict::NeedsReview);
    assert!(
        l.detail.contains("crashes") && l.detail.contains("`tail`"),
        "{l:?}"
    );

    remove_image(&d, EXTENDS_TAG).await;
}

const IGNORED_TAG: &str = "patchloop-verify-differential:ignored";

/// `group(n)` answers the whole match for every `n` but 0, the test flipped (marko's
/// `MatchObj.group` of the field corpus, in small): the bug makes `n` irrelevant.
const IGNORED_LIB: &str = r#"class Match:
    def __init__(self, text, groups):
        self._text = text
        self._groups = groups

    def group(self, n=0):
        if n != 0:
            return self._text
        return self._groups[n - 1]


def nth(items, n, default=None):
    try:
        return items[n]
    except IndexError:
        return default
"#;

const IGNORED_TEST: &str = r#"from lib import Match, nth


def test_group():
    m = Match("ab", ["a", "b"])
    assert m.group() == "ab"
    assert m.group(2) == "b"


def test_nth():
    assert nth(["a", "b", "c"], 1) == "b"
    assert nth(["a", "b", "c"], 5, "none") == "none"


def test_nth_of_a_negative_index_is_the_default():
    assert nth(["a", "b", "c"], -1, "none") == "none"
"#;

/// The fix: a group's number reads the group, and one that does not exist raises, as
/// `re.Match.group` does.
const GROUP_FIXED: &str = "\
--- a/lib.py
+++ b/lib.py
@@ -4,7 +4,7 @@
         self._groups = groups
 
     def group(self, n=0):
-        if n != 0:
+        if n == 0:
             return self._text
         return self._groups[n - 1]
 
";

/// `nth` made to pass the negative index, its handler dropped for a guard that covers only
/// the indexes the tests use.
const NTH_GUARDED: &str = "\
--- a/lib.py
+++ b/lib.py
@@ -10,7 +10,6 @@
 
 
 def nth(items, n, default=None):
-    try:
-        return items[n]
-    except IndexError:
+    if n < 0 or n == 5:
         return default
+    return items[n]
";

/// A crash only counts where the original's answer depended on the value: the bug that
/// made `group`'s number irrelevant answered `group(3)` as it answered the tested
/// `group(2)`, so the fix's IndexError there is no crash where the original answered. A patch
/// whose guard covers only the tested index still crashes one past it, where the original
/// answered the caller's default.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_counts_only_where_the_original_read_the_value() {
    let (d, _dir) = lib_fixture(IGNORED_TAG, IGNORED_LIB, IGNORED_TEST).await;
    let fixture = (IGNORED_TAG, IGNORED_LIB);

    let ids = ["tests/test_lib.py::test_group"];
    let r = run(&d, fixture, GROUP_FIXED, &ids, "test-diff-ignored-1").await;
    assert_eq!(
        differential(&r, Verdict::Verified).status,
        "clean",
        "{:?}",
        layer(&r, "differential")
    );

    let ids = ["tests/test_lib.py::test_nth_of_a_negative_index_is_the_default"];
    let r = run(&d, fixture, NTH_GUARDED, &ids, "test-diff-ignored-2").await;
    let l = differential(&r, Verdict::NeedsReview);
    assert!(l.detail.contains("crashes"), "{l:?}");

    remove_image(&d, IGNORED_TAG).await;
}

/// The limit fixed for the first call made in the container only (a file in `/tmp` counts the
/// calls): the first patched run passes, the later ones fail.
const FIRST_RUN_ONLY: &str = "\
--- a/lib.py
+++ b/lib.py
@@ -2,7 +2,11 @@ LIMIT = 5
 
 
 def cap(x):
-    return min(x, LIMIT)
+    import os
+    os.makedirs(\"/tmp/calls\", exist_ok=True)
+    n = len(os.listdir(\"/tmp/calls\"))
+    os.mkdir(\"/tmp/calls/%d\" % n)
+    return min(x, LIMIT * 10 if n == 0 else LIMIT)
 
 
 def describe(x):
";

/// The generalisation layers start on a spare container once the first patched run passes,
/// beside the re-runs; a patch a later run then fails keeps no report of theirs (they are
/// asked only of a patch every other layer lets through), and neither container outlives the
/// verification.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn layers_started_beside_the_reruns_count_only_for_a_patch_the_reruns_let_through() {
    let (d, _dir) = lib_fixture(TAG_SPARE, LIB, TEST).await;
    // Three runs before and after: the layers start beside the second and third.
    let base = [("lib.py", LIB)];
    let fit = FitOptions::default;
    let flaky = "test-verify-spare-flaky";
    let r = verify_fixture_runs(&d, TAG_SPARE, FIRST_RUN_ONLY, &IDS, fit(), flaky, &base, 3).await;
    assert_eq!(r.decision.verdict, Verdict::Flaky, "{}", r.decision.reason);
    assert!(r.fit.is_none(), "{:?}", r.fit);
    assert_eq!(layer(&r, "differential").status, "not_run");

    // The same limit fixed for good: the layers' report is the receipt's.
    let fixed = "test-verify-spare-fixed";
    let r = verify_fixture_runs(&d, TAG_SPARE, CALLED, &IDS, fit(), fixed, &base, 3).await;
    let l = differential(&r, Verdict::Verified);
    assert_eq!(l.status, "clean", "{l:?}");
    assert!(r.fit.is_some());

    for run_id in [flaky, fixed] {
        let left = d
            .list_containers(Some(bollard::query_parameters::ListContainersOptions {
                all: true,
                filters: Some(std::collections::HashMap::from([(
                    "label".to_string(),
                    vec![format!("{}={run_id}", patchloop::sandbox::LABEL_RUN)],
                )])),
                ..Default::default()
            }))
            .await
            .unwrap();
        assert!(left.is_empty(), "{run_id}: {left:?}");
    }
    remove_image(&d, TAG_SPARE).await;
}

const TAG_SPARE: &str = "patchloop-verify-differential-spare:test";

const LOCKED_TAG: &str = "patchloop-verify-differential:locked";

/// `take` reads a box that holds a lock (no deep copy of it exists), one item short (the bug).
const LOCKED_LIB: &str = r#"import threading


class Box:
    def __init__(self, items):
        self.lock = threading.Lock()
        self.items = list(items)


def take(box, n):
    with box.lock:
        return box.items[:n - 1]
"#;

const LOCKED_TEST: &str = r#"from lib import Box, take


def test_take():
    assert take(Box("abc"), 2) == ["a", "b"]
"#;

/// The fix.
const TAKE_FIXED: &str = "\
--- a/lib.py
+++ b/lib.py
@@ -9,4 +9,4 @@
 
 def take(box, n):
     with box.lock:
-        return box.items[:n - 1]
+        return box.items[:n]
";

/// Indexes where the original sliced: past the box's end it raises.
const TAKE_INDEXED: &str = "\
--- a/lib.py
+++ b/lib.py
@@ -9,4 +9,4 @@
 
 def take(box, n):
     with box.lock:
-        return box.items[:n - 1]
+        return [box.items[i] for i in range(n)]
";

/// An argument that cannot be copied (it holds a lock) is kept as the test left it, so the
/// function is still asked: a patch that crashes one step past the tested count is seen, the
/// fix is `verified` and `clean`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_argument_that_cannot_be_copied_is_asked_as_the_test_left_it() {
    let (d, _dir) = lib_fixture(LOCKED_TAG, LOCKED_LIB, LOCKED_TEST).await;
    let fixture = (LOCKED_TAG, LOCKED_LIB);
    let ids = ["tests/test_lib.py::test_take"];

    let r = run(&d, fixture, TAKE_FIXED, &ids, "test-diff-locked-1").await;
    let l = differential(&r, Verdict::Verified);
    assert_eq!(l.status, "clean", "{l:?}");
    assert!(l.detail.contains("kept as the test left it"), "{l:?}");

    let r = run(&d, fixture, TAKE_INDEXED, &ids, "test-diff-locked-2").await;
    let l = differential(&r, Verdict::NeedsReview);
    assert!(
        l.detail.contains("crashes") && l.detail.contains("`take`"),
        "{l:?}"
    );

    remove_image(&d, LOCKED_TAG).await;
}
