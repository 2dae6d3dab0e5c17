//! The functions the candidates may rewrite: from the fault localization's ranking, else the
//! failing-code context's locations (and their callees, one hop).

use std::collections::BTreeMap;

use super::pydefs::{PyDef, docstring_lines, py_defs};
use super::{MAX_SUSPECTS, SUSPECT_BUDGET};
use crate::agent::context::Location;
use crate::agent::localize::Ranked;

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
pub(super) const MAX_WITH_CALLEES: usize = 5;

pub(super) static CALL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(").expect("static regex")
});

/// A suspect of lines `start..=end` (1-based) of `src`, docstring hidden.
pub(super) fn make_suspect(
    path: &str,
    start: usize,
    end: usize,
    label: &str,
    src: &str,
) -> Option<Suspect> {
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
pub(super) const MAX_HOT: usize = 4;

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
