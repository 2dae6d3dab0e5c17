//! The candidate strategy: K localized edits, each applied in a checkpoint of one container,
//! fast-checked on the target tests and rolled back.
//!
//! Agentless-style (localize → sample edits → validate). The suspects are the functions the
//! fault localization ranks highest ([`crate::agent::localize`]), else the ones the failing-code
//! context names ([`crate::agent::context::Focus::code`]). Two ways to draw edits:
//! - **infill** (the default, [`EditFormat::Infill`]): each of the most suspicious lines is
//!   masked in turn and the model fills in what belongs there ([`Model::infill`]), greedy over
//!   every line first, then sampled; the first passing one ends the drawing. A model without
//!   fill-in-the-middle, or a server that refuses it, gets the chat prompt in `lines` form.
//! - **chat**: one prompt shows the suspects and asks for the fix as numbered lines, a whole
//!   corrected function or search/replace blocks. Sample 0 is greedy, the others are drawn at
//!   a temperature with their own seeds.
//!
//! Replies are checked while the next one is generated.
//!
//! What survives here is a list of *passing* candidates (targets pass, and no test that passed
//! before fails) with their diffs; the caller verifies them in fresh containers, smallest diff
//! first. The workspace is restored after every candidate: the edited files get their
//! original bytes back (one exec), so the next candidate starts from the same snapshot.
//!
//! Pure parts ([`prompt`], [`parse_reply`], [`apply_function`], [`apply_search_replace`]) are
//! unit-tested; the async [`run`] reaches the container only through [`Sandbox`].

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tree_sitter::Node;

use crate::agent::context::{Context, Location};
use crate::agent::localize::Ranked;
use crate::agent::model::{Infill, Message, Model, ModelError, Request, Sampling, Usage};
use crate::agent::tools::{self, TestRun, ToolConfig};
use crate::agent::trajectory::{NodeRecord, Trajectory};
use crate::config::Budgets;
use crate::sandbox::output::truncate_text;
use crate::sandbox::{Sandbox, SandboxError};

pub use crate::config::repair::EditFormat;

/// The strategy's knobs.
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateConfig {
    /// Chat candidates checked (K): a reply that does not apply, changes nothing or repeats
    /// an earlier edit does not count, and another is drawn, up to [`DRAWS_PER_CANDIDATE`] × K
    /// replies in all. `infill` fills its sites instead ([`infill_draw`]): a one-line fill is
    /// a few tokens, and on the benchmark K = 8 stopped the drawing, before every site had
    /// been tried twice, in 29 of its 36 misses.
    pub count: usize,
    pub format: EditFormat,
    /// Model requests in flight at once (the server's slots).
    pub parallel: usize,
    /// Temperature of every sample but the first (which is greedy).
    pub temperature: f64,
}

/// Replies drawn at most per candidate asked for: a small model's replies are often unusable
/// (an unchanged line, prose), and a checked candidate is what can fix the bug.
pub const DRAWS_PER_CANDIDATE: usize = 2;

impl Default for CandidateConfig {
    fn default() -> Self {
        CandidateConfig {
            count: 4,
            format: EditFormat::Infill,
            parallel: 1,
            temperature: 0.8,
        }
    }
}

/// Functions shown to the model at most.
const MAX_SUSPECTS: usize = 3;
/// Bytes of suspect source shown at most (a function over it is cut from the list).
const SUSPECT_BUDGET: usize = 6 * 1024;

/// One function the candidates may rewrite.
#[derive(Debug, Clone, PartialEq)]
pub struct Suspect {
    pub path: String,
    /// 1-based inclusive lines of the definition (decorators included).
    pub start: usize,
    pub end: usize,
    /// The bare function name (`count` for `Cart.count`).
    pub name: String,
    /// `Cart.count`, for the prompt.
    pub label: String,
    /// The source as shown (docstring removed).
    pub shown: String,
    /// The file's line number of each line of `shown`.
    pub shown_lines: Vec<usize>,
    /// The lines the fault localization scores highest, when that narrows the function down
    /// (see [`crate::agent::localize`]); named in the `lines` prompt.
    pub hot: Vec<usize>,
}

/// Functions shown at most when the callees of the located ones are added.
const MAX_WITH_CALLEES: usize = 5;

static CALL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(").expect("static regex")
});

/// A suspect of lines `start..=end` (1-based) of `src`, docstring hidden.
fn make_suspect(path: &str, start: usize, end: usize, label: &str, src: &str) -> Option<Suspect> {
    let lines: Vec<&str> = src.lines().collect();
    if start == 0 || end > lines.len() || start > end {
        return None;
    }
    let text = lines[start - 1..end].join("\n");
    let doc = docstring_lines(&text);
    let kept: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(i, _)| doc.is_none_or(|(a, b)| *i < a || *i > b))
        .collect();
    Some(Suspect {
        path: path.to_string(),
        start,
        end,
        name: label.rsplit('.').next().unwrap_or(label).to_string(),
        label: label.to_string(),
        shown: kept.iter().map(|(_, l)| *l).collect::<Vec<_>>().join("\n"),
        shown_lines: kept.iter().map(|(i, _)| start + i).collect(),
        hot: Vec::new(),
    })
}

/// The suspects: the context's code locations (the traceback's functions, the ones the test
/// calls), then the functions those call, one hop (a bug that raises nothing leaves no frame
/// in the function that has it), within [`SUSPECT_BUDGET`] bytes. Pure.
pub fn suspects(code: &[Location], files: &BTreeMap<String, String>) -> Vec<Suspect> {
    let mut out: Vec<Suspect> = Vec::new();
    let mut used = 0;
    let mut push = |out: &mut Vec<Suspect>, s: Suspect| {
        if out.iter().any(|o| o.path == s.path && o.start == s.start) {
            return;
        }
        if used + s.shown.len() > SUSPECT_BUDGET && !out.is_empty() {
            return;
        }
        used += s.shown.len();
        out.push(s);
    };
    for loc in code {
        if out.len() == MAX_SUSPECTS || loc.name == "<module>" {
            continue;
        }
        if let Some(s) = files
            .get(&loc.path)
            .and_then(|src| make_suspect(&loc.path, loc.start, loc.end, &loc.name, src))
        {
            push(&mut out, s);
        }
    }
    // One hop down: definitions (same file first, then the other code files read) of the
    // names the located functions call.
    let defs: Vec<(String, PyDef)> = files
        .iter()
        .filter(|(p, _)| p.ends_with(".py") && !crate::agent::context::is_test_path(p))
        .flat_map(|(p, src)| py_defs(src).into_iter().map(move |d| (p.clone(), d)))
        .collect();
    let located: Vec<Suspect> = out.clone();
    for s in &located {
        for c in CALL.captures_iter(&s.shown) {
            if out.len() >= MAX_WITH_CALLEES {
                return out;
            }
            let name = &c[1];
            if name == s.name || matches!(name, "print" | "len" | "isinstance" | "super") {
                continue;
            }
            let found = defs
                .iter()
                .filter(|(p, d)| d.name == name && !(p == &s.path && d.start + 1 == s.start))
                .min_by_key(|(p, _)| *p != s.path);
            if let Some((p, d)) = found
                && let Some(src) = files.get(p)
                && let Some(callee) = make_suspect(p, d.start + 1, d.end + 1, name, src)
            {
                push(&mut out, callee);
            }
        }
    }
    out
}

/// Hot lines named at most (more do not narrow a function down).
const MAX_HOT: usize = 4;

/// The suspects when the fault localization ranked functions: its best [`MAX_SUSPECTS`],
/// then the innermost traceback frame's function if it is not among them (an exception names
/// where it surfaced), within [`SUSPECT_BUDGET`] bytes. No callee hop: the spectrum already
/// scored every function the failing tests ran. Pure.
pub fn suspects_ranked(
    ranked: &[Ranked],
    code: &[Location],
    files: &BTreeMap<String, String>,
) -> Vec<Suspect> {
    let mut out: Vec<Suspect> = Vec::new();
    let mut used = 0;
    let frame = code
        .iter()
        .find(|l| l.frame_line.is_some() && l.name != "<module>");
    let picks = ranked
        .iter()
        .filter(|r| r.loc.name != "<module>")
        .take(MAX_SUSPECTS)
        .map(|r| (&r.loc, r.hot()))
        .chain(frame.map(|l| (l, Vec::new())));
    for (loc, hot) in picks {
        if out
            .iter()
            .any(|o| o.path == loc.path && o.start == loc.start)
        {
            continue;
        }
        let Some(mut s) = files
            .get(&loc.path)
            .and_then(|src| make_suspect(&loc.path, loc.start, loc.end, &loc.name, src))
        else {
            continue;
        };
        if used + s.shown.len() > SUSPECT_BUDGET && !out.is_empty() {
            continue;
        }
        let hot: Vec<usize> = hot
            .into_iter()
            .filter(|l| s.shown_lines.contains(l))
            .collect();
        if hot.len() <= MAX_HOT && hot.len() < s.shown_lines.len() {
            s.hot = hot;
        }
        used += s.shown.len();
        out.push(s);
    }
    out
}

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
}

const SYSTEM: &str = "You are an expert programmer. You fix bugs with small, exact edits and \
                      reply with code only, in the format asked for.";

/// The user message: the failing tests, what they report, the failing test function, the
/// suspects, and the format's instructions (`infill`'s chat fallback is `lines`). Pure.
pub fn prompt(problem: &Problem, suspects: &[Suspect], format: EditFormat) -> String {
    let mut p = String::from("A test fails. Fix the bug in the code, not in the tests.\n\n");
    if !problem.targets.is_empty() {
        let shown: Vec<&str> = problem.targets.iter().take(5).map(String::as_str).collect();
        p.push_str(&format!("Failing tests: {}\n", shown.join(", ")));
    }
    let report = error_lines(&problem.report);
    if !report.trim().is_empty() {
        p.push_str(&format!(
            "What they report:\n```\n{}\n```\n",
            truncate_text(report.trim(), 1500)
        ));
    }
    for t in problem.context.focus.tests.iter().take(1) {
        if let Some(src) = problem.files.get(&t.path) {
            let lines: Vec<&str> = src.lines().collect();
            if t.start >= 1 && t.end <= lines.len() && t.start <= t.end {
                let body = lines[t.start - 1..t.end].join("\n");
                p.push_str(&format!(
                    "\nThe failing test ({}:{}):\n```python\n{}\n```\n",
                    t.path,
                    t.start,
                    truncate_text(&body, 1500)
                ));
            }
        }
    }
    p.push_str("\nThe code the failing test runs (the bug is in one of these functions):\n");
    for s in suspects {
        let body = match format {
            // Numbered as in the file: the reply names lines by these numbers.
            EditFormat::Lines | EditFormat::Infill => s
                .shown
                .lines()
                .zip(&s.shown_lines)
                .map(|(l, n)| format!("{n:>5}  {l}"))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => s.shown.clone(),
        };
        p.push_str(&format!(
            "\n{} (file {}, line {}):\n```python\n{}\n```\n",
            s.label, s.path, s.start, body
        ));
        if matches!(format, EditFormat::Lines | EditFormat::Infill) && !s.hot.is_empty() {
            // Quoted with their text: a small model reads a line it is shown, not a number.
            p.push_str(
                "Most suspicious lines here (the failing tests run them, the passing tests \
                 rarely):\n```\n",
            );
            for n in &s.hot {
                if let Some(i) = s.shown_lines.iter().position(|l| l == n) {
                    let line = s.shown.lines().nth(i).unwrap_or("");
                    p.push_str(&format!("{n:>5}  {line}\n"));
                }
            }
            p.push_str("```\n");
        }
    }
    p.push('\n');
    match format {
        // A one-line diagnosis first: small models that name the bug change the code, where
        // asked for code alone they often copy the function back unchanged.
        EditFormat::Function => p.push_str(
            "First write one line starting with `Bug:` that says what is wrong. Then reply with \
             the one function that has the bug, corrected and complete, in a single ```python \
             code block. Start at its `def` line and keep its name and parameters. At least one \
             line must change; change only what fixes the bug, and leave out the docstring.",
        ),
        // No example code: small models copy an example into the file.
        EditFormat::Lines | EditFormat::Infill => p.push_str(
            "The numbers on the left are line numbers. First write one line starting with \
             `Bug:` that says what is wrong. Then, for each line that must change, write \
             `LINE <number>: <the corrected line>` and nothing else. Keep the line's \
             indentation; write only lines you change.",
        ),
        EditFormat::SearchReplace => {
            let path = suspects
                .first()
                .map(|s| s.path.as_str())
                .unwrap_or("src/ops.py");
            p.push_str(&format!(
                "Reply with the fix as a SEARCH/REPLACE block: the file path, the exact current \
                 lines to change, then the corrected lines. For example, to change \
                 `return a - b` into `return a + b` in calc/ops.py:\n```\ncalc/ops.py\n\
                 <<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```\n\
                 The SEARCH lines must differ from the REPLACE lines. Reply with only the \
                 block(s) for {path}."
            ));
        }
    }
    p
}

/// The lines of a test report worth showing a small model: pytest's `E ` lines and the short
/// summary, else the report's tail. Pure.
fn error_lines(report: &str) -> String {
    let picked: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("E ") || l.starts_with("FAILED ") || l.starts_with("ERROR "))
        .take(40)
        .collect();
    if picked.is_empty() {
        let lines: Vec<&str> = report.lines().collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    } else {
        picked.join("\n")
    }
}

/// Lines the `infill` format masks at most (each is one fill-in-the-middle request).
const MAX_SITES: usize = 16;
/// After the greedy pass, the best sites are filled again, sampled: of the 17 benchmark tasks
/// whose bug line was a site but was filled wrong, it ranked in the top four in 11.
const RESAMPLED_SITES: usize = 4;
/// Sampled fills of each of those.
const RESAMPLES: usize = 2;

/// Which site infill draw `i` fills, and which sample it takes ([`sampling`]): every site
/// greedy, best first, then [`RESAMPLES`] sampled passes over the best [`RESAMPLED_SITES`].
/// Pure.
pub fn infill_draw(i: usize, sites: usize) -> (usize, usize) {
    if i < sites {
        return (i, 0);
    }
    let top = sites.clamp(1, RESAMPLED_SITES);
    let j = i - sites;
    (j % top, 1 + j / top)
}

/// Infill draws in all for `sites` sites.
pub fn infill_draws(sites: usize) -> usize {
    sites + sites.min(RESAMPLED_SITES) * RESAMPLES
}

/// Lines of the file above the function, and below it, around an infill's gap.
const INFILL_ABOVE: usize = 20;
const INFILL_BELOW: usize = 5;
/// Tokens an infill may write (one line).
const INFILL_TOKENS: u32 = 80;

/// One line the `infill` format masks.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    pub path: String,
    pub line: usize,
    /// The function's lines (1-based, inclusive).
    pub func: (usize, usize),
    pub score: f64,
}

/// Lines not worth masking: blank, comments, docstrings, headers and bare keywords.
fn maskable(line: &str) -> bool {
    let t = line.trim();
    !(t.is_empty()
        || t.starts_with('#')
        || t.starts_with("def ")
        || t.starts_with("async def ")
        || t.starts_with("class ")
        || t.starts_with('@')
        || t.starts_with("\"\"\"")
        || t.starts_with("'''")
        || matches!(t, "else:" | "try:" | "finally:" | "pass" | ")" | "]" | "}"))
}

/// The lines to mask: every scored line of the best [`MAX_SUSPECTS`] functions, most
/// suspicious first (ties: the better-ranked function, then the earlier line), at most
/// [`MAX_SITES`]. Pure.
pub fn infill_sites(ranked: &[Ranked], files: &BTreeMap<String, String>) -> Vec<Site> {
    let mut all: Vec<(Site, usize)> = Vec::new();
    for (rank, r) in ranked.iter().take(MAX_SUSPECTS).enumerate() {
        let Some(src) = files.get(&r.loc.path) else {
            continue;
        };
        let lines: Vec<&str> = src.lines().collect();
        for &(line, score) in &r.lines {
            if line == 0 || line > lines.len() || !maskable(lines[line - 1]) {
                continue;
            }
            all.push((
                Site {
                    path: r.loc.path.clone(),
                    line,
                    func: (r.loc.start, r.loc.end),
                    score,
                },
                rank,
            ));
        }
    }
    all.sort_by(|(a, ra), (b, rb)| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(ra.cmp(rb))
            .then(a.line.cmp(&b.line))
    });
    all.into_iter().take(MAX_SITES).map(|(s, _)| s).collect()
}

/// The text before and after a site's line: from [`INFILL_ABOVE`] lines above its function,
/// to [`INFILL_BELOW`] lines past it (the prefix ends, the suffix starts, at a line break).
/// Pure.
pub fn infill_context(src: &str, site: &Site) -> (String, String) {
    let lines: Vec<&str> = src.lines().collect();
    let from = site.func.0.saturating_sub(INFILL_ABOVE).max(1);
    let to = (site.func.1 + INFILL_BELOW).min(lines.len());
    let mut prefix = lines[from - 1..site.line - 1].join("\n");
    if !prefix.is_empty() {
        prefix.push('\n');
    }
    let mut suffix = lines[site.line.min(to)..to].join("\n");
    suffix.push('\n');
    (prefix, suffix)
}

/// The edit an infill answer makes at `site`. Pure.
pub fn apply_infill(
    text: &str,
    site: &Site,
    files: &BTreeMap<String, String>,
) -> Result<FileEdit, ParseError> {
    let src = files
        .get(&site.path)
        .ok_or_else(|| ParseError::NotApplied(format!("{} was not read", site.path)))?;
    let filled = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if filled.trim().is_empty() {
        return Err(ParseError::Unparsed("the model filled in nothing".into()));
    }
    let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
    let Some(orig) = lines.get(site.line - 1).cloned() else {
        return Err(ParseError::NotApplied(format!(
            "{} has no line {}",
            site.path, site.line
        )));
    };
    if filled.trim() == orig.trim() {
        return Err(ParseError::NotApplied(format!(
            "line {} filled in as it is",
            site.line
        )));
    }
    // A model that drops the indentation still means the line at its place.
    let filled = if indent_of(filled).is_empty() {
        format!("{}{}", indent_of(&orig), filled.trim())
    } else {
        filled.trim_end().to_string()
    };
    lines[site.line - 1] = filled;
    let mut content = lines.join("\n");
    if src.ends_with('\n') {
        content.push('\n');
    }
    Ok(FileEdit {
        path: site.path.clone(),
        content,
    })
}

/// A file's new content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEdit {
    pub path: String,
    pub content: String,
}

/// Why a reply gave no edit (the candidate's status is `unparsed` or `not_applied`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    /// Nothing in the reply looks like the format.
    Unparsed(String),
    /// It parsed but does not apply (unknown function, search text not found, no change).
    NotApplied(String),
}

impl ParseError {
    pub fn status(&self) -> &'static str {
        match self {
            ParseError::Unparsed(_) => "unparsed",
            ParseError::NotApplied(_) => "not_applied",
        }
    }
    pub fn detail(&self) -> &str {
        match self {
            ParseError::Unparsed(s) | ParseError::NotApplied(s) => s,
        }
    }
}

/// The edits a reply asks for: SEARCH/REPLACE blocks when it has any, else a function in a
/// code block, whatever format was asked (small models mix them up). Pure.
pub fn parse_reply(
    reply: &str,
    suspects: &[Suspect],
    files: &BTreeMap<String, String>,
) -> Result<Vec<FileEdit>, ParseError> {
    let blocks = search_replace_blocks(reply);
    if !blocks.is_empty() {
        return apply_search_replace(&blocks, suspects, files);
    }
    let edits = line_edits(reply);
    if !edits.is_empty() {
        return apply_lines(&edits, suspects, files);
    }
    let code = code_block(reply)
        .ok_or_else(|| ParseError::Unparsed("no code block and no SEARCH/REPLACE block".into()))?;
    apply_function(&code, suspects, files).map(|e| vec![e])
}

/// The first fenced block (```python or ```), or the reply itself when it starts with `def`.
fn code_block(reply: &str) -> Option<String> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in reply.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            if inside {
                return Some(out.join("\n"));
            }
            inside = true;
            continue;
        }
        if inside {
            out.push(line);
        }
    }
    if inside && !out.is_empty() {
        // An unclosed block (cut at the token limit): use what came.
        return Some(out.join("\n"));
    }
    let t = reply.trim_start();
    (t.starts_with("def ") || t.starts_with("async def ") || t.starts_with('@'))
        .then(|| reply.to_string())
}

/// A function definition found by tree-sitter: 0-based rows.
#[derive(Debug, Clone, PartialEq)]
struct PyDef {
    name: String,
    /// First row (the first decorator, if any).
    start: usize,
    /// The `def` row.
    def_row: usize,
    end: usize,
    /// Rows of the docstring, if the body starts with one.
    doc: Option<(usize, usize)>,
    /// Row of the first body statement after the docstring (None: the body is the docstring
    /// alone, or on the `def` line).
    body_row: Option<usize>,
}

fn py_defs(src: &str) -> Vec<PyDef> {
    let Some(tree) = crate::agent::context::parse(src) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    fn walk(n: Node, src: &str, out: &mut Vec<PyDef>) {
        if n.kind() == "function_definition" {
            let outer = match n.parent() {
                Some(p) if p.kind() == "decorated_definition" => p,
                _ => n,
            };
            let name = n
                .child_by_field_name("name")
                .and_then(|c| c.utf8_text(src.as_bytes()).ok())
                .unwrap_or("")
                .to_string();
            let (mut doc, mut body_row) = (None, None);
            if let Some(body) = n.child_by_field_name("body") {
                let mut c = body.walk();
                let stmts: Vec<Node> = body.named_children(&mut c).collect();
                let mut rest = stmts.as_slice();
                if let Some(first) = stmts.first()
                    && first.kind() == "expression_statement"
                    && first.named_child(0).is_some_and(|s| s.kind() == "string")
                {
                    doc = Some((first.start_position().row, first.end_position().row));
                    rest = &stmts[1..];
                }
                body_row = rest.first().map(|s| s.start_position().row);
            }
            out.push(PyDef {
                name,
                start: outer.start_position().row,
                def_row: n.start_position().row,
                end: n.end_position().row,
                doc,
                body_row,
            });
        }
        let mut c = n.walk();
        for child in n.named_children(&mut c) {
            walk(child, src, out);
        }
    }
    walk(tree.root_node(), src, &mut out);
    out
}

/// Rows (0-based, within `func`) of the docstring of the function that starts `func`.
fn docstring_lines(func: &str) -> Option<(usize, usize)> {
    py_defs(func).first().and_then(|d| d.doc)
}

fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// Remove the common leading whitespace of the non-blank lines.
fn dedent(lines: &[&str]) -> Vec<String> {
    let common = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent_of(l).len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else {
                l[common.min(indent_of(l).len())..].to_string()
            }
        })
        .collect()
}

/// Replace a suspect function with the reply's function of the same name, re-indented to the
/// original's place; the original's decorators and docstring are kept when the reply leaves
/// them out. Pure.
pub fn apply_function(
    code: &str,
    suspects: &[Suspect],
    files: &BTreeMap<String, String>,
) -> Result<FileEdit, ParseError> {
    let code_lines: Vec<&str> = code.lines().collect();
    let dedented = dedent(&code_lines).join("\n");
    let defs = py_defs(&dedented);
    if defs.is_empty() {
        return Err(ParseError::Unparsed(
            "the code block defines no function".into(),
        ));
    }
    let (suspect, reply_def) = suspects
        .iter()
        .find_map(|s| defs.iter().find(|d| d.name == s.name).map(|d| (s, d)))
        .ok_or_else(|| {
            let names: Vec<&str> = defs.iter().map(|d| d.name.as_str()).collect();
            ParseError::NotApplied(format!(
                "the reply defines {} but the suspects are {}",
                names.join(", "),
                suspects
                    .iter()
                    .map(|s| s.label.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })?;
    let src = files
        .get(&suspect.path)
        .ok_or_else(|| ParseError::NotApplied(format!("{} was not read", suspect.path)))?;
    let lines: Vec<&str> = src.lines().collect();
    let orig = lines[suspect.start - 1..suspect.end].join("\n");
    let orig_def = py_defs(&dedent(&orig.lines().collect::<Vec<_>>()).join("\n"))
        .into_iter()
        .next()
        .ok_or_else(|| ParseError::NotApplied("the original function does not parse".into()))?;
    let orig_lines: Vec<&str> = orig.lines().collect();
    let base_indent = indent_of(orig_lines[orig_def.def_row]).to_string();
    let reply_lines: Vec<&str> = dedented.lines().collect();

    let mut new: Vec<String> = Vec::new();
    // Decorators: the reply's own, else the original's.
    if reply_def.start == reply_def.def_row && orig_def.start < orig_def.def_row {
        new.extend(
            orig_lines[orig_def.start..orig_def.def_row]
                .iter()
                .map(|l| l.to_string()),
        );
    } else {
        new.extend(
            reply_lines[reply_def.start..reply_def.def_row]
                .iter()
                .map(|l| format!("{base_indent}{l}")),
        );
    }
    let reindent = |l: &str| {
        if l.trim().is_empty() {
            String::new()
        } else {
            format!("{base_indent}{l}")
        }
    };
    match (reply_def.doc, orig_def.doc, reply_def.body_row) {
        // The reply left the docstring out: put the original's back before the body.
        (None, Some((a, b)), Some(body)) if body > reply_def.def_row => {
            new.extend(
                reply_lines[reply_def.def_row..body]
                    .iter()
                    .map(|l| reindent(l)),
            );
            new.extend(orig_lines[a..=b].iter().map(|l| l.to_string()));
            new.extend(
                reply_lines[body..=reply_def.end]
                    .iter()
                    .map(|l| reindent(l)),
            );
        }
        _ => new.extend(
            reply_lines[reply_def.def_row..=reply_def.end]
                .iter()
                .map(|l| reindent(l)),
        ),
    }
    let mut out: Vec<String> = lines[..suspect.start - 1]
        .iter()
        .map(|l| l.to_string())
        .collect();
    out.extend(new);
    out.extend(lines[suspect.end..].iter().map(|l| l.to_string()));
    let mut content = out.join("\n");
    if src.ends_with('\n') {
        content.push('\n');
    }
    if content == *src {
        return Err(ParseError::NotApplied(
            "the corrected function is the same as the original".into(),
        ));
    }
    Ok(FileEdit {
        path: suspect.path.clone(),
        content,
    })
}

static LINE_EDIT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"^\s*`?(?i:line)\s+(\d+)\s*:\s?(.*)$").expect("static regex")
});

/// `LINE <n>: <code>` lines of a reply, in order. A line written as prose ("Change `a` to
/// `b`", "`a` should be `b`") gives its last code span. Pure.
pub fn line_edits(reply: &str) -> Vec<(usize, String)> {
    reply
        .lines()
        .filter_map(|l| {
            let c = LINE_EDIT.captures(l)?;
            let text = c[2].trim_end().to_string();
            let spans: Vec<&str> = text.split('`').skip(1).step_by(2).collect();
            let prose = text.split('`').step_by(2).any(|t| {
                t.split_whitespace().any(|w| {
                    matches!(
                        w.to_lowercase().as_str(),
                        "change" | "replace" | "to" | "should" | "be" | "with"
                    )
                })
            });
            let code = match spans.as_slice() {
                // "Change `a` to `b`", "`a` should be `b`": the second span is the new code.
                [_, new, ..] if prose => new.to_string(),
                [only] if prose => only.to_string(),
                // The line in backticks.
                _ => text.trim_matches('`').to_string(),
            };
            Some((c[1].parse().ok()?, code))
        })
        .collect()
}

/// How far from its stated number a corrected line may land (small models misread numbers).
const LINE_SLACK: usize = 8;

/// Similarity of two lines, stripped (0..=1).
fn line_similarity(a: &str, b: &str) -> f32 {
    similar::TextDiff::from_chars(a.trim(), b.trim()).ratio()
}

/// Replace the numbered lines of the suspects' files. Small models misread line numbers, so a
/// line lands on the most similar line within [`LINE_SLACK`] of its number (at least half
/// alike); lines outside every suspect, or equal to what they replace, are skipped; a line
/// written without its indentation gets the original's. Pure.
pub fn apply_lines(
    edits: &[(usize, String)],
    suspects: &[Suspect],
    files: &BTreeMap<String, String>,
) -> Result<Vec<FileEdit>, ParseError> {
    let mut edited: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut skipped = Vec::new();
    let mut changed = false;
    for (n, code) in edits {
        // The suspect whose lines are nearest the number.
        let near = suspects
            .iter()
            .find(|s| s.shown_lines.iter().any(|l| l.abs_diff(*n) <= LINE_SLACK));
        let Some(s) = near else {
            skipped.push(*n);
            continue;
        };
        let Some(src) = files.get(&s.path) else {
            return Err(ParseError::NotApplied(format!("{} was not read", s.path)));
        };
        let lines = edited
            .entry(s.path.clone())
            .or_insert_with(|| src.lines().map(str::to_string).collect());
        let best = s
            .shown_lines
            .iter()
            .filter(|l| l.abs_diff(*n) <= LINE_SLACK && **l <= lines.len())
            .map(|l| (*l, line_similarity(&lines[*l - 1], code), l.abs_diff(*n)))
            // Most similar; ties go to the stated number's neighbourhood.
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.2.cmp(&a.2)));
        let Some((at, score, _)) = best else {
            skipped.push(*n);
            continue;
        };
        let at = if s.shown_lines.contains(n) && lines[*n - 1].trim() != code.trim() && score < 0.5
        {
            // Nothing alike nearby: take the number at its word.
            *n
        } else if score >= 0.5 {
            at
        } else {
            skipped.push(*n);
            continue;
        };
        let orig = lines[at - 1].clone();
        let new = if indent_of(code).is_empty() && !indent_of(&orig).is_empty() {
            format!("{}{}", indent_of(&orig), code.trim_start())
        } else {
            code.trim_end().to_string()
        };
        if new.trim() != orig.trim() {
            changed = true;
            lines[at - 1] = new;
        }
    }
    if !changed {
        let why = if skipped.is_empty() {
            "every LINE is the same as the original".to_string()
        } else {
            format!(
                "no LINE changes the suspects ({} outside them)",
                suspects
                    .iter()
                    .map(|s| format!("{} {}-{}", s.label, s.start, s.end))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        return Err(ParseError::NotApplied(why));
    }
    Ok(edited
        .into_iter()
        .filter(|(path, lines)| {
            files
                .get(path)
                .is_some_and(|src| src.lines().ne(lines.iter().map(String::as_str)))
        })
        .map(|(path, lines)| {
            let mut content = lines.join("\n");
            if files.get(&path).is_some_and(|s| s.ends_with('\n')) {
                content.push('\n');
            }
            FileEdit { path, content }
        })
        .collect())
}

/// One SEARCH/REPLACE block: the path line before it (if any), search and replace text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub path: Option<String>,
    pub search: String,
    pub replace: String,
}

/// Every well-formed block of a reply. Pure.
pub fn search_replace_blocks(reply: &str) -> Vec<Block> {
    let lines: Vec<&str> = reply.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].trim_start().starts_with("<<<<<<< SEARCH") {
            i += 1;
            continue;
        }
        let path = lines[..i]
            .iter()
            .rev()
            .map(|l| l.trim().trim_matches('`').trim())
            .find(|l| !l.is_empty() && !l.starts_with("```"))
            .filter(|l| l.contains('.') && !l.contains(' '))
            .map(str::to_string);
        let Some(sep) = (i + 1..lines.len()).find(|&k| lines[k].trim() == "=======") else {
            break;
        };
        let Some(end) =
            (sep + 1..lines.len()).find(|&k| lines[k].trim_start().starts_with(">>>>>>> REPLACE"))
        else {
            break;
        };
        out.push(Block {
            path,
            search: lines[i + 1..sep].join("\n"),
            replace: lines[sep + 1..end].join("\n"),
        });
        i = end + 1;
    }
    out
}

/// Apply blocks to the suspects' files: an exact match first, else a match of the stripped
/// lines (re-indented by the found lines' indentation). Pure.
pub fn apply_search_replace(
    blocks: &[Block],
    suspects: &[Suspect],
    files: &BTreeMap<String, String>,
) -> Result<Vec<FileEdit>, ParseError> {
    let mut edited: BTreeMap<String, String> = BTreeMap::new();
    let suspect_files: Vec<&str> = {
        let mut v: Vec<&str> = suspects.iter().map(|s| s.path.as_str()).collect();
        v.dedup();
        v
    };
    for b in blocks {
        if b.search.trim() == b.replace.trim() {
            return Err(ParseError::NotApplied(
                "a SEARCH block equals its REPLACE block: nothing would change".into(),
            ));
        }
        if b.search.trim().is_empty() {
            return Err(ParseError::NotApplied("an empty SEARCH block".into()));
        }
        // The named file when it is one we read, else each suspect's file.
        let mut order: Vec<String> = Vec::new();
        if let Some(p) = &b.path {
            let p = p.trim_start_matches("./").to_string();
            if files.contains_key(&p) {
                order.push(p);
            }
        }
        for f in &suspect_files {
            if !order.iter().any(|o| o == f) {
                order.push(f.to_string());
            }
        }
        let mut done = false;
        for path in order {
            let current = edited
                .get(&path)
                .cloned()
                .or_else(|| files.get(&path).cloned());
            let Some(text) = current else { continue };
            if let Some(new) = replace_once(&text, &b.search, &b.replace) {
                edited.insert(path, new);
                done = true;
                break;
            }
        }
        if !done {
            return Err(ParseError::NotApplied(format!(
                "the SEARCH text is not in {}: {}",
                suspect_files.join(", "),
                truncate_text(b.search.trim(), 120)
            )));
        }
    }
    Ok(edited
        .into_iter()
        .map(|(path, content)| FileEdit { path, content })
        .collect())
}

/// `text` with `search` replaced once: exactly, else by stripped-line match.
fn replace_once(text: &str, search: &str, replace: &str) -> Option<String> {
    if text.matches(search).count() == 1 {
        return Some(text.replacen(search, replace, 1));
    }
    let lines: Vec<&str> = text.lines().collect();
    let want: Vec<&str> = search
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if want.is_empty() {
        return None;
    }
    let mut hits = Vec::new();
    'start: for i in 0..lines.len() {
        let mut k = i;
        for w in &want {
            while k < lines.len() && lines[k].trim().is_empty() {
                k += 1;
            }
            if k >= lines.len() || lines[k].trim() != *w {
                continue 'start;
            }
            k += 1;
        }
        hits.push((i, k));
    }
    let [(a, b)] = hits.as_slice() else {
        return None;
    };
    // Re-indent the replacement: the found block's indentation over the block's own.
    let found_indent = indent_of(lines[*a]).to_string();
    let rep_lines: Vec<&str> = replace.lines().collect();
    let rep = dedent(&rep_lines);
    let search_lines: Vec<&str> = search.lines().filter(|l| !l.trim().is_empty()).collect();
    let search_rel = search_lines
        .first()
        .map(|l| indent_of(l).len())
        .unwrap_or(0);
    let rep_base = rep_lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent_of(l).len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = lines[..*a].iter().map(|l| l.to_string()).collect();
    for (orig, d) in rep_lines.iter().zip(&rep) {
        if d.is_empty() {
            out.push(String::new());
            continue;
        }
        // Keep the replacement's nesting relative to the search's first line.
        let extra = indent_of(orig)
            .len()
            .saturating_sub(rep_base.max(search_rel.min(rep_base)));
        out.push(format!(
            "{found_indent}{}{}",
            " ".repeat(extra),
            d.trim_start()
        ));
    }
    out.extend(lines[*b..].iter().map(|l| l.to_string()));
    let mut s = out.join("\n");
    if text.ends_with('\n') {
        s.push('\n');
    }
    Some(s)
}

/// One candidate after its check.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub index: usize,
    /// `unparsed`, `not_applied`, `duplicate`, `failing`, `passing`.
    pub status: String,
    pub detail: String,
    /// The workspace diff with the candidate applied (passing and failing ones).
    pub diff: String,
    pub usage: Usage,
    pub model_ms: u64,
    /// Applying it, checking it, taking its diff and rolling back, in the container.
    pub check_ms: u64,
    /// The rollback alone.
    pub rollback_ms: u64,
    /// The model's reply as received.
    pub reply: String,
}

impl Candidate {
    /// Changed lines of the diff (`+`/`-` lines, headers excluded): the size the winner is
    /// chosen by.
    pub fn diff_size(&self) -> usize {
        diff_size(&self.diff)
    }
}

/// `+`/`-` lines of a unified diff, headers excluded. Pure.
pub fn diff_size(diff: &str) -> usize {
    diff.lines()
        .filter(|l| {
            (l.starts_with('+') && !l.starts_with("+++"))
                || (l.starts_with('-') && !l.starts_with("---"))
        })
        .count()
}

/// What the strategy spent and found.
#[derive(Debug, Clone, Default)]
pub struct CandidatesOutcome {
    pub candidates: Vec<Candidate>,
    pub usage: Usage,
    pub cost_usd: f64,
    pub model_ms: u64,
    pub wall: Duration,
    /// Why it drew fewer than asked, or found nothing to work on.
    pub note: Option<String>,
    /// The sandbox failed (not the model's doing).
    pub infrastructure: Option<String>,
}

impl CandidatesOutcome {
    /// Passing candidates, smallest diff first (ties: drawing order).
    pub fn passing(&self) -> Vec<&Candidate> {
        let mut v: Vec<&Candidate> = self
            .candidates
            .iter()
            .filter(|c| c.status == "passing")
            .collect();
        v.sort_by_key(|c| (c.diff_size(), c.index));
        v
    }
}

/// Where the trajectory's nodes of this attempt hang.
#[derive(Debug, Clone)]
pub struct NodeIds {
    pub attempt: String,
    pub tier: usize,
    pub model: String,
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

/// Draw the candidates and check each in `sandbox` (see the module docs). `baseline_failing`
/// are the tests that failed before (targets included): a candidate under which any other
/// test fails is `failing`.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    model: &dyn Model,
    sandbox: &dyn Sandbox,
    problem: &Problem,
    baseline_failing: &[String],
    cfg: &CandidateConfig,
    tools_cfg: &ToolConfig,
    budgets: &Budgets,
    ids: &NodeIds,
    traj: &mut Trajectory,
) -> CandidatesOutcome {
    let started = Instant::now();
    let mut out = CandidatesOutcome::default();
    let sus = if problem.ranked.is_empty() {
        suspects(&problem.context.focus.code, &problem.files)
    } else {
        suspects_ranked(&problem.ranked, &problem.context.focus.code, &problem.files)
    };
    if sus.is_empty() {
        out.note = Some(
            "no function to rewrite: the failing-code context located no code under test".into(),
        );
        out.wall = started.elapsed();
        return out;
    }
    // Fill-in-the-middle on the most suspicious lines when the model has it and the fault
    // localization scored lines; else the chat prompt (`infill`'s fallback is `lines`).
    let mut sites = if cfg.format == EditFormat::Infill && model.supports_infill() {
        infill_sites(&problem.ranked, &problem.files)
    } else {
        Vec::new()
    };
    // The first infill is asked here: a server that refuses fill-in-the-middle (an Ollama
    // model whose template has no suffix, a server that strips the special tokens) leaves the
    // chat prompt, not a row of errors.
    let mut first = None;
    let mut fallback = None;
    if let Some(site) = sites.first() {
        let t0 = Instant::now();
        match infill_at(model, problem, site, sampling(0, cfg.temperature)).await {
            Err(e @ (ModelError::Rejected { .. } | ModelError::Unsupported(_))) => {
                tracing::warn!("fill-in-the-middle refused, asking for lines instead: {e}");
                fallback = Some(format!("fill-in-the-middle refused: {e}"));
                sites.clear();
            }
            r => first = Some((0, r.map(|f| (f.text, f.usage)), t0.elapsed())),
        }
    }
    let user = if sites.is_empty() {
        prompt(problem, &sus, cfg.format)
    } else {
        let at: Vec<String> = sites
            .iter()
            .map(|s| format!("{}:{} ({:.2})", s.path, s.line, s.score))
            .collect();
        format!("fill in the middle, one line at a time: {}", at.join(", "))
    };
    let format_used = match (cfg.format, sites.is_empty()) {
        (EditFormat::Infill, true) => EditFormat::Lines,
        (f, _) => f,
    };
    traj.event(
        "candidates_prompt",
        &serde_json::json!({
            "attempt": ids.attempt,
            "format": format_used.as_str(),
            "fallback": fallback,
            "system": SYSTEM,
            "prompt": user,
            "localization": problem.localization,
            "ranked": problem.ranked.iter().take(8).map(|r| serde_json::json!({
                "at": format!("{}:{}", r.loc.path, r.loc.start),
                "name": r.loc.name,
                "score": (r.score() * 1000.0).round() / 1000.0,
                "hot": r.hot(),
            })).collect::<Vec<_>>(),
        }),
    );
    let history = vec![Message::system(SYSTEM), Message::user(user)];
    let k = cfg.count.max(1);
    // Infill: each site greedy, then the best ones sampled. Chat: K samples, redrawn up to 2K.
    let draws = if sites.is_empty() {
        k * DRAWS_PER_CANDIDATE
    } else {
        infill_draws(sites.len())
    };
    let parallel = cfg.parallel.max(1);
    let deadline = started + budgets.max_wall;

    // Replies stream in (up to `parallel` in flight) while earlier ones are checked: the
    // container's test runs overlap the model's next generation.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let history = &history;
    let sites = &sites;
    let from = usize::from(first.is_some());
    if let Some(item) = first {
        let _ = tx.send(item);
    }
    let produce = async move {
        let mut replies = futures_util::stream::iter(from..draws)
            .map(|i| async move {
                let t0 = Instant::now();
                let r = if sites.is_empty() {
                    model
                        .complete(&Request {
                            messages: history,
                            tools: &[],
                            sample: Some(sampling(i, cfg.temperature)),
                        })
                        .await
                        .map(|r| (r.message.content, r.usage))
                } else {
                    let (at, sample) = infill_draw(i, sites.len());
                    infill_at(
                        model,
                        problem,
                        &sites[at],
                        sampling(sample, cfg.temperature),
                    )
                    .await
                    .map(|f| (f.text, f.usage))
                };
                (i, r, t0.elapsed())
            })
            .buffered(parallel);
        while let Some(item) = replies.next().await {
            if tx.send(item).is_err() {
                break;
            }
        }
    };
    let mut seen: BTreeSet<Vec<(String, String)>> = BTreeSet::new();
    let mut checked = 0;
    let consume = async {
        while let Some((i, reply, took)) = rx.recv().await {
            let model_ms = took.as_millis() as u64;
            out.model_ms += model_ms;
            let mut reply_text = String::new();
            let mut cand = Candidate {
                index: i,
                status: String::new(),
                detail: String::new(),
                diff: String::new(),
                usage: Usage::default(),
                model_ms,
                check_ms: 0,
                rollback_ms: 0,
                reply: String::new(),
            };
            match reply {
                Err(e) => {
                    cand.status = "error".into();
                    cand.detail = format!("the model call failed: {e}");
                }
                Ok((text, usage)) => {
                    reply_text = text.clone();
                    cand.reply = text.clone();
                    cand.usage = usage;
                    out.usage.prompt_tokens += usage.prompt_tokens;
                    out.usage.completion_tokens += usage.completion_tokens;
                    out.cost_usd += model.cost(&usage);
                    let parsed = if sites.is_empty() {
                        parse_reply(&text, &sus, &problem.files)
                    } else {
                        let site = &sites[infill_draw(i, sites.len()).0];
                        reply_text = format!("{}:{} ← {text}", site.path, site.line);
                        cand.reply = reply_text.clone();
                        apply_infill(&text, site, &problem.files).map(|e| vec![e])
                    };
                    match parsed {
                        Err(e) => {
                            cand.status = e.status().into();
                            cand.detail = e.detail().into();
                        }
                        Ok(edits) => {
                            let key: Vec<(String, String)> = edits
                                .iter()
                                .map(|e| (e.path.clone(), e.content.clone()))
                                .collect();
                            if !seen.insert(key) {
                                cand.status = "duplicate".into();
                                cand.detail = "the same edit as an earlier candidate".into();
                            } else {
                                match check(sandbox, &edits, problem, baseline_failing, tools_cfg)
                                    .await
                                {
                                    Ok(c) => {
                                        checked += 1;
                                        cand.status = c.status;
                                        cand.detail = c.detail;
                                        cand.diff = c.diff;
                                        cand.check_ms = c.check_ms;
                                        cand.rollback_ms = c.rollback_ms;
                                    }
                                    Err(e) => {
                                        out.infrastructure =
                                            Some(format!("checking candidate {i}: {e}"));
                                        cand.status = "error".into();
                                        cand.detail = e.to_string();
                                    }
                                }
                            }
                        }
                    }
                }
            }
            traj.node(&NodeRecord {
                id: format!("{}.c{i}", ids.attempt),
                parent: Some(ids.attempt.clone()),
                node: "candidate".into(),
                tier: ids.tier,
                model: ids.model.clone(),
                strategy: "candidates".into(),
                status: cand.status.clone(),
                detail: cand.detail.clone(),
                diff: cand.diff.clone(),
                tokens: cand.usage.total(),
                model_ms: cand.model_ms,
                rollback_ms: cand.rollback_ms,
                reply: reply_text,
            });
            out.candidates.push(cand);
            if out.infrastructure.is_some() {
                break;
            }
            // Every infill is a one-line edit: no smaller passing one is worth waiting for.
            // K bounds the chat formats only (infill's draws are bounded by its sites).
            let passed = out.candidates.last().is_some_and(|c| c.status == "passing");
            let enough = if sites.is_empty() {
                checked >= k
            } else {
                passed
            };
            if enough {
                break;
            }
            if Instant::now() >= deadline || out.usage.total() >= budgets.max_tokens {
                let n = out.candidates.len();
                out.note = Some(if sites.is_empty() {
                    format!(
                        "stopped after {checked} of {k} candidates ({n} replies): the time or \
                         token budget is spent"
                    )
                } else {
                    format!(
                        "stopped after {n} of {draws} fills ({checked} checked): the time or \
                         token budget is spent"
                    )
                });
                break;
            }
        }
    };
    // The consumer decides when enough is drawn: a request still in flight then is dropped.
    {
        let mut consume = std::pin::pin!(consume);
        tokio::select! {
            biased;
            () = &mut consume => {}
            () = produce => consume.await,
        }
    }
    out.candidates.sort_by_key(|c| c.index);
    out.wall = started.elapsed();
    out
}

/// One fill-in-the-middle request for `site`.
async fn infill_at(
    model: &dyn Model,
    problem: &Problem,
    site: &Site,
    sample: Sampling,
) -> Result<crate::agent::model::Filled, ModelError> {
    let src = problem.files.get(&site.path).map_or("", String::as_str);
    let (prefix, suffix) = infill_context(src, site);
    model
        .infill(&Infill {
            prefix: &prefix,
            suffix: &suffix,
            stop: &["\n"],
            max_tokens: INFILL_TOKENS,
            sample: Some(sample),
        })
        .await
}

struct Checked {
    status: String,
    detail: String,
    diff: String,
    check_ms: u64,
    rollback_ms: u64,
}

/// Apply `edits`, run the targets (then the whole suite when they pass), take the diff, and
/// restore the files' original bytes.
async fn check(
    sandbox: &dyn Sandbox,
    edits: &[FileEdit],
    problem: &Problem,
    baseline_failing: &[String],
    tools_cfg: &ToolConfig,
) -> Result<Checked, SandboxError> {
    let t0 = Instant::now();
    for e in edits {
        write_file(sandbox, &e.path, e.content.as_bytes()).await?;
    }
    let verdict = async {
        // No target visible here (a task's hidden tests): the whole suite alone, below.
        if !problem.targets.is_empty() {
            let targets = tools::run_tests(sandbox, tools_cfg, &problem.targets).await?;
            if let Some(why) = targets_fail(&targets, &problem.targets) {
                return Ok::<_, SandboxError>(("failing".to_string(), why));
            }
        }
        // The targets pass: nothing else may break.
        let all = tools::run_tests(sandbox, tools_cfg, &[]).await?;
        let Some(s) = &all.summary else {
            return Ok((
                "failing".into(),
                "the whole suite produced no report".into(),
            ));
        };
        let broken: Vec<&String> = s
            .failing
            .iter()
            .filter(|f| !baseline_failing.contains(f) && !problem.targets.contains(f))
            .collect();
        let still: Vec<&String> = s
            .failing
            .iter()
            .filter(|f| problem.targets.contains(f))
            .collect();
        if !still.is_empty() {
            return Ok((
                "failing".into(),
                format!("targets fail in the whole suite: {}", join_ids(&still)),
            ));
        }
        if !broken.is_empty() {
            return Ok((
                "failing".into(),
                format!("breaks tests that passed: {}", join_ids(&broken)),
            ));
        }
        if problem.targets.is_empty() {
            return Ok((
                "passing".into(),
                format!(
                    "{} passed; the targets are not in the sandbox (the verifier runs them)",
                    s.passed
                ),
            ));
        }
        Ok(("passing".into(), format!("{} passed", s.passed)))
    }
    .await;
    let diff = sandbox.diff().await;
    let r0 = Instant::now();
    for e in edits {
        match problem.files.get(&e.path) {
            Some(orig) => write_file(sandbox, &e.path, orig.as_bytes()).await?,
            None => {
                return Err(SandboxError::Other(format!(
                    "no original of {} to roll back to",
                    e.path
                )));
            }
        }
    }
    let rollback_ms = r0.elapsed().as_millis() as u64;
    let (status, detail) = verdict?;
    Ok(Checked {
        status,
        detail,
        diff: diff?,
        check_ms: t0.elapsed().as_millis() as u64,
        rollback_ms,
    })
}

fn join_ids(ids: &[&String]) -> String {
    let shown: Vec<&str> = ids.iter().take(5).map(|s| s.as_str()).collect();
    let more = ids.len().saturating_sub(5);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// Why the target run does not pass (None: every target passed). Pure.
fn targets_fail(run: &TestRun, targets: &[String]) -> Option<String> {
    let Some(s) = &run.summary else {
        return Some("the target tests produced no report".into());
    };
    let failing: Vec<&String> = s.failing.iter().collect();
    if !failing.is_empty() {
        return Some(format!("still failing: {}", join_ids(&failing)));
    }
    if s.passed == 0 || (!targets.is_empty() && s.passed < targets.len()) {
        return Some(format!(
            "{} of {} target tests ran and passed",
            s.passed,
            targets.len()
        ));
    }
    None
}

/// [`tools::write_file`], its failure an error.
async fn write_file(sandbox: &dyn Sandbox, path: &str, bytes: &[u8]) -> Result<(), SandboxError> {
    let r = tools::write_file(sandbox, path, bytes.to_vec()).await?;
    if r.status.success() {
        Ok(())
    } else {
        Err(SandboxError::Other(format!(
            "cannot write {path}: {}",
            r.output.render().trim()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CORE: &str = "import math\n\n\ndef clamp(v, lo, hi):\n    \"\"\"Clamp v.\n\n    Long doc.\n    \"\"\"\n    if v > hi:\n        return lo\n    return max(v, lo)\n\n\nclass Cart:\n    @property\n    def count(self):\n        return len(self.items) - 1\n";

    fn files() -> BTreeMap<String, String> {
        BTreeMap::from([("pkg/core.py".to_string(), CORE.to_string())])
    }

    fn locs() -> Vec<Location> {
        vec![
            Location {
                path: "pkg/core.py".into(),
                start: 4,
                end: 11,
                name: "clamp".into(),
                frame_line: Some(10),
            },
            Location {
                path: "pkg/core.py".into(),
                start: 15,
                end: 17,
                name: "Cart.count".into(),
                frame_line: None,
            },
        ]
    }

    /// A ranked function whose scored lines are its hot lines.
    fn ranked(loc: &Location, score: f64, hot: &[usize]) -> Ranked {
        Ranked {
            loc: Location {
                frame_line: None,
                ..loc.clone()
            },
            lines: hot.iter().map(|l| (*l, score)).collect(),
        }
    }

    #[test]
    fn ranked_suspects_come_in_rank_order_then_the_traceback_frame_with_their_hot_lines() {
        let l = locs();
        // The spectrum puts Cart.count first; the traceback's clamp is added after it.
        let s = suspects_ranked(&[ranked(&l[1], 1.0, &[17])], &l, &files());
        let names: Vec<&str> = s.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(names, ["Cart.count", "clamp"]);
        assert_eq!(s[0].hot, [17]);
        assert!(s[1].hot.is_empty());
        let problem = Problem {
            files: files(),
            ..Default::default()
        };
        let p = prompt(&problem, &s, EditFormat::Lines);
        assert!(
            p.contains(
                "the passing tests rarely):\n```\n   17          return len(self.items) - 1\n```\n"
            ),
            "{p}"
        );
        // Only the `lines` format numbers lines, so only it names them.
        assert!(!prompt(&problem, &s, EditFormat::Function).contains("suspicious"));
        // Hot lines that cover the whole function (or a hidden docstring) narrow nothing.
        let s = suspects_ranked(&[ranked(&l[1], 1.0, &[15, 16, 17])], &[], &files());
        assert!(s[0].hot.is_empty());
        let s = suspects_ranked(&[ranked(&l[0], 1.0, &[6, 9])], &[], &files());
        assert_eq!(s[0].hot, [9]);
    }

    #[test]
    fn infill_fills_every_site_greedy_then_samples_the_best_four_twice() {
        let plan: Vec<(usize, usize)> = (0..infill_draws(6)).map(|i| infill_draw(i, 6)).collect();
        // (site, sample): six greedy, then sites 0-3 with sample 1, then with sample 2.
        let greedy = (0..6).map(|s| (s, 0));
        let sampled = (1..=2).flat_map(|k| (0..4).map(move |s| (s, k)));
        assert_eq!(plan, greedy.chain(sampled).collect::<Vec<_>>());
        // Fewer sites than four: each is sampled twice; no site, no draw.
        let plan: Vec<(usize, usize)> = (0..infill_draws(2)).map(|i| infill_draw(i, 2)).collect();
        assert_eq!(plan, [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]);
        assert_eq!(infill_draws(0), 0);
        // Every sampled draw has its own seed; the greedy one has none to speak of.
        assert_eq!(sampling(0, 0.8).temperature, 0.0);
        assert_ne!(sampling(1, 0.8).seed, sampling(2, 0.8).seed);
    }

    #[test]
    fn infill_masks_the_most_suspicious_lines_and_edits_the_one_it_fills() {
        // CORE: 4 def clamp, 5-8 docstring, 9 if v > hi, 10 return lo, 11 return max(v, lo);
        // 15 @property, 16 def count, 17 return len(self.items) - 1.
        let l = locs();
        let mut clamp = ranked(&l[0], 1.0, &[10]);
        clamp.lines = vec![(4, 0.5), (5, 1.0), (9, 0.7), (10, 1.0), (11, 0.2)];
        let mut count = ranked(&l[1], 0.9, &[17]);
        count.lines = vec![(15, 0.9), (16, 0.9), (17, 0.9)];
        let sites = infill_sites(&[clamp, count], &files());
        let at: Vec<usize> = sites.iter().map(|s| s.line).collect();
        // The def, decorator and docstring lines are never masked; best score first.
        assert_eq!(at, [10, 17, 9, 11]);
        assert_eq!(sites[0].func, (4, 11));

        let (prefix, suffix) = infill_context(CORE, &sites[0]);
        assert!(prefix.starts_with("import math\n"), "{prefix:?}");
        assert!(prefix.ends_with("    if v > hi:\n"), "{prefix:?}");
        assert!(suffix.starts_with("    return max(v, lo)\n"), "{suffix:?}");
        assert!(suffix.ends_with("    def count(self):\n"), "{suffix:?}");

        let e = apply_infill("        return hi", &sites[0], &files()).unwrap();
        assert!(
            e.content
                .contains("    if v > hi:\n        return hi\n    return max")
        );
        assert_eq!(e.content.lines().count(), CORE.lines().count());
        // A line without its indentation keeps the original's.
        let e = apply_infill("return hi\n", &sites[0], &files()).unwrap();
        assert!(e.content.contains("\n        return hi\n"), "{}", e.content);
        // The line as it is, or nothing: no candidate.
        let same = apply_infill("        return lo", &sites[0], &files()).unwrap_err();
        assert_eq!(same.status(), "not_applied");
        assert_eq!(
            apply_infill("  \n", &sites[0], &files())
                .unwrap_err()
                .status(),
            "unparsed"
        );
    }

    /// Says it has fill-in-the-middle, then refuses it (an Ollama model without a suffix
    /// template); chat answers with prose.
    struct RefusesInfill;

    #[async_trait::async_trait]
    impl Model for RefusesInfill {
        async fn complete(
            &self,
            _req: &Request<'_>,
        ) -> Result<crate::agent::model::Response, ModelError> {
            Ok(crate::agent::model::Response {
                message: crate::agent::model::AssistantMessage {
                    content: "no idea".into(),
                    tool_calls: Vec::new(),
                    raw: None,
                },
                usage: Usage::default(),
                finish: crate::agent::model::FinishReason::Stop,
                bytes_sent: 0,
            })
        }
        fn spec(&self) -> String {
            "test:refuses-infill".into()
        }
        fn describe(&self) -> String {
            self.spec()
        }
        fn supports_infill(&self) -> bool {
            true
        }
        async fn infill(
            &self,
            _req: &Infill<'_>,
        ) -> Result<crate::agent::model::Filled, ModelError> {
            Err(ModelError::Rejected {
                status: 400,
                body: "model does not support insert".into(),
            })
        }
    }

    #[tokio::test]
    async fn a_refused_infill_falls_back_to_the_lines_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let sandbox =
            crate::agent::testing::HostDir::with_files(dir.path(), &[("pkg/core.py", CORE)])
                .await
                .unwrap();
        let l = locs();
        let mut clamp = ranked(&l[0], 1.0, &[10]);
        clamp.lines = vec![(9, 1.0), (10, 1.0)];
        let problem = Problem {
            files: files(),
            context: Context {
                focus: crate::agent::context::Focus {
                    code: l.clone(),
                    ..Default::default()
                },
                ..Default::default()
            },
            ranked: vec![clamp],
            ..Default::default()
        };
        let traj_path = dir.path().join("t.jsonl");
        let mut traj = Trajectory::create(&traj_path).unwrap();
        let cfg = CandidateConfig {
            count: 2,
            ..CandidateConfig::default()
        };
        assert_eq!(cfg.format, EditFormat::Infill);
        let out = run(
            &RefusesInfill,
            &sandbox,
            &problem,
            &[],
            &cfg,
            &ToolConfig::default(),
            &Budgets::default(),
            &NodeIds {
                attempt: "t0.candidates".into(),
                tier: 0,
                model: "test".into(),
            },
            &mut traj,
        )
        .await;
        drop(traj);
        // Chat replies, redrawn up to 2K: all prose, none checked.
        assert_eq!(out.candidates.len(), 4, "{:?}", out.candidates);
        assert!(
            out.candidates
                .iter()
                .all(|c| c.status == "unparsed" && c.reply == "no idea")
        );
        let text = std::fs::read_to_string(&traj_path).unwrap();
        let asked: serde_json::Value = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|v| v["kind"] == "candidates_prompt")
            .unwrap();
        assert_eq!(asked["format"], "lines");
        assert!(
            asked["fallback"]
                .as_str()
                .unwrap()
                .contains("does not support insert"),
            "{asked}"
        );
        assert!(asked["prompt"].as_str().unwrap().contains("LINE <number>"));
    }

    #[test]
    fn suspects_hide_the_docstring_and_skip_module_frames() {
        let mut l = locs();
        l.insert(
            0,
            Location {
                path: "pkg/core.py".into(),
                start: 1,
                end: 2,
                name: "<module>".into(),
                frame_line: Some(1),
            },
        );
        let s = suspects(&l, &files());
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "clamp");
        assert!(!s[0].shown.contains("Long doc"), "{}", s[0].shown);
        assert!(s[0].shown.contains("if v > hi:"));
        assert_eq!(s[1].name, "count");
        assert!(s[1].shown.starts_with("    @property"));
    }

    #[test]
    fn the_functions_a_suspect_calls_are_suspects_too() {
        let src = "def outer(x):\n    return inner(x) + 1\n\n\ndef inner(x):\n    return x * 2\n\n\ndef unrelated():\n    return 0\n";
        let files = BTreeMap::from([("pkg/m.py".to_string(), src.to_string())]);
        let loc = Location {
            path: "pkg/m.py".into(),
            start: 1,
            end: 2,
            name: "outer".into(),
            frame_line: None,
        };
        let s = suspects(&[loc], &files);
        let names: Vec<&str> = s.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(names, ["outer", "inner"]);
        assert_eq!((s[1].start, s[1].end), (5, 6));
    }

    #[test]
    fn a_function_reply_replaces_the_function_and_keeps_its_docstring() {
        let s = suspects(&locs(), &files());
        let reply = "Here is the fix:\n```python\ndef clamp(v, lo, hi):\n    if v > hi:\n        return hi\n    return max(v, lo)\n```\n";
        let edits = parse_reply(reply, &s, &files()).unwrap();
        assert_eq!(edits.len(), 1);
        let want = CORE.replace(
            "        return lo\n    return max",
            "        return hi\n    return max",
        );
        assert_eq!(edits[0].content, want);
    }

    #[test]
    fn a_method_reply_is_reindented_and_keeps_its_decorator() {
        let s = suspects(&locs(), &files());
        // Dedented, without the decorator: both restored.
        let reply = "```python\ndef count(self):\n    return len(self.items)\n```";
        let edits = parse_reply(reply, &s, &files()).unwrap();
        assert!(
            edits[0].content.ends_with(
                "class Cart:\n    @property\n    def count(self):\n        return len(self.items)\n"
            ),
            "{}",
            edits[0].content
        );
        // Indented as in the file, decorator included: the same result.
        let reply2 =
            "```python\n    @property\n    def count(self):\n        return len(self.items)\n```";
        assert_eq!(parse_reply(reply2, &s, &files()).unwrap(), edits);
    }

    #[test]
    fn replies_that_change_nothing_or_name_no_suspect_are_not_applied() {
        let s = suspects(&locs(), &files());
        let same = "```python\ndef clamp(v, lo, hi):\n    if v > hi:\n        return lo\n    return max(v, lo)\n```";
        assert_eq!(
            parse_reply(same, &s, &files()).unwrap_err().status(),
            "not_applied"
        );
        let other = "```python\ndef helper():\n    return 1\n```";
        let e = parse_reply(other, &s, &files()).unwrap_err();
        assert_eq!(e.status(), "not_applied");
        assert!(e.detail().contains("helper"), "{}", e.detail());
        let prose = "The bug is that clamp returns lo.";
        assert_eq!(
            parse_reply(prose, &s, &files()).unwrap_err().status(),
            "unparsed"
        );
    }

    #[test]
    fn search_replace_blocks_apply_exactly_or_by_stripped_lines() {
        let s = suspects(&locs(), &files());
        let exact = "```\npkg/core.py\n<<<<<<< SEARCH\n        return lo\n    return max(v, lo)\n=======\n        return hi\n    return max(v, lo)\n>>>>>>> REPLACE\n```";
        let e = parse_reply(exact, &s, &files()).unwrap();
        assert!(e[0].content.contains("        return hi\n    return max"));
        // Indentation lost (small models do this): matched by stripped lines, re-indented.
        let loose = "pkg/core.py\n<<<<<<< SEARCH\nif v > hi:\n    return lo\n=======\nif v > hi:\n    return hi\n>>>>>>> REPLACE";
        let e2 = parse_reply(loose, &s, &files()).unwrap();
        assert_eq!(e2[0].content, e[0].content, "{}", e2[0].content);
        // The wrong path still finds the suspect's file.
        let wrong_path = loose.replace("pkg/core.py", "core.py");
        assert_eq!(parse_reply(&wrong_path, &s, &files()).unwrap(), e2);
    }

    #[test]
    fn search_replace_refuses_identical_missing_or_template_blocks() {
        let s = suspects(&locs(), &files());
        let same = "<<<<<<< SEARCH\n    return lo\n=======\n    return lo\n>>>>>>> REPLACE";
        assert_eq!(
            parse_reply(same, &s, &files()).unwrap_err().status(),
            "not_applied"
        );
        let missing =
            "<<<<<<< SEARCH\n(exact lines to change)\n=======\n(new lines)\n>>>>>>> REPLACE";
        let e = parse_reply(missing, &s, &files()).unwrap_err();
        assert_eq!(e.status(), "not_applied");
        assert!(e.detail().contains("not in pkg/core.py"), "{}", e.detail());
        // An ambiguous stripped match (two `return` lines equal after stripping) is refused.
        let text = "def f():\n    x = 1\n    return x\n\ndef g():\n    x = 1\n    return x\n";
        assert_eq!(
            replace_once(text, "x = 1\nreturn x", "x = 2\nreturn x"),
            None
        );
    }

    #[test]
    fn the_prompt_shows_the_errors_the_test_and_the_suspects_not_the_docstring() {
        let s = suspects(&locs(), &files());
        let mut ctx = Context::default();
        ctx.focus.tests.push(Location {
            path: "tests/test_core.py".into(),
            start: 1,
            end: 2,
            name: "test_clamp".into(),
            frame_line: None,
        });
        let mut f = files();
        f.insert(
            "tests/test_core.py".into(),
            "def test_clamp():\n    assert clamp(5, 0, 3) == 3\n".into(),
        );
        let problem = Problem {
            targets: vec!["tests/test_core.py::test_clamp".into()],
            report: "noise\nE       assert 0 == 3\nFAILED tests/test_core.py::test_clamp\n".into(),
            context: ctx,
            files: f,
            ..Default::default()
        };
        let p = prompt(&problem, &s, EditFormat::Function);
        assert!(p.contains("E       assert 0 == 3"), "{p}");
        assert!(!p.contains("noise"), "{p}");
        assert!(p.contains("assert clamp(5, 0, 3) == 3"));
        assert!(p.contains("clamp (file pkg/core.py, line 4)"));
        assert!(!p.contains("Long doc"));
        assert!(p.contains("single ```python code block"));
        let sr = prompt(&problem, &s, EditFormat::SearchReplace);
        assert!(sr.contains("<<<<<<< SEARCH") && sr.contains("block(s) for pkg/core.py"));
    }

    #[test]
    fn passing_candidates_sort_by_diff_size_then_order() {
        let c = |i: usize, status: &str, lines: usize| Candidate {
            index: i,
            status: status.into(),
            detail: String::new(),
            diff: format!("--- a/x\n+++ b/x\n{}", "+a\n".repeat(lines)),
            usage: Usage::default(),
            model_ms: 0,
            check_ms: 0,
            rollback_ms: 0,
            reply: String::new(),
        };
        let o = CandidatesOutcome {
            candidates: vec![
                c(0, "passing", 3),
                c(1, "failing", 1),
                c(2, "passing", 1),
                c(3, "passing", 1),
            ],
            ..Default::default()
        };
        let order: Vec<usize> = o.passing().iter().map(|c| c.index).collect();
        assert_eq!(order, [2, 3, 0]);
        assert_eq!(diff_size("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"), 2);
    }

    #[test]
    fn line_edits_replace_numbered_lines_and_keep_indentation() {
        let s = suspects(&locs(), &files());
        // The docstring's lines are not shown, and the numbers are the file's.
        assert_eq!(s[0].shown_lines, [4, 9, 10, 11]);
        let p = prompt(&Problem::default(), &s, EditFormat::Lines);
        assert!(p.contains("   10          return lo"), "{p}");
        assert!(!p.contains("return a + b"), "no example code to copy: {p}");
        let reply = "Bug: returns lo instead of hi.\nLINE 10: return hi\n";
        let e = parse_reply(reply, &s, &files()).unwrap();
        assert_eq!(
            e[0].content,
            CORE.replace(
                "        return lo\n    return max",
                "        return hi\n    return max"
            )
        );
        // Backticks around it, indentation given: the same.
        let e2 = parse_reply("`LINE 10:         return hi`", &s, &files()).unwrap();
        assert_eq!(e2, e);
        let same = parse_reply("LINE 10:         return lo", &s, &files()).unwrap_err();
        assert_eq!(same.status(), "not_applied");
        // A wrong number lands on the most similar line nearby (models misread numbers), and
        // unchanged copies of other lines are skipped.
        let off = parse_reply("LINE 11: return hi\nLINE 9: if v > hi:", &s, &files()).unwrap();
        assert_eq!(off, e);
        let prose =
            parse_reply("LINE 10: Change `return lo` to `return hi`", &s, &files()).unwrap();
        assert_eq!(prose, e);
        let prose2 = parse_reply(
            "LINE 10: Replace `return lo` with `return hi` in the `clamp` function.",
            &s,
            &files(),
        )
        .unwrap();
        assert_eq!(prose2, e);
        let quoted = parse_reply("LINE 10: `        return hi`", &s, &files()).unwrap();
        assert_eq!(quoted, e);
        let outside = parse_reply("LINE 40: import os", &s, &files()).unwrap_err();
        assert!(
            outside.detail().contains("outside them"),
            "{}",
            outside.detail()
        );
    }

    #[test]
    fn sample_zero_is_greedy_and_the_rest_differ_by_seed() {
        assert_eq!(sampling(0, 0.8).temperature, 0.0);
        assert_eq!(sampling(1, 0.8).temperature, 0.8);
        assert_ne!(sampling(1, 0.8).seed, sampling(2, 0.8).seed);
    }
}
