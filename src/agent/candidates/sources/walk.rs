//! `walk`: a greedy one-line fill that departs from the masked line and is checked is
//! continued at once from the masked line's own text through the token where it departed
//! ([`continued_start`]), and so on along the line ([`continue_steps`]). Its prompt is in the
//! server's cache: only the start and the rest of the line are evaluated. A passing step is
//! walked on too: a later step that passes keeps more of the line, the more faithful fix.

use super::super::infill::MAX_SITES;
use super::super::pydefs::token_starts;
use super::super::shapes;
use super::{Done, Draw, DrawSource, How, Round};

pub(super) struct Walk;

impl DrawSource for Walk {
    fn name(&self) -> &'static str {
        "walk"
    }

    fn after(&self, round: &Round<'_>, done: &Done<'_>) -> Vec<Draw> {
        let d = done.draw;
        // A greedy fill or a step of a walk, not a runner-up's branch.
        if !matches!(d.how, Some(How::Greedy | How::Continued))
            || d.step >= continue_steps(d.at)
            || !done.departs()
        {
            return Vec::new();
        }
        let site = &round.sites[d.at];
        if !shapes::of(site.shape).one_line() {
            return Vec::new();
        }
        let Some(start) = round
            .masked(site)
            .and_then(|m| continued_start(m, done.text))
        else {
            return Vec::new();
        };
        vec![Draw {
            text: Some(start),
            step: d.step + 1,
            ..Draw::fill(&Walk, d.at, 0, How::Continued)
        }]
    }
}

/// Greedy fills that depart from the masked line are continued from it at every site of a
/// shape ([`MAX_SITES`]): a continuation's prompt is the fill's own, cached, so a step costs
/// ~0.3 s of model time here, and the bug line of a failing task ranked 7th–11th at five of
/// the bench's misses, each with a greedy fill that departed from it. Each continuation that
/// changes the line is another check. On the mutation bench, against the walk at the best
/// six sites: 22/56 against 21/56 under the hidden checks as strengthened since (25 against
/// 22 as recorded), 679 continuation fills (176 s) against 353 (110 s), and fewer prompt
/// tokens evaluated in all (74,373 against 76,148).
pub(in super::super) const CONTINUED_SITES: usize = MAX_SITES;
/// Continuations of one greedy fill at most: each walks on along the masked line, taking
/// one more of its tokens than where the previous one departed, until the model's rest
/// agrees with it (no departure left). Probed greedy at the 46 one-line bug lines of the
/// mutation bench: two steps found the fix at 17, walking on found it at 20 (at the 3rd,
/// 5th and 6th continuation), for 123 continuation fills against 65. On the bench, walking
/// at the best three sites and two steps at the next three gained nothing (the 5th-step
/// fix was at the 4th site); walking at all six gained that task (22/56 against 21/56) at
/// fewer prompt tokens in all (76,148 against 77,986, run-to-run noise included).
pub(in super::super) const WALK_STEPS: usize = 8;

/// Continuations of a greedy fill at site `at` (best first) at most. Pure.
pub(in super::super) fn continue_steps(at: usize) -> usize {
    if at < CONTINUED_SITES { WALK_STEPS } else { 0 }
}

/// Where a one-line fill that departs from the masked line is continued: the masked line's
/// own text through the token where the fill first departs from it (whitespace aside), for
/// the model to write the rest. A small model asked for a whole line often writes another
/// statement than the masked one (a guard, a `raise`), while given the line's start it
/// writes its rest as the code around it says: `return reduce(evalform_front, ` continued
/// with `forms, val)`, `dints[int_idx -` with ` 1]`. `None`: the fill is the masked line, or
/// departs from it only in its last token (the continuation would be the line itself).
/// Pure.
pub(in super::super) fn continued_start(masked: &str, fill: &str) -> Option<String> {
    let code = masked.trim_start();
    let indent = &masked[..masked.len() - code.len()];
    let code = code.trim_end();
    let fill = fill.trim();
    let mut f = fill.char_indices().filter(|(_, c)| !c.is_whitespace());
    let mut depart = None;
    for (i, c) in code.char_indices().filter(|(_, c)| !c.is_whitespace()) {
        match f.next() {
            Some((_, d)) if d == c => {}
            _ => {
                depart = Some(i);
                break;
            }
        }
    }
    let depart = depart?;
    let cut = token_starts(code)
        .into_iter()
        .find(|&c| c > depart)
        .filter(|&c| c < code.len())?;
    Some(format!("{indent}{}", code[..cut].trim_end()))
}
