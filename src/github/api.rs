//! Typed GitHub operations on top of [`GitHub`]: our own small serde types for what we
//! read and what we send (request bodies follow GitHub's OpenAPI description; tests
//! validate every body against it).

use http::Method;
use serde::{Deserialize, Serialize};

use super::client::{GitHub, GitHubError};
use super::event::RepoId;

#[derive(Debug, Clone, Deserialize)]
pub struct User {
    pub login: String,
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct IssueComment {
    pub id: u64,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    #[serde(default)]
    pub user: Option<User>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ReviewComment {
    pub id: u64,
    #[serde(default)]
    pub body: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PrSideInfo {
    #[serde(rename = "ref")]
    pub git_ref: String,
    pub sha: String,
    #[serde(default)]
    pub repo: Option<RepoInfo>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RepoInfo {
    pub full_name: String,
    #[serde(default)]
    pub default_branch: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PullRequest {
    pub number: u64,
    #[serde(default)]
    pub state: Option<String>,
    #[serde(default)]
    pub html_url: Option<String>,
    pub head: PrSideInfo,
    pub base: PrSideInfo,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PrFile {
    pub filename: String,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub patch: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Job {
    pub id: u64,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub conclusion: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Jobs {
    #[serde(default)]
    jobs: Vec<Job>,
}

#[derive(Debug, Clone, Deserialize)]
struct Permission {
    permission: String,
    #[serde(default)]
    role_name: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
struct CommentBody<'a> {
    body: &'a str,
}

/// A review comment as sent (`pulls/create-review` `comments[]`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct NewReviewComment {
    pub path: String,
    pub body: String,
    pub line: u64,
    pub side: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_side: Option<&'static str>,
}

#[derive(Debug, Clone, Serialize)]
pub struct NewReview {
    pub commit_id: String,
    pub body: String,
    pub event: &'static str,
    pub comments: Vec<NewReviewComment>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Created {
    pub id: u64,
    #[serde(default)]
    pub html_url: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ShaOnly {
    pub sha: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct GitCommit {
    pub sha: String,
    pub tree: ShaOnly,
}

#[derive(Debug, Clone, Deserialize)]
pub struct GitRef {
    pub object: ShaOnly,
}

/// One entry of a git tree as the API lists it (`GET /git/trees/{sha}`).
#[derive(Debug, Clone, Deserialize)]
pub struct TreeItem {
    pub path: String,
    /// `100644`, `100755`, `120000` (symlink), `040000` (tree), `160000` (submodule).
    pub mode: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub sha: String,
}

#[derive(Debug, Clone, Deserialize)]
struct Tree {
    tree: Vec<TreeItem>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TreeEntry {
    pub path: String,
    pub mode: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// `None` deletes the path.
    pub sha: Option<String>,
}

fn r(repo: &RepoId) -> String {
    format!("/repos/{}/{}", repo.owner, repo.name)
}

/// Percent-encode a path segment (user names, branch names in query strings).
pub fn enc(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Encode a repository path, keeping `/`.
fn enc_path(p: &str) -> String {
    p.split('/').map(enc).collect::<Vec<_>>().join("/")
}

impl GitHub {
    async fn paginate<T: serde::de::DeserializeOwned>(
        &self,
        route: &str,
    ) -> Result<Vec<T>, GitHubError> {
        let mut out = Vec::new();
        let sep = if route.contains('?') { '&' } else { '?' };
        for page in 1..=30 {
            let items: Vec<T> = self
                .get_json(&format!("{route}{sep}per_page=100&page={page}"))
                .await?;
            let n = items.len();
            out.extend(items);
            if n < 100 {
                break;
            }
        }
        Ok(out)
    }

    pub async fn get_pr(&self, repo: &RepoId, n: u64) -> Result<PullRequest, GitHubError> {
        self.get_json(&format!("{}/pulls/{n}", r(repo))).await
    }

    pub async fn list_pr_files(&self, repo: &RepoId, n: u64) -> Result<Vec<PrFile>, GitHubError> {
        self.paginate(&format!("{}/pulls/{n}/files", r(repo))).await
    }

    /// Open PRs whose head is `owner:branch`.
    pub async fn list_prs_by_head(
        &self,
        repo: &RepoId,
        owner: &str,
        branch: &str,
    ) -> Result<Vec<PullRequest>, GitHubError> {
        self.get_json(&format!(
            "{}/pulls?state=open&head={}&per_page=100",
            r(repo),
            enc(&format!("{owner}:{branch}"))
        ))
        .await
    }

    /// Find the open PR whose head is `sha` (fork runs carry no PR in the event).
    pub async fn find_pr_for_sha(
        &self,
        repo: &RepoId,
        head_owner: Option<&str>,
        head_branch: Option<&str>,
        sha: &str,
    ) -> Result<Option<u64>, GitHubError> {
        if let Some(branch) = head_branch {
            let owner = head_owner.unwrap_or(&repo.owner);
            let prs = self.list_prs_by_head(repo, owner, branch).await?;
            if let Some(p) = prs.iter().find(|p| p.head.sha == sha) {
                return Ok(Some(p.number));
            }
        }
        let prs: Vec<PullRequest> = self
            .get_json(&format!("{}/pulls?state=open&per_page=100", r(repo)))
            .await?;
        Ok(prs.iter().find(|p| p.head.sha == sha).map(|p| p.number))
    }

    pub async fn list_issue_comments(
        &self,
        repo: &RepoId,
        n: u64,
    ) -> Result<Vec<IssueComment>, GitHubError> {
        self.paginate(&format!("{}/issues/{n}/comments", r(repo)))
            .await
    }

    pub async fn list_review_comments(
        &self,
        repo: &RepoId,
        n: u64,
    ) -> Result<Vec<ReviewComment>, GitHubError> {
        self.paginate(&format!("{}/pulls/{n}/comments", r(repo)))
            .await
    }

    pub async fn create_issue_comment(
        &self,
        repo: &RepoId,
        n: u64,
        body: &str,
    ) -> Result<IssueComment, GitHubError> {
        self.send_json(
            Method::POST,
            &format!("{}/issues/{n}/comments", r(repo)),
            &CommentBody { body },
        )
        .await
    }

    pub async fn update_issue_comment(
        &self,
        repo: &RepoId,
        id: u64,
        body: &str,
    ) -> Result<IssueComment, GitHubError> {
        self.send_json(
            Method::PATCH,
            &format!("{}/issues/comments/{id}", r(repo)),
            &CommentBody { body },
        )
        .await
    }

    pub async fn create_review(
        &self,
        repo: &RepoId,
        n: u64,
        review: &NewReview,
    ) -> Result<Created, GitHubError> {
        self.send_json(
            Method::POST,
            &format!("{}/pulls/{n}/reviews", r(repo)),
            review,
        )
        .await
    }

    /// React to an issue comment (`eyes`, `rocket`, `confused`).
    pub async fn react(
        &self,
        repo: &RepoId,
        comment_id: u64,
        content: &str,
    ) -> Result<(), GitHubError> {
        #[derive(Serialize)]
        struct B<'a> {
            content: &'a str,
        }
        let _: serde_json::Value = self
            .send_json(
                Method::POST,
                &format!("{}/issues/comments/{comment_id}/reactions", r(repo)),
                &B { content },
            )
            .await?;
        Ok(())
    }

    /// The user's permission on the repository (`admin`, `maintain`, `write`, `triage`,
    /// `read`, `none`), from the API: `author_association` alone is not enough.
    pub async fn collaborator_permission(
        &self,
        repo: &RepoId,
        user: &str,
    ) -> Result<String, GitHubError> {
        let p: Result<Permission, _> = self
            .get_json(&format!(
                "{}/collaborators/{}/permission",
                r(repo),
                enc(user)
            ))
            .await;
        match p {
            // The role name distinguishes maintain/triage, which `permission` folds.
            Ok(p) => Ok(match p.role_name.as_deref() {
                Some(x @ ("admin" | "maintain" | "write" | "triage" | "read")) => x.to_string(),
                _ => p.permission,
            }),
            // Not a collaborator at all.
            Err(e) if e.status() == Some(404) => Ok("none".into()),
            Err(e) => Err(e),
        }
    }

    /// Failed jobs of a run (latest attempt, or a given one).
    pub async fn failed_jobs(
        &self,
        repo: &RepoId,
        run_id: u64,
        attempt: Option<u64>,
    ) -> Result<Vec<Job>, GitHubError> {
        let route = match attempt {
            Some(a) => format!(
                "{}/actions/runs/{run_id}/attempts/{a}/jobs?per_page=100",
                r(repo)
            ),
            None => format!(
                "{}/actions/runs/{run_id}/jobs?filter=latest&per_page=100",
                r(repo)
            ),
        };
        let jobs: Jobs = self.get_json(&route).await?;
        Ok(jobs
            .jobs
            .into_iter()
            .filter(|j| j.conclusion.as_deref() == Some("failure"))
            .collect())
    }

    /// A job's plain-text log. GitHub answers 302 to blob storage; the target is fetched
    /// by a separate plain client, so the token is never sent there.
    pub async fn job_log(&self, repo: &RepoId, job_id: u64) -> Result<String, GitHubError> {
        let route = format!("{}/actions/jobs/{job_id}/logs", r(repo));
        let res = self.request(Method::GET, &route, None, None).await?;
        if (300..400).contains(&res.status) {
            let loc = res
                .headers
                .get(http::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| GitHubError::Decode {
                    route: route.clone(),
                    detail: format!("HTTP {} without a Location header", res.status),
                })?
                .to_string();
            return self.fetch_unauthenticated(&loc, &route).await;
        }
        Ok(res.text())
    }

    /// A file's text at a ref, or None when absent.
    pub async fn get_file(
        &self,
        repo: &RepoId,
        path: &str,
        git_ref: Option<&str>,
    ) -> Result<Option<String>, GitHubError> {
        let mut route = format!("{}/contents/{}", r(repo), enc_path(path));
        if let Some(g) = git_ref {
            route.push_str(&format!("?ref={}", enc(g)));
        }
        let res = self
            .request(
                Method::GET,
                &route,
                None,
                Some("application/vnd.github.raw+json"),
            )
            .await;
        match res {
            Ok(resp) => {
                // Either raw bytes or the JSON envelope with base64 content.
                if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&resp.body)
                    && let Some(c) = v.get("content").and_then(|c| c.as_str())
                {
                    let clean: String = c.chars().filter(|c| !c.is_whitespace()).collect();
                    let bytes = base64_decode(&clean).ok_or_else(|| GitHubError::Decode {
                        route: route.clone(),
                        detail: "content is not base64".into(),
                    })?;
                    return Ok(Some(String::from_utf8_lossy(&bytes).into_owned()));
                }
                Ok(Some(resp.text()))
            }
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }

    // --- git data API (pr mode) ---

    pub async fn get_commit(&self, repo: &RepoId, sha: &str) -> Result<GitCommit, GitHubError> {
        self.get_json(&format!("{}/git/commits/{}", r(repo), enc(sha)))
            .await
    }

    /// The entries of one tree (not recursive: a recursive listing may come back truncated).
    pub async fn get_tree(&self, repo: &RepoId, sha: &str) -> Result<Vec<TreeItem>, GitHubError> {
        let t: Tree = self
            .get_json(&format!("{}/git/trees/{}", r(repo), enc(sha)))
            .await?;
        Ok(t.tree)
    }

    pub async fn create_blob(&self, repo: &RepoId, content: &str) -> Result<String, GitHubError> {
        #[derive(Serialize)]
        struct B<'a> {
            content: &'a str,
            encoding: &'static str,
        }
        let s: ShaOnly = self
            .send_json(
                Method::POST,
                &format!("{}/git/blobs", r(repo)),
                &B {
                    content,
                    encoding: "utf-8",
                },
            )
            .await?;
        Ok(s.sha)
    }

    pub async fn create_tree(
        &self,
        repo: &RepoId,
        base_tree: &str,
        entries: &[TreeEntry],
    ) -> Result<String, GitHubError> {
        #[derive(Serialize)]
        struct B<'a> {
            base_tree: &'a str,
            tree: &'a [TreeEntry],
        }
        let s: ShaOnly = self
            .send_json(
                Method::POST,
                &format!("{}/git/trees", r(repo)),
                &B {
                    base_tree,
                    tree: entries,
                },
            )
            .await?;
        Ok(s.sha)
    }

    pub async fn create_commit(
        &self,
        repo: &RepoId,
        message: &str,
        tree: &str,
        parent: &str,
    ) -> Result<String, GitHubError> {
        #[derive(Serialize)]
        struct B<'a> {
            message: &'a str,
            tree: &'a str,
            parents: [&'a str; 1],
        }
        let s: ShaOnly = self
            .send_json(
                Method::POST,
                &format!("{}/git/commits", r(repo)),
                &B {
                    message,
                    tree,
                    parents: [parent],
                },
            )
            .await?;
        Ok(s.sha)
    }

    pub async fn get_branch_sha(
        &self,
        repo: &RepoId,
        branch: &str,
    ) -> Result<Option<String>, GitHubError> {
        match self
            .get_json::<GitRef>(&format!("{}/git/ref/heads/{}", r(repo), enc_path(branch)))
            .await
        {
            Ok(g) => Ok(Some(g.object.sha)),
            Err(e) if e.status() == Some(404) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Point `branch` at `sha`: create it, or force-move it (only ever our own branch).
    pub async fn set_branch(
        &self,
        repo: &RepoId,
        branch: &str,
        sha: &str,
        exists: bool,
    ) -> Result<(), GitHubError> {
        if exists {
            #[derive(Serialize)]
            struct B<'a> {
                sha: &'a str,
                force: bool,
            }
            let _: serde_json::Value = self
                .send_json(
                    Method::PATCH,
                    &format!("{}/git/refs/heads/{}", r(repo), enc_path(branch)),
                    &B { sha, force: true },
                )
                .await?;
        } else {
            #[derive(Serialize)]
            struct B<'a> {
                #[serde(rename = "ref")]
                git_ref: String,
                sha: &'a str,
            }
            let _: serde_json::Value = self
                .send_json(
                    Method::POST,
                    &format!("{}/git/refs", r(repo)),
                    &B {
                        git_ref: format!("refs/heads/{branch}"),
                        sha,
                    },
                )
                .await?;
        }
        Ok(())
    }

    pub async fn create_pull(
        &self,
        repo: &RepoId,
        title: &str,
        head: &str,
        base: &str,
        body: &str,
    ) -> Result<PullRequest, GitHubError> {
        #[derive(Serialize)]
        struct B<'a> {
            title: &'a str,
            head: &'a str,
            base: &'a str,
            body: &'a str,
            maintainer_can_modify: bool,
        }
        self.send_json(
            Method::POST,
            &format!("{}/pulls", r(repo)),
            &B {
                title,
                head,
                base,
                body,
                maintainer_can_modify: true,
            },
        )
        .await
    }
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut buf = 0u32;
    let mut bits = 0;
    for c in s.bytes() {
        if c == b'=' {
            break;
        }
        let v = T.iter().position(|&t| t == c)? as u32;
        buf = (buf << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buf >> bits) as u8);
            buf &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn b64() {
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(base64_decode("aGk=").unwrap(), b"hi");
        assert!(base64_decode("a*b").is_none());
    }

    #[test]
    fn encoding() {
        assert_eq!(enc("owner:branch/x"), "owner%3Abranch%2Fx");
        assert_eq!(enc_path("a b/c.py"), "a%20b/c.py");
    }
}
