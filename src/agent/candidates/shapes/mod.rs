//! What a fill masks: the `infill` format's shapes (a line, a block, a gap for new lines, a
//! short body) and their sites. Whatever differs between shapes is a method of [`Shape`], and
//! [`of`] is the one exhaustive match from the configured [`InfillShape`]: a new shape is a
//! file here plus a line in [`of`] (the compiler asks for it once the config has the variant).

use super::edits::ParseError;
use super::pydefs::py_defs;
use crate::agent::localize::Ranked;
pub use crate::config::repair::InfillShape;

mod block;
mod line;

#[cfg(test)]
pub(super) use line::{open_brackets, statement_end};

/// What one shape does differently: where its sites are, how a request for one is bounded
/// and named, and what a fill means.
pub trait Shape: Sync {
    /// Its sites in one ranked function, most suspicious first. `found`: the sites found
    /// before it (earlier functions and shapes).
    fn sites(&self, f: &Func<'_>, found: &[Site]) -> Vec<Site>;
    /// `path:line` or `path:line-end`, as the trajectory names a site. By default a span's
    /// (the multi-line shapes; `line` and `insert` name theirs otherwise).
    fn label(&self, site: &Site) -> String {
        block::span_label(site)
    }
    /// What a request for `site` may generate: its stop strings and token cap. Pure. By
    /// default a span's: up to the next definition, tokens for its lines.
    fn limits(&self, site: &Site, src: &str) -> (Vec<String>, u32) {
        (block::definition_heads(site, src), block::span_tokens(site))
    }
    /// The lines a fill at `site` means in place of its masked ones (`lines`: the file's),
    /// and the last line they replace (past `site.end` when the fill completes a statement
    /// the masked line starts). Pure. By default a span's: the whole fill.
    fn fill(
        &self,
        text: &str,
        site: &Site,
        lines: &[String],
    ) -> Result<(Vec<String>, usize), ParseError> {
        block::gap_lines(text, site, lines, usize::MAX)
    }
    /// It masks one line: a greedy fill that departs from it is walked along it and spliced
    /// into it (the `walk` and `splice` draw sources).
    fn one_line(&self) -> bool {
        false
    }
}

/// Each configured shape's behaviour.
pub fn of(shape: InfillShape) -> &'static dyn Shape {
    match shape {
        InfillShape::Line => &line::Line,
        InfillShape::Block => &block::Block,
        InfillShape::Insert => &block::Insert,
        InfillShape::Body => &block::Body,
    }
}

/// One gap the `infill` format asks the model to fill.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    pub path: String,
    /// The first masked line (an insert: the line the new lines go before), 1-based.
    pub line: usize,
    /// The last masked line, inclusive (an insert masks nothing: `line - 1`).
    pub end: usize,
    pub shape: InfillShape,
    /// The function's lines (1-based, inclusive).
    pub func: (usize, usize),
    /// The best spectrum score of the lines it masks (an insert: of the line it precedes).
    pub score: f64,
}

impl Site {
    /// As the trajectory names it ([`Shape::label`]).
    pub fn label(&self) -> String {
        of(self.shape).label(self)
    }

    /// Its request's stop strings and token cap ([`Shape::limits`]). Pure.
    pub fn limits(&self, src: &str) -> (Vec<String>, u32) {
        of(self.shape).limits(self, src)
    }
}

/// One ranked function as the shapes look at it.
pub struct Func<'a> {
    pub path: &'a str,
    pub src: &'a str,
    pub lines: Vec<&'a str>,
    /// Its lines (1-based, inclusive), cut at the file's end.
    pub span: (usize, usize),
    /// Its most suspicious maskable lines, best first (ties: the earlier line).
    pub hot: Vec<(usize, f64)>,
    /// Its statements after the docstring ([`body_span`]).
    pub body: Option<(usize, usize)>,
    scored: &'a [(usize, f64)],
}

impl<'a> Func<'a> {
    pub fn new(r: &'a Ranked, src: &'a str) -> Self {
        let lines: Vec<&str> = src.lines().collect();
        let span = (r.loc.start, r.loc.end.min(lines.len()));
        let mut hot: Vec<(usize, f64)> = r
            .lines
            .iter()
            .copied()
            .filter(|&(l, _)| l >= 1 && l <= lines.len() && maskable(lines[l - 1]))
            .collect();
        hot.sort_by(|a, b| {
            b.1.partial_cmp(&a.1)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.0.cmp(&b.0))
        });
        Func {
            path: &r.loc.path,
            src,
            lines,
            span,
            hot,
            body: body_span(src, span),
            scored: &r.lines,
        }
    }

    /// Whether `l` (1-based) is a line of the file.
    pub fn in_file(&self, l: usize) -> bool {
        l >= 1 && l <= self.lines.len()
    }

    /// A site of this function masking `line..=end`.
    pub fn site(&self, line: usize, end: usize, shape: InfillShape, score: f64) -> Site {
        Site {
            path: self.path.to_string(),
            line,
            end,
            shape,
            func: self.span,
            score,
        }
    }

    /// The best score of its lines `a..=b` (0 when none is scored).
    pub fn score_of(&self, a: usize, b: usize) -> f64 {
        self.scored
            .iter()
            .filter(|(l, _)| (a..=b).contains(l))
            .map(|(_, s)| *s)
            .fold(0.0_f64, f64::max)
    }
}

/// The body of the function at `func` (1-based lines): from its first statement after the
/// docstring to its end. `None`: no such statement (a docstring-only or one-line body).
fn body_span(src: &str, func: (usize, usize)) -> Option<(usize, usize)> {
    let d = py_defs(src)
        .into_iter()
        .find(|d| d.start + 1 == func.0 || d.def_row + 1 == func.0)?;
    let first = d.body_row? + 1;
    (first > d.def_row + 1 && first <= d.end + 1).then_some((first, d.end + 1))
}

/// Lines not worth masking: blank, comments, docstrings, headers and bare keywords. A `def`
/// line that gives a parameter a default is worth it: the default is code that runs, and a
/// wrong one is a bug the spectrum scores on that line (a call's first line event).
pub(super) fn maskable(line: &str) -> bool {
    let t = line.trim();
    let def = t.starts_with("def ") || t.starts_with("async def ");
    !(t.is_empty()
        || t.starts_with('#')
        || (def && !has_default(t))
        || t.starts_with("class ")
        || t.starts_with('@')
        || t.starts_with("\"\"\"")
        || t.starts_with("'''")
        || matches!(t, "else:" | "try:" | "finally:" | "pass" | ")" | "]" | "}"))
}

/// Whether a `def` line's parameters (as far as the line shows them) give one a default:
/// an `=` inside its parentheses that is not part of a comparison. Pure.
fn has_default(def: &str) -> bool {
    let Some(open) = def.find('(') else {
        return false;
    };
    let params = &def[open + 1..def.rfind(')').filter(|&c| c > open).unwrap_or(def.len())];
    let b = params.as_bytes();
    (0..b.len()).any(|i| {
        b[i] == b'='
            && !matches!(b.get(i + 1), Some(b'='))
            && !(i > 0 && matches!(b[i - 1], b'=' | b'!' | b'<' | b'>'))
    })
}
