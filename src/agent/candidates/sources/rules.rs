//! `rule`: the rule-based candidates ([`rule_edits`]), handed over before any fill is drawn, in
//! the first round of the first stage of the first tier only (they need no model: an
//! escalated tier, a later stage or a later round would only check them again). They cost no model time, and a clean pass among them
//! leaves nothing to draw.

use super::super::rules::rule_edits;
use super::{DrawSource, Read, Round};
use crate::agent::origin::Origin;

pub(super) struct Rules;

impl DrawSource for Rules {
    fn name(&self) -> &'static str {
        "rule"
    }

    fn given(&self, round: &Round<'_>) -> Vec<Read> {
        if round.offset > 0
            || round.model.tier() > 0
            || round.config.stage != super::super::Stage::First
        {
            return Vec::new();
        }
        rule_edits(round.problem)
            .into_iter()
            .map(|rule| Read {
                label: format!("rule {}: {}", rule.rule, rule.what),
                origin: Origin::Rule {
                    rule: rule.rule.to_string(),
                },
                edits: Ok(rule.edits),
            })
            .collect()
    }
}
