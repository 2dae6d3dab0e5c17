//! Event payloads (`GITHUB_EVENT_PATH`) and the pure decision: act on it, or ignore it
//! with a one-line reason.
//!
//! The structs are deliberately small and lenient: real payloads omit fields GitHub's schema
//! calls required, so everything not needed for the decision is absent and most fields are
//! optional. Malformed JSON is reported with the path of the bad field.

use serde::Deserialize;

use super::command;

/// Branches patchloop creates start with this; runs on them are never repaired.
pub const BOT_BRANCH_PREFIX: &str = "patchloop/";
/// Commit trailer on every commit patchloop creates; runs for such commits are ignored.
pub const BOT_COMMIT_TRAILER: &str = "Patchloop-Run:";

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Account {
    pub login: String,
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

impl Account {
    pub fn is_bot(&self) -> bool {
        self.kind.as_deref() == Some("Bot") || self.login.ends_with("[bot]")
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct Repository {
    pub full_name: String,
    #[serde(default)]
    pub default_branch: Option<String>,
    #[serde(default)]
    pub owner: Option<Account>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PrRef {
    pub number: u64,
    #[serde(default)]
    pub head: Option<BranchRef>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct BranchRef {
    #[serde(rename = "ref", default)]
    pub git_ref: Option<String>,
    #[serde(default)]
    pub sha: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct HeadCommit {
    #[serde(default)]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WorkflowRun {
    pub id: u64,
    pub head_sha: String,
    #[serde(default)]
    pub head_branch: Option<String>,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub event: Option<String>,
    #[serde(default)]
    pub run_attempt: Option<u64>,
    #[serde(default)]
    pub pull_requests: Vec<PrRef>,
    #[serde(default)]
    pub head_repository: Option<Repository>,
    #[serde(default)]
    pub head_commit: Option<HeadCommit>,
    #[serde(default)]
    pub actor: Option<Account>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CheckSuite {
    pub id: u64,
    pub head_sha: String,
    #[serde(default)]
    pub head_branch: Option<String>,
    #[serde(default)]
    pub conclusion: Option<String>,
    #[serde(default)]
    pub pull_requests: Vec<PrRef>,
    #[serde(default)]
    pub head_commit: Option<HeadCommit>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Comment {
    pub id: u64,
    #[serde(default)]
    pub body: Option<String>,
    pub user: Account,
    #[serde(default)]
    pub author_association: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Issue {
    pub number: u64,
    /// Present only when the issue is a pull request.
    #[serde(default)]
    pub pull_request: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PullRequest {
    pub number: u64,
    pub head: PrSide,
    #[serde(default)]
    pub base: Option<PrSide>,
    #[serde(default)]
    pub user: Option<Account>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PrSide {
    #[serde(rename = "ref")]
    pub git_ref: String,
    pub sha: String,
    #[serde(default)]
    pub repo: Option<Repository>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct WorkflowRunEvent {
    #[serde(default)]
    pub action: Option<String>,
    pub workflow_run: WorkflowRun,
    pub repository: Repository,
    #[serde(default)]
    pub sender: Option<Account>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct CheckSuiteEvent {
    #[serde(default)]
    pub action: Option<String>,
    pub check_suite: CheckSuite,
    pub repository: Repository,
    #[serde(default)]
    pub sender: Option<Account>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct DispatchEvent {
    #[serde(default)]
    pub inputs: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(rename = "ref", default)]
    pub git_ref: Option<String>,
    pub repository: Repository,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PullRequestEvent {
    pub action: String,
    pub pull_request: PullRequest,
    pub repository: Repository,
    #[serde(default)]
    pub sender: Option<Account>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct IssueCommentEvent {
    pub action: String,
    pub issue: Issue,
    pub comment: Comment,
    pub repository: Repository,
}

/// A parsed event of a kind patchloop knows.
#[derive(Debug, Clone)]
pub enum Event {
    WorkflowRun(WorkflowRunEvent),
    CheckSuite(CheckSuiteEvent),
    WorkflowDispatch(DispatchEvent),
    PullRequest(PullRequestEvent),
    IssueComment(IssueCommentEvent),
    /// Any other event name: parsed no further.
    Other(String),
}

/// A malformed event file.
#[derive(Debug, thiserror::Error)]
#[error("malformed `{event}` event JSON at `{path}`: {message}")]
pub struct EventParseError {
    pub event: String,
    /// Path of the bad field, e.g. `workflow_run.head_sha`.
    pub path: String,
    pub message: String,
}

fn parse_as<T: serde::de::DeserializeOwned>(name: &str, json: &[u8]) -> Result<T, EventParseError> {
    let de = &mut serde_json::Deserializer::from_slice(json);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        EventParseError {
            event: name.to_string(),
            path: if path.is_empty() { ".".into() } else { path },
            message: e.into_inner().to_string(),
        }
    })
}

/// Parse the event file for `name` (the `GITHUB_EVENT_NAME`).
pub fn parse_event(name: &str, json: &[u8]) -> Result<Event, EventParseError> {
    Ok(match name {
        "workflow_run" => Event::WorkflowRun(parse_as(name, json)?),
        "check_suite" => Event::CheckSuite(parse_as(name, json)?),
        "workflow_dispatch" => Event::WorkflowDispatch(parse_as(name, json)?),
        "pull_request" | "pull_request_target" => Event::PullRequest(parse_as(name, json)?),
        "issue_comment" => Event::IssueComment(parse_as(name, json)?),
        other => {
            // Still reject a file that is not JSON at all: the runner wrote it, so it is a bug.
            let _: serde_json::Value = parse_as(other, json)?;
            Event::Other(other.to_string())
        }
    })
}

/// Owner and name of a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoId {
    pub owner: String,
    pub name: String,
}

impl RepoId {
    pub fn parse(full_name: &str) -> Option<RepoId> {
        let (o, n) = full_name.split_once('/')?;
        if o.is_empty() || n.is_empty() || n.contains('/') {
            return None;
        }
        Some(RepoId {
            owner: o.to_string(),
            name: n.to_string(),
        })
    }
    pub fn full(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }
}

/// What started the run, with what the later steps need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TriggerKind {
    WorkflowRun {
        run_id: u64,
        attempt: Option<u64>,
    },
    CheckSuite {
        suite_id: u64,
    },
    Dispatch {
        git_ref: String,
    },
    PullRequest,
    Comment {
        comment_id: u64,
        user: String,
        model: Option<String>,
    },
}

/// A decided action: repair this commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trigger {
    pub kind: TriggerKind,
    pub repo: RepoId,
    /// The failing commit. `None` for comments and dispatches: pinned later through the API.
    pub head_sha: Option<String>,
    pub head_branch: Option<String>,
    /// The PR, when the event names one (fork runs do not: look it up by head SHA).
    pub pr: Option<u64>,
    /// `owner` of the head repository when it differs (fork), for PR lookup.
    pub head_owner: Option<String>,
    /// `owner/name` of the repository the head commit comes from, when the event says
    /// (`None`: unknown, resolved through the pull request or treated as another repository).
    pub head_repo: Option<String>,
    pub default_branch: Option<String>,
}

/// The pure decision for an event.
#[derive(Debug, Clone, PartialEq, Eq)]
// One decision per run: boxing the trigger would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Decision {
    Act(Trigger),
    /// A one-line reason, printed as a notice; the run exits 0.
    Ignore(String),
}

/// Event-level policy from the config.
#[derive(Debug, Clone, Default)]
pub struct EventPolicy {
    /// `pull_request` events start a repair only when opted in.
    pub pull_request_opt_in: bool,
}

fn own_commit(msg: Option<&HeadCommit>) -> bool {
    msg.and_then(|c| c.message.as_deref())
        .is_some_and(|m| m.lines().any(|l| l.starts_with(BOT_COMMIT_TRAILER)))
}

fn own_branch(b: Option<&str>) -> bool {
    b.is_some_and(|b| b.starts_with(BOT_BRANCH_PREFIX))
}

fn repo_id(r: &Repository) -> Result<RepoId, String> {
    RepoId::parse(&r.full_name).ok_or_else(|| {
        format!(
            "ignored because repository.full_name `{}` is not owner/name",
            r.full_name
        )
    })
}

/// Decide what to do with an event. Pure: the comment's authorisation and the head SHA
/// pinning happen afterwards, through the API.
pub fn decide(event: &Event, policy: &EventPolicy) -> Decision {
    let ignore = |s: String| Decision::Ignore(format!("ignored because {s}"));
    match event {
        Event::WorkflowRun(e) => {
            let run = &e.workflow_run;
            if e.action.as_deref() != Some("completed") {
                return ignore(format!(
                    "workflow_run action is `{}`, not `completed`",
                    e.action.as_deref().unwrap_or("")
                ));
            }
            if run.conclusion.as_deref() != Some("failure") {
                return ignore(format!(
                    "the workflow run concluded `{}`, not `failure`",
                    run.conclusion.as_deref().unwrap_or("null")
                ));
            }
            if own_branch(run.head_branch.as_deref()) || own_commit(run.head_commit.as_ref()) {
                return ignore("the run is on a patchloop branch or commit".into());
            }
            let repo = match repo_id(&e.repository) {
                Ok(r) => r,
                Err(why) => return Decision::Ignore(why),
            };
            let head_owner = run
                .head_repository
                .as_ref()
                .and_then(|r| RepoId::parse(&r.full_name))
                .filter(|h| h != &repo)
                .map(|h| h.owner);
            // A listed PR may belong to another repository (upstream quirk): only trust one
            // whose head SHA matches, or one without head info.
            let pr = run
                .pull_requests
                .iter()
                .find(|p| {
                    p.head
                        .as_ref()
                        .and_then(|h| h.sha.as_deref())
                        .is_none_or(|s| s == run.head_sha)
                })
                .map(|p| p.number);
            Decision::Act(Trigger {
                kind: TriggerKind::WorkflowRun {
                    run_id: run.id,
                    attempt: run.run_attempt,
                },
                repo,
                head_sha: Some(run.head_sha.clone()),
                head_branch: run.head_branch.clone(),
                pr,
                head_owner,
                head_repo: run.head_repository.as_ref().map(|r| r.full_name.clone()),
                default_branch: e.repository.default_branch.clone(),
            })
        }
        Event::CheckSuite(e) => {
            let s = &e.check_suite;
            if e.action.as_deref() != Some("completed") {
                return ignore(format!(
                    "check_suite action is `{}`, not `completed`",
                    e.action.as_deref().unwrap_or("")
                ));
            }
            if s.conclusion.as_deref() != Some("failure") {
                return ignore(format!(
                    "the check suite concluded `{}`, not `failure`",
                    s.conclusion.as_deref().unwrap_or("null")
                ));
            }
            if own_branch(s.head_branch.as_deref()) || own_commit(s.head_commit.as_ref()) {
                return ignore("the check suite is on a patchloop branch or commit".into());
            }
            let repo = match repo_id(&e.repository) {
                Ok(r) => r,
                Err(why) => return Decision::Ignore(why),
            };
            Decision::Act(Trigger {
                kind: TriggerKind::CheckSuite { suite_id: s.id },
                repo,
                head_sha: Some(s.head_sha.clone()),
                head_branch: s.head_branch.clone(),
                pr: s.pull_requests.first().map(|p| p.number),
                head_owner: None,
                head_repo: None,
                default_branch: e.repository.default_branch.clone(),
            })
        }
        Event::WorkflowDispatch(e) => {
            let input_ref = e
                .inputs
                .as_ref()
                .and_then(|i| i.get("ref"))
                .and_then(|v| v.as_str())
                .filter(|s| !s.is_empty());
            let git_ref = match input_ref.or(e.git_ref.as_deref()) {
                Some(r) => r.to_string(),
                None => {
                    return ignore("workflow_dispatch has neither input `ref` nor `ref`".into());
                }
            };
            let branch = git_ref.strip_prefix("refs/heads/").unwrap_or(&git_ref);
            if own_branch(Some(branch)) {
                return ignore("the ref is a patchloop branch".into());
            }
            let repo = match repo_id(&e.repository) {
                Ok(r) => r,
                Err(why) => return Decision::Ignore(why),
            };
            Decision::Act(Trigger {
                kind: TriggerKind::Dispatch {
                    git_ref: git_ref.clone(),
                },
                repo,
                head_sha: None,
                head_branch: Some(branch.to_string()),
                pr: None,
                head_owner: None,
                // A dispatched ref is a ref of this repository.
                head_repo: Some(e.repository.full_name.clone()),
                default_branch: e.repository.default_branch.clone(),
            })
        }
        Event::PullRequest(e) => {
            if !policy.pull_request_opt_in {
                return ignore(
                    "pull_request events are opt-in (set `triggers.pull_request: true`)".into(),
                );
            }
            if !matches!(e.action.as_str(), "opened" | "synchronize" | "reopened") {
                return ignore(format!("pull_request action `{}` is not handled", e.action));
            }
            let pr = &e.pull_request;
            if own_branch(Some(&pr.head.git_ref)) {
                return ignore("the pull request is patchloop's own branch".into());
            }
            if e.sender.as_ref().is_some_and(Account::is_bot) {
                return ignore("the pull request event was sent by a bot".into());
            }
            let repo = match repo_id(&e.repository) {
                Ok(r) => r,
                Err(why) => return Decision::Ignore(why),
            };
            let head_owner = pr
                .head
                .repo
                .as_ref()
                .and_then(|r| RepoId::parse(&r.full_name))
                .filter(|h| h != &repo)
                .map(|h| h.owner);
            Decision::Act(Trigger {
                kind: TriggerKind::PullRequest,
                repo,
                head_sha: Some(pr.head.sha.clone()),
                head_branch: Some(pr.head.git_ref.clone()),
                pr: Some(pr.number),
                head_owner,
                head_repo: pr.head.repo.as_ref().map(|r| r.full_name.clone()),
                default_branch: e.repository.default_branch.clone(),
            })
        }
        Event::IssueComment(e) => {
            if e.action != "created" {
                return ignore(format!(
                    "the comment was {}, and only newly created comments are commands",
                    e.action
                ));
            }
            if e.issue.pull_request.is_none() {
                return ignore(format!(
                    "#{} is an issue, not a pull request",
                    e.issue.number
                ));
            }
            if e.comment.user.is_bot() {
                return ignore(format!(
                    "the comment is by a bot ({})",
                    e.comment.user.login
                ));
            }
            let body = e.comment.body.as_deref().unwrap_or("");
            if body.contains(super::render::MARKER_PREFIX) {
                return ignore("the comment is patchloop's own".into());
            }
            let cmd = match command::parse(body) {
                Ok(c) => c,
                Err(why) => return ignore(why.to_string()),
            };
            let repo = match repo_id(&e.repository) {
                Ok(r) => r,
                Err(why) => return Decision::Ignore(why),
            };
            Decision::Act(Trigger {
                kind: TriggerKind::Comment {
                    comment_id: e.comment.id,
                    user: e.comment.user.login.clone(),
                    model: cmd.model,
                },
                repo,
                head_sha: None,
                head_branch: None,
                pr: Some(e.issue.number),
                head_owner: None,
                // Known only from the pull request, which is fetched after the decision.
                head_repo: None,
                default_branch: e.repository.default_branch.clone(),
            })
        }
        Event::Other(name) => ignore(format!(
            "patchloop does not handle `{name}` events (it handles workflow_run, check_suite, \
             workflow_dispatch, pull_request, issue_comment)"
        )),
    }
}
