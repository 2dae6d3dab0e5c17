//! Consensus among passing candidates (`verify::consensus`) against the real Docker daemon on
//! a tiny Python project: three candidates pass the failing test — two fixes written
//! differently and one that returns the tested answer — and are run against each other on
//! generated inputs in an episode-like container. The two fixes outvote the third; two that
//! disagree alone are a split; two fixes alone agree. Fails when Docker is missing.

use crate::verify_common;

use std::time::Duration;

use patchloop::sandbox::Sandbox;
use patchloop::sandbox::docker;
use patchloop::verify::consensus::{self, Consensus};
use patchloop::verify::evidence::Layer;
use patchloop::verify::fit::line_changes;
use patchloop::verify::signals::ChangedFile;
use verify_common::{fixture_of, remove_image};

const TAG: &str = "patchloop-verify-consensus:test";

/// `clamp` answers `lo` above the range (the bug); `scale` is unchanged by every candidate.
/// A first `clamp` sits in a branch the module never takes (as version shims do): the
/// candidates' version is the one that ran.
const LIB: &str = r#"import sys

if sys.version_info < (3,):
    def clamp(x, lo, hi):
        return min(max(x, lo), hi)


def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return lo
    return x


def scale(xs, k):
    return [x * k for x in xs]
"#;

const TEST: &str = r#"from lib import clamp, scale


def test_clamp_above():
    assert clamp(15, 0, 10) == 10


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_scale():
    assert scale([1, 2], 3) == [3, 6]
"#;

const IDS: [&str; 1] = ["tests/test_lib.py::test_clamp_above"];

fn candidate(from: &str, to: &str) -> Vec<ChangedFile> {
    let post = LIB.replacen(from, to, 1);
    assert_ne!(post, LIB, "{to} changed nothing");
    let (removed, added) = line_changes(LIB, &post);
    vec![ChangedFile {
        path: "lib.py".into(),
        pre: Some(LIB.into()),
        post,
        added,
        removed,
    }]
}

async fn compare(c: &dyn Sandbox, candidates: &[Vec<ChangedFile>]) -> Consensus {
    let ids: Vec<String> = IDS.iter().map(|s| s.to_string()).collect();
    let r = consensus::run(
        c,
        &patchloop::testcmd::TestCommand::python_pytest(),
        &ids,
        candidates,
        Duration::from_secs(6),
    )
    .await
    .unwrap();
    eprintln!("{}\n{:#?}", r.note(), r.rows);
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn passing_candidates_are_run_against_each_other_and_the_odd_one_is_outvoted() {
    let d = docker::connect()
        .await
        .expect("Docker is required for this test");
    let _dir = fixture_of(&d, &[("lib.py", LIB), ("tests/test_lib.py", TEST)], TAG).await;
    let c = patchloop::sandbox::container::Container::start(
        &d,
        TAG,
        &patchloop::sandbox::policy::ContainerPolicy::default(),
        "test-verify-consensus",
        "candidate",
    )
    .await
    .unwrap();

    // Every one of them passes the failing test (15 above [0, 10] is 10).
    let fix = candidate(
        "    if x > hi:\n        return lo",
        "    if x > hi:\n        return hi",
    );
    let fitted = candidate(
        "    if x > hi:\n        return lo",
        "    if x > hi:\n        return 10",
    );
    let rewritten = candidate(
        "    if x > hi:\n        return lo\n    return x",
        "    return min(x, hi)",
    );

    let three = compare(&c, &[fix.clone(), fitted.clone(), rewritten.clone()]).await;
    assert_eq!(three.targets.len(), 1, "{:?}", three.targets);
    assert!(three.outvoted(1) > 0, "{}", three.note());
    assert_eq!((three.outvoted(0), three.outvoted(2)), (0, 0));
    assert!(three.findings(0).is_empty() && three.findings(2).is_empty());
    let f = three.findings(1);
    assert_eq!(
        (f[0].layer, f[0].kind.as_str(), f[0].path.as_str()),
        (Layer::Consensus, "outvoted", "lib.py")
    );
    // The input shown is one the two fixes answer alike and the fitted one does not: check
    // it in Python itself.
    let call = f[0].input.clone().unwrap();
    assert!(call.starts_with("clamp("), "{call}");
    let check = std::process::Command::new("python3")
        .arg("-c")
        .arg(format!(
            "def fix(x, lo, hi):\n    return lo if x < lo else hi if x > hi else x\n\
             def fitted(x, lo, hi):\n    return lo if x < lo else 10 if x > hi else x\n\
             clamp = fix; a = {call}\nclamp = fitted; b = {call}\nassert a != b, (a, b)\n"
        ))
        .status()
        .unwrap();
    assert!(
        check.success(),
        "the two fixes and the fitted one agree on {call}"
    );

    // Two that disagree: no majority, a finding for both.
    let two = compare(&c, &[fix.clone(), fitted]).await;
    assert!(
        two.split(0) > 0 && two.split(0) == two.split(1),
        "{}",
        two.note()
    );
    assert_eq!(two.findings(0)[0].kind, "no_majority");
    assert_eq!(two.findings(1)[0].kind, "no_majority");

    // Two fixes written differently agree on everything generated.
    let agree = compare(&c, &[fix, rewritten]).await;
    let decided: usize = agree.rows.iter().map(|r| r.examples).sum();
    assert!(decided >= 20, "{}", agree.note());
    assert!(
        agree.findings(0).is_empty() && agree.findings(1).is_empty(),
        "{}",
        agree.note()
    );

    assert!(
        c.diff().await.unwrap().trim().is_empty(),
        "the workspace changed"
    );
    let _ = c.remove().await;
    remove_image(&d, TAG).await;
}
