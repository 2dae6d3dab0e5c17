//! The `infill` format's sites: what one fill-in-the-middle request masks around the most
//! suspicious lines (a line, a block, a gap for new lines, a short function's body), the draw
//! schedule over them, the text around a gap, and the edit a fill makes.

use std::collections::BTreeMap;

use super::MAX_SUSPECTS;
use super::edits::{FileEdit, ParseError};
use super::pydefs::{indent_of, module_assignments_read, py_blocks, py_defs};
use crate::agent::localize::Ranked;
pub use crate::config::repair::InfillShape;

/// Sites the `infill` format fills at most (each is one fill-in-the-middle request).
pub(super) const MAX_SITES: usize = 16;
/// After the greedy pass, the best sites are filled again, sampled: of the 17 benchmark tasks
/// whose bug line was a site but was filled wrong, it ranked in the top four in 11.
pub(super) const RESAMPLED_SITES: usize = 4;
/// Sampled fills of each of those.
pub(super) const RESAMPLES: usize = 2;
/// The sample a greedy fill that changed nothing is retried with, at once (a seed none of
/// the [`RESAMPLES`] passes uses). 42% of the 1.5B's fills on seven real bugs (48% on 14
/// injected ones) gave the masked line back or nothing; the retry's prompt is all in the
/// server's cache (40-70 ms of prompt evaluation instead of 1.5-2.5 s).
pub(super) const RETRY_SAMPLE: usize = RESAMPLES + 1;

/// Which site infill draw `i` fills, and which sample it takes ([`sampling`]): every site
/// greedy, best first, then the best [`RESAMPLED_SITES`] sampled, [`RESAMPLES`] times each
/// back to back. Back to back, a site's second sample finds its whole prompt in the
/// server's cache: when the samples took turns between sites, a revisit re-evaluated 69 of
/// its prompt tokens on average (1.5 s with the 1.5B here, a fifth of the model time on the
/// mutation bench). Pure.
pub fn infill_draw(i: usize, sites: usize) -> (usize, usize) {
    if i < sites {
        return (i, 0);
    }
    let j = i - sites;
    (j / RESAMPLES, 1 + j % RESAMPLES)
}

/// Infill draws in all for `sites` sites.
pub fn infill_draws(sites: usize) -> usize {
    sites + sites.min(RESAMPLED_SITES) * RESAMPLES
}

/// Every draw of a search over `sites` (grouped by shape, as [`infill_sites`] orders them),
/// as (site index, sample): each shape's sites in turn, with [`infill_draw`]'s schedule
/// within the shape. Pure.
pub fn infill_plan(sites: &[Site]) -> Vec<(usize, usize)> {
    let mut plan = Vec::new();
    let mut from = 0;
    while from < sites.len() {
        let n = sites[from..]
            .iter()
            .take_while(|s| s.shape == sites[from].shape)
            .count();
        plan.extend((0..infill_draws(n)).map(|i| {
            let (at, sample) = infill_draw(i, n);
            (from + at, sample)
        }));
        from += n;
    }
    plan
}

/// Lines of the file above the function, and below it, around an infill's gap.
pub(super) const INFILL_ABOVE: usize = 20;
pub(super) const INFILL_BELOW: usize = 5;
/// Lines after the gap a fill sees at most. The suffix follows the gap in the prompt, so the
/// server's prompt cache never serves it: every fill evaluates it again, and prompt
/// evaluation was 83% of a fill's time on 2 cores (a 100-line function's fills took 10-20 s
/// each, its suffix 400-1000 tokens). At 12 lines it was still ~85 of the ~90 tokens a fill
/// at a new site evaluated (1.9-2.1 s of its 2.5 s, the mutation bench); 6 lines keep the
/// gap's own block in view.
pub(super) const INFILL_AFTER: usize = 6;
/// Tokens a one-line fill may write.
pub(super) const INFILL_TOKENS: u32 = 80;
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
/// Module-level assignments a function reads that become line sites, at most per function.
const MODULE_SITES: usize = 3;

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
    /// `path:line` (one line) or `path:line-end`, as the trajectory names it.
    pub fn label(&self) -> String {
        match self.shape {
            InfillShape::Line => format!("{}:{}", self.path, self.line),
            InfillShape::Insert => format!("{}:{} (insert)", self.path, self.line),
            _ => format!(
                "{}:{}-{} ({})",
                self.path,
                self.line,
                self.end,
                self.shape.as_str()
            ),
        }
    }

    /// What a request for this site may generate: its stop strings and token cap. A block or
    /// body fill also stops where the next definition at its function's level (or the
    /// module's) would start: lines past the gap are thrown away ([`fill_lines`]), and at
    /// ~20 generated tokens/s on a CPU each one is waited for. Pure.
    pub fn limits(&self, src: &str) -> (Vec<String>, u32) {
        let mut stop: Vec<String> = Vec::new();
        let cap = match self.shape {
            InfillShape::Line => {
                stop.push("\n".into());
                INFILL_TOKENS
            }
            InfillShape::Insert => {
                stop.push("\n\n".into());
                TOKENS_PER_LINE * INSERT_LINES as u32
            }
            _ => (TOKENS_PER_LINE * (self.end + 1 - self.line).max(2) as u32).min(MAX_FILL_TOKENS),
        };
        if matches!(self.shape, InfillShape::Block | InfillShape::Body) {
            let own = src
                .lines()
                .nth(self.func.0.saturating_sub(1))
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
            stop.extend(heads);
        }
        (stop, cap)
    }
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

/// Greedy fills that depart from the masked line are continued from it at every site of a
/// shape ([`MAX_SITES`]): a continuation's prompt is the fill's own, cached, so a step costs
/// ~0.3 s of model time here, and the bug line of a failing task ranked 7th–11th at five of
/// the bench's misses, each with a greedy fill that departed from it. Each continuation that
/// changes the line is another check. On the mutation bench, against the walk at the best
/// six sites: 22/56 against 21/56 under the hidden checks as strengthened since (25 against
/// 22 as recorded), 679 continuation fills (176 s) against 353 (110 s), and fewer prompt
/// tokens evaluated in all (74,373 against 76,148).
pub(super) const CONTINUED_SITES: usize = MAX_SITES;
/// Continuations of one greedy fill at most: each walks on along the masked line, taking
/// one more of its tokens than where the previous one departed, until the model's rest
/// agrees with it (no departure left). Probed greedy at the 46 one-line bug lines of the
/// mutation bench: two steps found the fix at 17, walking on found it at 20 (at the 3rd,
/// 5th and 6th continuation), for 123 continuation fills against 65. On the bench, walking
/// at the best three sites and two steps at the next three gained nothing (the 5th-step
/// fix was at the 4th site); walking at all six gained that task (22/56 against 21/56) at
/// fewer prompt tokens in all (76,148 against 77,986, run-to-run noise included).
pub(super) const WALK_STEPS: usize = 8;

/// Continuations of a greedy fill at site `at` (best first) at most. Pure.
pub fn continue_steps(at: usize) -> usize {
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
pub fn continued_start(masked: &str, fill: &str) -> Option<String> {
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

/// One-token edits of the masked line that a fill departing from it points at: where the
/// fill's tokens first differ from the line's, its token there **replaces** the line's, or is
/// **inserted** before it, or (when the fill's token is the line's next one) the line's token
/// is **deleted**; the rest of the line is kept as it was. A small model asked for a whole
/// line often says where it would write something else and then writes its own rest
/// (`elif w.endswith('ies') or w[-4:-3] not in 'aeiou':` filled as
/// `elif w.endswith('ies') and w[-3] == 'i':`); the splice keeps the line's own rest
/// (`… and w[-4:-3] not in 'aeiou':`), the smallest edit that takes the model's point. The
/// fill itself and the masked line are not returned. Pure.
pub fn spliced(masked: &str, fill: &str) -> Vec<String> {
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

/// A line's tokens ([`token_starts`]), each with the whitespace after it.
fn line_tokens(code: &str) -> Vec<(&str, &str)> {
    let mut cuts = vec![0];
    cuts.extend(token_starts(code));
    cuts.push(code.len());
    cuts.windows(2)
        .filter(|w| w[0] < w[1])
        .map(|w| {
            let t = &code[w[0]..w[1]];
            let word = t.trim_end();
            (word, &t[word.len()..])
        })
        .collect()
}

/// Byte offsets where a line of Python's tokens start, after the first: words, runs of
/// operator characters, strings (whole), single brackets and punctuation. Pure.
fn token_starts(code: &str) -> Vec<usize> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Op,
        Other,
    }
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            Class::Word
        } else if "=!<>+-*/%&|^~@:".contains(c) {
            Class::Op
        } else {
            Class::Other
        }
    };
    let mut out = Vec::new();
    let mut prev: Option<Class> = None;
    let mut chars = code.char_indices();
    while let Some((i, c)) = chars.next() {
        if c.is_whitespace() {
            prev = None;
            continue;
        }
        let k = class(c);
        if i > 0 && (prev != Some(k) || k == Class::Other) {
            out.push(i);
        }
        prev = Some(k);
        if c == '\'' || c == '"' {
            // A string is one token: no cut inside it.
            while let Some((_, d)) = chars.next() {
                if d == '\\' {
                    chars.next();
                } else if d == c {
                    break;
                }
            }
            prev = Some(Class::Other);
        }
    }
    out
}

/// The gaps to fill, shape by shape in the order of `shapes` (a cascade: the one-line fills
/// are cheap and fix most injected bugs; the multi-line shapes come after them, for what one
/// line cannot express), and within a shape most suspicious first (ties: the better-ranked
/// function, the earlier line), at most [`MAX_SITES`] per shape, each function's share of
/// them first: for each of the best [`MAX_SUSPECTS`]
/// functions, per shape asked for, every scored line (`line`), the block around each of its
/// [`HOT_PER_FUNCTION`] most suspicious lines (`block`), a gap before each of them (`insert`),
/// its whole body when it is short (`body`). Pure.
pub fn infill_sites(
    ranked: &[Ranked],
    files: &BTreeMap<String, String>,
    shapes: &[InfillShape],
) -> Vec<Site> {
    let mut all: Vec<(Site, usize)> = Vec::new();
    for (rank, r) in ranked.iter().take(MAX_SUSPECTS).enumerate() {
        let Some(src) = files.get(&r.loc.path) else {
            continue;
        };
        let lines: Vec<&str> = src.lines().collect();
        let in_file = |l: usize| l >= 1 && l <= lines.len();
        let func = (r.loc.start, r.loc.end.min(lines.len()));
        let site = |line: usize, end: usize, shape: InfillShape, score: f64| Site {
            path: r.loc.path.clone(),
            line,
            end,
            shape,
            func,
            score,
        };
        let score_of = |a: usize, b: usize| {
            r.lines
                .iter()
                .filter(|(l, _)| (a..=b).contains(l))
                .map(|(_, s)| *s)
                .fold(0.0_f64, f64::max)
        };
        // The most suspicious maskable lines, best first.
        let mut hot: Vec<(usize, f64)> = r
            .lines
            .iter()
            .copied()
            .filter(|&(l, _)| in_file(l) && maskable(lines[l - 1]))
            .collect();
        hot.sort_by(|a, b| {
            b.1.partial_cmp(&a.1)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(a.0.cmp(&b.0))
        });
        let body = body_span(src, func);
        let blocks = py_blocks(src);
        for &shape in shapes {
            match shape {
                InfillShape::Line => {
                    for &(l, score) in &hot {
                        all.push((site(l, l, shape, score), rank));
                    }
                    // Import-time lines the function depends on, after every scored line:
                    // the spectrum cannot score them ([`module_assignments_read`]).
                    for l in module_assignments_read(src, func.0, func.1)
                        .into_iter()
                        .filter(|&l| in_file(l) && maskable(lines[l - 1]))
                        .take(MODULE_SITES)
                    {
                        let s = Site {
                            func: (l, l),
                            ..site(l, l, shape, 0.0)
                        };
                        if !all.iter().any(|(o, _)| o.path == s.path && o.line == l) {
                            all.push((s, rank));
                        }
                    }
                }
                InfillShape::Block => {
                    let mut seen: Vec<(usize, usize)> = Vec::new();
                    for &(l, _) in hot.iter().take(HOT_PER_FUNCTION) {
                        let Some(body) = body.filter(|(a, b)| (*a..=*b).contains(&l)) else {
                            continue;
                        };
                        if let Some((a, b)) = block_around(&lines, &blocks, l, body)
                            && !seen.contains(&(a, b))
                        {
                            seen.push((a, b));
                            all.push((site(a, b, shape, score_of(a, b)), rank));
                        }
                    }
                }
                InfillShape::Insert => {
                    for &(l, score) in hot.iter().take(HOT_PER_FUNCTION) {
                        // Before a body line: the line above is the function's, not a header.
                        if body.is_some_and(|(a, _)| l >= a) {
                            all.push((site(l, l - 1, shape, score), rank));
                        }
                    }
                }
                InfillShape::Body => {
                    if let Some((a, b)) = body.filter(|(a, b)| b + 1 - a <= BODY_LINES) {
                        all.push((site(a, b, shape, score_of(a, b)), rank));
                    }
                }
            }
        }
    }
    let order = |s: InfillShape| shapes.iter().position(|x| *x == s).unwrap_or(usize::MAX);
    all.sort_by(|(a, ra), (b, rb)| {
        order(a.shape)
            .cmp(&order(b.shape))
            .then(
                b.score
                    .partial_cmp(&a.score)
                    .unwrap_or(std::cmp::Ordering::Equal),
            )
            .then(ra.cmp(rb))
            .then(a.line.cmp(&b.line))
    });
    // Each function gets its share of a shape's sites before any gets more: a long function
    // whose lines all score the same must not crowd out the next suspect's one hot line (a
    // real bug's `parse_qsl` line came 23rd behind two helpers' 22 lines).
    let mut keep = vec![false; all.len()];
    for &shape in shapes {
        let of_shape: Vec<usize> = (0..all.len())
            .filter(|&i| all[i].0.shape == shape)
            .collect();
        let funcs: std::collections::BTreeSet<usize> = of_shape.iter().map(|&i| all[i].1).collect();
        let share = (MAX_SITES / funcs.len().max(1)).max(1);
        let mut per: BTreeMap<usize, usize> = BTreeMap::new();
        let mut n = of_shape.iter().filter(|&&i| keep[i]).count();
        for &i in &of_shape {
            let taken = per.entry(all[i].1).or_default();
            if !keep[i] && *taken < share && n < MAX_SITES {
                *taken += 1;
                keep[i] = true;
                n += 1;
            }
        }
        for &i in &of_shape {
            if n >= MAX_SITES {
                break;
            }
            if !keep[i] {
                keep[i] = true;
                n += 1;
            }
        }
    }
    all.into_iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|((s, _), _)| s)
        .collect()
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

/// The text before and after a site's gap: from [`INFILL_ABOVE`] lines above its function,
/// to [`INFILL_BELOW`] lines past it but at most [`INFILL_AFTER`] past the gap (the prefix
/// ends, the suffix starts, at a line break). Pure.
pub fn infill_context(src: &str, site: &Site) -> (String, String) {
    let lines: Vec<&str> = src.lines().collect();
    let from = site.func.0.saturating_sub(INFILL_ABOVE).max(1);
    let to = (site.func.1 + INFILL_BELOW)
        .min(site.end + INFILL_AFTER)
        .min(lines.len());
    // The file's imports come first when the window does not reach them: every fill of the
    // file starts with the same text, so the server's prompt cache serves it, and the model
    // knows the names the function uses.
    let head = file_head(&lines, from);
    let mut prefix = head;
    prefix.push_str(&lines[(from - 1).min(site.line - 1)..site.line - 1].join("\n"));
    if !prefix.is_empty() && !prefix.ends_with('\n') {
        prefix.push('\n');
    }
    let mut suffix = lines[site.end.min(to)..to].join("\n");
    suffix.push('\n');
    (prefix, suffix)
}

/// Import lines of a file at most in a fill's prefix.
const HEAD_LINES: usize = 12;

/// The file's leading import lines above line `from` (where the fill's window starts), then
/// a `...` line: empty when the window starts at the top or the file starts with no import.
/// Pure.
fn file_head(lines: &[&str], from: usize) -> String {
    let imports: Vec<&str> = lines[..(from - 1).min(lines.len())]
        .iter()
        .copied()
        .filter(|l| l.starts_with("import ") || l.starts_with("from "))
        .take(HEAD_LINES)
        .collect();
    if imports.is_empty() {
        return String::new();
    }
    format!("{}\n# ...\n", imports.join("\n"))
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

/// Brackets a line of Python leaves open (negative: it closes more than it opens), outside
/// strings and its comment; `None` when a triple quote makes the line's strings unknown.
/// Pure.
pub(super) fn open_brackets(line: &str) -> Option<i32> {
    if line.contains("\"\"\"") || line.contains("'''") {
        return None;
    }
    let mut depth = 0;
    let mut quote: Option<char> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') => break,
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            _ => {}
        }
    }
    Some(depth)
}

/// The last line (1-based) of the statement line `first` starts when that line leaves
/// brackets open and the next lines close them (at most [`STATEMENT_LINES`] in all); `None`
/// when it is complete on its line or its end is not found. Pure.
pub(super) fn statement_end(lines: &[String], first: usize) -> Option<usize> {
    let mut depth = open_brackets(lines.get(first - 1)?)?;
    if depth <= 0 {
        return None;
    }
    for (i, l) in lines
        .iter()
        .enumerate()
        .skip(first)
        .take(STATEMENT_LINES - 1)
    {
        depth += open_brackets(l)?;
        if depth <= 0 {
            return (depth == 0).then_some(i + 1);
        }
    }
    None
}

/// Physical lines one statement spans at most for a one-line fill to replace it whole.
const STATEMENT_LINES: usize = 8;

/// The edit a fill makes at `site`. Pure.
pub fn apply_infill(
    text: &str,
    site: &Site,
    files: &BTreeMap<String, String>,
) -> Result<FileEdit, ParseError> {
    let src = files
        .get(&site.path)
        .ok_or_else(|| ParseError::NotApplied(format!("{} was not read", site.path)))?;
    let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
    if site.line == 0
        || site.line > lines.len() + 1
        || site.end > lines.len()
        || site.end + 1 < site.line
    {
        return Err(ParseError::NotApplied(format!(
            "{} has no lines {}-{}",
            site.path, site.line, site.end
        )));
    }
    let mut end = site.end;
    let new: Vec<String> = match site.shape {
        InfillShape::Line => {
            let filled = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            if filled.trim().is_empty() {
                return Err(ParseError::Unparsed("the model filled in nothing".into()));
            }
            // A line that opens a statement its next lines close, filled with the whole
            // statement on one line, means the statement (as written, the lines left would
            // not parse: 25 such fills on the two benches, one of them the gold fix).
            if open_brackets(filled) == Some(0) {
                end = statement_end(&lines, site.line).unwrap_or(end);
            }
            // A model that drops the indentation still means the line at its place.
            vec![if indent_of(filled).is_empty() {
                format!("{}{}", indent_of(&lines[site.line - 1]), filled.trim())
            } else {
                filled.trim_end().to_string()
            }]
        }
        _ => {
            // The gap's indentation: its first masked line's, an insert's the line it precedes.
            let indent = indent_of(lines.get(site.line - 1).map_or("", String::as_str)).to_string();
            let next = lines.get(site.end).map(String::as_str);
            let mut v = fill_lines(text, &indent, next);
            if site.shape == InfillShape::Insert {
                v.truncate(INSERT_LINES);
            }
            if v.is_empty() {
                return Err(ParseError::Unparsed("the model filled in nothing".into()));
            }
            v
        }
    };
    let orig = &lines[site.line - 1..end];
    let squeeze = |v: &[String]| -> String { v.concat().split_whitespace().collect() };
    let same = if end > site.end {
        squeeze(&new) == squeeze(orig)
    } else {
        new.len() == orig.len() && new.iter().zip(orig).all(|(a, b)| a.trim() == b.trim())
    };
    if same {
        return Err(ParseError::NotApplied(format!(
            "{} filled in as it is",
            site.label()
        )));
    }
    lines.splice(site.line - 1..end, new);
    let mut content = lines.join("\n");
    if src.ends_with('\n') {
        content.push('\n');
    }
    Ok(FileEdit {
        path: site.path.clone(),
        content,
    })
}
