//! A strict unified-diff applier for task patches (the bug patch onto a snapshot, the gold
//! patch for the oracle): every context and removed line must match exactly; a hunk may sit a
//! few lines away from where its header says (like `patch`'s offset), never fuzzily.

use std::collections::BTreeMap;

/// One file's hunks.
#[derive(Debug, Clone, PartialEq)]
pub struct FilePatch {
    pub path: String,
    pub hunks: Vec<Hunk>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Hunk {
    /// 1-based start line in the old file.
    pub old_start: usize,
    /// The old lines (context and removed), and the new lines (context and added), each
    /// without their line terminator.
    pub old: Vec<String>,
    pub new: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ApplyError {
    #[error("the patch is not a unified diff: {0}")]
    Malformed(String),
    #[error("hunk {hunk} of {path} does not match the file (its context or removed lines differ)")]
    Mismatch { path: String, hunk: usize },
    #[error("the patch changes {0}, which the tree does not have")]
    MissingFile(String),
}

fn strip_prefix(p: &str) -> String {
    let p = p.split('\t').next().unwrap_or(p).trim();
    p.strip_prefix("a/")
        .or_else(|| p.strip_prefix("b/"))
        .unwrap_or(p)
        .to_string()
}

pub fn parse(patch: &str) -> Result<Vec<FilePatch>, ApplyError> {
    let mut files: Vec<FilePatch> = Vec::new();
    let lines: Vec<&str> = patch.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(old) = line.strip_prefix("--- ") {
            let Some(new) = lines.get(i + 1).and_then(|l| l.strip_prefix("+++ ")) else {
                return Err(ApplyError::Malformed(format!(
                    "line {}: '---' without '+++'",
                    i + 1
                )));
            };
            let path = if new.trim() == "/dev/null" {
                strip_prefix(old)
            } else {
                strip_prefix(new)
            };
            files.push(FilePatch {
                path,
                hunks: Vec::new(),
            });
            i += 2;
            continue;
        }
        if let Some(rest) = line.strip_prefix("@@ -") {
            let Some(file) = files.last_mut() else {
                return Err(ApplyError::Malformed(format!(
                    "line {}: hunk before any file header",
                    i + 1
                )));
            };
            let range = rest.split(' ').next().unwrap_or("");
            let (start, count) = parse_range(range).ok_or_else(|| {
                ApplyError::Malformed(format!("line {}: bad hunk header {line:?}", i + 1))
            })?;
            let new_count = rest
                .split(' ')
                .nth(1)
                .and_then(|r| r.strip_prefix('+'))
                .and_then(parse_range)
                .map(|(_, c)| c)
                .ok_or_else(|| {
                    ApplyError::Malformed(format!("line {}: bad hunk header {line:?}", i + 1))
                })?;
            let mut hunk = Hunk {
                old_start: start,
                old: Vec::new(),
                new: Vec::new(),
            };
            i += 1;
            while i < lines.len() && (hunk.old.len() < count || hunk.new.len() < new_count) {
                let l = lines[i];
                if let Some(t) = l.strip_prefix('+') {
                    hunk.new.push(t.to_string());
                } else if let Some(t) = l.strip_prefix('-') {
                    hunk.old.push(t.to_string());
                } else if let Some(t) = l.strip_prefix(' ') {
                    hunk.old.push(t.to_string());
                    hunk.new.push(t.to_string());
                } else if l.is_empty() {
                    hunk.old.push(String::new());
                    hunk.new.push(String::new());
                } else if l.starts_with('\\') {
                    // "\ No newline at end of file"
                } else {
                    return Err(ApplyError::Malformed(format!(
                        "line {}: unexpected {l:?} in a hunk",
                        i + 1
                    )));
                }
                i += 1;
            }
            while i < lines.len() && lines[i].starts_with('\\') {
                i += 1;
            }
            file.hunks.push(hunk);
            continue;
        }
        i += 1;
    }
    if files.is_empty() {
        return Err(ApplyError::Malformed(
            "no file headers ('--- a/…', '+++ b/…')".into(),
        ));
    }
    Ok(files)
}

fn parse_range(r: &str) -> Option<(usize, usize)> {
    match r.split_once(',') {
        Some((s, c)) => Some((s.parse().ok()?, c.parse().ok()?)),
        None => Some((r.parse().ok()?, 1)),
    }
}

/// Apply one file's hunks to its text. The result keeps the text's final newline state.
pub fn apply_file(text: &str, fp: &FilePatch) -> Result<String, ApplyError> {
    let ends_nl = text.ends_with('\n');
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // Later hunks first, so earlier line numbers stay valid.
    let mut order: Vec<usize> = (0..fp.hunks.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(fp.hunks[k].old_start));
    for k in order {
        let h = &fp.hunks[k];
        let at = locate(&lines, h, h.old_start.saturating_sub(1)).ok_or_else(|| {
            ApplyError::Mismatch {
                path: fp.path.clone(),
                hunk: k + 1,
            }
        })?;
        lines.splice(at..at + h.old.len(), h.new.iter().cloned());
    }
    let mut out = lines.join("\n");
    if ends_nl && !out.is_empty() {
        out.push('\n');
    }
    Ok(out)
}

/// Where hunk `h`'s old lines stand in `lines`: the nearest fit to line index `want`, at most
/// 50 lines away (a hunk whose context moved a little still applies, like `patch`'s offset).
pub fn locate(lines: &[String], h: &Hunk, want: usize) -> Option<usize> {
    let fits =
        |at: usize| at + h.old.len() <= lines.len() && lines[at..at + h.old.len()] == h.old[..];
    (0..=50usize)
        .flat_map(|d| [want.checked_add(d), want.checked_sub(d)])
        .flatten()
        .find(|&at| fits(at))
}

/// Apply a patch to files given as path → text; returns the changed files' new texts.
pub fn apply(
    patch: &str,
    files: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, String>, ApplyError> {
    let mut out = BTreeMap::new();
    for fp in parse(patch)? {
        let current = out
            .get(&fp.path)
            .or_else(|| files.get(&fp.path))
            .ok_or_else(|| ApplyError::MissingFile(fp.path.clone()))?;
        let new = apply_file(current, &fp)?;
        out.insert(fp.path.clone(), new);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::generate::file_diff;

    #[test]
    fn round_trips_generated_diffs() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n";
        let new = "a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\nk\n";
        let d = file_diff("p/m.py", old, new);
        let mut files = BTreeMap::new();
        files.insert("p/m.py".to_string(), old.to_string());
        assert_eq!(apply(&d, &files).unwrap()["p/m.py"], new);
        let back = file_diff("p/m.py", new, old);
        files.insert("p/m.py".to_string(), new.to_string());
        assert_eq!(apply(&back, &files).unwrap()["p/m.py"], old);
    }

    #[test]
    fn offsets_are_tolerated_mismatches_are_not() {
        let d = "--- a/x.py\n+++ b/x.py\n@@ -2,2 +2,2 @@\n b\n-c\n+C\n";
        let mut files = BTreeMap::new();
        files.insert("x.py".to_string(), "z\nz\na\nb\nc\n".to_string());
        assert_eq!(apply(d, &files).unwrap()["x.py"], "z\nz\na\nb\nC\n");
        files.insert("x.py".to_string(), "a\nb\nX\n".to_string());
        assert_eq!(
            apply(d, &files),
            Err(ApplyError::Mismatch {
                path: "x.py".into(),
                hunk: 1
            })
        );
        assert!(matches!(
            apply(d, &BTreeMap::new()),
            Err(ApplyError::MissingFile(_))
        ));
        assert!(matches!(
            apply("hello", &files),
            Err(ApplyError::Malformed(_))
        ));
    }

    #[test]
    fn no_newline_at_end() {
        let d = file_diff("x.py", "a\nb", "a\nc");
        let mut files = BTreeMap::new();
        files.insert("x.py".to_string(), "a\nb".to_string());
        assert_eq!(apply(&d, &files).unwrap()["x.py"], "a\nc");
    }
}
