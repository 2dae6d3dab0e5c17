//! The verification gate: a verdict that comes only from a fresh container, judged against a
//! patch policy, hardened pytest runs and re-runs, with a receipt users can read.
//!
//! Pure parts: [`diff`] (patch parsing), [`policy`] (which changes are allowed), [`junit`]
//! (per-test outcomes), [`verdict`] (the decision), [`receipt`] (JSON + Markdown) and
//! [`harness`] (the hardened invocation as data). I/O: [`runner`] (containers) and [`cli`].
//!
//! Flow of [`verify`]: policy on the diff → fresh container from the prepared image (tests
//! read-only unless held-out files must be copied in) → one `setup` exec (pre-patch pytest
//! config, baseline snapshot, shadowing lookups) → N unpatched runs (the failure must reproduce
//! N/N) → `git apply` → N patched runs → verdict → receipt.
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
//! Known limits: code under test shares the interpreter with pytest, so a patch written against
//! this harness specifically (e.g. rewriting the guard's memory) is out of reach of in-process
//! checks; the diff scan, the shadowing check and held-out tests are the other layers.

pub mod cli;
pub mod diff;
pub mod glob;
pub mod harness;
pub mod junit;
pub mod junit_run;
pub mod policy;
pub mod receipt;
pub mod runner;
pub mod scan;
pub mod verdict;

pub use runner::{Holdout, PreparedImage, RerunScope, VerifyRequest, error_receipt, verify};
