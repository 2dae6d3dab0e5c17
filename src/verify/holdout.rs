//! Hidden targets (issue #23, layer 3): when the failing tests span several test files, one
//! file is held out of everything the model sees (its image, its task, its test runs) and
//! copied in only for verification, where its tests are required like the shown ones. A
//! patch fitted to the shown tests has to fit tests it never saw too.
//!
//! Pure: [`choose`] picks the file; the action's repairer removes it from the episode's tree
//! and hands it to the verifier as a [`super::Holdout`] (`src/pipeline/repair.rs`).

use std::collections::BTreeMap;

use super::oracle::split_id;

/// What to hide.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HiddenChoice {
    /// Test files held out (workspace-relative).
    pub files: Vec<String>,
    /// Failing test ids the model sees (its targets).
    pub shown: Vec<String>,
    /// Failing test ids in the held-out files (verification requires them too).
    pub hidden: Vec<String>,
}

/// A test module a file can be held out as (not a conftest, not a package's `__init__`).
fn holdable(file: &str) -> bool {
    let base = file.rsplit('/').next().unwrap_or(file);
    base.ends_with(".py")
        && (base.starts_with("test_") || base.ends_with("_test.py"))
        && !file.starts_with('/')
        && !file.split('/').any(|c| c == "..")
}

/// Hold out one file when the failing tests span two or more test modules: the one with the
/// fewest failing tests (the model keeps most of the evidence; ties: the last by path). With
/// one file, nothing is hidden (the model would have no failing test to work from).
pub fn choose(failing: &[String]) -> HiddenChoice {
    let mut by_file: BTreeMap<&str, Vec<&String>> = BTreeMap::new();
    for id in failing {
        by_file.entry(split_id(id).0).or_default().push(id);
    }
    if by_file.len() < 2 || !by_file.keys().all(|f| holdable(f)) {
        return HiddenChoice {
            shown: failing.to_vec(),
            ..HiddenChoice::default()
        };
    }
    let Some((&file, _)) = by_file
        .iter()
        .min_by(|a, b| a.1.len().cmp(&b.1.len()).then_with(|| b.0.cmp(a.0)))
    else {
        return HiddenChoice::default();
    };
    let (hidden, shown): (Vec<String>, Vec<String>) = failing
        .iter()
        .cloned()
        .partition(|id| split_id(id).0 == file);
    HiddenChoice {
        files: vec![file.to_string()],
        shown,
        hidden,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn one_file_of_several_is_held_out_never_the_only_one() {
        let c = choose(&ids(&[
            "tests/test_a.py::test_1",
            "tests/test_a.py::test_2",
            "tests/test_b.py::T::test_3[x]",
        ]));
        assert_eq!(c.files, vec!["tests/test_b.py"]);
        assert_eq!(c.hidden, ids(&["tests/test_b.py::T::test_3[x]"]));
        assert_eq!(
            c.shown,
            ids(&["tests/test_a.py::test_1", "tests/test_a.py::test_2"])
        );
        // Ties: the last by path.
        let c = choose(&ids(&["tests/test_a.py::t", "tests/test_b.py::t"]));
        assert_eq!(c.files, vec!["tests/test_b.py"]);
        // One file: nothing to hold out.
        let one = ids(&["tests/test_a.py::t1", "tests/test_a.py::t2"]);
        assert_eq!(
            choose(&one),
            HiddenChoice {
                shown: one.clone(),
                ..Default::default()
            }
        );
        // A non-module (doctest file, conftest) is never moved.
        let c = choose(&ids(&["README.md::line", "tests/test_a.py::t"]));
        assert!(c.files.is_empty());
        assert!(choose(&[]).files.is_empty());
    }
}
