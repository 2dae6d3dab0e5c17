//! Configuration: `.github/patchloop.yml` in the repository, org-wide defaults from
//! `patchloop.yml` in the organisation's `.github` repository, and action inputs.
//!
//! Precedence: action inputs > repository > organisation > built-in defaults. Every merged
//! value remembers where it came from (`patchloop config show`). Unknown keys are errors
//! that name the key, the file and the line, and list the valid keys. The schema has no
//! field that could reach Docker (no mounts, no images): repository content must not be
//! able to widen the sandbox.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod budgets;
pub mod repair;
pub mod verify;

pub use budgets::{BudgetArgs, Budgets};

/// How to deliver a verified patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// ```suggestion comments in one review; the rest in one comment.
    Suggest,
    /// One comment with the whole diff.
    Comment,
    /// A branch and a pull request.
    Pr,
    /// Post nothing; report what would be posted.
    DryRun,
}

impl std::str::FromStr for Mode {
    type Err = String;
    fn from_str(s: &str) -> Result<Mode, String> {
        match s {
            "suggest" => Ok(Mode::Suggest),
            "comment" => Ok(Mode::Comment),
            "pr" => Ok(Mode::Pr),
            "dry-run" => Ok(Mode::DryRun),
            o => Err(format!(
                "unknown mode `{o}` (valid: suggest, comment, pr, dry-run)"
            )),
        }
    }
}

impl Mode {
    pub fn as_str(&self) -> &'static str {
        match self {
            Mode::Suggest => "suggest",
            Mode::Comment => "comment",
            Mode::Pr => "pr",
            Mode::DryRun => "dry-run",
        }
    }
}

/// Repository path of the per-repo config.
pub const REPO_CONFIG_PATH: &str = ".github/patchloop.yml";
/// Path inside the organisation's `.github` repository.
pub const ORG_CONFIG_PATH: &str = "patchloop.yml";

/// Who may start a run with `/patchloop fix`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum MinPermission {
    Write,
    Maintain,
    Admin,
}

impl MinPermission {
    pub fn as_str(&self) -> &'static str {
        match self {
            MinPermission::Write => "write",
            MinPermission::Maintain => "maintain",
            MinPermission::Admin => "admin",
        }
    }

    /// Whether a repository permission (`admin`, `maintain`, `write`, `triage`, `read`,
    /// `none`) meets this minimum.
    pub fn allows(&self, permission: &str) -> bool {
        let rank = match permission {
            "admin" => 3,
            "maintain" => 2,
            "write" => 1,
            _ => return false,
        };
        rank > *self as u8
    }
}

/// What happens to a verified patch when there is no pull request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NoPrFallback {
    /// Open a pull request from a `patchloop/` branch.
    Pr,
    /// Post nothing; the job summary still has the patch.
    None,
}

/// Budgets for one repair.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetsFile {
    /// Maximum agent steps (model turns).
    pub max_steps: Option<u64>,
    /// Maximum model spend in US dollars (unknown models cost 0 and still count tokens).
    pub max_cost_usd: Option<f64>,
    /// Maximum tokens (prompt + completion).
    pub max_tokens: Option<u64>,
    /// Maximum wall-clock seconds of the agent episode.
    pub max_seconds: Option<u64>,
    /// The model's context window in tokens (compaction starts at three quarters of it).
    pub context_tokens: Option<u64>,
}

/// Which events and people may start a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TriggersFile {
    /// Repair on `pull_request` events too (off by default).
    pub pull_request: Option<bool>,
    /// Minimum repository permission for `/patchloop fix` (write, maintain or admin).
    pub comment_min_permission: Option<MinPermission>,
    /// If set, only these logins may use `/patchloop fix` (they still need the permission).
    pub comment_users: Option<Vec<String>>,
}

/// One config file (or the action inputs) as written: every key optional.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "patchloop configuration (.github/patchloop.yml)")]
pub struct ConfigFile {
    /// Model name, e.g. `qwen2.5-coder:7b`.
    pub model: Option<String>,
    /// How a verified patch is delivered: suggest, comment, pr or dry-run.
    pub mode: Option<Mode>,
    /// Command that runs the tests (default: taken from the failed job's log).
    pub test_command: Option<String>,
    /// Globs of test files; the agent cannot change them.
    pub test_globs: Option<Vec<String>>,
    /// How many times verification re-runs the tests (flakiness check).
    pub reruns: Option<u32>,
    /// The longest one run of the whole test suite may take, in seconds (default 900): the
    /// reproduction and every verification run. Runs after the reproduction are cut sooner,
    /// at three times its duration plus a minute, so a patch that hangs costs little.
    pub test_timeout_seconds: Option<u64>,
    pub budgets: Option<BudgetsFile>,
    /// Paths under `.github/` a patch may change (CI-config fixes). Empty: none.
    pub allowed_ci_paths: Option<Vec<String>>,
    pub triggers: Option<TriggersFile>,
    /// Post a short "no verified fix" report with the receipt (default false).
    pub report_unverified: Option<bool>,
    /// With no pull request: `pr` (open one) or `none`.
    pub no_pr_fallback: Option<NoPrFallback>,
    /// How the repair searches: strategies, model tiers, candidates.
    pub repair: Option<repair::RepairFile>,
    /// Corrections to the Python test environment prepare builds from what CI installs; read
    /// from the repository's own `.github/patchloop.yml` when the image is prepared.
    pub dependencies: Option<DependenciesFile>,
    /// How verification judges a patch beyond the tests: the probe, a model review.
    pub verify: Option<verify::VerifyFile>,
}

/// `dependencies:` (Python): what the sandbox installs for the tests besides what CI installs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DependenciesFile {
    /// Requirements to install too (PEP 508, e.g. `numpy<2`), e.g. a version of a package
    /// that failed to install.
    pub add: Option<Vec<String>>,
    /// Packages to leave out (by name) of what CI or the project's metadata names.
    pub skip: Option<Vec<String>>,
    /// Resolve the test dependencies as of a date (`2023-05-30`, an ISO datetime) or of the
    /// checkout's own release (`release`: its PKG-INFO, else its git commit): only what the
    /// index had then. Without it, dependencies resolved today that cannot collect an old
    /// checkout's tests are resolved again as of its release.
    pub as_of: Option<String>,
}

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    Org(String),
    Repo(String),
    /// A file given with `--config` (or the action's `config` input).
    File(String),
    Input(String),
    /// A command-line flag.
    Flag(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => write!(f, "default"),
            Source::Org(p) => write!(f, "org ({p})"),
            Source::Repo(p) => write!(f, "repo ({p})"),
            Source::File(p) => write!(f, "file ({p})"),
            Source::Input(n) => write!(f, "action input `{n}`"),
            Source::Flag(n) => write!(f, "flag `{n}`"),
        }
    }
}

/// The merged configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub model: Option<String>,
    pub mode: Mode,
    pub test_command: Option<String>,
    pub test_globs: Vec<String>,
    pub reruns: u32,
    /// The longest one run of the whole suite may take (see [`ConfigFile`]).
    pub test_timeout_seconds: u64,
    /// Every limit of the agent episode.
    pub budgets: Budgets,
    pub allowed_ci_paths: Vec<String>,
    pub pull_request: bool,
    pub comment_min_permission: MinPermission,
    pub comment_users: Vec<String>,
    pub report_unverified: bool,
    pub no_pr_fallback: NoPrFallback,
    /// Strategies, escalation tiers and the candidate strategy's knobs.
    pub repair: repair::Repair,
    /// The costlier generalisation layers of verification.
    pub verify: verify::Verify,
    /// Dotted key → where its value came from.
    pub sources: BTreeMap<&'static str, Source>,
}

impl Default for Config {
    fn default() -> Config {
        let mut c = Config {
            model: None,
            mode: Mode::Suggest,
            test_command: None,
            test_globs: vec![
                "tests/**".into(),
                "test/**".into(),
                "**/test_*.py".into(),
                "**/*_test.py".into(),
                "**/conftest.py".into(),
            ],
            reruns: 3,
            test_timeout_seconds: TEST_TIMEOUT_SECONDS,
            budgets: Budgets::default(),
            allowed_ci_paths: Vec::new(),
            pull_request: false,
            comment_min_permission: MinPermission::Write,
            comment_users: Vec::new(),
            report_unverified: false,
            no_pr_fallback: NoPrFallback::Pr,
            repair: repair::Repair::default(),
            verify: verify::Verify::default(),
            sources: BTreeMap::new(),
        };
        for k in KEYS {
            c.sources.insert(k, Source::Default);
        }
        c
    }
}

/// The default limit of one run of the whole suite: the verifier's, since the reproduction
/// must finish for there to be anything to repair (a 280 s suite timed out at 300 s).
pub const TEST_TIMEOUT_SECONDS: u64 = 900;

/// Every dotted key, in display order.
pub const KEYS: [&str; 28] = [
    "model",
    "mode",
    "test_command",
    "test_globs",
    "reruns",
    "test_timeout_seconds",
    "budgets.max_steps",
    "budgets.max_cost_usd",
    "budgets.max_tokens",
    "budgets.max_seconds",
    "budgets.context_tokens",
    "allowed_ci_paths",
    "triggers.pull_request",
    "triggers.comment_min_permission",
    "triggers.comment_users",
    "report_unverified",
    "no_pr_fallback",
    "repair.strategies",
    "repair.escalate",
    "repair.candidates",
    "repair.edit_format",
    "repair.parallel",
    "repair.context_bytes",
    "repair.infill_shapes",
    "repair.overlap_checks",
    "verify.probe",
    "verify.differential_seconds",
    "verify.review_model",
];

/// A config file that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{file}{}: `{key}`: {message}", line.map(|l| format!(" line {l}")).unwrap_or_default())]
pub struct ConfigError {
    pub file: String,
    pub line: Option<usize>,
    /// Dotted path of the bad key.
    pub key: String,
    /// serde's message, which names the unknown key and lists the valid ones.
    pub message: String,
}

/// Parse one YAML file (`origin` names it in errors). Empty files are an empty config.
pub fn parse_file(origin: &str, text: &str) -> Result<ConfigFile, ConfigError> {
    if text.trim().is_empty() {
        return Ok(ConfigFile::default());
    }
    let de = serde_yaml::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let line = inner.location().map(|l| l.line());
        let msg = inner.to_string();
        // serde_yaml appends " at line L column C"; the line is reported separately.
        let msg = match msg.find(" at line ") {
            Some(i) => msg[..i].to_string(),
            None => msg,
        };
        let key = match unknown_field(&msg) {
            Some(k) if path == "." || path.is_empty() => k,
            _ => path,
        };
        ConfigError {
            file: origin.to_string(),
            line,
            key,
            message: msg,
        }
    })
}

fn unknown_field(msg: &str) -> Option<String> {
    let rest = msg.split("unknown field `").nth(1)?;
    Some(rest.split('`').next()?.to_string())
}

fn set<T: Clone>(
    dst: &mut T,
    src: Option<&T>,
    key: &'static str,
    source: &Source,
    sources: &mut BTreeMap<&'static str, Source>,
) {
    if let Some(v) = src {
        *dst = v.clone();
        sources.insert(key, source.clone());
    }
}

impl Config {
    /// Apply one layer on top (call in order: org, repo, inputs).
    pub fn apply(&mut self, f: &ConfigFile, source: Source) {
        let s = &mut self.sources;
        if let Some(m) = &f.model {
            self.model = Some(m.clone());
            s.insert("model", source.clone());
        }
        set(&mut self.mode, f.mode.as_ref(), "mode", &source, s);
        if let Some(t) = &f.test_command {
            self.test_command = Some(t.clone());
            s.insert("test_command", source.clone());
        }
        set(
            &mut self.test_globs,
            f.test_globs.as_ref(),
            "test_globs",
            &source,
            s,
        );
        set(&mut self.reruns, f.reruns.as_ref(), "reruns", &source, s);
        set(
            &mut self.test_timeout_seconds,
            f.test_timeout_seconds.as_ref(),
            "test_timeout_seconds",
            &source,
            s,
        );
        if let Some(b) = &f.budgets {
            let mut note = |key: &'static str, given: bool| {
                if given {
                    s.insert(key, source.clone());
                }
            };
            let budgets = &mut self.budgets;
            if let Some(n) = b.max_steps {
                budgets.max_steps = usize::try_from(n).unwrap_or(usize::MAX);
            }
            note("budgets.max_steps", b.max_steps.is_some());
            if let Some(c) = b.max_cost_usd {
                budgets.max_cost_usd = c;
            }
            note("budgets.max_cost_usd", b.max_cost_usd.is_some());
            if let Some(n) = b.max_tokens {
                budgets.max_tokens = n;
            }
            note("budgets.max_tokens", b.max_tokens.is_some());
            if let Some(n) = b.max_seconds {
                budgets.max_wall = std::time::Duration::from_secs(n);
            }
            note("budgets.max_seconds", b.max_seconds.is_some());
            if let Some(n) = b.context_tokens {
                budgets.context_tokens = usize::try_from(n).unwrap_or(usize::MAX);
            }
            note("budgets.context_tokens", b.context_tokens.is_some());
        }
        set(
            &mut self.allowed_ci_paths,
            f.allowed_ci_paths.as_ref(),
            "allowed_ci_paths",
            &source,
            s,
        );
        if let Some(t) = &f.triggers {
            set(
                &mut self.pull_request,
                t.pull_request.as_ref(),
                "triggers.pull_request",
                &source,
                s,
            );
            set(
                &mut self.comment_min_permission,
                t.comment_min_permission.as_ref(),
                "triggers.comment_min_permission",
                &source,
                s,
            );
            set(
                &mut self.comment_users,
                t.comment_users.as_ref(),
                "triggers.comment_users",
                &source,
                s,
            );
        }
        set(
            &mut self.report_unverified,
            f.report_unverified.as_ref(),
            "report_unverified",
            &source,
            s,
        );
        set(
            &mut self.no_pr_fallback,
            f.no_pr_fallback.as_ref(),
            "no_pr_fallback",
            &source,
            s,
        );
        if let Some(r) = &f.repair {
            let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
            let rep = &mut self.repair;
            set(
                &mut rep.strategies,
                r.strategies.as_ref(),
                "repair.strategies",
                &source,
                s,
            );
            set(
                &mut rep.escalate,
                r.escalate.as_ref(),
                "repair.escalate",
                &source,
                s,
            );
            set(
                &mut rep.candidates,
                r.candidates.map(to_usize).as_ref(),
                "repair.candidates",
                &source,
                s,
            );
            set(
                &mut rep.edit_format,
                r.edit_format.as_ref(),
                "repair.edit_format",
                &source,
                s,
            );
            set(
                &mut rep.parallel,
                r.parallel.map(to_usize).as_ref(),
                "repair.parallel",
                &source,
                s,
            );
            set(
                &mut rep.context_bytes,
                r.context_bytes.map(to_usize).as_ref(),
                "repair.context_bytes",
                &source,
                s,
            );
            set(
                &mut rep.infill_shapes,
                r.infill_shapes.as_ref(),
                "repair.infill_shapes",
                &source,
                s,
            );
            set(
                &mut rep.overlap_checks,
                r.overlap_checks.map(Some).as_ref(),
                "repair.overlap_checks",
                &source,
                s,
            );
        }
        if let Some(v) = &f.verify {
            set(
                &mut self.verify.probe,
                v.probe.as_ref(),
                "verify.probe",
                &source,
                s,
            );
            set(
                &mut self.verify.differential_seconds,
                v.differential_seconds.as_ref(),
                "verify.differential_seconds",
                &source,
                s,
            );
            if v.review_model.is_some() {
                set(
                    &mut self.verify.review_model,
                    Some(&v.review_model),
                    "verify.review_model",
                    &source,
                    s,
                );
            }
        }
    }

    /// Merge the layers: inputs > repo > org > defaults.
    pub fn merge(
        org: Option<(&str, &ConfigFile)>,
        repo: Option<(&str, &ConfigFile)>,
        inputs: &[(String, ConfigFile)],
    ) -> Config {
        let mut c = Config::default();
        if let Some((p, f)) = org {
            c.apply(f, Source::Org(p.to_string()));
        }
        if let Some((p, f)) = repo {
            c.apply(f, Source::Repo(p.to_string()));
        }
        for (name, f) in inputs {
            c.apply(f, Source::Input(name.clone()));
        }
        c
    }

    fn value_of(&self, key: &str) -> String {
        let list = |v: &[String]| format!("[{}]", v.join(", "));
        match key {
            "model" => self
                .model
                .clone()
                .unwrap_or_else(|| "(agent default)".into()),
            "mode" => self.mode.as_str().into(),
            "test_command" => self
                .test_command
                .clone()
                .unwrap_or_else(|| "(from the failed job's log)".into()),
            "test_globs" => list(&self.test_globs),
            "reruns" => self.reruns.to_string(),
            "test_timeout_seconds" => self.test_timeout_seconds.to_string(),
            "budgets.max_steps" => self.budgets.max_steps.to_string(),
            "budgets.max_cost_usd" => format!("{}", self.budgets.max_cost_usd),
            "budgets.max_tokens" => self.budgets.max_tokens.to_string(),
            "budgets.max_seconds" => self.budgets.max_wall.as_secs().to_string(),
            "budgets.context_tokens" => self.budgets.context_tokens.to_string(),
            "allowed_ci_paths" => list(&self.allowed_ci_paths),
            "triggers.pull_request" => self.pull_request.to_string(),
            "triggers.comment_min_permission" => self.comment_min_permission.as_str().into(),
            "triggers.comment_users" => list(&self.comment_users),
            "report_unverified" => self.report_unverified.to_string(),
            "no_pr_fallback" => format!("{:?}", self.no_pr_fallback).to_lowercase(),
            "repair.strategies" => format!(
                "[{}]",
                self.repair
                    .strategies
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "repair.escalate" => list(&self.repair.escalate),
            "repair.candidates" => self.repair.candidates.to_string(),
            "repair.edit_format" => self.repair.edit_format.as_str().into(),
            "repair.parallel" => self.repair.parallel.to_string(),
            "repair.context_bytes" => self.repair.context_bytes.to_string(),
            "repair.infill_shapes" => format!(
                "[{}]",
                self.repair
                    .infill_shapes
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "repair.overlap_checks" => self.repair.overlap_checks.map_or(
                "auto (no when the model server is on this machine)".into(),
                |b| b.to_string(),
            ),
            "verify.probe" => self.verify.probe.to_string(),
            "verify.differential_seconds" => match self.verify.differential_seconds {
                0 => "0 (off)".into(),
                n => n.to_string(),
            },
            "verify.review_model" => self
                .verify
                .review_model
                .clone()
                .unwrap_or_else(|| "(off)".into()),
            _ => String::new(),
        }
    }

    /// `key = value  # source` lines for `patchloop config show`.
    pub fn render_show(&self) -> String {
        let width = KEYS.iter().map(|k| k.len()).max().unwrap_or(0);
        let mut out = String::new();
        for k in KEYS {
            let src = self.sources.get(k).cloned().unwrap_or(Source::Default);
            out.push_str(&format!("{k:<width$} = {}  # {src}\n", self.value_of(k)));
        }
        out
    }
}

/// The JSON Schema of the config file (for editor completion).
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(ConfigFile);
    serde_json::to_string_pretty(&schema).unwrap_or_default()
}

/// Action inputs (`INPUT_*` variables) as a config layer, one entry per input set.
pub fn inputs_from_env(
    get: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, ConfigFile)>, ConfigError> {
    // The runner keeps hyphens in input names (`INPUT_MAX-STEPS`); accept `_` too.
    let input = |name: &str| {
        let up = name.to_uppercase();
        get(&format!("INPUT_{up}"))
            .or_else(|| get(&format!("INPUT_{}", up.replace('-', "_"))))
            .filter(|v| !v.trim().is_empty())
    };
    let bad = |name: &str, msg: String| ConfigError {
        file: "action inputs".into(),
        line: None,
        key: name.into(),
        message: msg,
    };
    let mut out = Vec::new();
    let mut push = |name: &str, f: ConfigFile| out.push((name.to_string(), f));
    if let Some(v) = input("model") {
        push(
            "model",
            ConfigFile {
                model: Some(v),
                ..Default::default()
            },
        );
    }
    if let Some(v) = input("mode") {
        let m = v.trim().parse::<Mode>().map_err(|e| bad("mode", e))?;
        push(
            "mode",
            ConfigFile {
                mode: Some(m),
                ..Default::default()
            },
        );
    }
    if let Some(v) = input("test-command") {
        push(
            "test-command",
            ConfigFile {
                test_command: Some(v),
                ..Default::default()
            },
        );
    }
    if let Some(v) = input("reruns") {
        let n = v
            .trim()
            .parse()
            .map_err(|_| bad("reruns", format!("`{v}` is not a whole number")))?;
        push(
            "reruns",
            ConfigFile {
                reruns: Some(n),
                ..Default::default()
            },
        );
    }
    if let Some(v) = input("test-timeout-seconds") {
        let n = v.trim().parse().map_err(|_| {
            bad(
                "test-timeout-seconds",
                format!("`{v}` is not a whole number of seconds"),
            )
        })?;
        push(
            "test-timeout-seconds",
            ConfigFile {
                test_timeout_seconds: Some(n),
                ..Default::default()
            },
        );
    }
    if let Some(v) = input("max-steps") {
        let n = v
            .trim()
            .parse()
            .map_err(|_| bad("max-steps", format!("`{v}` is not a whole number")))?;
        push(
            "max-steps",
            ConfigFile {
                budgets: Some(BudgetsFile {
                    max_steps: Some(n),
                    ..Default::default()
                }),
                ..Default::default()
            },
        );
    }
    if let Some(v) = input("max-cost") {
        let n: f64 = v
            .trim()
            .trim_start_matches('$')
            .parse()
            .map_err(|_| bad("max-cost", format!("`{v}` is not a number of dollars")))?;
        push(
            "max-cost",
            ConfigFile {
                budgets: Some(BudgetsFile {
                    max_cost_usd: Some(n),
                    ..Default::default()
                }),
                ..Default::default()
            },
        );
    }
    if let Some(v) = input("strategies") {
        let list = repair::parse_strategies(&v).map_err(|e| bad("strategies", e))?;
        push(
            "strategies",
            ConfigFile {
                repair: Some(repair::RepairFile {
                    strategies: Some(list),
                    ..Default::default()
                }),
                ..Default::default()
            },
        );
    }
    if let Some(v) = input("escalate") {
        // Comma- or newline-separated model specs (a YAML block scalar works too).
        let list: Vec<String> = v
            .split([',', '\n'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        push(
            "escalate",
            ConfigFile {
                repair: Some(repair::RepairFile {
                    escalate: Some(list),
                    ..Default::default()
                }),
                ..Default::default()
            },
        );
    }
    Ok(out)
}

/// `patchloop config …`.
#[derive(Debug, clap::Subcommand)]
pub enum ConfigCli {
    /// Print the JSON Schema of .github/patchloop.yml.
    Schema,
    /// Print the merged configuration and where each value came from (defaults < org file <
    /// the repository's .github/patchloop.yml < --config < action inputs in INPUT_*).
    Show {
        /// Repository checkout holding .github/patchloop.yml.
        #[arg(long, default_value = ".")]
        repo_dir: std::path::PathBuf,
        /// An org-level patchloop.yml to merge under the repository's (local file).
        #[arg(long)]
        org_file: Option<std::path::PathBuf>,
        /// Another config file, merged over the repository's.
        #[arg(long)]
        config: Option<std::path::PathBuf>,
    },
}

/// Read a config file that must exist.
fn read_required(p: &std::path::Path) -> anyhow::Result<(String, ConfigFile)> {
    use anyhow::Context;
    let t = std::fs::read_to_string(p)
        .with_context(|| format!("reading the config file {}", p.display()))?;
    let origin = p.display().to_string();
    Ok((origin.clone(), parse_file(&origin, &t)?))
}

/// The command-line flags (budgets, repair, the model's context window) as one top layer;
/// `None` when no flag was given.
pub fn flags_layer(
    budgets: &BudgetArgs,
    repair: &repair::RepairArgs,
    context_tokens: Option<u64>,
) -> Option<ConfigFile> {
    let mut layer = budgets.layer(context_tokens).unwrap_or_default();
    layer.repair = repair.layer();
    (layer != ConfigFile::default()).then_some(layer)
}

/// The configuration of a local run (`fix`, `eval`, `config show`): defaults < `org_file` <
/// the checkout's `.github/patchloop.yml` (when present) < `extra` (`--config`). The action
/// reads the same layers through the API ([`crate::github::action::load_config`]) and adds its
/// inputs; command-line flags go on top with [`Source::Flag`].
pub fn load_local(
    repo_dir: Option<&std::path::Path>,
    extra: Option<&std::path::Path>,
    org_file: Option<&std::path::Path>,
) -> anyhow::Result<Config> {
    use anyhow::Context;
    let mut c = Config::default();
    if let Some(p) = org_file {
        let (origin, f) = read_required(p)?;
        c.apply(&f, Source::Org(origin));
    }
    if let Some(repo_dir) = repo_dir {
        let repo_path = repo_dir.join(REPO_CONFIG_PATH);
        match std::fs::read_to_string(&repo_path) {
            Ok(t) => c.apply(
                &parse_file(REPO_CONFIG_PATH, &t)?,
                Source::Repo(REPO_CONFIG_PATH.into()),
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("reading {}", repo_path.display())),
        }
    }
    if let Some(p) = extra {
        let (origin, f) = read_required(p)?;
        c.apply(&f, Source::File(origin));
    }
    Ok(c)
}

/// `patchloop config schema|show`.
pub fn cli(cmd: ConfigCli) -> anyhow::Result<()> {
    match cmd {
        ConfigCli::Schema => {
            println!("{}", schema_json());
        }
        ConfigCli::Show {
            repo_dir,
            org_file,
            config,
        } => {
            let mut c = load_local(Some(&repo_dir), config.as_deref(), org_file.as_deref())?;
            for (name, f) in inputs_from_env(|k| std::env::var(k).ok())? {
                c.apply(&f, Source::Input(name));
            }
            print!("{}", c.render_show());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tidy {
    /// The committed schema (for editor completion) is the generated one.
    #[test]
    fn committed_schema_is_current() {
        let committed = include_str!("../../docs/patchloop.schema.json");
        assert_eq!(
            committed.trim_end(),
            super::schema_json(),
            "run `patchloop config schema > docs/patchloop.schema.json`"
        );
    }
}
