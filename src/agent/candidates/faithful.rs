//! How faithfully a passing candidate keeps what the code it replaced did: the parameters
//! and callees it stops using (a feature dropped rather than a bug fixed) and how far its
//! tokens moved. Passing candidates are ranked by it (the first passing fill is not always the
//! right one: a cache replaced by a plain dict passes the tests and expires nothing). Pure.

use std::collections::{BTreeMap, BTreeSet};

use super::edits::FileEdit;
use super::pydefs::py_defs;

/// What a candidate's edit keeps of the code it replaced.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faithfulness {
    /// `parameter cache of __init__`, `callee expire`: uses the replaced lines had that the
    /// edit drops (a parameter no longer used anywhere in its function, a call no other call
    /// replaces).
    pub dropped: Vec<String>,
    /// Parameters the replaced lines used that the new lines do not, though the function
    /// still uses them elsewhere (`RRCache(128, choice)` → `RRCache(128, 128)`: `choice` is
    /// still read in another branch). Ranking only: a real fix may drop a name from a line.
    pub dropped_here: Vec<String>,
    /// Tokens removed plus tokens added between the replaced lines and the new ones.
    pub distance: usize,
}

impl Faithfulness {
    /// Sort key, most faithful first: nothing dropped from the function, then nothing
    /// dropped from the replaced lines, then the smallest token distance.
    pub fn key(&self) -> (usize, usize, usize) {
        (self.dropped.len(), self.dropped_here.len(), self.distance)
    }
}

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield", "self", "cls",
];

pub(super) use crate::verify::pysrc::TOKEN;
static CALL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(").expect("static regex")
});
static NAME: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"(?:^|[^.\w])([A-Za-z_][A-Za-z0-9_]*)").expect("static regex")
});

fn tokens(text: &str) -> Vec<&str> {
    TOKEN.find_iter(text).map(|m| m.as_str()).collect()
}

/// Bare names used (not attributes: `x.name` is not a use of `name`).
fn names(text: &str) -> BTreeSet<String> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| {
            NAME.captures_iter(l)
                .map(|c| c[1].to_string())
                .collect::<Vec<_>>()
        })
        .filter(|n| !KEYWORDS.contains(&n.as_str()))
        .collect()
}

fn callees(text: &str) -> BTreeSet<String> {
    CALL.captures_iter(text)
        .map(|c| c[1].to_string())
        .filter(|n| !KEYWORDS.contains(&n.as_str()))
        .collect()
}

/// The parameters of a `def` (its text from `def` to the colon).
fn params(def: &str) -> Vec<String> {
    let Some(open) = def.find('(') else {
        return Vec::new();
    };
    let inner = &def[open + 1..def.rfind(')').unwrap_or(def.len())];
    let (mut depth, mut cur, mut out) = (0i32, String::new(), Vec::new());
    for c in inner.chars().chain([',']) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                let name = cur
                    .split([':', '='])
                    .next()
                    .unwrap_or("")
                    .trim()
                    .trim_start_matches('*')
                    .to_string();
                if !name.is_empty() && name != "self" && name != "cls" && name != "/" {
                    out.push(name);
                }
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out
}

/// `edits` against the `files` they were made on.
pub fn assess(edits: &[FileEdit], files: &BTreeMap<String, String>) -> Faithfulness {
    let mut f = Faithfulness::default();
    for e in edits {
        let Some(before) = files.get(&e.path) else {
            continue;
        };
        let diff = similar::TextDiff::from_lines(before.as_str(), e.content.as_str());
        let (mut removed, mut added) = (String::new(), String::new());
        let mut first_old: Option<usize> = None;
        for op in diff.ops() {
            for change in diff.iter_changes(op) {
                match change.tag() {
                    similar::ChangeTag::Delete => {
                        first_old.get_or_insert(change.old_index().unwrap_or(0));
                        removed.push_str(change.value());
                    }
                    similar::ChangeTag::Insert => added.push_str(change.value()),
                    similar::ChangeTag::Equal => {}
                }
            }
        }
        let (rt, at) = (tokens(&removed), tokens(&added));
        let same = similar::capture_diff_slices(similar::Algorithm::Myers, &rt, &at)
            .iter()
            .filter(|o| matches!(o, similar::DiffOp::Equal { .. }))
            .map(|o| o.old_range().len())
            .sum::<usize>();
        f.distance += rt.len() + at.len() - 2 * same;
        // Callees the replaced lines made that no call of the new lines takes over.
        let (old_calls, new_calls) = (callees(&removed), callees(&added));
        if new_calls.is_empty() || new_calls.is_subset(&old_calls) {
            for c in old_calls.difference(&new_calls) {
                f.dropped.push(format!("callee {c}"));
            }
        }
        // Parameters the function used before and no longer uses anywhere.
        let Some(row) = first_old else {
            continue;
        };
        let old_def = py_defs(before)
            .into_iter()
            .filter(|d| d.def_row <= row && row <= d.end)
            .max_by_key(|d| d.def_row);
        let Some(d) = old_def else {
            continue;
        };
        let old_lines: Vec<&str> = before.lines().collect();
        let head_end = d.body_row.unwrap_or(d.def_row + 1).min(old_lines.len());
        let head = old_lines[d.def_row..head_end].join("\n");
        let old_body =
            old_lines[head_end.min(d.end + 1)..(d.end + 1).min(old_lines.len())].join("\n");
        let new_def = py_defs(&e.content)
            .into_iter()
            .filter(|n| n.name == d.name)
            .min_by_key(|n| n.def_row.abs_diff(d.def_row));
        let new_body = match new_def {
            Some(n) => {
                let l: Vec<&str> = e.content.lines().collect();
                let from = n.body_row.unwrap_or(n.def_row + 1).min(l.len());
                l[from..(n.end + 1).min(l.len())].join("\n")
            }
            None => String::new(),
        };
        let (used_before, used_after) = (names(&old_body), names(&new_body));
        let (line_before, line_after) = (names(&removed), names(&added));
        for p in params(&head) {
            if used_before.contains(&p) && !used_after.contains(&p) {
                f.dropped.push(format!("parameter {p} of {}", d.name));
            } else if line_before.contains(&p) && !line_after.contains(&p) {
                f.dropped_here
                    .push(format!("parameter {p} of the replaced lines"));
            }
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    const CACHED: &str = "\
class Cached:
    def __init__(self, cache, key):
        self.cache = cache
        self.key = key

    def get(self, k):
        return expire(self.cache).get(self.key(k))
";

    fn edit(from: &str, to: &str) -> Vec<FileEdit> {
        vec![FileEdit {
            path: "c.py".into(),
            content: CACHED.replacen(from, to, 1),
        }]
    }

    fn files() -> BTreeMap<String, String> {
        [("c.py".to_string(), CACHED.to_string())].into()
    }

    #[test]
    fn a_parameter_no_longer_used_is_a_dropped_feature() {
        let f = assess(&edit("self.cache = cache", "self.cache = {}"), &files());
        assert_eq!(f.dropped, ["parameter cache of __init__"]);
        // Used again elsewhere in the new function: kept.
        let f = assess(
            &edit("self.cache = cache", "self.cache = dict(cache)"),
            &files(),
        );
        assert!(f.dropped.is_empty(), "{f:?}");
    }

    /// Issue #44: two passing candidates for a swapped-arguments bug, the fill that keeps the
    /// masked line's parameter and a splice that puts a number where it went; the function
    /// still reads the parameter in another branch, so only the line lost it.
    #[test]
    fn a_parameter_the_replaced_line_used_ranks_its_keeper_first() {
        let src = "\
def rr_cache(maxsize=128, choice=None):
    if callable(maxsize):
        return wrap(RRCache(choice, 128))
    return wrap(RRCache(maxsize, choice))
";
        let files: BTreeMap<String, String> = [("c.py".to_string(), src.to_string())].into();
        let with = |to: &str| {
            assess(
                &[FileEdit {
                    path: "c.py".into(),
                    content: src.replacen("RRCache(choice, 128)", to, 1),
                }],
                &files,
            )
        };
        let (fill, splice) = (with("RRCache(128, choice)"), with("RRCache(128, 128)"));
        assert!(
            fill.dropped.is_empty() && fill.dropped_here.is_empty(),
            "{fill:?}"
        );
        assert!(
            splice.dropped.is_empty(),
            "still read in the other branch: {splice:?}"
        );
        assert_eq!(
            splice.dropped_here,
            ["parameter choice of the replaced lines"]
        );
        assert!(fill.key() < splice.key(), "{fill:?} vs {splice:?}");
    }

    #[test]
    fn a_callee_dropped_without_a_replacement_counts_a_swapped_one_does_not() {
        let f = assess(&edit("expire(self.cache).get", "self.cache.get"), &files());
        assert_eq!(f.dropped, ["callee expire"]);
        let f = assess(&edit("expire(self.cache)", "evict(self.cache)"), &files());
        assert!(f.dropped.is_empty(), "{f:?}");
    }

    #[test]
    fn the_smaller_token_change_is_the_more_faithful() {
        let one = assess(&edit("self.key(k)", "self.key(k + 1)"), &files());
        let many = assess(&edit("self.key(k)", "hash(str(k)) % 7"), &files());
        assert_eq!(one.distance, 2, "{one:?}");
        assert!(many.key() > one.key(), "{many:?} vs {one:?}");
    }

    #[test]
    fn params_read_defaults_annotations_and_stars() {
        assert_eq!(
            params("def f(self, a, b: int = 3, *args, c=(1, 2), **kw):"),
            ["a", "b", "args", "c", "kw"]
        );
    }
}
