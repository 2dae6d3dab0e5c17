//! A small, strict parser for unified diffs (git's extended format and plain `diff -u`).
//!
//! It exists so the patch policy judges what `git apply` would actually do: renames, copies,
//! mode changes, binary markers, quoted paths and CRLF are all surfaced as data. Hunk bodies are
//! consumed by their line counts, so a removed line that happens to start with `--- ` is never
//! mistaken for a file header.

use std::fmt;

/// How one file is changed by the patch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Added,
    Deleted,
    Modified,
    Renamed,
    Copied,
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            ChangeKind::Added => "added",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Modified => "modified",
            ChangeKind::Renamed => "renamed",
            ChangeKind::Copied => "copied",
        };
        f.write_str(s)
    }
}

/// One line of a hunk body (without its `+`/`-`/` ` prefix and without the line ending).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    Context(String),
    Added(String),
    Removed(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hunk {
    pub old_start: usize,
    pub old_len: usize,
    pub new_start: usize,
    pub new_len: usize,
    pub lines: Vec<HunkLine>,
}

/// Everything the patch says about one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// Path before the change (None for an added file).
    pub old_path: Option<String>,
    /// Path after the change (None for a deleted file).
    pub new_path: Option<String>,
    pub kind: ChangeKind,
    pub old_mode: Option<String>,
    pub new_mode: Option<String>,
    /// `Binary files … differ` or a `GIT binary patch`.
    pub binary: bool,
    pub hunks: Vec<Hunk>,
    /// Some line of this file's section ended in `\r\n`.
    pub crlf: bool,
}

impl FilePatch {
    /// The path a reader would name this change by (new path, else old).
    pub fn path(&self) -> &str {
        self.new_path
            .as_deref()
            .or(self.old_path.as_deref())
            .unwrap_or("")
    }

    /// Every path this change touches (both sides of a rename).
    pub fn paths(&self) -> Vec<&str> {
        let mut v = Vec::new();
        if let Some(p) = &self.old_path {
            v.push(p.as_str());
        }
        if let Some(p) = &self.new_path
            && Some(p) != self.old_path.as_ref()
        {
            v.push(p.as_str());
        }
        v
    }

    pub fn added_lines(&self) -> impl Iterator<Item = &str> {
        self.hunks.iter().flat_map(|h| {
            h.lines.iter().filter_map(|l| match l {
                HunkLine::Added(s) => Some(s.as_str()),
                _ => None,
            })
        })
    }

    /// Lines added minus nothing: (added, removed) counts.
    pub fn line_counts(&self) -> (usize, usize) {
        let mut a = 0;
        let mut r = 0;
        for l in self.hunks.iter().flat_map(|h| &h.lines) {
            match l {
                HunkLine::Added(_) => a += 1,
                HunkLine::Removed(_) => r += 1,
                HunkLine::Context(_) => {}
            }
        }
        (a, r)
    }
}

/// Why a patch could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiffError {
    #[error("line {line}: {reason}")]
    Malformed { line: usize, reason: String },
    #[error("the patch contains no file changes")]
    Empty,
}

fn malformed(line: usize, reason: impl Into<String>) -> DiffError {
    DiffError::Malformed {
        line: line + 1,
        reason: reason.into(),
    }
}

/// Parse a whole patch. Text before the first file header (a commit message, say) is ignored.
pub fn parse(text: &str) -> Result<Vec<FilePatch>, DiffError> {
    let raw: Vec<&str> = text.split_inclusive('\n').collect();
    let mut files = Vec::new();
    let mut i = 0;
    while i < raw.len() {
        let line = strip_eol(raw[i]);
        if let Some(rest) = line.strip_prefix("diff --git ") {
            let (fp, next) = parse_git_section(&raw, i, rest)?;
            files.push(fp);
            i = next;
        } else if line.starts_with("--- ")
            && raw
                .get(i + 1)
                .is_some_and(|l| strip_eol(l).starts_with("+++ "))
        {
            let (fp, next) = parse_plain_section(&raw, i)?;
            files.push(fp);
            i = next;
        } else {
            i += 1;
        }
    }
    if files.is_empty() {
        return Err(DiffError::Empty);
    }
    Ok(files)
}

fn strip_eol(l: &str) -> &str {
    let l = l.strip_suffix('\n').unwrap_or(l);
    l.strip_suffix('\r').unwrap_or(l)
}

fn parse_git_section(
    raw: &[&str],
    start: usize,
    header: &str,
) -> Result<(FilePatch, usize), DiffError> {
    let (mut old_path, mut new_path) = split_git_header(header)
        .map(|(a, b)| (Some(a), Some(b)))
        .unwrap_or((None, None));
    let mut fp = FilePatch {
        old_path: None,
        new_path: None,
        kind: ChangeKind::Modified,
        old_mode: None,
        new_mode: None,
        binary: false,
        hunks: Vec::new(),
        crlf: raw[start].ends_with("\r\n"),
    };
    let mut i = start + 1;
    // Extended header lines.
    while i < raw.len() {
        let line = strip_eol(raw[i]);
        if raw[i].ends_with("\r\n") {
            fp.crlf = true;
        }
        if line.starts_with("diff --git ") || line.starts_with("@@ ") {
            break;
        }
        if let Some(m) = line.strip_prefix("old mode ") {
            fp.old_mode = Some(m.trim().to_string());
        } else if let Some(m) = line.strip_prefix("new mode ") {
            fp.new_mode = Some(m.trim().to_string());
        } else if let Some(m) = line.strip_prefix("new file mode ") {
            fp.kind = ChangeKind::Added;
            fp.new_mode = Some(m.trim().to_string());
        } else if let Some(m) = line.strip_prefix("deleted file mode ") {
            fp.kind = ChangeKind::Deleted;
            fp.old_mode = Some(m.trim().to_string());
        } else if let Some(p) = line.strip_prefix("rename from ") {
            fp.kind = ChangeKind::Renamed;
            old_path = Some(unquote(p).map_err(|e| malformed(i, e))?);
        } else if let Some(p) = line.strip_prefix("rename to ") {
            fp.kind = ChangeKind::Renamed;
            new_path = Some(unquote(p).map_err(|e| malformed(i, e))?);
        } else if let Some(p) = line.strip_prefix("copy from ") {
            fp.kind = ChangeKind::Copied;
            old_path = Some(unquote(p).map_err(|e| malformed(i, e))?);
        } else if let Some(p) = line.strip_prefix("copy to ") {
            fp.kind = ChangeKind::Copied;
            new_path = Some(unquote(p).map_err(|e| malformed(i, e))?);
        } else if let Some(rest) = line.strip_prefix("index ") {
            // `index abc..def 100644`: the trailing mode is the file's mode on both sides.
            if let Some(mode) = rest.split_whitespace().nth(1) {
                fp.old_mode.get_or_insert_with(|| mode.to_string());
                fp.new_mode.get_or_insert_with(|| mode.to_string());
            }
        } else if line.starts_with("Binary files ") || line == "GIT binary patch" {
            fp.binary = true;
            // Skip the binary payload up to the next file.
            i += 1;
            while i < raw.len() && !strip_eol(raw[i]).starts_with("diff --git ") {
                i += 1;
            }
            break;
        } else if let Some(p) = line.strip_prefix("--- ")
            && p != "/dev/null"
        {
            old_path = Some(strip_prefix_dir(&unquote(p).map_err(|e| malformed(i, e))?));
        } else if let Some(p) = line.strip_prefix("+++ ")
            && p != "/dev/null"
        {
            new_path = Some(strip_prefix_dir(&unquote(p).map_err(|e| malformed(i, e))?));
        }
        i += 1;
    }
    let next = parse_hunks(raw, i, &mut fp)?;
    match fp.kind {
        ChangeKind::Added => old_path = None,
        ChangeKind::Deleted => new_path = None,
        _ => {}
    }
    if old_path.is_none() && new_path.is_none() {
        return Err(malformed(
            start,
            "cannot tell which file this section changes",
        ));
    }
    fp.old_path = old_path;
    fp.new_path = new_path;
    Ok((fp, next))
}

fn parse_plain_section(raw: &[&str], start: usize) -> Result<(FilePatch, usize), DiffError> {
    let path_of = |line: &str, idx: usize| -> Result<Option<String>, DiffError> {
        // `diff -u` appends a tab and a timestamp.
        let p = line.split('\t').next().unwrap_or("");
        if p == "/dev/null" {
            return Ok(None);
        }
        Ok(Some(strip_prefix_dir(
            &unquote(p).map_err(|e| malformed(idx, e))?,
        )))
    };
    let old = path_of(&strip_eol(raw[start])[4..], start)?;
    let new = path_of(&strip_eol(raw[start + 1])[4..], start + 1)?;
    let kind = match (&old, &new) {
        (None, Some(_)) => ChangeKind::Added,
        (Some(_), None) => ChangeKind::Deleted,
        (Some(a), Some(b)) if a != b => ChangeKind::Renamed,
        _ => ChangeKind::Modified,
    };
    let mut fp = FilePatch {
        old_path: old,
        new_path: new,
        kind,
        old_mode: None,
        new_mode: None,
        binary: false,
        hunks: Vec::new(),
        crlf: raw[start].ends_with("\r\n"),
    };
    let next = parse_hunks(raw, start + 2, &mut fp)?;
    Ok((fp, next))
}

/// Consume `@@` hunks starting at `i`; returns the index of the first line after them.
fn parse_hunks(raw: &[&str], mut i: usize, fp: &mut FilePatch) -> Result<usize, DiffError> {
    while i < raw.len() {
        let line = strip_eol(raw[i]);
        if !line.starts_with("@@ ") {
            break;
        }
        let (old_start, old_len, new_start, new_len) =
            parse_hunk_header(line).ok_or_else(|| malformed(i, "bad hunk header"))?;
        let mut hunk = Hunk {
            old_start,
            old_len,
            new_start,
            new_len,
            lines: Vec::new(),
        };
        let (mut old_left, mut new_left) = (old_len, new_len);
        i += 1;
        while old_left > 0 || new_left > 0 {
            let Some(l) = raw.get(i) else {
                return Err(malformed(i, "hunk ends before its line count"));
            };
            if l.ends_with("\r\n") {
                fp.crlf = true;
            }
            let body = strip_eol(l);
            let body = body.strip_suffix('\r').unwrap_or(body);
            match body.as_bytes().first() {
                Some(b'+') => {
                    new_left = new_left
                        .checked_sub(1)
                        .ok_or_else(|| malformed(i, "more added lines than the header says"))?;
                    hunk.lines.push(HunkLine::Added(body[1..].to_string()));
                }
                Some(b'-') => {
                    old_left = old_left
                        .checked_sub(1)
                        .ok_or_else(|| malformed(i, "more removed lines than the header says"))?;
                    hunk.lines.push(HunkLine::Removed(body[1..].to_string()));
                }
                // An empty line is context whose leading space was eaten (editors, mail).
                Some(b' ') | None => {
                    old_left = old_left
                        .checked_sub(1)
                        .ok_or_else(|| malformed(i, "more context lines than the header says"))?;
                    new_left = new_left
                        .checked_sub(1)
                        .ok_or_else(|| malformed(i, "more context lines than the header says"))?;
                    hunk.lines
                        .push(HunkLine::Context(body.get(1..).unwrap_or("").to_string()));
                }
                Some(b'\\') => {}
                Some(_) => return Err(malformed(i, "unexpected line inside a hunk")),
            }
            i += 1;
        }
        // `\ No newline at end of file` after the last line.
        while raw.get(i).is_some_and(|l| l.starts_with('\\')) {
            i += 1;
        }
        fp.hunks.push(hunk);
    }
    Ok(i)
}

fn parse_hunk_header(line: &str) -> Option<(usize, usize, usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let end = rest.find(" @@")?;
    let mut parts = rest[..end].split(" +");
    let range = |s: &str| -> Option<(usize, usize)> {
        match s.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((s.parse().ok()?, 1)),
        }
    };
    let (os, ol) = range(parts.next()?)?;
    let (ns, nl) = range(parts.next()?)?;
    Some((os, ol, ns, nl))
}

/// `a/x b/x` (maybe quoted). Ambiguous when names contain ` b/`; then the split that makes both
/// sides equal wins, which is right for everything but renames (whose paths come from
/// `rename from/to` anyway).
fn split_git_header(h: &str) -> Option<(String, String)> {
    if h.starts_with('"') {
        let (a, rest) = take_quoted(h)?;
        let rest = rest.trim_start();
        let b = if rest.starts_with('"') {
            take_quoted(rest)?.0
        } else {
            rest.to_string()
        };
        return Some((strip_prefix_dir(&a), strip_prefix_dir(&b)));
    }
    let candidates: Vec<usize> = h.match_indices(" ").map(|(i, _)| i).collect();
    let mut first = None;
    for i in candidates {
        let (a, b) = (&h[..i], &h[i + 1..]);
        let b = if b.starts_with('"') {
            match take_quoted(b) {
                Some((q, _)) => q,
                None => continue,
            }
        } else {
            b.to_string()
        };
        let (a, b) = (strip_prefix_dir(a), strip_prefix_dir(&b));
        if a == b {
            return Some((a, b));
        }
        first.get_or_insert((a, b));
    }
    first
}

/// Drop git's `a/` / `b/` prefixes (`-p1`).
fn strip_prefix_dir(p: &str) -> String {
    for pre in ["a/", "b/"] {
        if let Some(rest) = p.strip_prefix(pre) {
            return rest.to_string();
        }
    }
    p.to_string()
}

/// Git's C-style quoting: `"dir/\303\251 \"x\"\t"`. Unquoted input is returned as is
/// (with a trailing tab-timestamp removed by the caller).
pub fn unquote(s: &str) -> Result<String, String> {
    if !s.starts_with('"') {
        return Ok(s.to_string());
    }
    take_quoted(s)
        .map(|(q, _)| q)
        .ok_or_else(|| format!("unterminated quoted path {s:?}"))
}

fn take_quoted(s: &str) -> Option<(String, &str)> {
    let bytes = s.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let mut out: Vec<u8> = Vec::new();
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let text = String::from_utf8_lossy(&out).into_owned();
                return Some((text, &s[i + 1..]));
            }
            b'\\' => {
                let c = *bytes.get(i + 1)?;
                i += 2;
                match c {
                    b'n' => out.push(b'\n'),
                    b't' => out.push(b'\t'),
                    b'r' => out.push(b'\r'),
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'v' => out.push(11),
                    b'0'..=b'7' => {
                        let oct = s.get(i - 1..i + 2)?;
                        out.push(u8::from_str_radix(oct, 8).ok()?);
                        i += 2;
                    }
                    other => out.push(other),
                }
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_file_with_hunk() {
        let p = "diff --git a/calc.py b/calc.py\nindex 1..2 100644\n--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n";
        let f = parse(p).unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].kind, ChangeKind::Modified);
        assert_eq!(f[0].path(), "calc.py");
        assert_eq!(f[0].line_counts(), (1, 1));
        assert_eq!(f[0].old_mode, f[0].new_mode);
    }

    #[test]
    fn removed_line_that_looks_like_a_header_stays_in_the_hunk() {
        let p = "diff --git a/x.md b/x.md\n--- a/x.md\n+++ b/x.md\n@@ -1,1 +1,1 @@\n--- a/evil\n+++ b/evil\n";
        let f = parse(p).unwrap();
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].line_counts(), (1, 1));
    }

    #[test]
    fn rename_new_delete_mode_symlink_binary() {
        let p = "\
diff --git a/old.py b/new.py
similarity index 100%
rename from old.py
rename to new.py
diff --git a/n.py b/n.py
new file mode 100644
index 0000000..e69de29
--- /dev/null
+++ b/n.py
@@ -0,0 +1 @@
+x = 1
diff --git a/gone.py b/gone.py
deleted file mode 100644
index e69de29..0000000
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
diff --git a/link b/link
new file mode 120000
index 0000000..1111111
--- /dev/null
+++ b/link
@@ -0,0 +1 @@
+/etc/passwd
\\ No newline at end of file
diff --git a/img.png b/img.png
index 1..2 100644
Binary files a/img.png and b/img.png differ
";
        let f = parse(p).unwrap();
        assert_eq!(f.len(), 6);
        assert_eq!(f[0].kind, ChangeKind::Renamed);
        assert_eq!(f[0].old_path.as_deref(), Some("old.py"));
        assert_eq!(f[0].new_path.as_deref(), Some("new.py"));
        assert_eq!(f[1].kind, ChangeKind::Added);
        assert_eq!(f[1].old_path, None);
        assert_eq!(f[2].kind, ChangeKind::Deleted);
        assert_eq!(f[2].new_path, None);
        assert_eq!(f[3].old_mode.as_deref(), Some("100644"));
        assert_eq!(f[3].new_mode.as_deref(), Some("100755"));
        assert_eq!(f[4].new_mode.as_deref(), Some("120000"));
        assert!(f[5].binary);
    }

    #[test]
    fn quoted_paths_and_crlf() {
        let p = "diff --git \"a/sp ace/\\303\\251.py\" \"b/sp ace/\\303\\251.py\"\r\n--- \"a/sp ace/\\303\\251.py\"\r\n+++ \"b/sp ace/\\303\\251.py\"\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n";
        let f = parse(p).unwrap();
        assert_eq!(f[0].path(), "sp ace/é.py");
        assert!(f[0].crlf);
        assert_eq!(f[0].hunks[0].lines[1], HunkLine::Added("b".into()));
    }

    #[test]
    fn plain_unified_diff() {
        let p = "--- calc.py\t2024-01-01\n+++ calc.py\t2024-01-02\n@@ -1 +1 @@\n-a\n+b\n";
        let f = parse(p).unwrap();
        assert_eq!(f[0].path(), "calc.py");
        assert_eq!(f[0].kind, ChangeKind::Modified);
    }

    #[test]
    fn truncated_hunk_and_empty_patch_are_errors() {
        assert!(matches!(
            parse("diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n"),
            Err(DiffError::Malformed { .. })
        ));
        assert_eq!(parse("just a message\n"), Err(DiffError::Empty));
        assert!(parse("").is_err());
    }

    #[test]
    fn header_with_spaces_splits_on_equal_halves() {
        assert_eq!(
            split_git_header("a/x b/y.py b/x b/y.py"),
            Some(("x b/y.py".into(), "x b/y.py".into()))
        );
    }
}
