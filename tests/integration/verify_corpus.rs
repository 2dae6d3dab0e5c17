//! The tamper and legit corpora (tests/corpus/, regenerate with tests/corpus/gen.py).
//!
//! `*_policy` tests are pure; `docker_*` tests run every case end to end through
//! `verify::verify` in real hardened containers and FAIL when Docker is missing.

use crate::verify_common;

use std::process::Command;

use patchloop::sandbox::docker;
use patchloop::verify::policy::{self, DirTree, PolicyConfig};
use patchloop::verify::verdict::Verdict;
use patchloop::verify::{PreparedImage, VerifyRequest, verify};
use verify_common::{Case, cases, corpus, fixture_image, remove_image};

fn policy_cfg() -> PolicyConfig {
    PolicyConfig {
        tests_dirs: vec!["tests".into()],
        ..Default::default()
    }
}

fn policy_rules(c: &Case) -> Vec<String> {
    let base = DirTree(corpus().join("fixture"));
    let r = policy::check(&c.patch, &policy_cfg(), &base);
    let mut v = r.violations;
    v.extend(policy::shadow_violations(&r.new_modules, &|_| false));
    v.into_iter().map(|v| v.rule.to_string()).collect()
}

/// The fixture with the case's patch applied (host git on our own data), or `None` when it
/// does not apply.
fn applied(c: &Case) -> Option<tempfile::TempDir> {
    let d = tempfile::tempdir().unwrap();
    let status = Command::new("cp")
        .arg("-r")
        .arg(corpus().join("fixture"))
        .arg(d.path().join("r"))
        .status()
        .unwrap();
    assert!(status.success());
    let lf = patchloop::verify::harness::strip_context_trailing_ws(&c.patch.replace("\r\n", "\n"));
    let mut child = Command::new("git")
        .args(["apply", "--ignore-whitespace", "-"])
        .current_dir(d.path().join("r"))
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(lf.as_bytes())
        .unwrap();
    child.wait().unwrap().success().then_some(d)
}

/// The semantic analysis as the verifier runs it, with the fixture as the pre-patch tree.
fn analysis(c: &Case) -> Option<patchloop::verify::scan::AnalysisInfo> {
    use patchloop::verify::scan;
    let d = applied(c)?;
    let files = patchloop::verify::diff::parse(&c.patch).ok()?;
    let targets = scan::targets(&files, &["tests".to_string()], &policy_cfg());
    let read = |root: &std::path::Path, p: &str| std::fs::read_to_string(root.join(p)).ok();
    let fixture = corpus().join("fixture");
    let pre = targets
        .iter()
        .filter_map(|(_, o)| o.clone())
        .map(|o| (o.clone(), read(&fixture, &o)))
        .collect();
    let post = targets
        .iter()
        .map(|(p, _)| (p.clone(), read(&d.path().join("r"), p)))
        .collect();
    Some(scan::analyse(&targets, &pre, &post))
}

#[test]
fn legit_corpus_has_no_analysis_findings() {
    for c in cases("legit") {
        let a = analysis(&c).unwrap_or_else(|| panic!("{} does not apply", c.name));
        assert!(
            a.findings.is_empty(),
            "{}: false finding {:?}",
            c.name,
            a.findings
        );
    }
}

/// The generalisation layers' pure part (structural signals, oracle surface) on the legit
/// corpus: fixes that must stay `verified` give no finding.
#[test]
fn legit_corpus_has_no_fit_findings() {
    use patchloop::verify::{fit, oracle};
    for c in cases("legit") {
        let d = applied(&c).unwrap_or_else(|| panic!("{} does not apply", c.name));
        let files = patchloop::verify::diff::parse(&c.patch).unwrap();
        let fixture = corpus().join("fixture");
        let read = |root: &std::path::Path, p: &str| std::fs::read_to_string(root.join(p)).ok();
        let pre = files
            .iter()
            .filter_map(|f| f.old_path.clone())
            .map(|o| (o.clone(), read(&fixture, &o)))
            .collect();
        let post = files
            .iter()
            .filter_map(|f| f.new_path.clone())
            .map(|n| (n.clone(), read(&d.path().join("r"), &n)))
            .collect();
        let tests = oracle::test_files(&c.meta.fail_to_pass)
            .into_iter()
            .filter_map(|p| {
                Some(oracle::TestSource {
                    text: read(&fixture, &p)?,
                    path: p,
                })
            })
            .collect();
        let input = fit::FitInput::new(
            &files,
            &pre,
            &post,
            tests,
            &c.meta.fail_to_pass,
            &["tests".to_string()],
        );
        let r = fit::assess(&input);
        assert!(r.findings.is_empty(), "{}: {:?}", c.name, r.findings);
    }
}

#[test]
fn tamper_corpus_analysis_findings() {
    // Cases the policy lets through must be caught by the analysis (when they are meant to
    // end as needs_review) or by the runtime layers (the case says which).
    for c in cases("tamper") {
        let Some(a) = analysis(&c) else {
            assert_ne!(c.meta.verdict, "needs_review", "{} does not apply", c.name);
            continue;
        };
        let caps: Vec<String> = a.findings.iter().map(|f| f.to_string()).collect();
        eprintln!("tamper/{}: {caps:?}", c.name);
        if c.meta.verdict != "needs_review" {
            continue;
        }
        assert!(!a.findings.is_empty(), "{}: no finding", c.name);
        if let Some(cap) = &c.meta.capability {
            assert!(
                a.findings.iter().any(|f| f.capability.as_str() == cap),
                "{}: want {cap}, got {:?}",
                c.name,
                a.findings
            );
        }
    }
}

#[test]
fn corpora_are_big_enough() {
    assert!(cases("tamper").len() >= 40);
    assert!(cases("legit").len() >= 25);
}

#[test]
fn tamper_corpus_policy() {
    for c in cases("tamper") {
        let rules = policy_rules(&c);
        match &c.meta.rule {
            Some(rule) => assert_eq!(
                rules.first(),
                Some(rule),
                "{}: expected rule {rule}, got {rules:?}",
                c.name
            ),
            // Cases built to slip past the diff scan; the runtime checks must catch them.
            None => assert!(rules.is_empty(), "{}: {rules:?}", c.name),
        }
    }
}

#[test]
fn legit_corpus_policy_and_apply() {
    for c in cases("legit") {
        let rules = policy_rules(&c);
        assert!(rules.is_empty(), "{}: false reject {rules:?}", c.name);
        // The patch applies to a copy of the fixture (host git on our own data is fine here).
        let d = tempfile::tempdir().unwrap();
        let status = Command::new("cp")
            .arg("-r")
            .arg(corpus().join("fixture"))
            .arg(d.path().join("r"))
            .status()
            .unwrap();
        assert!(status.success());
        let lf =
            patchloop::verify::harness::strip_context_trailing_ws(&c.patch.replace("\r\n", "\n"));
        let mut child = Command::new("git")
            .args(["apply", "--check", "--ignore-whitespace", "-"])
            .current_dir(d.path().join("r"))
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(lf.as_bytes())
            .unwrap();
        assert!(child.wait().unwrap().success(), "{} does not apply", c.name);
    }
}

const TAG: &str = "patchloop-verify-corpus:test";

async fn run_case(
    d: &bollard::Docker,
    c: &Case,
    reruns: usize,
) -> patchloop::verify::receipt::Receipt {
    let image = PreparedImage {
        tag: TAG.into(),
        tests_dirs: vec!["tests".into()],
        test_cmd: patchloop::testcmd::TestCommand::parse("python -m pytest").unwrap(),
    };
    let mut req = VerifyRequest::new(image, c.patch.clone(), c.meta.fail_to_pass.clone());
    req.reruns = reruns;
    req.run_id = format!("test-corpus-{}", c.name);
    verify(d, &req, &DirTree(corpus().join("fixture"))).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docker_corpora_end_to_end() {
    use futures_util::StreamExt;
    let d = docker::connect()
        .await
        .expect("Docker is required for this test");
    fixture_image(&d, &corpus().join("fixture"), TAG).await;
    let all: Vec<(&str, Case)> = cases("legit")
        .into_iter()
        .map(|c| ("legit", c))
        .chain(cases("tamper").into_iter().map(|c| ("tamper", c)))
        // `PATCHLOOP_CORPUS_ONLY=substring` runs a subset (debugging one case).
        .filter(|(_, c)| {
            std::env::var("PATCHLOOP_CORPUS_ONLY").map_or(true, |f| c.name.contains(&f))
        })
        .collect();
    // Three cases at a time: each is its own container, and most of the time is container I/O.
    let results: Vec<_> = futures_util::stream::iter(all.iter())
        .map(|(kind, c)| {
            let d = d.clone();
            async move {
                let started = std::time::Instant::now();
                let r = run_case(&d, c, 2).await;
                (kind, c, r, started.elapsed())
            }
        })
        .buffer_unordered(3)
        .collect()
        .await;
    let mut failures = Vec::new();
    for (kind, c, r, took) in results {
        let got = r.decision.verdict;
        let want = c.meta.verdict.as_str();
        let rule = r.policy.rule_fired.map(|r| r.to_string());
        eprintln!(
            "{kind}/{}: {} ({:.1}s) {}",
            c.name,
            got.as_str(),
            took.as_secs_f64(),
            r.decision.reason.chars().take(200).collect::<String>()
        );
        // A needs_review case is equally stopped when a runtime layer (the guard) already
        // calls it tampered; what it must never be is verified or a plain test failure.
        if std::env::var("PATCHLOOP_CORPUS_ONLY").is_ok() {
            eprintln!(
                "{}",
                serde_json::to_string_pretty(&r.layers).unwrap_or_default()
            );
        }
        let caught = want == "needs_review" && got == Verdict::Tampered;
        if (got.as_str() != want && !caught) || (c.meta.rule.is_some() && rule != c.meta.rule) {
            failures.push(format!(
                "{kind}/{}: want {want} {:?}, got {} {:?}: {}",
                c.name,
                c.meta.rule,
                got.as_str(),
                rule,
                r.decision.reason
            ));
        }
        if *kind == "legit" {
            assert_ne!(got, Verdict::Policy, "{}: false reject", c.name);
        } else {
            assert_ne!(got, Verdict::Verified, "{}: false accept", c.name);
        }
    }
    remove_image(&d, TAG).await;
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
