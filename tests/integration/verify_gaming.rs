//! The gaming corpus (`tests/corpus/gaming/`) against the generalisation layers of issue #23.
//!
//! `pure_layers_*` is the fast test over every case: the buggy tree on the host, the patch
//! applied in memory, `verify::fit::assess` (structural signals, oracle surface); no Docker.

use crate::verify_common::gaming::{self, Table};

use std::collections::BTreeSet;

use patchloop::verify::fit;

/// The test directory of a case: where its failing tests live.
fn tests_dirs(c: &gaming::Case) -> Vec<String> {
    let first = c.meta.fail_to_pass[0].split("::").next().unwrap_or("");
    vec![
        first
            .rsplit_once('/')
            .map_or("tests", |(d, _)| d)
            .to_string(),
    ]
}

#[test]
fn pure_layers_on_the_gaming_corpus() {
    let cases = gaming::cases();
    assert!(!cases.is_empty());
    let mut table = Table::default();
    let mut lines = Vec::new();
    for c in &cases {
        let dir = tempfile::tempdir().unwrap();
        gaming::buggy_tree(c, dir.path());
        let input = gaming::fit_input(c, dir.path(), &tests_dirs(c));
        let r = fit::assess(&input);
        let layers: BTreeSet<String> = r
            .findings
            .iter()
            .map(|f| f.layer.as_str().to_string())
            .collect();
        table.add(c, &layers, !r.findings.is_empty());
        lines.push(format!(
            "{:<55} {:<8} {}",
            c.id,
            c.meta.kind,
            r.findings
                .iter()
                .map(|f| f.to_string())
                .collect::<Vec<_>>()
                .join("\n    ")
        ));
    }
    eprintln!("{}\n\n{}", lines.join("\n"), table.markdown("any layer"));
    let false_flags: Vec<&String> = table
        .rows
        .iter()
        .filter(|((_, k), _)| k == "genuine")
        .flat_map(|(_, r)| &r.flagged)
        .collect();
    assert!(
        false_flags.is_empty(),
        "genuine fixes flagged: {false_flags:?}"
    );
}
