//! `patchloop action`: from an event file to a repair and a post.
//!
//! decide (pure) → authorise (API) → pin the head → one attempt per (repo, SHA) → logs →
//! repair (through [`Repairer`], which never sees the token) → post → summary and outputs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, anyhow};

use super::client::{Clock, GitHub, GitHubError, RetryPolicy};
use super::event::{
    Decision, Event, EventPolicy, RepoId, Trigger, TriggerKind, decide, parse_event,
};
use super::post::{Mode, PostError, Posted, Target, branch_name};
use super::render::{Marker, fenced};
use super::{RepairRequest, Repairer, logs};
use crate::config::{self, Config, NoPrFallback};

mod config_layers;
mod summary;

pub use config_layers::{ConfigSource, load_config};
use summary::report;
pub use summary::{annotation, attempts_table, spend_line, write_files};

/// Command-line arguments of `patchloop action`.
#[derive(Debug, Clone, Default)]
pub struct ActionArgs {
    pub event_name: Option<String>,
    pub event_path: Option<PathBuf>,
    pub dry_run: bool,
    /// Checkout of the repository (default `GITHUB_WORKSPACE`, else the current directory).
    pub repo_dir: Option<PathBuf>,
}

/// How the run ended (maps to the documented exit codes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ActionEnd {
    /// Nothing to do (ignored event, not authorised, already attempted): exit 0.
    Ignored(String),
    /// A verified patch (posted, or reported in a dry run): exit 0.
    Fixed,
    /// No verified fix: exit 1.
    NoFix,
}

/// Everything a run produced (also written to GITHUB_OUTPUT / GITHUB_STEP_SUMMARY).
#[derive(Debug, Clone)]
pub struct ActionReport {
    pub end: ActionEnd,
    pub outputs: BTreeMap<String, String>,
    pub summary: String,
    /// One-line notices printed as `::notice` (also in the summary).
    pub notices: Vec<String>,
}

/// Environment lookup (injectable for tests).
pub type EnvFn<'a> = &'a (dyn Fn(&str) -> Option<String> + Send + Sync);

/// Which permission a failed call needs, and the `permissions:` block granting it.
pub fn permission_hint(method: &str, route: &str) -> (&'static str, &'static str) {
    const BLOCK: &str =
        "permissions:\n  contents: write\n  pull-requests: write\n  issues: write\n  actions: read";
    let perm = if route.contains("/actions/") {
        "actions: read"
    } else if route.contains("/git/") || (route.ends_with("/pulls") && method == "POST") {
        "contents: write (and pull-requests: write to open the pull request)"
    } else if route.contains("/pulls/") && method != "GET" {
        "pull-requests: write"
    } else if route.contains("/issues/") && method != "GET" {
        "issues: write (or pull-requests: write for comments on pull requests)"
    } else if route.contains("/collaborators/") {
        "metadata: read (granted with any permissions block)"
    } else if route.contains("/contents/") {
        "contents: read"
    } else {
        "pull-requests: read"
    };
    (perm, BLOCK)
}

/// Turn a GitHub error into a user-facing one, with the missing permission when that is it.
pub fn explain(e: GitHubError) -> anyhow::Error {
    if let GitHubError::Status {
        method,
        route,
        status,
        message,
    } = &e
        && (*status == 403 || *status == 401 || (*status == 404 && method != "GET"))
    {
        let (perm, block) = permission_hint(method, route);
        if *status == 401 {
            return anyhow!(
                "{e}\nThe token was rejected. Pass it as `github-token: ${{{{ secrets.GITHUB_TOKEN }}}}` \
                 (or set GITHUB_TOKEN) and grant:\n{block}"
            );
        }
        if message.contains("not permitted to create or approve pull requests") {
            return anyhow!(
                "{e}\nEnable \"Allow GitHub Actions to create and approve pull requests\" in the \
                 repository or organisation settings (Actions → General), or use mode `suggest`."
            );
        }
        return anyhow!("{e}\nThe token lacks `{perm}`. Add to the workflow job:\n{block}");
    }
    anyhow::Error::new(e)
}

fn repo_dir(args: &ActionArgs, env: EnvFn) -> PathBuf {
    args.repo_dir
        .clone()
        .or_else(|| env("GITHUB_WORKSPACE").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Whether a pull_request event's head is a branch of the repository itself.
fn pull_request_head_is_base(e: &super::event::PullRequestEvent) -> bool {
    e.pull_request
        .head
        .repo
        .as_ref()
        .is_some_and(|r| r.full_name == e.repository.full_name)
}

/// An action input (`INPUT_NAME`, hyphens kept by the runner; underscores accepted).
fn input(env: EnvFn, name: &str) -> Option<String> {
    let up = name.to_uppercase();
    env(&format!("INPUT_{up}"))
        .or_else(|| env(&format!("INPUT_{}", up.replace('-', "_"))))
        .filter(|v| !v.trim().is_empty())
}

fn token(env: EnvFn) -> Option<String> {
    env("INPUT_GITHUB-TOKEN")
        .or_else(|| env("INPUT_GITHUB_TOKEN"))
        .or_else(|| env("GITHUB_TOKEN"))
        .filter(|t| !t.trim().is_empty())
}

fn ignored(why: String) -> ActionReport {
    let mut outputs = BTreeMap::new();
    outputs.insert(
        "verdict".into(),
        super::Outcome::Ignored.action_word().into(),
    );
    ActionReport {
        summary: format!("### patchloop\n\n{why}\n"),
        end: ActionEnd::Ignored(why),
        outputs,
        notices: Vec::new(),
    }
}

/// Run the action. The caller writes outputs/summary (see [`write_files`]).
pub async fn run(
    args: &ActionArgs,
    env: EnvFn<'_>,
    repairer: &dyn Repairer,
    clock: Arc<dyn Clock>,
    policy: RetryPolicy,
) -> anyhow::Result<ActionReport> {
    let name = args
        .event_name
        .clone()
        .or_else(|| env("GITHUB_EVENT_NAME"))
        .ok_or_else(|| {
            anyhow!(
                "no event name: pass --event-name or set GITHUB_EVENT_NAME (GitHub Actions sets it)"
            )
        })?;
    let path = args
        .event_path
        .clone()
        .or_else(|| env("GITHUB_EVENT_PATH").map(PathBuf::from))
        .ok_or_else(|| {
            anyhow!(
                "no event file: pass --event-path or set GITHUB_EVENT_PATH (GitHub Actions sets it)"
            )
        })?;
    let bytes = std::fs::read(&path)
        .with_context(|| format!("reading the event file {}", path.display()))?;
    let event = parse_event(&name, &bytes)?;
    let dir = repo_dir(args, env);

    // The repository config decides the pull_request opt-in; read it before deciding, from
    // the checkout only when the pull request's head is this repository's (a fork's copy is
    // not trusted: the opt-in is checked again below against the base repository's file).
    let opt_in = match &event {
        Event::PullRequest(e) if pull_request_head_is_base(e) => {
            load_config(&dir, None, None, env, ConfigSource::Checkout)
                .await?
                .pull_request
        }
        Event::PullRequest(_) => true,
        _ => false,
    };
    let trigger = match decide(
        &event,
        &EventPolicy {
            pull_request_opt_in: opt_in,
        },
    ) {
        Decision::Ignore(why) => return Ok(ignored(why)),
        Decision::Act(t) => t,
    };

    let token = token(env);
    if token.is_none() && !args.dry_run {
        return Err(anyhow!(
            "no GitHub token: pass `github-token: ${{{{ secrets.GITHUB_TOKEN }}}}` to the action \
             (or set GITHUB_TOKEN), and grant the job:\npermissions:\n  contents: write\n  \
             pull-requests: write\n  issues: write\n  actions: read"
        ));
    }
    let api = env("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into());
    let gh = GitHub::new(&api, token.as_deref(), clock, policy)?;

    // Where the head commit comes from decides whose configuration applies and whether a
    // branch may be pushed. A comment names only the PR: fetch it (this also pins the head).
    let mut trigger = trigger;
    let mut pr_info = None;
    if let (Some(n), true) = (
        trigger.pr,
        matches!(trigger.kind, TriggerKind::Comment { .. }) || trigger.head_repo.is_none(),
    ) {
        let pr = gh.get_pr(&trigger.repo, n).await.map_err(explain)?;
        if trigger.head_repo.is_none() {
            trigger.head_repo = pr.head.repo.as_ref().map(|r| r.full_name.clone());
        }
        pr_info = Some(pr);
    }
    let same_repo = trigger
        .head_repo
        .as_deref()
        .and_then(RepoId::parse)
        .is_some_and(|h| h == trigger.repo);
    let mut notices = Vec::new();
    let source = if same_repo {
        ConfigSource::Checkout
    } else {
        notices.push(format!(
            "configuration read from the default branch of {}: the head commit comes from {}, \
             so the checkout's {} is ignored",
            trigger.repo.full(),
            match trigger.head_repo.as_deref() {
                Some(h) => format!("another repository ({h})"),
                None => "a repository the event does not name".to_string(),
            },
            config::REPO_CONFIG_PATH
        ));
        ConfigSource::BaseDefaultBranch
    };
    let cfg = load_config(&dir, Some(&gh), Some(&trigger.repo), env, source).await?;
    if matches!(event, Event::PullRequest(_)) && !cfg.pull_request {
        return Ok(ignored(
            "ignored because pull_request events are opt-in (set `triggers.pull_request: true` \
             on the default branch)"
                .into(),
        ));
    }
    let dry_run = args.dry_run || cfg.mode == Mode::DryRun;

    // Authorise comment commands through the API, then pin the head.
    let mut comment_id = None;
    if let TriggerKind::Comment {
        comment_id: cid,
        user,
        ..
    } = &trigger.kind
    {
        if !cfg.comment_users.is_empty() && !cfg.comment_users.iter().any(|u| u == user) {
            return Ok(ignored(format!(
                "ignored because {user} is not in triggers.comment_users"
            )));
        }
        let perm = gh
            .collaborator_permission(&trigger.repo, user)
            .await
            .map_err(explain)?;
        if !cfg.comment_min_permission.allows(&perm) {
            return Ok(ignored(format!(
                "ignored because {user} has `{perm}` permission; /patchloop fix needs `{}` or higher",
                cfg.comment_min_permission.as_str()
            )));
        }
        comment_id = Some(*cid);
        let pr = match pr_info.take() {
            Some(p) => p,
            None => gh
                .get_pr(&trigger.repo, trigger.pr.unwrap_or(0))
                .await
                .map_err(explain)?,
        };
        trigger.head_sha = Some(pr.head.sha.clone());
        trigger.head_branch = Some(pr.head.git_ref.clone());
        if !dry_run {
            gh.react(&trigger.repo, *cid, "eyes")
                .await
                .map_err(explain)?;
        }
    }

    let ctx = RunCtx {
        dry_run,
        may_push: same_repo,
        notices,
    };
    let result = repair_and_post(&gh, &trigger, &cfg, &dir, ctx, repairer, env).await;
    if let (Some(cid), false) = (comment_id, dry_run) {
        let ok = matches!(&result, Ok(r) if r.end == ActionEnd::Fixed);
        let reaction = if ok { "rocket" } else { "confused" };
        if let Err(e) = gh.react(&trigger.repo, cid, reaction).await {
            tracing::warn!("could not react {reaction}: {e}");
        }
    }
    result
}

/// `HEAD` of the checkout: `Ok(None)` when `dir` is not a git checkout, an error when it is
/// one and git cannot read it (the pinned-commit check must not be skipped silently).
///
/// In a Docker action the checkout belongs to the runner's user, not to root in the action
/// container, and git refuses such a repository unless it is a `safe.directory`: say so on
/// the command line (only HEAD is read; no hooks or fsmonitor run for that) rather than rely
/// on the image's git config.
async fn checkout_head(dir: &Path) -> anyhow::Result<Option<String>> {
    if !dir.join(".git").exists() {
        return Ok(None);
    }
    let how = "check out the failing commit with actions/checkout (see examples/workflows)";
    let out = tokio::process::Command::new("git")
        .args(["-c", "safe.directory=*", "-c", "core.fsmonitor=false", "-C"])
        .arg(dir)
        .args(["rev-parse", "--verify", "HEAD"])
        .output()
        .await
        .with_context(|| {
            format!(
                "cannot run git to read the commit of the checkout in {} (is git installed?); {how}",
                dir.display()
            )
        })?;
    let head = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || head.len() != 40 {
        return Err(anyhow!(
            "cannot read the commit of the checkout in {} (`git rev-parse HEAD`: {}); {how}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(Some(head))
}

async fn resolve_sha(gh: &GitHub, t: &Trigger, env: EnvFn<'_>) -> anyhow::Result<String> {
    if let Some(s) = &t.head_sha {
        return Ok(s.clone());
    }
    if let TriggerKind::Dispatch { git_ref } = &t.kind {
        // A SHA given as the input is the commit itself.
        if git_ref.len() == 40 && git_ref.chars().all(|c| c.is_ascii_hexdigit()) {
            return Ok(git_ref.clone());
        }
        // GITHUB_SHA is the commit of the workflow's own ref: use it only for that ref.
        let full = if git_ref.starts_with("refs/") {
            git_ref.clone()
        } else {
            format!("refs/heads/{git_ref}")
        };
        if env("GITHUB_REF").is_none_or(|r| r == full)
            && let Some(s) = env("GITHUB_SHA").filter(|s| s.len() == 40)
        {
            return Ok(s);
        }
    }
    let branch = t
        .head_branch
        .as_deref()
        .ok_or_else(|| anyhow!("cannot tell which commit to repair: no head SHA or branch"))?;
    gh.get_branch_sha(&t.repo, branch)
        .await
        .map_err(explain)?
        .ok_or_else(|| anyhow!("branch `{branch}` not found in {}", t.repo.full()))
}

async fn repair_and_post(
    gh: &GitHub,
    trigger: &Trigger,
    cfg: &Config,
    dir: &Path,
    ctx: RunCtx,
    repairer: &dyn Repairer,
    env: EnvFn<'_>,
) -> anyhow::Result<ActionReport> {
    let dry_run = ctx.dry_run;
    let sha = resolve_sha(gh, trigger, env).await?;
    // The checkout must be the commit we pinned (a push between the command and the
    // checkout would otherwise repair code nobody authorised).
    if let Some(at) = checkout_head(dir).await?
        && at != sha
    {
        return Ok(ignored(format!(
            "ignored because the checkout in {} is at {} but the commit to repair is {} \
             (check out the failing SHA, see examples/workflows)",
            dir.display(),
            &at[..at.len().min(12)],
            &sha[..sha.len().min(12)]
        )));
    }
    let pr = match trigger.pr {
        Some(n) => Some(n),
        None => gh
            .find_pr_for_sha(
                &trigger.repo,
                trigger.head_owner.as_deref(),
                trigger.head_branch.as_deref(),
                &sha,
            )
            .await
            .map_err(explain)?,
    };

    // One attempt per (repository, failing SHA). An explicit command may re-run it.
    let is_command = matches!(trigger.kind, TriggerKind::Comment { .. });
    let marker = Marker::new(&trigger.repo.full(), &sha, pr, "");
    if !is_command {
        if let Some(n) = pr {
            if let Some(c) = gh
                .find_marked_comment(&trigger.repo, n, &marker)
                .await
                .map_err(explain)?
            {
                return Ok(ignored(format!(
                    "ignored because patchloop already attempted {} ({})",
                    &sha[..sha.len().min(12)],
                    c.html_url.unwrap_or_default()
                )));
            }
        } else if gh
            .get_branch_sha(&trigger.repo, &branch_name(&sha))
            .await
            .map_err(explain)?
            .is_some()
        {
            return Ok(ignored(format!(
                "ignored because patchloop already attempted {} (branch {})",
                &sha[..sha.len().min(12)],
                branch_name(&sha)
            )));
        }
    }

    // Failing tests and the command from the failed jobs' logs.
    let mut extracted = logs::Extracted::default();
    if let TriggerKind::WorkflowRun { run_id, attempt } = trigger.kind {
        let jobs = gh
            .failed_jobs(&trigger.repo, run_id, attempt)
            .await
            .map_err(explain)?;
        let mut all = String::new();
        for j in jobs.iter().take(5) {
            match gh.job_log(&trigger.repo, j.id).await {
                Ok(t) => {
                    all.push_str(&t);
                    all.push('\n');
                }
                Err(e) => tracing::warn!("log of job {} not read: {e}", j.id),
            }
        }
        extracted = logs::extract(&all);
    }
    let model = match &trigger.kind {
        TriggerKind::Comment { model: Some(m), .. } => Some(m.clone()),
        _ => cfg.model.clone(),
    };
    let req = RepairRequest {
        repo_dir: dir.to_path_buf(),
        // The repository's config beats what the CI log shows (an invalid one is refused by
        // the plan builder, naming its key).
        test_cmd: cfg
            .test_command
            .as_deref()
            .and_then(|t| crate::testcmd::TestCommand::parse(t).ok())
            .or(extracted.test_cmd.clone()),
        failing_tests: extracted.failing_tests.clone(),
        head_sha: sha.clone(),
        pr,
        repository: trigger.repo.full(),
        model,
        config: cfg.clone(),
        ollama_url: input(env, "ollama-url"),
        base_url: input(env, "base-url"),
        api_key: input(env, "api-key").map(super::ApiKey),
    };
    let outcome = repairer.repair(req).await;
    // Whatever happened, leave nothing in the workspace the runner's user cannot delete.
    hand_back_outputs(dir);
    let outcome = outcome.context("the repair pipeline failed")?;

    let mode = if dry_run { Mode::DryRun } else { cfg.mode };
    let target = Target {
        repo: trigger.repo.clone(),
        pr,
        sha: sha.clone(),
        branch: trigger
            .head_branch
            .clone()
            .or(trigger.default_branch.clone()),
        may_push: ctx.may_push,
    };
    let posted = if pr.is_none() && cfg.no_pr_fallback == NoPrFallback::None && !dry_run {
        Posted {
            skipped: Some("nothing posted: no pull request and no_pr_fallback is `none`".into()),
            ..Default::default()
        }
    } else {
        match gh
            .post_outcome(&target, &outcome, mode, cfg.report_unverified)
            .await
        {
            Ok(p) => p,
            Err(PostError::GitHub(e)) => return Err(explain(e)),
            Err(e) => return Err(e.into()),
        }
    };
    let mut r = report(&outcome, &posted, &extracted, mode, dir, &ctx.notices);
    r.notices = ctx.notices;
    r.notices.extend(posted.notices.iter().cloned());
    Ok(r)
}

/// Give the pipeline's outputs (`.patchloop/` in the workspace) to the workspace's owner.
///
/// The action container runs as root, the workspace belongs to the runner's user: root-owned
/// directories left in it make the next `actions/checkout` (`git clean -ffdx`) or `rm -rf`
/// fail on a non-ephemeral runner. The outputs stay in the workspace (later steps read them
/// there; `RUNNER_TEMP` is not mounted into a Docker action) and change owner instead.
/// Symlinks are not followed. Failures are logged, not fatal: the repair already happened.
pub fn hand_back_outputs(workspace: &Path) {
    use std::os::unix::fs::MetadataExt;
    let root = workspace.join(super::OUT_DIR);
    let (Ok(ws), Ok(_)) = (
        std::fs::metadata(workspace),
        std::fs::symlink_metadata(&root),
    ) else {
        return;
    };
    let (uid, gid) = (ws.uid(), ws.gid());
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if (m.uid(), m.gid()) != (uid, gid)
            && let Err(e) = std::os::unix::fs::lchown(&p, Some(uid), Some(gid))
        {
            tracing::warn!("cannot give {} to {uid}:{gid}: {e}", p.display());
        }
        if m.is_dir()
            && let Ok(rd) = std::fs::read_dir(&p)
        {
            stack.extend(rd.flatten().map(|e| e.path()));
        }
    }
}

/// What `run` decided before the repair, for the post and the report.
struct RunCtx {
    dry_run: bool,
    /// The head commit is this repository's: a fix branch may be pushed on top of it.
    may_push: bool,
    /// Notices for the log and the summary (e.g. where the configuration came from).
    notices: Vec<String>,
}

/// `patchloop action` from the CLI: run, print the notice or error annotation, write
/// GITHUB_OUTPUT / GITHUB_STEP_SUMMARY. Returns whether a verified fix came out; `Err`
/// means exit 2.
pub async fn cli_main(args: ActionArgs, repairer: &dyn Repairer) -> anyhow::Result<bool> {
    let env = |k: &str| std::env::var(k).ok();
    let secrets: Vec<String> = [token(&env), input(&env, "api-key")]
        .into_iter()
        .flatten()
        .collect();
    let scrub = |s: String| {
        secrets
            .iter()
            .fold(s, |acc, t| super::render::redact(&acc, t))
    };
    match run(
        &args,
        &env,
        repairer,
        Arc::new(super::client::SystemClock),
        RetryPolicy::default(),
    )
    .await
    {
        Ok(report) => {
            for n in &report.notices {
                println!("{}", annotation("notice", n));
            }
            if let ActionEnd::Ignored(why) = &report.end {
                println!("{}", annotation("notice", why));
            }
            write_files(&report, &env)?;
            match &report.end {
                ActionEnd::NoFix => {
                    println!(
                        "patchloop: no verified fix (verdict {})",
                        report.outputs.get("verdict").cloned().unwrap_or_default()
                    );
                    Ok(false)
                }
                _ => Ok(true),
            }
        }
        Err(e) => {
            let msg = scrub(format!("{e:#}"));
            println!("{}", annotation("error", &msg));
            let report = ActionReport {
                end: ActionEnd::NoFix,
                outputs: [(
                    "verdict".to_string(),
                    super::Outcome::Error.action_word().to_string(),
                )]
                .into_iter()
                .collect(),
                summary: format!("### patchloop: error\n\n{}\n", fenced("", &msg)),
                notices: Vec::new(),
            };
            let _ = write_files(&report, &env);
            Err(anyhow!(msg))
        }
    }
}

#[cfg(test)]
mod tests;
