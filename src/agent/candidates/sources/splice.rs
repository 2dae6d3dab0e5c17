//! `splice`: the model's token where a greedy one-line fill departs from the masked line,
//! spliced into the line with the line's own rest ([`spliced`]): no model call, one check
//! each, and the smallest edits that take the model's point. They come first.

use super::super::infill::apply_infill;
use super::super::pydefs::line_tokens;
use super::super::shapes::{self, Site};
use super::{Done, Draw, DrawSource, How, Reply, Round};
use crate::agent::model::ModelError;
use crate::verify::pysrc::parses_cleanly;

pub(super) struct Splice;

#[async_trait::async_trait]
impl DrawSource for Splice {
    fn name(&self) -> &'static str {
        "splice"
    }

    fn after(&self, round: &Round<'_>, done: &Done<'_>) -> Vec<Draw> {
        let d = done.draw;
        // A fill the model wrote greedily (a branch and a walk's step too), not a sample.
        if !matches!(d.how, Some(How::Greedy | How::RunnerUp | How::Continued)) || !done.departs() {
            return Vec::new();
        }
        let site = &round.sites[d.at];
        if !shapes::of(site.shape).one_line() {
            return Vec::new();
        }
        let mut lines = round
            .masked(site)
            .map(|m| spliced(m, done.text))
            .unwrap_or_default();
        if !lines.is_empty() {
            lines.retain(parses_at(site, &round.problem.files));
        }
        lines
            .into_iter()
            .map(|line| Draw {
                text: Some(line),
                ..Draw::fill(&Splice, d.at, 0, How::Spliced)
            })
            .collect()
    }

    /// The spliced line, as it is.
    async fn ask(&self, _round: &Round<'_>, draw: &Draw) -> Result<Reply, ModelError> {
        Ok(Reply::given(draw.text.clone().unwrap_or_default()))
    }
}

/// One-token edits of the masked line that a fill departing from it points at: where the
/// fill's tokens first differ from the line's, its token there **replaces** the line's, or is
/// **inserted** before it, or (when the fill's token is the line's next one) the line's token
/// is **deleted**; the rest of the line is kept as it was. A small model asked for a whole
/// line often says where it would write something else and then writes its own rest
/// (`elif w.endswith('ies') or w[-4:-3] not in 'aeiou':` filled as
/// `elif w.endswith('ies') and w[-3] == 'i':`); the splice keeps the line's own rest
/// (`… and w[-4:-3] not in 'aeiou':`), the smallest edit that takes the model's point. The
/// fill itself and the masked line are not returned. Pure.
pub(in super::super) fn spliced(masked: &str, fill: &str) -> Vec<String> {
    let code = masked.trim_start();
    let indent = &masked[..masked.len() - code.len()];
    let code = code.trim_end();
    let fill = fill
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let (m, f) = (line_tokens(code), line_tokens(fill));
    // A departure at the first token is another statement, not a point in this one.
    let Some(k) = (1..m.len()).find(|&i| f.get(i).is_none_or(|t| t.0 != m[i].0)) else {
        return Vec::new();
    };
    if f.first().map(|t| t.0) != m.first().map(|t| t.0) {
        return Vec::new();
    }
    let Some(&(new, new_ws)) = f.get(k) else {
        return Vec::new();
    };
    let join = |t: &[(&str, &str)]| t.iter().map(|(a, b)| format!("{a}{b}")).collect::<String>();
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    // Two words never merge: a space between them where the line had none.
    let glue = |a: &str, b: &str| {
        if word(a.chars().last()) && word(b.chars().next()) {
            format!("{a} {b}")
        } else {
            format!("{a}{b}")
        }
    };
    let (head, here, rest) = (join(&m[..k]), m[k], join(&m[k + 1..]));
    let new = format!("{new}{new_ws}");
    let mut out = vec![
        glue(&glue(&head, &new), &rest),
        glue(&glue(&head, &new), &format!("{}{}{rest}", here.0, here.1)),
    ];
    if m.get(k + 1).is_some_and(|t| t.0 == new.trim_end()) {
        out.push(format!("{head}{rest}"));
    }
    let mut seen = std::collections::BTreeSet::new();
    out.into_iter()
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.is_empty() && l != code && l != fill && seen.insert(l.clone()))
        .map(|l| format!("{indent}{l}"))
        .collect()
}

/// Whether a line in place of `site`'s masked line leaves its file parsing as it did: a
/// splice that breaks the syntax is not worth a test run. The file as it is is parsed once.
fn parses_at<'a>(
    site: &'a Site,
    files: &'a std::collections::BTreeMap<String, String>,
) -> impl FnMut(&String) -> bool + 'a {
    let broken_before = files.get(&site.path).map(|f| !parses_cleanly(f));
    move |line| match (broken_before, apply_infill(line, site, files)) {
        (Some(broken), Ok(edit)) => broken || parses_cleanly(&edit.content),
        _ => false,
    }
}
