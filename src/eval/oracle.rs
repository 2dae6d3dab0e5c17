//! `--model oracle`: a scripted agent that applies a task's gold patch through the agent's own
//! tools (one `str_replace` per hunk, then `submit`). Resolving 100% with it checks the
//! harness end to end: tools, diff, verification, receipts.

use std::path::Path;

use serde_json::{Value, json};

use crate::verify::apply::{self, ApplyError, FilePatch};

/// The oracle's script for `patch` on the tree at `tree`, in the scripted model's format
/// (`{"turns": [{"content", "tool_calls": [{"name", "arguments"}]}]}`).
///
/// `str_replace` refuses an `old_str` that occurs more than once, and a hunk's own lines need
/// not be unique: three near-identical functions fixed alike (more-itertools' `split_before`,
/// `split_after`, `split_when`) made the oracle's second edit fail and its gold patch look
/// `still_failing`. So each hunk's text is widened by whole lines of the file, as it reads after
/// the earlier hunks, until it occurs exactly once.
pub fn script(patch: &str, tree: &Path) -> Result<Value, ApplyError> {
    let mut calls = Vec::new();
    for fp in apply::parse(patch)? {
        let text = std::fs::read_to_string(tree.join(&fp.path)).ok();
        for (old_str, new_str) in edits(&fp, text.as_deref()) {
            calls.push(json!({
                "name": "str_replace",
                "arguments": {"path": fp.path, "old_str": old_str, "new_str": new_str}
            }));
        }
    }
    Ok(json!({
        "turns": [
            {"content": "Applying the reference fix.", "tool_calls": calls},
            {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {}}]}
        ]
    }))
}

/// One `(old_str, new_str)` per hunk of `fp`, each unique in the file as the earlier ones leave
/// it. Without the file's text (a new file), or where a hunk does not fit it (the tool will say
/// so), the hunk's own lines.
fn edits(fp: &FilePatch, text: Option<&str>) -> Vec<(String, String)> {
    let own = |h: &apply::Hunk| (h.old.join("\n"), h.new.join("\n"));
    let Some(text) = text else {
        return fp.hunks.iter().map(own).collect();
    };
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // How far the earlier hunks moved the later ones' line numbers.
    let mut shift: isize = 0;
    let mut out = Vec::new();
    for h in &fp.hunks {
        let want = (h.old_start.saturating_sub(1) as isize + shift).max(0) as usize;
        let Some(at) = apply::locate(&lines, h, want) else {
            out.push(own(h));
            continue;
        };
        let end = at + h.old.len();
        let (mut lo, mut hi) = (at, end);
        let whole = lines.join("\n");
        let occurs =
            |lo: usize, hi: usize| whole.matches(lines[lo..hi].join("\n").as_str()).count();
        while (hi == lo || occurs(lo, hi) > 1) && (lo > 0 || hi < lines.len()) {
            if (hi - lo) % 2 == 0 && hi < lines.len() || lo == 0 {
                hi += 1;
            } else {
                lo -= 1;
            }
        }
        let mut new: Vec<String> = lines[lo..at].to_vec();
        new.extend(h.new.iter().cloned());
        new.extend(lines[end..hi].iter().cloned());
        out.push((lines[lo..hi].join("\n"), new.join("\n")));
        lines.splice(at..end, h.new.iter().cloned());
        shift += h.new.len() as isize - h.old.len() as isize;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::generate::file_diff;

    #[test]
    fn one_replace_per_hunk_then_submit() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n";
        let new = "a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\nk\n";
        let dir = tempfile::tempdir().unwrap();
        let s = script(&file_diff("p/m.py", old, new), dir.path()).unwrap();
        let calls = s["turns"][0]["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0]["name"], "str_replace");
        assert_eq!(calls[0]["arguments"]["path"], "p/m.py");
        assert_eq!(calls[0]["arguments"]["old_str"], "a\nb\nc\nd\ne");
        assert_eq!(calls[0]["arguments"]["new_str"], "a\nB\nc\nd\ne");
        assert_eq!(s["turns"][1]["tool_calls"][0]["name"], "submit");
        // applying the replacements in order yields the fixed text
        let mut text = old.to_string();
        for c in calls {
            let (o, n) = (
                c["arguments"]["old_str"].as_str().unwrap(),
                c["arguments"]["new_str"].as_str().unwrap(),
            );
            assert_eq!(text.matches(o).count(), 1);
            text = text.replacen(o, n, 1);
        }
        assert_eq!(text, new);
        assert!(script("not a diff", dir.path()).is_err());
    }

    /// Three functions alike, fixed alike: each hunk's own lines occur three times, so each
    /// edit is widened until it is unique, and the edits in order give the fixed text.
    #[test]
    fn hunks_whose_lines_repeat_are_widened_until_unique() {
        let f = |name: &str, fix: bool| {
            format!(
                "def {name}(xs):\n    buf = []\n    for x in xs:\n        buf.append(x)\n{}    return buf\n\n\n",
                if fix {
                    "    if not buf:\n        return []\n"
                } else {
                    ""
                }
            )
        };
        let old: String = ["a", "b", "c"].iter().map(|n| f(n, false)).collect();
        let new: String = ["a", "b", "c"].iter().map(|n| f(n, true)).collect();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("p")).unwrap();
        std::fs::write(dir.path().join("p/m.py"), &old).unwrap();
        let patch = file_diff("p/m.py", &old, &new);
        let s = script(&patch, dir.path()).unwrap();
        let calls = s["turns"][0]["tool_calls"].as_array().unwrap();
        assert_eq!(calls.len(), 3, "{patch}");
        let mut text = old.clone();
        for c in calls {
            let (o, n) = (
                c["arguments"]["old_str"].as_str().unwrap(),
                c["arguments"]["new_str"].as_str().unwrap(),
            );
            assert_eq!(text.matches(o).count(), 1, "not unique: {o:?}");
            text = text.replacen(o, n, 1);
        }
        assert_eq!(text, new);
        // Without the file (a tree that lacks it), the hunks' own lines, as before.
        let bare = script(&patch, &dir.path().join("nowhere")).unwrap();
        let first = bare["turns"][0]["tool_calls"][1]["arguments"]["old_str"]
            .as_str()
            .unwrap();
        assert!(old.matches(first).count() > 1);
    }
}
