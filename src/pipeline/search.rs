//! The repair search, whole: the baseline run and the targets (`start`), then a fold over
//! model tiers × strategies — the ledger asked before each attempt, the attempt's proposals
//! judged in fresh containers (`judge`), the workspace reset between attempts — until a
//! patch is verified, the budget is spent, or every strategy of every tier has run. Every
//! strategy is one [`RepairStrategy`] returning one [`Attempt`]; the fold never looks inside.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};

use super::judge::{Judge, Judgement};
use super::result::{RepairResult, START_RANKED, StartReport};
use super::start::{Begun, Start};
use super::{Plan, plan};
use crate::agent::attempt::{Attempt, Ledger, Metered, StopReason};
use crate::agent::model::Model;
use crate::agent::origin::Origin;
use crate::agent::strategy::{self, RepairStrategy};
use crate::agent::tools::TestRun;
use crate::agent::trajectory::NodeRecord;
use crate::sandbox::container::RESET_SCRIPT;
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::{ExecRequest, Sandbox};
use crate::verify::PreparedImage;
use crate::verify::outcome::Outcome;
use crate::verify::receipt::{Receipt, RepairAttempt};

/// The search's state, folded over its attempts.
#[derive(Default)]
struct Search {
    attempts: Vec<RepairAttempt>,
    /// The verified patch, else the last one judged.
    patch: String,
    after: Option<TestRun>,
    receipt: Option<Receipt>,
    outcome: Outcome,
    /// The attempt whose patch was taken: its strategy, tier and the patch's origin.
    winner: Option<(crate::config::repair::Strategy, usize, Origin)>,
    stop: Option<StopReason>,
    detail: String,
    steps: usize,
    verify_wall: Duration,
    /// The workspace holds the last attempt's edits.
    dirty: bool,
    /// Stages skipped, and why the search ended (the receipt's record of the search).
    skipped: Vec<crate::verify::attempts::SkippedStage>,
    ended: String,
}

impl Search {
    /// One attempt and its judgement folded in; the record the receipt keeps of it.
    fn fold(
        &mut self,
        head: &NodeRecord,
        s: &dyn RepairStrategy,
        a: Attempt,
        j: Judgement,
        spent: crate::agent::attempt::Spend,
        wall: Duration,
    ) -> RepairAttempt {
        self.verify_wall += j.wall;
        self.dirty = a.dirty;
        self.steps += a.detail.steps();
        self.stop = Some(a.stop);
        self.detail = a.note;
        // The last word: the patch judged, else (nothing proposed) the workspace as it is.
        self.patch = j.patch.unwrap_or_default();
        self.after = j.after.or(self.after.take());
        self.receipt = j.receipt.or(self.receipt.take());
        self.outcome = j.result;
        if j.fixed {
            self.winner = Some((s.kind(), head.tier, j.origin.unwrap_or_default()));
        }
        RepairAttempt {
            tier: head.tier,
            model: head.model.clone(),
            strategy: s.kind(),
            result: j.result,
            tokens: spent.usage.total(),
            cost_usd: spent.cost_usd,
            model_ms: spent.model.as_millis() as u64,
            wall_ms: wall.as_millis() as u64,
            candidates: a.detail.drawn(),
            passing: a.detail.passing(),
            why: String::new(),
            share_ms: None,
            stop: a.stop.as_str().into(),
        }
    }

    /// Back to the checkout before the next attempt when the last one left edits.
    async fn reset(&mut self, sandbox: &dyn Sandbox) -> anyhow::Result<String> {
        if !std::mem::take(&mut self.dirty) {
            return Ok(String::new());
        }
        let t0 = Instant::now();
        let r = sandbox
            .exec(ExecRequest::argv(["bash", "-c", RESET_SCRIPT]))
            .await
            .context("resetting the workspace between attempts")?;
        if !r.status.success() {
            return Err(anyhow!(
                "resetting the workspace between attempts failed: {}",
                r.output.render().trim()
            ));
        }
        Ok(format!(
            "workspace reset in {} ms",
            t0.elapsed().as_millis()
        ))
    }
}

/// Reproduce, then fold over tiers × strategies (see the module docs).
pub(super) async fn search(
    docker: &bollard::Docker,
    image: &PreparedImage,
    plan: &Plan,
    sandbox: &dyn Sandbox,
    models: &[&dyn Model],
    policy: &ContainerPolicy,
) -> anyhow::Result<RepairResult> {
    let ledger = Arc::new(Ledger::new(plan.episode.budgets.clone()));
    let describe = models.iter().map(|m| m.describe()).collect::<Vec<_>>();
    let st = match super::start::start(sandbox, plan).await? {
        Begun::Start(st) => st,
        Begun::NothingFailing(targets) => {
            plan.write_patch("")?;
            return Ok(RepairResult::nothing_failing(targets, describe.join(" → ")));
        }
    };
    let judge = Judge {
        docker,
        image,
        plan,
        targets: &st.targets,
        ledger: &ledger,
    };
    let episode = plan.episode_for(&st, policy);
    let mut traj = plan.open_trajectory(sandbox, &describe.join(" → "), &episode, policy, &st)?;
    let mut s = Search::default();
    let last_tier = models.len().saturating_sub(1);
    'tiers: for (tier, model) in models.iter().enumerate() {
        let (kinds, why) = plan.tier_strategies(tier, &model.spec());
        let mut stages = plan::Stages::new(kinds, tier == last_tier);
        // What the candidate stages tried, for the loop's first prompt.
        let mut tried: Vec<String> = Vec::new();
        while let Some((kind, pass)) = stages.next() {
            let strategy = strategy::of(kind);
            if let Some(cap) = ledger.check_repair() {
                s.stop = Some(cap);
                s.detail = format!("the budget is spent ({cap}) before {}", kind.as_str());
                s.ended = format!("the budget is spent ({cap})");
                if s.attempts.is_empty() {
                    s.outcome = Outcome::Budget;
                }
                break 'tiers;
            }
            let candidates = crate::agent::candidates::CandidateConfig {
                stage: strategy::stage_of(kind, pass).unwrap_or_default(),
                ..plan.candidates.clone()
            };
            let task = match (kind, tried.is_empty()) {
                (crate::config::repair::Strategy::Loop, false) => {
                    format!("{}\n\n{}", st.task, plan::digest(&tried))
                }
                _ => st.task.clone(),
            };
            let start = strategy::Start {
                sandbox,
                task: &task,
                problem: &st.problem,
                failing: &st.failing,
                episode: &episode,
                candidates: &candidates,
                ledger: &ledger,
            };
            let left = ledger.repair_left();
            let too_little = (left < plan::min_time(kind)).then(|| {
                format!(
                    "{:.0} s left, and it needs {:.0} s",
                    left.as_secs_f64(),
                    plan::min_time(kind).as_secs_f64()
                )
            });
            if let Some(reason) = too_little.or_else(|| strategy.declines(*model, &start)) {
                tracing::info!("stage {kind} skipped: {reason}");
                stages.declined(kind);
                s.skipped.push(crate::verify::attempts::SkippedStage {
                    tier,
                    strategy: kind,
                    why: reason,
                });
                continue;
            }
            let share = stages.share(kind, left);
            let mut head = NodeRecord::attempt(tier, &describe[tier], kind);
            head.detail = s.reset(sandbox).await?;
            traj.node(&head);
            let (t0, before) = (Instant::now(), ledger.total());
            ledger.set_stage_share(share);
            let a = strategy
                .attempt(
                    &Metered::new(*model, &ledger, tier),
                    &start,
                    &head.id,
                    &mut traj,
                )
                .await;
            // Verification (and its model review) is not the stage's to cut short.
            ledger.set_stage_share(None);
            let a = a.map_err(|e| plan.infrastructure(e))?;
            stages.ran(kind, a.fresh, a.stop == StopReason::StageShare);
            if !a.digest.is_empty() {
                tried.push(format!("[{}] {}", kind.as_str(), a.digest));
            }
            let j = judge.attempt(sandbox, &a, &head, tier, &mut traj).await?;
            let spent = ledger.total().since(&before);
            let mut rec = s.fold(&head, strategy, a, j, spent, t0.elapsed());
            rec.why.clone_from(&why);
            rec.share_ms = share.map(|d| d.as_millis() as u64);
            head.status = rec.result.as_str().into();
            (head.tokens, head.model_ms) = (rec.tokens, rec.model_ms);
            traj.node(&head);
            s.attempts.push(rec);
            if s.winner.is_some() {
                s.ended = "verified".into();
                break 'tiers;
            }
        }
        if tier == last_tier && s.ended.is_empty() {
            s.ended = stages.why_done();
        }
    }
    finish(s, &judge, &st, &ledger, &describe).await
}

/// The search's end: the patch file, the eval's verdict on a search that verified nothing,
/// the receipt (attempts, spend, localization), the result.
async fn finish(
    mut s: Search,
    judge: &Judge<'_>,
    st: &Start,
    ledger: &Ledger,
    describe: &[String],
) -> anyhow::Result<RepairResult> {
    let plan = judge.plan;
    plan.write_patch(&s.patch)?;
    if s.receipt.is_none() && plan.targets.is_given() && plan.verify_reruns > 0 {
        // An eval task is always judged, an empty patch too (the verifier says why it fails).
        let (r, wall) = judge.verify(&s.patch, &[], None, 0).await;
        s.verify_wall += wall;
        s.receipt = Some(r);
    }
    let stopped_by = ledger.check_repair().filter(|_| s.winner.is_none());
    if s.ended.is_empty()
        && let Some(cap) = stopped_by
    {
        s.ended = format!("the budget is spent ({cap})");
    }
    let search = crate::verify::attempts::SearchRecord {
        skipped: std::mem::take(&mut s.skipped),
        ended: std::mem::take(&mut s.ended),
    };
    if let Some(r) = &mut s.receipt {
        if let Some(c) = &plan.env_check {
            let check = format!("environment check: {c}");
            r.image.note = Some(match r.image.note.take() {
                Some(n) => format!("{n}; {check}"),
                None => check,
            });
        }
        r.repair = s.attempts.clone();
        r.search = Some(search.clone());
        r.spend = Some(ledger.report(stopped_by));
        if !st.problem.localization.is_empty() {
            r.localization = Some(st.problem.localization.clone());
        }
        if let Some(dir) = &plan.receipt_dir {
            crate::verify::receipt::write(dir, r)
                .with_context(|| format!("writing the receipt to {}", dir.display()))?;
        }
    }
    let mut spent = ledger.total();
    spent.steps = s.steps;
    let model = match &s.winner {
        // A rule-based candidate: no model wrote it, and the report says so.
        Some((_, tier, Origin::Rule { rule })) => {
            format!(
                "rule {rule}, no model call (the tier's model: {})",
                describe[*tier]
            )
        }
        Some((_, tier, _)) => describe[*tier].clone(),
        None => describe.join(" → "),
    };
    Ok(RepairResult {
        outcome: s.outcome,
        patch: s.patch,
        after: s.after,
        model,
        targets: st.targets.clone(),
        receipt: s.receipt,
        attempts: s.attempts,
        strategy: s.winner.map(|(kind, _, _)| kind),
        stop: s.stop,
        detail: s.detail,
        search,
        spent,
        wall: ledger.elapsed(),
        episode_wall: Duration::ZERO,
        verify_wall: s.verify_wall,
        start: StartReport {
            targets: st.targets.fail_to_pass.len(),
            reproduced: st.targets.visible.len(),
            localization: st.problem.localization.clone(),
            localization_ms: st.problem.localization_ms,
            ranked: st
                .problem
                .ranked
                .iter()
                .take(START_RANKED)
                .map(|r| (r.loc.path.clone(), r.loc.start, r.loc.end))
                .collect(),
        },
    })
}
