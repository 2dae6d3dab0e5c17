//! Where a round's candidates come from: a list of draw sources behind one trait.
//!
//! A round ([`super::runner`]) first checks what the sources hand over with no model call
//! ([`DrawSource::given`]: the rules), then queues every source's planned draws
//! ([`DrawSource::plan`]: the fills' schedule, or the chat samples), asks them in order and
//! checks each reply as it comes; after each check every source may put draws at the front of
//! the queue ([`DrawSource::after`]: splices, the walk along the masked line, the retry of a
//! fill that changed nothing). [`SOURCES`] is that list: its order is the order of the
//! hand-overs, of the queue and of the follow-ups.
//!
//! To add a stage: a file here with a type implementing [`DrawSource`] (its draws carry
//! `by: &It`, so the runner calls its `ask`/`read`), `mod it;` below and an entry in
//! [`SOURCES`]; `draw_order_tests.rs` then shows what changed in the sequence of draws. A new shape of fill is not a stage but a shape ([`super::shapes`]).

use std::collections::VecDeque;

use super::edits::{FileEdit, ParseError};
use super::shapes::Site;
use super::suspects::Suspect;
use super::{CandidateConfig, Outcome, Problem};
use crate::agent::attempt::Metered;
use crate::agent::model::{Alternative, FillTimings, Message, ModelError, Sampling, Usage};
use crate::agent::origin::{Draw as How, Origin};

mod chat;
mod fill;
mod retry;
mod rules;
mod splice;
mod walk;

#[cfg(test)]
mod tests;

pub(super) use fill::FillMemo;
#[cfg(test)]
pub(super) use {
    retry::branch,
    splice::spliced,
    walk::{CONTINUED_SITES, WALK_STEPS, continue_steps, continued_start},
};

/// Every source, in the order their candidates are handed over, their draws queued, and their
/// follow-ups put first (splices, then the walk's next step, then a retry).
const SOURCES: &[&dyn DrawSource] = &[
    &rules::Rules,
    &fill::Fill,
    &chat::Chat,
    &splice::Splice,
    &walk::Walk,
    &retry::Retry,
];

/// What every source hands over with no model call, in [`SOURCES`]' order, each with the
/// source's name.
pub(super) fn given(round: &Round<'_>) -> Vec<(&'static str, Read)> {
    SOURCES
        .iter()
        .flat_map(|s| s.given(round).into_iter().map(|g| (s.name(), g)))
        .collect()
}

/// Every source's planned draws, in [`SOURCES`]' order: the queue the model's turn starts with.
pub(super) fn plan(round: &Round<'_>) -> VecDeque<Draw> {
    SOURCES.iter().flat_map(|s| s.plan(round)).collect()
}

/// Every source's follow-ups of `done`, in [`SOURCES`]' order: the next draws, in this order.
pub(super) fn after(round: &Round<'_>, done: &Done<'_>) -> Vec<Draw> {
    SOURCES.iter().flat_map(|s| s.after(round, done)).collect()
}

/// One way of drawing candidates. Each method has a default that adds nothing, except
/// [`ask`](DrawSource::ask) and [`read`](DrawSource::read), which by default treat a draw as
/// a fill at its site ([`fill::ask`], [`fill::read`]).
#[async_trait::async_trait]
pub(super) trait DrawSource: Sync {
    /// What the trajectory and errors call its candidates (`rule`, `fill`, …).
    fn name(&self) -> &'static str;

    /// Candidates it has without asking the model, checked one at a time before any draw: a
    /// clean pass among them ends the round.
    fn given(&self, _round: &Round<'_>) -> Vec<Read> {
        Vec::new()
    }

    /// The draws it queues when the model's turn starts, in order.
    fn plan(&self, _round: &Round<'_>) -> Vec<Draw> {
        Vec::new()
    }

    /// The draws it puts at the front of the queue once `done` (any source's draw) is checked.
    fn after(&self, _round: &Round<'_>, _done: &Done<'_>) -> Vec<Draw> {
        Vec::new()
    }

    /// The reply to one of its draws; a model call goes through the round's metered model.
    async fn ask(&self, round: &Round<'_>, draw: &Draw) -> Result<Reply, ModelError> {
        fill::ask(round, draw).await
    }

    /// One of its replies read: where it came from, how the trajectory shows it, its edits.
    fn read(&self, round: &Round<'_>, draw: &Draw, reply: &Reply) -> Read {
        fill::read(round, draw, reply)
    }
}

/// What the sources of one round draw with.
pub(super) struct Round<'a> {
    /// The model on its tier: every call asked of the repair's ledger and charged to it.
    pub model: &'a Metered<'a>,
    pub problem: &'a Problem,
    pub config: &'a CandidateConfig,
    /// The index of the round's first candidate (0: the first round).
    pub offset: usize,
    /// The functions a chat reply may rewrite.
    pub suspects: Vec<Suspect>,
    /// Where fills are drawn (empty: the chat prompt is asked instead).
    pub sites: Vec<Site>,
    /// The chat prompt: system and user messages.
    pub history: Vec<Message>,
    /// The fills answered earlier in the run.
    pub memo: &'a FillMemo,
}

impl Round<'_> {
    /// The masked line of a site, as the file has it.
    pub fn masked(&self, site: &Site) -> Option<&str> {
        self.problem
            .files
            .get(&site.path)
            .zip(site.line.checked_sub(1))
            .and_then(|(src, i)| src.lines().nth(i))
    }
}

/// One draw still to make.
#[derive(Clone)]
pub(super) struct Draw {
    /// The source that queued it: it asks for the reply and reads it.
    pub by: &'static dyn DrawSource,
    /// The site it fills (an index into the round's sites; a chat draw: 0).
    pub at: usize,
    /// Its sampling ([`sampling`]: 0 is greedy).
    pub sample: usize,
    /// How the origin names a fill (`None`: not a fill).
    pub how: Option<How>,
    /// The text its fill continues from (a runner-up's, a walk's step), or a splice's line.
    pub text: Option<String>,
    /// Which step of a walk along the masked line it is (0: none).
    pub step: usize,
}

impl Draw {
    /// A fill at site `at`, drawn with `sample`, that the origin names `how`.
    pub fn fill(by: &'static dyn DrawSource, at: usize, sample: usize, how: How) -> Self {
        Draw {
            by,
            at,
            sample,
            how: Some(how),
            text: None,
            step: 0,
        }
    }
}

impl std::fmt::Debug for Draw {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Draw")
            .field("by", &self.by.name())
            .field("at", &self.at)
            .field("sample", &self.sample)
            .field("how", &self.how)
            .field("text", &self.text)
            .field("step", &self.step)
            .finish()
    }
}

/// A reply as the round needs it, from a chat completion, a fill or no model at all.
pub(super) struct Reply {
    pub text: String,
    pub usage: Usage,
    pub timings: Option<FillTimings>,
    /// The model's runner-up tokens (a greedy fill's).
    pub alternatives: Vec<Alternative>,
    /// Answered from the run's [`FillMemo`], not asked of the model.
    pub reused: bool,
}

impl Reply {
    /// A reply no model wrote (a splice's line).
    pub fn given(text: String) -> Self {
        Reply {
            text,
            usage: Usage::default(),
            timings: None,
            alternatives: Vec::new(),
            reused: false,
        }
    }
}

/// A candidate as read: where it came from, how the trajectory shows its reply, its edits.
pub(super) struct Read {
    pub origin: Origin,
    pub label: String,
    pub edits: Result<Vec<FileEdit>, ParseError>,
}

/// A draw after its check: what the sources' follow-ups look at.
pub(super) struct Done<'a> {
    pub draw: &'a Draw,
    pub status: Outcome,
    /// The reply's text (a fill's with the start it continued), empty when the call failed.
    pub text: &'a str,
    pub alternatives: &'a [Alternative],
}

impl Done<'_> {
    /// The fill changed the code and was checked (or repeated an earlier edit).
    pub fn departs(&self) -> bool {
        matches!(
            self.status,
            Outcome::Failing | Outcome::Partial | Outcome::Duplicate | Outcome::Passing
        )
    }
}

/// The sampling of candidate `i`: greedy first, then the temperature with seed `i + 1`.
pub fn sampling(i: usize, temperature: f64) -> Sampling {
    if i == 0 {
        Sampling {
            temperature: 0.0,
            seed: 1,
        }
    } else {
        Sampling {
            temperature,
            seed: i as u64 + 1,
        }
    }
}
