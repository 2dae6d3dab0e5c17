//! The chat formats' edits: a reply parsed as SEARCH/REPLACE blocks, numbered lines or a
//! whole function, and applied to the suspects' files. Pure.

use std::collections::BTreeMap;

use super::pydefs::{dedent, indent_of, py_defs};
use super::{Outcome, Suspect};
use crate::sandbox::output::truncate_text;

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
    pub fn status(&self) -> Outcome {
        match self {
            ParseError::Unparsed(_) => Outcome::Unparsed,
            ParseError::NotApplied(_) => Outcome::NotApplied,
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
pub(super) fn code_block(reply: &str) -> Option<String> {
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

pub(super) static LINE_EDIT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
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
pub(super) const LINE_SLACK: usize = 8;

/// Similarity of two lines, stripped (0..=1).
pub(super) fn line_similarity(a: &str, b: &str) -> f32 {
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
pub(super) fn replace_once(text: &str, search: &str, replace: &str) -> Option<String> {
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

/// A rule's candidate: its edits, and what it did (the trajectory's reply). Lives here, below the
/// rule files, so each of them can build one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleEdit {
    pub rule: &'static str,
    pub what: String,
    pub edits: Vec<FileEdit>,
}
