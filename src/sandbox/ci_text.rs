//! The two config-text readers the CI readers share (`ci` for how tests run, `ci_deps` for
//! what they install): an INI file's sections, and a Python call's string arguments. Pure.

use std::collections::BTreeMap;

/// A simple INI reader for tox.ini: section → key → value (continuation lines joined by `\n`).
pub(super) fn ini(text: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut section = String::new();
    let mut key: Option<String> = None;
    for raw in text.lines() {
        let line = raw.trim_end();
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
            continue;
        }
        if t.starts_with('[') && t.ends_with(']') {
            section = t[1..t.len() - 1].trim().to_string();
            key = None;
            continue;
        }
        if line.starts_with([' ', '\t'])
            && let Some(k) = &key
        {
            let v = out
                .entry(section.clone())
                .or_default()
                .entry(k.clone())
                .or_default();
            v.push('\n');
            v.push_str(t);
            continue;
        }
        if let Some((k, v)) = t.split_once('=') {
            let k = k.trim().to_string();
            out.entry(section.clone())
                .or_default()
                .insert(k.clone(), v.trim().to_string());
            key = Some(k);
        }
    }
    out
}

/// String literals of a call's arguments: `session.run("pytest", "-q", "tests")`.
pub(super) fn call_args(src: &str, call: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = src;
    while let Some(i) = rest.find(call) {
        let after = &rest[i + call.len()..];
        let end = after.find(')').unwrap_or(after.len());
        let args = &after[..end];
        let mut lits = Vec::new();
        let mut chars = args.char_indices();
        while let Some((_, c)) = chars.next() {
            if c == '"' || c == '\'' {
                let mut lit = String::new();
                for (_, d) in chars.by_ref() {
                    if d == c {
                        break;
                    }
                    lit.push(d);
                }
                lits.push(lit);
            }
        }
        out.push(lits);
        rest = &after[end..];
    }
    out
}
