//! What "fixed" requires, said once: the caller's [`TargetSpec`] (the ids it names, or a
//! task's given lists) is resolved against the baseline run into one [`Targets`] value —
//! fail-to-pass (visible in the sandbox or held out), pass-to-pass, pre-existing — which the
//! strategies, the judge and the verifier all read unchanged. Pure.

use crate::testid::TestId;
use crate::verify::Holdout;

/// What the caller says the targets are, before any test ran.
#[derive(Debug, Clone)]
pub enum TargetSpec {
    /// Reproduce in the episode container first; the named ids (may be empty: then every
    /// reproduced failure) are the fail-to-pass set. `held_out`: test files kept out of the
    /// episode's image (the action), which verification restores and requires.
    Reproduce {
        named: Vec<TestId>,
        held_out: HeldOut,
    },
    /// Given by the caller (an eval task): no reproduction decides them, the statement is the
    /// task.
    Given {
        fail_to_pass: Vec<TestId>,
        pass_to_pass: Vec<TestId>,
        holdouts: Vec<Holdout>,
    },
}

impl TargetSpec {
    /// Reproduce, and let every reproduced failure be a target.
    pub fn reproduced() -> TargetSpec {
        TargetSpec::named(Vec::new())
    }

    /// Reproduce, and keep the failures these ids name (a file or class names all its tests).
    pub fn named(named: Vec<TestId>) -> TargetSpec {
        TargetSpec::Reproduce {
            named,
            held_out: HeldOut::default(),
        }
    }

    pub fn is_given(&self) -> bool {
        matches!(self, TargetSpec::Given { .. })
    }
}

/// Held-out test files and the failing tests in them.
#[derive(Debug, Clone, Default)]
pub struct HeldOut {
    pub files: Vec<Holdout>,
    pub tests: Vec<TestId>,
}

/// The targets of one repair, resolved after the baseline run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Targets {
    /// What the patch must make pass: the reproduced (or given) failures and the held-out ones.
    pub fail_to_pass: Vec<TestId>,
    /// Of them, those the sandbox can run and saw failing (a held-out or hidden test exists
    /// only in the verifier's container).
    pub visible: Vec<TestId>,
    /// Test files the verifier restores (absent from the episode's image).
    pub held_out: Vec<Holdout>,
    /// What must keep passing; empty: the whole suite.
    pub pass_to_pass: Vec<TestId>,
    /// Failing before the patch but not targets: not required to pass.
    pub pre_existing: Vec<TestId>,
}

impl Targets {
    /// The targets of `spec` given the tests failing in the baseline run. With names, a
    /// named id that did not fail is dropped (it cannot be fail-to-pass) and the other
    /// failures are pre-existing; without, every failure is a target.
    pub fn resolve(spec: &TargetSpec, failing: &[TestId]) -> Targets {
        match spec {
            TargetSpec::Reproduce { named, held_out } => {
                let is_target = |f: &TestId| {
                    named.is_empty() || named.iter().any(|n| f.is_named_by(n.as_str()))
                };
                let visible: Vec<TestId> =
                    failing.iter().filter(|f| is_target(f)).cloned().collect();
                Targets {
                    fail_to_pass: visible.iter().chain(&held_out.tests).cloned().collect(),
                    visible,
                    held_out: held_out.files.clone(),
                    pass_to_pass: Vec::new(),
                    pre_existing: failing.iter().filter(|f| !is_target(f)).cloned().collect(),
                }
            }
            TargetSpec::Given {
                fail_to_pass,
                pass_to_pass,
                holdouts,
            } => Targets {
                fail_to_pass: fail_to_pass.clone(),
                visible: fail_to_pass
                    .iter()
                    .filter(|t| failing.contains(t))
                    .cloned()
                    .collect(),
                held_out: holdouts.clone(),
                pass_to_pass: pass_to_pass.clone(),
                pre_existing: failing
                    .iter()
                    .filter(|f| !fail_to_pass.contains(f))
                    .cloned()
                    .collect(),
            },
        }
    }

    /// The visible targets as the strategies' plain ids.
    pub fn visible_ids(&self) -> Vec<String> {
        strings(&self.visible)
    }

    /// The pre-existing failures as plain ids.
    pub fn pre_existing_ids(&self) -> Vec<String> {
        strings(&self.pre_existing)
    }
}

/// Ids as plain strings (for the layers that take them so).
pub fn strings(ids: &[TestId]) -> Vec<String> {
    ids.iter().map(|t| t.as_str().to_string()).collect()
}

/// Plain strings as ids (where they enter: a flag, a log, a task).
pub fn ids<S: AsRef<str>>(v: &[S]) -> Vec<TestId> {
    v.iter().map(|s| TestId::new(s.as_ref())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failing() -> Vec<TestId> {
        ids(&[
            "tests/test_a.py::test_x",
            "tests/test_a.py::test_y",
            "tests/test_b.py::test_env",
        ])
    }

    #[test]
    fn named_targets_split_the_baseline() {
        let all = Targets::resolve(&TargetSpec::reproduced(), &failing());
        assert_eq!(all.fail_to_pass, failing());
        assert!(all.pre_existing.is_empty());
        let b = Targets::resolve(
            &TargetSpec::named(ids(&["tests/test_a.py::test_y"])),
            &failing(),
        );
        assert_eq!(strings(&b.fail_to_pass), ["tests/test_a.py::test_y"]);
        assert_eq!(
            strings(&b.pre_existing),
            ["tests/test_a.py::test_x", "tests/test_b.py::test_env"]
        );
        let by_file = Targets::resolve(&TargetSpec::named(ids(&["tests/test_a.py"])), &failing());
        assert_eq!(by_file.fail_to_pass.len(), 2);
        assert_eq!(
            strings(&by_file.pre_existing),
            ["tests/test_b.py::test_env"]
        );
        // A prefix that is not a whole path segment names nothing.
        let none = Targets::resolve(
            &TargetSpec::named(ids(&["tests/test_a.py::test_"])),
            &failing(),
        );
        assert!(none.fail_to_pass.is_empty());
    }

    #[test]
    fn held_out_tests_are_targets_the_sandbox_cannot_see_and_given_lists_stay() {
        let spec = TargetSpec::Reproduce {
            named: ids(&["tests/test_a.py::test_x"]),
            held_out: HeldOut {
                files: Vec::new(),
                tests: ids(&["tests/test_c.py::test_h"]),
            },
        };
        let t = Targets::resolve(&spec, &failing());
        assert_eq!(
            strings(&t.fail_to_pass),
            ["tests/test_a.py::test_x", "tests/test_c.py::test_h"]
        );
        assert_eq!(t.visible_ids(), ["tests/test_a.py::test_x"]);
        let given = TargetSpec::Given {
            fail_to_pass: ids(&["tests/test_a.py::test_x", "tests/hidden.py::test_z"]),
            pass_to_pass: ids(&["tests/test_a.py::test_ok"]),
            holdouts: Vec::new(),
        };
        let t = Targets::resolve(&given, &failing());
        assert_eq!(t.visible_ids(), ["tests/test_a.py::test_x"]);
        assert_eq!(t.fail_to_pass.len(), 2);
        assert_eq!(t.pre_existing.len(), 2);
        assert_eq!(strings(&t.pass_to_pass), ["tests/test_a.py::test_ok"]);
    }
}
