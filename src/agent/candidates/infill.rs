//! The `infill` format's sites: the most suspicious lines, masked one at a time, the draw
//! schedule over them, the text around a gap, and the edit a fill makes.

use std::collections::BTreeMap;

use super::MAX_SUSPECTS;
use super::edits::{FileEdit, ParseError};
use super::pydefs::indent_of;
use crate::agent::localize::Ranked;

/// Lines the `infill` format masks at most (each is one fill-in-the-middle request).
pub(super) const MAX_SITES: usize = 16;
/// After the greedy pass, the best sites are filled again, sampled: of the 17 benchmark tasks
/// whose bug line was a site but was filled wrong, it ranked in the top four in 11.
pub(super) const RESAMPLED_SITES: usize = 4;
/// Sampled fills of each of those.
pub(super) const RESAMPLES: usize = 2;

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
pub(super) const INFILL_ABOVE: usize = 20;
pub(super) const INFILL_BELOW: usize = 5;
/// Tokens an infill may write (one line).
pub(super) const INFILL_TOKENS: u32 = 80;

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
pub(super) fn maskable(line: &str) -> bool {
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
