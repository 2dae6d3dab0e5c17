//! Event parsing and the pure decision on every fixture payload.

use std::path::Path;

use patchloop::github::event::{Decision, EventPolicy, TriggerKind, decide, parse_event};

fn fixture(rel: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/github")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn decide_file(name: &str, rel: &str, policy: &EventPolicy) -> Decision {
    let ev = parse_event(name, &fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    decide(&ev, policy)
}

fn ignored(d: &Decision, why: &str) {
    match d {
        Decision::Ignore(s) => {
            assert!(s.starts_with("ignored because"), "{s}");
            assert!(s.contains(why), "{s} (wanted {why})");
            assert!(!s.contains('\n'), "one line: {s}");
        }
        other => panic!("expected ignore ({why}), got {other:?}"),
    }
}

#[test]
fn every_fixture_parses_and_decides() {
    let cases: &[(&str, &str)] = &[
        (
            "workflow_run",
            "webhooks/workflow_run/completed.payload.json",
        ),
        (
            "workflow_run",
            "webhooks/workflow_run/completed.with-pull-requests.payload.json",
        ),
        (
            "workflow_run",
            "webhooks-derived/workflow_run/completed.failure.pull_request.json",
        ),
        (
            "workflow_run",
            "webhooks-derived/workflow_run/completed.failure.push-default-branch.json",
        ),
        ("check_suite", "webhooks/check_suite/completed.payload.json"),
        (
            "check_suite",
            "webhooks-derived/check_suite/completed.failure.json",
        ),
        ("check_run", "webhooks/check_run/completed.1.payload.json"),
        (
            "issue_comment",
            "webhooks/issue_comment/created.payload.json",
        ),
        (
            "issue_comment",
            "webhooks/issue_comment/created.with-installation.payload.json",
        ),
        (
            "issue_comment",
            "webhooks-derived/issue_comment/created.on-pull-request.patchloop-fix.json",
        ),
        ("pull_request", "webhooks/pull_request/opened.payload.json"),
        (
            "pull_request",
            "webhooks/pull_request/synchronize.payload.json",
        ),
        (
            "workflow_dispatch",
            "webhooks/workflow_dispatch/payload.json",
        ),
        (
            "workflow_job",
            "webhooks/workflow_job/completed.failure.with-organization.payload.json",
        ),
    ];
    // Every fixture file is covered.
    let mut on_disk = Vec::new();
    for dir in ["webhooks", "webhooks-derived"] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/github")
            .join(dir);
        for ev in std::fs::read_dir(&root).unwrap() {
            for f in std::fs::read_dir(ev.unwrap().path()).unwrap() {
                let p = f.unwrap().path();
                let rel = p
                    .strip_prefix(root.parent().unwrap())
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                on_disk.push(rel);
            }
        }
    }
    on_disk.sort();
    let mut listed: Vec<String> = cases.iter().map(|c| c.1.to_string()).collect();
    listed.sort();
    assert_eq!(on_disk, listed);
    for (name, rel) in cases {
        let _ = decide_file(
            name,
            rel,
            &EventPolicy {
                pull_request_opt_in: true,
            },
        );
    }
}

#[test]
fn workflow_run_failures_act_and_successes_are_ignored() {
    let p = EventPolicy::default();
    ignored(
        &decide_file(
            "workflow_run",
            "webhooks/workflow_run/completed.payload.json",
            &p,
        ),
        "concluded `success`",
    );
    let Decision::Act(t) = decide_file(
        "workflow_run",
        "webhooks-derived/workflow_run/completed.failure.pull_request.json",
        &p,
    ) else {
        panic!("should act")
    };
    assert_eq!(t.repo.full(), "octo-org/octo-repo");
    assert_eq!(
        t.head_sha.as_deref(),
        Some("ec26c3e57ca3a959ca5aad62de7213c562f8c821")
    );
    assert_eq!(t.pr, Some(2));
    assert_eq!(
        t.kind,
        TriggerKind::WorkflowRun {
            run_id: 289782451,
            attempt: Some(1)
        }
    );

    // Push to the default branch / fork: empty pull_requests → no PR yet (looked up later).
    let Decision::Act(t) = decide_file(
        "workflow_run",
        "webhooks-derived/workflow_run/completed.failure.push-default-branch.json",
        &p,
    ) else {
        panic!("should act")
    };
    assert_eq!(t.pr, None);
    assert_eq!(t.head_branch.as_deref(), Some("master"));
}

#[test]
fn own_branches_and_commits_are_ignored() {
    let mut v: serde_json::Value = serde_json::from_slice(&fixture(
        "webhooks-derived/workflow_run/completed.failure.pull_request.json",
    ))
    .unwrap();
    v["workflow_run"]["head_branch"] = "patchloop/fix-ec26c3e57ca3".into();
    let d = decide(
        &parse_event("workflow_run", v.to_string().as_bytes()).unwrap(),
        &EventPolicy::default(),
    );
    ignored(&d, "patchloop branch");
    v["workflow_run"]["head_branch"] = "feature".into();
    v["workflow_run"]["head_commit"]["message"] = "fix\n\nPatchloop-Run: abc".into();
    let d = decide(
        &parse_event("workflow_run", v.to_string().as_bytes()).unwrap(),
        &EventPolicy::default(),
    );
    ignored(&d, "patchloop branch or commit");
}

#[test]
fn check_suite_and_dispatch() {
    let p = EventPolicy::default();
    ignored(
        &decide_file(
            "check_suite",
            "webhooks/check_suite/completed.payload.json",
            &p,
        ),
        "`success`",
    );
    let Decision::Act(t) = decide_file(
        "check_suite",
        "webhooks-derived/check_suite/completed.failure.json",
        &p,
    ) else {
        panic!()
    };
    assert_eq!(
        (t.pr, t.repo.full().as_str()),
        (Some(2), "Codertocat/Hello-World")
    );
    let Decision::Act(t) = decide_file(
        "workflow_dispatch",
        "webhooks/workflow_dispatch/payload.json",
        &p,
    ) else {
        panic!()
    };
    assert_eq!(
        t.kind,
        TriggerKind::Dispatch {
            git_ref: "refs/heads/master".into()
        }
    );
    assert_eq!(t.head_branch.as_deref(), Some("master"));
}

#[test]
fn pull_request_is_opt_in() {
    ignored(
        &decide_file(
            "pull_request",
            "webhooks/pull_request/opened.payload.json",
            &EventPolicy::default(),
        ),
        "opt-in",
    );
    let on = EventPolicy {
        pull_request_opt_in: true,
    };
    let Decision::Act(t) = decide_file(
        "pull_request",
        "webhooks/pull_request/synchronize.payload.json",
        &on,
    ) else {
        panic!()
    };
    assert_eq!(t.pr, Some(2));
    assert_eq!(
        t.head_sha.as_deref(),
        Some("ec26c3e57ca3a959ca5aad62de7213c562f8c821")
    );
}

#[test]
fn comments() {
    let p = EventPolicy::default();
    ignored(
        &decide_file(
            "issue_comment",
            "webhooks/issue_comment/created.payload.json",
            &p,
        ),
        "not a pull request",
    );
    let Decision::Act(t) = decide_file(
        "issue_comment",
        "webhooks-derived/issue_comment/created.on-pull-request.patchloop-fix.json",
        &p,
    ) else {
        panic!()
    };
    assert_eq!(
        t.kind,
        TriggerKind::Comment {
            comment_id: 492700400,
            user: "Codertocat".into(),
            model: None
        }
    );
    assert_eq!(t.head_sha, None, "pinned only after authorisation");
}

#[test]
fn unhandled_events_are_one_line_notices() {
    let d = decide_file(
        "check_run",
        "webhooks/check_run/completed.1.payload.json",
        &EventPolicy::default(),
    );
    ignored(&d, "does not handle `check_run`");
}

#[test]
fn malformed_json_names_the_bad_field() {
    let mut v: serde_json::Value = serde_json::from_slice(&fixture(
        "webhooks-derived/workflow_run/completed.failure.pull_request.json",
    ))
    .unwrap();
    v["workflow_run"]["head_sha"] = 42.into();
    let e = parse_event("workflow_run", v.to_string().as_bytes()).unwrap_err();
    assert_eq!(e.path, "workflow_run.head_sha");
    assert!(e.to_string().contains("workflow_run.head_sha"), "{e}");

    v["workflow_run"]["head_sha"] = "x".into();
    v["workflow_run"]["pull_requests"][0]["number"] = "two".into();
    let e = parse_event("workflow_run", v.to_string().as_bytes()).unwrap_err();
    assert_eq!(e.path, "workflow_run.pull_requests[0].number");

    let e = parse_event("issue_comment", b"{not json").unwrap_err();
    assert!(e.to_string().contains("malformed `issue_comment`"), "{e}");
}
