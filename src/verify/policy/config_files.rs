//! pytest sections and entry points in setup.cfg, tox.ini, pyproject.toml and setup.py: the
//! one part of the policy that reads the pre-patch text (a hunk's section lies above it).

use super::{BaseTree, ChangeKind, FilePatch, HunkLine, Rule};

#[derive(Clone, Copy, PartialEq)]
enum CfgKind {
    Ini,
    Toml,
}

/// pytest sections of setup.cfg/tox.ini (`[tool:pytest]`, `[pytest]`) and pyproject.toml
/// (`[tool.pytest…]`, or `pytest…` keys of `[tool]`): any changed line inside one is rejected.
pub(super) fn config_sections(
    f: &FilePatch,
    base: &dyn BaseTree,
    push: &mut impl FnMut(Rule, &str, String),
) {
    let path = f.path();
    let name = path.rsplit('/').next().unwrap_or("").to_ascii_lowercase();
    let kind = match name.as_str() {
        "setup.cfg" | "tox.ini" => CfgKind::Ini,
        "pyproject.toml" => CfgKind::Toml,
        _ => return,
    };
    let old_text = match (&f.old_path, f.kind) {
        (_, ChangeKind::Added) => Some(String::new()),
        (Some(p), _) => base.read(p),
        (None, _) => Some(String::new()),
    };
    let Some(old_text) = old_text else {
        push(
            Rule::TestConfig,
            path,
            format!(
                "cannot read the pre-patch `{name}` to check that no pytest section changes; refusing"
            ),
        );
        return;
    };
    let old_lines: Vec<&str> = old_text.lines().collect();
    for h in &f.hunks {
        let upto = h.old_start.saturating_sub(1).min(old_lines.len());
        let start = old_lines[..upto]
            .iter()
            .rev()
            .find_map(|l| header(l))
            .unwrap_or_default();
        let (mut old_sec, mut new_sec) = (start.clone(), start);
        for l in &h.lines {
            let hit = match l {
                HunkLine::Context(s) => {
                    if let Some(hd) = header(s) {
                        old_sec = hd.clone();
                        new_sec = hd;
                    }
                    false
                }
                HunkLine::Removed(s) => {
                    let hit = pytest_line(kind, &old_sec, s);
                    if let Some(hd) = header(s) {
                        old_sec = hd;
                    }
                    hit
                }
                HunkLine::Added(s) => {
                    let hit = pytest_line(kind, &new_sec, s);
                    if let Some(hd) = header(s) {
                        new_sec = hd;
                    }
                    hit
                }
            };
            if hit {
                push(
                    Rule::TestConfig,
                    path,
                    format!("the patch changes the pytest configuration in `{name}`"),
                );
                return;
            }
        }
    }
}

/// Entry points in setup.py (any changed line naming them), setup.cfg (`[options.entry_points]`)
/// and pyproject.toml (`[project.entry-points…]`, `[project.scripts]`-style tables of poetry and
/// flit, or an `entry-points` key): any change is rejected, since an entry point is how a
/// distribution registers a pytest plugin.
pub(super) fn entry_point_sections(
    f: &FilePatch,
    base: &dyn BaseTree,
    push: &mut impl FnMut(Rule, &str, String),
) {
    let path = f.path();
    let name = path.rsplit('/').next().unwrap_or("").to_ascii_lowercase();
    let mentions = |l: &str| {
        let l = l.to_ascii_lowercase().replace(['-', ' '], "_");
        l.contains("entry_points") || l.contains("entrypoints") || l.contains("pytest11")
    };
    let hit = match name.as_str() {
        "setup.py" => f.hunks.iter().any(|h| {
            h.lines.iter().any(|l| match l {
                HunkLine::Added(s) | HunkLine::Removed(s) => mentions(s),
                HunkLine::Context(_) => false,
            })
        }),
        "setup.cfg" | "pyproject.toml" => {
            let old_text = match (&f.old_path, f.kind) {
                (Some(p), k) if k != ChangeKind::Added => base.read(p).unwrap_or_default(),
                _ => String::new(),
            };
            let old_lines: Vec<&str> = old_text.lines().collect();
            let ep = |sec: &str| {
                mentions(sec)
                    || sec.starts_with("tool.poetry.plugins")
                    || sec == "tool.flit.scripts"
            };
            f.hunks.iter().any(|h| {
                let upto = h.old_start.saturating_sub(1).min(old_lines.len());
                let mut sec = old_lines[..upto]
                    .iter()
                    .rev()
                    .find_map(|l| header(l))
                    .unwrap_or_default();
                h.lines.iter().any(|l| match l {
                    HunkLine::Context(s) => {
                        if let Some(hd) = header(s) {
                            sec = hd;
                        }
                        false
                    }
                    HunkLine::Added(s) | HunkLine::Removed(s) => {
                        if let Some(hd) = header(s) {
                            sec = hd;
                        }
                        ep(&sec) || mentions(s)
                    }
                })
            })
        }
        _ => false,
    };
    if hit {
        push(
            Rule::PluginSurface,
            path,
            format!(
                "the patch changes entry points in `{name}` (how distributions register pytest plugins)"
            ),
        );
    }
}

fn header(line: &str) -> Option<String> {
    let t = line.trim();
    let inner = t.strip_prefix('[')?.strip_suffix(']')?;
    let inner = inner.trim_start_matches('[').trim_end_matches(']');
    Some(
        inner
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
            .collect::<String>()
            .to_ascii_lowercase(),
    )
}

fn pytest_section(kind: CfgKind, sec: &str) -> bool {
    match kind {
        CfgKind::Ini => sec == "pytest" || sec == "tool:pytest",
        CfgKind::Toml => sec == "tool.pytest" || sec.starts_with("tool.pytest."),
    }
}

fn pytest_line(kind: CfgKind, sec: &str, line: &str) -> bool {
    if let Some(h) = header(line)
        && pytest_section(kind, &h)
    {
        return true;
    }
    if pytest_section(kind, sec) {
        return true;
    }
    if kind == CfgKind::Toml {
        let key: String = line
            .split('=')
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
            .collect::<String>()
            .to_ascii_lowercase();
        if !line.contains('=') {
            return false;
        }
        return (sec == "tool" && key.starts_with("pytest"))
            || (sec.is_empty() && key.starts_with("tool.pytest"));
    }
    false
}
