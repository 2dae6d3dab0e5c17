//! The edge-case probe of a winning patch (informational, never a gate): extra inputs around the
//! changed functions, run against the tree before and after the patch; behaviour changes beyond
//! the target tests are listed in the receipt (PatchTree-style).
//!
//! Flow (Python images; other kinds get a report saying they are not supported):
//! 1. the diff's removed lines (pre-patch numbering) and added lines (post-patch numbering) of
//!    non-test `.py` files ([`changed_lines`]);
//! 2. two fresh containers from the prepared image under the verifier's hardened policy (network
//!    none, tests read-only, one Docker exec per step), the patch applied in one of them;
//! 3. `pl_probe.py locate` maps the lines to their innermost `def` in each tree (top-level
//!    functions and static and class methods are probed; instance methods and nested functions
//!    are named in the note);
//! 4. `pl_probe.py record` runs the fail-to-pass tests in both trees with a profile hook and keeps
//!    the calls of those functions whose arguments are plain literals (≤ [`MAX_RECORDED`] each);
//! 5. [`variants`] of each recorded call (ints ±1, 0, −1; strs `''` and one char; lists/tuples
//!    empty and one element; `None` for one argument at a time), minus the recorded calls
//!    themselves, at most [`MAX_INPUTS`] in all ([`plan_inputs`]);
//! 6. `pl_probe.py run` calls every input twice in each tree (`repr(result)` with set elements
//!    sorted, or `raise Type`; [`SIDE_DEADLINE`] per tree), the original tree in two processes;
//!    [`compare`] lists the inputs whose result differs, skipping any whose calls disagreed
//!    within a tree (nondeterministic: the clock, ids, string hashes).
//!
//! Because the recorded calls are excluded, every listed change is on an input the target tests
//! never made: a behaviour change beyond them. It may be intended (a fix of the general case) —
//! the receipt shows it for a reviewer; the verdict never reads it. Nor could it: the probed code
//! shares the script's process, so unlike the verifier's layers nothing here is out of its
//! reach (the containers keep it from everything else).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use bollard::Docker;
use serde::{Deserialize, Serialize};

use super::diff::{self, FilePatch, HunkLine};
use super::exec::{PreparedImage, apply_patch};
use super::harness;
use super::policy::{self, PolicyConfig};
use crate::sandbox::container::Container;
use crate::sandbox::lang::{LABEL_KIND, ProjectKind};
use crate::sandbox::output::clip_chars;
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::{ExecRequest, Sandbox, WORKSPACE};

/// The probe's script, sent with each exec as `python3 -I -B -c` source like the verifier's
/// other harness scripts (nothing in the workspace is trusted to hold it).
pub const PL_PROBE: &str = include_str!("../../images/harness/pl_probe.py");

/// Distinct recorded calls kept per function.
pub const MAX_RECORDED: usize = 20;
/// Inputs run per tree, over all functions.
pub const MAX_INPUTS: usize = 60;
/// Time for the inputs in one tree; inputs past it are not run (and not compared).
pub const SIDE_DEADLINE: Duration = Duration::from_secs(20);
/// One call's limit (SIGALRM in the script): a variant may loop where the recorded call did not.
const PER_CALL_SECS: f64 = 2.0;
/// Longest `before`/`after` value kept in a change.
const VALUE_CHARS: usize = 200;
const MARKER: &str = "@@PATCHLOOP-PROBE@@ ";

/// What the probe found; `note` says what ran, what was skipped and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EdgeProbe {
    /// `path::qualname` of each probed function.
    pub functions: Vec<String>,
    /// Inputs run against both trees.
    pub inputs: usize,
    /// Inputs (none of them a target test's call) whose result the patch changed.
    pub changed: Vec<ProbeChange>,
    pub note: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeChange {
    pub function: String,
    /// The call, e.g. `level(-1)`.
    pub input: String,
    /// `repr(result)` or `raise TypeName`.
    pub before: String,
    pub after: String,
}

/// A plain Python literal, as the script encodes it (`{"t": "int", "v": 3}`). `Lit` is any other
/// literal (dict, set, bytes, big int) as its repr, passed through unchanged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "t", content = "v", rename_all = "snake_case")]
pub enum PyVal {
    None,
    Bool(bool),
    Int(i64),
    /// The float's repr.
    Float(String),
    Str(String),
    List(Vec<PyVal>),
    Tuple(Vec<PyVal>),
    Lit(String),
}

/// One call: positional values, then keyword ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    pub args: Vec<PyVal>,
    pub kwargs: Vec<(String, PyVal)>,
}

/// One input of a run: a call of function number `fn_index`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Input {
    #[serde(rename = "fn")]
    pub fn_index: usize,
    #[serde(flatten)]
    pub call: Call,
}

/// Lines the patch changes in non-test Python files: removed lines by pre-patch path and
/// number, added lines by post-patch path and number (a pure insertion is found in the patched
/// tree, a pure deletion in the original one).
pub type Lines = BTreeMap<String, Vec<usize>>;

pub fn changed_lines(files: &[FilePatch], tests_dirs: &[String]) -> (Lines, Lines) {
    let cfg = PolicyConfig {
        tests_dirs: tests_dirs.to_vec(),
        ..PolicyConfig::default()
    };
    let py = |p: &Option<String>| {
        p.clone()
            .filter(|p| p.ends_with(".py") && !policy::is_test_path(p, &cfg))
    };
    let (mut before, mut after) = (Lines::new(), Lines::new());
    for f in files.iter().filter(|f| !f.binary) {
        let (old, new) = (py(&f.old_path), py(&f.new_path));
        for h in &f.hunks {
            let (mut o, mut n) = (h.old_start, h.new_start);
            for l in &h.lines {
                match l {
                    HunkLine::Context(_) => {
                        o += 1;
                        n += 1;
                    }
                    HunkLine::Removed(t) => {
                        if let Some(p) = old.as_ref().filter(|_| is_code(t)) {
                            before.entry(p.clone()).or_default().push(o);
                        }
                        o += 1;
                    }
                    HunkLine::Added(t) => {
                        if let Some(p) = new.as_ref().filter(|_| is_code(t)) {
                            after.entry(p.clone()).or_default().push(n);
                        }
                        n += 1;
                    }
                }
            }
        }
    }
    (before, after)
}

/// Blank and comment-only lines change no behaviour (and often sit between functions).
fn is_code(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#')
}

/// Variants of one recorded call, each changing one argument: ints ±1, 0 and −1; bools negated;
/// strs `''` and their first character (`'a'` for an empty one); lists and tuples empty and
/// their first element alone; and `None`. Duplicates and the call itself are left out.
pub fn variants(call: &Call) -> Vec<Call> {
    let mut out: Vec<Call> = Vec::new();
    let mut push = |c: Call| {
        if c != *call && !out.contains(&c) {
            out.push(c);
        }
    };
    let n = call.args.len() + call.kwargs.len();
    for i in 0..n {
        let v = if i < call.args.len() {
            &call.args[i]
        } else {
            &call.kwargs[i - call.args.len()].1
        };
        for alt in value_variants(v) {
            let mut c = call.clone();
            if i < c.args.len() {
                c.args[i] = alt;
            } else {
                c.kwargs[i - call.args.len()].1 = alt;
            }
            push(c);
        }
    }
    out
}

fn value_variants(v: &PyVal) -> Vec<PyVal> {
    let mut out = match v {
        PyVal::Int(n) => [n.checked_add(1), n.checked_sub(1), Some(0), Some(-1)]
            .into_iter()
            .flatten()
            .map(PyVal::Int)
            .collect(),
        PyVal::Bool(b) => vec![PyVal::Bool(!b)],
        PyVal::Str(s) => {
            let one = s.chars().next().map_or("a".to_string(), String::from);
            vec![PyVal::Str(String::new()), PyVal::Str(one)]
        }
        PyVal::List(xs) => {
            let mut o = vec![PyVal::List(Vec::new())];
            o.extend(xs.first().map(|x| PyVal::List(vec![x.clone()])));
            o
        }
        PyVal::Tuple(xs) => {
            let mut o = vec![PyVal::Tuple(Vec::new())];
            o.extend(xs.first().map(|x| PyVal::Tuple(vec![x.clone()])));
            o
        }
        PyVal::None | PyVal::Float(_) | PyVal::Lit(_) => Vec::new(),
    };
    out.push(PyVal::None);
    out.retain(|x| x != v);
    out
}

/// The inputs of a run: the variants of every function's recorded calls that are not
/// themselves recorded calls, taken round-robin over the functions (so one function with many
/// calls cannot crowd out the others) up to `cap`.
pub fn plan_inputs(recorded: &[Vec<Call>], cap: usize) -> Vec<Input> {
    let mut queues: Vec<std::vec::IntoIter<Call>> = recorded
        .iter()
        .map(|calls| {
            let mut vs: Vec<Call> = Vec::new();
            for c in calls {
                for v in variants(c) {
                    if !calls.contains(&v) && !vs.contains(&v) {
                        vs.push(v);
                    }
                }
            }
            vs.into_iter()
        })
        .collect();
    let mut out = Vec::new();
    loop {
        let mut any = false;
        for (i, q) in queues.iter_mut().enumerate() {
            if out.len() >= cap {
                return out;
            }
            if let Some(call) = q.next() {
                out.push(Input { fn_index: i, call });
                any = true;
            }
        }
        if !any {
            return out;
        }
    }
}

/// One input's outcome in one tree, as the script reports it (`None`: not run in time).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Outcome {
    pub out: String,
    /// The input's two calls gave the same result.
    pub stable: bool,
}

/// Two runs of the same tree as one: an input is stable only if both runs agree on it.
pub fn agreed(a: &[Option<Outcome>], b: &[Option<Outcome>]) -> Vec<Option<Outcome>> {
    a.iter()
        .zip(b)
        .map(|(x, y)| match (x, y) {
            (Some(x), Some(y)) => Some(Outcome {
                out: x.out.clone(),
                stable: x.stable && y.stable && x.out == y.out,
            }),
            _ => None,
        })
        .collect()
}

/// What the comparison found besides the changes.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Compared {
    pub changed: Vec<ProbeChange>,
    /// Inputs with a result in both trees.
    pub compared: usize,
    /// Inputs whose two calls disagreed in a tree (skipped).
    pub unstable: usize,
    /// Inputs not run in some tree (deadline).
    pub not_run: usize,
}

/// Inputs whose result differs between the trees (nondeterministic ones are skipped).
pub fn compare(
    functions: &[String],
    qualnames: &[String],
    inputs: &[Input],
    before: &[Option<Outcome>],
    after: &[Option<Outcome>],
) -> Compared {
    let mut r = Compared::default();
    for (i, inp) in inputs.iter().enumerate() {
        let (Some(Some(b)), Some(Some(a))) = (before.get(i), after.get(i)) else {
            r.not_run += 1;
            continue;
        };
        if !b.stable || !a.stable {
            r.unstable += 1;
            continue;
        }
        r.compared += 1;
        if b.out != a.out {
            let name = qualnames.get(inp.fn_index).map_or("?", String::as_str);
            r.changed.push(ProbeChange {
                function: functions.get(inp.fn_index).cloned().unwrap_or_default(),
                input: render_call(name, &inp.call),
                before: clip_chars(&b.out, VALUE_CHARS),
                after: clip_chars(&a.out, VALUE_CHARS),
            });
        }
    }
    r
}

/// Python-like source of a call, for reading (not for evaluation).
pub fn render_call(qualname: &str, call: &Call) -> String {
    let name = qualname;
    let mut parts: Vec<String> = call.args.iter().map(render).collect();
    parts.extend(
        call.kwargs
            .iter()
            .map(|(k, v)| format!("{k}={}", render(v))),
    );
    format!("{name}({})", parts.join(", "))
}

fn render(v: &PyVal) -> String {
    let seq = |xs: &[PyVal]| xs.iter().map(render).collect::<Vec<_>>().join(", ");
    match v {
        PyVal::None => "None".into(),
        PyVal::Bool(b) => if *b { "True" } else { "False" }.into(),
        PyVal::Int(n) => n.to_string(),
        PyVal::Float(s) | PyVal::Lit(s) => s.clone(),
        PyVal::Str(s) => {
            let mut o = String::from("'");
            for c in s.chars() {
                match c {
                    '\'' => o.push_str("\\'"),
                    '\\' => o.push_str("\\\\"),
                    '\n' => o.push_str("\\n"),
                    c if c.is_control() => o.push_str(&format!("\\x{:02x}", c as u32)),
                    c => o.push(c),
                }
            }
            o.push('\'');
            o
        }
        PyVal::List(xs) => format!("[{}]", seq(xs)),
        PyVal::Tuple(xs) if xs.len() == 1 => format!("({},)", seq(xs)),
        PyVal::Tuple(xs) => format!("({})", seq(xs)),
    }
}

/// A function to probe, by its file in each tree (a rename moves it).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Func {
    qualname: String,
    before: String,
    after: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Before,
    After,
}

impl Func {
    fn display(&self) -> String {
        format!("{}::{}", self.after, self.qualname)
    }

    fn file(&self, side: Side) -> &str {
        match side {
            Side::Before => &self.before,
            Side::After => &self.after,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
struct Located {
    #[serde(default)]
    functions: Vec<LocatedFn>,
    /// The probed kinds (functions, static and class methods) each file asked about defines.
    #[serde(default)]
    defined: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    skipped: Vec<String>,
    #[serde(default)]
    outside: Vec<String>,
}

#[derive(Debug, Deserialize)]
struct LocatedFn {
    file: String,
    qualname: String,
}

#[derive(Debug, Deserialize)]
struct Recorded {
    calls: Vec<Vec<Call>>,
    modules: Vec<Option<String>>,
}

#[derive(Debug, Deserialize)]
struct Ran {
    results: Vec<Option<Outcome>>,
}

/// Probe `patch` with the default hardened container policy; see [`probe_with_policy`].
pub async fn probe(
    docker: &Docker,
    image: &PreparedImage,
    patch: &str,
    fail_to_pass: &[String],
    run_id: &str,
) -> EdgeProbe {
    probe_with_policy(
        docker,
        image,
        patch,
        fail_to_pass,
        run_id,
        &ContainerPolicy::default(),
    )
    .await
}

/// Probe `patch` (see the module docs). Never fails: what could not be done is in `note`.
/// The containers take the verifier's adjustments of `policy`: one Docker exec per step (no
/// step loop) and the test directories read-only.
pub async fn probe_with_policy(
    docker: &Docker,
    image: &PreparedImage,
    patch: &str,
    fail_to_pass: &[String],
    run_id: &str,
    policy: &ContainerPolicy,
) -> EdgeProbe {
    let started = Instant::now();
    let kind = match docker.inspect_image(&image.tag).await {
        Ok(info) => info
            .config
            .and_then(|c| c.labels)
            .and_then(|l| l.get(LABEL_KIND).cloned())
            .map_or(ProjectKind::Python, |k| ProjectKind::parse(&k)),
        Err(e) => return noted(format!("image `{}` is not available ({e})", image.tag)),
    };
    if kind != ProjectKind::Python {
        return noted(format!("not supported for {}", kind.as_str()));
    }
    let files = match diff::parse(patch) {
        Ok(f) => f,
        Err(e) => return noted(format!("the patch could not be read ({e})")),
    };
    let (before_lines, after_lines) = changed_lines(&files, &image.tests_dirs);
    if before_lines.is_empty() && after_lines.is_empty() {
        return noted("the patch changes no non-test Python line".into());
    }
    let mut policy = policy.clone();
    policy.step_loop = false;
    policy.read_only_paths = image.tests_dirs.clone();
    let (u, p) = tokio::join!(
        Container::start(docker, &image.tag, &policy, run_id, "probe-before"),
        Container::start(docker, &image.tag, &policy, run_id, "probe-after"),
    );
    let result = match (&u, &p) {
        (Ok(u), Ok(p)) => {
            let ctx = Probe {
                image,
                fail_to_pass,
                renames: files
                    .iter()
                    .filter_map(|f| Some((f.old_path.clone()?, f.new_path.clone()?)))
                    .collect(),
                py_files: (
                    files.iter().filter_map(|f| py(&f.old_path)).collect(),
                    files.iter().filter_map(|f| py(&f.new_path)).collect(),
                ),
            };
            ctx.run(u, p, patch, before_lines, after_lines).await
        }
        (Err(e), _) | (_, Err(e)) => Err(format!("starting a probe container failed: {e}")),
    };
    // Both removed on every path (AutoRemove and the deadline label cover a killed harness).
    let remove = |c: Result<Container, _>| async move {
        if let Ok(c) = c {
            let _ = c.remove().await;
        }
    };
    tokio::join!(remove(u), remove(p));
    let secs = started.elapsed().as_secs_f64();
    match result {
        Ok(mut r) => {
            r.note = format!("{} ({secs:.1} s)", r.note);
            r
        }
        Err(e) => noted(format!("{e} ({secs:.1} s)")),
    }
}

fn py(p: &Option<String>) -> Option<String> {
    p.clone().filter(|p| p.ends_with(".py"))
}

/// The functions to probe from both trees' `locate` answers: one entry per function (a rename
/// pairs its two paths), found through changed lines in either tree and defined in both; what
/// is left out is said in the notes.
fn merge(
    before: &Located,
    after: &Located,
    renames: &BTreeMap<String, String>,
) -> (Vec<Func>, Vec<String>) {
    let old_of = |new: &str| {
        renames
            .iter()
            .find(|(_, n)| n.as_str() == new)
            .map_or(new.to_string(), |(o, _)| o.clone())
    };
    let mut funcs: Vec<Func> = Vec::new();
    let sides = before
        .functions
        .iter()
        .map(|f| (renames.get(&f.file).unwrap_or(&f.file).clone(), f))
        .chain(after.functions.iter().map(|f| (f.file.clone(), f)));
    for (new_path, f) in sides {
        if !funcs
            .iter()
            .any(|g| g.qualname == f.qualname && g.after == new_path)
        {
            funcs.push(Func {
                qualname: f.qualname.clone(),
                before: old_of(&new_path),
                after: new_path,
            });
        }
    }
    let defined = |l: &Located, file: &str, q: &str| {
        l.defined
            .get(file)
            .is_some_and(|qs| qs.iter().any(|x| x == q))
    };
    let mut notes = Vec::new();
    let mut one_side = |what: &str, fs: Vec<String>| {
        if !fs.is_empty() {
            notes.push(format!(
                "{what} by the patch, not probed: {}",
                fs.join(", ")
            ));
        }
    };
    let added: Vec<String> = funcs
        .iter()
        .filter(|f| !defined(before, &f.before, &f.qualname))
        .map(Func::display)
        .collect();
    let removed: Vec<String> = funcs
        .iter()
        .filter(|f| {
            defined(before, &f.before, &f.qualname) && !defined(after, &f.after, &f.qualname)
        })
        .map(Func::display)
        .collect();
    one_side("added", added);
    one_side("removed", removed);
    funcs.retain(|f| {
        defined(before, &f.before, &f.qualname) && defined(after, &f.after, &f.qualname)
    });
    let list = |a: &[String], b: &[String]| {
        let mut v: Vec<&str> = a.iter().chain(b).map(String::as_str).collect();
        v.sort();
        v.dedup();
        v.join(", ")
    };
    if !before.skipped.is_empty() || !after.skipped.is_empty() {
        notes.push(format!(
            "not probed: {}",
            list(&before.skipped, &after.skipped)
        ));
    }
    if !before.outside.is_empty() || !after.outside.is_empty() {
        notes.push(format!(
            "changes outside any function in {} not probed",
            list(&before.outside, &after.outside)
        ));
    }
    (funcs, notes)
}

fn noted(note: String) -> EdgeProbe {
    EdgeProbe {
        note,
        ..EdgeProbe::default()
    }
}

struct Probe<'a> {
    image: &'a PreparedImage,
    fail_to_pass: &'a [String],
    /// Old path → new path of every changed file.
    renames: BTreeMap<String, String>,
    /// The patch's Python files by their pre- and post-patch paths (where `locate` lists the
    /// functions each tree defines).
    py_files: (Vec<String>, Vec<String>),
}

impl Probe<'_> {
    async fn run(
        &self,
        u: &Container,
        p: &Container,
        patch: &str,
        before_lines: Lines,
        after_lines: Lines,
    ) -> Result<EdgeProbe, String> {
        apply_patch(p, patch).await?;
        let (lu, lp) = tokio::join!(
            script::<Located>(
                u,
                "locate",
                serde_json::json!({"lines": before_lines, "files": self.py_files.0}),
                60
            ),
            script::<Located>(
                p,
                "locate",
                serde_json::json!({"lines": after_lines, "files": self.py_files.1}),
                60
            ),
        );
        let (funcs, notes) = merge(&lu?, &lp?, &self.renames);
        let functions: Vec<String> = funcs.iter().map(Func::display).collect();
        let qualnames: Vec<String> = funcs.iter().map(|f| f.qualname.clone()).collect();
        let done = |notes: Vec<String>, head: String| EdgeProbe {
            functions: functions.clone(),
            note: std::iter::once(head)
                .chain(notes)
                .collect::<Vec<_>>()
                .join("; "),
            ..EdgeProbe::default()
        };
        if funcs.is_empty() {
            return Ok(done(
                notes,
                "no function, static or class method changed".into(),
            ));
        }
        if self.fail_to_pass.is_empty() {
            return Ok(done(notes, "no target tests to record calls from".into()));
        }
        let (cmd_paths, args) = harness::from_test_cmd(&self.image.test_cmd);
        let side_fns = |side: Side, modules: Option<&Vec<Option<String>>>| {
            funcs
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    serde_json::json!({
                        "file": f.file(side),
                        "qualname": f.qualname,
                        "module": modules.and_then(|m| m.get(i).cloned().flatten()),
                    })
                })
                .collect::<Vec<_>>()
        };
        let record = |side: Side| {
            serde_json::json!({
                "paths": cmd_paths,
                "args": args,
                "ids": self.fail_to_pass,
                "functions": side_fns(side, None),
                "max_calls": MAX_RECORDED,
            })
        };
        let (ru, rp) = tokio::join!(
            script::<Recorded>(u, "record", record(Side::Before), 300),
            script::<Recorded>(p, "record", record(Side::After), 300),
        );
        let (ru, rp) = (ru?, rp?);
        let mut recorded: Vec<Vec<Call>> = vec![Vec::new(); funcs.len()];
        for r in [&rp, &ru] {
            for (i, calls) in r.calls.iter().enumerate().take(funcs.len()) {
                for c in calls {
                    if recorded[i].len() < MAX_RECORDED && !recorded[i].contains(c) {
                        recorded[i].push(c.clone());
                    }
                }
            }
        }
        let calls: usize = recorded.iter().map(Vec::len).sum();
        let inputs = plan_inputs(&recorded, MAX_INPUTS);
        if inputs.is_empty() {
            return Ok(done(
                notes,
                format!(
                    "{calls} call(s) with literal arguments recorded from the target tests, no inputs to run"
                ),
            ));
        }
        let run = |side: Side, modules: &Vec<Option<String>>| {
            serde_json::json!({
                "paths": cmd_paths,
                "functions": side_fns(side, Some(modules)),
                "inputs": inputs,
                "deadline_s": SIDE_DEADLINE.as_secs(),
                "per_call_s": PER_CALL_SECS,
            })
        };
        let timeout = SIDE_DEADLINE.as_secs() + 30;
        // The original tree twice, in two processes: a result that depends on the process
        // (string hashes, ids, the clock) is not mistaken for the patch's doing.
        let (bu, bu2, bp) = tokio::join!(
            script::<Ran>(u, "run", run(Side::Before, &ru.modules), timeout),
            script::<Ran>(u, "run", run(Side::Before, &ru.modules), timeout),
            script::<Ran>(p, "run", run(Side::After, &rp.modules), timeout),
        );
        let before = agreed(&bu?.results, &bu2?.results);
        let c = compare(&functions, &qualnames, &inputs, &before, &bp?.results);
        let mut head = format!(
            "{} input(s) around {} recorded call(s) of {} function(s) run before and after the patch: {} changed",
            c.compared,
            calls,
            funcs.len(),
            c.changed.len()
        );
        if c.unstable > 0 {
            head.push_str(&format!(", {} nondeterministic skipped", c.unstable));
        }
        if c.not_run > 0 {
            head.push_str(&format!(", {} not run in time", c.not_run));
        }
        Ok(EdgeProbe {
            functions,
            inputs: c.compared,
            changed: c.changed,
            note: std::iter::once(head)
                .chain(notes)
                .collect::<Vec<_>>()
                .join("; "),
        })
    }
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

    fn int(n: i64) -> PyVal {
        PyVal::Int(n)
    }

    fn call(args: Vec<PyVal>) -> Call {
        Call {
            args,
            kwargs: Vec::new(),
        }
    }

    #[test]
    fn removed_lines_count_in_the_old_tree_added_ones_in_the_new() {
        let patch = "diff --git a/pkg/grade.py b/pkg/grade.py\n--- a/pkg/grade.py\n+++ b/pkg/grade.py\n\
@@ -10,4 +10,7 @@ def level(v):\n     x = 1\n-    if v > 3:\n+    if v >= 3:\n+        pass\n+\n+    # why\n     y = 2\n     z = 3\n\
@@ -40,4 +43,2 @@\n a\n-b\n-  \n c\n\
diff --git a/tests/test_grade.py b/tests/test_grade.py\n--- a/tests/test_grade.py\n+++ b/tests/test_grade.py\n\
@@ -1 +1 @@\n-x\n+y\n\
diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-x\n+y\n";
        let files = diff::parse(patch).unwrap();
        let (before, after) = changed_lines(&files, &["tests".into()]);
        assert_eq!(
            before,
            Lines::from([("pkg/grade.py".to_string(), vec![11, 41])])
        );
        assert_eq!(
            after,
            Lines::from([("pkg/grade.py".to_string(), vec![11, 12])])
        );
    }

    #[test]
    fn renames_keep_each_side_under_its_own_path() {
        let patch = "diff --git a/old.py b/new.py\nsimilarity index 90%\nrename from old.py\nrename to new.py\n\
--- a/old.py\n+++ b/new.py\n@@ -1,2 +1,2 @@\n-def f(): return 1\n+def f(): return 2\n x = 1\n";
        let (before, after) = changed_lines(&diff::parse(patch).unwrap(), &[]);
        assert_eq!(before, Lines::from([("old.py".to_string(), vec![1])]));
        assert_eq!(after, Lines::from([("new.py".to_string(), vec![1])]));
    }

    fn located(fns: &[(&str, &str)], defined: &[(&str, &[&str])]) -> Located {
        Located {
            functions: fns
                .iter()
                .map(|(f, q)| LocatedFn {
                    file: f.to_string(),
                    qualname: q.to_string(),
                })
                .collect(),
            defined: defined
                .iter()
                .map(|(f, qs)| (f.to_string(), qs.iter().map(|q| q.to_string()).collect()))
                .collect(),
            skipped: vec!["a.py::K.m (method)".into()],
            outside: Vec::new(),
        }
    }

    #[test]
    fn functions_are_paired_across_trees_and_need_both() {
        // `f` changed in both trees (renamed file), `g` only by an insertion (after lines),
        // `h` only by a deletion (before lines), `new` added and `gone` removed by the patch.
        let renames = BTreeMap::from([("old.py".to_string(), "a.py".to_string())]);
        let before = located(
            &[("old.py", "f"), ("old.py", "h"), ("old.py", "gone")],
            &[("old.py", &["f", "g", "h", "gone"])],
        );
        let after = located(
            &[("a.py", "f"), ("a.py", "g"), ("a.py", "new")],
            &[("a.py", &["f", "g", "h", "new"])],
        );
        let (funcs, notes) = merge(&before, &after, &renames);
        let got: Vec<(String, String, String)> = funcs
            .iter()
            .map(|f| {
                (
                    f.qualname.clone(),
                    f.file(Side::Before).to_string(),
                    f.file(Side::After).to_string(),
                )
            })
            .collect();
        let want = |q: &str| (q.to_string(), "old.py".to_string(), "a.py".to_string());
        assert_eq!(got, vec![want("f"), want("h"), want("g")]);
        assert_eq!(
            notes,
            vec![
                "added by the patch, not probed: a.py::new",
                "removed by the patch, not probed: a.py::gone",
                "not probed: a.py::K.m (method)",
            ]
        );
    }

    #[test]
    fn variants_change_one_argument_at_a_time() {
        let c = call(vec![int(3), PyVal::Str("ab".into())]);
        let vs = variants(&c);
        let want = [
            call(vec![int(4), PyVal::Str("ab".into())]),
            call(vec![int(2), PyVal::Str("ab".into())]),
            call(vec![int(0), PyVal::Str("ab".into())]),
            call(vec![int(-1), PyVal::Str("ab".into())]),
            call(vec![PyVal::None, PyVal::Str("ab".into())]),
            call(vec![int(3), PyVal::Str(String::new())]),
            call(vec![int(3), PyVal::Str("a".into())]),
            call(vec![int(3), PyVal::None]),
        ];
        assert_eq!(vs, want);
        // 0 and -1 collapse with the ±1 of 1 / 0; the call itself never comes back.
        let vs = variants(&call(vec![int(0)]));
        assert_eq!(
            vs,
            vec![
                call(vec![int(1)]),
                call(vec![int(-1)]),
                call(vec![PyVal::None])
            ]
        );
        // Sequences, keywords, overflow, and values with no variant but None.
        let c = Call {
            args: vec![PyVal::Tuple(vec![int(1), int(2)])],
            kwargs: vec![("k".into(), int(i64::MAX))],
        };
        let vs = variants(&c);
        assert!(vs.contains(&Call {
            args: vec![PyVal::Tuple(vec![])],
            kwargs: c.kwargs.clone()
        }));
        assert!(vs.contains(&Call {
            args: vec![PyVal::Tuple(vec![int(1)])],
            kwargs: c.kwargs.clone()
        }));
        assert!(vs.contains(&Call {
            args: c.args.clone(),
            kwargs: vec![("k".into(), int(i64::MAX - 1))]
        }));
        assert_eq!(vs.len(), 2 + 1 + 3 + 1, "{vs:?}");
        assert!(variants(&call(vec![PyVal::None])).is_empty());
        assert!(variants(&call(vec![])).is_empty());
    }

    #[test]
    fn inputs_skip_recorded_calls_share_the_cap_and_round_robin() {
        // f's recorded calls 3 and 4 are variants of each other: neither is run as a variant.
        let f = vec![call(vec![int(3)]), call(vec![int(4)])];
        let g = vec![call(vec![PyVal::Str("x".into())])];
        let all = plan_inputs(&[f.clone(), g.clone()], 100);
        assert!(
            all.iter()
                .all(|i| !f.contains(&i.call) && !g.contains(&i.call))
        );
        let f_inputs: Vec<&Call> = all
            .iter()
            .filter(|i| i.fn_index == 0)
            .map(|i| &i.call)
            .collect();
        // 3 → 2, 0, -1, None; 4 → 5 (3 is recorded, 0/-1/None seen).
        assert_eq!(f_inputs.len(), 5, "{f_inputs:?}");
        let capped = plan_inputs(&[f, g], 4);
        assert_eq!(capped.len(), 4);
        assert_eq!(
            capped.iter().map(|i| i.fn_index).collect::<Vec<_>>(),
            vec![0, 1, 0, 1]
        );
        assert!(plan_inputs(&[vec![], vec![]], 10).is_empty());
        let json = serde_json::to_value(&capped[0]).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"fn": 0, "args": [{"t": "int", "v": 2}], "kwargs": []})
        );
    }

    #[test]
    fn comparison_lists_changes_and_skips_the_unsure() {
        let inputs: Vec<Input> = (0..4)
            .map(|n| Input {
                fn_index: 0,
                call: call(vec![int(n)]),
            })
            .collect();
        let o = |s: &str, stable| {
            Some(Outcome {
                out: s.into(),
                stable,
            })
        };
        let before = vec![o("'low'", true), o("1", true), o("2", false), o("x", true)];
        let after = vec![
            o("raise ValueError", true),
            o("1", true),
            o("3", true),
            None,
        ];
        let c = compare(
            &["grade.py::level".into()],
            &["level".into()],
            &inputs,
            &before,
            &after,
        );
        assert_eq!(
            c.changed,
            vec![ProbeChange {
                function: "grade.py::level".into(),
                input: "level(0)".into(),
                before: "'low'".into(),
                after: "raise ValueError".into(),
            }]
        );
        assert_eq!((c.compared, c.unstable, c.not_run), (2, 1, 1));
    }

    #[test]
    fn two_runs_of_a_tree_must_agree() {
        let o = |s: &str, stable| {
            Some(Outcome {
                out: s.into(),
                stable,
            })
        };
        let a = vec![
            o("1", true),
            o("{'a', 'b'}", true),
            o("3", false),
            o("4", true),
        ];
        let b = vec![o("1", true), o("{'b', 'a'}", true), o("3", true), None];
        let got: Vec<Option<bool>> = agreed(&a, &b)
            .into_iter()
            .map(|x| x.map(|x| x.stable))
            .collect();
        assert_eq!(got, vec![Some(true), Some(false), Some(false), None]);
    }

    #[test]
    fn calls_render_like_python() {
        let c = Call {
            args: vec![
                PyVal::Str("it's\n".into()),
                PyVal::Tuple(vec![int(1)]),
                PyVal::List(vec![PyVal::Bool(true), PyVal::None]),
                PyVal::Float("1.5".into()),
            ],
            kwargs: vec![("d".into(), PyVal::Lit("{'a': 1}".into()))],
        };
        assert_eq!(
            render_call("K.m", &c),
            "K.m('it\\'s\\n', (1,), [True, None], 1.5, d={'a': 1})"
        );
    }

    #[test]
    fn the_script_answers_on_one_nonce_line() {
        let ok = "noise\n@@PATCHLOOP-PROBE@@ n1 {\"results\": [null, {\"out\": \"1\", \"stable\": true}]}\n";
        let r: Ran = parse_output(ok, "n1", "run").unwrap();
        assert_eq!(r.results.len(), 2);
        assert!(parse_output::<Ran>(ok, "n2", "run").is_err());
        assert!(parse_output::<Ran>(&format!("{ok}{ok}"), "n1", "run").is_err());
        let failed = "@@PATCHLOOP-PROBE@@ n1 {\"error\": \"KeyError: 'x'\"}\n";
        let e = parse_output::<Ran>(failed, "n1", "run").unwrap_err();
        assert!(e.contains("KeyError"), "{e}");
    }
}
