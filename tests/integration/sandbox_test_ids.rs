//! Test ids a user's repository may have, through the sandbox's test tool against the real
//! Docker daemon: parametrised ids holding spaces, `#`, `$`, `::`, brackets, quotes, a tab, a
//! backslash and non-ASCII (pytest escapes it) come back from `run_tests` as the very node ids
//! pytest collects, and each can be run alone by that id. (The test split's miner once lost
//! fixes whose failing tests had such ids; a repository whose only failing test has one would
//! get no repair.) Fails when Docker is missing.

use crate::verify_common;

use std::collections::BTreeSet;

use patchloop::agent::tools::{ToolConfig, run_tests};
use patchloop::sandbox::docker;
use patchloop::sandbox::{ExecRequest, Sandbox};
use verify_common::{fixture_of, remove_image};

const TAG: &str = "patchloop-test-ids:test";

const LIB: &str = "def strip_comment(s):\n    return s\n";

const TESTS: &str = r##"import pytest
from lib import strip_comment


@pytest.mark.parametrize("s", [
    "KEY= # comment", "a b #c", "x$y # z", "p::q #r", "( as ) #x", "case , end #y",
    "[in] #z", "\u00e9 #w", "tab\there #t", 'q"uote #q', "back\\slash #b", "it's #s",
])
def test_strip(s):
    assert "#" not in strip_comment(s)


class TestKind:
    @pytest.mark.parametrize("s", ["plain", "with space"])
    def test_kept(self, s):
        assert strip_comment(s) == s
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn awkward_parametrised_ids_round_trip_through_the_test_tool() {
    let d = docker::connect()
        .await
        .expect("Docker is required for this test");
    let _dir = fixture_of(&d, &[("lib.py", LIB), ("tests/test_strip.py", TESTS)], TAG).await;
    let c = patchloop::sandbox::container::Container::start(
        &d,
        TAG,
        &patchloop::sandbox::policy::ContainerPolicy::default(),
        "test-ids",
        "ids",
    )
    .await
    .unwrap();

    // pytest's own word on the ids, in the same container.
    let collected = c
        .exec(ExecRequest::argv([
            "python",
            "-m",
            "pytest",
            "-q",
            "--co",
            "-p",
            "no:cacheprovider",
            "tests/test_strip.py",
        ]))
        .await
        .unwrap()
        .output
        .render();
    let ids: Vec<String> = collected
        .lines()
        .filter(|l| l.starts_with("tests/"))
        .map(str::to_string)
        .collect();
    assert_eq!(ids.len(), 14, "{collected}");
    let failing_ids: BTreeSet<String> = ids
        .iter()
        .filter(|i| i.contains("test_strip["))
        .cloned()
        .collect();
    assert_eq!(failing_ids.len(), 12);

    let cfg = ToolConfig::default();
    let all = run_tests(&c, &cfg, &[]).await.unwrap();
    let s = all.summary.expect("a summary");
    assert_eq!((s.passed, s.failed), (2, 12), "{}", all.output);
    let seen: BTreeSet<String> = s.failing.iter().cloned().collect();
    assert_eq!(seen, failing_ids, "{}", all.output);

    // Each awkward id selects exactly itself.
    for id in [
        "tests/test_strip.py::test_strip[p::q #r]",
        "tests/test_strip.py::test_strip[x$y # z]",
    ] {
        assert!(
            failing_ids.contains(id),
            "{id} not collected: {failing_ids:?}"
        );
        let one = run_tests(&c, &cfg, &[id.to_string()]).await.unwrap();
        let s = one.summary.expect("a summary");
        assert_eq!(s.failing, [id], "{}", one.output);
        assert_eq!(s.passed + s.failed, 1, "{}", one.output);
    }
    let _ = c.remove().await;
    remove_image(&d, TAG).await;
}
