//! Pins the whole sequence of a round's draws — which candidates, in which order, with which
//! requests (prompt text, sampling, stops, token caps), charges and stop — for the default
//! config and for every shape, the chat formats, rules, a refused fill, a cost cap and a
//! second round: a refactor of the drawing must leave these transcripts as they are.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;

use super::*;
use crate::agent::attempt::{Ledger, Metered};
use crate::agent::context::{Context, Focus, Location};
use crate::agent::localize::Ranked;
use crate::agent::model::{
    Alternative, AssistantMessage, FinishReason, Infill, Model, ModelError, Request, Response,
    Usage,
};
use crate::agent::tools::ToolConfig;
use crate::agent::trajectory::Trajectory;
use crate::config::Budgets;
use crate::config::repair::InfillShape;

const CORE: &str = "import math\n\n\ndef clamp(v, lo, hi):\n    \"\"\"Clamp v.\n\n    Long doc.\n    \"\"\"\n    if v > hi:\n        return lo\n    return max(v, lo)\n\n\nclass Cart:\n    @property\n    def count(self):\n        return len(self.items) - 1\n";

/// test_a passes when core.py matches `$1`, test_b when it matches `$1` and `$2` (extended
/// regexes; `-`: there is no test_b); test_other always. Pytest-style JUnit.
const TESTS: &str = r#"pa="$1"; pb="$2"; shift 2
for a in "$@" $PYTEST_ADDOPTS; do case "$a" in --junitxml=*) x="${a#--junitxml=}";; esac; done
tc() { if [ "$2" = 0 ]; then echo "<testcase classname=\"tests.test_m\" name=\"$1\"/>"; else echo "<testcase classname=\"tests.test_m\" name=\"$1\"><failure message=\"no\"/></testcase>"; fi; }
grep -Eq "$pa" pkg/core.py; a=$?
grep -Eq "$pb" pkg/core.py; b=$?
ab=1; [ $a = 0 ] && [ $b = 0 ] && ab=0
{ echo '<testsuites><testsuite name="pytest" tests="3">'
  tc test_a $a
  [ "$pb" = - ] || tc test_b $ab
  tc test_other 0
  echo '</testsuite></testsuites>'; } > "$x"
"#;

/// What a request without sampling is written down as.
const GREEDY: crate::agent::model::Sampling = crate::agent::model::Sampling {
    temperature: -1.0,
    seed: 0,
};

/// FNV-1a: a stable fingerprint of a prompt's text.
fn fnv(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf29ce484222325;
    for p in parts {
        for b in p.bytes().chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    format!("{:08x}", h >> 32)
}

/// A model on this machine (checks never overlap its calls: the order is deterministic) whose
/// every answer is a function of the request; it writes every request down.
#[derive(Default)]
struct Scripted {
    asked: Mutex<Vec<String>>,
    refuses_fills: bool,
    price: f64,
}

impl Scripted {
    fn fill(req: &Infill<'_>) -> (String, Vec<Alternative>) {
        let line = code_line(req.prefix);
        let greedy = req.sample.is_none_or(|s| s.temperature == 0.0);
        let seed = req.sample.map_or(0, |s| s.seed);
        let alt = |before: &str, token: &str| Alternative {
            before: before.into(),
            token: token.into(),
            logprob: -1.0,
        };
        let text = match (req.stop, req.middle, greedy) {
            (["\n"], "", true) => match line {
                9 => "    if v < lo:".to_string(),
                10 => {
                    return (
                        "        return lo".into(),
                        vec![alt("        return", "  lo"), alt("        return", " hi")],
                    );
                }
                11 => "    return max(v, lo)".into(),
                17 => "        return len(self.items)".into(),
                _ => "    pass".into(),
            },
            (["\n"], "", false) => {
                let indent = if matches!(line, 10 | 17) { 8 } else { 4 };
                format!("{}v = {seed}", " ".repeat(indent))
            }
            (["\n"], middle, _) => match middle {
                "    if v >" => " lo:",
                "    if v > hi" => " or v < lo:",
                "        return len(self.items) -" => " 2",
                _ => "",
            }
            .into(),
            (["\n\n"], _, true) => "    v = min(v, hi)\n".into(),
            (["\n\n"], _, false) => format!("    v = {seed}\n"),
            (_, _, true) => "    if v > hi:\n        return hi\n    return max(v, lo)\n".into(),
            (_, _, false) => format!("    return {seed}\n"),
        };
        (text, Vec::new())
    }

    fn chat(req: &Request<'_>) -> String {
        match req.sample.map_or(0, |s| s.seed) {
            1 | 3 => "LINE 10:         return hi".into(),
            2 => "no idea".into(),
            4 => "LINE 9:     if v < hi:".into(),
            s => format!("LINE 11:     return min(v, {s})"),
        }
    }
}

#[async_trait::async_trait]
impl Model for Scripted {
    async fn complete(&self, req: &Request<'_>) -> Result<Response, ModelError> {
        let s = req.sample.unwrap_or(GREEDY);
        let texts: Vec<String> = req
            .messages
            .iter()
            .map(|m| serde_json::to_string(m).unwrap())
            .collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        self.asked.lock().unwrap().push(format!(
            "chat t={} seed={} messages={} h={}",
            s.temperature,
            s.seed,
            texts.len(),
            fnv(&texts)
        ));
        Ok(Response {
            message: AssistantMessage {
                content: Self::chat(req),
                tool_calls: Vec::new(),
                raw: None,
            },
            usage: Usage {
                prompt_tokens: 100,
                completion_tokens: 10,
            },
            finish: FinishReason::Stop,
            bytes_sent: 0,
        })
    }
    fn spec(&self) -> String {
        "test:scripted".into()
    }
    fn describe(&self) -> String {
        self.spec()
    }
    fn cost(&self, usage: &Usage) -> f64 {
        if usage.total() > 0 { self.price } else { 0.0 }
    }
    fn on_this_machine(&self) -> bool {
        true
    }
    fn supports_infill(&self) -> bool {
        true
    }
    async fn infill(&self, req: &Infill<'_>) -> Result<crate::agent::model::Filled, ModelError> {
        let s = req.sample.unwrap_or(GREEDY);
        self.asked.lock().unwrap().push(format!(
            "fill at={} middle={:?} t={} seed={} alternatives={} max={} stop={:?} h={}",
            code_line(req.prefix),
            req.middle,
            s.temperature,
            s.seed,
            req.alternatives,
            req.max_tokens,
            req.stop,
            fnv(&[req.prefix, req.suffix])
        ));
        if self.refuses_fills {
            return Err(ModelError::Rejected {
                status: 400,
                body: "model does not support insert".into(),
            });
        }
        let (text, alternatives) = Self::fill(req);
        Ok(crate::agent::model::Filled {
            text,
            usage: Usage {
                prompt_tokens: 50,
                completion_tokens: 5,
            },
            timings: None,
            alternatives,
        })
    }
}

/// The file line a fill's gap is at: the prefix's lines past the failure hint that opens it
/// (comment lines above the file's own first line; CORE starts with an import).
fn code_line(prefix: &str) -> usize {
    prefix.lines().skip_while(|l| l.starts_with('#')).count() + 1
}

/// One run to pin: the problem's source and report, the targets, the tests' patterns, the
/// knobs, the model's tier and the cost cap.
struct Case {
    core: String,
    report: &'static str,
    targets: &'static [&'static str],
    patterns: (&'static str, &'static str),
    cfg: CandidateConfig,
    tier: usize,
    cap: f64,
    model: Scripted,
}

impl Default for Case {
    fn default() -> Self {
        Case {
            core: CORE.into(),
            report: "",
            targets: &["test_a"],
            patterns: ("NEVER", "-"),
            cfg: CandidateConfig::default(),
            tier: 0,
            cap: 0.0,
            model: Scripted::default(),
        }
    }
}

fn id(test: &str) -> String {
    format!("tests/test_m.py::{test}")
}

/// The transcript of one run: the model's requests, the trajectory's prompt and round
/// events, every candidate (index, origin, status, reply, detail, diff size, tokens), the
/// note, the cap and the spend.
async fn transcript(case: Case) -> String {
    let dir = tempfile::tempdir().unwrap();
    let sandbox = crate::agent::testing::HostDir::with_files(
        dir.path(),
        &[("pkg/core.py", case.core.as_str()), ("t.sh", TESTS)],
    )
    .await
    .unwrap();
    let loc = |name: &str, start: usize, end: usize| Location {
        path: "pkg/core.py".into(),
        start,
        end,
        name: name.into(),
        frame_line: None,
    };
    let targets: Vec<String> = case.targets.iter().map(|t| id(t)).collect();
    let problem = Problem {
        targets: targets.clone(),
        report: case.report.into(),
        files: BTreeMap::from([("pkg/core.py".to_string(), case.core.clone())]),
        context: Context {
            focus: Focus {
                code: vec![loc("clamp", 4, 11), loc("Cart.count", 15, 17)],
                ..Default::default()
            },
            ..Default::default()
        },
        ranked: vec![
            Ranked {
                loc: loc("clamp", 4, 11),
                lines: vec![(9, 0.9), (10, 1.0), (11, 0.5)],
            },
            Ranked {
                loc: loc("Cart.count", 15, 17),
                lines: vec![(17, 0.8)],
            },
        ],
        ..Default::default()
    };
    let tools = ToolConfig {
        test_cmd: crate::testcmd::TestCommand::parse(&format!(
            "sh t.sh '{}' '{}'",
            case.patterns.0, case.patterns.1
        ))
        .unwrap(),
        ..ToolConfig::default()
    };
    let baseline = targets.clone();
    let ledger = Ledger::new(Budgets {
        max_cost_usd: case.cap,
        ..Budgets::default()
    });
    let traj_dir = tempfile::tempdir().unwrap();
    let traj_path = traj_dir.path().join("t.jsonl");
    let mut traj = Trajectory::create(&traj_path).unwrap();
    let out = run(
        Run {
            model: &Metered::new(&case.model, &ledger, case.tier),
            sandbox: &sandbox,
            problem: &problem,
            baseline_failing: &baseline,
            config: &case.cfg,
            tools: &tools,
            attempt: "t0.candidates",
        },
        &mut traj,
    )
    .await;
    drop(traj);
    let mut t = String::new();
    for a in case.model.asked.lock().unwrap().iter() {
        writeln!(t, "ask {a}").unwrap();
    }
    for line in std::fs::read_to_string(&traj_path).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        match v["kind"].as_str() {
            Some("candidates_prompt") => writeln!(
                t,
                "prompt format={} fallback={} overlap={} h={}",
                v["format"],
                v["fallback"],
                v["overlap_checks"],
                fnv(&[v["prompt"].as_str().unwrap_or("")])
            )
            .unwrap(),
            Some("candidates_round") => writeln!(
                t,
                "round {} kept={} targets={}",
                v["round"], v["kept"], v["targets"]
            )
            .unwrap(),
            Some("node") => writeln!(t, "node {} {} {}", v["id"], v["status"], v["model"]).unwrap(),
            _ => {}
        }
    }
    for c in &out.candidates {
        writeln!(
            t,
            "c{} {} {} | {:?} | {:?} | diff {} tokens {} fixed {:?}",
            c.index,
            c.origin.label(),
            c.status.as_str(),
            c.reply,
            c.detail,
            c.diff_size(),
            c.usage.total(),
            c.fixed
        )
        .unwrap();
    }
    let spend = ledger.report(ledger.check());
    writeln!(
        t,
        "note {:?} budget {:?} infrastructure {:?} spend calls={} tokens={} cost={:.2}",
        out.note, out.budget, out.infrastructure, spend.calls, spend.tokens, spend.cost_usd
    )
    .unwrap();
    let now = std::fs::read_to_string(dir.path().join("pkg/core.py")).unwrap();
    assert_eq!(now, case.core, "the workspace has its original bytes back");
    t
}

/// The transcript, checked against the golden `want` line by line (a mismatch prints the
/// whole run; with `PIN_DUMP=dir` it is also written there, by the golden's name).
macro_rules! pin {
    ($got:expr, $want:ident) => {
        check(&$got, $want, stringify!($want))
    };
}

/// See [`pin`].
fn check(got: &str, want: &str, name: &str) {
    let g: Vec<&str> = got.lines().collect();
    let w: Vec<&str> = want.trim().lines().map(str::trim_start).collect();
    if let Ok(dir) = std::env::var("PIN_DUMP") {
        std::fs::write(format!("{dir}/{}.txt", fnv(&[name])), got).unwrap();
    }
    assert!(g == w, "the transcript changed; now:\n{got}");
}

#[tokio::test]
async fn the_default_config_draws_in_this_order() {
    let got = transcript(Case::default()).await;
    pin!(got, DEFAULT);
}

#[tokio::test]
async fn the_default_config_stops_a_few_draws_after_a_clean_pass() {
    let got = transcript(Case {
        patterns: ("v < hi:", "-"),
        ..Case::default()
    })
    .await;
    pin!(got, DEFAULT_PASSING);
}

#[tokio::test]
async fn every_shape_draws_in_this_order() {
    let got = transcript(Case {
        cfg: CandidateConfig {
            shapes: vec![
                InfillShape::Line,
                InfillShape::Block,
                InfillShape::Insert,
                InfillShape::Body,
            ],
            ..CandidateConfig::default()
        },
        ..Case::default()
    })
    .await;
    pin!(got, ALL_SHAPES);
}

#[tokio::test]
async fn the_shapes_in_another_order_draw_in_that_order() {
    let got = transcript(Case {
        cfg: CandidateConfig {
            shapes: vec![InfillShape::Body, InfillShape::Insert, InfillShape::Line],
            count: 2,
            ..CandidateConfig::default()
        },
        patterns: ("v < hi:|return 2$", "-"),
        ..Case::default()
    })
    .await;
    pin!(got, OTHER_ORDER);
}

#[tokio::test]
async fn a_chat_format_draws_in_this_order() {
    let got = transcript(Case {
        cfg: CandidateConfig {
            format: EditFormat::Lines,
            count: 2,
            ..CandidateConfig::default()
        },
        ..Case::default()
    })
    .await;
    pin!(got, CHAT);
}

#[tokio::test]
async fn a_refused_fill_draws_the_chat_prompt_in_this_order() {
    let got = transcript(Case {
        model: Scripted {
            refuses_fills: true,
            ..Scripted::default()
        },
        ..Case::default()
    })
    .await;
    pin!(got, REFUSED);
}

/// clamp's `max` misspelt, and the report's NameError naming it: a rule's candidate.
fn misspelt() -> Case {
    Case {
        core: CORE.replace("return max(v, lo)", "return mx(v, lo)"),
        report: "E   NameError: name 'mx' is not defined\n",
        ..Case::default()
    }
}

#[tokio::test]
async fn rules_come_first_on_the_first_tier_and_a_clean_pass_ends_the_round() {
    let got = transcript(Case {
        patterns: ("return max\\(v, lo\\)", "-"),
        ..misspelt()
    })
    .await;
    pin!(got, RULE_PASSES);
    let got = transcript(misspelt()).await;
    pin!(got, RULE_FAILS);
    let got = transcript(Case {
        tier: 1,
        cfg: CandidateConfig {
            count: 1,
            ..CandidateConfig::default()
        },
        patterns: ("return max\\(v, lo\\)|v < hi:", "-"),
        ..misspelt()
    })
    .await;
    pin!(got, RULE_ESCALATED);
}

#[tokio::test]
async fn the_cost_cap_stops_the_fills_in_this_order() {
    let got = transcript(Case {
        model: Scripted {
            price: 0.01,
            ..Scripted::default()
        },
        cap: 0.045,
        ..Case::default()
    })
    .await;
    pin!(got, CAPPED);
}

#[tokio::test]
async fn a_second_round_draws_on_top_of_the_first_in_this_order() {
    let got = transcript(Case {
        targets: &["test_a", "test_b"],
        patterns: ("v < hi:", "[-] 2$"),
        ..Case::default()
    })
    .await;
    pin!(got, ROUNDS);
}

#[tokio::test]
async fn two_slots_draw_in_this_order() {
    let got = transcript(Case {
        cfg: CandidateConfig {
            parallel: 2,
            ..CandidateConfig::default()
        },
        ..Case::default()
    })
    .await;
    pin!(got, TWO_SLOTS);
}

const DEFAULT: &str = r#"
    ask fill at=10 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=10 middle="        return hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=9 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=4519d0dc
    ask fill at=9 middle="    if v >" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=9 middle="    if v > hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=17 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=17 middle="        return len(self.items) -" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=11 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=0d40ac61
    ask fill at=11 middle="" t=0.8 seed=4 alternatives=0 max=80 stop=["\n"] h=0d40ac61
    ask fill at=10 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=10 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=9 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=9 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=17 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=17 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=11 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=0d40ac61
    ask fill at=11 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=0d40ac61
    prompt format="infill" fallback=null overlap=false h=bbecfdbf
    node "t0.candidates.c0" "not_applied" "test:scripted"
    node "t0.candidates.c1" "failing" "test:scripted"
    node "t0.candidates.c2" "failing" "test:scripted"
    node "t0.candidates.c3" "failing" "test:scripted"
    node "t0.candidates.c4" "failing" "test:scripted"
    node "t0.candidates.c5" "failing" "test:scripted"
    node "t0.candidates.c6" "failing" "test:scripted"
    node "t0.candidates.c7" "failing" "test:scripted"
    node "t0.candidates.c8" "not_applied" "test:scripted"
    node "t0.candidates.c9" "failing" "test:scripted"
    node "t0.candidates.c10" "failing" "test:scripted"
    node "t0.candidates.c11" "failing" "test:scripted"
    node "t0.candidates.c12" "failing" "test:scripted"
    node "t0.candidates.c13" "failing" "test:scripted"
    node "t0.candidates.c14" "failing" "test:scripted"
    node "t0.candidates.c15" "failing" "test:scripted"
    node "t0.candidates.c16" "failing" "test:scripted"
    node "t0.candidates.c17" "failing" "test:scripted"
    c0 fill line greedy not_applied | "pkg/core.py:10 ←         return lo" | "pkg/core.py:10 filled in as it is" | diff 0 tokens 55 fixed []
    c1 fill line runner_up failing | "pkg/core.py:10 (runner-up) ←         return hi" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c2 fill line greedy failing | "pkg/core.py:9 ←     if v < lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c3 fill line spliced failing | "pkg/core.py:9 (spliced) ←     if v < hi:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 0 fixed []
    c4 fill line continued failing | "pkg/core.py:9 (continued) ←     if v > lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c5 fill line continued failing | "pkg/core.py:9 (continued) ←     if v > hi or v < lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c6 fill line greedy failing | "pkg/core.py:17 ←         return len(self.items)" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c7 fill line continued failing | "pkg/core.py:17 (continued) ←         return len(self.items) - 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c8 fill line greedy not_applied | "pkg/core.py:11 ←     return max(v, lo)" | "pkg/core.py:11 filled in as it is" | diff 0 tokens 55 fixed []
    c9 fill line sampled failing | "pkg/core.py:11 ←     v = 4" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c10 fill line sampled failing | "pkg/core.py:10 ←         v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c11 fill line sampled failing | "pkg/core.py:10 ←         v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c12 fill line sampled failing | "pkg/core.py:9 ←     v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c13 fill line sampled failing | "pkg/core.py:9 ←     v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c14 fill line sampled failing | "pkg/core.py:17 ←         v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c15 fill line sampled failing | "pkg/core.py:17 ←         v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c16 fill line sampled failing | "pkg/core.py:11 ←     v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c17 fill line sampled failing | "pkg/core.py:11 ←     v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    note None budget None infrastructure None spend calls=17 tokens=935 cost=0.00
"#;
const DEFAULT_PASSING: &str = r#"
    ask fill at=10 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=10 middle="        return hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=9 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=4519d0dc
    ask fill at=9 middle="    if v >" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=9 middle="    if v > hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=17 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=17 middle="        return len(self.items) -" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=c9ee4d66
    prompt format="infill" fallback=null overlap=false h=bbecfdbf
    node "t0.candidates.c0" "not_applied" "test:scripted"
    node "t0.candidates.c1" "failing" "test:scripted"
    node "t0.candidates.c2" "failing" "test:scripted"
    node "t0.candidates.c3" "passing" "test:scripted"
    node "t0.candidates.c4" "failing" "test:scripted"
    node "t0.candidates.c5" "failing" "test:scripted"
    node "t0.candidates.c6" "failing" "test:scripted"
    node "t0.candidates.c7" "failing" "test:scripted"
    c0 fill line greedy not_applied | "pkg/core.py:10 ←         return lo" | "pkg/core.py:10 filled in as it is" | diff 0 tokens 55 fixed []
    c1 fill line runner_up failing | "pkg/core.py:10 (runner-up) ←         return hi" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c2 fill line greedy failing | "pkg/core.py:9 ←     if v < lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c3 fill line spliced passing | "pkg/core.py:9 (spliced) ←     if v < hi:" | "2 passed" | diff 2 tokens 0 fixed []
    c4 fill line continued failing | "pkg/core.py:9 (continued) ←     if v > lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c5 fill line continued failing | "pkg/core.py:9 (continued) ←     if v > hi or v < lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c6 fill line greedy failing | "pkg/core.py:17 ←         return len(self.items)" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c7 fill line continued failing | "pkg/core.py:17 (continued) ←         return len(self.items) - 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    note None budget None infrastructure None spend calls=7 tokens=385 cost=0.00
"#;
const ALL_SHAPES: &str = r#"
    ask fill at=10 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=10 middle="        return hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=9 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=4519d0dc
    ask fill at=9 middle="    if v >" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=9 middle="    if v > hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=17 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=17 middle="        return len(self.items) -" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=11 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=0d40ac61
    ask fill at=11 middle="" t=0.8 seed=4 alternatives=0 max=80 stop=["\n"] h=0d40ac61
    ask fill at=10 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=10 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=9 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=9 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=17 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=17 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=11 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=0d40ac61
    ask fill at=11 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=0d40ac61
    ask fill at=9 middle="" t=0 seed=1 alternatives=5 max=120 stop=["\ndef ", "\nclass ", "\n@", "\nasync def "] h=f8721afa
    ask fill at=9 middle="" t=0.8 seed=2 alternatives=0 max=120 stop=["\ndef ", "\nclass ", "\n@", "\nasync def "] h=f8721afa
    ask fill at=9 middle="" t=0.8 seed=3 alternatives=0 max=120 stop=["\ndef ", "\nclass ", "\n@", "\nasync def "] h=f8721afa
    ask fill at=10 middle="" t=0 seed=1 alternatives=5 max=120 stop=["\n\n"] h=15ccf823
    ask fill at=10 middle="" t=0.8 seed=4 alternatives=0 max=120 stop=["\n\n"] h=15ccf823
    ask fill at=9 middle="" t=0 seed=1 alternatives=5 max=120 stop=["\n\n"] h=fa3e73c9
    ask fill at=17 middle="" t=0 seed=1 alternatives=5 max=120 stop=["\n\n"] h=04caee60
    ask fill at=17 middle="" t=0.8 seed=4 alternatives=0 max=120 stop=["\n\n"] h=04caee60
    ask fill at=11 middle="" t=0 seed=1 alternatives=5 max=120 stop=["\n\n"] h=fecec3ad
    ask fill at=10 middle="" t=0.8 seed=2 alternatives=0 max=120 stop=["\n\n"] h=15ccf823
    ask fill at=10 middle="" t=0.8 seed=3 alternatives=0 max=120 stop=["\n\n"] h=15ccf823
    ask fill at=9 middle="" t=0.8 seed=2 alternatives=0 max=120 stop=["\n\n"] h=fa3e73c9
    ask fill at=9 middle="" t=0.8 seed=3 alternatives=0 max=120 stop=["\n\n"] h=fa3e73c9
    ask fill at=17 middle="" t=0.8 seed=2 alternatives=0 max=120 stop=["\n\n"] h=04caee60
    ask fill at=17 middle="" t=0.8 seed=3 alternatives=0 max=120 stop=["\n\n"] h=04caee60
    ask fill at=11 middle="" t=0.8 seed=2 alternatives=0 max=120 stop=["\n\n"] h=fecec3ad
    ask fill at=11 middle="" t=0.8 seed=3 alternatives=0 max=120 stop=["\n\n"] h=fecec3ad
    ask fill at=17 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n    def ", "\n    @", "\ndef ", "\nclass "] h=c9ee4d66
    ask fill at=17 middle="" t=0.8 seed=4 alternatives=0 max=80 stop=["\n    def ", "\n    @", "\ndef ", "\nclass "] h=c9ee4d66
    ask fill at=17 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n    def ", "\n    @", "\ndef ", "\nclass "] h=c9ee4d66
    ask fill at=17 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n    def ", "\n    @", "\ndef ", "\nclass "] h=c9ee4d66
    prompt format="infill" fallback=null overlap=false h=d3fafe80
    node "t0.candidates.c0" "not_applied" "test:scripted"
    node "t0.candidates.c1" "failing" "test:scripted"
    node "t0.candidates.c2" "failing" "test:scripted"
    node "t0.candidates.c3" "failing" "test:scripted"
    node "t0.candidates.c4" "failing" "test:scripted"
    node "t0.candidates.c5" "failing" "test:scripted"
    node "t0.candidates.c6" "failing" "test:scripted"
    node "t0.candidates.c7" "failing" "test:scripted"
    node "t0.candidates.c8" "not_applied" "test:scripted"
    node "t0.candidates.c9" "failing" "test:scripted"
    node "t0.candidates.c10" "failing" "test:scripted"
    node "t0.candidates.c11" "failing" "test:scripted"
    node "t0.candidates.c12" "failing" "test:scripted"
    node "t0.candidates.c13" "failing" "test:scripted"
    node "t0.candidates.c14" "failing" "test:scripted"
    node "t0.candidates.c15" "failing" "test:scripted"
    node "t0.candidates.c16" "failing" "test:scripted"
    node "t0.candidates.c17" "failing" "test:scripted"
    node "t0.candidates.c18" "duplicate" "test:scripted"
    node "t0.candidates.c19" "failing" "test:scripted"
    node "t0.candidates.c20" "failing" "test:scripted"
    node "t0.candidates.c21" "unparsed" "test:scripted"
    node "t0.candidates.c22" "unparsed" "test:scripted"
    node "t0.candidates.c23" "failing" "test:scripted"
    node "t0.candidates.c24" "unparsed" "test:scripted"
    node "t0.candidates.c25" "unparsed" "test:scripted"
    node "t0.candidates.c26" "failing" "test:scripted"
    node "t0.candidates.c27" "unparsed" "test:scripted"
    node "t0.candidates.c28" "unparsed" "test:scripted"
    node "t0.candidates.c29" "failing" "test:scripted"
    node "t0.candidates.c30" "failing" "test:scripted"
    node "t0.candidates.c31" "unparsed" "test:scripted"
    node "t0.candidates.c32" "unparsed" "test:scripted"
    node "t0.candidates.c33" "failing" "test:scripted"
    node "t0.candidates.c34" "failing" "test:scripted"
    node "t0.candidates.c35" "duplicate" "test:scripted"
    node "t0.candidates.c36" "unparsed" "test:scripted"
    node "t0.candidates.c37" "unparsed" "test:scripted"
    node "t0.candidates.c38" "duplicate" "test:scripted"
    node "t0.candidates.c39" "duplicate" "test:scripted"
    node "t0.candidates.c40" "unparsed" "test:scripted"
    node "t0.candidates.c41" "unparsed" "test:scripted"
    c0 fill line greedy not_applied | "pkg/core.py:10 ←         return lo" | "pkg/core.py:10 filled in as it is" | diff 0 tokens 55 fixed []
    c1 fill line runner_up failing | "pkg/core.py:10 (runner-up) ←         return hi" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c2 fill line greedy failing | "pkg/core.py:9 ←     if v < lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c3 fill line spliced failing | "pkg/core.py:9 (spliced) ←     if v < hi:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 0 fixed []
    c4 fill line continued failing | "pkg/core.py:9 (continued) ←     if v > lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c5 fill line continued failing | "pkg/core.py:9 (continued) ←     if v > hi or v < lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c6 fill line greedy failing | "pkg/core.py:17 ←         return len(self.items)" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c7 fill line continued failing | "pkg/core.py:17 (continued) ←         return len(self.items) - 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c8 fill line greedy not_applied | "pkg/core.py:11 ←     return max(v, lo)" | "pkg/core.py:11 filled in as it is" | diff 0 tokens 55 fixed []
    c9 fill line sampled failing | "pkg/core.py:11 ←     v = 4" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c10 fill line sampled failing | "pkg/core.py:10 ←         v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c11 fill line sampled failing | "pkg/core.py:10 ←         v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c12 fill line sampled failing | "pkg/core.py:9 ←     v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c13 fill line sampled failing | "pkg/core.py:9 ←     v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c14 fill line sampled failing | "pkg/core.py:17 ←         v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c15 fill line sampled failing | "pkg/core.py:17 ←         v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c16 fill line sampled failing | "pkg/core.py:11 ←     v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c17 fill line sampled failing | "pkg/core.py:11 ←     v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c18 fill block greedy duplicate | "pkg/core.py:9-11 (block) ←     if v > hi:\n        return hi\n    return max(v, lo)\n" | "the same edit as an earlier candidate" | diff 0 tokens 55 fixed []
    c19 fill block sampled failing | "pkg/core.py:9-11 (block) ←     return 2\n" | "still failing: tests/test_m.py::test_a" | diff 4 tokens 55 fixed []
    c20 fill block sampled failing | "pkg/core.py:9-11 (block) ←     return 3\n" | "still failing: tests/test_m.py::test_a" | diff 4 tokens 55 fixed []
    c21 fill insert greedy unparsed | "pkg/core.py:10 (insert) ←     v = min(v, hi)\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c22 fill insert sampled unparsed | "pkg/core.py:10 (insert) ←     v = 4\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c23 fill insert greedy failing | "pkg/core.py:9 (insert) ←     v = min(v, hi)\n" | "still failing: tests/test_m.py::test_a" | diff 1 tokens 55 fixed []
    c24 fill insert greedy unparsed | "pkg/core.py:17 (insert) ←     v = min(v, hi)\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c25 fill insert sampled unparsed | "pkg/core.py:17 (insert) ←     v = 4\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c26 fill insert greedy failing | "pkg/core.py:11 (insert) ←     v = min(v, hi)\n" | "still failing: tests/test_m.py::test_a" | diff 1 tokens 55 fixed []
    c27 fill insert sampled unparsed | "pkg/core.py:10 (insert) ←     v = 2\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c28 fill insert sampled unparsed | "pkg/core.py:10 (insert) ←     v = 3\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c29 fill insert sampled failing | "pkg/core.py:9 (insert) ←     v = 2\n" | "still failing: tests/test_m.py::test_a" | diff 1 tokens 55 fixed []
    c30 fill insert sampled failing | "pkg/core.py:9 (insert) ←     v = 3\n" | "still failing: tests/test_m.py::test_a" | diff 1 tokens 55 fixed []
    c31 fill insert sampled unparsed | "pkg/core.py:17 (insert) ←     v = 2\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c32 fill insert sampled unparsed | "pkg/core.py:17 (insert) ←     v = 3\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c33 fill insert sampled failing | "pkg/core.py:11 (insert) ←     v = 2\n" | "still failing: tests/test_m.py::test_a" | diff 1 tokens 55 fixed []
    c34 fill insert sampled failing | "pkg/core.py:11 (insert) ←     v = 3\n" | "still failing: tests/test_m.py::test_a" | diff 1 tokens 55 fixed []
    c35 fill body reused duplicate | "pkg/core.py:9-11 (body) (reused) ←     if v > hi:\n        return hi\n    return max(v, lo)\n" | "the same edit as an earlier candidate" | diff 0 tokens 0 fixed []
    c36 fill body greedy unparsed | "pkg/core.py:17-17 (body) ←     if v > hi:\n        return hi\n    return max(v, lo)\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c37 fill body sampled unparsed | "pkg/core.py:17-17 (body) ←     return 4\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c38 fill body reused duplicate | "pkg/core.py:9-11 (body) (reused) ←     return 2\n" | "the same edit as an earlier candidate" | diff 0 tokens 0 fixed []
    c39 fill body reused duplicate | "pkg/core.py:9-11 (body) (reused) ←     return 3\n" | "the same edit as an earlier candidate" | diff 0 tokens 0 fixed []
    c40 fill body sampled unparsed | "pkg/core.py:17-17 (body) ←     return 2\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c41 fill body sampled unparsed | "pkg/core.py:17-17 (body) ←     return 3\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    note None budget None infrastructure None spend calls=38 tokens=2090 cost=0.00
"#;
const OTHER_ORDER: &str = r#"
    ask fill at=9 middle="" t=0 seed=1 alternatives=5 max=120 stop=["\ndef ", "\nclass ", "\n@", "\nasync def "] h=f8721afa
    ask fill at=17 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n    def ", "\n    @", "\ndef ", "\nclass "] h=c9ee4d66
    ask fill at=17 middle="" t=0.8 seed=4 alternatives=0 max=80 stop=["\n    def ", "\n    @", "\ndef ", "\nclass "] h=c9ee4d66
    ask fill at=9 middle="" t=0.8 seed=2 alternatives=0 max=120 stop=["\ndef ", "\nclass ", "\n@", "\nasync def "] h=f8721afa
    ask fill at=9 middle="" t=0.8 seed=3 alternatives=0 max=120 stop=["\ndef ", "\nclass ", "\n@", "\nasync def "] h=f8721afa
    ask fill at=17 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n    def ", "\n    @", "\ndef ", "\nclass "] h=c9ee4d66
    ask fill at=17 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n    def ", "\n    @", "\ndef ", "\nclass "] h=c9ee4d66
    ask fill at=10 middle="" t=0 seed=1 alternatives=5 max=120 stop=["\n\n"] h=15ccf823
    ask fill at=10 middle="" t=0.8 seed=4 alternatives=0 max=120 stop=["\n\n"] h=15ccf823
    ask fill at=9 middle="" t=0 seed=1 alternatives=5 max=120 stop=["\n\n"] h=fa3e73c9
    ask fill at=17 middle="" t=0 seed=1 alternatives=5 max=120 stop=["\n\n"] h=04caee60
    ask fill at=17 middle="" t=0.8 seed=4 alternatives=0 max=120 stop=["\n\n"] h=04caee60
    ask fill at=11 middle="" t=0 seed=1 alternatives=5 max=120 stop=["\n\n"] h=fecec3ad
    ask fill at=10 middle="" t=0.8 seed=2 alternatives=0 max=120 stop=["\n\n"] h=15ccf823
    ask fill at=10 middle="" t=0.8 seed=3 alternatives=0 max=120 stop=["\n\n"] h=15ccf823
    ask fill at=9 middle="" t=0.8 seed=2 alternatives=0 max=120 stop=["\n\n"] h=fa3e73c9
    ask fill at=9 middle="" t=0.8 seed=3 alternatives=0 max=120 stop=["\n\n"] h=fa3e73c9
    ask fill at=17 middle="" t=0.8 seed=2 alternatives=0 max=120 stop=["\n\n"] h=04caee60
    ask fill at=17 middle="" t=0.8 seed=3 alternatives=0 max=120 stop=["\n\n"] h=04caee60
    ask fill at=11 middle="" t=0.8 seed=2 alternatives=0 max=120 stop=["\n\n"] h=fecec3ad
    ask fill at=11 middle="" t=0.8 seed=3 alternatives=0 max=120 stop=["\n\n"] h=fecec3ad
    ask fill at=10 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=10 middle="        return hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=9 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=4519d0dc
    prompt format="infill" fallback=null overlap=false h=fafcad20
    node "t0.candidates.c0" "failing" "test:scripted"
    node "t0.candidates.c1" "unparsed" "test:scripted"
    node "t0.candidates.c2" "unparsed" "test:scripted"
    node "t0.candidates.c3" "passing" "test:scripted"
    node "t0.candidates.c4" "failing" "test:scripted"
    node "t0.candidates.c5" "unparsed" "test:scripted"
    node "t0.candidates.c6" "unparsed" "test:scripted"
    node "t0.candidates.c7" "unparsed" "test:scripted"
    node "t0.candidates.c8" "unparsed" "test:scripted"
    node "t0.candidates.c9" "failing" "test:scripted"
    node "t0.candidates.c10" "unparsed" "test:scripted"
    node "t0.candidates.c11" "unparsed" "test:scripted"
    node "t0.candidates.c12" "failing" "test:scripted"
    node "t0.candidates.c13" "unparsed" "test:scripted"
    node "t0.candidates.c14" "unparsed" "test:scripted"
    node "t0.candidates.c15" "failing" "test:scripted"
    node "t0.candidates.c16" "failing" "test:scripted"
    node "t0.candidates.c17" "unparsed" "test:scripted"
    node "t0.candidates.c18" "unparsed" "test:scripted"
    node "t0.candidates.c19" "failing" "test:scripted"
    node "t0.candidates.c20" "failing" "test:scripted"
    node "t0.candidates.c21" "not_applied" "test:scripted"
    node "t0.candidates.c22" "duplicate" "test:scripted"
    node "t0.candidates.c23" "failing" "test:scripted"
    node "t0.candidates.c24" "passing" "test:scripted"
    c0 fill body greedy failing | "pkg/core.py:9-11 (body) ←     if v > hi:\n        return hi\n    return max(v, lo)\n" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c1 fill body greedy unparsed | "pkg/core.py:17-17 (body) ←     if v > hi:\n        return hi\n    return max(v, lo)\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c2 fill body sampled unparsed | "pkg/core.py:17-17 (body) ←     return 4\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c3 fill body sampled passing | "pkg/core.py:9-11 (body) ←     return 2\n" | "2 passed" | diff 4 tokens 55 fixed []
    c4 fill body sampled failing | "pkg/core.py:9-11 (body) ←     return 3\n" | "still failing: tests/test_m.py::test_a" | diff 4 tokens 55 fixed []
    c5 fill body sampled unparsed | "pkg/core.py:17-17 (body) ←     return 2\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c6 fill body sampled unparsed | "pkg/core.py:17-17 (body) ←     return 3\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c7 fill insert greedy unparsed | "pkg/core.py:10 (insert) ←     v = min(v, hi)\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c8 fill insert sampled unparsed | "pkg/core.py:10 (insert) ←     v = 4\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c9 fill insert greedy failing | "pkg/core.py:9 (insert) ←     v = min(v, hi)\n" | "still failing: tests/test_m.py::test_a" | diff 1 tokens 55 fixed []
    c10 fill insert greedy unparsed | "pkg/core.py:17 (insert) ←     v = min(v, hi)\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c11 fill insert sampled unparsed | "pkg/core.py:17 (insert) ←     v = 4\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c12 fill insert greedy failing | "pkg/core.py:11 (insert) ←     v = min(v, hi)\n" | "still failing: tests/test_m.py::test_a" | diff 1 tokens 55 fixed []
    c13 fill insert sampled unparsed | "pkg/core.py:10 (insert) ←     v = 2\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c14 fill insert sampled unparsed | "pkg/core.py:10 (insert) ←     v = 3\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c15 fill insert sampled failing | "pkg/core.py:9 (insert) ←     v = 2\n" | "still failing: tests/test_m.py::test_a" | diff 1 tokens 55 fixed []
    c16 fill insert sampled failing | "pkg/core.py:9 (insert) ←     v = 3\n" | "still failing: tests/test_m.py::test_a" | diff 1 tokens 55 fixed []
    c17 fill insert sampled unparsed | "pkg/core.py:17 (insert) ←     v = 2\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c18 fill insert sampled unparsed | "pkg/core.py:17 (insert) ←     v = 3\n" | "the model filled in nothing" | diff 0 tokens 55 fixed []
    c19 fill insert sampled failing | "pkg/core.py:11 (insert) ←     v = 2\n" | "still failing: tests/test_m.py::test_a" | diff 1 tokens 55 fixed []
    c20 fill insert sampled failing | "pkg/core.py:11 (insert) ←     v = 3\n" | "still failing: tests/test_m.py::test_a" | diff 1 tokens 55 fixed []
    c21 fill line greedy not_applied | "pkg/core.py:10 ←         return lo" | "pkg/core.py:10 filled in as it is" | diff 0 tokens 55 fixed []
    c22 fill line runner_up duplicate | "pkg/core.py:10 (runner-up) ←         return hi" | "the same edit as an earlier candidate" | diff 0 tokens 55 fixed []
    c23 fill line greedy failing | "pkg/core.py:9 ←     if v < lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c24 fill line spliced passing | "pkg/core.py:9 (spliced) ←     if v < hi:" | "2 passed" | diff 2 tokens 0 fixed []
    note None budget None infrastructure None spend calls=24 tokens=1320 cost=0.00
"#;
const CHAT: &str = r#"
    ask chat t=0 seed=1 messages=2 h=a59d2bb9
    ask chat t=0.8 seed=2 messages=2 h=a59d2bb9
    ask chat t=0.8 seed=3 messages=2 h=a59d2bb9
    ask chat t=0.8 seed=4 messages=2 h=a59d2bb9
    prompt format="lines" fallback=null overlap=false h=2ff14ab4
    node "t0.candidates.c0" "failing" "test:scripted"
    node "t0.candidates.c1" "unparsed" "test:scripted"
    node "t0.candidates.c2" "duplicate" "test:scripted"
    node "t0.candidates.c3" "failing" "test:scripted"
    c0 chat failing | "LINE 10:         return hi" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 110 fixed []
    c1 chat unparsed | "no idea" | "no code block and no SEARCH/REPLACE block" | diff 0 tokens 110 fixed []
    c2 chat duplicate | "LINE 10:         return hi" | "the same edit as an earlier candidate" | diff 0 tokens 110 fixed []
    c3 chat failing | "LINE 9:     if v < hi:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 110 fixed []
    note None budget None infrastructure None spend calls=4 tokens=440 cost=0.00
"#;
const REFUSED: &str = r#"
    ask fill at=10 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=76a2fe1f
    ask chat t=0 seed=1 messages=2 h=a59d2bb9
    ask chat t=0.8 seed=2 messages=2 h=a59d2bb9
    ask chat t=0.8 seed=3 messages=2 h=a59d2bb9
    ask chat t=0.8 seed=4 messages=2 h=a59d2bb9
    ask chat t=0.8 seed=5 messages=2 h=a59d2bb9
    ask chat t=0.8 seed=6 messages=2 h=a59d2bb9
    prompt format="lines" fallback="fill-in-the-middle refused: the model server rejected the request (HTTP 400): model does not support insert" overlap=false h=2ff14ab4
    node "t0.candidates.c0" "failing" "test:scripted"
    node "t0.candidates.c1" "unparsed" "test:scripted"
    node "t0.candidates.c2" "duplicate" "test:scripted"
    node "t0.candidates.c3" "failing" "test:scripted"
    node "t0.candidates.c4" "failing" "test:scripted"
    node "t0.candidates.c5" "failing" "test:scripted"
    c0 chat failing | "LINE 10:         return hi" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 110 fixed []
    c1 chat unparsed | "no idea" | "no code block and no SEARCH/REPLACE block" | diff 0 tokens 110 fixed []
    c2 chat duplicate | "LINE 10:         return hi" | "the same edit as an earlier candidate" | diff 0 tokens 110 fixed []
    c3 chat failing | "LINE 9:     if v < hi:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 110 fixed []
    c4 chat failing | "LINE 11:     return min(v, 5)" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 110 fixed []
    c5 chat failing | "LINE 11:     return min(v, 6)" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 110 fixed []
    note None budget None infrastructure None spend calls=6 tokens=660 cost=0.00
"#;
const RULE_PASSES: &str = r#"
    node "t0.candidates.c0" "passing" "rule (no model)"
    c0 rule missing_name passing | "rule missing_name: pkg/core.py: `mx` does not exist: `max` on 1 line(s)" | "2 passed" | diff 2 tokens 0 fixed []
    note Some("a rule-based candidate passed: no fill drawn") budget None infrastructure None spend calls=0 tokens=0 cost=0.00
"#;
const RULE_FAILS: &str = r#"
    ask fill at=10 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=410a0ac7
    ask fill at=10 middle="        return hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=410a0ac7
    ask fill at=9 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=f2f23891
    ask fill at=9 middle="    if v >" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=f2f23891
    ask fill at=9 middle="    if v > hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=f2f23891
    ask fill at=17 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=bd795002
    ask fill at=17 middle="        return len(self.items) -" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=bd795002
    ask fill at=11 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=215cd1b1
    ask fill at=11 middle="    return mx" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=215cd1b1
    ask fill at=11 middle="    return mx(" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=215cd1b1
    ask fill at=11 middle="    return mx(v" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=215cd1b1
    ask fill at=11 middle="    return mx(v," t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=215cd1b1
    ask fill at=11 middle="    return mx(v, lo" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=215cd1b1
    ask fill at=10 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=410a0ac7
    ask fill at=10 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=410a0ac7
    ask fill at=9 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=f2f23891
    ask fill at=9 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=f2f23891
    ask fill at=17 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=bd795002
    ask fill at=17 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=bd795002
    ask fill at=11 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=215cd1b1
    ask fill at=11 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=215cd1b1
    node "t0.candidates.c0" "failing" "rule (no model)"
    prompt format="infill" fallback=null overlap=false h=bbecfdbf
    node "t0.candidates.c1" "not_applied" "test:scripted"
    node "t0.candidates.c2" "failing" "test:scripted"
    node "t0.candidates.c3" "failing" "test:scripted"
    node "t0.candidates.c4" "failing" "test:scripted"
    node "t0.candidates.c5" "failing" "test:scripted"
    node "t0.candidates.c6" "failing" "test:scripted"
    node "t0.candidates.c7" "failing" "test:scripted"
    node "t0.candidates.c8" "failing" "test:scripted"
    node "t0.candidates.c9" "duplicate" "test:scripted"
    node "t0.candidates.c10" "failing" "test:scripted"
    node "t0.candidates.c11" "failing" "test:scripted"
    node "t0.candidates.c12" "failing" "test:scripted"
    node "t0.candidates.c13" "failing" "test:scripted"
    node "t0.candidates.c14" "failing" "test:scripted"
    node "t0.candidates.c15" "failing" "test:scripted"
    node "t0.candidates.c16" "failing" "test:scripted"
    node "t0.candidates.c17" "failing" "test:scripted"
    node "t0.candidates.c18" "failing" "test:scripted"
    node "t0.candidates.c19" "failing" "test:scripted"
    node "t0.candidates.c20" "failing" "test:scripted"
    node "t0.candidates.c21" "failing" "test:scripted"
    node "t0.candidates.c22" "failing" "test:scripted"
    c0 rule missing_name failing | "rule missing_name: pkg/core.py: `mx` does not exist: `max` on 1 line(s)" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 0 fixed []
    c1 fill line greedy not_applied | "pkg/core.py:10 ←         return lo" | "pkg/core.py:10 filled in as it is" | diff 0 tokens 55 fixed []
    c2 fill line runner_up failing | "pkg/core.py:10 (runner-up) ←         return hi" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c3 fill line greedy failing | "pkg/core.py:9 ←     if v < lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c4 fill line spliced failing | "pkg/core.py:9 (spliced) ←     if v < hi:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 0 fixed []
    c5 fill line continued failing | "pkg/core.py:9 (continued) ←     if v > lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c6 fill line continued failing | "pkg/core.py:9 (continued) ←     if v > hi or v < lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c7 fill line greedy failing | "pkg/core.py:17 ←         return len(self.items)" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c8 fill line continued failing | "pkg/core.py:17 (continued) ←         return len(self.items) - 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c9 fill line greedy duplicate | "pkg/core.py:11 ←     return max(v, lo)" | "the same edit as an earlier candidate" | diff 0 tokens 55 fixed []
    c10 fill line continued failing | "pkg/core.py:11 (continued) ←     return mx" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c11 fill line continued failing | "pkg/core.py:11 (continued) ←     return mx(" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c12 fill line continued failing | "pkg/core.py:11 (continued) ←     return mx(v" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c13 fill line continued failing | "pkg/core.py:11 (continued) ←     return mx(v," | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c14 fill line continued failing | "pkg/core.py:11 (continued) ←     return mx(v, lo" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c15 fill line sampled failing | "pkg/core.py:10 ←         v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c16 fill line sampled failing | "pkg/core.py:10 ←         v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c17 fill line sampled failing | "pkg/core.py:9 ←     v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c18 fill line sampled failing | "pkg/core.py:9 ←     v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c19 fill line sampled failing | "pkg/core.py:17 ←         v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c20 fill line sampled failing | "pkg/core.py:17 ←         v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c21 fill line sampled failing | "pkg/core.py:11 ←     v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c22 fill line sampled failing | "pkg/core.py:11 ←     v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    note None budget None infrastructure None spend calls=21 tokens=1155 cost=0.00
"#;
const RULE_ESCALATED: &str = r#"
    ask fill at=10 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=410a0ac7
    ask fill at=10 middle="        return hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=410a0ac7
    ask fill at=9 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=f2f23891
    prompt format="infill" fallback=null overlap=false h=bbecfdbf
    node "t0.candidates.c0" "not_applied" "test:scripted"
    node "t0.candidates.c1" "failing" "test:scripted"
    node "t0.candidates.c2" "failing" "test:scripted"
    node "t0.candidates.c3" "passing" "test:scripted"
    c0 fill line greedy not_applied | "pkg/core.py:10 ←         return lo" | "pkg/core.py:10 filled in as it is" | diff 0 tokens 55 fixed []
    c1 fill line runner_up failing | "pkg/core.py:10 (runner-up) ←         return hi" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c2 fill line greedy failing | "pkg/core.py:9 ←     if v < lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c3 fill line spliced passing | "pkg/core.py:9 (spliced) ←     if v < hi:" | "2 passed" | diff 2 tokens 0 fixed []
    note None budget None infrastructure None spend calls=3 tokens=165 cost=0.00
"#;
const CAPPED: &str = r#"
    ask fill at=10 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=10 middle="        return hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=9 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=4519d0dc
    ask fill at=9 middle="    if v >" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=9 middle="    if v > hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    prompt format="infill" fallback=null overlap=false h=bbecfdbf
    node "t0.candidates.c0" "not_applied" "test:scripted"
    node "t0.candidates.c1" "failing" "test:scripted"
    node "t0.candidates.c2" "failing" "test:scripted"
    node "t0.candidates.c3" "failing" "test:scripted"
    node "t0.candidates.c4" "failing" "test:scripted"
    node "t0.candidates.c5" "failing" "test:scripted"
    c0 fill line greedy not_applied | "pkg/core.py:10 ←         return lo" | "pkg/core.py:10 filled in as it is" | diff 0 tokens 55 fixed []
    c1 fill line runner_up failing | "pkg/core.py:10 (runner-up) ←         return hi" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c2 fill line greedy failing | "pkg/core.py:9 ←     if v < lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c3 fill line spliced failing | "pkg/core.py:9 (spliced) ←     if v < hi:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 0 fixed []
    c4 fill line continued failing | "pkg/core.py:9 (continued) ←     if v > lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c5 fill line continued failing | "pkg/core.py:9 (continued) ←     if v > hi or v < lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    note Some("stopped after 6 of 12 fills (5 checked): cost_limit") budget Some(CostLimit) infrastructure None spend calls=5 tokens=275 cost=0.05
"#;
const ROUNDS: &str = r#"
    ask fill at=10 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=10 middle="        return hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=9 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=4519d0dc
    ask fill at=9 middle="    if v >" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=9 middle="    if v > hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=17 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=17 middle="        return len(self.items) -" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=11 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=0d40ac61
    ask fill at=11 middle="" t=0.8 seed=4 alternatives=0 max=80 stop=["\n"] h=0d40ac61
    ask fill at=10 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=10 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=9 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=9 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=17 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=17 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=11 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=0d40ac61
    ask fill at=11 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=0d40ac61
    ask fill at=10 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=6391bb69
    ask fill at=10 middle="        return hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=6391bb69
    ask fill at=17 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=feb6d2b5
    ask fill at=17 middle="        return len(self.items) -" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=feb6d2b5
    ask fill at=11 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=73928170
    ask fill at=11 middle="" t=0.8 seed=4 alternatives=0 max=80 stop=["\n"] h=73928170
    ask fill at=10 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=6391bb69
    ask fill at=10 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=6391bb69
    prompt format="infill" fallback=null overlap=false h=bbecfdbf
    node "t0.candidates.c0" "not_applied" "test:scripted"
    node "t0.candidates.c1" "failing" "test:scripted"
    node "t0.candidates.c2" "failing" "test:scripted"
    node "t0.candidates.c3" "partial" "test:scripted"
    node "t0.candidates.c4" "failing" "test:scripted"
    node "t0.candidates.c5" "failing" "test:scripted"
    node "t0.candidates.c6" "failing" "test:scripted"
    node "t0.candidates.c7" "failing" "test:scripted"
    node "t0.candidates.c8" "not_applied" "test:scripted"
    node "t0.candidates.c9" "failing" "test:scripted"
    node "t0.candidates.c10" "failing" "test:scripted"
    node "t0.candidates.c11" "failing" "test:scripted"
    node "t0.candidates.c12" "failing" "test:scripted"
    node "t0.candidates.c13" "failing" "test:scripted"
    node "t0.candidates.c14" "failing" "test:scripted"
    node "t0.candidates.c15" "failing" "test:scripted"
    node "t0.candidates.c16" "failing" "test:scripted"
    node "t0.candidates.c17" "failing" "test:scripted"
    round 2 kept=3 targets=["tests/test_m.py::test_b"]
    prompt format="infill" fallback=null overlap=false h=ad4a9743
    node "t0.candidates.c18" "not_applied" "test:scripted"
    node "t0.candidates.c19" "failing" "test:scripted"
    node "t0.candidates.c20" "failing" "test:scripted"
    node "t0.candidates.c21" "passing" "test:scripted"
    node "t0.candidates.c22" "not_applied" "test:scripted"
    node "t0.candidates.c23" "failing" "test:scripted"
    node "t0.candidates.c24" "failing" "test:scripted"
    node "t0.candidates.c25" "failing" "test:scripted"
    c0 fill line greedy not_applied | "pkg/core.py:10 ←         return lo" | "pkg/core.py:10 filled in as it is" | diff 0 tokens 55 fixed []
    c1 fill line runner_up failing | "pkg/core.py:10 (runner-up) ←         return hi" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c2 fill line greedy failing | "pkg/core.py:9 ←     if v < lo:" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c3 fill line spliced partial | "pkg/core.py:9 (spliced) ←     if v < hi:" | "1 of 2 targets pass (tests/test_m.py::test_a); still failing: tests/test_m.py::test_b" | diff 2 tokens 0 fixed ["tests/test_m.py::test_a"]
    c4 fill line continued failing | "pkg/core.py:9 (continued) ←     if v > lo:" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c5 fill line continued failing | "pkg/core.py:9 (continued) ←     if v > hi or v < lo:" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c6 fill line greedy failing | "pkg/core.py:17 ←         return len(self.items)" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c7 fill line continued failing | "pkg/core.py:17 (continued) ←         return len(self.items) - 2" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c8 fill line greedy not_applied | "pkg/core.py:11 ←     return max(v, lo)" | "pkg/core.py:11 filled in as it is" | diff 0 tokens 55 fixed []
    c9 fill line sampled failing | "pkg/core.py:11 ←     v = 4" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c10 fill line sampled failing | "pkg/core.py:10 ←         v = 2" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c11 fill line sampled failing | "pkg/core.py:10 ←         v = 3" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c12 fill line sampled failing | "pkg/core.py:9 ←     v = 2" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c13 fill line sampled failing | "pkg/core.py:9 ←     v = 3" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c14 fill line sampled failing | "pkg/core.py:17 ←         v = 2" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c15 fill line sampled failing | "pkg/core.py:17 ←         v = 3" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c16 fill line sampled failing | "pkg/core.py:11 ←     v = 2" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c17 fill line sampled failing | "pkg/core.py:11 ←     v = 3" | "still failing: tests/test_m.py::test_a, tests/test_m.py::test_b" | diff 2 tokens 55 fixed []
    c18 fill line greedy not_applied | "pkg/core.py:10 ←         return lo" | "pkg/core.py:10 filled in as it is" | diff 0 tokens 55 fixed []
    c19 fill line runner_up failing | "pkg/core.py:10 (runner-up) ←         return hi" | "still failing: tests/test_m.py::test_b" | diff 4 tokens 55 fixed []
    c20 fill line greedy failing | "pkg/core.py:17 ←         return len(self.items)" | "still failing: tests/test_m.py::test_b" | diff 4 tokens 55 fixed []
    c21 fill line continued passing | "pkg/core.py:17 (continued) ←         return len(self.items) - 2" | "3 passed" | diff 4 tokens 55 fixed []
    c22 fill line greedy not_applied | "pkg/core.py:11 ←     return max(v, lo)" | "pkg/core.py:11 filled in as it is" | diff 0 tokens 55 fixed []
    c23 fill line sampled failing | "pkg/core.py:11 ←     v = 4" | "still failing: tests/test_m.py::test_b" | diff 4 tokens 55 fixed []
    c24 fill line sampled failing | "pkg/core.py:10 ←         v = 2" | "still failing: tests/test_m.py::test_b" | diff 4 tokens 55 fixed []
    c25 fill line sampled failing | "pkg/core.py:10 ←         v = 3" | "still failing: tests/test_m.py::test_b" | diff 4 tokens 55 fixed []
    note None budget None infrastructure None spend calls=25 tokens=1375 cost=0.00
"#;
const TWO_SLOTS: &str = r#"
    ask fill at=10 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=10 middle="        return hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=9 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=4519d0dc
    ask fill at=17 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=17 middle="        return len(self.items) -" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=9 middle="    if v >" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=11 middle="" t=0 seed=1 alternatives=5 max=80 stop=["\n"] h=0d40ac61
    ask fill at=11 middle="" t=0.8 seed=4 alternatives=0 max=80 stop=["\n"] h=0d40ac61
    ask fill at=9 middle="    if v > hi" t=0 seed=1 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=10 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=10 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=76a2fe1f
    ask fill at=9 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=9 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=4519d0dc
    ask fill at=17 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=17 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=c9ee4d66
    ask fill at=11 middle="" t=0.8 seed=2 alternatives=0 max=80 stop=["\n"] h=0d40ac61
    ask fill at=11 middle="" t=0.8 seed=3 alternatives=0 max=80 stop=["\n"] h=0d40ac61
    prompt format="infill" fallback=null overlap=false h=bbecfdbf
    node "t0.candidates.c0" "not_applied" "test:scripted"
    node "t0.candidates.c1" "failing" "test:scripted"
    node "t0.candidates.c2" "failing" "test:scripted"
    node "t0.candidates.c3" "failing" "test:scripted"
    node "t0.candidates.c4" "failing" "test:scripted"
    node "t0.candidates.c5" "failing" "test:scripted"
    node "t0.candidates.c6" "failing" "test:scripted"
    node "t0.candidates.c7" "not_applied" "test:scripted"
    node "t0.candidates.c8" "failing" "test:scripted"
    node "t0.candidates.c9" "failing" "test:scripted"
    node "t0.candidates.c10" "failing" "test:scripted"
    node "t0.candidates.c11" "failing" "test:scripted"
    node "t0.candidates.c12" "failing" "test:scripted"
    node "t0.candidates.c13" "failing" "test:scripted"
    node "t0.candidates.c14" "failing" "test:scripted"
    node "t0.candidates.c15" "failing" "test:scripted"
    node "t0.candidates.c16" "failing" "test:scripted"
    node "t0.candidates.c17" "failing" "test:scripted"
    c0 fill line greedy not_applied | "pkg/core.py:10 ←         return lo" | "pkg/core.py:10 filled in as it is" | diff 0 tokens 55 fixed []
    c1 fill line runner_up failing | "pkg/core.py:10 (runner-up) ←         return hi" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c2 fill line greedy failing | "pkg/core.py:9 ←     if v < lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c3 fill line greedy failing | "pkg/core.py:17 ←         return len(self.items)" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c4 fill line spliced failing | "pkg/core.py:9 (spliced) ←     if v < hi:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 0 fixed []
    c5 fill line continued failing | "pkg/core.py:17 (continued) ←         return len(self.items) - 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c6 fill line continued failing | "pkg/core.py:9 (continued) ←     if v > lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c7 fill line greedy not_applied | "pkg/core.py:11 ←     return max(v, lo)" | "pkg/core.py:11 filled in as it is" | diff 0 tokens 55 fixed []
    c8 fill line sampled failing | "pkg/core.py:11 ←     v = 4" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c9 fill line continued failing | "pkg/core.py:9 (continued) ←     if v > hi or v < lo:" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c10 fill line sampled failing | "pkg/core.py:10 ←         v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c11 fill line sampled failing | "pkg/core.py:10 ←         v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c12 fill line sampled failing | "pkg/core.py:9 ←     v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c13 fill line sampled failing | "pkg/core.py:9 ←     v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c14 fill line sampled failing | "pkg/core.py:17 ←         v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c15 fill line sampled failing | "pkg/core.py:17 ←         v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c16 fill line sampled failing | "pkg/core.py:11 ←     v = 2" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    c17 fill line sampled failing | "pkg/core.py:11 ←     v = 3" | "still failing: tests/test_m.py::test_a" | diff 2 tokens 55 fixed []
    note None budget None infrastructure None spend calls=17 tokens=935 cost=0.00
"#;
