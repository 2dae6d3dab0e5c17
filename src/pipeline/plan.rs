//! One config → plan builder. Every entry point (`fix`, `eval`, the action's repairer, MCP's
//! `verify_patch`) merges its configuration layers into one [`Config`], then calls [`build`]
//! here: model tiers (bare names resolved the same way everywhere), strategies, candidate
//! settings, test globs and allowed CI paths, budgets and re-runs, each validated once, and a
//! bad value is refused here with its key and where it came from.

use crate::testcmd::TestCommand;
use std::time::Duration;

use crate::agent::candidates::CandidateConfig;
use crate::agent::model::{self, Model, ModelError, ModelOptions, ModelSpec};
use crate::config::repair::Strategy;
use crate::config::{Budgets, Config, Source};
use crate::verify::policy::{PolicyConfig, default_test_globs};

/// A configuration value the plan cannot use: which key, where it came from, why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{key}` ({origin}): {message}")]
pub struct PlanError {
    /// Dotted key (`repair.escalate[1]`, `budgets.max_steps`).
    pub key: String,
    /// The layer that set it (`default`, `repo (.github/patchloop.yml)`, `flag `--escalate``, …).
    pub origin: String,
    pub message: String,
}

/// The validated plan of a repair, before the run-specific parts (targets, outputs, run id).
#[derive(Debug, Clone, PartialEq)]
pub struct RepairPlan {
    /// The first model's spec, resolved (`None`: the caller brings its own model, e.g.
    /// eval's oracle).
    pub model: Option<String>,
    /// Escalation tiers, resolved, in order.
    pub escalate: Vec<String>,
    /// The configured strategies, for every tier; `None`: not configured, each tier's own
    /// ([`routed`]).
    pub strategies: Option<Vec<Strategy>>,
    pub candidates: CandidateConfig,
    /// Bytes of failing-code context shown to the loop (0 = off).
    pub context_bytes: usize,
    pub budgets: Budgets,
    /// Verification runs before and after the patch (0: only the episode's own test run).
    pub reruns: usize,
    /// Which tests the re-runs after the first run of each phase run.
    pub rerun_scope: crate::verify::RerunScope,
    /// The longest one run of the whole suite may take (`test_timeout_seconds`).
    pub test_timeout: Duration,
    /// The configured test command, typed (the image's own when `None`).
    pub test_cmd: Option<TestCommand>,
    /// The verifier's policy: the configured test globs over the defaults, the allowed CI
    /// paths (`tests_dirs` and the project kind come from the image at run time).
    pub verify_policy: PolicyConfig,
    /// Verification probes behaviour beyond the tested points (`verify.probe`).
    pub probe: bool,
    /// The differential layer's seconds per changed function (`verify.differential_seconds`;
    /// 0: off).
    pub differential_seconds: u64,
    /// The verifier's model review, resolved (`verify.review_model`; `None`: off).
    pub review_model: Option<String>,
}

/// A model spec as users write it, resolved: `ollama:`, `openai:`, `anthropic:` and
/// `scripted:` specs are kept; a bare name (`qwen2.5-coder:7b`, as the action's examples and
/// `repair.escalate` write them) means `openai:` when a base URL is given, else `ollama:`.
/// Pure.
pub fn resolve_spec(name: &str, base_url: Option<&str>) -> String {
    let name = name.trim();
    let prefixed = name
        .split_once(':')
        .is_some_and(|(kind, _)| matches!(kind, "ollama" | "openai" | "anthropic" | "scripted"));
    if prefixed {
        name.to_string()
    } else if base_url.is_some_and(|u| !u.trim().is_empty()) {
        format!("openai:{name}")
    } else {
        format!("ollama:{name}")
    }
}

/// The plan of `cfg`. `model`: the first model as the caller was given it (a flag, the
/// comment command, eval's `--model`), else `cfg.model`; `Err` when neither is set and
/// `needs_model`. `opts` carries the endpoint bare names resolve against. Pure.
pub fn build(
    cfg: &Config,
    model: Option<&str>,
    needs_model: bool,
    opts: &ModelOptions,
) -> Result<RepairPlan, PlanError> {
    let source = |key: &'static str, given: bool| -> String {
        if given {
            return "given by the caller".into();
        }
        cfg.sources.get(key).unwrap_or(&Source::Default).to_string()
    };
    let err = |key: &str, origin: String, message: String| PlanError {
        key: key.to_string(),
        origin,
        message,
    };
    let base = opts.base_url.as_deref();
    let spec = |key: String, src: String, name: &str| -> Result<String, PlanError> {
        let resolved = resolve_spec(name, base);
        ModelSpec::parse(&resolved).map_err(|e| err(&key, src, e.to_string()))?;
        Ok(resolved)
    };
    let first = match (model, cfg.model.as_deref()) {
        (Some(m), _) => Some(spec("model".into(), source("model", true), m)?),
        (None, Some(m)) => Some(spec("model".into(), source("model", false), m)?),
        (None, None) if needs_model => {
            return Err(err(
                "model",
                source("model", false),
                "no model configured: pass --model (the action's `model` input) or set \
                 `model:` in .github/patchloop.yml"
                    .into(),
            ));
        }
        (None, None) => None,
    };
    let escalate = cfg
        .repair
        .escalate
        .iter()
        .enumerate()
        .map(|(i, m)| {
            spec(
                format!("repair.escalate[{i}]"),
                source("repair.escalate", false),
                m,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let r = &cfg.repair;
    if r.strategies.is_empty() {
        return Err(err(
            "repair.strategies",
            source("repair.strategies", false),
            "no strategy: list candidates, shapes, sampled and/or loop".into(),
        ));
    }
    let positive = |key: &'static str, v: u64| -> Result<(), PlanError> {
        if v == 0 {
            return Err(err(key, source(key, false), "must be at least 1".into()));
        }
        Ok(())
    };
    positive("repair.candidates", r.candidates as u64)?;
    positive("repair.infill_shapes", r.infill_shapes.len() as u64)?;
    positive("repair.parallel", r.parallel as u64)?;
    let b = &cfg.budgets;
    positive("budgets.max_steps", b.max_steps as u64)?;
    positive("budgets.max_tokens", b.max_tokens)?;
    if b.max_wall < Duration::from_secs(1) {
        return Err(err(
            "budgets.max_seconds",
            source("budgets.max_seconds", false),
            "must be at least 1 second".into(),
        ));
    }
    if !(b.max_cost_usd >= 0.0 && b.max_cost_usd.is_finite()) {
        return Err(err(
            "budgets.max_cost_usd",
            source("budgets.max_cost_usd", false),
            format!("{} is not a dollar amount (0 means no cap)", b.max_cost_usd),
        ));
    }
    if !(10..=24 * 3600).contains(&cfg.test_timeout_seconds) {
        return Err(err(
            "test_timeout_seconds",
            source("test_timeout_seconds", false),
            format!(
                "{} s is not a limit for one run of the test suite (10 s to 24 h)",
                cfg.test_timeout_seconds
            ),
        ));
    }
    if b.context_tokens < 512 {
        return Err(err(
            "budgets.context_tokens",
            source("budgets.context_tokens", false),
            format!(
                "{} tokens cannot hold the first prompt (at least 512)",
                b.context_tokens
            ),
        ));
    }
    // The config's test command enters here: parsed once, into the value every consumer
    // renders its own invocation from.
    let test_cmd = match cfg.test_command.as_deref() {
        Some(t) => Some(TestCommand::parse(t).map_err(|e| {
            err(
                "test_command",
                source("test_command", false),
                format!("{e}: give the command the way CI runs the tests"),
            )
        })?),
        None => None,
    };
    let review_model = match cfg.verify.review_model.as_deref().map(str::trim) {
        Some(m) if !m.is_empty() => Some(spec(
            "verify.review_model".into(),
            source("verify.review_model", false),
            m,
        )?),
        _ => None,
    };
    let mut test_globs = default_test_globs();
    for g in &cfg.test_globs {
        if !test_globs.contains(g) {
            test_globs.push(g.clone());
        }
    }
    Ok(RepairPlan {
        model: first,
        escalate,
        strategies: cfg
            .sources
            .get("repair.strategies")
            .is_some_and(|s| *s != Source::Default)
            .then(|| r.strategies.clone()),
        candidates: CandidateConfig {
            count: r.candidates,
            format: r.edit_format,
            shapes: r.infill_shapes.clone(),
            parallel: r.parallel,
            overlap: r.overlap_checks,
            ..CandidateConfig::default()
        },
        context_bytes: r.context_bytes,
        budgets: b.clone(),
        reruns: cfg.reruns as usize,
        rerun_scope: Default::default(),
        test_timeout: Duration::from_secs(cfg.test_timeout_seconds),
        test_cmd,
        verify_policy: PolicyConfig {
            test_globs,
            allowed_ci_paths: cfg.allowed_ci_paths.clone(),
            ..PolicyConfig::default()
        },
        probe: cfg.verify.probe,
        differential_seconds: cfg.verify.differential_seconds,
        review_model,
    })
}

/// A model's size in billions of parameters, read from its name (`qwen2.5-coder:1.5b`,
/// `llama3-70b-instruct`). Pure.
pub fn size_of(spec: &str) -> Option<f64> {
    static SIZE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?i)(?:^|[^0-9.])(\d+(?:\.\d+)?)b(?:$|[^a-z0-9])")
            .expect("static regex")
    });
    let name = spec.split_once(':').map_or(spec, |(_, n)| n);
    SIZE.captures_iter(name)
        .filter_map(|c| c[1].parse::<f64>().ok())
        .last()
}

/// Models up to this size (billions of parameters) run the anytime search on every tier.
pub const SMALL_MODEL_B: f64 = 3.0;

/// The strategies of a tier when none are configured, and why: a small model (≤ 3B by its
/// name) or one of unknown size (a hosted API, a test double) on the first tier runs every
/// stage of the anytime search ([`ANYTIME`]); a larger model or an escalated tier runs the
/// loop with the ranked context. Pure.
pub fn routed(tier: usize, spec: &str) -> (Vec<Strategy>, String) {
    let size = size_of(spec);
    match (tier, size) {
        (_, Some(b)) if b <= SMALL_MODEL_B => (
            ANYTIME.to_vec(),
            format!("a small model ({b}B): the anytime search"),
        ),
        (0, Some(b)) => (
            vec![Strategy::Loop],
            format!("a larger model ({b}B): the loop with the ranked context"),
        ),
        (0, None) => (
            ANYTIME.to_vec(),
            "a model of unknown size: the anytime search".into(),
        ),
        (t, _) => (
            vec![Strategy::Loop],
            format!("an escalated tier ({t}): the loop with the ranked context"),
        ),
    }
}

/// The anytime search's stages, in order: rules and greedy one-line fills, multi-line
/// shapes, sampled fills, the loop.
pub const ANYTIME: [Strategy; 4] = [
    Strategy::Candidates,
    Strategy::Shapes,
    Strategy::Sampled,
    Strategy::Loop,
];

/// A stage's share of the wall time left when it starts, when a later stage is still to
/// run (the last one to run gets the rest). What a stage leaves unused goes to the next.
/// `candidates` gets half: on the field corpus the 1.5B's line fills still found 4 of its
/// 27 fixes between their 25th and 50th draw (none after), and 50 draws with their checks
/// take ~150 s here (`patchloop bench coverage`).
pub fn share_of(kind: Strategy) -> f64 {
    match kind {
        Strategy::Candidates => 0.5,
        Strategy::Shapes => 0.35,
        Strategy::Sampled => 0.6,
        Strategy::Loop => 0.5,
    }
}

/// The least wall time a stage can do something with: the loop's first turn alone (the task,
/// the context and the digest, thousands of prompt tokens) took over 45 s with the 1.5B on
/// two shared cores; a fill takes a few seconds.
pub fn min_time(kind: Strategy) -> Duration {
    match kind {
        Strategy::Loop => Duration::from_secs(60),
        _ => Duration::from_secs(10),
    }
}

/// One tier's schedule of stages: each listed stage once, in order; then, on the last tier,
/// `sampled` again (its next pass, new seeds) while the pass before drew an edit not checked
/// before — until the budget ends it. The search asks [`Stages::next`] and reports back.
#[derive(Debug, Clone)]
pub struct Stages {
    kinds: Vec<Strategy>,
    at: usize,
    /// Whether `sampled` may run again after the list (the last tier).
    again: bool,
    sampled_passes: usize,
    /// New edits of the last `sampled` pass.
    sampled_fresh: usize,
    ran: Vec<Strategy>,
    declined: Vec<Strategy>,
}

impl Stages {
    pub fn new(kinds: Vec<Strategy>, last_tier: bool) -> Stages {
        Stages {
            kinds,
            at: 0,
            again: last_tier,
            sampled_passes: 0,
            sampled_fresh: 0,
            ran: Vec::new(),
            declined: Vec::new(),
        }
    }

    /// The next stage and its pass (the `sampled` stage's seeds), if any.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<(Strategy, usize)> {
        if let Some(&k) = self.kinds.get(self.at) {
            self.at += 1;
            return Some((k, self.pass(k)));
        }
        self.sampled_again()
            .then_some((Strategy::Sampled, self.sampled_passes))
    }

    fn pass(&self, k: Strategy) -> usize {
        if k == Strategy::Sampled {
            self.sampled_passes
        } else {
            0
        }
    }

    fn sampled_again(&self) -> bool {
        self.again
            && self.sampled_passes > 0
            && self.sampled_fresh > 0
            && !self.declined.contains(&Strategy::Sampled)
    }

    /// `kind` ran and checked `fresh` edits no earlier candidate of its run had made;
    /// `cut_short`: its share ended it (a pass cut short had more to draw, so it counts as
    /// fresh: on the real bench slow checks left some passes two draws).
    pub fn ran(&mut self, kind: Strategy, fresh: usize, cut_short: bool) {
        if kind == Strategy::Sampled {
            self.sampled_passes += 1;
            self.sampled_fresh = if cut_short { fresh.max(1) } else { fresh };
        }
        self.ran.push(kind);
    }

    pub fn declined(&mut self, kind: Strategy) {
        self.declined.push(kind);
    }

    /// The share of `left` the stage about to run gets: [`share_of`] while a later listed
    /// stage may still run, else none (the rest of the budget). Pure.
    pub fn share(&self, kind: Strategy, left: Duration) -> Option<Duration> {
        let later = self.kinds[self.at.min(self.kinds.len())..]
            .iter()
            .any(|k| !self.declined.contains(k));
        later.then(|| left.mul_f64(share_of(kind)))
    }

    /// Why the schedule ran out (every stage ran or declined), for the receipt. Pure.
    pub fn why_done(&self) -> String {
        let mut ran: Vec<String> = Vec::new();
        for k in &self.ran {
            let n = self.ran.iter().filter(|x| *x == k).count();
            let name = if n > 1 {
                format!("{} ×{n}", k.as_str())
            } else {
                k.as_str().to_string()
            };
            if !ran.contains(&name) {
                ran.push(name);
            }
        }
        let mut s = if ran.is_empty() {
            "no stage ran".to_string()
        } else {
            format!("every stage ran ({})", ran.join(", "))
        };
        if !self.declined.is_empty() {
            let d: Vec<&str> = self.declined.iter().map(|k| k.as_str()).collect();
            s.push_str(&format!("; declined: {}", d.join(", ")));
        }
        if self.sampled_passes > 0 && self.sampled_fresh == 0 {
            s.push_str("; the last sampled pass drew no new edit");
        }
        s
    }
}

/// Bytes of the candidate stages' digest the loop's first prompt shows at most.
const DIGEST_BYTES: usize = 4096;

/// What the candidate stages tried, as the loop's first prompt adds it. Pure.
pub fn digest(tried: &[String]) -> String {
    let mut s = String::from(
        "What the candidate stages already tried (every one was checked with the tests; do not repeat them):\n\n",
    );
    s.push_str(&tried.join("\n\n"));
    if s.len() > DIGEST_BYTES {
        let mut cut = DIGEST_BYTES;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("\n…");
    }
    s
}

impl RepairPlan {
    /// The model tiers' adapters: the first model (or `first`, a model the caller built
    /// itself), then the escalation tiers.
    pub fn models(
        &self,
        first: Option<Box<dyn Model>>,
        opts: &ModelOptions,
    ) -> Result<Vec<Box<dyn Model>>, ModelError> {
        let mut tiers = Vec::with_capacity(1 + self.escalate.len());
        match (first, &self.model) {
            (Some(m), _) => tiers.push(m),
            (None, Some(spec)) => tiers.push(model::from_spec(spec, opts)?),
            (None, None) => return Err(ModelError::Config("no model to repair with".into())),
        }
        for spec in &self.escalate {
            tiers.push(model::from_spec(spec, opts)?);
        }
        Ok(tiers)
    }

    /// The verifier's review model, when `verify.review_model` is set.
    pub fn review(&self, opts: &ModelOptions) -> anyhow::Result<Option<super::review::ReviewSpec>> {
        super::review::from_config(self.review_model.as_deref(), opts)
    }

    /// The runtime plan of one repair: this validated plan plus what the run brings (the
    /// command, the targets, where the outputs go). Every entry point — `fix`, `demo`, the
    /// action, `eval` — builds its plan here.
    pub fn runtime(&self, run: RunSpec) -> super::Plan {
        let episode = crate::agent::episode::EpisodeConfig {
            budgets: self.budgets.clone(),
            tools: crate::agent::tools::ToolConfig {
                test_cmd: run.test_cmd,
                ..Default::default()
            },
        };
        let (out, patch, receipt) = match &run.outputs {
            Outputs::Dir(d) => (d.clone(), true, true),
            Outputs::Trajectory(t) => (t.clone(), false, false),
        };
        let mut plan = super::Plan::new(episode, &out, run.run_id).with_plan(self);
        if let Outputs::Trajectory(t) = run.outputs {
            plan.trajectory = t;
        }
        if !patch {
            plan.patch_file = None;
        }
        if !receipt {
            plan.receipt_dir = None;
        }
        plan.targets = run.targets;
        plan.statement = run.statement;
        plan.base_repo = run.base_repo;
        plan.review = run.review;
        plan.cancel_on_signal = run.cancel_on_signal;
        plan.env_check = run.env_check;
        plan
    }
}

/// Where a run's outputs go.
#[derive(Debug, Clone)]
pub enum Outputs {
    /// `patch.diff`, `trajectory.jsonl` and `receipt.{json,md}` in this directory.
    Dir(std::path::PathBuf),
    /// Only the trajectory, at this path (eval writes its own results and receipts).
    Trajectory(std::path::PathBuf),
}

/// What one run brings to the validated plan ([`RepairPlan::runtime`]).
pub struct RunSpec {
    /// The command the run's image was prepared with (what it delegates to resolved).
    pub test_cmd: TestCommand,
    pub targets: super::TargetSpec,
    /// A problem statement added to the task (`Given` targets: the whole task).
    pub statement: Option<String>,
    pub outputs: Outputs,
    pub run_id: String,
    /// The checkout the patch is for (the verifier's policy reads pre-patch configs from it).
    pub base_repo: Option<std::path::PathBuf>,
    pub review: Option<super::review::ReviewSpec>,
    /// Stop on SIGINT/SIGTERM with an error (the CLI); `false` when the caller handles them.
    pub cancel_on_signal: bool,
    /// How the reproduction's failures were told apart from environmental ones.
    pub env_check: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse_file;

    fn cfg(yaml: &str, source: Source) -> Config {
        let mut c = Config::default();
        c.apply(&parse_file("test.yml", yaml).unwrap(), source);
        c
    }

    fn opts(base_url: Option<&str>) -> ModelOptions {
        ModelOptions {
            base_url: base_url.map(String::from),
            ..ModelOptions::default()
        }
    }

    #[test]
    fn bare_model_names_get_the_adapter_of_the_endpoint_given() {
        assert_eq!(
            resolve_spec("qwen2.5-coder:7b", None),
            "ollama:qwen2.5-coder:7b"
        );
        assert_eq!(
            resolve_spec("qwen2.5-coder:7b", Some("http://vllm:8000/v1")),
            "openai:qwen2.5-coder:7b"
        );
        assert_eq!(resolve_spec("llama3", Some(" ")), "ollama:llama3");
        for kept in [
            "ollama:x",
            "openai:gpt-4o-mini",
            "anthropic:claude-sonnet-4-5",
            "scripted:examples/scripted/demo-fix.yaml",
        ] {
            assert_eq!(resolve_spec(kept, Some("http://x")), kept);
        }
    }

    #[test]
    fn the_review_model_resolves_like_a_tier_and_an_empty_one_is_named() {
        let c = cfg(
            "verify:\n  probe: false\n  review_model: qwen2.5-coder:7b\n",
            Source::Repo(".github/patchloop.yml".into()),
        );
        let p = build(&c, Some("m"), true, &opts(Some("http://vllm/v1"))).unwrap();
        assert_eq!(p.review_model.as_deref(), Some("openai:qwen2.5-coder:7b"));
        assert!(!p.probe);
        let c = cfg(
            "verify:\n  review_model: 'ollama:'\n",
            Source::Repo(".github/patchloop.yml".into()),
        );
        let e = build(&c, Some("m"), true, &opts(None)).unwrap_err();
        assert_eq!(e.key, "verify.review_model");
        assert!(e.origin.contains(".github/patchloop.yml"), "{e:?}");
    }

    #[test]
    fn escalation_tiers_resolve_bare_names_like_the_first_model() {
        let c = cfg(
            "repair:\n  escalate: [qwen2.5-coder:14b, 'openai:big']\n",
            Source::Repo(".github/patchloop.yml".into()),
        );
        let p = build(&c, Some("qwen2.5-coder:1.5b"), true, &opts(None)).unwrap();
        assert_eq!(p.model.as_deref(), Some("ollama:qwen2.5-coder:1.5b"));
        assert_eq!(p.escalate, ["ollama:qwen2.5-coder:14b", "openai:big"]);
        let p = build(&c, None, false, &opts(Some("http://127.0.0.1:8091/v1"))).unwrap();
        assert_eq!(p.model, None);
        assert_eq!(p.escalate[0], "openai:qwen2.5-coder:14b");
    }

    #[test]
    fn sizes_are_read_from_model_names_and_route_the_tiers() {
        for (spec, b) in [
            ("openai:qwen2.5-coder-1.5b", Some(1.5)),
            ("ollama:qwen2.5-coder:14b", Some(14.0)),
            ("ollama:llama3-70b-instruct", Some(70.0)),
            ("openai:gpt-4o", None),
            ("anthropic:claude-sonnet-4-5", None),
            ("scripted:examples/scripted/demo-fix.yaml", None),
        ] {
            assert_eq!(size_of(spec), b, "{spec}");
        }
        let s = |t, spec| routed(t, spec).0;
        assert_eq!(s(0, "openai:qwen2.5-coder-1.5b"), ANYTIME);
        assert_eq!(s(1, "ollama:qwen2.5-coder:0.5b"), ANYTIME);
        assert_eq!(s(0, "ollama:qwen2.5-coder:14b"), [Strategy::Loop]);
        assert_eq!(s(1, "openai:gpt-4o"), [Strategy::Loop]);
        assert_eq!(s(0, "openai:gpt-4o"), ANYTIME);
        assert!(
            routed(0, "openai:qwen2.5-coder-1.5b")
                .1
                .contains("small model (1.5B)")
        );
    }

    /// Drives a schedule as the search does: each stage reports what it drew.
    fn drive(st: &mut Stages, fresh: &[usize], declines: &[Strategy]) -> Vec<(Strategy, usize)> {
        let mut ran = Vec::new();
        let mut sampled = fresh.iter();
        while let Some((k, pass)) = st.next() {
            if declines.contains(&k) {
                st.declined(k);
                continue;
            }
            let n = match k {
                Strategy::Sampled => *sampled.next().unwrap_or(&0),
                _ => 1,
            };
            st.ran(k, n, false);
            ran.push((k, pass));
            assert!(ran.len() < 50, "the schedule does not end: {ran:?}");
        }
        ran
    }

    #[test]
    fn the_stages_run_in_order_then_sampled_again_while_it_draws_new_edits() {
        use Strategy::*;
        let mut st = Stages::new(ANYTIME.to_vec(), true);
        let ran = drive(&mut st, &[5, 3, 0], &[]);
        assert_eq!(
            ran,
            [
                (Candidates, 0),
                (Shapes, 0),
                (Sampled, 0),
                (Loop, 0),
                (Sampled, 1),
                (Sampled, 2)
            ]
        );
        assert_eq!(
            st.why_done(),
            "every stage ran (candidates, shapes, sampled ×3, loop); the last sampled pass drew no new edit"
        );
        // A repeat that declines (too little time left) ends the schedule.
        let mut st = Stages::new(ANYTIME.to_vec(), true);
        for _ in 0..4 {
            let (k, _) = st.next().unwrap();
            st.ran(k, 1, false);
        }
        assert_eq!(st.next(), Some((Sampled, 1)));
        st.declined(Sampled);
        assert_eq!(st.next(), None);
        // A pass its share cut short had more to draw: it goes on, though nothing was new.
        let mut st = Stages::new(vec![Sampled], true);
        st.next();
        st.ran(Sampled, 0, true);
        assert_eq!(st.next(), Some((Sampled, 1)));
        st.ran(Sampled, 0, false);
        assert_eq!(st.next(), None, "ran dry");
        // Not the last tier: no second pass (escalation comes next).
        let mut st = Stages::new(ANYTIME.to_vec(), false);
        assert_eq!(drive(&mut st, &[5], &[]).len(), 4);
        // Declined stages are named, and a declined sampled never comes back.
        let mut st = Stages::new(ANYTIME.to_vec(), true);
        let ran = drive(&mut st, &[], &[Shapes, Sampled]);
        assert_eq!(ran, [(Candidates, 0), (Loop, 0)]);
        assert_eq!(
            st.why_done(),
            "every stage ran (candidates, loop); declined: shapes, sampled"
        );
    }

    #[test]
    fn a_stage_gets_its_share_while_a_later_one_may_run_and_the_last_the_rest() {
        use Strategy::*;
        let left = Duration::from_secs(200);
        let mut st = Stages::new(ANYTIME.to_vec(), true);
        assert_eq!(st.next(), Some((Candidates, 0)));
        assert_eq!(st.share(Candidates, left), Some(left.mul_f64(0.5)));
        st.ran(Candidates, 1, false);
        assert_eq!(st.next(), Some((Shapes, 0)));
        st.ran(Shapes, 1, false);
        assert_eq!(st.next(), Some((Sampled, 0)));
        assert_eq!(st.share(Sampled, left), Some(left.mul_f64(0.6)));
        st.ran(Sampled, 2, false);
        assert_eq!(st.next(), Some((Loop, 0)));
        assert_eq!(
            st.share(Loop, left),
            None,
            "the last listed stage: the rest"
        );
        st.ran(Loop, 0, false);
        assert_eq!(st.next(), Some((Sampled, 1)));
        assert_eq!(st.share(Sampled, left), None);
        // A later stage that declined does not hold a share back.
        let mut st = Stages::new(vec![Candidates, Shapes], true);
        st.next();
        st.declined(Shapes);
        assert_eq!(st.share(Candidates, left), None);
    }

    #[test]
    fn the_digest_is_bounded() {
        let d = digest(&["[candidates] ".to_string() + &"x".repeat(10_000)]);
        assert!(d.len() <= DIGEST_BYTES + 8, "{}", d.len());
        assert!(d.starts_with("What the candidate stages already tried"));
    }

    #[test]
    fn bad_values_fail_with_their_key_and_source() {
        let repo = Source::Repo(".github/patchloop.yml".into());
        let c = cfg("repair:\n  escalate: ['ollama:']\n", repo.clone());
        let e = build(&c, Some("m"), true, &opts(None)).unwrap_err();
        assert_eq!(e.key, "repair.escalate[0]");
        assert_eq!(e.origin, "repo (.github/patchloop.yml)");
        assert!(e.message.contains("unknown model spec"), "{e}");
        let c = cfg(
            "budgets:\n  max_steps: 0\n",
            Source::Flag("--max-steps".into()),
        );
        let e = build(&c, Some("m"), true, &opts(None)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`budgets.max_steps` (flag `--max-steps`): must be at least 1"
        );
        let c = cfg("repair:\n  candidates: 0\n", repo.clone());
        assert_eq!(
            build(&c, Some("m"), true, &opts(None)).unwrap_err().key,
            "repair.candidates"
        );
        let e = build(
            &cfg("test_timeout_seconds: 0\n", repo.clone()),
            Some("m"),
            true,
            &opts(None),
        )
        .unwrap_err();
        assert_eq!(e.key, "test_timeout_seconds");
        assert!(e.message.contains("0 s is not a limit"), "{e}");
        let e = build(&Config::default(), None, true, &opts(None)).unwrap_err();
        assert_eq!((e.key.as_str(), e.origin.as_str()), ("model", "default"));
        assert!(e.message.contains("--model"), "{e}");
    }

    #[test]
    fn the_plan_carries_globs_ci_paths_and_budgets_from_the_config() {
        let c = cfg(
            "test_globs: ['fixtures/**']\nallowed_ci_paths: ['.github/workflows/ci.yml']\n\
             reruns: 2\nbudgets:\n  max_steps: 7\nrepair:\n  strategies: [loop]\n  candidates: 6\n",
            Source::Repo(".github/patchloop.yml".into()),
        );
        let p = build(&c, Some("openai:m"), true, &opts(None)).unwrap();
        assert!(p.verify_policy.test_globs.contains(&"fixtures/**".into()));
        assert!(
            default_test_globs()
                .iter()
                .all(|g| p.verify_policy.test_globs.contains(g))
        );
        assert_eq!(
            p.verify_policy.allowed_ci_paths,
            [".github/workflows/ci.yml"]
        );
        assert_eq!((p.reruns, p.budgets.max_steps), (2, 7));
        assert_eq!(p.strategies, Some(vec![Strategy::Loop]));
        // The suite's limit: the default, and a configured one reaching the episode's tools.
        let d = build(&Config::default(), Some("m"), true, &opts(None)).unwrap();
        assert_eq!(d.test_timeout, Duration::from_secs(900));
        let c = cfg(
            "test_timeout_seconds: 1800\n",
            Source::Repo(".github/patchloop.yml".into()),
        );
        let long = build(&c, Some("m"), true, &opts(None)).unwrap();
        let plan = super::super::Plan::new(
            crate::agent::episode::EpisodeConfig {
                budgets: Default::default(),
                tools: Default::default(),
            },
            std::path::Path::new("/tmp"),
            "r",
        )
        .with_plan(&long);
        assert_eq!(plan.episode.tools.test_timeout, Duration::from_secs(1800));
        // Not configured: routed by tier.
        let d = build(&Config::default(), Some("m"), true, &opts(None)).unwrap();
        assert_eq!(d.strategies, None);
        assert_eq!(p.candidates.count, 6);
    }

    #[test]
    fn the_differential_box_is_also_the_candidates_comparison_and_zero_turns_both_off() {
        let on = build(&Config::default(), Some("m"), true, &opts(None)).unwrap();
        let run = |r: &RepairPlan| {
            super::super::Plan::new(
                crate::agent::episode::EpisodeConfig {
                    budgets: Default::default(),
                    tools: Default::default(),
                },
                std::path::Path::new("/tmp"),
                "t",
            )
            .with_plan(r)
        };
        let ten = Some(std::time::Duration::from_secs(10));
        let p = run(&on);
        assert_eq!((p.differential, p.candidates.consensus), (ten, ten));
        let c = cfg(
            "verify:\n  differential_seconds: 0\n",
            Source::Repo(".github/patchloop.yml".into()),
        );
        let p = run(&build(&c, Some("m"), true, &opts(None)).unwrap());
        assert_eq!((p.differential, p.candidates.consensus), (None, None));
    }
}
