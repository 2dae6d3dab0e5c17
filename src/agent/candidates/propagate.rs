//! Changes that belong together: the same change where else it is needed, and two
//! candidates' changes in one.
//!
//! The same change where else it is needed. A real fix often repeats one rewrite on a few
//! lines (`iteritems` → `items` on an `if` and on the loop under it; `encoding=encoding`
//! added to both `unquote` calls of a function; a misspelt method fixed in two methods), and
//! a one-line fill makes only the first: the targets still fail, and the right fill is
//! discarded. When a fill that changed one line fails, the runner checks it once more with
//! its rewrite applied to every other line of the file that has the replaced text. Pure.

use super::edits::FileEdit;
use super::faithful::TOKEN;

/// `edit` with `is`/`is not` against a str, bytes or number literal turned into `==`/`!=` on
/// the lines it adds: identity where equality was meant (the verifier's `literal_identity`),
/// which passes the tests while the interpreter happens to share the object. None: no such
/// comparison on an added line. Pure.
pub fn equality_twin(orig: &str, edit: &FileEdit) -> Option<FileEdit> {
    static IDENTITY: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"\bis(\s+not)?\s+((?:[rRbBuU]{1,2})?(?:'[^'\\]*(?:\\.[^'\\]*)*'|"[^"\\]*(?:\\.[^"\\]*)*")|-?\d[\d_]*(?:\.\d+)?(?:[eE][-+]?\d+)?\b)"#,
        )
        .unwrap()
    });
    let (_, added) = crate::verify::fit::line_changes(orig, &edit.content);
    let mut changed = false;
    let lines: Vec<String> = edit
        .content
        .split_inclusive('\n')
        .enumerate()
        .map(|(i, line)| {
            if !added.contains(&(i + 1)) {
                return line.to_string();
            }
            let code = line.split('#').next().unwrap_or(line);
            let out = IDENTITY.replace_all(code, |c: &regex::Captures| {
                // Inside a string of the line (an odd number of quotes before it): prose.
                let before = &code[..c.get(0).map_or(0, |m| m.start())];
                if before.matches('"').count() % 2 == 1 || before.matches('\'').count() % 2 == 1 {
                    return c[0].to_string();
                }
                changed = true;
                let op = if c.get(1).is_some() { "!=" } else { "==" };
                format!("{op} {}", &c[2])
            });
            format!("{out}{}", &line[code.len()..])
        })
        .collect();
    changed.then(|| FileEdit {
        path: edit.path.clone(),
        content: lines.concat(),
    })
}

/// Other lines a rewrite may reach at most: text found on more lines is too common to be
/// the fix's (a `' '` turned into `sep` would touch every string of spaces in the file).
pub const MAX_OTHER_LINES: usize = 6;
/// Tokens of unchanged context a rewrite borrows at most on either side, when what it
/// replaces is only punctuation (an argument added before a `)`).
const CONTEXT_TOKENS: usize = 3;

/// A fill's rewrite applied elsewhere in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Propagated {
    /// The file with the fill and the rewrite on the other lines.
    pub edit: FileEdit,
    /// The other lines it changed, 1-based.
    pub lines: Vec<usize>,
    /// The replaced texts and their replacements: the fill's, and for a quoted name the
    /// bare name too (`getattr(x, 'iteritems')` fixed means `x.iteritems()` fixed).
    pub rewrites: Vec<(String, String)>,
}

/// `edit` with its one changed line's rewrite applied to the file's other lines that contain
/// the replaced text (at identifier boundaries; comments skipped). None: the edit does not
/// change exactly one line, the change is whitespace or has no name, string or number to
/// anchor it, no other line has the text, or more than [`MAX_OTHER_LINES`] do.
pub fn propagate(orig: &str, edit: &FileEdit) -> Option<Propagated> {
    let old: Vec<&str> = orig.split_inclusive('\n').collect();
    let new: Vec<&str> = edit.content.split_inclusive('\n').collect();
    if old.len() != new.len() {
        return None;
    }
    let mut changed = (0..old.len()).filter(|&i| old[i] != new[i]);
    let at = changed.next()?;
    if changed.next().is_some() {
        return None;
    }
    let (from, to) = rewrite(old[at], new[at])?;
    let mut rewrites = vec![(from.clone(), to.clone())];
    if let (Some(f), Some(t)) = (quoted_name(&from), quoted_name(&to)) {
        rewrites.push((f.to_string(), t.to_string()));
    }
    let mut lines = Vec::new();
    let mut out = String::with_capacity(edit.content.len());
    for (i, line) in new.iter().enumerate() {
        let mut replaced: Option<String> = None;
        if i != at && !line.trim_start().starts_with('#') {
            for (f, t) in &rewrites {
                let cur = replaced.as_deref().unwrap_or(line);
                if let Some(r) = replace_bounded(cur, f, t) {
                    replaced = Some(r);
                }
            }
        }
        match replaced {
            Some(r) => {
                lines.push(i + 1);
                out.push_str(&r);
            }
            None => out.push_str(line),
        }
    }
    if lines.is_empty() || lines.len() > MAX_OTHER_LINES {
        return None;
    }
    Some(Propagated {
        edit: FileEdit {
            path: edit.path.clone(),
            content: out,
        },
        lines,
        rewrites,
    })
}

/// The name inside a string literal that is only a name (`'iteritems'`).
fn quoted_name(s: &str) -> Option<&str> {
    let q = s.chars().next().filter(|&c| c == '\'' || c == '"')?;
    let inner = s.strip_prefix(q)?.strip_suffix(q)?;
    let mut cs = inner.chars();
    let ok = cs.next().is_some_and(|c| c.is_alphabetic() || c == '_') && cs.all(is_ident);
    ok.then_some(inner)
}

/// The smallest token span of `old` that `new` replaces, and its replacement, widened by up
/// to [`CONTEXT_TOKENS`] unchanged tokens on each side until it holds a name, a string or a
/// number. Pure.
fn rewrite(old: &str, new: &str) -> Option<(String, String)> {
    let a: Vec<regex::Match> = TOKEN.find_iter(old).collect();
    let b: Vec<regex::Match> = TOKEN.find_iter(new).collect();
    let same = |x: &regex::Match, y: &regex::Match| x.as_str() == y.as_str();
    let p = a.iter().zip(&b).take_while(|(x, y)| same(x, y)).count();
    let s = a[p..]
        .iter()
        .rev()
        .zip(b[p..].iter().rev())
        .take_while(|(x, y)| same(x, y))
        .count();
    let (a_end, b_end) = (a.len() - s, b.len() - s);
    if p == a_end && p == b_end {
        return None; // only whitespace moved
    }
    let anchored = |from: usize, to: usize| a[from..to].iter().any(|t| is_word(t.as_str()));
    let (mut left, mut right) = (0, 0);
    while !anchored(p - left, a_end + right) {
        if left < CONTEXT_TOKENS && left < p {
            left += 1;
        } else if right < CONTEXT_TOKENS && right < s {
            right += 1;
        } else {
            return None;
        }
    }
    let span = |t: &[regex::Match], text: &str, from: usize, to: usize| {
        if from >= to {
            return String::new();
        }
        text[t[from].start()..t[to - 1].end()].to_string()
    };
    let from = span(&a, old, p - left, a_end + right);
    let to = span(&b, new, p - left, b_end + right);
    (from != to && !from.is_empty()).then_some((from, to))
}

/// A name, a number or a string literal (not punctuation).
fn is_word(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '"' || c == '\'')
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `line` with every occurrence of `from` that does not run into a neighbouring name
/// replaced by `to` (None: there is none).
pub(super) fn replace_bounded(line: &str, from: &str, to: &str) -> Option<String> {
    let starts_ident = from.chars().next().is_some_and(is_ident);
    let ends_ident = from.chars().last().is_some_and(is_ident);
    let mut out = String::with_capacity(line.len());
    let mut rest = 0;
    let mut hit = false;
    for (i, _) in line.match_indices(from) {
        if i < rest {
            continue;
        }
        let before = line[..i].chars().last();
        let after = line[i + from.len()..].chars().next();
        if (starts_ident && before.is_some_and(is_ident))
            || (ends_ident && after.is_some_and(is_ident))
        {
            continue;
        }
        out.push_str(&line[rest..i]);
        out.push_str(to);
        rest = i + from.len();
        hit = true;
    }
    out.push_str(&line[rest..]);
    hit.then_some(out)
}

/// Two candidates' edits of the same original files in one: a file only one edits is taken
/// from it; a file both edit gets both changes when they touch different lines (None: they
/// overlap, or an original is missing). Pure.
pub fn combine(
    files: &std::collections::BTreeMap<String, String>,
    a: &[FileEdit],
    b: &[FileEdit],
) -> Option<Vec<FileEdit>> {
    let mut out: Vec<FileEdit> = a.to_vec();
    for e in b {
        match out.iter_mut().find(|x| x.path == e.path) {
            None => out.push(e.clone()),
            Some(x) => x.content = merge(files.get(&e.path)?, &x.content, &e.content)?,
        }
    }
    Some(out)
}

/// `orig` with the changed lines of `x` and of `y` (None: their changed spans overlap).
fn merge(orig: &str, x: &str, y: &str) -> Option<String> {
    let o: Vec<&str> = orig.split_inclusive('\n').collect();
    let xs: Vec<&str> = x.split_inclusive('\n').collect();
    let ys: Vec<&str> = y.split_inclusive('\n').collect();
    let (xa, xb) = span(&o, &xs);
    let (ya, yb) = span(&o, &ys);
    // Each replaces o[a..b] by its own lines between the same unchanged ends.
    let ((a1, b1, t1), (a2, b2, t2)) = if xa <= ya {
        ((xa, xb, &xs), (ya, yb, &ys))
    } else {
        ((ya, yb, &ys), (xa, xb, &xs))
    };
    if b1 > a2 || (a1 == b1 && a2 == b2 && a1 == a2) {
        return None;
    }
    let mid =
        |t: &Vec<&str>, a: usize, b: usize| -> String { t[a..t.len() - (o.len() - b)].concat() };
    Some(format!(
        "{}{}{}{}{}",
        o[..a1].concat(),
        mid(t1, a1, b1),
        o[b1..a2].concat(),
        mid(t2, a2, b2),
        o[b2..].concat()
    ))
}

/// The span `[a, b)` of `o` that `t` replaces (its common prefix and suffix with `o` kept).
pub(super) fn span(o: &[&str], t: &[&str]) -> (usize, usize) {
    let pre = o.iter().zip(t).take_while(|(p, q)| p == q).count();
    let suf = o[pre..]
        .iter()
        .rev()
        .zip(t[pre..].iter().rev())
        .take_while(|(p, q)| p == q)
        .count();
    (pre, o.len() - suf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(content: &str) -> FileEdit {
        FileEdit {
            path: "m.py".into(),
            content: content.into(),
        }
    }

    /// The file with line `n` (1-based) replaced.
    fn with_line(src: &str, n: usize, line: &str) -> String {
        src.lines()
            .enumerate()
            .map(|(i, l)| if i + 1 == n { line } else { l })
            .map(|l| format!("{l}\n"))
            .collect()
    }

    /// The equality twin is run by Python: the identity form passes for the interned name and
    /// fails for one built at run time; the twin passes for both.
    #[test]
    fn identity_with_a_literal_gets_its_equality_twin() {
        let orig = "def guess(obj):\n    mod = obj.__module__\n    if mod != 'builtins':  # not a builtin\n        return mod\n    return ''\n";
        let fill = orig.replace("if mod != 'builtins':", "if mod is 'builtins':");
        let t = equality_twin(orig, &edit(&fill)).expect("a twin");
        assert_eq!(
            t.content,
            orig.replace("mod != 'builtins'", "mod == 'builtins'")
        );
        for (fill, want) in [
            ("if mod is not b'x':", "if mod != b'x':"),
            (
                "if n is -1000 or n is 2.5e3:",
                "if n == -1000 or n == 2.5e3:",
            ),
            ("if mod is \"it's\":", "if mod == \"it's\":"),
        ] {
            let f = orig.replace("if mod != 'builtins':", fill);
            let t = equality_twin(orig, &edit(&f)).expect(fill);
            assert!(t.content.contains(want), "{fill} -> {}", t.content);
        }
        // Nothing to twin: a singleton, prose in a string or comment, a line the fill kept.
        for kept in [
            "if mod is None:",
            "if mod == 'this is 1':",
            "if mod:  # mod is 'x'",
        ] {
            let f = orig.replace("if mod != 'builtins':", kept);
            assert_eq!(equality_twin(orig, &edit(&f)), None, "{kept}");
        }
        let old = orig.replace("mod != 'builtins'", "mod is 'x'");
        assert_eq!(
            equality_twin(&old, &edit(&old.replace("return ''", "return '?'"))),
            None
        );
        // Run it: the twin takes a string built at run time for the literal; the identity
        // does not (CPython does not intern a joined string).
        let run = |src: &str| {
            let prog = format!(
                "{src}\nclass O: pass\no = O(); o.__module__ = ''.join(['built', 'ins'])\nprint(repr(guess(o)))\n"
            );
            let out = std::process::Command::new("python3")
                .arg("-c")
                .arg(&prog)
                .output()
                .expect("python3");
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        };
        assert_eq!(run(&fill), "''", "identity misses the equal string");
        assert_eq!(run(&t.content), "'builtins'");
    }

    const UPDATE: &str = "\
def update(self, iterable):
    if callable(getattr(iterable, 'iteritems', None)):
        for key, count in iterable.iteritems():
            self.add(key, count)
    # iteritems is Python 2
    return self.iteritems_count
";

    #[test]
    fn a_renamed_name_follows_to_the_other_lines_that_use_it() {
        let filled = with_line(
            UPDATE,
            2,
            "    if callable(getattr(iterable, 'items', None)):",
        );
        let p = propagate(UPDATE, &edit(&filled)).expect("propagates");
        assert_eq!(p.rewrites[0], ("'iteritems'".into(), "'items'".into()));
        // The quoted name goes to the attribute of the same name on the loop's line.
        assert_eq!(p.lines, vec![3]);
        assert!(p.edit.content.contains("in iterable.items():"));
        assert!(p.edit.content.contains("self.iteritems_count"));
    }

    #[test]
    fn a_renamed_attribute_reaches_the_same_name_but_not_a_longer_one_or_a_comment() {
        let filled = with_line(UPDATE, 3, "        for key, count in iterable.items():");
        let p = propagate(UPDATE, &edit(&filled)).expect("propagates");
        assert_eq!(p.rewrites, vec![("iteritems".into(), "items".into())]);
        // Line 2's quoted name is bounded by quotes; line 5 is a comment; line 6's
        // iteritems_count is a longer name.
        assert_eq!(p.lines, vec![2]);
        assert!(p.edit.content.contains("getattr(iterable, 'items', None)"));
        assert!(p.edit.content.contains("# iteritems is Python 2"));
        assert!(p.edit.content.contains("self.iteritems_count"));
    }

    #[test]
    fn an_added_argument_is_anchored_on_the_text_before_it() {
        let src = "\
def parse_qsl(qs, encoding='utf8'):
    for key, value in pairs:
        key = unquote(key.replace('+', ' '))
        value = unquote(value.replace('+', ' '))
        print(')')
";
        let filled = with_line(
            src,
            3,
            "        key = unquote(key.replace('+', ' '), encoding=encoding)",
        );
        let p = propagate(src, &edit(&filled)).expect("propagates");
        assert_eq!(
            p.rewrites,
            vec![("' ')".into(), "' '), encoding=encoding".into())]
        );
        assert_eq!(p.lines, vec![4]);
        assert!(
            p.edit
                .content
                .contains("value = unquote(value.replace('+', ' '), encoding=encoding)\n")
        );
        assert!(p.edit.content.contains("print(')')\n"));
    }

    #[test]
    fn nothing_to_propagate_without_another_line_or_with_too_many() {
        let src = "def f(a):\n    return a + 1\n";
        let filled = with_line(src, 2, "    return a - 1");
        assert_eq!(propagate(src, &edit(&filled)), None, "no other line");

        let mut many = String::from("def f(x):\n");
        for _ in 0..=MAX_OTHER_LINES + 1 {
            many.push_str("    x = g(x, ' ')\n");
        }
        let filled = with_line(&many, 2, "    x = g(x, sep)");
        assert_eq!(propagate(&many, &edit(&filled)), None, "too common");

        let filled = with_line(&many, 2, "    x  =  g(x, ' ')");
        assert_eq!(propagate(&many, &edit(&filled)), None, "whitespace only");
    }

    #[test]
    fn two_edits_of_different_lines_combine_and_overlapping_ones_do_not() {
        let src = "a = 1\nb = 2\nc = 3\nd = 4\n";
        let files = std::collections::BTreeMap::from([("m.py".to_string(), src.to_string())]);
        let x = [edit("a = 10\nb = 2\nc = 3\nd = 4\n")];
        let y = [edit("a = 1\nb = 2\nc = 3\nd = 40\nd2 = 41\n")];
        let both = combine(&files, &x, &y).unwrap();
        assert_eq!(both[0].content, "a = 10\nb = 2\nc = 3\nd = 40\nd2 = 41\n");
        assert_eq!(combine(&files, &y, &x).unwrap()[0].content, both[0].content);
        // The same line twice: no combination.
        let z = [edit("a = 11\nb = 2\nc = 3\nd = 4\n")];
        assert_eq!(combine(&files, &x, &z), None);
        // Another file: both kept.
        let other = [FileEdit {
            path: "n.py".into(),
            content: "x\n".into(),
        }];
        assert_eq!(combine(&files, &x, &other).unwrap().len(), 2);
    }

    #[test]
    fn an_edit_of_two_lines_or_of_the_line_count_is_not_a_rewrite_to_repeat() {
        let src = "a = f(1)\nb = f(1)\nc = f(1)\n";
        assert_eq!(
            propagate(src, &edit("a = f(2)\nb = f(2)\nc = f(1)\n")),
            None
        );
        assert_eq!(propagate(src, &edit("a = f(2)\nb = f(1)\n")), None);
        let p = propagate(src, &edit("a = f(2)\nb = f(1)\nc = f(1)\n")).unwrap();
        assert_eq!(p.rewrites, vec![("1".into(), "2".into())]);
        assert_eq!(p.lines, vec![2, 3]);
    }
}
