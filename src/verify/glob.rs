//! Minimal path globs: `*` and `?` within one path segment, `**` across segments. A pattern
//! without `/` matches the last segment anywhere (gitignore style). Matching ignores ASCII case,
//! so `Tests/` cannot sneak past a `tests/**` rule on a case-insensitive checkout.

pub fn matches(pattern: &str, path: &str) -> bool {
    let pattern = pattern.trim_start_matches("./").trim_start_matches('/');
    let path = path.trim_start_matches("./");
    let pat: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if pat.len() == 1 && pat[0] != "**" {
        return segs.last().is_some_and(|s| segment(pat[0], s));
    }
    walk(&pat, &segs)
}

fn walk(pat: &[&str], segs: &[&str]) -> bool {
    match pat.split_first() {
        None => segs.is_empty(),
        Some((&"**", rest)) => (0..=segs.len()).any(|i| walk(rest, &segs[i..])),
        Some((p, rest)) => segs
            .split_first()
            .is_some_and(|(s, srest)| segment(p, s) && walk(rest, srest)),
    }
}

fn segment(pat: &str, s: &str) -> bool {
    let p: Vec<char> = pat.chars().flat_map(|c| c.to_lowercase()).collect();
    let s: Vec<char> = s.chars().flat_map(|c| c.to_lowercase()).collect();
    seg(&p, &s)
}

fn seg(p: &[char], s: &[char]) -> bool {
    match p.split_first() {
        None => s.is_empty(),
        Some(('*', rest)) => (0..=s.len()).any(|i| seg(rest, &s[i..])),
        Some(('?', rest)) => !s.is_empty() && seg(rest, &s[1..]),
        Some((c, rest)) => s.first() == Some(c) && seg(rest, &s[1..]),
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs() {
        assert!(matches("test_*.py", "pkg/sub/test_a.py"));
        assert!(matches("**/tests/**", "tests/a.py"));
        assert!(matches("**/tests/**", "src/pkg/Tests/data/x.json"));
        assert!(!matches("**/tests/**", "src/pkg/testsuite.py"));
        assert!(matches(
            ".github/workflows/*.yml",
            ".github/workflows/ci.yml"
        ));
        assert!(!matches(
            ".github/workflows/*.yml",
            ".github/workflows/x/ci.yml"
        ));
        assert!(matches("*_test.py", "a_test.py"));
        assert!(!matches("test_*.py", "pkg/testing.py"));
        assert!(matches("a?c", "abc"));
    }
}
