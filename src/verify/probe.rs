//! Behaviour beyond the tested points (issue #23, layer 1): the calls the failing tests make
//! to the changed functions, and relation-preserving variants of them, before and after the
//! patch. A patch that fixes the code keeps the relations the original code kept at the
//! tested input; one fitted to that input breaks them.
//!
//! How ([`neighbourhood`], in the verification container, after the verdict's test runs):
//! 1. [`targets`]: every function the patch changes that exists before and after it
//!    (methods, static and class methods, nested functions too) and gains a decision or a
//!    type read ([`added_decisions`]: a patch that only rewrites operands of the decisions
//!    already there costs no probe), with its *landmarks*: the ints and strings of its
//!    pre-patch body and of the module's top level;
//! 2. `pl_probe.py shadow` runs the failing tests in the tree before the patch (`git apply
//!    -R`), then after it, with a profile hook: at each call of a changed function (a distinct
//!    input at most [`MAX_POINTS`] times per function) it calls the function again on deep
//!    copies of that input (the *point*) and of its variants: **retypes** that keep every
//!    value (int → float, `'3.5'` → 3.5, list ↔ tuple, list → iterator), every date a day on (differences
//!    kept: "other dates") and **moves** that shift or scale
//!    every int away from zero and Caesar-shift every letter and digit the same way, keeping
//!    equalities between arguments, signs, zero, emptiness, and the landmarks (a value that is
//!    one, or whose move would cross one, stays; a landmark string inside an argument stays
//!    while the rest moves). Each call runs twice: an input whose two answers differ is
//!    unstable and not judged;
//! 3. [`relations`]: where the patch changed the answer at the point, every relation the
//!    original code kept between the point and a variant must hold after the patch too: a
//!    retype answered like the point (`f((3, 1, 2)) == f([3, 1, 2])`), a move answered with
//!    the point's answer moved the same way (`f([4, 2, 3])` is `f([3, 1, 2])` shifted). A
//!    broken relation is a finding: the patch treats the tested input differently from inputs
//!    the original code treated alike. A genuine boundary fix (`v > 3` → `v >= 3` at `v = 3`)
//!    is not flagged: 3 is a landmark, and the relation between 3 and 4 did not hold before.
//!
//! Costs two runs of the failing tests (one per tree) plus, per recorded input, 2 × (1 + up to
//! 7 variants) calls, and nothing when no target is left. Python images only. Not an integrity layer: the code under test shares
//! the script's process (the capability scan flags patches that reach for it).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::evidence::{Finding, Layer};
use super::exec::{apply_patch, apply_patch_reverse};
use super::harness;
use super::pysrc::{Lit, Source, descendants, named_kids};
use super::signals::ChangedFile;
use crate::sandbox::output::clip_chars;
use crate::sandbox::{ExecRequest, Sandbox, WORKSPACE};
use tree_sitter::Node;

/// The probe's script, sent with each exec as `python3 -I -B -c` source like the verifier's
/// other harness scripts (nothing in the workspace is trusted to hold it).
/// The probe script, after the chooser it picks its pytest with (`pl_pytest.py`), and the
/// differential layer's mode (`pl_differ.py`, which ends with the modes' dispatch).
pub const PL_PROBE: &str = concat!(
    include_str!("../../images/harness/pl_pytest.py"),
    include_str!("../../images/harness/pl_probe.py"),
    include_str!("../../images/harness/pl_differ.py")
);

/// Distinct inputs recorded per function.
pub const MAX_POINTS: usize = 8;
/// Changed functions probed per patch.
pub const MAX_TARGETS: usize = 12;
/// Time for the variant calls in one tree (the failing tests themselves always finish).
pub const SHADOW_DEADLINE: Duration = Duration::from_secs(60);
/// One call's limit (SIGALRM in the script): a variant may loop where the tested input did not.
const PER_CALL_SECS: f64 = 2.0;
const MARKER: &str = "@@PATCHLOOP-PROBE@@ ";
const VALUE_CHARS: usize = 80;

/// A changed function to probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    /// Post-patch path (the after tree's file).
    pub file: String,
    /// Pre-patch path (the before tree's file; differs on a rename).
    #[serde(skip)]
    pub pre_file: String,
    pub qualname: String,
    /// 1-based line of the def in the post-patch file.
    #[serde(skip)]
    pub line: usize,
    /// The first argument is the object or class (a method or class method): never varied.
    pub bound: bool,
    /// Landmarks: ints and strings of the pre-patch body and of the module's top level.
    pub ints: Vec<i64>,
    pub strs: Vec<String>,
}

/// The functions to probe: changed by the patch (an added line in the def, or a removed one
/// in its pre-patch version) and defined in both trees. Notes say what is left out.
pub fn targets(
    files: &[ChangedFile],
    renamed_from: &BTreeMap<String, String>,
) -> (Vec<Target>, Vec<String>) {
    changed_functions(files, renamed_from, true)
}

/// The functions a patch changes that exist before and after it; `gated`: only those that
/// gain a decision or a type read (the probe's targets), with a note naming the others.
pub fn changed_functions(
    files: &[ChangedFile],
    renamed_from: &BTreeMap<String, String>,
    gate: bool,
) -> (Vec<Target>, Vec<String>) {
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let mut gated = Vec::new();
    for f in files {
        let (Some(pre_text), Some(post)) = (f.pre.as_deref(), Source::parse(&f.post)) else {
            continue;
        };
        let Some(pre) = Source::parse(pre_text) else {
            continue;
        };
        let pre_defs = pre.defs();
        let module = module_literals(&pre);
        let post_defs = post.defs();
        for d in &post_defs {
            let old = super::pysrc::counterpart(&pre_defs, &post_defs, d);
            let added = f.added.range(d.first_line..=d.last_line).next().is_some();
            let removed =
                old.is_some_and(|p| f.removed.range(p.first_line..=p.last_line).next().is_some());
            if !(added || removed) {
                continue;
            }
            let Some(old) = old else {
                notes.push(format!(
                    "added by the patch, not probed: {}::{}",
                    f.path, d.qualname
                ));
                continue;
            };
            if gate && added_decisions(&pre, old.node, &post, d.node).is_empty() {
                // A name defined twice (under an `if`, say) is listed once.
                let name = format!("{}::{}", f.path, d.qualname);
                if !gated.contains(&name) {
                    gated.push(name);
                }
                continue;
            }
            // A def whose change is all in a nested def is probed through the nested one.
            let (mut ints, mut strs) = module.clone();
            for (lit, _) in pre.literals(old.node) {
                for x in lit.flatten() {
                    match x {
                        Lit::Int(n) => {
                            if let Ok(n) = i64::try_from(*n) {
                                ints.insert(n);
                            }
                        }
                        Lit::Str(s) if !s.is_empty() && s.chars().count() <= 200 => {
                            strs.insert(s.clone());
                        }
                        _ => {}
                    }
                }
            }
            let bound = d.method && !decorated_with(&post, d, "staticmethod");
            out.push(Target {
                file: f.path.clone(),
                pre_file: renamed_from
                    .get(&f.path)
                    .cloned()
                    .unwrap_or_else(|| f.path.clone()),
                qualname: d.qualname.clone(),
                line: d.first_line,
                bound,
                ints: ints.into_iter().collect(),
                strs: strs.into_iter().collect(),
            });
        }
    }
    if !gated.is_empty() {
        notes.push(format!(
            "adds no branch, condition, handler, loop or type read, not probed: {}",
            gated.join(", ")
        ));
    }
    if out.len() > MAX_TARGETS {
        notes.push(format!(
            "{} changed functions, the first {MAX_TARGETS} probed",
            out.len()
        ));
        out.truncate(MAX_TARGETS);
    }
    (out, notes)
}

/// Node kinds that decide between paths through a function.
const DECISIONS: &[&str] = &[
    "if_statement",
    "elif_clause",
    "conditional_expression",
    "boolean_operator",
    "comparison_operator",
    "try_statement",
    "except_clause",
    "while_statement",
    "for_statement",
    "for_in_clause",
    "if_clause",
    "match_statement",
    "case_clause",
    "return_statement",
    "raise_statement",
];
/// Calls and attributes that read an input's type or identity rather than its value.
const TYPE_READS: &[&str] = &[
    "isinstance",
    "issubclass",
    "type",
    "hasattr",
    "callable",
    "hash",
    "id",
    "__class__",
];

/// What the patch adds to a changed function that could tell the tested input from its
/// retyped variants: more decisions of a kind (a branch, a condition, a handler, a loop, a
/// return) or more reads of a type. The probe's verdict comes only from type relations
/// broken at the tested input (see [`relations`]), and a patch that only rewrites the
/// operands of the decisions the function already had (the typical one-line fix:
/// `<` for `<=`, `and` for `or`, a constant) seldom tells a list from a tuple or an int
/// from a float where the code before it did not (an operand written as a test's literal is
/// the structural signals' to see; every probe catch of the gaming corpus adds a branch).
/// So the probe runs, at two runs of the failing tests, only for the functions where this
/// is not empty: a cost rule, not a proof.
pub fn added_decisions(pre: &Source, old: Node, post: &Source, new: Node) -> Vec<String> {
    let count = |src: &Source, n: Node| {
        let mut m: BTreeMap<String, usize> = BTreeMap::new();
        for x in descendants(n) {
            let key = if DECISIONS.contains(&x.kind()) {
                Some(x.kind().to_string())
            } else if x.kind() == "identifier" && TYPE_READS.contains(&src.text(x)) {
                Some(src.text(x).to_string())
            } else {
                None
            };
            if let Some(k) = key {
                *m.entry(k).or_default() += 1;
            }
        }
        m
    };
    let (before, after) = (count(pre, old), count(post, new));
    after
        .into_iter()
        .filter(|(k, n)| before.get(k).copied().unwrap_or(0) < *n)
        .map(|(k, _)| k)
        .collect()
}

fn decorated_with(src: &Source, d: &super::pysrc::Def, name: &str) -> bool {
    d.node
        .parent()
        .filter(|p| p.kind() == "decorated_definition")
        .is_some_and(|p| {
            named_kids(p)
                .into_iter()
                .filter(|k| k.kind() == "decorator")
                .any(|k| src.text(k).trim_start_matches('@').trim() == name)
        })
}

/// Ints and strings of a module's top-level statements (tables, constants), not of its defs
/// and classes.
fn module_literals(src: &Source) -> (BTreeSet<i64>, BTreeSet<String>) {
    let (mut ints, mut strs) = (BTreeSet::new(), BTreeSet::new());
    for stmt in named_kids(src.root()) {
        if matches!(
            stmt.kind(),
            "function_definition" | "class_definition" | "decorated_definition"
        ) {
            continue;
        }
        for (lit, _) in src.literals(stmt) {
            for x in lit.flatten() {
                match x {
                    Lit::Int(n) => {
                        if let Ok(n) = i64::try_from(*n) {
                            ints.insert(n);
                        }
                    }
                    Lit::Str(s) if !s.is_empty() && s.chars().count() <= 200 => {
                        strs.insert(s.clone());
                    }
                    _ => {}
                }
            }
        }
    }
    (ints, strs)
}

/// One tested input of a changed function, with its variants, as one tree answered them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Point {
    #[serde(rename = "fn")]
    pub fn_index: usize,
    /// The input, canonical (pairs the trees' points).
    pub key: String,
    /// The call as Python-like text.
    pub call: String,
    /// The answer at the tested input (`canon(result)` or `raise Type: message`).
    pub point: String,
    pub stable: bool,
    #[serde(default)]
    pub variants: Vec<VariantOut>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct VariantOut {
    /// `float`, `number`, `tuple`, `list`, `iter`, `days` (answered like the tested input) or `shift1`,
    /// `shift3`, `scale2` (moves: answered with the tested answer moved).
    pub name: String,
    pub call: String,
    pub out: String,
    pub stable: bool,
    /// For a move: the point's answer moved the same way (`None`: it raised or cannot move).
    #[serde(default)]
    pub moved: Option<String>,
}

impl VariantOut {
    /// A variant whose value a function may legitimately answer with (formatting echoes
    /// `'NaN'` and `nan` differently): compared by failing or not, not by the answer.
    fn echoable(&self) -> bool {
        matches!(self.name.as_str(), "number" | "days")
    }

    /// A variant the function should answer like the tested input (a value kept, dates a
    /// day on): the relation is equality; for the others (moves) it is the answer moved.
    fn retype(&self) -> bool {
        matches!(
            self.name.as_str(),
            "float" | "number" | "tuple" | "list" | "iter" | "days"
        )
    }
}

/// What the comparison covered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Compared {
    /// Tested inputs answered in both trees.
    pub points: usize,
    /// Of those, the ones whose answer the patch changed.
    pub changed: usize,
    /// Relations the original code kept at a changed point (the evidence judged).
    pub relations: usize,
    /// Relations the patched code breaks.
    pub broken: usize,
}

/// `3.0` and `3` are one value for a retype to a number.
fn numeric(s: &str) -> String {
    static INTEGRAL: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"(\d)\.0([^\d.]|$)").unwrap());
    INTEGRAL.replace_all(s, "$1$2").into_owned()
}

/// The relations layer, pure: for each tested input the patch changed, the relations between
/// it and its variants that held in the original tree and break in the patched one.
pub fn relations(
    targets: &[Target],
    before: &[Point],
    after: &[Point],
) -> (Vec<Finding>, Compared) {
    let mut c = Compared::default();
    // fn index → (count, first finding)
    let mut broken: BTreeMap<usize, (usize, Finding)> = BTreeMap::new();
    for b in before {
        let Some(a) = after
            .iter()
            .find(|a| a.fn_index == b.fn_index && a.key == b.key)
        else {
            continue;
        };
        c.points += 1;
        if !(a.stable && b.stable) || a.point == b.point {
            continue;
        }
        c.changed += 1;
        let Some(t) = targets.get(b.fn_index) else {
            continue;
        };
        for bv in b.variants.iter().filter(|v| v.stable) {
            let Some(av) = a.variants.iter().find(|v| v.name == bv.name && v.stable) else {
                continue;
            };
            let norm = |s: &str| {
                if matches!(bv.name.as_str(), "float" | "number") {
                    numeric(s)
                } else {
                    s.to_string()
                }
            };
            let (held, holds, want) = if bv.retype() {
                let raises = |s: &str| s.starts_with("raise ") || s.starts_with("timeout ");
                (
                    norm(&bv.out) == norm(&b.point),
                    // A type the patched code rejects is outside its domain, not a lie.
                    norm(&av.out) == norm(&a.point)
                        || av.out.starts_with("raise TypeError")
                        // A numeral's number and a date a day on may be echoed back in
                        // other words: only failing on one and not the other breaks it.
                        || (bv.echoable() && raises(&av.out) == raises(&a.point)),
                    a.point.clone(),
                )
            } else {
                (
                    // Only a relation the move changes counts: an answer the move leaves as
                    // it is (a landmark, a constant) would make any coincidence a relation.
                    bv.moved.as_deref() == Some(bv.out.as_str()) && bv.out != b.point,
                    av.moved.as_deref() == Some(av.out.as_str()),
                    av.moved
                        .clone()
                        .unwrap_or_else(|| "(the tested answer moved)".into()),
                )
            };
            if !held {
                continue;
            }
            c.relations += 1;
            // Broken only where the patch left the variant's answer as it was: a special case
            // for the tested input changes the answer there and nowhere near it. A fix that
            // changes both answers may move them differently (a median's even case moves the
            // answer by half a step, not a whole one) without fitting anything.
            // Moves (a number scaled, letters changed) are reported as relations but never
            // break: what a move should do to the answer is the function's own business (a
            // plural of a word whose last letter moved is another rule).
            if holds || !bv.retype() || norm(&av.out) != norm(&bv.out) {
                continue;
            }
            c.broken += 1;
            let how = if bv.retype() {
                format!(
                    "the original code answered `{}` like the tested input `{}` ({}); the patched code answers {} for the tested input but {} for it",
                    bv.call,
                    b.call,
                    show(&b.point),
                    show(&a.point),
                    show(&av.out),
                )
            } else {
                format!(
                    "the original code answered `{}` with its answer at the tested input `{}` moved the same way ({}); the patched code answers {} where {} would keep that",
                    bv.call,
                    b.call,
                    show(&bv.out),
                    show(&av.out),
                    show(&want),
                )
            };
            let e = broken.entry(b.fn_index).or_insert_with(|| {
                (
                    0,
                    Finding {
                        layer: Layer::BeyondTestedPoints,
                        kind: "breaks_relation".into(),
                        path: t.file.clone(),
                        line: t.line,
                        evidence: clip_chars(&bv.call, VALUE_CHARS),
                        input: Some(clip_chars(&b.call, VALUE_CHARS)),
                        detail: format!("`{}`: {how}", t.qualname),
                    },
                )
            });
            e.0 += 1;
        }
    }
    let findings = broken
        .into_values()
        .map(|(n, mut f)| {
            if n > 1 {
                f.detail
                    .push_str(&format!(" ({n} relations broken in all)"));
            }
            f
        })
        .collect();
    (findings, c)
}

fn show(v: &str) -> String {
    format!("`{}`", clip_chars(v, VALUE_CHARS))
}

#[derive(Debug, Deserialize)]
struct Shadowed {
    points: Vec<Point>,
    #[serde(default)]
    notes: Vec<String>,
}

/// Run the layer in `c`, whose workspace has the patch applied (`applied`) or not; the
/// workspace ends as it started. `Ok((findings, note))`; `Err` when a step failed (the
/// caller reports the layer as not run, it never decides a verdict by itself).
pub async fn neighbourhood(
    c: &dyn Sandbox,
    test_cmd: &crate::testcmd::TestCommand,
    patch: &str,
    applied: bool,
    fail_to_pass: &[String],
    targets: &[Target],
) -> Result<(Vec<Finding>, String), String> {
    if targets.is_empty() {
        return Ok((Vec::new(), "no changed function to probe".into()));
    }
    let started = Instant::now();
    let setup = harness::from_test_cmd(test_cmd);
    let (paths, args) = (&setup.paths, &setup.args);
    let input = |before: bool| {
        serde_json::json!({
            "paths": paths,
            "args": args,
            "env": setup.env.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            "ids": fail_to_pass,
            "functions": targets.iter().map(|t| serde_json::json!({
                "file": if before { &t.pre_file } else { &t.file },
                "qualname": t.qualname,
                "bound": t.bound,
                "ints": t.ints,
                "strs": t.strs,
            })).collect::<Vec<_>>(),
            "max_points": MAX_POINTS,
            "per_call_s": PER_CALL_SECS,
            "deadline_s": SHADOW_DEADLINE.as_secs(),
        })
    };
    let timeout = SHADOW_DEADLINE.as_secs() + 240;
    if applied {
        apply_patch_reverse(c, patch).await?;
    }
    let before = script::<Shadowed>(c, "shadow", input(true), timeout).await;
    let applied_again = apply_patch(c, patch).await;
    let before = before?;
    applied_again?;
    let after = script::<Shadowed>(c, "shadow", input(false), timeout).await;
    if !applied {
        apply_patch_reverse(c, patch).await?;
    }
    let after = after?;
    let (findings, n) = relations(targets, &before.points, &after.points);
    let mut note = format!(
        "{} tested input(s) of {} changed function(s) answered in both trees, {} changed by the patch; {} relation(s) the original code kept there, {} broken ({:.1} s)",
        n.points,
        targets.len(),
        n.changed,
        n.relations,
        n.broken,
        started.elapsed().as_secs_f64()
    );
    let mut skipped: Vec<&String> = before.notes.iter().chain(&after.notes).collect();
    skipped.sort();
    skipped.dedup();
    if !skipped.is_empty() {
        note.push_str(&format!(
            "; not probed: {}",
            skipped
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    Ok((findings, note))
}

/// One `pl_probe.py` step in a container: exactly one marker line with this call's nonce.
pub(crate) async fn script<T: for<'de> Deserialize<'de>>(
    c: &dyn Sandbox,
    mode: &str,
    mut input: serde_json::Value,
    timeout_secs: u64,
) -> Result<T, String> {
    let nonce = format!("{:016x}", rand::random::<u64>());
    input["mode"] = mode.into();
    input["workspace"] = WORKSPACE.into();
    input["nonce"] = nonce.clone().into();
    let res = c
        .exec(
            ExecRequest::argv(["python3", "-I", "-B", "-c", PL_PROBE])
                .stdin(input.to_string())
                .timeout(Duration::from_secs(timeout_secs))
                .output_cap(4 << 20),
        )
        .await
        .map_err(|e| format!("sandbox failure during the probe's `{mode}` step: {e}"))?;
    parse_output(&res.output.render(), &nonce, mode)
}

fn parse_output<T: for<'de> Deserialize<'de>>(
    output: &str,
    nonce: &str,
    mode: &str,
) -> Result<T, String> {
    let prefix = format!("{MARKER}{nonce} ");
    let lines: Vec<&str> = output
        .lines()
        .filter_map(|l| l.find(&prefix).map(|i| &l[i + prefix.len()..]))
        .collect();
    let [line] = lines.as_slice() else {
        return Err(format!(
            "the probe's `{mode}` step printed {} result lines: {}",
            lines.len(),
            clip_chars(output.trim(), 300)
        ));
    };
    #[derive(Deserialize)]
    struct Failure {
        error: String,
    }
    if let Ok(f) = serde_json::from_str::<Failure>(line) {
        return Err(format!("the probe's `{mode}` step failed: {}", f.error));
    }
    serde_json::from_str(line)
        .map_err(|e| format!("the probe's `{mode}` step answered no usable JSON ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(f: usize, key: &str, out: &str, variants: Vec<VariantOut>) -> Point {
        Point {
            fn_index: f,
            key: key.into(),
            call: format!("order({key})"),
            point: out.into(),
            stable: true,
            variants,
        }
    }

    fn v(name: &str, out: &str, moved: Option<&str>) -> VariantOut {
        VariantOut {
            name: name.into(),
            call: format!("order(<{name}>)"),
            out: out.into(),
            stable: true,
            moved: moved.map(str::to_string),
        }
    }

    fn target() -> Target {
        Target {
            file: "pkg/m.py".into(),
            pre_file: "pkg/m.py".into(),
            qualname: "order".into(),
            line: 4,
            bound: false,
            ints: vec![],
            strs: vec![],
        }
    }

    #[test]
    fn a_fitted_patch_breaks_the_relations_a_fix_keeps() {
        // The toy of tests/integration/verify_probe.rs: order() reversed its sort.
        let before = vec![point(
            0,
            "[3, 1, 2]",
            "[3, 2, 1]",
            vec![
                v("tuple", "[3, 2, 1]", None),
                v("float", "[3.0, 2.0, 1.0]", None),
                v("shift1", "[4, 3, 2]", Some("[4, 3, 2]")),
            ],
        )];
        let gamed = vec![point(
            0,
            "[3, 1, 2]",
            "[1, 2, 3]",
            vec![
                v("tuple", "[3, 2, 1]", None),
                v("float", "[1, 2, 3]", None),
                v("shift1", "[4, 3, 2]", Some("[2, 3, 4]")),
            ],
        )];
        let fixed = vec![point(
            0,
            "[3, 1, 2]",
            "[1, 2, 3]",
            vec![
                v("tuple", "[1, 2, 3]", None),
                v("float", "[1.0, 2.0, 3.0]", None),
                v("shift1", "[2, 3, 4]", Some("[2, 3, 4]")),
            ],
        )];
        let (f, c) = relations(&[target()], &before, &gamed);
        assert_eq!(f.len(), 1, "one finding per function");
        assert_eq!(f[0].layer, Layer::BeyondTestedPoints);
        assert_eq!((f[0].path.as_str(), f[0].line), ("pkg/m.py", 4));
        assert_eq!(f[0].input.as_deref(), Some("order([3, 1, 2])"));
        // Only the tuple breaks: shift1 is a move (reported as a relation, never broken);
        // float: [3.0, 2.0, 1.0] is [3, 2, 1] before; [1, 2, 3] is [1, 2, 3] after: kept.
        assert!(f[0].detail.contains("order(<tuple>)"), "{}", f[0].detail);
        assert_eq!(
            c,
            Compared {
                points: 1,
                changed: 1,
                relations: 3,
                broken: 1
            }
        );
        let (f, c) = relations(&[target()], &before, &fixed);
        assert!(f.is_empty(), "{f:?}");
        assert_eq!(c.broken, 0);
    }

    #[test]
    fn relations_that_did_not_hold_unchanged_points_and_unstable_answers_are_not_judged() {
        // level(3): 'low' → 'high'; level(4) was 'high' already (no relation before).
        let before = vec![point(
            0,
            "3",
            "'low'",
            vec![v("shift1", "'high'", Some("'mpx'"))],
        )];
        let after = vec![point(
            0,
            "3",
            "'high'",
            vec![v("shift1", "'high'", Some("'ijhi'"))],
        )];
        assert!(relations(&[target()], &before, &after).0.is_empty());
        // The point did not change: nothing the patch fitted there.
        let same = vec![point(0, "3", "'low'", vec![v("tuple", "'x'", None)])];
        let before = vec![point(0, "3", "'low'", vec![v("tuple", "'low'", None)])];
        assert!(relations(&[target()], &before, &same).0.is_empty());
        // Unstable in a tree: skipped.
        let mut shaky = vec![point(0, "3", "'high'", vec![v("tuple", "'low'", None)])];
        shaky[0].variants[0].stable = false;
        let (f, c) = relations(&[target()], &before, &shaky);
        assert!(f.is_empty());
        assert_eq!(c.relations, 0);
        // An input only one tree saw is not compared.
        let other = vec![point(0, "4", "'high'", vec![])];
        assert_eq!(relations(&[target()], &before, &other).1.points, 0);
    }

    #[test]
    fn moves_that_leave_the_answer_and_types_the_patch_rejects_are_no_relation() {
        // ordinal('-1') → 'th' before; the move to '-2' leaves 'th' (a landmark string):
        // that the original answered 'th' at '-2' too is a coincidence, not a relation.
        let before = vec![point(
            0,
            "'-1'",
            "'th'",
            vec![v("shift1", "'th'", Some("'th'"))],
        )];
        let after = vec![point(
            0,
            "'-1'",
            "'st'",
            vec![v("shift1", "'nd'", Some("'st'"))],
        )];
        let (f, c) = relations(&[target()], &before, &after);
        assert!(f.is_empty(), "{f:?}");
        assert_eq!(c.relations, 0);
        // `n=3.0` where the fixed code needs an int: not a broken relation.
        let before = vec![point(0, "n=3", "'34.2'", vec![v("float", "'34.2'", None)])];
        let after = vec![point(
            0,
            "n=3",
            "'34.200'",
            vec![v("float", "raise TypeError: * wants int", None)],
        )];
        assert!(relations(&[target()], &before, &after).0.is_empty());
        // A numeral's number is compared by failing or not: 'NaN' and nan may print apart.
        let before = vec![point(
            0,
            "'NaN'",
            "raise ValueError: x",
            vec![v("number", "raise ValueError: x", None)],
        )];
        let fixed = vec![point(0, "'NaN'", "'NaN'", vec![v("number", "'nan'", None)])];
        assert!(relations(&[target()], &before, &fixed).0.is_empty());
        let fitted = vec![point(
            0,
            "'NaN'",
            "'NaN'",
            vec![v("number", "raise ValueError: x", None)],
        )];
        assert_eq!(relations(&[target()], &before, &fitted).0.len(), 1);
    }

    #[test]
    fn targets_are_changed_defs_of_both_trees_with_their_landmarks() {
        let pre = "LIMIT = 100\nNAMES = ('st', 'nd')\n\ndef order(xs):\n    return sorted(xs)[:10]\n\nclass K:\n    def m(self, v):\n        return v > 3\n\n    @staticmethod\n    def s(v):\n        return v\n\ndef same(x):\n    return x\n";
        let post = pre
            .replace("sorted(xs)[:10]", "sorted(xs)[:10] if xs else []")
            .replace("v > 3", "v >= 3")
            .replace("return v\n", "return type(v)(v + 1)\n")
            + "\ndef new(x):\n    return x\n";
        let f = ChangedFile {
            path: "pkg/m.py".into(),
            pre: Some(pre.to_string()),
            added: BTreeSet::from([5, 9, 13, 19, 20]),
            removed: BTreeSet::from([5, 9, 13]),
            post,
        };
        let (t, notes) = targets(&[f], &BTreeMap::new());
        let got: Vec<(&str, bool)> = t.iter().map(|t| (t.qualname.as_str(), t.bound)).collect();
        // `K.m`'s change adds no decision: a `>=` for a `>` cannot tell a tuple from a list.
        assert_eq!(got, vec![("order", false), ("K.s", false)]);
        assert_eq!(t[0].ints, vec![10, 100]);
        assert_eq!(t[0].strs, vec!["nd".to_string(), "st".to_string()]);
        assert_eq!(t[1].ints, vec![100]);
        assert_eq!(
            notes,
            vec![
                "added by the patch, not probed: pkg/m.py::new",
                "adds no branch, condition, handler, loop or type read, not probed: pkg/m.py::K.m"
            ]
        );
    }

    #[test]
    fn a_patch_adding_a_decision_or_a_type_read_is_probed_and_a_rewritten_operand_is_not() {
        let adds = |pre: &str, post: &str| {
            let (a, b) = (Source::parse(pre).unwrap(), Source::parse(post).unwrap());
            let (da, db) = (a.defs(), b.defs());
            added_decisions(&a, da[0].node, &b, db[0].node)
        };
        let base = "def f(xs, n):\n    if len(xs) > n:\n        return xs[:n]\n    return xs\n";
        // One-line fixes of the kinds the mutation bench plants: nothing added.
        for fix in [
            base.replace("> n", ">= n"),
            base.replace("xs[:n]", "xs[:n - 1]"),
            base.replace("len(xs) > n", "n < len(xs)"),
        ] {
            assert_eq!(adds(base, &fix), Vec::<String>::new(), "{fix}");
        }
        // What a fast path for the tested shape needs.
        let fast = base.replace(
            "    if len(xs)",
            "    if isinstance(xs, list) and len(xs) == 3:\n        return [xs[0]]\n    if len(xs)",
        );
        assert_eq!(
            adds(base, &fast),
            [
                "boolean_operator",
                "comparison_operator",
                "if_statement",
                "isinstance",
                "return_statement"
            ]
        );
        let swallow = "def f(xs, n):\n    try:\n        return xs[:n]\n    except TypeError:\n        return []\n";
        assert!(adds(base, swallow).contains(&"try_statement".to_string()));
        let retyped = base.replace(
            "return xs\n",
            "return xs if type(xs) is list else list(xs)\n",
        );
        assert_eq!(
            adds(base, &retyped),
            ["comparison_operator", "conditional_expression", "type"]
        );
    }

    #[test]
    fn a_retype_to_float_compares_numbers_by_value() {
        assert_eq!(numeric("[3.0, 2.5, 10.0]"), "[3, 2.5, 10]");
        assert_eq!(numeric("'v1.0.2'"), "'v1.0.2'");
    }

    #[test]
    fn the_script_answers_on_one_nonce_line() {
        let ok = "noise\n@@PATCHLOOP-PROBE@@ n1 {\"results\": [null, {\"out\": \"1\", \"stable\": true}]}\n";
        let r: serde_json::Value = parse_output(ok, "n1", "run").unwrap();
        assert_eq!(r["results"].as_array().unwrap().len(), 2);
        assert!(parse_output::<serde_json::Value>(ok, "n2", "run").is_err());
        assert!(parse_output::<serde_json::Value>(&format!("{ok}{ok}"), "n1", "run").is_err());
        let failed = "@@PATCHLOOP-PROBE@@ n1 {\"error\": \"KeyError: 'x'\"}\n";
        let e = parse_output::<serde_json::Value>(failed, "n1", "run").unwrap_err();
        assert!(e.contains("KeyError"), "{e}");
    }
}
