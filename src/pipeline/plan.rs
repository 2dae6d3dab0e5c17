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
    /// The configured test command, typed (the image's own when `None`).
    pub test_cmd: Option<TestCommand>,
    /// The verifier's policy: the configured test globs over the defaults, the allowed CI
    /// paths (`tests_dirs` and the project kind come from the image at run time).
    pub verify_policy: PolicyConfig,
    /// Verification probes behaviour beyond the tested points (`verify.probe`).
    pub probe: bool,
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
            "no strategy: list candidates and/or loop".into(),
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
        test_cmd,
        verify_policy: PolicyConfig {
            test_globs,
            allowed_ci_paths: cfg.allowed_ci_paths.clone(),
            ..PolicyConfig::default()
        },
        probe: cfg.verify.probe,
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

/// Models up to this size (billions of parameters) run the candidates alone.
pub const SMALL_MODEL_B: f64 = 3.0;

/// The strategies of a tier when none are configured, and why: a small model (≤ 3B by its
/// name) on the first tier runs the candidates alone (on the benchmark the loop after them
/// resolved 0 of 8 with a model of the same size, spending most of the budget); an escalated
/// tier or a larger model runs the loop with the ranked context; a first model of unknown
/// size (a hosted API, a test double) both, candidates first. Pure.
pub fn routed(tier: usize, spec: &str) -> (Vec<Strategy>, String) {
    let size = size_of(spec);
    match (tier, size) {
        (_, Some(b)) if b <= SMALL_MODEL_B => (
            vec![Strategy::Candidates],
            format!("a small model ({b}B): the candidates alone"),
        ),
        (0, Some(b)) => (
            vec![Strategy::Loop],
            format!("a larger model ({b}B): the loop with the ranked context"),
        ),
        (0, None) => (
            vec![Strategy::Candidates, Strategy::Loop],
            "a model of unknown size: the candidates, then the loop".into(),
        ),
        (t, _) => (
            vec![Strategy::Loop],
            format!("an escalated tier ({t}): the loop with the ranked context"),
        ),
    }
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
        assert_eq!(s(0, "openai:qwen2.5-coder-1.5b"), [Strategy::Candidates]);
        assert_eq!(s(1, "ollama:qwen2.5-coder:0.5b"), [Strategy::Candidates]);
        assert_eq!(s(0, "ollama:qwen2.5-coder:14b"), [Strategy::Loop]);
        assert_eq!(s(1, "openai:gpt-4o"), [Strategy::Loop]);
        assert_eq!(
            s(0, "openai:gpt-4o"),
            [Strategy::Candidates, Strategy::Loop]
        );
        assert!(
            routed(0, "openai:qwen2.5-coder-1.5b")
                .1
                .contains("small model (1.5B)")
        );
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
        // Not configured: routed by tier.
        let d = build(&Config::default(), Some("m"), true, &opts(None)).unwrap();
        assert_eq!(d.strategies, None);
        assert_eq!(p.candidates.count, 6);
    }
}
