//! The one shape every repair strategy returns ([`Attempt`]), and the one [`Ledger`] they all
//! charge.
//!
//! A strategy (the candidates, the loop, and those to come) is handed the ledger and a model
//! tier; it asks [`Ledger::check`] before each model call and [`Ledger::charge`]s each reply,
//! and it returns what it proposes. It never judges its own patches: the search hands the
//! proposals to the verifier (`pipeline::search`).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::agent::model::{Filled, Infill, Model, ModelError, Request, Response, Usage};
use crate::agent::origin::Origin;
use crate::config::Budgets;
pub use crate::verify::attempts::{Cap, Outcome, SpendReport, TierSpend};

/// Why a strategy (or the loop's episode) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    Submitted,
    StepLimit,
    TimeLimit,
    TokenLimit,
    CostLimit,
    LoopDetected,
    FormatErrors,
    ModelRefusal,
    /// A step filled the workspace quota (docs/security.md D4).
    QuotaExceeded,
    /// The candidate strategy (not the loop) found no candidate that passes (it never ends a
    /// loop episode).
    NoCandidate,
    /// The stage's share of the wall time is spent (the search goes on with the next stage).
    StageShare,
    Error,
}

impl StopReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            StopReason::Submitted => "submitted",
            StopReason::StepLimit => "step_limit",
            StopReason::TimeLimit => "time_limit",
            StopReason::TokenLimit => "token_limit",
            StopReason::CostLimit => "cost_limit",
            StopReason::LoopDetected => "loop_detected",
            StopReason::FormatErrors => "format_errors",
            StopReason::ModelRefusal => "model_refusal",
            StopReason::QuotaExceeded => "quota_exceeded",
            StopReason::NoCandidate => "no_candidate",
            StopReason::StageShare => "stage_share",
            StopReason::Error => "error",
        }
    }

    /// The budget cap this reason names, if it is one (the search goes no further).
    pub fn cap(&self) -> Option<Cap> {
        match self {
            StopReason::TimeLimit => Some(Cap::Time),
            StopReason::TokenLimit => Some(Cap::Tokens),
            StopReason::CostLimit => Some(Cap::Cost),
            _ => None,
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn as_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// What was spent: by one attempt, one model tier, or the whole repair.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Spend {
    /// Loop steps (model turns of the agent loop; candidates take none).
    pub steps: usize,
    pub usage: Usage,
    pub cost_usd: f64,
    /// Time waiting for the model server.
    #[serde(serialize_with = "as_secs")]
    pub model: Duration,
    /// Model calls answered.
    pub calls: usize,
}

impl Spend {
    /// What `self` spent beyond `before` (a snapshot taken earlier of the same account).
    pub fn since(&self, before: &Spend) -> Spend {
        Spend {
            steps: self.steps.saturating_sub(before.steps),
            usage: Usage {
                prompt_tokens: self
                    .usage
                    .prompt_tokens
                    .saturating_sub(before.usage.prompt_tokens),
                completion_tokens: self
                    .usage
                    .completion_tokens
                    .saturating_sub(before.usage.completion_tokens),
            },
            cost_usd: (self.cost_usd - before.cost_usd).max(0.0),
            model: self.model.saturating_sub(before.model),
            calls: self.calls.saturating_sub(before.calls),
        }
    }

    fn add(&mut self, other: &Spend) {
        self.steps += other.steps;
        self.usage.prompt_tokens += other.usage.prompt_tokens;
        self.usage.completion_tokens += other.usage.completion_tokens;
        self.cost_usd += other.cost_usd;
        self.model += other.model;
        self.calls += other.calls;
    }
}

#[derive(Debug, Default)]
struct Book {
    total: Spend,
    tiers: Vec<Spend>,
}

/// The one budget of a repair and everything spent against it, in total and per model tier.
///
/// Every strategy asks [`Ledger::check`] before each model call and charges each reply; wall
/// time, tokens and dollars are limits on the whole repair (each attempt gets what is left).
/// Steps are the loop's own bound per episode (`Budgets::max_steps`), counted here for the
/// reports. Shared by reference: the candidate strategy charges from its consumer while its
/// producer checks before the next request.
#[derive(Debug)]
pub struct Ledger {
    budgets: Budgets,
    started: Instant,
    book: Mutex<Book>,
    /// When the running stage's share of the wall time ends (`None`: no stage share).
    stage_end: Mutex<Option<Instant>>,
}

impl Ledger {
    pub fn new(budgets: Budgets) -> Ledger {
        Ledger {
            budgets,
            started: Instant::now(),
            book: Mutex::new(Book::default()),
            stage_end: Mutex::new(None),
        }
    }

    /// The running stage may spend `share` more of the wall time (`None`: the rest of it).
    /// Its model calls are then refused with [`StopReason::StageShare`] once the share is
    /// spent, and bounded by it; the repair's own caps still come first.
    pub fn set_stage_share(&self, share: Option<Duration>) {
        let end = share.map(|d| Instant::now() + d);
        *self.stage_end.lock().unwrap_or_else(|e| e.into_inner()) = end;
    }

    fn stage_left(&self) -> Option<Duration> {
        let end = *self.stage_end.lock().unwrap_or_else(|e| e.into_inner());
        end.map(|e| e.saturating_duration_since(Instant::now()))
    }

    /// The first of the repair's caps that is used up, if any, the stage's share left out:
    /// what the search asks before it starts the next stage.
    pub fn check_repair(&self) -> Option<StopReason> {
        let total = self.book().total;
        let b = &self.budgets;
        if self.started.elapsed() >= b.max_wall {
            Some(StopReason::TimeLimit)
        } else if total.usage.total() >= b.max_tokens {
            Some(StopReason::TokenLimit)
        } else if b.max_cost_usd > 0.0 && total.cost_usd >= b.max_cost_usd {
            Some(StopReason::CostLimit)
        } else {
            None
        }
    }

    pub fn budgets(&self) -> &Budgets {
        &self.budgets
    }

    fn book(&self) -> std::sync::MutexGuard<'_, Book> {
        // A panic while holding the lock cannot leave the book half-written (plain adds).
        self.book.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The first cap that is used up, if any, the running stage's share last: asked before
    /// each model call.
    pub fn check(&self) -> Option<StopReason> {
        self.check_repair().or_else(|| {
            self.stage_left()
                .is_some_and(|d| d.is_zero())
                .then_some(StopReason::StageShare)
        })
    }

    /// Wall time left, for the repair and within the running stage's share (a model call is
    /// bounded by it).
    pub fn wall_left(&self) -> Duration {
        let repair = self.budgets.max_wall.saturating_sub(self.started.elapsed());
        self.stage_left().map_or(repair, |s| s.min(repair))
    }

    /// Wall time left for the repair, whatever the running stage's share.
    pub fn repair_left(&self) -> Duration {
        self.budgets.max_wall.saturating_sub(self.started.elapsed())
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// One model reply of `model` on `tier`.
    pub fn charge(&self, tier: usize, model: &dyn Model, usage: &Usage, took: Duration) {
        self.add(
            tier,
            &Spend {
                usage: *usage,
                cost_usd: model.cost(usage),
                model: took,
                calls: 1,
                ..Spend::default()
            },
        );
    }

    /// One step of the loop on `tier`.
    pub fn step(&self, tier: usize) {
        self.add(
            tier,
            &Spend {
                steps: 1,
                ..Spend::default()
            },
        );
    }

    fn add(&self, tier: usize, s: &Spend) {
        let mut book = self.book();
        book.total.add(s);
        if book.tiers.len() <= tier {
            book.tiers.resize(tier + 1, Spend::default());
        }
        book.tiers[tier].add(s);
    }

    /// Everything spent so far.
    pub fn total(&self) -> Spend {
        self.book().total
    }

    pub fn report(&self, stopped_by: Option<StopReason>) -> SpendReport {
        let book = self.book();
        let ms = |d: Duration| d.as_millis() as u64;
        SpendReport {
            steps: book.total.steps,
            calls: book.total.calls,
            tokens: book.total.usage.total(),
            cost_usd: book.total.cost_usd,
            model_ms: ms(book.total.model),
            wall_ms: ms(self.started.elapsed()),
            tiers: book
                .tiers
                .iter()
                .enumerate()
                .map(|(tier, s)| TierSpend {
                    tier,
                    steps: s.steps,
                    tokens: s.usage.total(),
                    cost_usd: s.cost_usd,
                    model_ms: ms(s.model),
                })
                .collect(),
            max_seconds: self.budgets.max_wall.as_secs_f64(),
            max_tokens: self.budgets.max_tokens,
            max_cost_usd: self.budgets.max_cost_usd,
            stopped_by: stopped_by.and_then(|s| s.cap()),
        }
    }
}

/// A model whose every call goes through the repair's one ledger: the ledger is asked first
/// (a cap used up refuses the call with [`ModelError::Budget`]), the call is bounded by the
/// wall time left, and its answer is charged to the model's tier after. Loop steps, the
/// loop's compaction, the candidates' fills and chat samples and the verifier's model review
/// all call through one of these, so the ledger's entries are the server's requests.
pub struct Metered<'a> {
    model: &'a dyn Model,
    ledger: &'a Ledger,
    tier: usize,
}

impl<'a> Metered<'a> {
    pub fn new(model: &'a dyn Model, ledger: &'a Ledger, tier: usize) -> Metered<'a> {
        Metered {
            model,
            ledger,
            tier,
        }
    }

    pub fn ledger(&self) -> &'a Ledger {
        self.ledger
    }

    pub fn tier(&self) -> usize {
        self.tier
    }

    /// Runs one call: asked first, timed out at the wall time left, charged after.
    async fn call<T>(
        &self,
        usage_of: impl Fn(&T) -> Usage,
        call: impl std::future::Future<Output = Result<T, ModelError>>,
    ) -> Result<T, ModelError> {
        if let Some(cap) = self.ledger.check() {
            return Err(ModelError::Budget(cap.as_str().into()));
        }
        let t0 = Instant::now();
        let r = tokio::time::timeout(self.ledger.wall_left(), call)
            .await
            .map_err(|_| ModelError::Budget(StopReason::TimeLimit.as_str().into()))??;
        self.ledger
            .charge(self.tier, self.model, &usage_of(&r), t0.elapsed());
        Ok(r)
    }
}

#[async_trait::async_trait]
impl Model for Metered<'_> {
    async fn complete(&self, req: &Request<'_>) -> Result<Response, ModelError> {
        self.call(|r: &Response| r.usage, self.model.complete(req))
            .await
    }

    async fn infill(&self, req: &Infill<'_>) -> Result<Filled, ModelError> {
        self.call(|f: &Filled| f.usage, self.model.infill(req))
            .await
    }

    fn spec(&self) -> String {
        self.model.spec()
    }

    fn describe(&self) -> String {
        self.model.describe()
    }

    fn cost(&self, usage: &Usage) -> f64 {
        self.model.cost(usage)
    }

    fn supports_infill(&self) -> bool {
        self.model.supports_infill()
    }

    fn on_this_machine(&self) -> bool {
        self.model.on_this_machine()
    }
}

/// A patch a strategy proposes; only the verifier makes it a fix.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Proposal {
    pub patch: String,
    /// It already passed the targets and the whole suite in the episode container (a
    /// candidate's check); otherwise the search runs the suite there first.
    pub checked: bool,
    /// Where it came from: a rule, a fill and how it was drawn, a chat reply, the loop.
    pub origin: Origin,
    /// The trajectory node of the candidate it came from (`t0.candidates.c3`), if any.
    pub node: Option<String>,
    /// The model's reply it came from, as recorded in the trajectory (for people).
    pub reply: String,
    pub tokens: u64,
    pub model_ms: u64,
    pub rollback_ms: u64,
    /// Why it ranks where it does (the candidates' faithfulness to the code they replace).
    pub note: String,
    /// What of the replaced code it stops using (`callee isinstance`, `parameter ttl of get`):
    /// the verifier is told, and a verified patch with any is `needs_review`.
    pub drops: Vec<String>,
    /// What comparing it with the attempt's other passing candidates found (the verifier's
    /// consensus layer reports it); `None`: not compared.
    pub consensus: Option<crate::verify::consensus::Evidence>,
}

/// What a strategy did besides proposing, for the receipt's record of the attempt: the search
/// passes it on without looking inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Candidates drawn and how many passed in the sandbox.
    Candidates { drawn: usize, passing: usize },
    /// Steps the loop took.
    Loop { steps: usize },
}

impl Detail {
    /// Candidates drawn (0 for the loop).
    pub fn drawn(&self) -> usize {
        match self {
            Detail::Candidates { drawn, .. } => *drawn,
            Detail::Loop { .. } => 0,
        }
    }

    /// Candidates that passed in the sandbox (0 for the loop).
    pub fn passing(&self) -> usize {
        match self {
            Detail::Candidates { passing, .. } => *passing,
            Detail::Loop { .. } => 0,
        }
    }

    /// Loop steps (0 for the candidates).
    pub fn steps(&self) -> usize {
        match self {
            Detail::Loop { steps } => *steps,
            Detail::Candidates { .. } => 0,
        }
    }
}

/// What every strategy returns: what it proposes (best first), why it stopped, what it did.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub stop: StopReason,
    /// One line on how it ended (the loop's stop detail; the candidates' counts or why they
    /// drew fewer than asked).
    pub note: String,
    pub proposals: Vec<Proposal>,
    /// The workspace holds the attempt's edits (the next attempt starts from a reset).
    pub dirty: bool,
    /// Its outcome when it proposes nothing (`no_patch`, `not_passing`, `no_suspect`).
    pub nothing: Outcome,
    pub detail: Detail,
    /// What it tried, for a later stage's prompt (the candidates' digest; empty: nothing).
    pub digest: String,
    /// Edits it checked that no earlier candidate of its run had made (a `sampled` pass
    /// with none has nothing new to draw).
    pub fresh: usize,
}

impl Attempt {
    pub fn new(stop: StopReason, note: impl Into<String>, detail: Detail) -> Attempt {
        Attempt {
            stop,
            note: note.into(),
            proposals: Vec::new(),
            dirty: false,
            nothing: Outcome::NoPatch,
            detail,
            digest: String::new(),
            fresh: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Priced;

    #[async_trait::async_trait]
    impl Model for Priced {
        async fn complete(
            &self,
            _: &crate::agent::model::Request<'_>,
        ) -> Result<crate::agent::model::Response, crate::agent::model::ModelError> {
            unreachable!("not called")
        }
        fn spec(&self) -> String {
            "test:priced".into()
        }
        fn describe(&self) -> String {
            "priced test double".into()
        }
        fn cost(&self, usage: &Usage) -> f64 {
            usage.total() as f64 * 0.001
        }
    }

    #[test]
    fn the_ledger_stops_on_each_cap_and_books_per_tier() {
        let usage = Usage {
            prompt_tokens: 60,
            completion_tokens: 40,
        };
        let b = Budgets {
            max_tokens: 250,
            max_cost_usd: 0.15,
            ..Budgets::default()
        };
        let l = Ledger::new(b.clone());
        assert_eq!(l.check(), None);
        l.charge(0, &Priced, &usage, Duration::from_millis(5));
        assert_eq!(l.check(), None, "$0.10 of $0.15");
        l.charge(1, &Priced, &usage, Duration::from_millis(7));
        assert_eq!(l.check(), Some(StopReason::CostLimit), "$0.20 of $0.15");
        l.step(1);
        let r = l.report(l.check());
        assert_eq!((r.tokens, r.steps, r.model_ms), (200, 1, 12));
        assert_eq!(r.tiers.len(), 2);
        assert_eq!((r.tiers[1].tokens, r.tiers[1].steps), (100, 1));
        assert_eq!(r.stopped_by, Some(Cap::Cost));

        // No dollar cap: tokens stop it.
        let l = Ledger::new(Budgets {
            max_cost_usd: 0.0,
            ..b.clone()
        });
        for _ in 0..3 {
            l.charge(0, &Priced, &usage, Duration::ZERO);
        }
        assert_eq!(l.check(), Some(StopReason::TokenLimit));
        let l = Ledger::new(Budgets {
            max_wall: Duration::ZERO,
            ..b
        });
        assert_eq!(l.check(), Some(StopReason::TimeLimit));
    }

    #[test]
    fn a_stage_share_stops_the_stage_not_the_repair() {
        let l = Ledger::new(Budgets::default());
        l.set_stage_share(Some(Duration::ZERO));
        assert_eq!(l.check(), Some(StopReason::StageShare));
        assert_eq!(l.check_repair(), None, "the repair goes on");
        assert_eq!(l.wall_left(), Duration::ZERO);
        assert!(l.repair_left() > Duration::from_secs(1));
        assert_eq!(
            StopReason::StageShare.cap(),
            None,
            "not a cap of the repair"
        );
        l.set_stage_share(Some(Duration::from_secs(60)));
        assert_eq!(l.check(), None);
        assert!(
            l.wall_left() <= Duration::from_secs(60),
            "bounded by the share"
        );
        l.set_stage_share(None);
        assert_eq!(l.check(), None);
        assert!(
            l.wall_left() > Duration::from_secs(60),
            "the repair's time again"
        );
        // A cap of the repair comes before the share.
        let l = Ledger::new(Budgets {
            max_wall: Duration::ZERO,
            ..Budgets::default()
        });
        l.set_stage_share(Some(Duration::ZERO));
        assert_eq!(l.check(), Some(StopReason::TimeLimit));
    }

    #[test]
    fn spend_since_is_the_difference() {
        let l = Ledger::new(Budgets::default());
        let u = Usage {
            prompt_tokens: 10,
            completion_tokens: 5,
        };
        l.charge(0, &Priced, &u, Duration::from_millis(3));
        let before = l.total();
        l.charge(0, &Priced, &u, Duration::from_millis(4));
        let d = l.total().since(&before);
        assert_eq!((d.usage.total(), d.calls, d.model.as_millis()), (15, 1, 4));
    }
}
