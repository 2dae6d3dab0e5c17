//! `fill`: fill-in-the-middle at the round's sites, each greedy, then the best ones sampled,
//! shape after shape ([`infill_plan`]). Its [`ask`] and [`read`] are every fill's (the
//! sources' defaults): one request per draw, answered once per run ([`FillMemo`]).

use super::super::infill::{apply_infill, failure_hint, infill_context, infill_plan, sampled_plan};
use super::super::{Problem, Site, Stage};
use super::{Draw, DrawSource, How, Read, Reply, Round, sampling};
use crate::agent::model::{Infill, Model, ModelError, Sampling, Usage};
use crate::agent::origin::Origin;

pub(super) struct Fill;

impl DrawSource for Fill {
    fn name(&self) -> &'static str {
        "fill"
    }

    fn plan(&self, round: &Round<'_>) -> Vec<Draw> {
        let plan = match round.config.stage {
            Stage::First | Stage::Shapes => infill_plan(&round.sites),
            Stage::Sampled { pass } => sampled_plan(&round.sites, pass),
        };
        plan.into_iter()
            .map(|(at, sample)| {
                let how = if sample == 0 {
                    How::Greedy
                } else {
                    How::Sampled
                };
                Draw::fill(&Fill, at, sample, how)
            })
            .collect()
    }
}

/// A fill's reply: the request for its site, sample and start (a runner-up's or a walk's),
/// the start written back in front of what the model wrote.
pub(super) async fn ask(round: &Round<'_>, draw: &Draw) -> Result<Reply, ModelError> {
    let middle = draw.text.as_deref().unwrap_or("");
    let sample = sampling(draw.sample, round.config.temperature);
    let site = &round.sites[draw.at];
    let mut reply = infill_at(round.model, round.problem, site, sample, middle, round.memo).await?;
    reply.text.insert_str(0, middle);
    Ok(reply)
}

/// A fill read: its origin (how it was drawn; a greedy or sampled one answered from the memo
/// is `reused`), its site and how in front of its text, the edit it makes there.
pub(super) fn read(round: &Round<'_>, draw: &Draw, reply: &Reply) -> Read {
    let site = &round.sites[draw.at];
    let (how, shown) = match (draw.how, reply.reused) {
        (Some(How::Spliced), _) => (How::Spliced, " (spliced)"),
        (Some(How::Continued), true) => (How::Continued, " (continued, reused)"),
        (Some(How::Continued), false) => (How::Continued, " (continued)"),
        // A branch says so: its fill is the model's runner-up, not a sample.
        (Some(How::RunnerUp), true) => (How::RunnerUp, " (runner-up, reused)"),
        (Some(How::RunnerUp), false) => (How::RunnerUp, " (runner-up)"),
        // The same request earlier in this run: its answer again.
        (_, true) => (How::Reused, " (reused)"),
        (how, false) => (how.unwrap_or(How::Greedy), ""),
    };
    Read {
        origin: Origin::Fill {
            at: format!("{}:{}", site.path, site.line),
            shape: site.shape.as_str().into(),
            draw: how,
        },
        label: format!("{}{shown} ← {}", site.label(), reply.text),
        edits: apply_infill(&reply.text, site, &round.problem.files).map(|e| vec![e]),
    }
}

/// Runner-up tokens asked for per generated position of a greedy fill.
const ALTERNATIVES: u8 = 5;

/// Fills already answered in this run, by their request. A later round asks again at every
/// site, and a site whose prompt window does not reach the kept edit gets the same prompt,
/// seed and temperature: the answer would be the same (greedy, or seeded), so it is reused
/// and only the combination with the kept edit is new. On the mutation bench 55 of the 68
/// later-round draws repeated an earlier reply (91 model-s).
#[derive(Default)]
pub(in super::super) struct FillMemo(
    std::sync::Mutex<std::collections::HashMap<String, crate::agent::model::Filled>>,
);

impl FillMemo {
    fn key(i: &Infill<'_>) -> String {
        let s = i.sample.map(|s| (s.temperature.to_bits(), s.seed));
        // The parts joined by a byte no source text or stop string holds.
        format!(
            "{}\u{0}{}\u{0}{}\u{0}{}\u{0}{:?}\u{0}{}\u{0}{}",
            i.prefix,
            i.suffix,
            i.middle,
            i.stop.join("\u{1}"),
            s,
            i.max_tokens,
            i.alternatives
        )
    }

    fn get(&self, i: &Infill<'_>) -> Option<Reply> {
        let hit = self.0.lock().ok()?.get(&Self::key(i)).cloned()?;
        // Nothing was asked of the model: no tokens, no server time.
        Some(Reply {
            text: hit.text,
            usage: Usage::default(),
            timings: None,
            alternatives: hit.alternatives,
            reused: true,
        })
    }

    fn put(&self, i: &Infill<'_>, f: &crate::agent::model::Filled) {
        if let Ok(mut m) = self.0.lock() {
            m.insert(Self::key(i), f.clone());
        }
    }
}

/// One fill-in-the-middle request for `site`; `middle`: the start its fill continues. The
/// same request a second time is answered from `memo`.
pub(super) async fn infill_at(
    model: &dyn Model,
    problem: &Problem,
    site: &Site,
    sample: Sampling,
    middle: &str,
    memo: &FillMemo,
) -> Result<Reply, ModelError> {
    let src = problem.files.get(&site.path).map_or("", String::as_str);
    let (prefix, suffix) = infill_context(src, site);
    let prefix = format!("{}{prefix}", failure_hint(&problem.report));
    let (stop, max_tokens) = site.limits(src);
    let stop: Vec<&str> = stop.iter().map(String::as_str).collect();
    let request = Infill {
        prefix: &prefix,
        suffix: &suffix,
        stop: &stop,
        max_tokens,
        sample: Some(sample),
        middle,
        // Only a greedy fill is branched.
        alternatives: if sample.temperature == 0.0 && middle.is_empty() {
            ALTERNATIVES
        } else {
            0
        },
    };
    if let Some(hit) = memo.get(&request) {
        return Ok(hit);
    }
    let filled = model.infill(&request).await?;
    memo.put(&request, &filled);
    Ok(Reply::from(filled))
}

impl From<crate::agent::model::Filled> for Reply {
    fn from(f: crate::agent::model::Filled) -> Self {
        Reply {
            text: f.text,
            usage: f.usage,
            timings: f.timings,
            alternatives: f.alternatives,
            reused: false,
        }
    }
}
