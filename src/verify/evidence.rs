//! What a generalisation layer found, in one shape for all of them ([`super::fit`] collects,
//! [`super::verdict`] decides, [`super::receipt`] shows). A leaf: the layers import it, it
//! imports none of them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The generalisation layers: they ask whether the patch fixed the code or fitted the tests
/// (the integrity layers ask whether the tests ran honestly). Each is implemented once behind
/// [`super::layers::EvidenceLayer`] and listed in [`super::layers::LAYERS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// The failing tests' calls of the changed functions and relation-preserving variants of
    /// them, before and after the patch: a change only at the tested inputs.
    BeyondTestedPoints,
    /// Names the failing tests import from the package and judge with, changed by the patch.
    OracleSurface,
    /// Generated inputs shaped like the tests' calls of the changed functions, run through the
    /// code before and after the patch: a new crash, an input read whole, an error moved.
    Differential,
    /// The repair search's other passing candidates, run against the chosen one on generated
    /// inputs: an answer the others agree against, or a disagreement with no majority.
    Consensus,
    /// Failing tests held out of everything the model saw, required too.
    HiddenTargets,
    /// Shapes of fitted code in the diff (tree-sitter, pre- vs post-patch source).
    StructuralSignals,
    /// A model's answer to a fixed rubric (optional, off by default).
    ModelReview,
}

impl Layer {
    pub fn as_str(&self) -> &'static str {
        match self {
            Layer::BeyondTestedPoints => "beyond_tested_points",
            Layer::OracleSurface => "oracle_surface",
            Layer::Differential => "differential",
            Layer::Consensus => "consensus",
            Layer::HiddenTargets => "hidden_targets",
            Layer::StructuralSignals => "structural_signals",
            Layer::ModelReview => "model_review",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One finding of a generalisation layer, with the evidence a reviewer needs to check it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub layer: Layer,
    /// The rule that fired, e.g. `test_literal_branch` or `only_at_tested_inputs`.
    pub kind: String,
    /// Workspace-relative file of the evidence (the patched file, or the test for a held-out
    /// test's failure).
    pub path: String,
    /// 1-based line in the post-patch file (0 when the finding is about no one line).
    pub line: usize,
    /// The code or value that shows it: the condition, the literal, the quoted line.
    pub evidence: String,
    /// The input where the patch is suspected wrong or special-cased, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// One sentence: what the rule saw.
    pub detail: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: ", self.path, self.line)?;
        } else if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        write!(f, "{} ({}): {}", self.kind, self.layer, self.detail)?;
        if !self.evidence.is_empty() {
            write!(f, " `{}`", self.evidence)?;
        }
        if let Some(i) = &self.input {
            write!(f, " [input: {i}]")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_reads_as_one_line_with_its_evidence() {
        let f = Finding {
            layer: Layer::StructuralSignals,
            kind: "test_literal_branch".into(),
            path: "pkg/m.py".into(),
            line: 12,
            evidence: "if xs == [3, 1, 2]:".into(),
            input: Some("[3, 1, 2] (tests/test_m.py:8)".into()),
            detail: "a new branch compares an input with a failing test's literal".into(),
        };
        assert_eq!(
            f.to_string(),
            "pkg/m.py:12: test_literal_branch (structural_signals): a new branch compares an input with a failing test's literal `if xs == [3, 1, 2]:` [input: [3, 1, 2] (tests/test_m.py:8)]"
        );
        let j = serde_json::to_value(&f).unwrap();
        assert_eq!(j["layer"], "structural_signals");
        let back: Finding = serde_json::from_value(j).unwrap();
        assert_eq!(back, f);
    }
}
