//! Posting a repair outcome: `suggest`, `comment`, `pr`, `dry-run`.
//!
//! Every post is an upsert keyed by the hidden marker (one attempt per repository and
//! failing SHA): find our comment, edit it, else create it. After an ambiguous write
//! (timeout/5xx on POST) we re-query by marker before trying again.

use super::RepairOutcome;
use super::api::{NewReview, NewReviewComment, TreeEntry};
use super::client::{GitHub, GitHubError};
use super::diff::{self, Line, Suggestion};
use super::event::{BOT_BRANCH_PREFIX, BOT_COMMIT_TRAILER, RepoId};
use super::render::{Marker, fenced, model_label, sanitize_markdown, sanitize_prose};

pub use crate::config::Mode;

/// Where a post goes.
#[derive(Debug, Clone)]
pub struct Target {
    pub repo: RepoId,
    pub pr: Option<u64>,
    /// The failing commit the patch applies to (pinned).
    pub sha: String,
    /// Branch the failing commit is on (base of a fix PR when there is no PR).
    pub branch: Option<String>,
    /// The failing commit comes from this repository. When false (a fork's commit, or one
    /// whose origin is unknown) nothing is ever pushed: a branch built on it would publish
    /// the fork's content (workflow files included) into this repository.
    pub may_push: bool,
}

/// What was posted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Posted {
    pub comment_url: Option<String>,
    pub review_id: Option<u64>,
    pub suggestions: usize,
    pub pr_url: Option<String>,
    /// Why nothing was posted, when nothing was.
    pub skipped: Option<String>,
    /// The PR head moved during the run: the patch is stale and was not posted.
    pub stale: bool,
    /// Human-readable lines for the job summary (what was / would be done).
    pub log: Vec<String>,
    /// One-line notices (e.g. `pr` mode fell back to suggestions for a fork).
    pub notices: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum PostError {
    #[error(transparent)]
    GitHub(#[from] GitHubError),
    #[error("the patch does not apply to {path} at {sha}: {detail}")]
    PatchDoesNotApply {
        path: String,
        sha: String,
        detail: String,
    },
}

/// Render a suggestion comment body.
pub fn suggestion_body(s: &Suggestion, marker: &Marker) -> String {
    let mut content = s.replacement.join("\n");
    if !s.replacement.is_empty() {
        content.push('\n');
    }
    format!("{}\n{}", fenced("suggestion", &content), marker.render())
}

/// The review comment for a suggestion (single- or multi-line, RIGHT side).
pub fn review_comment(s: &Suggestion, marker: &Marker) -> NewReviewComment {
    let multi = s.start < s.end;
    NewReviewComment {
        path: s.path.clone(),
        body: suggestion_body(s, marker),
        line: s.end,
        side: "RIGHT",
        start_line: multi.then_some(s.start),
        start_side: multi.then_some("RIGHT"),
    }
}

/// The status comment: verdict, receipt summary, the diff that was not suggested.
pub fn status_comment(
    outcome: &RepairOutcome,
    marker: &Marker,
    suggestions: usize,
    rest_diff: &str,
    note: Option<&str>,
) -> String {
    let mut b = String::new();
    if outcome.verified() {
        b.push_str("### patchloop: verified fix\n\n");
    } else {
        b.push_str(&format!(
            "### patchloop: no verified fix (`{}`)\n\n",
            sanitize_prose(outcome.verdict.action_word())
        ));
    }
    if suggestions > 0 {
        b.push_str(&format!(
            "{suggestions} suggestion(s) are in the review above: each was verified together \
             with the rest of the patch in a fresh container. Apply them all in one batch.\n\n"
        ));
    }
    if let Some(n) = note {
        b.push_str(n);
        b.push_str("\n\n");
    }
    if !outcome.verified() && !outcome.reason.trim().is_empty() {
        b.push_str(&format!(
            "Why: {}\n\n",
            super::render::reason_line(&outcome.reason)
        ));
    }
    let expl = outcome.explanation.trim();
    if !expl.is_empty() {
        b.push_str(&sanitize_prose(expl));
        b.push_str("\n\n");
    }
    if !rest_diff.is_empty() {
        let what = if suggestions > 0 {
            "The rest of the patch (outside this pull request's diff)"
        } else {
            "The patch"
        };
        b.push_str(&format!(
            "{what}:\n\n{}\n\nTo apply it: save the block as `patchloop.diff` and run \
             `git apply patchloop.diff` at the root of the repository.\n\n",
            fenced("diff", rest_diff)
        ));
    }
    // No receipt when no patch reached the verifier (no patch, or the tests still failed in
    // the agent's own container): say so instead of an empty block.
    if outcome.receipt_md.trim().is_empty() {
        b.push_str(
            "No verification receipt: the run ended before a patch reached the verifier.\n\n",
        );
    } else {
        b.push_str(&format!(
            "<details><summary>Receipt</summary>\n\n{}\n\n</details>\n\n",
            sanitize_markdown(outcome.receipt_md.trim())
        ));
    }
    let model = model_label(&outcome.model);
    if !model.is_empty() {
        b.push_str(&format!("Model {model}. "));
    }
    b.push_str(&format!(
        "Cost ${:.4}, {} tokens, {:.0} s.\n",
        outcome.cost_usd, outcome.tokens, outcome.seconds
    ));
    b.push_str(&marker.render());
    b
}

/// Deterministic branch name for a failing commit.
pub fn branch_name(sha: &str) -> String {
    let short: String = sha.chars().take(12).collect();
    format!("{BOT_BRANCH_PREFIX}fix-{short}")
}

/// Apply one file's hunks to its old text (strict: context must match).
pub fn apply_file(old: &str, f: &diff::FileDiff) -> Result<String, String> {
    let had_newline = old.ends_with('\n') || old.is_empty();
    let old_lines: Vec<&str> = if old.is_empty() {
        Vec::new()
    } else {
        old.lines().collect()
    };
    let mut out: Vec<String> = Vec::new();
    let mut pos = 0usize;
    for h in &f.hunks {
        let start = (h.old_start.max(1) - 1) as usize;
        let start = if h.old_len == 0 {
            h.old_start as usize
        } else {
            start
        };
        if start < pos || start > old_lines.len() {
            return Err(format!("hunk {} out of order or range", h.header));
        }
        out.extend(old_lines[pos..start].iter().map(|s| s.to_string()));
        pos = start;
        for l in &h.lines {
            match l {
                Line::Context(t) | Line::Removed(t) => {
                    if old_lines.get(pos) != Some(&t.as_str()) {
                        return Err(format!("hunk {} does not match line {}", h.header, pos + 1));
                    }
                    if let Line::Context(t) = l {
                        out.push(t.clone());
                    }
                    pos += 1;
                }
                Line::Added(t) => out.push(t.clone()),
            }
        }
    }
    out.extend(old_lines[pos..].iter().map(|s| s.to_string()));
    let mut s = out.join("\n");
    if !out.is_empty() && had_newline {
        s.push('\n');
    }
    Ok(s)
}

impl GitHub {
    /// Our comment on `pr` for this attempt, if any.
    pub async fn find_marked_comment(
        &self,
        repo: &RepoId,
        pr: u64,
        marker: &Marker,
    ) -> Result<Option<super::api::IssueComment>, GitHubError> {
        let key = marker.key();
        Ok(self
            .list_issue_comments(repo, pr)
            .await?
            .into_iter()
            .find(|c| c.body.as_deref().is_some_and(|b| b.contains(&key))))
    }

    /// Create or edit our comment. Returns its URL.
    pub async fn upsert_comment(
        &self,
        repo: &RepoId,
        pr: u64,
        marker: &Marker,
        body: &str,
    ) -> Result<Option<String>, GitHubError> {
        if let Some(c) = self.find_marked_comment(repo, pr, marker).await? {
            let c = self.update_issue_comment(repo, c.id, body).await?;
            return Ok(c.html_url);
        }
        match self.create_issue_comment(repo, pr, body).await {
            Ok(c) => Ok(c.html_url),
            Err(GitHubError::Ambiguous { .. }) => {
                // The POST may have landed: look before trying again.
                if let Some(c) = self.find_marked_comment(repo, pr, marker).await? {
                    return Ok(c.html_url);
                }
                Ok(self.create_issue_comment(repo, pr, body).await?.html_url)
            }
            Err(e) => Err(e),
        }
    }

    async fn review_exists(
        &self,
        repo: &RepoId,
        pr: u64,
        marker: &Marker,
    ) -> Result<bool, GitHubError> {
        let key = marker.key();
        Ok(self
            .list_review_comments(repo, pr)
            .await?
            .iter()
            .any(|c| c.body.as_deref().is_some_and(|b| b.contains(&key))))
    }

    /// Post an outcome in `mode`. Unverified outcomes post only the short report, and only
    /// when `report_unverified` is set.
    pub async fn post_outcome(
        &self,
        target: &Target,
        outcome: &RepairOutcome,
        mode: Mode,
        report_unverified: bool,
    ) -> Result<Posted, PostError> {
        let marker = Marker::new(&target.repo.full(), &target.sha, target.pr, &outcome.patch);
        let mut posted = Posted::default();
        if !outcome.verified() || outcome.patch.trim().is_empty() {
            if !report_unverified {
                posted.skipped = Some(format!(
                    "nothing posted: verdict `{}` (only verified patches are posted)",
                    outcome.verdict.action_word()
                ));
                return Ok(posted);
            }
            let Some(pr) = target.pr else {
                posted.skipped = Some("nothing posted: no verified fix and no pull request".into());
                return Ok(posted);
            };
            let body = status_comment(outcome, &marker, 0, "", None);
            if mode == Mode::DryRun {
                posted.log.push(format!("would comment on #{pr}:\n{body}"));
                return Ok(posted);
            }
            posted.comment_url = self
                .upsert_comment(&target.repo, pr, &marker, &body)
                .await?;
            return Ok(posted);
        }

        // Stale check: the PR head must still be the commit we repaired.
        if let Some(pr) = target.pr {
            let p = self.get_pr(&target.repo, pr).await?;
            if p.head.sha != target.sha {
                posted.stale = true;
                posted.skipped = Some(format!(
                    "nothing posted: the head of #{pr} moved from {} to {} during the run",
                    short(&target.sha),
                    short(&p.head.sha)
                ));
                return Ok(posted);
            }
        }

        let mode = match (mode, target.pr) {
            (Mode::Suggest | Mode::Comment, None) => Mode::Pr,
            (m, _) => m,
        };
        // Never push a branch on top of a commit this repository does not own.
        let mode = match (mode, target.pr, target.may_push) {
            (Mode::Pr, Some(pr), false) => {
                posted.notices.push(format!(
                    "mode `pr` posts suggestions on #{pr} instead: its head comes from another \
                     repository (a fork), and patchloop never pushes a fork's commits into {}",
                    target.repo.full()
                ));
                Mode::Suggest
            }
            (Mode::Pr, None, false) => {
                posted.notices.push(format!(
                    "nothing posted: there is no pull request, and the failing commit does not \
                     come from {} (a fork), so no branch is pushed; the patch is in the job summary",
                    target.repo.full()
                ));
                posted.skipped = Some("nothing posted: no pull request for a fork's commit".into());
                return Ok(posted);
            }
            (m, _, _) => m,
        };
        match mode {
            Mode::Suggest | Mode::Comment | Mode::DryRun => {
                let Some(pr) = target.pr else {
                    posted.log.push(if target.may_push {
                        format!(
                            "dry run: would open a pull request from `{}`",
                            branch_name(&target.sha)
                        )
                    } else {
                        "dry run: would post nothing (no pull request, and the commit comes \
                         from another repository)"
                            .to_string()
                    });
                    return Ok(posted);
                };
                let placement = if mode == Mode::Comment {
                    diff::Placement {
                        suggestions: Vec::new(),
                        rest: outcome.patch.clone(),
                    }
                } else {
                    let files = self.list_pr_files(&target.repo, pr).await?;
                    let ranges = diff::commentable_ranges(
                        files
                            .iter()
                            .filter_map(|f| Some((f.filename.as_str(), f.patch.as_deref()?))),
                    );
                    diff::place(&outcome.patch, &ranges)
                };
                let n = placement.suggestions.len();
                let comment = status_comment(outcome, &marker, n, &placement.rest, None);
                if mode == Mode::DryRun {
                    for s in &placement.suggestions {
                        posted.log.push(format!(
                            "would suggest {}:{}-{}:\n{}",
                            s.path,
                            s.start,
                            s.end,
                            suggestion_body(s, &marker)
                        ));
                    }
                    posted
                        .log
                        .push(format!("would comment on #{pr}:\n{comment}"));
                    posted.suggestions = n;
                    return Ok(posted);
                }
                if n > 0 && !self.review_exists(&target.repo, pr, &marker).await? {
                    let review = NewReview {
                        commit_id: target.sha.clone(),
                        body: format!(
                            "patchloop: {n} verified suggestion(s). Details in the comment below.\n{}",
                            marker.render()
                        ),
                        event: "COMMENT",
                        comments: placement
                            .suggestions
                            .iter()
                            .map(|s| review_comment(s, &marker))
                            .collect(),
                    };
                    match self.create_review(&target.repo, pr, &review).await {
                        Ok(c) => posted.review_id = Some(c.id),
                        Err(GitHubError::Ambiguous { .. }) => {
                            if !self.review_exists(&target.repo, pr, &marker).await? {
                                posted.review_id =
                                    Some(self.create_review(&target.repo, pr, &review).await?.id);
                            }
                        }
                        Err(e) => return Err(e.into()),
                    }
                    posted
                        .log
                        .push(format!("posted a review with {n} suggestion(s)"));
                }
                posted.suggestions = n;
                posted.comment_url = self
                    .upsert_comment(&target.repo, pr, &marker, &comment)
                    .await?;
                posted.log.push("posted the status comment".into());
                Ok(posted)
            }
            Mode::Pr => self.post_pr(target, outcome, &marker, posted).await,
        }
    }

    async fn post_pr(
        &self,
        target: &Target,
        outcome: &RepairOutcome,
        marker: &Marker,
        mut posted: Posted,
    ) -> Result<Posted, PostError> {
        let repo = &target.repo;
        if !target.may_push {
            // post_outcome never gets here for such a target; keep the guarantee local too.
            posted.skipped = Some("nothing posted: no branch is pushed for a fork's commit".into());
            return Ok(posted);
        }
        let branch = branch_name(&target.sha);
        let base = match &target.branch {
            Some(b) => b.clone(),
            None => {
                posted.skipped =
                    Some("nothing posted: the failing commit's branch is unknown".into());
                return Ok(posted);
            }
        };
        // blobs → tree → commit → ref.
        let head = self.get_commit(repo, &target.sha).await?;
        let mut trees = TreeCache::default();
        let does_not_apply = |path: &str, detail: String| PostError::PatchDoesNotApply {
            path: path.to_string(),
            sha: target.sha.clone(),
            detail,
        };
        let mut entries = Vec::new();
        for f in diff::parse_unified(&outcome.patch) {
            if f.binary {
                return Err(does_not_apply(
                    f.path(),
                    "binary changes cannot be posted".into(),
                ));
            }
            // The file as it is in the failing commit: it must exist (a 404 is not an empty
            // file) and be a regular file, whose mode the new blob keeps.
            let old = match f.old_path.as_deref() {
                Some(p) => {
                    let item = trees
                        .entry(self, repo, &head.tree.sha, p)
                        .await?
                        .ok_or_else(|| {
                            does_not_apply(p, format!("{p} is not in the tree of the commit"))
                        })?;
                    if item.kind != "blob" || !matches!(item.mode.as_str(), "100644" | "100755") {
                        return Err(does_not_apply(
                            p,
                            format!("{p} is not a regular file (mode {})", item.mode),
                        ));
                    }
                    let text = self
                        .get_file(repo, p, Some(&target.sha))
                        .await?
                        .ok_or_else(|| does_not_apply(p, "the contents API answered 404".into()))?;
                    Some((item.mode, text))
                }
                None => None,
            };
            if let Some(old_path) = f.old_path.as_deref()
                && f.new_path.as_deref() != Some(old_path)
            {
                entries.push(TreeEntry {
                    path: old_path.to_string(),
                    mode: old.as_ref().map(|o| o.0.clone()).unwrap_or("100644".into()),
                    kind: "blob",
                    sha: None,
                });
            }
            let Some(new_path) = f.new_path.clone() else {
                continue;
            };
            let mode = header_mode(&f)
                .or(old.as_ref().map(|o| o.0.clone()))
                .unwrap_or_else(|| "100644".into());
            let old_text = old.map(|o| o.1).unwrap_or_default();
            let new_text =
                apply_file(&old_text, &f).map_err(|detail| does_not_apply(&new_path, detail))?;
            let sha = self.create_blob(repo, &new_text).await?;
            entries.push(TreeEntry {
                path: new_path,
                mode,
                kind: "blob",
                sha: Some(sha),
            });
        }
        let tree = self.create_tree(repo, &head.tree.sha, &entries).await?;
        let message = format!(
            "Fix failing tests at {}\n\nVerified by patchloop in a fresh container.\n\n{BOT_COMMIT_TRAILER} {}",
            short(&target.sha),
            target.sha
        );
        let commit = self
            .create_commit(repo, &message, &tree, &target.sha)
            .await?;
        let exists = self.get_branch_sha(repo, &branch).await?.is_some();
        self.set_branch(repo, &branch, &commit, exists).await?;
        posted
            .log
            .push(format!("pushed {} to `{branch}`", short(&commit)));

        let body = status_comment(
            outcome,
            marker,
            0,
            "",
            Some(&format!(
                "This pull request applies a patch to `{base}` at {}.",
                short(&target.sha)
            )),
        );
        let existing = self.list_prs_by_head(repo, &repo.owner, &branch).await?;
        if let Some(p) = existing.first() {
            // Same branch, same PR: the push above updated it; refresh our comment.
            posted.pr_url = p.html_url.clone();
            posted.comment_url = self.upsert_comment(repo, p.number, marker, &body).await?;
            return Ok(posted);
        }
        let title = format!("patchloop: fix failing tests on {base}");
        match self.create_pull(repo, &title, &branch, &base, &body).await {
            Ok(p) => posted.pr_url = p.html_url,
            Err(GitHubError::Status {
                status: 422,
                message,
                ..
            }) if message.contains("already exists") => {
                let p = self.list_prs_by_head(repo, &repo.owner, &branch).await?;
                posted.pr_url = p.first().and_then(|p| p.html_url.clone());
            }
            Err(GitHubError::Ambiguous { .. }) => {
                let p = self.list_prs_by_head(repo, &repo.owner, &branch).await?;
                posted.pr_url = match p.first() {
                    Some(p) => p.html_url.clone(),
                    None => {
                        self.create_pull(repo, &title, &branch, &base, &body)
                            .await?
                            .html_url
                    }
                };
            }
            Err(e) => return Err(e.into()),
        }
        posted.log.push("opened a pull request".into());
        Ok(posted)
    }
}

/// The mode a diff sets (`new file mode 100755`, `new mode 100755`), if it says.
fn header_mode(f: &diff::FileDiff) -> Option<String> {
    f.header.iter().find_map(|l| {
        let m = l
            .strip_prefix("new file mode ")
            .or_else(|| l.strip_prefix("new mode "))?
            .trim();
        matches!(m, "100644" | "100755").then(|| m.to_string())
    })
}

/// Trees of the failing commit, fetched one directory at a time as paths need them.
#[derive(Default)]
struct TreeCache {
    trees: std::collections::HashMap<String, Vec<super::api::TreeItem>>,
}

impl TreeCache {
    /// The entry for `path` under the root tree, or None when some component is absent.
    async fn entry(
        &mut self,
        gh: &GitHub,
        repo: &RepoId,
        root: &str,
        path: &str,
    ) -> Result<Option<super::api::TreeItem>, GitHubError> {
        let mut tree = root.to_string();
        let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
        for (i, part) in parts.iter().enumerate() {
            if !self.trees.contains_key(&tree) {
                let items = gh.get_tree(repo, &tree).await?;
                self.trees.insert(tree.clone(), items);
            }
            let Some(item) = self
                .trees
                .get(&tree)
                .and_then(|items| items.iter().find(|e| e.path == *part))
                .cloned()
            else {
                return Ok(None);
            };
            if i + 1 == parts.len() {
                return Ok(Some(item));
            }
            if item.kind != "tree" {
                return Ok(None);
            }
            tree = item.sha;
        }
        Ok(None)
    }
}

fn short(sha: &str) -> String {
    sha.chars().take(12).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apply_roundtrip() {
        let old = "a\nb\nc\nd\n";
        let d = "--- a/f\n+++ b/f\n@@ -2,2 +2,3 @@\n b\n-c\n+C\n+C2\n d\n";
        let f = &diff::parse_unified(d)[0];
        assert_eq!(apply_file(old, f).unwrap(), "a\nb\nC\nC2\nd\n");
        let bad = "x\ny\nz\nw\n";
        assert!(apply_file(bad, f).is_err());
        let new = "--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+x\n+y\n";
        assert_eq!(
            apply_file("", &diff::parse_unified(new)[0]).unwrap(),
            "x\ny\n"
        );
    }

    #[test]
    fn review_comment_shape() {
        let m = Marker::new("o/r", "s", Some(1), "p");
        let one = review_comment(
            &Suggestion {
                path: "f".into(),
                start: 3,
                end: 3,
                replacement: vec!["x".into()],
            },
            &m,
        );
        assert_eq!((one.line, one.start_line), (3, None));
        assert!(
            one.body
                .starts_with("```suggestion\nx\n```\n<!-- patchloop:v1")
        );
        let multi = review_comment(
            &Suggestion {
                path: "f".into(),
                start: 3,
                end: 5,
                replacement: vec![],
            },
            &m,
        );
        assert_eq!(
            (multi.line, multi.start_line, multi.start_side),
            (5, Some(3), Some("RIGHT"))
        );
        assert!(multi.body.starts_with("```suggestion\n```"));
    }

    #[test]
    fn branch_names_are_ours_and_deterministic() {
        let b = branch_name("ec26c3e57ca3a959ca5aad62de7213c562f8c821");
        assert_eq!(b, "patchloop/fix-ec26c3e57ca3");
    }

    #[test]
    fn status_comment_sanitises_model_text() {
        let o = RepairOutcome {
            verdict: crate::github::Outcome::VERIFIED,
            patch: "x".into(),
            explanation: "see ![a](https://evil/x) @admin\n/patchloop fix".into(),
            receipt_md: "ok".into(),
            ..Default::default()
        };
        let m = Marker::new("o/r", "s", Some(1), "x");
        let b = status_comment(&o, &m, 0, "--- a/f\n+++ b/f\n", None);
        assert!(!b.contains("https://evil"));
        assert!(!b.contains("@admin"));
        assert!(!b.lines().any(|l| l.starts_with("/patchloop")));
        assert!(b.contains("git apply"));
        assert!(b.trim_end().ends_with("-->"));
    }
}
