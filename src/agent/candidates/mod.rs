//! The candidate strategy: K localized edits, each applied in a checkpoint of one container,
//! fast-checked on the target tests and rolled back.
//!
//! Agentless-style (localize → sample edits → validate). The suspects are the functions the
//! fault localization ranks highest ([`crate::agent::localize`]), else the ones the failing-code
//! context names ([`crate::agent::context::Focus::code`]). Two ways to draw edits:
//! - **infill** (the default, [`EditFormat::Infill`]): each of the most suspicious lines is
//!   masked in turn and the model fills in what belongs there ([`Model::infill`]), greedy over
//!   every line first (a fill that gives the line back is retried sampled at once), then
//!   sampled. A model without fill-in-the-middle, or a server that refuses it, gets the chat
//!   prompt in `lines` form.
//! - **chat**: one prompt shows the suspects and asks for the fix as numbered lines, a whole
//!   corrected function or search/replace blocks. Sample 0 is greedy, the others are drawn at
//!   a temperature with their own seeds.
//!
//! Replies are checked while the next one is generated. Fixes of several places get a second
//! look ([`propagate`], [`combine`], and rounds on top of a `partial` candidate: [`run`]).
//!
//! What survives here is a list of *passing* candidates (targets pass, and no test that passed
//! before fails) with their diffs; the caller verifies them in fresh containers, smallest diff
//! first. The workspace is restored after every candidate: the edited files get their
//! original bytes back (one exec), so the next candidate starts from the same snapshot.
//!
//! Pure parts ([`prompt`], [`parse_reply`], [`apply_function`], [`apply_search_replace`]) are
//! unit-tested; the async [`run`] reaches the container only through [`Sandbox`].

use std::collections::BTreeMap;

use crate::agent::context::Context;
use crate::agent::localize::Ranked;

pub use crate::config::repair::EditFormat;

mod candidate;
mod check;
#[cfg(test)]
mod draw_order_tests;
mod edits;
mod faithful;
mod infill;
mod iterated;
mod prompt;
mod propagate;
mod pydefs;
mod rules;
mod runner;
mod shapes;
mod sources;
mod stopiter;
mod suspects;
#[cfg(test)]
mod tests;
mod unused;

pub use candidate::{Candidate, CandidatesOutcome, Compared, compare, diff_size, distinct, order};
pub use check::fixed_targets;
pub use edits::{
    Block, FileEdit, ParseError, RuleEdit, apply_function, apply_lines, apply_search_replace,
    line_edits, parse_reply, search_replace_blocks,
};
pub use faithful::Faithfulness;
pub use infill::{
    apply_infill, infill_context, infill_draw, infill_draws, infill_sites, sampled_plan,
};
pub use prompt::prompt;
pub use propagate::{Propagated, combine, equality_twin, propagate};
pub use rules::rule_edits;
pub use runner::{MAX_ROUNDS, Run, run, shift_ranked};
pub use shapes::{InfillShape, Site};
pub use sources::sampling;
pub use suspects::{Suspect, suspects, suspects_ranked};

/// The strategy's knobs.
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateConfig {
    /// K. Chat formats: candidates checked (a reply that does not apply, changes nothing or
    /// repeats an earlier edit does not count, and another is drawn, up to
    /// [`DRAWS_PER_CANDIDATE`] × K replies in all). `infill`: passing candidates wanted — it
    /// fills its sites ([`infill_draw`]) until K pass or the sites run out, so the passing
    /// ones can be ranked (the first passing fill is not always the faithful one).
    pub count: usize,
    pub format: EditFormat,
    /// What `infill` masks (a line, a block, a gap for new lines, a short body).
    pub shapes: Vec<InfillShape>,
    /// Model requests in flight at once (the server's slots).
    pub parallel: usize,
    /// Whether checks run while the model writes the next candidate (`None`: unless the
    /// model is on this machine, [`crate::agent::model::Model::on_this_machine`]).
    pub overlap: Option<bool>,
    /// Temperature of every sample but the first (which is greedy).
    pub temperature: f64,
    /// Which stage of the search this run is: what it draws ([`Stage`]).
    pub stage: Stage,
    /// Two or more passing candidates are compared on generated inputs
    /// ([`crate::verify::consensus`]), this long per changed function (`None`: not compared;
    /// the plan sets it from `verify.differential_seconds`).
    pub consensus: Option<std::time::Duration>,
}

/// What one run of the candidate strategy draws: the search's stages that use it
/// (`pipeline::search` runs them in turn, each on its share of the budget).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Stage {
    /// The rules, then fills of the configured shapes: every site greedy (with splices and
    /// walks), the best ones sampled twice. A model without fill-in-the-middle: the chat
    /// prompt's samples.
    #[default]
    First,
    /// Fills of the multi-line shapes the first stage did not fill ([`MULTI_LINE`]): every
    /// site greedy, the best ones sampled twice. No rules.
    Shapes,
    /// Sampled fills only, of the line, block and insert shapes at their best sites
    /// ([`infill::sampled_plan`]), each pass with seeds after every earlier pass's (`pass`: 0
    /// for the first). No rules.
    Sampled { pass: usize },
}

/// The shapes the `shapes` stage fills (those the first stage did not).
pub const MULTI_LINE: [InfillShape; 3] =
    [InfillShape::Block, InfillShape::Insert, InfillShape::Body];
/// The shapes the `sampled` stage draws from: a body's fill is long, and its greedy one has
/// been checked by `shapes`.
pub const SAMPLED_SHAPES: [InfillShape; 3] =
    [InfillShape::Line, InfillShape::Block, InfillShape::Insert];

impl CandidateConfig {
    /// The shapes this run fills: the configured ones in the first stage, the multi-line
    /// ones not configured in `shapes`, [`SAMPLED_SHAPES`] in `sampled`.
    pub fn stage_shapes(&self) -> Vec<InfillShape> {
        match self.stage {
            Stage::First => self.shapes.clone(),
            Stage::Shapes => MULTI_LINE
                .into_iter()
                .filter(|s| !self.shapes.contains(s))
                .collect(),
            Stage::Sampled { .. } => SAMPLED_SHAPES.to_vec(),
        }
    }
}

/// Replies drawn at most per candidate asked for: a small model's replies are often unusable
/// (an unchanged line, prose), and a checked candidate is what can fix the bug.
pub const DRAWS_PER_CANDIDATE: usize = 2;

impl Default for CandidateConfig {
    fn default() -> Self {
        CandidateConfig {
            count: 4,
            format: EditFormat::Infill,
            shapes: crate::config::repair::DEFAULT_INFILL_SHAPES.to_vec(),
            parallel: 1,
            overlap: None,
            temperature: 0.8,
            stage: Stage::First,
            consensus: Some(crate::verify::differential::PER_FUNCTION),
        }
    }
}

/// Functions shown to the model at most.
const MAX_SUSPECTS: usize = 3;
/// Bytes of suspect source shown at most (a function over it is cut from the list).
const SUSPECT_BUDGET: usize = 6 * 1024;

/// What became of one drawn reply: the one outcome ladder (`verify::outcome`).
pub use crate::verify::outcome::Outcome;

/// The prompt's inputs besides the suspects.
#[derive(Debug, Clone, Default)]
pub struct Problem {
    /// The failing tests the sandbox can run (empty: none is visible there, e.g. a task's
    /// hidden tests; candidates are then checked on the whole suite only).
    pub targets: Vec<String>,
    /// What the failing tests report (a test run's output, or a problem statement).
    pub report: String,
    /// The failing-code context (its failing test functions are shown).
    pub context: Context,
    pub files: BTreeMap<String, String>,
    /// The fault localization's functions, best first (empty: none ran; the context's
    /// locations are the suspects).
    pub ranked: Vec<Ranked>,
    /// What the fault localization did, for the trajectory.
    pub localization: String,
    /// How long the fault localization took (reading the files it ranks included).
    pub localization_ms: u64,
    /// The visible failing tests' files: the verifier's generalisation layers rank passing
    /// candidates against the literals they use.
    pub tests: Vec<crate::verify::oracle::TestSource>,
}

impl Problem {
    /// The first `limit` ranked functions outside the failing tests' files, each with its
    /// file's text (a function whose file was not read is skipped): what a rule looks at.
    pub(super) fn code_suspects(&self, limit: usize) -> impl Iterator<Item = (&Ranked, &str)> {
        let tests: std::collections::BTreeSet<&str> =
            self.tests.iter().map(|t| t.path.as_str()).collect();
        self.ranked
            .iter()
            .filter(move |r| !tests.contains(r.loc.path.as_str()))
            .take(limit)
            .filter_map(|r| Some((r, self.files.get(&r.loc.path)?.as_str())))
    }

    /// One file and one suspect function in it, `name` on lines `func` (inclusive), its
    /// `hot` lines scored 1.0, and what the failing tests `report`: a rule's test problem.
    #[cfg(test)]
    pub(super) fn one_suspect(
        path: &str,
        name: &str,
        src: &str,
        report: &str,
        func: (usize, usize),
        hot: &[usize],
    ) -> Problem {
        Problem {
            report: report.into(),
            files: BTreeMap::from([(path.to_string(), src.to_string())]),
            ranked: vec![Ranked {
                loc: crate::agent::context::Location {
                    path: path.into(),
                    start: func.0,
                    end: func.1,
                    name: name.into(),
                    frame_line: None,
                },
                lines: hot.iter().map(|&l| (l, 1.0)).collect(),
            }],
            ..Problem::default()
        }
    }
}
