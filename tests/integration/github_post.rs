//! Posting against the mock GitHub: suggestion anchoring, idempotency, retries, the secret
//! scan, pr mode. Every request body is validated against the OpenAPI subset.

use crate::github_common;

use std::sync::Arc;
use std::time::Duration;

use github_common::*;
use patchloop::github::client::{GitHub, GitHubError};
use patchloop::github::diff::{commentable_ranges, place};
use patchloop::github::event::RepoId;
use patchloop::github::post::{Mode, PostError, Target};

const PR_CALC: &str = "@@ -1,3 +1,10 @@\n a\n+b\n+c\n+d\n+e\n+f\n+g\n+h\n b2\n c2\n@@ -20,3 +25,5 @@\n x\n+y\n+z\n w\n v\n";
const PR_NEW: &str = "@@ -0,0 +1,5 @@\n+a\n+b\n+c\n+d\n+e\n";

fn ours() -> String {
    [
        "diff --git a/src/calc.py b/src/calc.py\n--- a/src/calc.py\n+++ b/src/calc.py\n",
        // inside, single line (5)
        "@@ -4,3 +4,3 @@\n def sub(a, b):\n-    return a + b\n+    return a - b\n \n",
        // pure insertion after line 6 → anchored on 6
        "@@ -6,2 +6,3 @@\n c6\n+new\n c7\n",
        // partly outside (10..11, PR hunk ends at 10)
        "@@ -9,4 +10,4 @@\n c9\n-l10\n-l11\n+x\n+y\n c12\n",
        // deletion inside the second PR hunk (26..27)
        "@@ -25,4 +26,2 @@\n c25\n-l26\n-l27\n c28\n",
        // wholly outside
        "@@ -39,3 +38,3 @@\n c\n-l40\n+x40\n c\n",
        "diff --git a/src/new_in_pr.py b/src/new_in_pr.py\n--- a/src/new_in_pr.py\n+++ b/src/new_in_pr.py\n",
        // multi-line inside a file the PR added (2..3)
        "@@ -1,4 +1,3 @@\n a\n-b\n-c\n+BC\n d\n",
        "diff --git a/tests/new.py b/tests/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/new.py\n@@ -0,0 +1,2 @@\n+a\n+b\n",
    ]
    .concat()
}

fn pr_files() -> Vec<(&'static str, &'static str, &'static str)> {
    vec![
        ("src/calc.py", "modified", PR_CALC),
        ("src/new_in_pr.py", "added", PR_NEW),
    ]
}

#[test]
fn suggestion_anchoring() {
    let ranges = commentable_ranges(pr_files().iter().map(|(f, _, p)| (*f, *p)));
    assert_eq!(ranges["src/calc.py"], vec![(1, 10), (25, 29)]);
    let p = place(&ours(), &ranges);
    let got: Vec<(&str, u64, u64, Vec<&str>)> = p
        .suggestions
        .iter()
        .map(|s| {
            (
                s.path.as_str(),
                s.start,
                s.end,
                s.replacement.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("src/calc.py", 5, 5, vec!["    return a - b"]),
            ("src/calc.py", 6, 6, vec!["c6", "new"]),
            ("src/calc.py", 26, 27, vec![]),
            ("src/new_in_pr.py", 2, 3, vec!["BC"]),
        ]
    );
    // The rest is a valid diff of exactly the hunks that did not fit.
    assert!(p.rest.contains("@@ -9,4 +10,4 @@"), "{}", p.rest);
    assert!(p.rest.contains("@@ -39,3 +38,3 @@"));
    assert!(p.rest.contains("+++ b/tests/new.py"));
    assert!(!p.rest.contains("@@ -4,3"));
    assert!(!p.rest.contains("new_in_pr.py"));
    let reparsed = patchloop::github::diff::parse_unified(&p.rest);
    assert_eq!(reparsed.len(), 2);
    assert_eq!(reparsed[0].hunks.len(), 2);
}

fn target(pr: Option<u64>) -> Target {
    Target {
        repo: RepoId {
            owner: OWNER.into(),
            name: REPO.into(),
        },
        pr,
        sha: HEAD.into(),
        branch: Some("changes".into()),
        may_push: true,
    }
}

fn client(mock: &MockGitHub, clock: Arc<FakeClock>) -> GitHub {
    GitHub::new(
        &mock.url(),
        Some("ghs_testtoken0123456789abcdefghijklmnop"),
        clock,
        fast_policy(),
    )
    .unwrap()
}

#[tokio::test]
async fn suggest_posts_one_review_and_one_comment() {
    let mock = MockGitHub::start().await;
    mock.add_pr(2, HEAD, pr_files());
    let gh = client(&mock, Arc::new(FakeClock::default()));
    let posted = gh
        .post_outcome(&target(Some(2)), &verified(&ours()), Mode::Suggest, false)
        .await
        .unwrap();
    assert_eq!(posted.suggestions, 4);
    assert!(posted.review_id.is_some());
    assert!(
        posted
            .comment_url
            .as_deref()
            .unwrap()
            .contains("issuecomment-")
    );
    mock.with(|s| {
        assert_eq!(s.reviews.len(), 1);
        let r = &s.reviews[0];
        assert_eq!(r["event"], "COMMENT");
        assert_eq!(r["commit_id"], HEAD);
        let cs = r["comments"].as_array().unwrap();
        assert_eq!(cs.len(), 4);
        assert_eq!(cs[0]["line"], 5);
        assert!(cs[0].get("start_line").is_none());
        assert_eq!(
            (cs[2]["start_line"].as_u64(), cs[2]["line"].as_u64()),
            (Some(26), Some(27))
        );
        assert!(
            cs[2]["body"]
                .as_str()
                .unwrap()
                .starts_with("```suggestion\n```")
        );
        assert_eq!(s.comments.len(), 1);
        let body = &s.comments[0].2;
        assert!(body.contains("```diff"), "{body}");
        assert!(body.contains("git apply"));
        assert!(body.contains("<!-- patchloop:v1 repo=Codertocat/Hello-World sha=ec26c3e"));
    });
    assert_eq!(mock.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn twenty_reruns_make_exactly_one_comment_and_one_review() {
    let mock = MockGitHub::start().await;
    mock.add_pr(2, HEAD, pr_files());
    let gh = client(&mock, Arc::new(FakeClock::default()));
    for _ in 0..20 {
        gh.post_outcome(&target(Some(2)), &verified(&ours()), Mode::Suggest, false)
            .await
            .unwrap();
    }
    mock.with(|s| {
        assert_eq!(s.comments.len(), 1);
        assert_eq!(s.reviews.len(), 1);
    });
    let edits = mock.writes().iter().filter(|r| r.method == "PATCH").count();
    assert_eq!(edits, 19, "re-runs edit the comment");
    assert_eq!(mock.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn a_moved_head_posts_nothing() {
    let mock = MockGitHub::start().await;
    mock.add_pr(2, "0000000000000000000000000000000000000001", pr_files());
    let gh = client(&mock, Arc::new(FakeClock::default()));
    let posted = gh
        .post_outcome(&target(Some(2)), &verified(&ours()), Mode::Suggest, false)
        .await
        .unwrap();
    assert!(posted.skipped.unwrap().contains("moved"));
    assert!(mock.writes().is_empty());
}

#[tokio::test]
async fn unverified_outcomes_post_nothing_unless_asked() {
    let mock = MockGitHub::start().await;
    mock.add_pr(2, HEAD, pr_files());
    let gh = client(&mock, Arc::new(FakeClock::default()));
    let mut o = verified(&ours());
    o.verdict = patchloop::github::Outcome::NotVerified;
    let posted = gh
        .post_outcome(&target(Some(2)), &o, Mode::Suggest, false)
        .await
        .unwrap();
    assert!(posted.skipped.is_some());
    assert!(mock.writes().is_empty());
    gh.post_outcome(&target(Some(2)), &o, Mode::Suggest, true)
        .await
        .unwrap();
    mock.with(|s| {
        assert_eq!(s.comments.len(), 1);
        assert!(s.comments[0].2.contains("no verified fix"));
        assert!(s.reviews.is_empty());
    });
}

#[tokio::test]
async fn ambiguous_post_is_requeried_before_retrying() {
    let mock = MockGitHub::start().await;
    mock.add_pr(2, HEAD, pr_files());
    mock.with(|s| {
        for (p, m) in [("/issues/2/comments", "POST"), ("/pulls/2/reviews", "POST")] {
            s.faults.push(Fault {
                method: m,
                path_contains: p,
                status: 502,
                headers: vec![],
                body: "bad gateway".into(),
                apply: true,
                times: 1,
                delay: None,
            });
        }
    });
    let gh = client(&mock, Arc::new(FakeClock::default()));
    gh.post_outcome(&target(Some(2)), &verified(&ours()), Mode::Suggest, false)
        .await
        .unwrap();
    mock.with(|s| {
        assert_eq!(s.comments.len(), 1, "the comment landed despite the 502");
        assert_eq!(s.reviews.len(), 1);
    });
}

#[tokio::test]
async fn ambiguous_timeout_that_did_not_land_is_retried_once() {
    let mock = MockGitHub::start().await;
    mock.add_pr(2, HEAD, pr_files());
    mock.with(|s| {
        s.faults.push(Fault {
            method: "POST",
            path_contains: "/issues/2/comments",
            status: 504,
            headers: vec![],
            body: String::new(),
            apply: false,
            times: 1,
            delay: None,
        });
    });
    let gh = client(&mock, Arc::new(FakeClock::default()));
    gh.post_outcome(&target(Some(2)), &verified(&ours()), Mode::Comment, false)
        .await
        .unwrap();
    mock.with(|s| assert_eq!(s.comments.len(), 1));
}

#[tokio::test]
async fn secondary_rate_limits_wait_with_the_injected_clock() {
    let mock = MockGitHub::start().await;
    mock.add_pr(2, HEAD, pr_files());
    let secondary = "{\"message\":\"You have exceeded a secondary rate limit.\"}";
    mock.with(|s| {
        s.faults.push(Fault {
            method: "POST",
            path_contains: "/reviews",
            status: 403,
            headers: vec![],
            body: secondary.into(),
            apply: false,
            times: 2,
            delay: None,
        });
        s.faults.push(Fault {
            method: "POST",
            path_contains: "/issues/2/comments",
            status: 429,
            headers: vec![("retry-after", "7".into())],
            body: "{}".into(),
            apply: false,
            times: 1,
            delay: None,
        });
        s.faults.push(Fault {
            method: "GET",
            path_contains: "/pulls/2/files",
            status: 403,
            headers: vec![
                ("x-ratelimit-remaining", "0".into()),
                ("x-ratelimit-reset", "1090".into()),
            ],
            body: "{\"message\":\"API rate limit exceeded\"}".into(),
            apply: false,
            times: 1,
            delay: None,
        });
    });
    let clock = Arc::new(FakeClock::default());
    *clock.now.lock().unwrap() = 1000;
    let gh = client(&mock, clock.clone());
    let t0 = std::time::Instant::now();
    gh.post_outcome(&target(Some(2)), &verified(&ours()), Mode::Suggest, false)
        .await
        .unwrap();
    assert!(t0.elapsed() < Duration::from_secs(10), "no real sleeping");
    let sleeps = clock.sleeps.lock().unwrap().clone();
    assert_eq!(
        sleeps,
        vec![
            Duration::from_secs(91),
            Duration::from_secs(60),
            Duration::from_secs(120),
            Duration::from_secs(7)
        ]
    );
    mock.with(|s| {
        assert_eq!(s.reviews.len(), 1);
        assert_eq!(s.comments.len(), 1);
    });
}

#[tokio::test]
async fn permanent_errors_are_not_retried() {
    let mock = MockGitHub::start().await;
    mock.add_pr(2, HEAD, pr_files());
    mock.with(|s| {
        s.faults.push(Fault {
            method: "POST",
            path_contains: "/issues/2/comments",
            status: 403,
            headers: vec![],
            body: "{\"message\":\"Resource not accessible by integration\"}".into(),
            apply: false,
            times: 5,
            delay: None,
        });
    });
    let clock = Arc::new(FakeClock::default());
    let gh = client(&mock, clock.clone());
    let e = gh
        .post_outcome(&target(Some(2)), &verified(&ours()), Mode::Comment, false)
        .await
        .unwrap_err();
    match e {
        PostError::GitHub(GitHubError::Status {
            status: 403,
            message,
            ..
        }) => assert!(message.contains("not accessible")),
        other => panic!("{other}"),
    }
    assert!(clock.sleeps.lock().unwrap().is_empty());
    assert_eq!(mock.writes().len(), 1);
}

#[tokio::test]
async fn a_post_containing_a_secret_is_refused() {
    let mock = MockGitHub::start().await;
    mock.add_pr(2, HEAD, pr_files());
    let gh = client(&mock, Arc::new(FakeClock::default()));
    let leaky = "--- a/src/calc.py\n+++ b/src/calc.py\n@@ -4,3 +4,3 @@\n def sub(a, b):\n-    return a + b\n+    return 'ghp_0123456789abcdefghijABCDEFGHIJ0123456789'\n \n";
    let e = gh
        .post_outcome(&target(Some(2)), &verified(leaky), Mode::Suggest, false)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("GitHub token"), "{e}");
    assert!(
        !e.to_string().contains("ghp_0123"),
        "the error does not echo the secret"
    );
    // The bot's own token is refused as well, whatever its shape.
    let own = verified(&ours().replace("new", "ghs_testtoken0123456789abcdefghijklmnop"));
    assert!(
        gh.post_outcome(&target(Some(2)), &own, Mode::Comment, false)
            .await
            .is_err()
    );
    assert!(mock.writes().is_empty());
}

#[tokio::test]
async fn pr_mode_builds_a_commit_and_one_pull_request() {
    let mock = MockGitHub::start().await;
    mock.with(|s| {
        s.contents.insert(
            "src/calc.py".into(),
            "def sub(a, b):\n    return a + b\n\n".into(),
        );
    });
    let gh = client(&mock, Arc::new(FakeClock::default()));
    let patch = "diff --git a/src/calc.py b/src/calc.py\n--- a/src/calc.py\n+++ b/src/calc.py\n@@ -1,3 +1,3 @@\n def sub(a, b):\n-    return a + b\n+    return a - b\n \ndiff --git a/tests/t.py b/tests/t.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/t.py\n@@ -0,0 +1 @@\n+x = 1\n";
    let mut t = target(None);
    t.branch = Some("master".into());
    for _ in 0..3 {
        let posted = gh
            .post_outcome(&t, &verified(patch), Mode::Suggest, false)
            .await
            .unwrap();
        assert!(posted.pr_url.is_some(), "{posted:?}");
    }
    mock.with(|s| {
        assert_eq!(s.created_pulls.len(), 1);
        let (_, head, base, body) = &s.created_pulls[0];
        assert_eq!(
            (head.as_str(), base.as_str()),
            ("patchloop/fix-ec26c3e57ca3", "master")
        );
        assert!(body.contains("<!-- patchloop:v1"));
        assert!(
            s.blobs
                .values()
                .any(|b| b == "def sub(a, b):\n    return a - b\n\n")
        );
        assert!(s.blobs.values().any(|b| b == "x = 1\n"));
        assert!(s.refs.contains_key("patchloop/fix-ec26c3e57ca3"));
        // Re-runs: the PR's comment is edited, not duplicated.
        assert_eq!(s.comments.len(), 1);
    });
    let commits: Vec<_> = mock
        .writes()
        .into_iter()
        .filter(|r| r.path.ends_with("/git/commits"))
        .collect();
    assert!(
        commits[0].body.as_ref().unwrap()["message"]
            .as_str()
            .unwrap()
            .contains("Patchloop-Run: ec26c3e")
    );
    assert_eq!(mock.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn dry_run_writes_nothing() {
    let mock = MockGitHub::start().await;
    mock.add_pr(2, HEAD, pr_files());
    let gh = client(&mock, Arc::new(FakeClock::default()));
    let posted = gh
        .post_outcome(&target(Some(2)), &verified(&ours()), Mode::DryRun, false)
        .await
        .unwrap();
    assert_eq!(posted.suggestions, 4);
    assert!(
        posted
            .log
            .iter()
            .any(|l| l.contains("would suggest src/calc.py:5-5"))
    );
    assert!(mock.writes().is_empty());
}

#[test]
fn the_openapi_validator_rejects_bad_bodies() {
    // Guard against a validator that accepts everything.
    let ops = load_operations();
    let review = ops.iter().find(|o| o.id == "pulls/create-review").unwrap();
    let v = review.validator.as_ref().unwrap();
    assert!(v.is_valid(&serde_json::json!({"commit_id": "x", "event": "COMMENT", "comments": [{"path": "a", "body": "b", "line": 1, "side": "RIGHT"}]})));
    assert!(!v.is_valid(&serde_json::json!({"event": "SHOUT"})));
    assert!(!v.is_valid(&serde_json::json!({"comments": [{"path": "a", "line": 1}]})));
    let tree = ops.iter().find(|o| o.id == "git/create-tree").unwrap();
    let v = tree.validator.as_ref().unwrap();
    assert!(v.is_valid(&serde_json::json!({"tree": [{"path": "a", "mode": "100644", "type": "blob", "sha": null}]})), "nullable mapped");
    assert!(
        !v.is_valid(&serde_json::json!({"tree": [{"path": "a", "mode": "777", "type": "blob"}]}))
    );
    assert!(
        ops.iter()
            .find(|o| o.id == "git/update-ref")
            .unwrap()
            .route
            .is_match("/repos/o/r/git/refs/heads/patchloop/fix-1")
    );
}

#[tokio::test]
async fn a_post_that_times_out_but_landed_is_found_by_its_marker() {
    let mock = MockGitHub::start().await;
    mock.add_pr(2, HEAD, pr_files());
    mock.with(|s| {
        s.faults.push(Fault {
            method: "POST",
            path_contains: "/issues/2/comments",
            status: 201,
            headers: vec![],
            body: "{}".into(),
            apply: true,
            times: 1,
            delay: Some(Duration::from_secs(3)),
        });
    });
    let gh = client(&mock, Arc::new(FakeClock::default()));
    gh.post_outcome(&target(Some(2)), &verified(&ours()), Mode::Comment, false)
        .await
        .unwrap();
    mock.with(|s| assert_eq!(s.comments.len(), 1, "re-queried, not re-posted"));
    let posts = mock
        .writes()
        .iter()
        .filter(|r| r.method == "POST" && r.path.ends_with("/issues/2/comments"))
        .count();
    assert_eq!(posts, 1);
}

#[tokio::test]
async fn mutations_are_spaced_by_the_mutation_gap() {
    let mock = MockGitHub::start().await;
    mock.add_pr(2, HEAD, pr_files());
    let clock = Arc::new(FakeClock::default());
    let policy = patchloop::github::client::RetryPolicy {
        mutation_gap: Duration::from_secs(1),
        ..fast_policy()
    };
    let gh = GitHub::new(
        &mock.url(),
        Some("ghs_testtoken0123456789abcdefghijklmnop"),
        clock.clone(),
        policy,
    )
    .unwrap();
    // Review + comment: the second mutation waits for the gap (on the injected clock).
    gh.post_outcome(&target(Some(2)), &verified(&ours()), Mode::Suggest, false)
        .await
        .unwrap();
    let sleeps = clock.sleeps.lock().unwrap().clone();
    assert_eq!(sleeps.len(), 1, "{sleeps:?}");
    assert!(sleeps[0] > Duration::ZERO && sleeps[0] <= Duration::from_secs(1));
}

#[tokio::test]
async fn pr_mode_refuses_a_file_the_api_cannot_find_and_keeps_executable_bits() {
    let patch = "diff --git a/bin/run.sh b/bin/run.sh\n--- a/bin/run.sh\n+++ b/bin/run.sh\n@@ -1,2 +1,2 @@\n #!/bin/sh\n-exit 1\n+exit 0\n\
                 diff --git a/bin/new.sh b/bin/new.sh\nnew file mode 100755\n--- /dev/null\n+++ b/bin/new.sh\n@@ -0,0 +1 @@\n+true\n\
                 diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1 @@\n-a\n+b\n";
    let mut t = target(None);
    t.branch = Some("master".into());

    // A file missing at the commit is an error that names it, not an empty file.
    let mock = MockGitHub::start().await;
    mock.with(|s| {
        s.contents
            .insert("bin/run.sh".into(), "#!/bin/sh\nexit 1\n".into());
    });
    let gh = client(&mock, Arc::new(FakeClock::default()));
    let e = gh
        .post_outcome(&t, &verified(patch), Mode::Pr, false)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("README") && e.contains("not in the tree"), "{e}");
    assert!(!e.contains("out of order"), "{e}");
    assert!(mock.writes().iter().all(|w| !w.path.contains("/git/refs")));

    // In the tree but 404 from the contents API: still an error.
    let mock = MockGitHub::start().await;
    mock.with(|s| {
        s.contents
            .insert("bin/run.sh".into(), "#!/bin/sh\nexit 1\n".into());
        s.contents.insert("README".into(), "a\n".into());
        s.faults.push(Fault {
            method: "GET",
            path_contains: "/contents/README",
            status: 404,
            headers: vec![],
            body: r#"{"message":"Not Found"}"#.into(),
            apply: false,
            times: 10,
            delay: None,
        });
    });
    let gh = client(&mock, Arc::new(FakeClock::default()));
    let e = gh
        .post_outcome(&t, &verified(patch), Mode::Pr, false)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("README") && e.contains("404"), "{e}");

    // Modes: kept from the tree (100755), taken from the diff for a new file.
    let mock = MockGitHub::start().await;
    mock.with(|s| {
        s.contents
            .insert("bin/run.sh".into(), "#!/bin/sh\nexit 1\n".into());
        s.modes.insert("bin/run.sh".into(), "100755".into());
        s.contents.insert("README".into(), "a\n".into());
    });
    let gh = client(&mock, Arc::new(FakeClock::default()));
    let posted = gh
        .post_outcome(&t, &verified(patch), Mode::Pr, false)
        .await
        .unwrap();
    assert!(posted.pr_url.is_some(), "{posted:?}");
    let tree = mock
        .writes()
        .into_iter()
        .find(|r| r.path.ends_with("/git/trees"))
        .unwrap();
    let modes: Vec<(String, String)> = tree.body.unwrap()["tree"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["path"].as_str().unwrap().to_string(),
                e["mode"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        modes,
        vec![
            ("bin/run.sh".to_string(), "100755".to_string()),
            ("bin/new.sh".to_string(), "100755".to_string()),
            ("README".to_string(), "100644".to_string()),
        ]
    );
    assert_eq!(mock.violations(), Vec::<String>::new());
}
