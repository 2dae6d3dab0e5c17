use std::collections::BTreeMap;

use super::edits::*;
use super::infill::*;
use super::prompt::*;
use super::runner::*;
use super::shapes::*;
use super::sources::*;
use super::suspects::*;
use super::*;
use crate::agent::attempt::{Ledger, Metered, StopReason};
use crate::agent::context::{Context, Location};
use crate::agent::localize::Ranked;
use crate::agent::model::{Infill, Model, ModelError, Request, Usage};
use crate::agent::tools::ToolConfig;
use crate::agent::trajectory::Trajectory;
use crate::config::Budgets;

const CORE: &str = "import math\n\n\ndef clamp(v, lo, hi):\n    \"\"\"Clamp v.\n\n    Long doc.\n    \"\"\"\n    if v > hi:\n        return lo\n    return max(v, lo)\n\n\nclass Cart:\n    @property\n    def count(self):\n        return len(self.items) - 1\n";

fn files() -> BTreeMap<String, String> {
    BTreeMap::from([("pkg/core.py".to_string(), CORE.to_string())])
}

fn locs() -> Vec<Location> {
    vec![
        Location {
            path: "pkg/core.py".into(),
            start: 4,
            end: 11,
            name: "clamp".into(),
            frame_line: Some(10),
        },
        Location {
            path: "pkg/core.py".into(),
            start: 15,
            end: 17,
            name: "Cart.count".into(),
            frame_line: None,
        },
    ]
}

/// A ranked function whose scored lines are its hot lines.
fn ranked(loc: &Location, score: f64, hot: &[usize]) -> Ranked {
    Ranked {
        loc: Location {
            frame_line: None,
            ..loc.clone()
        },
        lines: hot.iter().map(|l| (*l, score)).collect(),
    }
}

#[test]
fn ranked_suspects_come_in_rank_order_then_the_traceback_frame_with_their_hot_lines() {
    let l = locs();
    // The spectrum puts Cart.count first; the traceback's clamp is added after it.
    let s = suspects_ranked(&[ranked(&l[1], 1.0, &[17])], &l, &files());
    let names: Vec<&str> = s.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(names, ["Cart.count", "clamp"]);
    assert_eq!(s[0].hot, [17]);
    assert!(s[1].hot.is_empty());
    let problem = Problem {
        files: files(),
        ..Default::default()
    };
    let p = prompt(&problem, &s, EditFormat::Lines);
    assert!(
        p.contains(
            "the passing tests rarely):\n```\n   17          return len(self.items) - 1\n```\n"
        ),
        "{p}"
    );
    // Only the `lines` format numbers lines, so only it names them.
    assert!(!prompt(&problem, &s, EditFormat::Function).contains("suspicious"));
    // Hot lines that cover the whole function (or a hidden docstring) narrow nothing.
    let s = suspects_ranked(&[ranked(&l[1], 1.0, &[15, 16, 17])], &[], &files());
    assert!(s[0].hot.is_empty());
    let s = suspects_ranked(&[ranked(&l[0], 1.0, &[6, 9])], &[], &files());
    assert_eq!(s[0].hot, [9]);
}

#[test]
fn infill_fills_every_site_greedy_then_samples_the_best_four_twice() {
    let plan: Vec<(usize, usize)> = (0..infill_draws(6)).map(|i| infill_draw(i, 6)).collect();
    // (site, sample): six greedy, then sites 0-3 each with samples 1 and 2 back to back
    // (the second one's prompt is the first one's, all in the server's cache).
    let greedy = (0..6).map(|s| (s, 0));
    let sampled = (0..4).flat_map(|s| (1..=2).map(move |k| (s, k)));
    assert_eq!(plan, greedy.chain(sampled).collect::<Vec<_>>());
    // Fewer sites than four: each is sampled twice; no site, no draw.
    let plan: Vec<(usize, usize)> = (0..infill_draws(2)).map(|i| infill_draw(i, 2)).collect();
    assert_eq!(plan, [(0, 0), (1, 0), (0, 1), (0, 2), (1, 1), (1, 2)]);
    assert_eq!(infill_draws(0), 0);
    // Every sampled draw has its own seed; the greedy one has none to speak of.
    assert_eq!(sampling(0, 0.8).temperature, 0.0);
    assert_ne!(sampling(1, 0.8).seed, sampling(2, 0.8).seed);
}

#[test]
fn shapes_cascade_each_with_its_own_greedy_then_sampled_draws() {
    // CORE: 9 if v > hi, 10 return lo, 11 return max(v, lo).
    let l = locs();
    let mut clamp = ranked(&l[0], 1.0, &[10]);
    clamp.lines = vec![(9, 0.7), (10, 1.0), (11, 0.2)];
    let sites = infill_sites(
        std::slice::from_ref(&clamp),
        &files(),
        &[InfillShape::Line, InfillShape::Block],
    );
    let got: Vec<(InfillShape, usize)> = sites.iter().map(|s| (s.shape, s.line)).collect();
    // Every line site (best score first) before the block, whose score is the best of all.
    assert_eq!(
        got,
        [
            (InfillShape::Line, 10),
            (InfillShape::Line, 9),
            (InfillShape::Line, 11),
            (InfillShape::Block, 9)
        ]
    );
    let plan = infill_plan(&sites);
    let lines = [
        (0, 0),
        (1, 0),
        (2, 0),
        (0, 1),
        (0, 2),
        (1, 1),
        (1, 2),
        (2, 1),
        (2, 2),
    ];
    let block = [(3, 0), (3, 1), (3, 2)];
    assert_eq!(plan, [&lines[..], &block[..]].concat());
    // The other order: the block's draws first.
    let sites = infill_sites(&[clamp], &files(), &[InfillShape::Block, InfillShape::Line]);
    assert_eq!(sites[0].shape, InfillShape::Block);
    assert_eq!(infill_plan(&sites)[..3], [(0, 0), (0, 1), (0, 2)]);
}

#[test]
fn infill_masks_the_most_suspicious_lines_and_edits_the_one_it_fills() {
    // CORE: 4 def clamp, 5-8 docstring, 9 if v > hi, 10 return lo, 11 return max(v, lo);
    // 15 @property, 16 def count, 17 return len(self.items) - 1.
    let l = locs();
    let mut clamp = ranked(&l[0], 1.0, &[10]);
    clamp.lines = vec![(4, 0.5), (5, 1.0), (9, 0.7), (10, 1.0), (11, 0.2)];
    let mut count = ranked(&l[1], 0.9, &[17]);
    count.lines = vec![(15, 0.9), (16, 0.9), (17, 0.9)];
    let sites = infill_sites(&[clamp, count], &files(), &[InfillShape::Line]);
    let at: Vec<usize> = sites.iter().map(|s| s.line).collect();
    // The def, decorator and docstring lines are never masked; best score first.
    assert_eq!(at, [10, 17, 9, 11]);
    assert_eq!(sites[0].func, (4, 11));

    let (prefix, suffix) = infill_context(CORE, &sites[0]);
    assert!(prefix.starts_with("import math\n"), "{prefix:?}");
    assert!(prefix.ends_with("    if v > hi:\n"), "{prefix:?}");
    assert!(suffix.starts_with("    return max(v, lo)\n"), "{suffix:?}");
    assert!(suffix.ends_with("    def count(self):\n"), "{suffix:?}");

    let e = apply_infill("        return hi", &sites[0], &files()).unwrap();
    assert!(
        e.content
            .contains("    if v > hi:\n        return hi\n    return max")
    );
    assert_eq!(e.content.lines().count(), CORE.lines().count());
    // A line without its indentation keeps the original's.
    let e = apply_infill("return hi\n", &sites[0], &files()).unwrap();
    assert!(e.content.contains("\n        return hi\n"), "{}", e.content);
    // The line as it is, or nothing: no candidate.
    let same = apply_infill("        return lo", &sites[0], &files()).unwrap_err();
    assert_eq!(same.status().as_str(), "not_applied");
    assert_eq!(
        apply_infill("  \n", &sites[0], &files())
            .unwrap_err()
            .status()
            .as_str(),
        "unparsed"
    );
}

#[test]
fn a_one_line_fill_that_completes_a_statement_replaces_its_continuation_lines() {
    // xmltodict: the masked line opens a call its next line closes; the model writes the
    // whole call on one line (the gold fix). Leaving `attr_prefix)` behind would not parse.
    let src = "def emit(ik, namespaces, sep, attr_prefix):\n    if ik:\n        ik = process(namespaces, ik, sep,\n                     attr_prefix)\n    return ik\n";
    let files = BTreeMap::from([("m.py".to_string(), src.to_string())]);
    let site = Site {
        path: "m.py".into(),
        ..line_site(3, (1, 5))
    };
    let e = apply_infill(
        "        ik = process(ik, namespaces, sep, attr_prefix)",
        &site,
        &files,
    )
    .unwrap();
    assert_eq!(
        e.content,
        "def emit(ik, namespaces, sep, attr_prefix):\n    if ik:\n        ik = process(ik, namespaces, sep, attr_prefix)\n    return ik\n"
    );
    // The statement as it was, on one line: nothing changes.
    let same = apply_infill(
        "        ik = process(namespaces, ik, sep, attr_prefix)",
        &site,
        &files,
    )
    .unwrap_err();
    assert_eq!(same.status().as_str(), "not_applied");
    // A fill that leaves the call open, like the line it replaces: that line alone.
    let e = apply_infill("        ik = process(ik, namespaces, sep,", &site, &files).unwrap();
    assert!(
        e.content
            .contains("process(ik, namespaces, sep,\n                     attr_prefix)\n")
    );
}

#[test]
fn open_brackets_skip_strings_and_comments() {
    assert_eq!(open_brackets("f(a, [b,"), Some(2));
    assert_eq!(open_brackets("x = \"(\" + g(y)  # ) ("), Some(0));
    assert_eq!(open_brackets("s = 'it\\'s (' + t)"), Some(-1));
    assert_eq!(open_brackets("doc = \"\"\"(\""), None);
    let lines: Vec<String> = ["a = f(1,", "      g(2,", "        3))", "b = 1"]
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert_eq!(statement_end(&lines, 1), Some(3));
    assert_eq!(statement_end(&lines, 4), None, "complete on its line");
    assert_eq!(statement_end(&lines[..2], 1), None, "never closed");
}

#[test]
fn a_departing_fill_is_spliced_into_the_masked_line_one_token_at_the_departure() {
    // Replaced, inserted before: the line's own rest kept after the model's token.
    assert_eq!(
        spliced(
            "    if s.endswith('x') or s[-2:-1] not in 'ab':",
            "    if s.endswith('x') and s[-1] == 'x':"
        ),
        [
            "    if s.endswith('x') and s[-2:-1] not in 'ab':",
            "    if s.endswith('x') and or s[-2:-1] not in 'ab':",
        ]
    );
    // An inserted word keeps a space from the word after it; an operator run is one token.
    assert_eq!(
        spliced("        if isinstance(v, list):", "        if not v:"),
        [
            "        if not (v, list):",
            "        if not isinstance(v, list):"
        ]
    );
    assert_eq!(
        spliced("    return lo < hi", "    return lo <= mid"),
        ["    return lo <= hi", "    return lo <= < hi"]
    );
    // The fill's token is the line's next one: the line's token deleted too.
    assert_eq!(
        spliced("    if not ready(x):", "    if ready(y):"),
        [
            "    if ready ready(x):",
            "    if ready not ready(x):",
            "    if ready(x):"
        ]
    );
    // The masked line, a fill that only ends early or adds at the end, and nothing: none.
    assert!(spliced("    x = f(a)", "x = f( a )").is_empty());
    assert!(spliced("    x = f(a) + 1", "    x = f(a)").is_empty());
    assert!(spliced("    x = f(a)", "    x = f(a) + 1").is_empty());
    assert!(spliced("    x = f(a)", "").is_empty());
}

#[test]
fn a_departing_fill_is_continued_from_the_masked_line_through_where_it_departs() {
    let masked = "    return reduce(evalform_front, val, forms)";
    // Another statement: the masked line's first token, for the model to go on from.
    assert_eq!(
        continued_start(masked, "    raise TypeError('bad form')").as_deref(),
        Some("    return")
    );
    // The same start, then another argument: through the argument the fill changed.
    assert_eq!(
        continued_start(masked, "    return reduce(evalform_front, forms)").as_deref(),
        Some("    return reduce(evalform_front, val")
    );
    // Inside a word: through the whole word; an operator run is one token.
    assert_eq!(
        continued_start(
            "        dint = dints[int_idx - 0]",
            "        dint = dints[int_index]"
        )
        .as_deref(),
        Some("        dint = dints[int_idx")
    );
    assert_eq!(
        continued_start("    if a >= b:", "    if a > c:").as_deref(),
        Some("    if a >=")
    );
    // A string is one token.
    assert_eq!(
        continued_start("    x = g('a b', c)", "    x = g('a c', c)").as_deref(),
        Some("    x = g('a b'")
    );
    // The masked line itself (spacing aside), a fill that only adds to it, and a departure
    // in the last token leave nothing to continue.
    assert_eq!(
        continued_start(masked, "return reduce(evalform_front,val,forms)"),
        None
    );
    assert_eq!(continued_start("    x = f(a)", "    x = f(a) + 1"), None);
    // Every site a shape keeps is continued, each walking on along the line.
    assert_eq!(continue_steps(0), WALK_STEPS);
    assert_eq!(continue_steps(CONTINUED_SITES - 1), WALK_STEPS);
    assert_eq!(continue_steps(CONTINUED_SITES), 0);
    assert_eq!(continued_start("    return lo", "    return hi"), None);
}

#[test]
fn a_module_assignment_the_function_reads_is_a_site_after_its_scored_lines() {
    // The table is rebuilt at import, where no test's coverage sees it: only the function
    // that reads it is scored.
    let src = "import sys\n\n_TABLE = [(1, 'a'), (2, 'b'),\n          (3, 'c')]\n_TABLE = [(t[0] * 2, t[0]) for t in _TABLE]\nOTHER = 3\nif sys.version_info > (3,):\n    LIMIT = 10\n\n\ndef lookup(n):\n    for bound, unit in _TABLE:\n        if n < bound and n < LIMIT:\n            return unit.upper\n    return None\n";
    let files = BTreeMap::from([("m.py".to_string(), src.to_string())]);
    let loc = Location {
        path: "m.py".into(),
        start: 11,
        end: 15,
        name: "lookup".into(),
        frame_line: None,
    };
    let mut r = ranked(&loc, 1.0, &[12]);
    r.lines = vec![(12, 1.0), (13, 0.8)];
    let sites = infill_sites(&[r], &files, &[InfillShape::Line]);
    let at: Vec<(usize, f64)> = sites.iter().map(|s| (s.line, s.score)).collect();
    // The one-line rebuild (not the multi-line literal, nor OTHER, which it does not read,
    // nor `upper`, an attribute) and the constant under a module-level `if`.
    assert_eq!(at, [(12, 1.0), (13, 0.8), (5, 0.0), (8, 0.0)]);
    // Its window is the module's text around it.
    let (prefix, suffix) = infill_context(src, &sites[2]);
    assert!(prefix.ends_with("          (3, 'c')]\n"), "{prefix:?}");
    assert!(suffix.starts_with("OTHER = 3\n"), "{suffix:?}");
}

#[test]
fn a_def_line_is_masked_when_it_gives_a_default() {
    assert!(maskable("def bytes2human(nbytes, ndigits=0):"));
    assert!(maskable(
        "    async def fetch(self, url, retries=3) -> bytes:"
    ));
    assert!(maskable("def f(a, *, sep=','):"));
    assert!(!maskable("def f(a, b):"));
    assert!(!maskable("def f(a) -> int:"));
    assert!(!maskable("def f(a=="), "a comparison is not a default");
    assert!(!maskable("class C(Base, metaclass=Meta):"));
}

/// A fill-only model whose answer is `answer(request)`; it keeps each request's middle.
/// It runs on this machine (checks wait for it) unless made [`FillsWith::remote`].
struct FillsWith<F> {
    answer: F,
    asked: std::sync::Mutex<Vec<String>>,
    local: bool,
}

impl<F: Fn(&Infill<'_>) -> &'static str> FillsWith<F> {
    fn new(answer: F) -> Self {
        FillsWith {
            answer,
            asked: Default::default(),
            local: true,
        }
    }
    /// A server elsewhere: checks run while it writes the next fill.
    fn remote(self) -> Self {
        FillsWith {
            local: false,
            ..self
        }
    }
}

#[async_trait::async_trait]
impl<F: Fn(&Infill<'_>) -> &'static str + Send + Sync> Model for FillsWith<F> {
    async fn complete(
        &self,
        _req: &Request<'_>,
    ) -> Result<crate::agent::model::Response, ModelError> {
        Err(ModelError::Unsupported("fills only".into()))
    }
    fn spec(&self) -> String {
        "test:fills-with".into()
    }
    fn describe(&self) -> String {
        self.spec()
    }
    fn on_this_machine(&self) -> bool {
        self.local
    }
    fn supports_infill(&self) -> bool {
        true
    }
    async fn infill(&self, req: &Infill<'_>) -> Result<crate::agent::model::Filled, ModelError> {
        self.asked.lock().unwrap().push(req.middle.to_string());
        Ok(crate::agent::model::Filled {
            text: (self.answer)(req).into(),
            usage: Usage::default(),
            timings: None,
            alternatives: Vec::new(),
        })
    }
}

#[tokio::test]
async fn a_greedy_fill_that_departs_and_fails_is_continued_from_the_masked_line() {
    // Greedy at clamp's line 10 it writes another statement; given the masked line's first
    // token, it writes `return hi`.
    let model = FillsWith::new(|req: &Infill<'_>| {
        match (req.middle, req.prefix.ends_with("if v > hi:\n")) {
            ("", true) => "        raise ValueError(v)",
            ("        return", true) => " hi",
            ("", false) => "    if v >= hi:",
            _ => "",
        }
    });
    let (out, _dir) = clamp_run(&model, &[9, 10], "return hi$").await;
    let c = &out.candidates;
    let i = c
        .iter()
        .position(|c| c.reply.ends_with("←         raise ValueError(v)"))
        .unwrap_or_else(|| panic!("{c:?}"));
    assert_eq!(c[i].status, Outcome::Failing, "{c:?}");
    // The very next draw continues the masked line's `return`, and its fill passes.
    assert!(
        c[i + 1].reply.ends_with(" (continued) ←         return hi"),
        "{:?}",
        c[i + 1]
    );
    assert_eq!(c[i + 1].status, Outcome::Passing, "{c:?}");
    let asked = model.asked.lock().unwrap();
    assert!(asked.contains(&"        return".to_string()), "{asked:?}");
    // Line 9's greedy fill (`if v >= hi:`) departs in `hi`: it is continued from the masked
    // line through `hi` (the double then writes nothing), and that fill is not continued again.
    let middles: Vec<&str> = asked
        .iter()
        .filter(|m| !m.is_empty())
        .map(String::as_str)
        .collect();
    assert_eq!(
        middles,
        vec!["    if v > hi", "        return"],
        "{asked:?}"
    );
}

/// Line fills on clamp's problem with only `lines` scored, and a test that passes when
/// core.py has `pat`.
async fn clamp_run(
    model: &dyn Model,
    lines: &[usize],
    pat: &str,
) -> (CandidatesOutcome, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = crate::agent::testing::HostDir::with_files(
        dir.path(),
        &[("pkg/core.py", CORE), ("one_test.sh", ONE_TEST)],
    )
    .await
    .unwrap();
    let target = "tests/test_m.py::test_clamp".to_string();
    let mut problem = Problem {
        targets: vec![target.clone()],
        ..clamp_problem()
    };
    problem.ranked[0].lines = lines.iter().map(|&l| (l, 1.0)).collect();
    let tools = ToolConfig {
        test_cmd: crate::testcmd::TestCommand::parse(&format!("sh one_test.sh test_clamp '{pat}'"))
            .unwrap(),
        ..ToolConfig::default()
    };
    let cfg = CandidateConfig {
        shapes: vec![InfillShape::Line],
        ..CandidateConfig::default()
    };
    let out = run_with(model, &sandbox, &problem, &[target], &cfg, &tools).await;
    assert!(out.infrastructure.is_none(), "{:?}", out.infrastructure);
    (out, dir)
}

#[tokio::test]
async fn a_fill_that_departs_mid_line_is_spliced_into_it_and_the_splice_is_checked() {
    // Asked for `if v > hi:`, the model writes `if v < lo:`: the splice `if v < hi:` (its
    // `<` in the line's own rest) is what passes, with no model call of its own.
    let model = FillsWith::new(|req: &Infill<'_>| match req.middle {
        "" if req.suffix.starts_with("        return lo") => "    if v < lo:",
        _ => "",
    });
    let (out, _dir) = clamp_run(&model, &[9], "if v < hi:$").await;
    let c = &out.candidates;
    let i = c
        .iter()
        .position(|c| c.reply.ends_with("←     if v < lo:"))
        .unwrap_or_else(|| panic!("{c:?}"));
    assert_eq!(c[i].status, Outcome::Failing, "{c:?}");
    assert!(
        c[i + 1].reply.ends_with("(spliced) ←     if v < hi:"),
        "{:?}",
        c[i + 1]
    );
    assert_eq!(c[i + 1].status, Outcome::Passing, "{c:?}");
    assert_eq!((c[i + 1].usage.total(), c[i + 1].model_ms), (0, 0));
    // The splices that would not parse (`if v < > hi:`) were never checked.
    assert!(c.iter().all(|c| !c.reply.contains("< >")), "{c:?}");
    let asked = model.asked.lock().unwrap();
    assert!(!asked.iter().any(|m| m.contains("v < hi")), "{asked:?}");
}

#[tokio::test]
async fn a_passing_fill_that_departs_from_the_line_is_still_walked_along_it() {
    // `return min(v, lo)` passes; the walk goes on from the masked line's `return max`, and
    // that step (`return max(v, hi)`, one token from the line) passes too.
    let model = FillsWith::new(|req: &Infill<'_>| match req.middle {
        "" if req.suffix.starts_with("\n\nclass Cart") => "    return min(v, lo)",
        "    return max" => "(v, hi)",
        _ => "",
    });
    let (out, _dir) = clamp_run(&model, &[11], "return m[a-z]*(v, [a-z]*)$").await;
    let c = &out.candidates;
    let passing: Vec<&str> = c
        .iter()
        .filter(|c| c.status == Outcome::Passing)
        .map(|c| c.reply.as_str())
        .collect();
    assert_eq!(
        passing,
        [
            "pkg/core.py:11 ←     return min(v, lo)",
            "pkg/core.py:11 (continued) ←     return max(v, hi)"
        ],
        "{c:?}"
    );
}

/// Says it has fill-in-the-middle, then refuses it (an Ollama model without a suffix
/// template); chat answers with prose, each reply costing `price` dollars.
#[derive(Default)]
struct RefusesInfill {
    price: f64,
}

#[async_trait::async_trait]
impl Model for RefusesInfill {
    async fn complete(
        &self,
        _req: &Request<'_>,
    ) -> Result<crate::agent::model::Response, ModelError> {
        Ok(crate::agent::model::Response {
            message: crate::agent::model::AssistantMessage {
                content: "no idea".into(),
                tool_calls: Vec::new(),
                raw: None,
            },
            usage: Usage::default(),
            finish: crate::agent::model::FinishReason::Stop,
            bytes_sent: 0,
        })
    }
    fn spec(&self) -> String {
        "test:refuses-infill".into()
    }
    fn describe(&self) -> String {
        self.spec()
    }
    fn cost(&self, _usage: &Usage) -> f64 {
        self.price
    }
    fn supports_infill(&self) -> bool {
        true
    }
    async fn infill(&self, _req: &Infill<'_>) -> Result<crate::agent::model::Filled, ModelError> {
        Err(ModelError::Rejected {
            status: 400,
            body: "model does not support insert".into(),
        })
    }
}

/// The clamp problem with `clamp`'s lines 9–10 ranked.
fn clamp_problem() -> Problem {
    let l = locs();
    let mut clamp = ranked(&l[0], 1.0, &[10]);
    clamp.lines = vec![(9, 1.0), (10, 1.0)];
    Problem {
        files: files(),
        context: Context {
            focus: crate::agent::context::Focus {
                code: l.clone(),
                ..Default::default()
            },
            ..Default::default()
        },
        ranked: vec![clamp],
        ..Default::default()
    }
}

#[tokio::test]
async fn the_cost_cap_stops_the_drawing_before_the_next_request() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = crate::agent::testing::HostDir::with_files(dir.path(), &[("pkg/core.py", CORE)])
        .await
        .unwrap();
    let problem = clamp_problem();
    let cfg = CandidateConfig {
        count: 4,
        format: EditFormat::Lines,
        ..CandidateConfig::default()
    };
    let model = RefusesInfill { price: 0.01 };
    let tools = ToolConfig::default();
    let drawn = async |cap: f64| {
        let ledger = Ledger::new(Budgets {
            max_cost_usd: cap,
            ..Budgets::default()
        });
        let r = Run {
            model: &Metered::new(&model, &ledger, 1),
            sandbox: &sandbox,
            problem: &problem,
            baseline_failing: &[],
            config: &cfg,
            tools: &tools,
            attempt: "t1.candidates",
        };
        let out = run(r, &mut Trajectory::to_writer(Box::new(std::io::sink()))).await;
        (out, ledger.report(ledger.check()))
    };
    // No dollar cap: 2K replies (all prose, none checked).
    let (free, _) = drawn(0.0).await;
    assert_eq!((free.candidates.len(), free.budget), (8, None));
    // $0.025: the third reply crosses it, and no fourth request is made.
    let (capped, spend) = drawn(0.025).await;
    assert_eq!(capped.candidates.len(), 3, "{:?}", capped.note);
    assert_eq!(capped.budget, Some(StopReason::CostLimit));
    assert!(
        capped.note.as_deref().unwrap_or("").contains("cost_limit"),
        "{:?}",
        capped.note
    );
    assert!((spend.cost_usd - 0.03).abs() < 1e-9, "{spend:?}");
    assert_eq!(spend.tiers.len(), 2, "booked on tier 1");
}

#[tokio::test]
async fn a_refused_infill_falls_back_to_the_lines_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = crate::agent::testing::HostDir::with_files(dir.path(), &[("pkg/core.py", CORE)])
        .await
        .unwrap();
    let problem = clamp_problem();
    let traj_path = dir.path().join("t.jsonl");
    let mut traj = Trajectory::create(&traj_path).unwrap();
    let cfg = CandidateConfig {
        count: 2,
        ..CandidateConfig::default()
    };
    assert_eq!(cfg.format, EditFormat::Infill);
    let ledger = Ledger::new(Budgets::default());
    let out = run(
        Run {
            model: &Metered::new(&RefusesInfill::default(), &ledger, 0),
            sandbox: &sandbox,
            problem: &problem,
            baseline_failing: &[],
            config: &cfg,
            tools: &ToolConfig::default(),
            attempt: "t0.candidates",
        },
        &mut traj,
    )
    .await;
    drop(traj);
    // Chat replies, redrawn up to 2K: all prose, none checked.
    assert_eq!(out.candidates.len(), 4, "{:?}", out.candidates);
    assert!(
        out.candidates
            .iter()
            .all(|c| c.status == Outcome::Unparsed && c.reply == "no idea")
    );
    let text = std::fs::read_to_string(&traj_path).unwrap();
    let asked: serde_json::Value = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["kind"] == "candidates_prompt")
        .unwrap();
    assert_eq!(asked["format"], "lines");
    assert!(
        asked["fallback"]
            .as_str()
            .unwrap()
            .contains("does not support insert"),
        "{asked}"
    );
    assert!(asked["prompt"].as_str().unwrap().contains("LINE <number>"));
}

#[test]
fn suspects_hide_the_docstring_and_skip_module_frames() {
    let mut l = locs();
    l.insert(
        0,
        Location {
            path: "pkg/core.py".into(),
            start: 1,
            end: 2,
            name: "<module>".into(),
            frame_line: Some(1),
        },
    );
    let s = suspects(&l, &files());
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].name, "clamp");
    assert!(!s[0].shown.contains("Long doc"), "{}", s[0].shown);
    assert!(s[0].shown.contains("if v > hi:"));
    assert_eq!(s[1].name, "count");
    assert!(s[1].shown.starts_with("    @property"));
}

#[test]
fn the_functions_a_suspect_calls_are_suspects_too() {
    let src = "def outer(x):\n    return inner(x) + 1\n\n\ndef inner(x):\n    return x * 2\n\n\ndef unrelated():\n    return 0\n";
    let files = BTreeMap::from([("pkg/m.py".to_string(), src.to_string())]);
    let loc = Location {
        path: "pkg/m.py".into(),
        start: 1,
        end: 2,
        name: "outer".into(),
        frame_line: None,
    };
    let s = suspects(&[loc], &files);
    let names: Vec<&str> = s.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(names, ["outer", "inner"]);
    assert_eq!((s[1].start, s[1].end), (5, 6));
}

#[test]
fn a_function_reply_replaces_the_function_and_keeps_its_docstring() {
    let s = suspects(&locs(), &files());
    let reply = "Here is the fix:\n```python\ndef clamp(v, lo, hi):\n    if v > hi:\n        return hi\n    return max(v, lo)\n```\n";
    let edits = parse_reply(reply, &s, &files()).unwrap();
    assert_eq!(edits.len(), 1);
    let want = CORE.replace(
        "        return lo\n    return max",
        "        return hi\n    return max",
    );
    assert_eq!(edits[0].content, want);
}

#[test]
fn a_method_reply_is_reindented_and_keeps_its_decorator() {
    let s = suspects(&locs(), &files());
    // Dedented, without the decorator: both restored.
    let reply = "```python\ndef count(self):\n    return len(self.items)\n```";
    let edits = parse_reply(reply, &s, &files()).unwrap();
    assert!(
        edits[0].content.ends_with(
            "class Cart:\n    @property\n    def count(self):\n        return len(self.items)\n"
        ),
        "{}",
        edits[0].content
    );
    // Indented as in the file, decorator included: the same result.
    let reply2 =
        "```python\n    @property\n    def count(self):\n        return len(self.items)\n```";
    assert_eq!(parse_reply(reply2, &s, &files()).unwrap(), edits);
}

#[test]
fn replies_that_change_nothing_or_name_no_suspect_are_not_applied() {
    let s = suspects(&locs(), &files());
    let same = "```python\ndef clamp(v, lo, hi):\n    if v > hi:\n        return lo\n    return max(v, lo)\n```";
    assert_eq!(
        parse_reply(same, &s, &files())
            .unwrap_err()
            .status()
            .as_str(),
        "not_applied"
    );
    let other = "```python\ndef helper():\n    return 1\n```";
    let e = parse_reply(other, &s, &files()).unwrap_err();
    assert_eq!(e.status().as_str(), "not_applied");
    assert!(e.detail().contains("helper"), "{}", e.detail());
    let prose = "The bug is that clamp returns lo.";
    assert_eq!(
        parse_reply(prose, &s, &files())
            .unwrap_err()
            .status()
            .as_str(),
        "unparsed"
    );
}

#[test]
fn search_replace_blocks_apply_exactly_or_by_stripped_lines() {
    let s = suspects(&locs(), &files());
    let exact = "```\npkg/core.py\n<<<<<<< SEARCH\n        return lo\n    return max(v, lo)\n=======\n        return hi\n    return max(v, lo)\n>>>>>>> REPLACE\n```";
    let e = parse_reply(exact, &s, &files()).unwrap();
    assert!(e[0].content.contains("        return hi\n    return max"));
    // Indentation lost (small models do this): matched by stripped lines, re-indented.
    let loose = "pkg/core.py\n<<<<<<< SEARCH\nif v > hi:\n    return lo\n=======\nif v > hi:\n    return hi\n>>>>>>> REPLACE";
    let e2 = parse_reply(loose, &s, &files()).unwrap();
    assert_eq!(e2[0].content, e[0].content, "{}", e2[0].content);
    // The wrong path still finds the suspect's file.
    let wrong_path = loose.replace("pkg/core.py", "core.py");
    assert_eq!(parse_reply(&wrong_path, &s, &files()).unwrap(), e2);
}

#[test]
fn search_replace_refuses_identical_missing_or_template_blocks() {
    let s = suspects(&locs(), &files());
    let same = "<<<<<<< SEARCH\n    return lo\n=======\n    return lo\n>>>>>>> REPLACE";
    assert_eq!(
        parse_reply(same, &s, &files())
            .unwrap_err()
            .status()
            .as_str(),
        "not_applied"
    );
    let missing = "<<<<<<< SEARCH\n(exact lines to change)\n=======\n(new lines)\n>>>>>>> REPLACE";
    let e = parse_reply(missing, &s, &files()).unwrap_err();
    assert_eq!(e.status().as_str(), "not_applied");
    assert!(e.detail().contains("not in pkg/core.py"), "{}", e.detail());
    // An ambiguous stripped match (two `return` lines equal after stripping) is refused.
    let text = "def f():\n    x = 1\n    return x\n\ndef g():\n    x = 1\n    return x\n";
    assert_eq!(
        replace_once(text, "x = 1\nreturn x", "x = 2\nreturn x"),
        None
    );
}

#[test]
fn the_prompt_shows_the_errors_the_test_and_the_suspects_not_the_docstring() {
    let s = suspects(&locs(), &files());
    let mut ctx = Context::default();
    ctx.focus.tests.push(Location {
        path: "tests/test_core.py".into(),
        start: 1,
        end: 2,
        name: "test_clamp".into(),
        frame_line: None,
    });
    let mut f = files();
    f.insert(
        "tests/test_core.py".into(),
        "def test_clamp():\n    assert clamp(5, 0, 3) == 3\n".into(),
    );
    let problem = Problem {
        targets: vec!["tests/test_core.py::test_clamp".into()],
        report: "noise\nE       assert 0 == 3\nFAILED tests/test_core.py::test_clamp\n".into(),
        context: ctx,
        files: f,
        ..Default::default()
    };
    let p = prompt(&problem, &s, EditFormat::Function);
    assert!(p.contains("E       assert 0 == 3"), "{p}");
    assert!(!p.contains("noise"), "{p}");
    assert!(p.contains("assert clamp(5, 0, 3) == 3"));
    assert!(p.contains("clamp (file pkg/core.py, line 4)"));
    assert!(!p.contains("Long doc"));
    assert!(p.contains("single ```python code block"));
    let sr = prompt(&problem, &s, EditFormat::SearchReplace);
    assert!(sr.contains("<<<<<<< SEARCH") && sr.contains("block(s) for pkg/core.py"));
}

/// Candidate `i` with `status`: CORE with `from` replaced by `to`, and a stand-in diff of
/// `lines` added lines (the ranking reads only its size).
fn edited(i: usize, status: Outcome, lines: usize, from: &str, to: &str) -> Candidate {
    Candidate {
        index: i,
        status,
        detail: String::new(),
        diff: format!("--- a/x\n+++ b/x\n{}", "+a\n".repeat(lines)),
        usage: Usage::default(),
        model_ms: 0,
        check_ms: 0,
        rollback_ms: 0,
        reply: String::new(),
        edits: vec![FileEdit {
            path: "pkg/core.py".into(),
            content: CORE.replacen(from, to, 1),
        }],
        timings: None,
        fixed: Vec::new(),
        origin: Default::default(),
    }
}

#[test]
fn passing_candidates_rank_the_faithful_first_then_by_diff_size_then_order() {
    // CORE line 11: `    return max(v, lo)`.
    let c = |i: usize, status: Outcome, lines: usize, to: &str| {
        edited(i, status, lines, "    return max(v, lo)", to)
    };
    let o = CandidatesOutcome {
        candidates: vec![
            c(0, Outcome::Passing, 3, "    return max(v, lo + 0)"),
            c(1, Outcome::Failing, 1, "    return v"),
            // Stops calling `max` (nothing takes its place): ranked last.
            c(2, Outcome::Passing, 1, "    return v"),
            c(3, Outcome::Passing, 1, "    return max(v, lo + 0)"),
            c(4, Outcome::Passing, 1, "    return max(lo, v)"),
        ],
        ..Default::default()
    };
    let problem = Problem {
        files: files(),
        ..Default::default()
    };
    let ranked = o.passing(&problem);
    let order: Vec<usize> = ranked.iter().map(|p| p.candidate.index).collect();
    assert_eq!(order, [3, 0, 4, 2], "{ranked:?}");
    assert_eq!(ranked[3].faithful.dropped, ["callee max"]);
    assert_eq!(diff_size("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"), 2);
}

#[test]
fn a_passing_candidate_that_special_cases_the_tested_input_ranks_after_a_fix() {
    // The test calls clamp(5, 0, 3); CORE lines 9-10: `if v > hi:` / `return lo` (the bug).
    let c =
        |i: usize, lines: usize, from: &str, to: &str| edited(i, Outcome::Passing, lines, from, to);
    let o = CandidatesOutcome {
        candidates: vec![
            // Smaller and first drawn, but it answers the tested input only.
            c(
                0,
                1,
                "        return lo\n",
                "        return 3 if v == 5 else lo\n",
            ),
            // More tokens changed than the special case: faithfulness alone would put it last.
            c(
                1,
                3,
                "        return lo\n",
                "        return min(max(v, lo), hi)\n",
            ),
        ],
        ..Default::default()
    };
    let problem = Problem {
        targets: vec!["tests/test_core.py::test_clamp".into()],
        files: files(),
        tests: vec![crate::verify::oracle::TestSource {
            path: "tests/test_core.py".into(),
            text: "from pkg.core import clamp\n\n\ndef test_clamp():\n    assert clamp(5, 0, 3) == 3\n"
                .into(),
        }],
        ..Default::default()
    };
    let ranked = o.passing(&problem);
    let order: Vec<usize> = ranked.iter().map(|p| p.candidate.index).collect();
    assert_eq!(order, [1, 0], "{ranked:?}");
    assert!(ranked[0].fitted.is_empty(), "{ranked:?}");
    assert!(
        ranked[1].fitted.iter().any(|k| k == "test_literal_branch"),
        "{ranked:?}"
    );
}

#[test]
fn blocks_inserts_and_bodies_mask_around_the_hottest_lines() {
    // CORE: 4 def clamp, 5-8 docstring, 9 if v > hi, 10 return lo, 11 return max(v, lo).
    let l = locs();
    let mut clamp = ranked(&l[0], 1.0, &[10]);
    clamp.lines = vec![(9, 0.7), (10, 1.0), (11, 0.2)];
    let shapes = [InfillShape::Block, InfillShape::Insert, InfillShape::Body];
    let sites = infill_sites(&[clamp], &files(), &shapes);
    let got: Vec<(InfillShape, usize, usize)> =
        sites.iter().map(|s| (s.shape, s.line, s.end)).collect();
    // The if's body is one line: the block is the run of sibling statements 9-11; the insert
    // goes before line 10; the body is 9-11 (after the docstring).
    assert!(got.contains(&(InfillShape::Block, 9, 11)), "{got:?}");
    assert!(got.contains(&(InfillShape::Insert, 10, 9)), "{got:?}");
    assert!(got.contains(&(InfillShape::Body, 9, 11)), "{got:?}");
    let body = sites.iter().find(|s| s.shape == InfillShape::Body).unwrap();
    let (prefix, suffix) = infill_context(CORE, body);
    assert!(
        prefix.ends_with("    \"\"\"\n"),
        "the docstring is the spec: {prefix:?}"
    );
    assert!(suffix.starts_with("\n\nclass Cart:"), "{suffix:?}");
    // A fill stops at the dedent and does not repeat the suffix.
    let e = apply_infill(
        "    if v > hi:\n        return hi\n    return max(v, lo)\n\nclass Other:\n",
        body,
        &files(),
    )
    .unwrap();
    assert!(
        e.content
            .contains("        return hi\n    return max(v, lo)\n\n\nclass Cart"),
        "{}",
        e.content
    );
    assert!(!e.content.contains("class Other"));
    // An insert adds lines and keeps the line it precedes.
    let ins = sites
        .iter()
        .find(|s| s.shape == InfillShape::Insert)
        .unwrap();
    let e = apply_infill("        v = hi\n", ins, &files()).unwrap();
    assert!(
        e.content
            .contains("    if v > hi:\n        v = hi\n        return lo\n"),
        "{}",
        e.content
    );
    assert_eq!(e.content.lines().count(), CORE.lines().count() + 1);
    // Written flush left: the gap's indentation is meant.
    let blk = sites
        .iter()
        .find(|s| s.shape == InfillShape::Block)
        .unwrap();
    let e = apply_infill(
        "if v > hi:\n    return hi\nreturn max(v, lo)",
        blk,
        &files(),
    )
    .unwrap();
    assert!(
        e.content
            .contains("    if v > hi:\n        return hi\n    return max(v, lo)\n"),
        "{}",
        e.content
    );
    // The same lines back: no candidate.
    let same = apply_infill(
        "    if v > hi:\n        return lo\n    return max(v, lo)\n",
        blk,
        &files(),
    );
    assert_eq!(same.unwrap_err().status(), Outcome::NotApplied);
}

#[test]
fn a_block_or_body_fill_stops_where_the_next_definition_would_start() {
    let l = locs();
    let mut clamp = ranked(&l[0], 1.0, &[10]);
    clamp.lines = vec![(9, 0.7), (10, 1.0), (11, 0.2)];
    let mut count = ranked(&l[1], 0.9, &[17]);
    count.lines = vec![(17, 0.9)];
    let shapes = [InfillShape::Line, InfillShape::Body];
    let sites = infill_sites(&[clamp, count], &files(), &shapes);
    let stops = |name_line: usize, shape: InfillShape| {
        let s = sites
            .iter()
            .find(|s| s.func.0 == name_line && s.shape == shape)
            .unwrap();
        s.limits(CORE).0
    };
    // One line: its end. A function's body: the next def or class at the module's level.
    assert_eq!(stops(4, InfillShape::Line), ["\n"]);
    let top = stops(4, InfillShape::Body);
    assert!(top.contains(&"\ndef ".to_string()), "{top:?}");
    assert!(top.contains(&"\nclass ".to_string()), "{top:?}");
    // A method's (its decorator's line starts it): the next method, or the module's next.
    let method = stops(15, InfillShape::Body);
    assert!(method.contains(&"\n    def ".to_string()), "{method:?}");
    assert!(method.contains(&"\n    @".to_string()), "{method:?}");
    assert!(method.contains(&"\ndef ".to_string()), "{method:?}");
    // Never past what OpenAI-style servers accept.
    assert!(top.len() <= 4 && method.len() <= 4);
}

/// A one-line site at `line` of `m.py`, in the function at `func`.
fn line_site(line: usize, func: (usize, usize)) -> Site {
    Site {
        path: "m.py".into(),
        line,
        end: line,
        shape: InfillShape::Line,
        func,
        score: 1.0,
    }
}

#[test]
fn a_fill_far_down_a_file_starts_with_its_imports() {
    let mut src = String::from("import os\nfrom re import compile as rx\n\n");
    for i in 0..40 {
        src.push_str(&format!("X{i} = {i}\n"));
    }
    src.push_str("\ndef f(p):\n    return os.path.basename(p)\n");
    let n = src.lines().count();
    let (prefix, _) = infill_context(&src, &line_site(n, (n - 1, n)));
    assert!(
        prefix.starts_with("import os\nfrom re import compile as rx\n# ...\nX21 = 21\n"),
        "{prefix}"
    );
    assert!(prefix.ends_with("def f(p):\n"), "{prefix}");
    // A window that starts at the top: no head repeated.
    let (p2, _) = infill_context(
        CORE,
        &infill_sites(
            &[ranked(&locs()[0], 1.0, &[10])],
            &files(),
            &[InfillShape::Line],
        )[0],
    );
    assert!(p2.starts_with("import math\n\n\ndef clamp"), "{p2}");
}

#[test]
fn a_fill_sees_six_lines_after_its_gap_at_most() {
    // A 60-line function: the suffix (never cached by the server) stops 6 lines past the
    // gap; near the function's end it still reaches past it.
    let mut src = String::from("def f(x):\n");
    for i in 0..60 {
        src.push_str(&format!("    x = x + {i}\n"));
    }
    src.push_str("    return x\n\n\ndef g():\n    pass\n");
    let (prefix, suffix) = infill_context(&src, &line_site(11, (1, 62)));
    assert!(prefix.ends_with("    x = x + 8\n"), "{prefix}");
    assert_eq!(suffix.lines().count(), INFILL_AFTER, "{suffix}");
    assert!(suffix.starts_with("    x = x + 10\n") && suffix.ends_with("    x = x + 15\n"));
    let (_, tail) = infill_context(&src, &line_site(60, (1, 62)));
    assert!(tail.contains("    return x\n\n\ndef g():\n"), "{tail}");
}

#[test]
fn a_block_is_the_innermost_compound_body_that_fits() {
    let src = "def f(xs):\n    out = []\n    for x in xs:\n        if x:\n            y = x + 1\n            out.append(y)\n        z = 2\n    return out\n";
    let files: BTreeMap<String, String> = [("m.py".to_string(), src.to_string())].into();
    let loc = Location {
        path: "m.py".into(),
        start: 1,
        end: 8,
        name: "f".into(),
        frame_line: None,
    };
    let mut r = ranked(&loc, 1.0, &[5]);
    r.lines = vec![(5, 1.0)];
    let sites = infill_sites(&[r], &files, &[InfillShape::Block]);
    assert_eq!(
        (sites[0].line, sites[0].end),
        (5, 6),
        "the if's body, not the for's"
    );
}

#[test]
fn line_edits_replace_numbered_lines_and_keep_indentation() {
    let s = suspects(&locs(), &files());
    // The docstring's lines are not shown, and the numbers are the file's.
    assert_eq!(s[0].shown_lines, [4, 9, 10, 11]);
    let p = prompt(&Problem::default(), &s, EditFormat::Lines);
    assert!(p.contains("   10          return lo"), "{p}");
    assert!(!p.contains("return a + b"), "no example code to copy: {p}");
    let reply = "Bug: returns lo instead of hi.\nLINE 10: return hi\n";
    let e = parse_reply(reply, &s, &files()).unwrap();
    assert_eq!(
        e[0].content,
        CORE.replace(
            "        return lo\n    return max",
            "        return hi\n    return max"
        )
    );
    // Backticks around it, indentation given: the same.
    let e2 = parse_reply("`LINE 10:         return hi`", &s, &files()).unwrap();
    assert_eq!(e2, e);
    let same = parse_reply("LINE 10:         return lo", &s, &files()).unwrap_err();
    assert_eq!(same.status().as_str(), "not_applied");
    // A wrong number lands on the most similar line nearby (models misread numbers), and
    // unchanged copies of other lines are skipped.
    let off = parse_reply("LINE 11: return hi\nLINE 9: if v > hi:", &s, &files()).unwrap();
    assert_eq!(off, e);
    let prose = parse_reply("LINE 10: Change `return lo` to `return hi`", &s, &files()).unwrap();
    assert_eq!(prose, e);
    let prose2 = parse_reply(
        "LINE 10: Replace `return lo` with `return hi` in the `clamp` function.",
        &s,
        &files(),
    )
    .unwrap();
    assert_eq!(prose2, e);
    let quoted = parse_reply("LINE 10: `        return hi`", &s, &files()).unwrap();
    assert_eq!(quoted, e);
    let outside = parse_reply("LINE 40: import os", &s, &files()).unwrap_err();
    assert!(
        outside.detail().contains("outside them"),
        "{}",
        outside.detail()
    );
}

#[test]
fn sample_zero_is_greedy_and_the_rest_differ_by_seed() {
    assert_eq!(sampling(0, 0.8).temperature, 0.0);
    assert_eq!(sampling(1, 0.8).temperature, 0.8);
    assert_ne!(sampling(1, 0.8).seed, sampling(2, 0.8).seed);
}

/// No server behind it: every call is [`ModelError::Unreachable`].
struct NoServer;

#[async_trait::async_trait]
impl Model for NoServer {
    async fn complete(
        &self,
        _req: &Request<'_>,
    ) -> Result<crate::agent::model::Response, ModelError> {
        Err(ModelError::Unreachable {
            url: "http://127.0.0.1:9".into(),
            reason: "connection refused".into(),
            hint: "start one".into(),
        })
    }
    fn spec(&self) -> String {
        "test:no-server".into()
    }
    fn describe(&self) -> String {
        self.spec()
    }
}

#[tokio::test]
async fn an_unreachable_server_is_infrastructure_not_a_row_of_failed_candidates() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = crate::agent::testing::HostDir::with_files(dir.path(), &[("pkg/core.py", CORE)])
        .await
        .unwrap();
    let problem = clamp_problem();
    let cfg = CandidateConfig {
        count: 4,
        format: EditFormat::Lines,
        ..CandidateConfig::default()
    };
    let ledger = Ledger::new(Budgets::default());
    let out = run(
        Run {
            model: &Metered::new(&NoServer, &ledger, 0),
            sandbox: &sandbox,
            problem: &problem,
            baseline_failing: &[],
            config: &cfg,
            tools: &ToolConfig::default(),
            attempt: "t0.candidates",
        },
        &mut Trajectory::to_writer(Box::new(std::io::sink())),
    )
    .await;
    let why = out.infrastructure.expect("an infrastructure error");
    assert!(why.contains("http://127.0.0.1:9"), "{why}");
    assert_eq!(
        out.candidates.len(),
        1,
        "the first failure stops the drawing"
    );
}

/// [`run`] at tier 0 with a fresh ledger and a discarded trajectory.
async fn run_with(
    model: &dyn Model,
    sandbox: &dyn crate::sandbox::Sandbox,
    problem: &Problem,
    baseline_failing: &[String],
    cfg: &CandidateConfig,
    tools: &ToolConfig,
) -> CandidatesOutcome {
    let ledger = Ledger::new(Budgets::default());
    run(
        Run {
            model: &Metered::new(model, &ledger, 0),
            sandbox,
            problem,
            baseline_failing,
            config: cfg,
            tools,
            attempt: "t0.candidates",
        },
        &mut Trajectory::to_writer(Box::new(std::io::sink())),
    )
    .await
}

/// What happened when, across the model and the sandbox of one run.
type Events = std::sync::Arc<std::sync::Mutex<Vec<&'static str>>>;

/// A model "on this machine" whose every fill is a new edit of the masked line, slow enough
/// to be caught overlapping a check.
struct LocalFills {
    events: Events,
    n: std::sync::atomic::AtomicUsize,
}

#[async_trait::async_trait]
impl Model for LocalFills {
    async fn complete(
        &self,
        _req: &Request<'_>,
    ) -> Result<crate::agent::model::Response, ModelError> {
        Err(ModelError::Unsupported("fills only".into()))
    }
    fn spec(&self) -> String {
        "test:local-fills".into()
    }
    fn describe(&self) -> String {
        self.spec()
    }
    fn on_this_machine(&self) -> bool {
        true
    }
    fn supports_infill(&self) -> bool {
        true
    }
    async fn infill(&self, _req: &Infill<'_>) -> Result<crate::agent::model::Filled, ModelError> {
        self.events.lock().unwrap().push("fill");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        let i = self.n.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.events.lock().unwrap().push("filled");
        Ok(crate::agent::model::Filled {
            text: format!("        return hi + {i}"),
            usage: Usage::default(),
            timings: None,
            alternatives: Vec::new(),
        })
    }
}

/// A host directory whose every command takes a while and is logged.
struct SlowSandbox {
    inner: crate::agent::testing::HostDir,
    events: Events,
}

#[async_trait::async_trait]
impl crate::sandbox::Sandbox for SlowSandbox {
    async fn exec(
        &self,
        req: crate::sandbox::ExecRequest,
    ) -> Result<crate::sandbox::ExecResult, crate::sandbox::SandboxError> {
        self.events.lock().unwrap().push("exec");
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        let r = self.inner.exec(req).await;
        self.events.lock().unwrap().push("exec done");
        r
    }
    async fn diff(&self) -> Result<String, crate::sandbox::SandboxError> {
        self.inner.diff().await
    }
    fn id(&self) -> &str {
        "slow"
    }
}

/// Fills started while a sandbox command ran.
async fn fills_during_checks(overlap: Option<bool>) -> (usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let events: Events = Default::default();
    let sandbox = SlowSandbox {
        inner: crate::agent::testing::HostDir::with_files(dir.path(), &[("pkg/core.py", CORE)])
            .await
            .unwrap(),
        events: events.clone(),
    };
    let model = LocalFills {
        events: events.clone(),
        n: Default::default(),
    };
    let cfg = CandidateConfig {
        overlap,
        ..CandidateConfig::default()
    };
    let tools = ToolConfig {
        test_cmd: crate::testcmd::TestCommand::parse("true").unwrap(),
        ..ToolConfig::default()
    };
    let out = run_with(&model, &sandbox, &clamp_problem(), &[], &cfg, &tools).await;
    assert!(out.infrastructure.is_none(), "{:?}", out.infrastructure);
    // Two sites, each greedy and then sampled twice, and line 9's greedy fill (another
    // statement than its `if`) continued from the masked line, walking on along it: through
    // `if`, `if v`, `if v >` and `if v > hi` (then only the `:` is left); every fill checked
    // (none passes). Overlapping, the requests may all be out before a continuation is
    // queued: it is then not drawn. Line 10's greedy `return hi + 5` for `return lo` is
    // spliced into the masked line (`return hi`), checked with no model call.
    use crate::agent::origin::{Draw, Origin};
    let drawn =
        |c: &Candidate, how: Draw| matches!(&c.origin, Origin::Fill { draw, .. } if *draw == how);
    let count = |how: Draw| out.candidates.iter().filter(|c| drawn(c, how)).count();
    let (continued, spliced) = (count(Draw::Continued), count(Draw::Spliced));
    assert_eq!(
        out.candidates.len(),
        6 + continued + spliced,
        "{:?}",
        out.candidates
    );
    assert!(overlap == Some(true) || spliced == 1, "{spliced}");
    assert!(
        out.candidates
            .iter()
            .filter(|c| drawn(c, Draw::Spliced))
            .all(|c| c.reply.ends_with("←         return hi") && c.usage.total() == 0)
    );
    assert!(overlap == Some(true) || continued == 4, "{continued}");
    assert!(out.candidates.iter().all(|c| c.check_ms > 0));
    let mut open = 0_i32;
    let mut during = 0;
    for e in events.lock().unwrap().iter() {
        match *e {
            "exec" => open += 1,
            "exec done" => open -= 1,
            "fill" if open > 0 => during += 1,
            _ => {}
        }
    }
    (during, out.candidates.len())
}

#[tokio::test]
async fn a_model_on_this_machine_waits_for_the_checks_and_a_remote_one_overlaps_them() {
    // Auto, with the model on a loopback address: no fill while a check runs.
    assert_eq!(fills_during_checks(None).await.0, 0);
    assert_eq!(fills_during_checks(Some(false)).await.0, 0);
    // Overlap asked for: the next fills are written while earlier ones are checked.
    let (during, fills) = fills_during_checks(Some(true)).await;
    assert!(
        during >= fills / 2,
        "{during} of {fills} fills overlapped a check"
    );
}

#[test]
fn infill_stops_a_few_draws_after_a_clean_pass_and_goes_on_after_a_doubtful_one() {
    let after = DRAWS_AFTER_CLEAN;
    // Nothing clean yet: K passing ones, or the sites running out, end it.
    assert!(!drawn_enough(true, 4, 9, 3, None, 12));
    assert!(drawn_enough(true, 4, 9, 4, None, 12));
    // A clean pass at draw 3: alternatives for `after` more draws, then stop.
    assert!(!drawn_enough(true, 4, 4, 1, Some(3), 3 + after - 1));
    assert!(drawn_enough(true, 4, 4, 1, Some(3), 3 + after));
    // Chat formats: K checked candidates, passing or not.
    assert!(drawn_enough(false, 4, 4, 0, None, 4));
    assert!(!drawn_enough(false, 4, 3, 3, Some(1), 8));
}

fn test_run(passed: usize, failing: &[&str]) -> crate::agent::tools::TestRun {
    crate::agent::tools::TestRun {
        status: crate::sandbox::ExecStatus::Exited(1),
        summary: Some(crate::agent::tools::TestSummary {
            passed,
            failed: failing.len(),
            failing: failing.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }),
        output: String::new(),
    }
}

#[test]
fn a_target_run_is_a_step_only_when_some_targets_pass_and_every_one_is_accounted_for() {
    let t = vec!["t.py::a".to_string(), "t.py::b".to_string()];
    assert_eq!(fixed_targets(&test_run(1, &["t.py::b"]), &t), ["t.py::a"]);
    // All fail, all pass, a target that did not run, a single target, an id it did not ask.
    assert!(fixed_targets(&test_run(0, &["t.py::a", "t.py::b"]), &t).is_empty());
    assert!(fixed_targets(&test_run(2, &[]), &t).is_empty());
    assert!(fixed_targets(&test_run(0, &["t.py::b"]), &t).is_empty());
    assert!(fixed_targets(&test_run(0, &[]), &t[..1]).is_empty());
    assert!(fixed_targets(&test_run(1, &["t.py::b", "t.py::z"]), &t).is_empty());
}

#[test]
fn a_kept_edit_drops_its_lines_from_the_ranking_and_moves_the_lines_below() {
    let l = locs();
    let mut clamp = ranked(&l[0], 1.0, &[10]);
    clamp.lines = vec![(9, 0.5), (10, 1.0), (11, 0.7)];
    let count = ranked(&l[1], 0.9, &[17]);
    let two = CORE.replace(
        "        return lo\n",
        "        if v < lo:\n            return lo\n",
    );
    let r = shift_ranked(&[clamp.clone(), count.clone()], "pkg/core.py", CORE, &two);
    assert_eq!(r[0].lines, [(9, 0.5), (12, 0.7)], "line 10 was filled");
    assert_eq!((r[0].loc.start, r[0].loc.end), (4, 12));
    assert_eq!(r[1].lines, [(18, 0.9)]);
    assert_eq!((r[1].loc.start, r[1].loc.end), (16, 18));
    // Another file's ranking does not move.
    assert_eq!(
        shift_ranked(std::slice::from_ref(&count), "other.py", CORE, &two),
        [count]
    );
}

/// Fills clamp's `return lo` with `return hi` and Cart.count's line with the right count,
/// and anything else with a line that changes nothing the tests see.
fn fills_both(req: &Infill<'_>) -> &'static str {
    if req.prefix.ends_with("if v > hi:\n") {
        "        return hi"
    } else if req.prefix.ends_with("def count(self):\n") {
        "        return len(self.items)"
    } else {
        "        pass  # nothing"
    }
}

/// A test command that writes pytest-style JUnit: test_clamp passes once core.py says
/// `return hi`, test_count once it says `return len(self.items)` (and `return hi` too, with
/// NEED=both), test_other always.
const FAKE_TESTS: &str = r#"for a in "$@" $PYTEST_ADDOPTS; do case "$a" in --junitxml=*) x="${a#--junitxml=}";; esac; done
has() { grep -q "$1" pkg/core.py; }
case_() { if [ "$2" = 0 ]; then echo "<testcase classname=\"tests.test_m\" name=\"$1\"/>"; else echo "<testcase classname=\"tests.test_m\" name=\"$1\"><failure message=\"no\"/></testcase>"; fi; }
has 'return hi$'; clamp=$?
has 'return len(self.items)$'; count=$?
[ "$NEED" = both ] && [ $clamp != 0 ] && count=1
{ echo '<testsuites><testsuite name="pytest" tests="3">'
  case_ test_clamp $clamp
  case_ test_count $count
  case_ test_other 0
  echo '</testsuite></testsuites>'; } > "$x"
"#;

/// Run the candidates on the clamp + Cart.count problem with both lines ranked and both
/// tests targets, against FAKE_TESTS with `need`; the outcome and core.py afterwards.
async fn two_places(need: &str) -> (CandidatesOutcome, String) {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = crate::agent::testing::HostDir::with_files(
        dir.path(),
        &[("pkg/core.py", CORE), ("fake_tests.sh", FAKE_TESTS)],
    )
    .await
    .unwrap();
    let l = locs();
    let targets = vec![
        "tests/test_m.py::test_clamp".to_string(),
        "tests/test_m.py::test_count".to_string(),
    ];
    let problem = Problem {
        targets: targets.clone(),
        ranked: vec![ranked(&l[0], 1.0, &[10]), ranked(&l[1], 0.9, &[17])],
        ..clamp_problem()
    };
    let cfg = CandidateConfig {
        shapes: vec![InfillShape::Line],
        ..CandidateConfig::default()
    };
    let tools = ToolConfig {
        test_cmd: crate::testcmd::TestCommand::parse(&format!("NEED={need} sh fake_tests.sh"))
            .unwrap(),
        ..ToolConfig::default()
    };
    let model = FillsWith::new(fills_both).remote();
    let out = run_with(&model, &sandbox, &problem, &targets, &cfg, &tools).await;
    assert!(out.infrastructure.is_none(), "{:?}", out.infrastructure);
    let now = std::fs::read_to_string(dir.path().join("pkg/core.py")).unwrap();
    (out, now)
}

#[tokio::test]
async fn two_partial_fills_that_fix_different_targets_are_checked_together() {
    let (out, now) = two_places("either").await;
    let c = &out.candidates;
    assert_eq!(c[0].status, Outcome::Partial, "{c:?}");
    assert_eq!(c[0].fixed, ["tests/test_m.py::test_clamp"]);
    // Cart.count's fill alone fixes test_count; with candidate 0's edit, both.
    assert_eq!(c[1].status, Outcome::Passing, "{c:?}");
    assert!(
        c[1].detail.contains("with candidate 0's edit too"),
        "{}",
        c[1].detail
    );
    assert!(c[1].diff.contains("+        return hi\n"), "{}", c[1].diff);
    assert!(c[1].diff.contains("+        return len(self.items)\n"));
    assert_eq!(c[1].edits.len(), 1);
    assert_eq!(now, CORE, "the workspace has its original bytes back");
}

#[tokio::test]
async fn a_round_that_ends_on_a_step_starts_the_next_on_top_of_it() {
    // test_count needs both lines: Cart.count's fill alone fails in round 1.
    let (out, now) = two_places("both").await;
    let c = &out.candidates;
    assert_eq!(c[0].status, Outcome::Partial, "{c:?}");
    assert_eq!(c[1].status, Outcome::Failing, "{c:?}");
    // Round 2 keeps candidate 0's edit and fills Cart.count again: it passes.
    let passing: Vec<&Candidate> = c.iter().filter(|c| c.status == Outcome::Passing).collect();
    assert_eq!(passing.len(), 1, "{c:?}");
    let last = passing[0];
    let round_2 = c.iter().position(|c| c.index == last.index).unwrap();
    assert!(
        c[..round_2]
            .iter()
            .all(|c| c.status != Outcome::Passing && c.index < last.index),
        "{c:?}"
    );
    assert!(last.index > 1);
    assert!(last.diff.contains("+        return hi\n"), "{}", last.diff);
    assert!(last.diff.contains("+        return len(self.items)\n"));
    assert!(last.edits[0].content.contains("return hi\n"));
    assert_eq!(now, CORE, "the workspace has its original bytes back");
}

/// Greedy, it gives clamp's masked line back; sampled, it writes a change.
fn echoes_greedy(req: &Infill<'_>) -> &'static str {
    let greedy = req.sample.is_none_or(|s| s.temperature == 0.0);
    let line_10 = req.prefix.ends_with("if v > hi:\n");
    match (greedy, line_10) {
        (true, true) => "        return lo",
        (true, false) => "    if v > hi:",
        (false, true) => "        return hi",
        (false, false) => "    if v >= hi:",
    }
}

/// Greedy, it gives clamp's masked lines back and names its runner-up tokens; asked to
/// continue a start, it ends the line. It keeps each request's (middle, alternatives, greedy).
#[derive(Default)]
struct BranchesGreedy {
    asked: std::sync::Mutex<Vec<(String, u8, bool)>>,
}

#[async_trait::async_trait]
impl Model for BranchesGreedy {
    async fn complete(
        &self,
        _req: &Request<'_>,
    ) -> Result<crate::agent::model::Response, ModelError> {
        Err(ModelError::Unsupported("fills only".into()))
    }
    fn spec(&self) -> String {
        "test:branches-greedy".into()
    }
    fn describe(&self) -> String {
        self.spec()
    }
    fn on_this_machine(&self) -> bool {
        true
    }
    fn supports_infill(&self) -> bool {
        true
    }
    async fn infill(&self, req: &Infill<'_>) -> Result<crate::agent::model::Filled, ModelError> {
        let greedy = req.sample.is_none_or(|s| s.temperature == 0.0);
        self.asked
            .lock()
            .unwrap()
            .push((req.middle.to_string(), req.alternatives, greedy));
        let line_10 = req.prefix.ends_with("if v > hi:\n");
        let alt = |before: &str, token: &str, logprob: f64| crate::agent::model::Alternative {
            before: before.into(),
            token: token.into(),
            logprob,
        };
        let (text, alternatives) = match (req.middle, greedy, line_10) {
            // The runner-up " lo" is the same line; "hi" is the branch.
            ("", true, true) => (
                "        return lo",
                vec![
                    alt("        return", "  lo", -0.5),
                    alt("        return", " hi", -1.5),
                    alt("", "\n", -2.0),
                ],
            ),
            ("", true, false) => ("    if v > hi:", vec![]),
            ("", false, _) => ("    pass", vec![]),
            (_, _, _) => ("", vec![]),
        };
        Ok(crate::agent::model::Filled {
            text: text.into(),
            usage: Usage::default(),
            timings: None,
            alternatives,
        })
    }
}

#[tokio::test]
async fn a_greedy_fill_that_changes_nothing_branches_at_its_runner_up_token() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = crate::agent::testing::HostDir::with_files(dir.path(), &[("pkg/core.py", CORE)])
        .await
        .unwrap();
    let cfg = CandidateConfig {
        shapes: vec![InfillShape::Line],
        ..CandidateConfig::default()
    };
    let tools = ToolConfig {
        test_cmd: crate::testcmd::TestCommand::parse("true").unwrap(),
        ..ToolConfig::default()
    };
    let model = BranchesGreedy::default();
    let out = run_with(&model, &sandbox, &clamp_problem(), &[], &cfg, &tools).await;
    let c = &out.candidates;
    // Line 10's greedy fill gives `return lo` back; the next draw continues `return hi`.
    let i = c
        .iter()
        .position(|c| c.reply.ends_with("←         return lo"))
        .unwrap_or_else(|| panic!("{c:?}"));
    assert_eq!(c[i].status, Outcome::NotApplied, "{c:?}");
    assert!(
        c[i + 1].reply.ends_with(" (runner-up) ←         return hi"),
        "{:?}",
        c[i + 1]
    );
    assert_ne!(c[i + 1].status, Outcome::NotApplied, "{:?}", c[i + 1]);
    let asked = model.asked.lock().unwrap();
    assert!(
        asked.contains(&("        return hi".to_string(), 0, true)),
        "the branch is greedy, asks no runner-ups, and continues its start: {asked:?}"
    );
    assert!(
        asked
            .iter()
            .all(|(m, n, g)| (*n > 0) == (*g && m.is_empty()))
    );
    // The other site's greedy fill has no runner-ups: its retry is sampled, as before.
    assert!(asked.iter().any(|(m, _, g)| m.is_empty() && !g));
}

#[test]
fn a_branch_skips_runner_ups_that_spell_the_same_line() {
    let alt = |before: &str, token: &str| crate::agent::model::Alternative {
        before: before.into(),
        token: token.into(),
        logprob: -1.0,
    };
    let fill = "return a + b";
    assert_eq!(branch(fill, &[]), None);
    assert_eq!(
        branch(
            fill,
            &[
                alt("", " return"),
                alt("return", "  a"),
                alt("return a", " -")
            ]
        ),
        Some("return a -".to_string())
    );
    assert_eq!(
        branch(fill, &[alt("return", "\n"), alt("return", " ")]),
        None
    );
    assert_eq!(
        branch(
            fill,
            &[alt("", "    #"), alt("", "\"\"\""), alt("", "yield")]
        ),
        Some("yield".to_string()),
        "a comment or a docstring in place of the line is not a branch"
    );
}

#[tokio::test]
async fn a_greedy_fill_that_changes_nothing_is_retried_sampled_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = crate::agent::testing::HostDir::with_files(dir.path(), &[("pkg/core.py", CORE)])
        .await
        .unwrap();
    let cfg = CandidateConfig {
        shapes: vec![InfillShape::Line],
        ..CandidateConfig::default()
    };
    let tools = ToolConfig {
        test_cmd: crate::testcmd::TestCommand::parse("true").unwrap(),
        ..ToolConfig::default()
    };
    let model = FillsWith::new(echoes_greedy);
    let out = run_with(&model, &sandbox, &clamp_problem(), &[], &cfg, &tools).await;
    let c = &out.candidates;
    let site = |c: &Candidate| match &c.origin {
        crate::agent::origin::Origin::Fill { at, .. } => at.clone(),
        o => panic!("not a fill: {o:?}"),
    };
    // Two sites: each greedy fill gives its line back and is retried next, then the
    // sampled draws (two per site): 2 × (1 + 1) + 2 × 2.
    assert_eq!(c.len(), 8, "{c:?}");
    for pair in [0, 2] {
        assert_eq!(c[pair].status, Outcome::NotApplied, "{c:?}");
        assert_eq!(site(&c[pair + 1]), site(&c[pair]), "{c:?}");
        assert_eq!(c[pair + 1].status, Outcome::Failing, "{c:?}");
    }
    assert_ne!(site(&c[0]), site(&c[2]));
}

#[test]
fn a_long_function_does_not_crowd_the_next_suspects_hot_line_out_of_the_sites() {
    // `long` has 20 lines that score the same; `short`'s one line scores less.
    let mut src = String::from("def long(x):\n");
    for i in 0..20 {
        src.push_str(&format!("    x = x + {i}\n"));
    }
    src.push_str("    return x\n\n\ndef short(y):\n    return y * 2\n");
    let files = BTreeMap::from([("m.py".to_string(), src)]);
    let loc = |name: &str, start: usize, end: usize| Location {
        path: "m.py".into(),
        start,
        end,
        name: name.into(),
        frame_line: None,
    };
    let long = Ranked {
        loc: loc("long", 1, 22),
        lines: (2..=21).map(|l| (l, 1.0)).collect(),
    };
    let short = Ranked {
        loc: loc("short", 25, 26),
        lines: vec![(26, 0.5)],
    };
    let sites = infill_sites(&[long, short], &files, &[InfillShape::Line]);
    let lines: Vec<usize> = sites.iter().map(|s| s.line).collect();
    assert_eq!(sites.len(), 16, "{lines:?}");
    assert!(lines.contains(&26), "{lines:?}");
    // Still most suspicious first: `short`'s line comes last, `long`'s first 15 before it.
    assert_eq!(lines[..15], (2..=16).collect::<Vec<_>>()[..]);
    assert_eq!(lines[15], 26);
}

/// A test command that writes pytest-style JUnit for one test (`$1`), passing when core.py
/// has a line matching `$2`.
const ONE_TEST: &str = r#"n="$1"; pat="$2"; shift 2
for a in "$@" $PYTEST_ADDOPTS; do case "$a" in --junitxml=*) x="${a#--junitxml=}";; esac; done
if grep -q "$pat" pkg/core.py; then t="<testcase classname=\"tests.test_m\" name=\"$n\"/>"; else t="<testcase classname=\"tests.test_m\" name=\"$n\"><failure message=\"no\"/></testcase>"; fi
echo "<testsuites><testsuite name=\"pytest\" tests=\"1\">$t</testsuite></testsuites>" > "$x"
"#;

/// A model whose every call is counted: what a run that should not ask it checks.
struct Counted(std::sync::atomic::AtomicUsize);

#[async_trait::async_trait]
impl Model for Counted {
    async fn complete(
        &self,
        _req: &Request<'_>,
    ) -> Result<crate::agent::model::Response, ModelError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Err(ModelError::Unsupported("counted".into()))
    }
    fn spec(&self) -> String {
        "test:counted".into()
    }
    fn describe(&self) -> String {
        self.spec()
    }
    fn supports_infill(&self) -> bool {
        true
    }
    async fn infill(&self, _req: &Infill<'_>) -> Result<crate::agent::model::Filled, ModelError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(crate::agent::model::Filled {
            text: "        return hi".into(),
            usage: Usage::default(),
            timings: None,
            alternatives: Vec::new(),
        })
    }
}

#[tokio::test]
async fn a_rule_candidate_that_passes_clean_leaves_the_model_unasked() {
    // Cart.count misspells `len` as `lne`; the report's NameError names it.
    let core = CORE.replace("return len(self.items) - 1", "return lne(self.items)");
    let dir = tempfile::tempdir().unwrap();
    let sandbox = crate::agent::testing::HostDir::with_files(
        dir.path(),
        &[("pkg/core.py", core.as_str()), ("one_test.sh", ONE_TEST)],
    )
    .await
    .unwrap();
    let l = locs();
    let target = "tests/test_m.py::test_count".to_string();
    let problem = Problem {
        targets: vec![target.clone()],
        report: "E       NameError: name 'lne' is not defined\n".into(),
        files: BTreeMap::from([("pkg/core.py".to_string(), core.clone())]),
        ranked: vec![ranked(&l[1], 1.0, &[17])],
        ..clamp_problem()
    };
    let tools = ToolConfig {
        test_cmd: crate::testcmd::TestCommand::parse(
            "sh one_test.sh test_count 'return len(self.items)$'",
        )
        .unwrap(),
        ..ToolConfig::default()
    };
    let model = Counted(std::sync::atomic::AtomicUsize::new(0));
    let cfg = CandidateConfig {
        shapes: vec![InfillShape::Line],
        ..CandidateConfig::default()
    };
    let out = run_with(&model, &sandbox, &problem, &[target], &cfg, &tools).await;
    assert!(out.infrastructure.is_none(), "{:?}", out.infrastructure);
    let c = &out.candidates;
    assert_eq!(c.len(), 1, "{c:?}");
    assert_eq!(c[0].status, Outcome::Passing, "{c:?}");
    assert!(c[0].origin.rule() == Some("missing_name"), "{}", c[0].reply);
    assert!(
        c[0].diff.contains("+        return len(self.items)\n"),
        "{}",
        c[0].diff
    );
    assert_eq!(
        model.0.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no model call"
    );
    let now = std::fs::read_to_string(dir.path().join("pkg/core.py")).unwrap();
    assert_eq!(now, core, "the workspace has its original bytes back");
}

#[tokio::test]
async fn a_rule_candidate_that_fails_leaves_the_fills_to_draw() {
    // The misspelt `max` is not what the test needs: the rule's candidate fails, and the
    // fills go on as before (clamp's line 10 filled with `return hi` passes).
    let dir = tempfile::tempdir().unwrap();
    let core = CORE.replace("return max(v, lo)", "return mx(v, lo)");
    let sandbox = crate::agent::testing::HostDir::with_files(
        dir.path(),
        &[("pkg/core.py", core.as_str()), ("one_test.sh", ONE_TEST)],
    )
    .await
    .unwrap();
    let target = "tests/test_m.py::test_clamp".to_string();
    let problem = Problem {
        targets: vec![target.clone()],
        report: "E   NameError: name 'mx' is not defined\n".into(),
        files: BTreeMap::from([("pkg/core.py".to_string(), core.clone())]),
        ..clamp_problem()
    };
    let tools = ToolConfig {
        test_cmd: crate::testcmd::TestCommand::parse("sh one_test.sh test_clamp 'return hi$'")
            .unwrap(),
        ..ToolConfig::default()
    };
    let model = Counted(std::sync::atomic::AtomicUsize::new(0));
    let cfg = CandidateConfig {
        shapes: vec![InfillShape::Line],
        ..CandidateConfig::default()
    };
    let out = run_with(&model, &sandbox, &problem, &[target], &cfg, &tools).await;
    assert!(out.infrastructure.is_none(), "{:?}", out.infrastructure);
    let c = &out.candidates;
    assert_eq!(c[0].origin.rule(), Some("missing_name"), "{c:?}");
    assert!(
        c[0].diff.contains("+    return max(v, lo)"),
        "{}",
        c[0].diff
    );
    assert_eq!(c[0].status, Outcome::Failing, "{c:?}");
    assert!(c[1..].iter().any(|c| c.status == Outcome::Passing), "{c:?}");
    assert!(model.0.load(std::sync::atomic::Ordering::SeqCst) > 0);
}

fn site_of(shape: InfillShape, line: usize) -> Site {
    Site {
        path: "m.py".into(),
        line,
        end: line,
        shape,
        func: (1, 40),
        score: 1.0,
    }
}

#[test]
fn the_sampled_stage_takes_turns_between_shapes_with_seeds_no_earlier_pass_used() {
    use InfillShape::*;
    // As infill_sites orders them: grouped by shape.
    let sites = vec![
        site_of(Line, 3),
        site_of(Line, 5),
        site_of(Block, 3),
        site_of(Insert, 5),
    ];
    let p0 = sampled_plan(&sites, 0);
    let at: Vec<usize> = p0.iter().map(|d| d.0).step_by(SAMPLES_PER_PASS).collect();
    assert_eq!(
        at,
        [0, 2, 3, 1],
        "best line, best block, best insert, second line"
    );
    assert_eq!(p0.len(), sites.len() * SAMPLES_PER_PASS);
    // Back to back per site, never greedy, never the first stage's resamples (1, 2).
    assert_eq!(&p0[..4], &[(0, 3), (0, 4), (0, 5), (0, 6)]);
    let p1 = sampled_plan(&sites, 1);
    let seeds0: std::collections::BTreeSet<usize> = p0.iter().map(|d| d.1).collect();
    assert!(p1.iter().all(|d| !seeds0.contains(&d.1)), "{p1:?}");
    assert!(p0.iter().all(|d| d.1 > RESAMPLES));
    // Every draw is a sampled one (sampling() makes 0 greedy).
    assert!(p0.iter().all(|d| sampling(d.1, 0.8).temperature > 0.0));
    assert!(sampled_plan(&[], 0).is_empty());
}

#[test]
fn each_stage_fills_its_own_shapes() {
    use InfillShape::*;
    let mut c = CandidateConfig::default();
    assert_eq!(c.stage_shapes(), [Line]);
    c.stage = Stage::Shapes;
    assert_eq!(c.stage_shapes(), [Block, Insert, Body]);
    c.shapes = vec![Line, Block, Insert, Body];
    assert!(
        c.stage_shapes().is_empty(),
        "the first stage filled them all"
    );
    c.stage = Stage::Sampled { pass: 2 };
    assert_eq!(c.stage_shapes(), [Line, Block, Insert]);
}

#[test]
fn the_digest_names_what_was_tried_and_shows_the_closest_diffs() {
    let mut out = CandidatesOutcome::default();
    assert_eq!(out.digest(), "", "nothing drawn, nothing to say");
    let fill = |at: &str, shape: &str| crate::agent::origin::Origin::Fill {
        at: at.into(),
        shape: shape.into(),
        draw: crate::agent::origin::Draw::Greedy,
    };
    let mut a = Candidate::blank(0, 0);
    a.status = Outcome::Failing;
    a.origin = fill("m.py:3", "line");
    a.diff = "--- a/m.py\n+++ b/m.py\n-x = 1\n+x = 2\n".into();
    let mut b = Candidate::blank(1, 0);
    b.status = Outcome::Partial;
    b.origin = fill("m.py:3", "block");
    b.fixed = vec!["t::a".into()];
    b.diff = "--- a/m.py\n+++ b/m.py\n-y = 1\n+y = 0\n".into();
    let mut c = Candidate::blank(2, 0);
    c.status = Outcome::NotApplied;
    c.origin = fill("m.py:9", "line");
    out.candidates = vec![a, b, c];
    let d = out.digest();
    assert!(d.contains("tried 3 candidate edits"), "{d}");
    assert!(d.contains("1 failing") && d.contains("1 partial"), "{d}");
    assert!(d.contains("2 line") && d.contains("1 block"), "{d}");
    assert!(d.contains("m.py:3 ×2"), "{d}");
    // The partial one first, then the failing one.
    let (p, f) = (d.find("+y = 0").unwrap(), d.find("+x = 2").unwrap());
    assert!(p < f, "{d}");
    assert!(d.contains("fixes 1 of the failing tests"), "{d}");
}
