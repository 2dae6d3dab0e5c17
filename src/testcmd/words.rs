//! Shell words as the repository wrote them: each word keeps its source text (so a rendering
//! hands the shell exactly what the repository wrote: quotes, `$VAR`, globs) beside its value
//! when the value is known without running a shell. Pure.

use serde::{Deserialize, Serialize};

/// One shell word.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Word {
    /// The word's shell source, quotes included (`'tests/a b.py'`, `$HOME/x`, `src`).
    pub raw: String,
    /// Its value after quote removal, when it has no expansion (`$`, backquote, an unquoted
    /// glob character): `None` means only a shell knows it.
    pub value: Option<String>,
}

impl Word {
    /// A word with a known value, quoted for the shell when it needs it.
    pub fn lit(v: &str) -> Word {
        Word {
            raw: quote_if_needed(v),
            value: Some(v.to_string()),
        }
    }

    /// The value, or the raw text when only a shell knows the value.
    pub fn text(&self) -> &str {
        self.value.as_deref().unwrap_or(&self.raw)
    }
}

/// What a command line is made of: words and the operators between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    Word(Word),
    /// `&&`.
    And,
    /// `;` with more after it.
    Semi,
    /// Any other control or redirection operator (`;`, `|`, `||`, `&`, `<`, `>`, `(`, `)`),
    /// or a comment: a command this module does not take apart.
    Other,
}

/// POSIX single quotes around `s`.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// `s` as one shell word: unchanged when it holds only characters no shell treats specially.
pub fn quote_if_needed(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(c, '-' | '_' | '.' | '/' | ',' | ':' | '=' | '+' | '@' | '%')
        });
    if plain { s.to_string() } else { quote(s) }
}

/// Splits a command line into tokens. `None` for an unterminated quote.
pub fn tokenize(line: &str) -> Option<Vec<Token>> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == ' ' || c == '\t' {
            i += 1;
            continue;
        }
        if c == '&' && chars.get(i + 1) == Some(&'&') {
            out.push(Token::And);
            i += 2;
            continue;
        }
        // `cd tests; pytest …` (a YAML plain scalar folded onto one line): a sequence the
        // caller may take apart; a trailing `;` ends the line.
        if c == ';' && chars.get(i + 1) != Some(&';') {
            if chars[i + 1..].iter().all(|d| *d == ' ' || *d == '\t') {
                return Some(out);
            }
            out.push(Token::Semi);
            i += 1;
            continue;
        }
        if matches!(
            c,
            ';' | '|' | '&' | '<' | '>' | '(' | ')' | '#' | '\n' | '\r'
        ) {
            out.push(Token::Other);
            // Nothing after an operator this module does not follow is read.
            return Some(out);
        }
        let (word, next) = read_word(&chars, i)?;
        out.push(Token::Word(word));
        i = next;
    }
    Some(out)
}

/// One word starting at `start`: its source, its value (None once an expansion is seen), and
/// where the next token starts.
fn read_word(chars: &[char], start: usize) -> Option<(Word, usize)> {
    let mut i = start;
    let mut value = String::new();
    let mut known = true;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | ';' | '|' | '&' | '<' | '>' | '(' | ')' | '\n' | '\r' => break,
            '\\' => {
                let n = *chars.get(i + 1)?;
                value.push(n);
                i += 2;
            }
            '\'' => {
                let end = chars[i + 1..].iter().position(|&d| d == '\'')? + i + 1;
                value.extend(&chars[i + 1..end]);
                i = end + 1;
            }
            '"' => {
                i += 1;
                loop {
                    let d = *chars.get(i)?;
                    match d {
                        '"' => break,
                        '\\' if matches!(chars.get(i + 1), Some('$' | '`' | '"' | '\\')) => {
                            value.push(chars[i + 1]);
                            i += 2;
                        }
                        '$' | '`' => {
                            known = false;
                            i += 1;
                        }
                        _ => {
                            value.push(d);
                            i += 1;
                        }
                    }
                }
                i += 1;
            }
            '$' => {
                known = false;
                // `${{ matrix.x }}` (a GitHub expression) and `$(…)` are one unit even with
                // spaces inside.
                let close = match (chars.get(i + 1), chars.get(i + 2)) {
                    (Some('{'), Some('{')) => Some("}}"),
                    (Some('('), _) => Some(")"),
                    _ => None,
                };
                match close {
                    Some(end) => {
                        let rest: String = chars[i..].iter().collect();
                        let at = rest.find(end)?;
                        i += rest[..at + end.len()].chars().count();
                    }
                    None => i += 1,
                }
            }
            '`' => {
                known = false;
                let end = chars[i + 1..].iter().position(|&d| d == '`')? + i + 1;
                i = end + 1;
            }
            '*' | '?' | '[' => {
                known = false;
                value.push(c);
                i += 1;
            }
            _ => {
                value.push(c);
                i += 1;
            }
        }
    }
    let raw: String = chars[start..i].iter().collect();
    Some((
        Word {
            raw,
            value: known.then_some(value),
        },
        i,
    ))
}

/// `NAME=` at the start of a word's source (a shell variable assignment).
pub fn assignment(w: &Word) -> Option<(String, Word)> {
    let (name, rest) = w.raw.split_once('=')?;
    let ok = !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !ok {
        return None;
    }
    let value = w.value.as_ref().map(|v| {
        v.split_once('=')
            .map(|(_, r)| r.to_string())
            .unwrap_or_default()
    });
    Some((
        name.to_string(),
        Word {
            raw: rest.to_string(),
            value,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<(String, Option<String>)> {
        tokenize(line)
            .unwrap()
            .into_iter()
            .filter_map(|t| match t {
                Token::Word(w) => Some((w.raw, w.value)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn words_keep_their_source_and_know_their_value() {
        let w = words(r#"PYTHONPATH=src pytest -k 'a or b' "x y" a\ b $HOME/t tests/*.py"#);
        assert_eq!(
            w[0],
            ("PYTHONPATH=src".into(), Some("PYTHONPATH=src".into()))
        );
        assert_eq!(w[3], ("'a or b'".into(), Some("a or b".into())));
        assert_eq!(w[4], ("\"x y\"".into(), Some("x y".into())));
        assert_eq!(w[5], (r"a\ b".into(), Some("a b".into())));
        assert_eq!(w[6], ("$HOME/t".into(), None));
        assert_eq!(w[7].1, None);
        let gh = words("tox -e py${{ matrix.python-version }} -- -x");
        assert_eq!(gh[2].0, "py${{ matrix.python-version }}");
        assert_eq!(gh[3].0, "--");
    }

    #[test]
    fn operators_end_what_is_read() {
        let t = tokenize("cd sub && pytest").unwrap();
        assert_eq!(t.len(), 4);
        assert_eq!(t[2], Token::And);
        let t = tokenize("pytest | tee log").unwrap();
        assert_eq!(t.last(), Some(&Token::Other));
        assert!(tokenize("pytest 'open").is_none());
        let a = assignment(&Word::lit("CI=1")).unwrap();
        assert_eq!((a.0.as_str(), a.1.value.as_deref()), ("CI", Some("1")));
        assert!(assignment(&Word::lit("--opt=1")).is_none());
        assert!(assignment(&Word::lit("1A=b")).is_none());
    }
}
