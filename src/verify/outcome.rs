//! One ladder for what became of a repair's patches, from "nothing to do" to a fresh
//! container's verdict. A drawn candidate, an attempt (a strategy on a model tier), a whole
//! repair and the action's `verdict` output all take their words from it, so a report never
//! has to translate between six vocabularies.
//!
//! The rungs, low to high: not acted on → nothing to repair → no patch (no budget, no code
//! located, nothing proposed, a reply that made no edit) → a patch failing in the sandbox →
//! a patch passing in the sandbox → judged by the verifier. [`Outcome::rank`] orders them; a
//! search keeps the highest rung it reached.

use serde::{Deserialize, Serialize};

use super::verdict::Verdict;

/// What became of a patch (or of the attempt that should have made one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Outcome {
    /// The event was not acted on (the action alone; see its notice).
    Ignored,
    /// The tests already pass: nothing to repair.
    NothingFailing,
    /// The budget was spent before it could start.
    Budget,
    /// The fault localization and the context located no code to edit.
    NoSuspect,
    /// Nothing was proposed (the loop's workspace is unchanged).
    #[default]
    NoPatch,
    /// A reply with nothing in the format asked for.
    Unparsed,
    /// A reply that parsed but does not apply (unknown function, text not found, no change).
    NotApplied,
    /// The same edit as an earlier candidate.
    Duplicate,
    /// The model call, the container or the verifier failed.
    Error,
    /// The targets still fail, or another test broke (in the sandbox).
    Failing,
    /// Some targets pass, the others still fail, and nothing that passed before fails: a step
    /// the candidates' next round builds on.
    Partial,
    /// Candidates were drawn and none passed in the sandbox.
    NotPassing,
    /// It passes in the sandbox and no verification was asked (`reruns: 0`).
    Passing,
    /// Proposed but not judged by the verifier (older results read so).
    NotVerified,
    /// A fresh container's verdict (never `Verdict::Error`: that is [`Outcome::Error`]).
    Judged(Verdict),
}

/// Every word an outcome is written as, in ladder order (the verdicts in their own order).
const OWN: [Outcome; 14] = [
    Outcome::Ignored,
    Outcome::NothingFailing,
    Outcome::Budget,
    Outcome::NoSuspect,
    Outcome::NoPatch,
    Outcome::Unparsed,
    Outcome::NotApplied,
    Outcome::Duplicate,
    Outcome::Error,
    Outcome::Failing,
    Outcome::Partial,
    Outcome::NotPassing,
    Outcome::Passing,
    Outcome::NotVerified,
];

impl Outcome {
    pub const VERIFIED: Outcome = Outcome::Judged(Verdict::Verified);

    /// The outcome of a patch the verifier judged.
    pub fn of_verdict(v: Verdict) -> Outcome {
        match v {
            // One word, one meaning: the verifier's `error` is the outcome's.
            Verdict::Error => Outcome::Error,
            v => Outcome::Judged(v),
        }
    }

    pub fn verified(self) -> bool {
        self == Outcome::VERIFIED
    }

    /// A patch exists and passed the target tests in the sandbox (judged or not).
    pub fn passed_in_sandbox(self) -> bool {
        matches!(
            self,
            Outcome::Passing | Outcome::NotVerified | Outcome::Judged(_)
        )
    }

    /// Its rung on the ladder (higher: further along).
    pub fn rank(self) -> u8 {
        match self {
            Outcome::Ignored => 0,
            Outcome::NothingFailing => 1,
            Outcome::Budget
            | Outcome::NoSuspect
            | Outcome::NoPatch
            | Outcome::Unparsed
            | Outcome::NotApplied
            | Outcome::Duplicate
            | Outcome::Error => 2,
            Outcome::Failing | Outcome::Partial | Outcome::NotPassing => 3,
            Outcome::Passing | Outcome::NotVerified => 4,
            Outcome::Judged(Verdict::Verified) => 6,
            Outcome::Judged(_) => 5,
        }
    }

    /// The word receipts, results, trajectories and the job summary write.
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Ignored => "ignored",
            Outcome::NothingFailing => "nothing_failing",
            Outcome::Budget => "budget",
            Outcome::NoSuspect => "no_suspect",
            Outcome::NoPatch => "no_patch",
            Outcome::Unparsed => "unparsed",
            Outcome::NotApplied => "not_applied",
            Outcome::Duplicate => "duplicate",
            Outcome::Error => "error",
            Outcome::Failing => "failing",
            Outcome::Partial => "partial",
            Outcome::NotPassing => "not_passing",
            Outcome::Passing => "passing",
            Outcome::NotVerified => "not_verified",
            Outcome::Judged(v) => v.as_str(),
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        OWN.into_iter().find(|o| o.as_str() == s).or_else(|| {
            Verdict::ALL
                .into_iter()
                .find(|v| v.as_str() == s)
                .map(Outcome::of_verdict)
        })
    }

    /// The action's `verdict` output: the verifier's verdict when one was given, else
    /// `not_verified` (a patch that never passed a fresh container), `no_patch`,
    /// `nothing_failing`, `ignored` or `error`.
    pub fn action_word(self) -> &'static str {
        match self {
            Outcome::Judged(v) => v.as_str(),
            Outcome::Failing
            | Outcome::Partial
            | Outcome::NotPassing
            | Outcome::Passing
            | Outcome::NotVerified => "not_verified",
            Outcome::Budget
            | Outcome::NoSuspect
            | Outcome::NoPatch
            | Outcome::Unparsed
            | Outcome::NotApplied
            | Outcome::Duplicate => "no_patch",
            Outcome::NothingFailing => "nothing_failing",
            Outcome::Ignored => "ignored",
            Outcome::Error => "error",
        }
    }

    /// Every value of the action's `verdict` output, in documentation order (action.yml
    /// lists exactly these).
    pub fn action_words() -> Vec<&'static str> {
        let mut v: Vec<&'static str> = Verdict::ALL.iter().map(|v| v.as_str()).collect();
        v.extend(["not_verified", "no_patch", "nothing_failing", "ignored"]);
        v
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Outcome {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Outcome {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Outcome::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown outcome `{s}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_reads_back_and_the_ladder_orders_them() {
        for o in OWN
            .into_iter()
            .chain(Verdict::ALL.into_iter().map(Outcome::of_verdict))
        {
            assert_eq!(Outcome::parse(o.as_str()), Some(o), "{o}");
            let json = serde_json::to_string(&o).unwrap();
            assert_eq!(serde_json::from_str::<Outcome>(&json).unwrap(), o);
        }
        assert_eq!(Outcome::parse("nonsense"), None);
        assert_eq!(Outcome::of_verdict(Verdict::Error), Outcome::Error);
        assert!(Outcome::VERIFIED.rank() > Outcome::Judged(Verdict::Flaky).rank());
        assert!(Outcome::Judged(Verdict::Flaky).rank() > Outcome::Passing.rank());
        assert!(Outcome::Passing.rank() > Outcome::Failing.rank());
        assert!(Outcome::Failing.rank() > Outcome::NoPatch.rank());
        assert_eq!(Outcome::Partial.action_word(), "not_verified");
        assert_eq!(Outcome::NoSuspect.action_word(), "no_patch");
        for o in OWN
            .into_iter()
            .chain(Verdict::ALL.into_iter().map(Outcome::of_verdict))
        {
            assert!(
                Outcome::action_words().contains(&o.action_word()) || o.action_word() == "error"
            );
        }
    }
}
