//! Turns a proposal into a verdict: the tests in the episode container (unless a candidate's
//! check already ran them), then the verifier in fresh containers. The agent's word is never
//! the verdict; a proposal's own findings (what it drops of the code it replaced) reach the
//! verifier as evidence.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;

use super::Plan;
use super::targets::{Targets, strings};
use crate::agent::attempt::{Attempt, Ledger, Proposal};
use crate::agent::origin::Origin;
use crate::agent::tools::{self, TestRun};
use crate::agent::trajectory::{NodeRecord, Trajectory};
use crate::sandbox::Sandbox;
use crate::verify::evidence::{Finding, Layer};
use crate::verify::outcome::Outcome;
use crate::verify::receipt::Receipt;
use crate::verify::{PreparedImage, VerifyRequest};

/// Passing candidates of one attempt that are verified at most (each verification is a few
/// fresh containers; past three, the next strategy is the better use of the time).
pub const MAX_VERIFIED_CANDIDATES: usize = 3;

pub(super) struct Judge<'a> {
    pub docker: &'a bollard::Docker,
    pub image: &'a PreparedImage,
    pub plan: &'a Plan,
    pub targets: &'a Targets,
    /// The repair's ledger: the verifier's model review is charged to it.
    pub ledger: &'a Arc<Ledger>,
}

/// One patch, judged.
struct Judged {
    outcome: Outcome,
    after: Option<TestRun>,
    receipt: Option<Receipt>,
    wall: Duration,
}

/// What the judge made of one attempt's proposals.
pub(super) struct Judgement {
    /// The last proposal's outcome (the attempt's own when it proposed nothing).
    pub result: Outcome,
    pub fixed: bool,
    /// The last patch judged.
    pub patch: Option<String>,
    pub after: Option<TestRun>,
    pub receipt: Option<Receipt>,
    pub wall: Duration,
    /// Where the fixed patch came from.
    pub origin: Option<Origin>,
}

impl Judge<'_> {
    /// The attempt's proposals in its order until one is fixed (proposals a candidate check
    /// already passed: the first [`MAX_VERIFIED_CANDIDATES`]); each candidate's node records
    /// its verdict. `tier`: the model tier the review is charged to.
    pub async fn attempt(
        &self,
        sandbox: &dyn Sandbox,
        a: &Attempt,
        node: &NodeRecord,
        tier: usize,
        traj: &mut Trajectory,
    ) -> anyhow::Result<Judgement> {
        let mut j = Judgement {
            result: a.nothing,
            fixed: false,
            patch: None,
            after: None,
            receipt: None,
            wall: Duration::ZERO,
            origin: None,
        };
        let mut checked = 0;
        for p in &a.proposals {
            if p.checked {
                checked += 1;
                if checked > MAX_VERIFIED_CANDIDATES {
                    break;
                }
            }
            let one = self.judge(sandbox, p, tier).await?;
            j.wall += one.wall;
            j.result = one.outcome;
            if let Some(id) = &p.node {
                traj.node(&NodeRecord {
                    id: id.clone(),
                    parent: Some(node.id.clone()),
                    node: "candidate".into(),
                    status: j.result.as_str().into(),
                    detail: match &one.receipt {
                        Some(r) => format!("{}; {}", p.note, r.decision.reason),
                        None => p.note.clone(),
                    },
                    diff: p.patch.clone(),
                    tokens: p.tokens,
                    model_ms: p.model_ms,
                    rollback_ms: p.rollback_ms,
                    reply: p.reply.clone(),
                    model: match p.origin.rule() {
                        Some(_) => "rule (no model)".into(),
                        None => node.model.clone(),
                    },
                    origin: Some(p.origin.clone()),
                    ..node.clone()
                });
            }
            j.patch = Some(p.patch.clone());
            j.after = one.after.or(j.after);
            j.receipt = one.receipt.or(j.receipt);
            if self.fixes(one.outcome) {
                j.fixed = true;
                j.origin = Some(p.origin.clone());
                break;
            }
        }
        Ok(j)
    }

    /// A fresh container verified it, or (tests of the loop alone, `reruns: 0`) the episode
    /// container's run passed.
    fn fixes(&self, o: Outcome) -> bool {
        o.verified() || (self.plan.verify_reruns == 0 && o == Outcome::Passing)
    }

    /// One proposal: unless a candidate's check already passed it, the patch is applied in
    /// the episode container and the suite run (not for a given task's hidden targets), then
    /// the verifier judges it with the proposal's own findings.
    async fn judge(
        &self,
        sandbox: &dyn Sandbox,
        p: &Proposal,
        tier: usize,
    ) -> anyhow::Result<Judged> {
        let plan = self.plan;
        let mut j = Judged {
            outcome: Outcome::NoPatch,
            after: None,
            receipt: None,
            wall: Duration::ZERO,
        };
        if p.patch.trim().is_empty() {
            return Ok(j);
        }
        if !plan.targets.is_given() && !p.checked {
            let after = tools::run_tests(sandbox, &plan.episode.tools, &[])
                .await
                .context("running the tests after the episode")?;
            let still: Vec<&String> = after
                .summary
                .as_ref()
                .map(|s| s.failing.iter().collect())
                .unwrap_or_default();
            let pre = &self.targets.pre_existing;
            let fixed = after.summary.is_some()
                && (after.green()
                    || (!pre.is_empty()
                        && still.iter().all(|f| pre.iter().any(|p| p == f.as_str()))));
            j.after = Some(after);
            if !fixed {
                j.outcome = Outcome::Failing;
                return Ok(j);
            }
        }
        j.outcome = Outcome::Passing;
        if plan.verify_reruns == 0 {
            // Tests of the loop alone: the episode container's run is the check.
            return Ok(j);
        }
        let (receipt, wall) = self
            .verify(&p.patch, &drops_finding(p), p.consensus.clone(), tier)
            .await;
        j.outcome = Outcome::of_verdict(receipt.decision.verdict);
        j.receipt = Some(receipt);
        j.wall = wall;
        Ok(j)
    }

    /// The verifier alone, in fresh containers, on the resolved targets. `found`: what the
    /// search already found in the patch ([`drops_finding`]); `consensus`: what comparing it
    /// with the other passing candidates found.
    pub async fn verify(
        &self,
        patch: &str,
        found: &[Finding],
        consensus: Option<crate::verify::consensus::Evidence>,
        tier: usize,
    ) -> (Receipt, Duration) {
        let plan = self.plan;
        let started = Instant::now();
        let t = self.targets;
        let mut req = VerifyRequest::new(
            self.image.clone(),
            patch.to_string(),
            strings(&t.fail_to_pass),
        );
        req.pass_to_pass = strings(&t.pass_to_pass);
        req.holdouts = t.held_out.clone();
        req.reruns = plan.verify_reruns;
        // The configured limit, not the episode's (cut to the reproduction's duration).
        req.run_timeout = plan.episode.tools.test_timeout;
        req.rerun_scope = plan.rerun_scope;
        req.policy = plan.verify_policy.clone();
        req.run_id = format!("{}-verify", plan.run_id);
        req.fit.probe = plan.edge_probe;
        req.fit.differential = plan.differential;
        req.fit.review = plan
            .review
            .as_ref()
            .map(|m| super::review::metered(m.clone(), self.ledger.clone(), tier));
        req.fit.given = found.to_vec();
        req.fit.consensus = consensus;
        let receipt = super::verify(self.docker, &req, plan.base_repo.as_deref()).await;
        (receipt, started.elapsed())
    }
}

/// A proposal that stops using what the code it replaced used (the candidates'
/// faithfulness: a parameter no longer read, a callee no new call takes over) as a finding
/// for the verifier: its tests may pass because a feature is gone (`isinstance(base, list)`
/// filled as `base is None` passed a task's tests and projected strings). None: nothing
/// dropped.
pub fn drops_finding(p: &Proposal) -> Vec<Finding> {
    if p.drops.is_empty() {
        return Vec::new();
    }
    let path = crate::verify::diff::parse(&p.patch)
        .ok()
        .and_then(|files| files.into_iter().find_map(|f| f.new_path))
        .unwrap_or_default();
    vec![Finding {
        layer: Layer::StructuralSignals,
        kind: "dropped_feature".into(),
        path,
        line: 0,
        evidence: p.drops.join(", "),
        input: None,
        detail: format!(
            "the repair search's candidate stops using what the code it replaced used: {}",
            p.drops.join(", ")
        ),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proposal_that_drops_what_the_code_used_is_a_finding_for_the_verifier() {
        let patch = "--- a/pkg/v.py\n+++ b/pkg/v.py\n@@ -1 +1 @@\n-if isinstance(b, list):\n+if b is None:\n";
        let p = Proposal {
            patch: patch.into(),
            drops: vec!["callee isinstance".into()],
            ..Proposal::default()
        };
        let f = drops_finding(&p);
        assert_eq!(f.len(), 1);
        assert_eq!(
            (
                f[0].path.as_str(),
                f[0].kind.as_str(),
                f[0].evidence.as_str()
            ),
            ("pkg/v.py", "dropped_feature", "callee isinstance")
        );
        assert!(
            drops_finding(&Proposal {
                drops: Vec::new(),
                ..p
            })
            .is_empty()
        );
    }
}
