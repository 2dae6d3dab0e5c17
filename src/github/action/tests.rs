use super::*;

#[test]
fn the_summary_lists_every_attempt_with_its_spend() {
    use crate::verify::receipt::RepairAttempt;
    assert_eq!(attempts_table(&[]), "");
    let t = attempts_table(&[
        RepairAttempt {
            tier: 0,
            model: "openai:qwen2.5-coder-1.5b at http://10.0.0.5:8080/v1".into(),
            strategy: crate::config::repair::Strategy::Candidates,
            result: crate::verify::attempts::Outcome::NotPassing,
            tokens: 6000,
            cost_usd: 0.0,
            model_ms: 61_500,
            wall_ms: 70_000,
            candidates: 4,
            passing: 0,
            why: String::new(),
            ..RepairAttempt::default()
        },
        RepairAttempt {
            tier: 1,
            model: "ollama:qwen2.5-coder:14b".into(),
            strategy: crate::config::repair::Strategy::Loop,
            result: crate::verify::attempts::Outcome::VERIFIED,
            tokens: 20_000,
            cost_usd: 0.0,
            model_ms: 90_000,
            wall_ms: 120_000,
            ..Default::default()
        },
    ]);
    let rows: Vec<&str> = t.trim_end().lines().collect();
    assert_eq!(rows.len(), 4, "{t}");
    assert!(
        rows[2].contains("| candidates | `not_passing` | 6000 | 61.5 s | 70.0 s |"),
        "{t}"
    );
    assert!(rows[2].contains("4 (0 passed)"), "{t}");
    assert!(rows[3].starts_with("| 1 | "), "{t}");
    assert!(
        rows[3].contains("| loop | `verified` |") && rows[3].ends_with("| — |"),
        "{t}"
    );
    // The model's endpoint is not printed (the summary is public).
    assert!(!t.contains("10.0.0.5"), "{t}");
}

#[test]
fn hints_name_the_permission() {
    assert_eq!(
        permission_hint("POST", "/repos/o/r/pulls/2/reviews").0,
        "pull-requests: write"
    );
    assert!(
        permission_hint("POST", "/repos/o/r/git/blobs")
            .0
            .starts_with("contents: write")
    );
    assert_eq!(
        permission_hint("GET", "/repos/o/r/actions/runs/1/jobs").0,
        "actions: read"
    );
    let e = explain(GitHubError::Status {
        method: "POST".into(),
        route: "/repos/o/r/pulls/2/reviews".into(),
        status: 403,
        message: "Resource not accessible by integration".into(),
    });
    let s = e.to_string();
    assert!(
        s.contains("pull-requests: write") && s.contains("permissions:\n"),
        "{s}"
    );
}

#[tokio::test]
async fn a_checkout_git_cannot_read_is_an_error_not_a_skipped_check() {
    let d = tempfile::tempdir().unwrap();
    assert_eq!(checkout_head(d.path()).await.unwrap(), None, "no .git");
    std::fs::create_dir(d.path().join(".git")).unwrap();
    let e = checkout_head(d.path()).await.unwrap_err().to_string();
    assert!(
        e.contains("cannot read the commit") && e.contains("actions/checkout"),
        "{e}"
    );
}

#[test]
fn annotations_are_one_line() {
    assert_eq!(
        annotation("error", "a\nb%"),
        "::error title=patchloop::a%0Ab%25"
    );
}
