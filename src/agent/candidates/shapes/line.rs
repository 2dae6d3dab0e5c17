//! `line`: one of the most suspicious lines, and the module-level assignments a suspect reads.

use super::super::edits::ParseError;
use super::super::pydefs::{indent_of, module_assignments_read};
use super::{Func, InfillShape, Shape, Site, maskable};

/// Tokens a one-line fill may write.
const INFILL_TOKENS: u32 = 80;
/// Module-level assignments a function reads that become line sites, at most per function.
const MODULE_SITES: usize = 3;
/// Physical lines one statement spans at most for a one-line fill to replace it whole.
const STATEMENT_LINES: usize = 8;

pub(super) struct Line;

impl Shape for Line {
    /// Every scored line, then the import-time lines the function depends on: the spectrum
    /// cannot score them ([`module_assignments_read`]); a line another function reads too is
    /// one site.
    fn sites(&self, f: &Func<'_>, found: &[Site]) -> Vec<Site> {
        let mut out: Vec<Site> = f
            .hot
            .iter()
            .map(|&(l, score)| f.site(l, l, InfillShape::Line, score))
            .collect();
        for l in module_assignments_read(f.src, f.span.0, f.span.1)
            .into_iter()
            .filter(|&l| f.in_file(l) && maskable(f.lines[l - 1]))
            .take(MODULE_SITES)
        {
            let s = Site {
                func: (l, l),
                ..f.site(l, l, InfillShape::Line, 0.0)
            };
            if !found
                .iter()
                .chain(&out)
                .any(|o| o.path == s.path && o.line == l)
            {
                out.push(s);
            }
        }
        out
    }

    fn label(&self, site: &Site) -> String {
        format!("{}:{}", site.path, site.line)
    }

    fn limits(&self, _site: &Site, _src: &str) -> (Vec<String>, u32) {
        (vec!["\n".into()], INFILL_TOKENS)
    }

    fn fill(
        &self,
        text: &str,
        site: &Site,
        lines: &[String],
    ) -> Result<(Vec<String>, usize), ParseError> {
        let mut end = site.end;
        let filled = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        if filled.trim().is_empty() {
            return Err(ParseError::Unparsed("the model filled in nothing".into()));
        }
        // A line that opens a statement its next lines close, filled with the whole
        // statement on one line, means the statement (as written, the lines left would
        // not parse: 25 such fills on the two benches, one of them the gold fix).
        if open_brackets(filled) == Some(0) {
            end = statement_end(lines, site.line).unwrap_or(end);
        }
        // A model that drops the indentation still means the line at its place.
        let line = if indent_of(filled).is_empty() {
            format!("{}{}", indent_of(&lines[site.line - 1]), filled.trim())
        } else {
            filled.trim_end().to_string()
        };
        Ok((vec![line], end))
    }

    fn one_line(&self) -> bool {
        true
    }
}

/// Brackets a line of Python leaves open (negative: it closes more than it opens), outside
/// strings and its comment; `None` when a triple quote makes the line's strings unknown.
/// Pure.
pub(in super::super) fn open_brackets(line: &str) -> Option<i32> {
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
pub(in super::super) fn statement_end(lines: &[String], first: usize) -> Option<usize> {
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
