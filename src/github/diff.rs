//! Unified diffs and suggestion anchoring (pure).
//!
//! A ```suggestion must anchor on RIGHT-side lines inside one hunk of the PR's own diff
//! (else GitHub answers 422). Our patch applies to the PR head, so its *old* side is the
//! PR's *right* side: a hunk of ours can become a suggestion when the old lines it changes
//! lie inside one PR hunk's new range. Everything else goes to the fallback diff comment.

use std::collections::BTreeMap;

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Context(String),
    Removed(String),
    Added(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: u64,
    pub old_len: u64,
    pub new_start: u64,
    pub new_len: u64,
    /// The `@@ … @@` header line as written.
    pub header: String,
    pub lines: Vec<Line>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    /// Path before (None for a new file).
    pub old_path: Option<String>,
    /// Path after (None for a deleted file).
    pub new_path: Option<String>,
    /// The file's header lines (`diff --git`, `index`, `---`, `+++`, mode lines) as written.
    pub header: Vec<String>,
    pub hunks: Vec<Hunk>,
    /// A binary change or anything without hunks.
    pub binary: bool,
}

impl FileDiff {
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or("")
    }
}

fn parse_range(s: &str) -> Option<(u64, u64)> {
    let (a, b) = match s.split_once(',') {
        Some((a, b)) => (a, b),
        None => (s, "1"),
    };
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Parse `@@ -a,b +c,d @@`.
pub fn parse_hunk_header(line: &str) -> Option<(u64, u64, u64, u64)> {
    let rest = line.strip_prefix("@@ -")?;
    let (old, rest) = rest.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let (os, ol) = parse_range(old)?;
    let (ns, nl) = parse_range(new)?;
    Some((os, ol, ns, nl))
}

/// Parse hunks only (the `patch` field of a PR file has no file header).
pub fn parse_hunks(patch: &str) -> Vec<Hunk> {
    let mut hunks: Vec<Hunk> = Vec::new();
    for line in patch.lines() {
        if let Some((os, ol, ns, nl)) = parse_hunk_header(line) {
            hunks.push(Hunk {
                old_start: os,
                old_len: ol,
                new_start: ns,
                new_len: nl,
                header: line.to_string(),
                lines: Vec::new(),
            });
            continue;
        }
        let Some(h) = hunks.last_mut() else { continue };
        if let Some(t) = line.strip_prefix('+') {
            h.lines.push(Line::Added(t.to_string()));
        } else if let Some(t) = line.strip_prefix('-') {
            h.lines.push(Line::Removed(t.to_string()));
        } else if let Some(t) = line.strip_prefix(' ') {
            h.lines.push(Line::Context(t.to_string()));
        } else if line.is_empty() {
            h.lines.push(Line::Context(String::new()));
        }
        // `\ No newline at end of file` and anything else: not a content line.
    }
    hunks
}

fn strip_ab(p: &str, prefix: &str) -> Option<String> {
    let p = p.trim_end_matches('\t');
    if p == "/dev/null" {
        return None;
    }
    Some(p.strip_prefix(prefix).unwrap_or(p).to_string())
}

/// Parse a multi-file unified (git) diff.
pub fn parse_unified(diff: &str) -> Vec<FileDiff> {
    let mut files: Vec<FileDiff> = Vec::new();
    let mut in_hunks = false;
    let mut hunk_text = String::new();
    let flush = |files: &mut Vec<FileDiff>, text: &mut String| {
        if let Some(f) = files.last_mut() {
            f.hunks = parse_hunks(text);
            if f.hunks.is_empty() {
                f.binary = true;
            }
        }
        text.clear();
    };
    for line in diff.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            flush(&mut files, &mut hunk_text);
            in_hunks = false;
            // Paths from `diff --git a/x b/x`, refined by ---/+++ below.
            let (a, b) = match rest.split_once(" b/") {
                Some((a, b)) => (strip_ab(a, "a/"), Some(b.to_string())),
                None => (None, None),
            };
            files.push(FileDiff {
                old_path: a,
                new_path: b,
                header: vec![line.to_string()],
                hunks: Vec::new(),
                binary: false,
            });
            continue;
        }
        if !in_hunks && line.starts_with("--- ") {
            if files.is_empty() {
                files.push(FileDiff {
                    old_path: None,
                    new_path: None,
                    header: Vec::new(),
                    hunks: Vec::new(),
                    binary: false,
                });
            }
            if let Some(f) = files.last_mut() {
                f.old_path = strip_ab(&line[4..], "a/");
                f.header.push(line.to_string());
            }
            continue;
        }
        if !in_hunks && line.starts_with("+++ ") {
            if let Some(f) = files.last_mut() {
                f.new_path = strip_ab(&line[4..], "b/");
                f.header.push(line.to_string());
            }
            continue;
        }
        if line.starts_with("@@ ") {
            in_hunks = true;
        }
        if in_hunks {
            hunk_text.push_str(line);
            hunk_text.push('\n');
        } else if let Some(f) = files.last_mut() {
            if line.starts_with("new file mode") {
                f.old_path = None;
            } else if line.starts_with("deleted file mode") {
                f.new_path = None;
            }
            f.header.push(line.to_string());
        }
    }
    flush(&mut files, &mut hunk_text);
    files
}

/// Render a file's header and the given hunks back to unified diff text.
pub fn render_file(f: &FileDiff, hunks: &[&Hunk]) -> String {
    let mut out = String::new();
    for h in &f.header {
        out.push_str(h);
        out.push('\n');
    }
    for h in hunks {
        out.push_str(&h.header);
        out.push('\n');
        for l in &h.lines {
            let (c, t) = match l {
                Line::Context(t) => (' ', t),
                Line::Removed(t) => ('-', t),
                Line::Added(t) => ('+', t),
            };
            out.push(c);
            out.push_str(t);
            out.push('\n');
        }
    }
    out
}

/// Commentable RIGHT-side line ranges (inclusive) per path, from the PR's file patches.
pub type Commentable = BTreeMap<String, Vec<(u64, u64)>>;

/// Build the commentable ranges from `(path, patch)` pairs of `pulls/list-files`.
pub fn commentable_ranges<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Commentable {
    let mut out = Commentable::new();
    for (path, patch) in files {
        let ranges = parse_hunks(patch)
            .into_iter()
            .filter(|h| h.new_len > 0)
            .map(|h| (h.new_start, h.new_start + h.new_len - 1))
            .collect();
        out.insert(path.to_string(), ranges);
    }
    out
}

/// A suggestion: replace RIGHT lines `start..=end` of `path` with `replacement`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    pub path: String,
    pub start: u64,
    pub end: u64,
    /// The new lines, each without its newline; empty means "delete these lines".
    pub replacement: Vec<String>,
}

/// Where each hunk of our patch goes.
#[derive(Debug, Clone, Default)]
pub struct Placement {
    pub suggestions: Vec<Suggestion>,
    /// The part of the patch that cannot be suggested, as unified diff text.
    pub rest: String,
}

/// The changed old-side region of a hunk and its replacement, or None when it cannot be
/// expressed as a replacement of existing lines (e.g. insertion into an empty file).
fn hunk_to_suggestion(path: &str, h: &Hunk) -> Option<Suggestion> {
    // Walk the hunk, tracking old line numbers.
    let mut old_no = h.old_start;
    let mut first_change: Option<usize> = None;
    let mut last_change: Option<usize> = None;
    // old line number of each line index (for Context/Removed), or the old line before
    // it (for Added).
    let mut olds = Vec::with_capacity(h.lines.len());
    for (i, l) in h.lines.iter().enumerate() {
        match l {
            Line::Context(_) => {
                olds.push(Some(old_no));
                old_no += 1;
            }
            Line::Removed(_) => {
                olds.push(Some(old_no));
                old_no += 1;
                first_change.get_or_insert(i);
                last_change = Some(i);
            }
            Line::Added(_) => {
                olds.push(None);
                first_change.get_or_insert(i);
                last_change = Some(i);
            }
        }
    }
    let (mut a, mut b) = (first_change?, last_change?);
    // Widen until both ends sit on an existing old line: pure insertions repeat an
    // adjacent context line (the suggestion replaces it with itself plus the new lines).
    let has_old = |i: usize| olds.get(i).copied().flatten().is_some();
    if !(a..=b).any(has_old) {
        if a > 0 && has_old(a - 1) {
            a -= 1;
        } else if b + 1 < h.lines.len() && has_old(b + 1) {
            b += 1;
        } else {
            return None;
        }
    }
    let start = (a..=b).find_map(|i| olds[i])?;
    let end = (a..=b).rev().find_map(|i| olds[i])?;
    let replacement = h.lines[a..=b]
        .iter()
        .filter_map(|l| match l {
            Line::Context(t) | Line::Added(t) => Some(t.clone()),
            Line::Removed(_) => None,
        })
        .collect();
    Some(Suggestion {
        path: path.to_string(),
        start,
        end,
        replacement,
    })
}

/// Split our patch into suggestions (hunks wholly inside one PR hunk) and the rest.
pub fn place(patch: &str, commentable: &Commentable) -> Placement {
    let mut placement = Placement::default();
    for f in parse_unified(patch) {
        let mut rest_hunks: Vec<&Hunk> = Vec::new();
        let suggestable_file =
            !f.binary && f.old_path.is_some() && f.new_path.is_some() && f.old_path == f.new_path;
        let ranges = f.new_path.as_deref().and_then(|p| commentable.get(p));
        for h in &f.hunks {
            let s = if suggestable_file {
                ranges.and_then(|rs| {
                    let s = hunk_to_suggestion(f.path(), h)?;
                    rs.iter()
                        .any(|&(lo, hi)| lo <= s.start && s.end <= hi)
                        .then_some(s)
                })
            } else {
                None
            };
            match s {
                Some(s) => placement.suggestions.push(s),
                None => rest_hunks.push(h),
            }
        }
        if f.binary || !rest_hunks.is_empty() {
            placement.rest.push_str(&render_file(&f, &rest_hunks));
        }
    }
    placement
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunk_header() {
        assert_eq!(
            parse_hunk_header("@@ -1,5 +1,6 @@ fn x"),
            Some((1, 5, 1, 6))
        );
        assert_eq!(parse_hunk_header("@@ -3 +3 @@"), Some((3, 1, 3, 1)));
        assert_eq!(parse_hunk_header("@@ -0,0 +1,2 @@"), Some((0, 0, 1, 2)));
        assert_eq!(parse_hunk_header("@@ bogus"), None);
    }

    #[test]
    fn parses_new_and_deleted_files() {
        let d = "diff --git a/n.py b/n.py\nnew file mode 100644\nindex 0000000..1\n--- /dev/null\n+++ b/n.py\n@@ -0,0 +1 @@\n+x\ndiff --git a/o.py b/o.py\ndeleted file mode 100644\n--- a/o.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n";
        let f = parse_unified(d);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].old_path, None);
        assert_eq!(f[0].new_path.as_deref(), Some("n.py"));
        assert_eq!(f[1].new_path, None);
        assert_eq!(f[1].hunks[0].lines, vec![Line::Removed("y".into())]);
    }

    #[test]
    fn pure_insertion_repeats_the_line_before() {
        let h = &parse_hunks("@@ -1,2 +1,3 @@\n a\n+b\n c\n")[0];
        let s = hunk_to_suggestion("f", h).unwrap();
        assert_eq!((s.start, s.end), (1, 1));
        assert_eq!(s.replacement, vec!["a", "b"]);
    }

    #[test]
    fn insertion_into_empty_file_is_not_a_suggestion() {
        let h = &parse_hunks("@@ -0,0 +1 @@\n+x\n")[0];
        assert_eq!(hunk_to_suggestion("f", h), None);
    }
}
