//! Spectrum-based fault localization: which functions the failing tests run and the passing
//! ones do not.
//!
//! A bug that raises nothing leaves no traceback frame in the function that has it (a flipped
//! comparison, a wrong default, an off-by-one in a loop bound), and a small model shown the
//! wrong functions cannot fix it. So once per repair, after the reproduction, the target
//! tests' files run once more in the episode's container under a line tracer
//! (`pl_probe.py cover`; the tests' child Python processes trace themselves, and a file with
//! few tests borrows its test directory's for the passing side), and
//! each line the repository's non-test code executed is scored by Ochiai:
//! `ef / sqrt(F * (ef + ep))`, where `ef`/`ep` are the failing/passing tests that ran it and
//! `F` all failing ones. A function (or a module-level statement) scores its best line. The
//! tests that fail for another reason (pre-existing failures) count on neither side.
//!
//! The ranking picks the candidates' suspects and the lines `infill` masks, and heads the
//! loop's context. Best effort: a project that is not Python, a run past its deadline, or a
//! tracer that finds nothing leaves the traceback- and call-based context as it was. Never a
//! verdict: the ranking only decides what the model is shown.

use serde::Deserialize;
use std::collections::BTreeMap;

use crate::agent::context::{self, Location};
use crate::sandbox::Sandbox;

/// Tests of the targets' files traced besides the targets, at most: the nearest ones (same
/// class, then file order). A large file's tests all under a line tracer took 46 s; the
/// passing side of a line's count needs tests that run it, which neighbours of a failing
/// test mostly are.
pub const PASSING_SAMPLE: usize = 60;

/// What `pl_probe.py cover` answers.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
pub struct Spectrum {
    /// Target tests that failed under the tracer (`F`).
    pub failed: u32,
    /// Other tests that passed.
    pub passed: u32,
    /// Per file (workspace-relative): every executed line.
    pub lines: BTreeMap<String, Vec<LineHit>>,
    /// Tests the run reached.
    #[serde(default)]
    pub ran: u32,
    /// Tests the targets' files hold (the run keeps the targets and a sample of the rest).
    #[serde(default)]
    pub collected: u32,
    /// Which pytest traced (`project` or `harness`), and why not the project's.
    #[serde(default)]
    pub runner: String,
    #[serde(default)]
    pub runner_why: String,
}

/// One executed line of a spectrum; `[line, ef, ep, first]` on the wire (`first` may be
/// absent: then nothing is known of the order).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(from = "LineWire")]
pub struct LineHit {
    pub line: usize,
    /// Failing targets that ran it.
    pub ef: u32,
    /// Passing tests that ran it.
    pub ep: u32,
    /// How early a failing target first reached it: 0 its run's first line, 1 its last.
    pub first: f64,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum LineWire {
    Ordered((usize, u32, u32, f64)),
    Plain((usize, u32, u32)),
}

impl From<LineWire> for LineHit {
    fn from(w: LineWire) -> LineHit {
        let (line, ef, ep, first) = match w {
            LineWire::Ordered(t) => t,
            LineWire::Plain((l, f, p)) => (l, f, p, 1.0),
        };
        LineHit {
            line,
            ef,
            ep,
            first,
        }
    }
}

/// How the ranking was made: the receipt and the trajectory say which.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    /// The spectrum of a traced run, under this pytest (`project`, `harness`).
    Spectrum { runner: String },
    /// No traced run gave a spectrum (`why`): the failing tests' traceback frames, the
    /// functions the tests call and the names their failing lines use, in that order.
    Static { why: String },
    /// Nothing to rank with.
    None { why: String },
}

impl Method {
    pub fn label(&self) -> String {
        match self {
            Method::Spectrum { runner } => format!("spectrum ({runner}'s pytest)"),
            Method::Static { why } => {
                format!("static: traceback frames and the tests' calls ({why})")
            }
            Method::None { why } => format!("none: {why}"),
        }
    }
}

/// Score of the static ranking's lines: below any spectrum's clear signal, the traceback's
/// own line a little above the rest of its function, each later function a little lower.
const STATIC_TOP: f64 = 0.6;

/// The ranking without a spectrum: each located function (traceback frames first, then the
/// tests' callees, as the failing-code context ordered them; then functions the failing lines
/// name) with every statement line of its body scored, so the candidates' sites exist. Pure.
pub fn static_rank(
    code: &[Location],
    named: &[String],
    files: &BTreeMap<String, String>,
) -> Vec<Ranked> {
    let mut locs: Vec<Location> = code
        .iter()
        .filter(|l| l.name != "<module>" && !context::is_test_path(&l.path))
        .cloned()
        .collect();
    for (path, src) in files {
        if context::is_test_path(path) {
            continue;
        }
        for d in context::functions(path, src) {
            let short = d.name.rsplit('.').next().unwrap_or(&d.name);
            if named.iter().any(|n| n == short)
                && !locs.iter().any(|l| l.path == d.path && l.start == d.start)
            {
                locs.push(d);
            }
        }
    }
    let mut seen = Vec::new();
    locs.retain(|l| {
        let k = (l.path.clone(), l.start);
        let new = !seen.contains(&k);
        seen.push(k);
        new
    });
    locs.into_iter()
        .enumerate()
        .filter_map(|(i, loc)| {
            let src = files.get(&loc.path)?;
            let base = STATIC_TOP - 0.02 * i as f64;
            let lines: Vec<(usize, f64)> = src
                .lines()
                .enumerate()
                .map(|(n, l)| (n + 1, l.trim()))
                .filter(|(n, t)| {
                    *n > loc.start
                        && *n <= loc.end
                        && !t.is_empty()
                        && !t.starts_with('#')
                        && !t.starts_with('@')
                })
                .map(|(n, _)| {
                    let s = if Some(n) == loc.frame_line {
                        base + 0.01
                    } else {
                        base
                    };
                    (n, s.max(0.01))
                })
                .collect();
            (!lines.is_empty()).then_some(Ranked { loc, lines })
        })
        .collect()
}

/// One function of the ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub loc: Location,
    /// Every line of it a failing test ran, with its Ochiai score, ascending by line.
    pub lines: Vec<(usize, f64)>,
}

/// Scores this close are one score (float sums of the same counts).
const SAME_SCORE: f64 = 1e-9;

impl Ranked {
    /// The best score of its lines, 0..=1 (0 with no lines).
    pub fn score(&self) -> f64 {
        self.lines.iter().map(|(_, s)| *s).fold(0.0, f64::max)
    }

    /// Its lines at the best score, ascending.
    pub fn hot(&self) -> Vec<usize> {
        let best = self.score();
        self.lines
            .iter()
            .filter(|(_, s)| (best - s).abs() <= SAME_SCORE)
            .map(|(l, _)| *l)
            .collect()
    }
}

/// Seconds the traced run may take inside the script (the exec's limit is a little longer).
const DEADLINE_S: u64 = 40;
/// Test files run at most (the target tests' files).
const MAX_FILES: usize = 4;

/// Ochiai: `ef / sqrt(F * (ef + ep))`; 0 when a line ran in no failing test.
pub fn ochiai(ef: u32, ep: u32, failed: u32) -> f64 {
    if ef == 0 || failed == 0 {
        return 0.0;
    }
    f64::from(ef) / (f64::from(failed) * f64::from(ef + ep)).sqrt()
}

/// A ranked unit in the making: its location and its scored lines.
type Unit = (Location, Vec<(LineHit, f64)>);

/// The functions of `spectrum`, best first. A line counts for the outermost function that
/// holds it (a closure is its enclosing function's code); a line outside every function (a
/// lambda in a module-level table, import-time code) counts for its statement, a `<module>`
/// location. Files not in `files` are not ranked. Ties go to the functions `prefer` names (the
/// traceback's and the test's own calls), then to those whose name the failing lines use
/// (`named`, see [`names_on`]), then to functions over module statements, then to a callee
/// over a caller whose every best line only calls it, then to the one a failing run reached
/// first (the spectrum cannot tell a cause from what it set off, the order
/// can), then to the fewest passing tests, then to the smaller. Pure.
pub fn rank(
    spectrum: &Spectrum,
    files: &BTreeMap<String, String>,
    prefer: &[Location],
    named: &[String],
) -> Vec<Ranked> {
    /// A ranked unit's tie-breaks: the fewest passing tests and the earliest reach among its
    /// best lines.
    struct Order {
        ep: u32,
        first: f64,
        /// Every best line calls a function of the same score (`self.evict()` in `put`): the
        /// line is suspicious because of where it leads, so the callee goes first.
        relay: bool,
    }
    let mut out: Vec<(Ranked, Order)> = Vec::new();
    for (path, lines) in &spectrum.lines {
        if context::is_test_path(path) {
            continue;
        }
        let Some(src) = files.get(path) else {
            continue;
        };
        let defs = context::functions(path, src);
        let outermost = |line: usize| {
            defs.iter()
                .filter(|d| (d.start..=d.end).contains(&line))
                .max_by_key(|d| d.end - d.start)
        };
        let loose: Vec<usize> = lines
            .iter()
            .filter(|h| ochiai(h.ef, h.ep, spectrum.failed) > 0.0 && outermost(h.line).is_none())
            .map(|h| h.line)
            .collect();
        let statements = context::module_statements(path, src, &loose);
        // Per unit (its first and last line): the location and its scored lines.
        let mut per: BTreeMap<(usize, usize), Unit> = BTreeMap::new();
        for h in lines {
            let s = ochiai(h.ef, h.ep, spectrum.failed);
            if s <= 0.0 {
                continue;
            }
            let Some(loc) = outermost(h.line).or_else(|| statements.get(&h.line)) else {
                continue;
            };
            per.entry((loc.start, loc.end))
                .or_insert_with(|| (loc.clone(), Vec::new()))
                .1
                .push((*h, s));
        }
        for (loc, scored) in per.into_values() {
            let r = Ranked {
                loc,
                lines: scored.iter().map(|(h, s)| (h.line, *s)).collect(),
            };
            let hot = r.hot();
            let best = scored.iter().filter(|(h, _)| hot.contains(&h.line));
            let order = Order {
                ep: best.clone().map(|(h, _)| h.ep).min().unwrap_or(u32::MAX),
                first: best.map(|(h, _)| h.first).fold(1.0, f64::min),
                relay: false,
            };
            out.push((r, order));
        }
    }
    let short = |r: &Ranked| -> String {
        r.loc
            .name
            .rsplit('.')
            .next()
            .unwrap_or(&r.loc.name)
            .to_string()
    };
    // Each ranked file's lines, split once.
    let lines: BTreeMap<&str, Vec<&str>> = out
        .iter()
        .filter_map(|(r, _)| {
            let src = files.get(&r.loc.path)?;
            Some((r.loc.path.as_str(), src.lines().collect()))
        })
        .collect();
    let relays: Vec<bool> = out
        .iter()
        .map(|(r, _)| {
            let text = |l: usize| {
                let line = lines
                    .get(r.loc.path.as_str())
                    .and_then(|ls| ls.get(l.wrapping_sub(1)).copied())
                    .unwrap_or("");
                line.split('#').next().unwrap_or("")
            };
            let hot = r.hot();
            // A tied function (not this one, not a module statement) called on the line.
            let calls_a_peer = |l: usize| {
                CALLS.captures_iter(text(l)).any(|c| {
                    out.iter().any(|(o, _)| {
                        o.loc.name != "<module>"
                            && !(o.loc.path == r.loc.path && o.loc.start == r.loc.start)
                            && (o.score() - r.score()).abs() <= SAME_SCORE
                            && short(o) == c[1]
                    })
                })
            };
            !hot.is_empty() && hot.iter().all(|&l| calls_a_peer(l))
        })
        .collect();
    for ((_, o), relay) in out.iter_mut().zip(relays) {
        o.relay = relay;
    }
    let preferred = |r: &Ranked| {
        prefer
            .iter()
            .any(|p| p.path == r.loc.path && p.start == r.loc.start)
    };
    let is_named = |r: &Ranked| {
        let short = r.loc.name.rsplit('.').next().unwrap_or(&r.loc.name);
        named.iter().any(|n| n == short)
    };
    let is_function = |r: &Ranked| r.loc.name != "<module>";
    out.sort_by(|(a, ao), (b, bo)| {
        b.score()
            .partial_cmp(&a.score())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(preferred(b).cmp(&preferred(a)))
            .then(is_named(b).cmp(&is_named(a)))
            .then(is_function(b).cmp(&is_function(a)))
            .then(ao.relay.cmp(&bo.relay))
            .then(
                ao.first
                    .partial_cmp(&bo.first)
                    .unwrap_or(std::cmp::Ordering::Equal),
            )
            .then(ao.ep.cmp(&bo.ep))
            .then((a.loc.end - a.loc.start).cmp(&(b.loc.end - b.loc.start)))
            .then(a.loc.path.cmp(&b.loc.path))
            .then(a.loc.start.cmp(&b.loc.start))
    });
    out.into_iter().map(|(r, _)| r).collect()
}

/// A call on a line: the called name (`self.evict()` → `evict`).
static CALLS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(").expect("static regex")
});

/// The names `lines` (a failing test's lines where it failed) use as attributes or calls:
/// `assert excepting.__name__ == ...` names `__name__`. Every test runs the same dozen
/// functions alike when one object is built and read; the assertion says which it read.
/// Pure.
pub fn names_on(lines: &[&str]) -> Vec<String> {
    static NAME: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\.([A-Za-z_][A-Za-z0-9_]*)|\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
            .expect("static regex")
    });
    // A comparison dispatches to a method: `assert iface >= iface` names `__ge__`.
    static OP: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:^|[^<>=!-])(<=|>=|==|!=|<|>)(?:[^<>=]|$)").expect("static regex")
    });
    let mut out: Vec<String> = Vec::new();
    let mut add = |n: &str| {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    };
    for line in lines {
        let code = line.split('#').next().unwrap_or("");
        for c in NAME.captures_iter(code) {
            if let Some(m) = c.get(1).or(c.get(2)) {
                add(m.as_str());
            }
        }
        for c in OP.captures_iter(code) {
            add(match &c[1] {
                "<=" => "__le__",
                ">=" => "__ge__",
                "==" => "__eq__",
                "!=" => "__ne__",
                "<" => "__lt__",
                _ => "__gt__",
            });
        }
    }
    out
}

/// The pytest files of `targets` (`path.py::name` ids), each once, at most [`MAX_FILES`].
/// Empty when a target is not a pytest id (another language's runner). Pure.
pub fn test_files(targets: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in targets {
        let file = crate::testid::file_of(t);
        if !file.ends_with(".py") {
            return Vec::new();
        }
        if !out.iter().any(|f| f == file) && out.len() < MAX_FILES {
            out.push(file.to_string());
        }
    }
    out
}

/// Run the targets' test files under the tracer in `sandbox` (the episode's container: the
/// run changes nothing in the workspace) and read the spectrum; with `harness`, under the
/// harness's own pytest whatever the project has. `Err`: why there is none.
pub async fn spectrum(
    sandbox: &dyn Sandbox,
    test_cmd: &crate::testcmd::TestCommand,
    targets: &[String],
    harness: bool,
) -> Result<Spectrum, String> {
    let ids = test_files(targets);
    if ids.is_empty() {
        return Err("no pytest targets to trace".into());
    }
    let setup = crate::verify::harness::from_test_cmd(test_cmd);
    // Doctest targets (`stdnum/luhn.py::stdnum.luhn`): the tracer clears the project's
    // `addopts`, where `--doctest-modules` usually is, and would collect none of them.
    let mut args = setup.args.clone();
    let doctests = targets.iter().any(|t| crate::testid::is_doctest(t));
    if doctests && !args.iter().any(|a| a == "--doctest-modules") {
        args.push("--doctest-modules".into());
    }
    let mut input = serde_json::json!({
        "paths": setup.paths,
        "args": args,
        "env": setup.env.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
        "ids": ids,
        "targets": targets,
        "deadline_s": DEADLINE_S,
        "sample": PASSING_SAMPLE,
    });
    if harness {
        input["runner"] = "harness".into();
    }
    let s: Spectrum =
        crate::verify::probe::script(sandbox, "cover", input, DEADLINE_S + 20).await?;
    if s.failed == 0 {
        let with = match s.runner.as_str() {
            "" => String::new(),
            r => format!(" under the {r}'s pytest"),
        };
        return Err(format!(
            "no target test failed under the tracer{with} ({} test(s) ran)",
            s.ran
        ));
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "\
def join(a, b):
    out = []
    for x in a:
        if x not in b:
            out.append(x)
    return out


def helper(x):
    return x + 1


class K:
    def m(self):
        return helper(1)
";

    fn spectrum(lines: &[(usize, u32, u32)], failed: u32, passed: u32) -> Spectrum {
        Spectrum {
            failed,
            passed,
            lines: [("pkg/core.py".to_string(), hits(lines))].into(),
            ran: failed + passed,
            collected: failed + passed,
            ..Spectrum::default()
        }
    }

    fn hits(lines: &[(usize, u32, u32)]) -> Vec<LineHit> {
        lines
            .iter()
            .map(|&(line, ef, ep)| LineHit {
                line,
                ef,
                ep,
                first: 1.0,
            })
            .collect()
    }

    fn files() -> BTreeMap<String, String> {
        [("pkg/core.py".to_string(), SRC.to_string())].into()
    }

    #[test]
    fn without_a_spectrum_the_located_functions_rank_in_order_with_their_body_lines() {
        let files = files();
        let frame = Location {
            path: "pkg/core.py".into(),
            start: 1,
            end: 6,
            name: "join".into(),
            frame_line: Some(4),
        };
        let test_fn = Location {
            path: "tests/test_core.py".into(),
            start: 1,
            end: 2,
            name: "test_join".into(),
            frame_line: None,
        };
        let r = static_rank(&[test_fn, frame.clone()], &["helper".to_string()], &files);
        let names: Vec<&str> = r.iter().map(|r| r.loc.name.as_str()).collect();
        // The test itself is never a suspect; the frame's function first, then the named one.
        assert_eq!(names, ["join", "helper"]);
        let lines: Vec<usize> = r[0].lines.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [2, 3, 4, 5, 6]);
        // The traceback's line leads its function; the next function scores lower.
        assert_eq!(r[0].hot(), [4]);
        assert!(r[1].score() < r[0].score());
        assert!(r[0].score() < 1.0, "below a spectrum's clear signal");
        assert!(static_rank(&[], &[], &files).is_empty());
    }

    #[test]
    fn ochiai_is_one_for_lines_only_every_failing_test_runs() {
        assert_eq!(ochiai(2, 0, 2), 1.0);
        assert_eq!(ochiai(0, 5, 2), 0.0);
        assert!(ochiai(1, 0, 2) < ochiai(2, 0, 2));
        assert!(ochiai(2, 3, 2) < ochiai(2, 1, 2));
        assert_eq!(ochiai(1, 1, 0), 0.0);
    }

    #[test]
    fn the_function_only_the_failing_tests_run_ranks_first_with_its_hot_lines() {
        // helper runs in every test; join's loop in both failing tests, its append in one
        // passing test too, and its `if` in the failing ones alone.
        let s = spectrum(
            &[
                (2, 2, 3),
                (3, 2, 3),
                (4, 2, 0),
                (5, 2, 1),
                (6, 2, 3),
                (10, 2, 5),
                (15, 1, 5),
            ],
            2,
            5,
        );
        let r = rank(&s, &files(), &[], &[]);
        let names: Vec<&str> = r.iter().map(|r| r.loc.name.as_str()).collect();
        assert_eq!(names, ["join", "helper", "K.m"]);
        assert_eq!(r[0].score(), 1.0);
        assert_eq!(r[0].hot(), [4]);
        assert_eq!(r[0].lines.len(), 5);
        assert_eq!(r[0].lines[2], (4, 1.0));
        assert!(r[1].score() > r[2].score(), "{r:?}");
    }

    #[test]
    fn ties_go_to_the_preferred_then_fewer_passing_then_smaller() {
        let s = spectrum(&[(4, 1, 0), (10, 1, 0)], 1, 3);
        let plain = rank(&s, &files(), &[], &[]);
        // Equal scores and passing counts: the smaller function first.
        assert_eq!(plain[0].loc.name, "helper");
        let join = plain
            .iter()
            .find(|r| r.loc.name == "join")
            .unwrap()
            .loc
            .clone();
        let preferred = rank(&s, &files(), std::slice::from_ref(&join), &[]);
        assert_eq!(preferred[0].loc.name, "join");
        // A name the failing line uses comes after a preferred function, before the rest.
        let named = rank(&s, &files(), &[], &["join".to_string()]);
        assert_eq!(named[0].loc.name, "join");
        let h = plain[0].loc.clone();
        let both = rank(&s, &files(), &[h], &["join".to_string()]);
        assert_eq!(both[0].loc.name, "helper");
    }

    #[test]
    fn the_failing_lines_name_attributes_and_calls_not_comments_or_locals() {
        let n = names_on(&[
            "    assert excepting.__name__ == 'getzero_excepting'  # see obj.note",
            "    assert total(xs, key=len) == 3",
        ]);
        assert_eq!(
            n,
            ["__name__", "__eq__", "total"],
            "`key=len` passes len, calls nothing"
        );
        assert!(names_on(&["x = 1"]).is_empty());
        // Comparisons name the methods they dispatch to; arrows and shifts are no comparison.
        assert_eq!(
            names_on(&["    self.assertTrue(iface >= iface)"]),
            ["assertTrue", "__ge__"]
        );
        assert_eq!(names_on(&["assert a < b != c"]), ["__lt__", "__ne__"]);
        assert!(
            names_on(&["def f(x) -> int: return x >> 2 << 1"])
                .iter()
                .all(|n| n == "f")
        );
    }

    #[test]
    fn test_files_unknown_files_and_non_pytest_targets_are_not_ranked() {
        let mut s = spectrum(&[(4, 1, 0)], 1, 0);
        s.lines
            .insert("tests/test_core.py".into(), hits(&[(3, 1, 0)]));
        s.lines.insert("pkg/unread.py".into(), hits(&[(3, 1, 0)]));
        let r = rank(&s, &files(), &[], &[]);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].loc.path, "pkg/core.py");
        assert_eq!(
            test_files(&[
                "t/test_a.py::x".into(),
                "t/test_a.py::y[1]".into(),
                "t/test_b.py::K::z".into()
            ]),
            ["t/test_a.py", "t/test_b.py"]
        );
        assert!(test_files(&["src/lib.rs::tests::x".into()]).is_empty());
        assert!(test_files(&[]).is_empty());
    }

    #[test]
    fn the_wire_gives_each_line_with_or_without_its_first_reach() {
        let s: Spectrum = serde_json::from_str(
            r#"{"failed": 1, "passed": 2, "lines": {"a.py": [[3, 1, 0, 0.25], [4, 1, 2]]}}"#,
        )
        .unwrap();
        let l = &s.lines["a.py"];
        assert_eq!((l[0].line, l[0].ef, l[0].ep, l[0].first), (3, 1, 0, 0.25));
        assert_eq!((l[1].line, l[1].ep, l[1].first), (4, 2, 1.0));
        assert!(serde_json::from_str::<Spectrum>(r#"{"lines": {"a.py": [[3, 1]]}}"#).is_err());
    }

    const TABLE: &str = "\
import datetime

FORMATS = {
    \"%d\": lambda d: \"%02d\" % d.day,
    \"%j\": lambda d: \"%03d\"
    % (d.toordinal() - 1),
}


def render(d, spec):
    def one(k):
        return FORMATS[k](d)
    return \"\".join(one(k) for k in spec.split())


def outer_unrelated(x):
    return x
";

    #[test]
    fn a_closure_counts_for_its_function_and_a_table_lambda_for_its_statement() {
        let files: BTreeMap<String, String> =
            [("pkg/fmt.py".to_string(), TABLE.to_string())].into();
        // The `%j` lambda's lines run in the failing test only; `one` (nested in `render`)
        // and `render` in every test.
        let s = Spectrum {
            failed: 1,
            passed: 2,
            lines: [(
                "pkg/fmt.py".to_string(),
                hits(&[
                    (5, 1, 0),
                    (6, 1, 0),
                    (10, 1, 2),
                    (11, 1, 2),
                    (12, 1, 2),
                    (13, 1, 2),
                    (16, 0, 1),
                ]),
            )]
            .into(),
            ..Spectrum::default()
        };
        let r = rank(&s, &files, &[], &[]);
        let units: Vec<(&str, usize, usize)> = r
            .iter()
            .map(|r| (r.loc.name.as_str(), r.loc.start, r.loc.end))
            .collect();
        // The table statement spans lines 3-7; `one` is not a unit of its own.
        assert_eq!(units, [("<module>", 3, 7), ("render", 10, 13)]);
        assert_eq!(r[0].hot(), [5, 6]);
        // At an equal score, a function goes before a module statement.
        let even = Spectrum {
            lines: [("pkg/fmt.py".to_string(), hits(&[(5, 1, 0), (12, 1, 0)]))].into(),
            ..s
        };
        let r = rank(&even, &files, &[], &[]);
        assert_eq!(r[0].loc.name, "render");
        assert_eq!(r[1].loc.name, "<module>");
    }

    #[test]
    fn among_equal_scores_the_function_a_failing_run_reached_first_leads() {
        let at = |line, first| LineHit {
            line,
            ef: 1,
            ep: 0,
            first,
        };
        let s = |join_first, helper_first| Spectrum {
            failed: 1,
            passed: 1,
            lines: [(
                "pkg/core.py".to_string(),
                vec![at(4, join_first), at(10, helper_first)],
            )]
            .into(),
            ..Spectrum::default()
        };
        let names = |s: &Spectrum| -> Vec<String> {
            rank(s, &files(), &[], &[])
                .into_iter()
                .map(|r| r.loc.name)
                .collect()
        };
        // join is the larger function: by size alone helper leads; reached first, join does.
        assert_eq!(names(&s(1.0, 1.0)), ["helper", "join"]);
        assert_eq!(names(&s(0.1, 0.6)), ["join", "helper"]);
        assert_eq!(names(&s(0.7, 0.2)), ["helper", "join"]);
        // A caller whose best line only calls a tied function does not lead it, however
        // early: `K.m`'s line 15 is `return helper(1)`.
        let relay = Spectrum {
            failed: 1,
            passed: 1,
            lines: [("pkg/core.py".to_string(), vec![at(15, 0.1), at(10, 0.5)])].into(),
            ..Spectrum::default()
        };
        assert_eq!(names(&relay), ["helper", "K.m"]);
    }
}
