//! The multi-line shapes, one mechanism parameterised by what they mask: `block` (2–8 lines
//! around a most suspicious line), `insert` (new lines before one: a missing guard) and
//! `body` (the whole body of a short function). A fill's lines end where the model went past
//! the gap ([`fill_lines`]).

use super::super::edits::ParseError;
use super::super::pydefs::{indent_of, py_blocks};
use super::{Func, InfillShape, Shape, Site};

/// Tokens per masked line of a multi-line fill, and at most.
const TOKENS_PER_LINE: u32 = 40;
const MAX_FILL_TOKENS: u32 = 480;
/// Lines a block masks, at least and at most.
const BLOCK_LINES: (usize, usize) = (2, 8);
/// Lines of a function body the `body` shape masks at most.
const BODY_LINES: usize = 30;
/// Lines an insert may add at most (a guard and its handling).
const INSERT_LINES: usize = 3;
/// Most suspicious lines per function that get a block or an insert.
const HOT_PER_FUNCTION: usize = 3;

pub(super) struct Block;
pub(super) struct Insert;
pub(super) struct Body;

impl Shape for Block {
    /// The block around each of the function's [`HOT_PER_FUNCTION`] most suspicious lines
    /// ([`block_around`]), each block once.
    fn sites(&self, f: &Func<'_>, _found: &[Site]) -> Vec<Site> {
        let blocks = py_blocks(f.src);
        let mut seen: Vec<(usize, usize)> = Vec::new();
        let mut out = Vec::new();
        for &(l, _) in f.hot.iter().take(HOT_PER_FUNCTION) {
            let Some(body) = f.body.filter(|(a, b)| (*a..=*b).contains(&l)) else {
                continue;
            };
            if let Some((a, b)) = block_around(&f.lines, &blocks, l, body)
                && !seen.contains(&(a, b))
            {
                seen.push((a, b));
                out.push(f.site(a, b, InfillShape::Block, f.score_of(a, b)));
            }
        }
        out
    }
}

impl Shape for Insert {
    /// A gap before each of the function's [`HOT_PER_FUNCTION`] most suspicious lines that
    /// are statements of its body (the line above is the function's, not a header).
    fn sites(&self, f: &Func<'_>, _found: &[Site]) -> Vec<Site> {
        f.hot
            .iter()
            .take(HOT_PER_FUNCTION)
            .filter(|&&(l, _)| f.body.is_some_and(|(a, _)| l >= a))
            .map(|&(l, score)| f.site(l, l - 1, InfillShape::Insert, score))
            .collect()
    }

    fn label(&self, site: &Site) -> String {
        format!("{}:{} (insert)", site.path, site.line)
    }

    fn limits(&self, _site: &Site, _src: &str) -> (Vec<String>, u32) {
        (vec!["\n\n".into()], TOKENS_PER_LINE * INSERT_LINES as u32)
    }

    fn fill(
        &self,
        text: &str,
        site: &Site,
        lines: &[String],
    ) -> Result<(Vec<String>, usize), ParseError> {
        gap_lines(text, site, lines, INSERT_LINES)
    }
}

impl Shape for Body {
    /// The function's whole body when it has at most [`BODY_LINES`] lines.
    fn sites(&self, f: &Func<'_>, _found: &[Site]) -> Vec<Site> {
        f.body
            .filter(|(a, b)| b + 1 - a <= BODY_LINES)
            .map(|(a, b)| f.site(a, b, InfillShape::Body, f.score_of(a, b)))
            .into_iter()
            .collect()
    }
}

/// `path:line-end (shape)`.
pub(super) fn span_label(site: &Site) -> String {
    format!(
        "{}:{}-{} ({})",
        site.path,
        site.line,
        site.end,
        site.shape.as_str()
    )
}

/// A block's or a body's token cap: [`TOKENS_PER_LINE`] per masked line (two at least), at
/// most [`MAX_FILL_TOKENS`].
pub(super) fn span_tokens(site: &Site) -> u32 {
    (TOKENS_PER_LINE * (site.end + 1 - site.line).max(2) as u32).min(MAX_FILL_TOKENS)
}

/// A block or body fill stops where the next definition at its function's level (or the
/// module's) would start: lines past the gap are thrown away ([`fill_lines`]), and at ~20
/// generated tokens/s on a CPU each one is waited for.
pub(super) fn definition_heads(site: &Site, src: &str) -> Vec<String> {
    let own = src
        .lines()
        .nth(site.func.0.saturating_sub(1))
        .map_or("", indent_of);
    // Four at most: OpenAI-style servers refuse more stop strings.
    let heads: [String; 4] = if own.is_empty() {
        ["\ndef ", "\nclass ", "\n@", "\nasync def "].map(String::from)
    } else {
        [
            format!("\n{own}def "),
            format!("\n{own}@"),
            "\ndef ".into(),
            "\nclass ".into(),
        ]
    };
    heads.to_vec()
}

/// The lines a multi-line fill means ([`fill_lines`]) at the gap's indentation (its first
/// masked line's; an insert's, the line it precedes), `most` at most; they replace the
/// masked lines.
pub(super) fn gap_lines(
    text: &str,
    site: &Site,
    lines: &[String],
    most: usize,
) -> Result<(Vec<String>, usize), ParseError> {
    let indent = indent_of(lines.get(site.line - 1).map_or("", String::as_str)).to_string();
    let next = lines.get(site.end).map(String::as_str);
    let mut v = fill_lines(text, &indent, next);
    v.truncate(most);
    if v.is_empty() {
        return Err(ParseError::Unparsed("the model filled in nothing".into()));
    }
    Ok((v, site.end))
}

/// The 2–8 lines around `line` a block mask covers: the innermost compound statement's body
/// that holds it and fits, else the run of statements at its indentation (their nested lines
/// included) that holds it, going out one level while that run is a single line, cut to 8
/// around it; always inside `body` (the function's statements after its docstring). Pure.
fn block_around(
    lines: &[&str],
    blocks: &[(usize, usize)],
    line: usize,
    body: (usize, usize),
) -> Option<(usize, usize)> {
    let (lo, hi) = BLOCK_LINES;
    let inside = |a: usize, b: usize| a >= body.0 && b <= body.1 && b >= a;
    let innermost = blocks
        .iter()
        .map(|&(a, b)| (a + 1, b + 1))
        .filter(|&(a, b)| {
            a <= line && line <= b && inside(a, b) && (lo..=hi).contains(&(b + 1 - a))
        })
        .min_by_key(|&(a, b)| b - a);
    if innermost.is_some() {
        return innermost;
    }
    let deeper_or_same = |l: usize, indent: usize| {
        let t = lines[l - 1];
        t.trim().is_empty() || indent_of(t).len() >= indent
    };
    let mut anchor = line;
    loop {
        let indent = indent_of(lines[anchor - 1]).len();
        let (mut a, mut b) = (anchor, anchor);
        while a > body.0 && deeper_or_same(a - 1, indent) {
            a -= 1;
        }
        while b < body.1 && deeper_or_same(b + 1, indent) {
            b += 1;
        }
        while a < anchor && lines[a - 1].trim().is_empty() {
            a += 1;
        }
        while b > anchor && lines[b - 1].trim().is_empty() {
            b -= 1;
        }
        if b + 1 - a >= lo {
            // Too long: the 8 lines around the anchor's line.
            if b + 1 - a > hi {
                let start = line.saturating_sub(hi / 2).max(a);
                let end = (start + hi - 1).min(b);
                return Some((end + 1 - hi.min(end + 1 - a), end));
            }
            return Some((a, b));
        }
        // A single line: its parent statement's level, if the parent is in the body.
        let parent = (body.0..anchor)
            .rev()
            .find(|&l| !lines[l - 1].trim().is_empty() && indent_of(lines[l - 1]).len() < indent)?;
        anchor = parent;
    }
}

/// The lines a multi-line fill means: up to the first line indented less than the gap (the
/// model went on past the block) or equal to the suffix's first line (it wrote the suffix
/// again), without trailing blank lines, re-indented when the model dropped the gap's
/// indentation. Pure.
fn fill_lines(text: &str, indent: &str, next: Option<&str>) -> Vec<String> {
    let raw: Vec<&str> = text.lines().collect();
    let first = raw
        .iter()
        .find(|l| !l.trim().is_empty())
        .copied()
        .unwrap_or("");
    // A fill written flush left although the gap is indented: the gap's indentation is meant.
    let shift = if !indent.is_empty() && indent_of(first).is_empty() {
        indent
    } else {
        ""
    };
    let mut out: Vec<String> = Vec::new();
    for l in raw {
        if l.trim().is_empty() {
            out.push(String::new());
            continue;
        }
        let l = format!("{shift}{}", l.trim_end());
        if indent_of(&l).len() < indent.len()
            || next.is_some_and(|n| n.trim() == l.trim() && !n.trim().is_empty())
        {
            break;
        }
        out.push(l);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    while out.first().is_some_and(|l| l.is_empty()) {
        out.remove(0);
    }
    out
}
