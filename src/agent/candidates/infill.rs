//! The `infill` format's sites around the most suspicious lines, shape after shape (what
//! each shape masks: [`super::shapes`]), the draw schedule over them, the text around a gap,
//! and the edit a fill makes.

use std::collections::BTreeMap;

use super::MAX_SUSPECTS;
use super::edits::{FileEdit, ParseError};
use super::shapes::{self as shape, Func, InfillShape, Site};
use crate::agent::localize::Ranked;

/// Sites the `infill` format fills at most (each is one fill-in-the-middle request).
pub(super) const MAX_SITES: usize = 16;
/// After the greedy pass, the best sites are filled again, sampled: of the 17 benchmark tasks
/// whose bug line was a site but was filled wrong, it ranked in the top four in 11.
pub(super) const RESAMPLED_SITES: usize = 4;
/// Sampled fills of each of those.
pub(super) const RESAMPLES: usize = 2;

/// Which site infill draw `i` fills, and which sample it takes ([`super::sampling`]): every site
/// greedy, best first, then the best [`RESAMPLED_SITES`] sampled, [`RESAMPLES`] times each
/// back to back. Back to back, a site's second sample finds its whole prompt in the
/// server's cache: when the samples took turns between sites, a revisit re-evaluated 69 of
/// its prompt tokens on average (1.5 s with the 1.5B here, a fifth of the model time on the
/// mutation bench). Pure.
pub fn infill_draw(i: usize, sites: usize) -> (usize, usize) {
    if i < sites {
        return (i, 0);
    }
    let j = i - sites;
    (j / RESAMPLES, 1 + j % RESAMPLES)
}

/// Infill draws in all for `sites` sites.
pub fn infill_draws(sites: usize) -> usize {
    sites + sites.min(RESAMPLED_SITES) * RESAMPLES
}

/// Every draw of a search over `sites` (grouped by shape, as [`infill_sites`] orders them),
/// as (site index, sample): each shape's sites in turn, with [`infill_draw`]'s schedule
/// within the shape. Pure.
pub fn infill_plan(sites: &[Site]) -> Vec<(usize, usize)> {
    let mut plan = Vec::new();
    let mut from = 0;
    while from < sites.len() {
        let n = sites[from..]
            .iter()
            .take_while(|s| s.shape == sites[from].shape)
            .count();
        plan.extend((0..infill_draws(n)).map(|i| {
            let (at, sample) = infill_draw(i, n);
            (from + at, sample)
        }));
        from += n;
    }
    plan
}

/// Sites of each shape the `sampled` stage draws at (its best ones).
pub const SAMPLED_SITES: usize = 6;
/// Samples of a site per pass of the `sampled` stage, back to back (the server's prompt
/// cache serves the site's prompt from the second one on).
pub const SAMPLES_PER_PASS: usize = 4;
/// Sample numbers the first stage uses (0: greedy, then [`RESAMPLES`] sampled ones): the
/// `sampled` stage's seeds come after them.
const FIRST_STAGE_SAMPLES: usize = 1 + RESAMPLES;

/// The `sampled` stage's draws over `sites` (grouped by shape, as [`infill_sites`] orders
/// them) in its pass `pass`, as (site index, sample): the best [`SAMPLED_SITES`] of each
/// shape, the shapes taking turns (the best line, the best block, the best insert, the
/// second line, …), each site [`SAMPLES_PER_PASS`] times back to back, with sample numbers
/// no earlier pass or stage used (so seeds, and replies, are new). Pure.
pub fn sampled_plan(sites: &[Site], pass: usize) -> Vec<(usize, usize)> {
    let mut by_shape: Vec<Vec<usize>> = Vec::new();
    for (i, s) in sites.iter().enumerate() {
        match by_shape.last_mut() {
            Some(g) if sites[g[0]].shape == s.shape => g.push(i),
            _ => by_shape.push(vec![i]),
        }
    }
    let first = FIRST_STAGE_SAMPLES + pass * SAMPLES_PER_PASS;
    let mut plan = Vec::new();
    for rank in 0..SAMPLED_SITES {
        for g in &by_shape {
            if let Some(&at) = g.get(rank) {
                plan.extend((first..first + SAMPLES_PER_PASS).map(|sample| (at, sample)));
            }
        }
    }
    plan
}

/// Lines of the file above the function, and below it, around an infill's gap.
pub(super) const INFILL_ABOVE: usize = 20;
pub(super) const INFILL_BELOW: usize = 5;
/// Lines after the gap a fill sees at most. The suffix follows the gap in the prompt, so the
/// server's prompt cache never serves it: every fill evaluates it again, and prompt
/// evaluation was 83% of a fill's time on 2 cores (a 100-line function's fills took 10-20 s
/// each, its suffix 400-1000 tokens). At 12 lines it was still ~85 of the ~90 tokens a fill
/// at a new site evaluated (1.9-2.1 s of its 2.5 s, the mutation bench); 6 lines keep the
/// gap's own block in view.
pub(super) const INFILL_AFTER: usize = 6;

/// The gaps to fill, shape by shape in the order of `shapes` (a cascade: the one-line fills
/// are cheap and fix most injected bugs; the multi-line shapes come after them, for what one
/// line cannot express), and within a shape most suspicious first (ties: the better-ranked
/// function, the earlier line), at most [`MAX_SITES`] per shape, each function's share of
/// them first: for each of the best [`MAX_SUSPECTS`] functions, each shape's own sites
/// ([`shape::Shape::sites`]). Pure.
pub fn infill_sites(
    ranked: &[Ranked],
    files: &BTreeMap<String, String>,
    shapes: &[InfillShape],
) -> Vec<Site> {
    // Every shape's sites of each function in turn, with the function's rank.
    let mut found: Vec<Site> = Vec::new();
    let mut ranks: Vec<usize> = Vec::new();
    for (rank, r) in ranked.iter().take(MAX_SUSPECTS).enumerate() {
        let Some(src) = files.get(&r.loc.path) else {
            continue;
        };
        let f = Func::new(r, src);
        for &s in shapes {
            let new = shape::of(s).sites(&f, &found);
            ranks.extend(std::iter::repeat_n(rank, new.len()));
            found.extend(new);
        }
    }
    let mut all: Vec<(Site, usize)> = found.into_iter().zip(ranks).collect();
    let order = |s: InfillShape| shapes.iter().position(|x| *x == s).unwrap_or(usize::MAX);
    all.sort_by(|(a, ra), (b, rb)| {
        order(a.shape)
            .cmp(&order(b.shape))
            .then(
                b.score
                    .partial_cmp(&a.score)
                    .unwrap_or(std::cmp::Ordering::Equal),
            )
            .then(ra.cmp(rb))
            .then(a.line.cmp(&b.line))
    });
    // Each function gets its share of a shape's sites before any gets more: a long function
    // whose lines all score the same must not crowd out the next suspect's one hot line (a
    // real bug's `parse_qsl` line came 23rd behind two helpers' 22 lines).
    let mut keep = vec![false; all.len()];
    for &shape in shapes {
        let of_shape: Vec<usize> = (0..all.len())
            .filter(|&i| all[i].0.shape == shape)
            .collect();
        let funcs: std::collections::BTreeSet<usize> = of_shape.iter().map(|&i| all[i].1).collect();
        let share = (MAX_SITES / funcs.len().max(1)).max(1);
        let mut per: BTreeMap<usize, usize> = BTreeMap::new();
        let mut n = of_shape.iter().filter(|&&i| keep[i]).count();
        for &i in &of_shape {
            let taken = per.entry(all[i].1).or_default();
            if !keep[i] && *taken < share && n < MAX_SITES {
                *taken += 1;
                keep[i] = true;
                n += 1;
            }
        }
        for &i in &of_shape {
            if n >= MAX_SITES {
                break;
            }
            if !keep[i] {
                keep[i] = true;
                n += 1;
            }
        }
    }
    all.into_iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|((s, _), _)| s)
        .collect()
}

/// The text before and after a site's gap: from [`INFILL_ABOVE`] lines above its function,
/// to [`INFILL_BELOW`] lines past it but at most [`INFILL_AFTER`] past the gap (the prefix
/// ends, the suffix starts, at a line break). Pure.
pub fn infill_context(src: &str, site: &Site) -> (String, String) {
    let lines: Vec<&str> = src.lines().collect();
    let from = site.func.0.saturating_sub(INFILL_ABOVE).max(1);
    let to = (site.func.1 + INFILL_BELOW)
        .min(site.end + INFILL_AFTER)
        .min(lines.len());
    // The file's imports come first when the window does not reach them: every fill of the
    // file starts with the same text, so the server's prompt cache serves it, and the model
    // knows the names the function uses.
    let head = file_head(&lines, from);
    let mut prefix = head;
    prefix.push_str(&lines[(from - 1).min(site.line - 1)..site.line - 1].join("\n"));
    if !prefix.is_empty() && !prefix.ends_with('\n') {
        prefix.push('\n');
    }
    let mut suffix = lines[site.end.min(to)..to].join("\n");
    suffix.push('\n');
    (prefix, suffix)
}

/// Characters of a failing test's line a fill's hint quotes.
const HINT_CHARS: usize = 120;

/// What a fill's prompt is told about the failure, as comment lines that open its prefix:
/// the first failing test's name, the line of it that failed and its error, read from the
/// test run's `report` (pytest's long or short tracebacks). A fill that sees only the code
/// around the gap writes what usually stands there; the error says what must change
/// (`Lists differ: [[]] != []` for an empty input). The same text opens every fill of an
/// episode, so the server's prompt cache serves it. Empty when the report shows no error
/// line. Pure.
pub fn failure_hint(report: &str) -> String {
    use crate::agent::report::{is_banner, section_title};
    let lines: Vec<&str> = report.lines().collect();
    // The first failure's section, else the whole report.
    let start = lines
        .iter()
        .position(|l| section_title(l).is_some())
        .map_or(0, |i| i + 1);
    let name = (start > 0).then(|| section_title(lines[start - 1]).unwrap_or(""));
    let section: Vec<&str> = lines[start..]
        .iter()
        .copied()
        .take_while(|l| section_title(l).is_none() && !is_banner(l))
        .collect();
    let error = section.iter().find_map(|l| {
        let rest = l.strip_prefix('E')?;
        (rest.starts_with(char::is_whitespace) && !rest.trim().is_empty()).then(|| rest.trim())
    });
    let Some(error) = error else {
        return String::new();
    };
    // Long tracebacks mark the failing line with `>`; short ones print it under its
    // `path:line: in func` line. The first is the test's own.
    let code = section
        .iter()
        .find_map(|l| l.strip_prefix('>').map(str::trim))
        .or_else(|| {
            section
                .windows(2)
                .find(|w| w[0].contains(".py:") && w[0].contains(": in "))
                .map(|w| w[1].trim())
        })
        .filter(|c| !c.is_empty());
    let clip = |s: &str| crate::sandbox::output::clip_chars(s, HINT_CHARS);
    let mut out = match &name {
        Some(n) => format!("# A failing test, {}:\n", clip(n)),
        None => "# A failing test:\n".to_string(),
    };
    if let Some(c) = code {
        out.push_str(&format!("#     {}\n", clip(c)));
    }
    out.push_str(&format!("#     {}\n", clip(error)));
    out
}

/// Import lines of a file at most in a fill's prefix.
const HEAD_LINES: usize = 12;

/// The file's leading import lines above line `from` (where the fill's window starts), then
/// a `...` line: empty when the window starts at the top or the file starts with no import.
/// Pure.
fn file_head(lines: &[&str], from: usize) -> String {
    let imports: Vec<&str> = lines[..(from - 1).min(lines.len())]
        .iter()
        .copied()
        .filter(|l| l.starts_with("import ") || l.starts_with("from "))
        .take(HEAD_LINES)
        .collect();
    if imports.is_empty() {
        return String::new();
    }
    format!("{}\n# ...\n", imports.join("\n"))
}

/// The edit a fill makes at `site`. Pure.
pub fn apply_infill(
    text: &str,
    site: &Site,
    files: &BTreeMap<String, String>,
) -> Result<FileEdit, ParseError> {
    let src = files
        .get(&site.path)
        .ok_or_else(|| ParseError::NotApplied(format!("{} was not read", site.path)))?;
    let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
    if site.line == 0
        || site.line > lines.len() + 1
        || site.end > lines.len()
        || site.end + 1 < site.line
    {
        return Err(ParseError::NotApplied(format!(
            "{} has no lines {}-{}",
            site.path, site.line, site.end
        )));
    }
    let (new, end) = shape::of(site.shape).fill(text, site, &lines)?;
    let orig = &lines[site.line - 1..end];
    let squeeze = |v: &[String]| -> String { v.concat().split_whitespace().collect() };
    let same = if end > site.end {
        squeeze(&new) == squeeze(orig)
    } else {
        new.len() == orig.len() && new.iter().zip(orig).all(|(a, b)| a.trim() == b.trim())
    };
    if same {
        return Err(ParseError::NotApplied(format!(
            "{} filled in as it is",
            site.label()
        )));
    }
    lines.splice(site.line - 1..end, new);
    let mut content = lines.join("\n");
    if src.ends_with('\n') {
        content.push('\n');
    }
    Ok(FileEdit {
        path: site.path.clone(),
        content,
    })
}

#[cfg(test)]
mod hint_tests {
    use super::failure_hint;

    #[test]
    fn the_hint_quotes_the_failing_line_and_its_error_from_long_and_short_tracebacks() {
        let long = "\
============================= FAILURES =============================
______________ SplitAfterTest.test_empty_collection ______________

self = <tests.test_more.SplitAfterTest testMethod=test_empty_collection>

    def test_empty_collection(self):
>       self.assertEqual(list(mi.split_after([], bool)), [])
E       AssertionError: Lists differ: [[]] != []
E
E       First list contains 1 additional elements.

tests/test_more.py:12: AssertionError
______________ SplitBeforeTest.test_empty_collection ______________
E       AssertionError: another
=========================== short test summary info ===========================
";
        assert_eq!(
            failure_hint(long),
            "# A failing test, SplitAfterTest.test_empty_collection:\n\
             #     self.assertEqual(list(mi.split_after([], bool)), [])\n\
             #     AssertionError: Lists differ: [[]] != []\n"
        );
        let short = "\
_____________________________ test_ordinal _____________________________
tests/test_inflection.py:199: in test_ordinal
    assert inflection.ordinal(-11) == 'th'
E   AssertionError: assert 'st' == 'th'
";
        assert_eq!(
            failure_hint(short),
            "# A failing test, test_ordinal:\n\
             #     assert inflection.ordinal(-11) == 'th'\n\
             #     AssertionError: assert 'st' == 'th'\n"
        );
        // No error line (a problem statement, a run with --tb=no): no hint.
        assert_eq!(failure_hint("The parser drops the last field."), "");
        assert_eq!(failure_hint(""), "");
        // Every hint line is a comment: it cannot change what the fill's code means.
        let weird = "__ t __\n> x = 1\nE   line one\nmore\n";
        assert!(failure_hint(weird).lines().all(|l| l.starts_with('#')));
    }
}
