//! The verification gate: a verdict that comes only from a fresh container, judged against a
//! patch policy, hardened pytest runs and re-runs, with a receipt users can read.
//!
//! Pure parts: [`diff`] (patch parsing), [`policy`] (which changes are allowed), [`scan`]
//! (semantic patch analysis), [`junit`]
//! (per-test outcomes), [`verdict`] (the decision), [`receipt`] (JSON + Markdown) and
//! [`harness`] (the hardened invocation as data). I/O: [`runner`] and [`exec`] (containers)
//! and [`cli`]. The generalisation layers (fixed or fitted, issue #23) are [`fit`]: the pure
//! [`signals`] and [`oracle`] (over [`pysrc`]), the dynamic [`probe`], the optional
//! [`review`]; each reports [`evidence::Finding`]s.
//!
//! Flow of [`verify`]: policy on the diff → fresh container from the prepared image (tests
//! read-only unless held-out files must be copied in) → one `setup` exec (pre-patch pytest
//! config, baseline snapshot, shadowing lookups) → N unpatched runs (the failure must reproduce
//! N/N) → `git apply` → N patched runs → second runner → (only for a patch every integrity
//! layer lets through) the generalisation layers → verdict → receipt. The generalisation
//! layers run on a second container of the same image (held-out files and patch put there
//! too), started with the first: they begin once the first patched run passes, beside the
//! other runs, and their report counts only if the rest lets the patch through as well.
//!
//! Invariants:
//! - Every path returns a receipt; nothing here panics on input (errors are verdict `error`).
//! - Nothing the code under test can write is trusted between runs: the run script, the guard
//!   and the harness ini travel with each exec (`python3 -I -B -c`, config on stdin).
//! - A run counts only if: JUnit exists and parses; the guard's report is `clean`; exactly one
//!   end-of-run marker was printed and its fingerprints match the collected reports; the
//!   workspace (code, config, tests) is unchanged after the run; every loaded conftest.py is one
//!   of the verified tree; and JUnit "passed" agrees with what the guard saw.
//!
//! Rust and Node images (label `patchloop.kind`) take the same flow with the JUnit harness
//! ([`junit_run`], `images/harness/pl_junit.py`) instead of hardened pytest: no guard (runs
//! record `not_applicable`), the run's exit code must match its single end-of-run marker and
//! `result.json`, the workspace snapshot also covers `.rs` / `.js`/`.ts`/`.json` files, and the
//! policy adds each language's test configuration. Test ids: `tests/median.rs::even_length`
//! (Rust: the test binary's source file, then the test path; nextest and libtest JUnit agree)
//! and `tests/stats.test.js::median › even length` (jest: file, then describe blocks › title).
//!
//! Integrity layers, in the order the verdict consults them (each named in the receipt's
//! `layers`):
//! 1. **Patch policy** ([`policy`], on the diff): tests, test config, start-up hooks, packaging
//!    and plugin surfaces (`*.dist-info`, `entry_points.txt`, entry points, `pytest_plugins`).
//! 2. **Semantic analysis** ([`scan`], pre- vs post-patch source of every changed non-test
//!    Python file, read in the container before and right after `git apply`): capability kinds
//!    the patch adds (test framework, tracing, audit hooks, import system, frames, code
//!    objects, identity mutation, builtins, threads, test context, process hooks, dynamic
//!    code, …). A finding turns `verified` into `needs_review`.
//! 3. **The guard** (in-process, `pl_guard.py`): pytest's internals at session end, conftests.
//! 4. **Out-of-process checks**: the outcome stream (one nonce-tagged record per test report,
//!    written as it happens to pl_run's private stdout copy taken before any project code ran,
//!    read from the exec's output stream), the end-of-run marker's report fingerprints and the
//!    workspace snapshots by the read-only helper (another uid).
//! 5. **Second runner** (`pl_second.py`): the fail-to-pass tests in a fresh `python -I`
//!    process without pytest, conftest or `PYTEST_*`: unittest for `TestCase` tests, a direct
//!    call for argument-free test functions; others are `not_applicable` (listed, never a
//!    silent pass). pytest passed + second runner failed = `tampered`.
//!
//! Generalisation layers (issue #23: verified means fixed, not fitted), each named in the
//! receipt after the integrity ones; any finding makes a passing patch `needs_review`, never
//! posted, with its evidence (file:line, the literal or call, the input):
//! 6. **Behaviour beyond the tested points** ([`probe`]): the failing tests' calls of the
//!    changed functions and relation-preserving variants of them, before and after the patch;
//!    a relation the original code kept at a tested input and the patch breaks.
//! 7. **Oracle surface** ([`oracle`]): a name the failing tests judge with, changed.
//! 8. **Hidden targets**: held-out test files (`--holdout`, eval's hidden files) are required
//!    like the rest; a held-out failure is named in its row.
//! 9. **Structural signals** ([`signals`]): shapes of fitted code in the diff.
//! 10. **Model review** ([`review`], off by default): a rubric answer quoting an added line.
//!
//! [`fit::assess`] is the pure part (signals, oracle surface) the repair search can call on a
//! passing candidate; [`probe::neighbourhood`] the dynamic one (two runs of the failing tests).
//! What `verified` covers and cannot is [`receipt::VERIFIED_COVERS`] /
//! [`receipt::VERIFIED_CANNOT`], in every receipt and in docs/security.md.
//!
//! Known limits (honestly): code under test shares the interpreter with pytest and the guard,
//! so it can reach the guard's memory, the stream's fd and nonce (through `gc`, frames or
//! closures: exactly the capabilities layer 2 flags when a patch adds them). The stream proves
//! that what pytest reported at each test's end is what JUnit says, not that pytest itself was
//! honest; a patch that fools pytest's reporting at the source (e.g. swapping a test's code
//! before it runs) is caught by layer 2 or, for applicable tests, by the second runner, which
//! the patch cannot see from the repository. Layer 2 judges kinds per file: a file that already
//! uses a kind (say, frames) may use it again unnoticed, and names built from non-constant data
//! are seen only where the dynamic construct itself is a kind. The second runner does not apply
//! to parametrized or fixture-using tests, and runs tests in isolation (an order-dependent test
//! would disagree). Held-out tests remain the other defence.

pub mod apply;
pub mod attempts;
pub mod cli;
pub mod consensus;
pub mod diff;
pub mod differential;
pub mod evidence;
pub mod exec;
pub mod fit;
pub mod glob;
pub mod harness;
pub mod holdout;
pub mod junit;
pub mod junit_run;
pub mod layers;
pub mod oracle;
pub mod outcome;
pub mod policy;
pub mod probe;
pub mod pysrc;
pub mod receipt;
pub mod review;
pub mod runner;
pub mod scan;
pub mod signals;
pub mod verdict;

pub use runner::{
    FitOptions, Holdout, PreparedImage, RerunScope, VerifyRequest, error_receipt, verify,
};

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    /// File → the sibling files its non-test code names (`super::x`, `crate::verify::x`,
    /// `use super::{x, y::z}`). A module directory (`signals/`) is one node: its `mod.rs` and
    /// its other files, whose `super::super::x` is the sibling `x` (`tests.rs` aside).
    fn file_graph() -> BTreeMap<String, BTreeSet<String>> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/verify");
        let files: BTreeSet<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let p = e.unwrap().path();
                (p.extension().is_some_and(|x| x == "rs") || p.join("mod.rs").is_file())
                    .then(|| p.file_stem().unwrap().to_string_lossy().into())
            })
            .filter(|n: &String| n != "mod")
            .collect();
        let single = regex::Regex::new(r"(?:super|crate::verify)::(\w+)").unwrap();
        let group = regex::Regex::new(r"(?:super|crate::verify)::\{([^}]*)\}").unwrap();
        let mut g = BTreeMap::new();
        for f in &files {
            let sub = dir.join(f);
            let text = if sub.is_dir() {
                let text = std::fs::read_to_string(sub.join("mod.rs")).unwrap();
                let mut text = text.split("#[cfg(test)]").next().unwrap_or("").to_string();
                for e in std::fs::read_dir(&sub).unwrap() {
                    let p = e.unwrap().path();
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    if name.ends_with(".rs") && name != "mod.rs" && name != "tests.rs" {
                        let child = std::fs::read_to_string(&p).unwrap();
                        let child = child.split("#[cfg(test)]").next().unwrap_or("");
                        // A child's `super::` is this module; `super::super::` is verify.
                        text.push_str(
                            &child
                                .replace("super::super::", "crate::verify::")
                                .replace("super::", "this_module::"),
                        );
                    }
                }
                text
            } else {
                std::fs::read_to_string(dir.join(format!("{f}.rs"))).unwrap()
            };
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            let code: String = code
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            let mut deps = BTreeSet::new();
            for c in single.captures_iter(&code) {
                deps.insert(c[1].to_string());
            }
            for c in group.captures_iter(&code) {
                for item in c[1].split(',') {
                    let name = item.trim().split("::").next().unwrap_or("").trim();
                    deps.insert(name.to_string());
                }
            }
            deps.retain(|d| files.contains(d) && d != f);
            g.insert(f.clone(), deps);
        }
        g
    }

    /// `verify/`'s files import downhill only (a cycle between files inside a module is what
    /// the string helpers once made: runner → receipt → probe → runner).
    #[test]
    fn files_import_acyclically() {
        let g = file_graph();
        assert!(g["runner"].contains("receipt") && g["receipt"].contains("fit"));
        // Module directories are nodes too, both ways.
        assert!(g["scan"].contains("policy") && g["layers"].contains("signals"));
        // Depth-first with colours: grey on the stack, black done.
        fn visit<'a>(
            g: &'a BTreeMap<String, BTreeSet<String>>,
            n: &'a str,
            grey: &mut Vec<&'a str>,
            black: &mut BTreeSet<&'a str>,
        ) {
            if black.contains(n) {
                return;
            }
            if let Some(i) = grey.iter().position(|x| *x == n) {
                panic!("file cycle in verify/: {} -> {n}", grey[i..].join(" -> "));
            }
            grey.push(n);
            for d in g.get(n).into_iter().flatten() {
                visit(g, d, grey, black);
            }
            grey.pop();
            black.insert(n);
        }
        let mut black = BTreeSet::new();
        for n in g.keys() {
            visit(&g, n, &mut Vec::new(), &mut black);
        }
    }
}
