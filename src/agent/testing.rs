//! Test doubles for the loop's logic. NOT a sandbox: [`HostDir`] runs commands as host processes
//! in a temporary directory, so tests of budgets, loops and trajectories run without Docker.
//! Production code never constructs it; model-written commands in real runs go to containers.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use async_trait::async_trait;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::sandbox::{CappedOutput, ExecRequest, ExecResult, ExecStatus, Sandbox, SandboxError};

/// A directory with a baseline git commit; `exec` runs there, `diff` diffs against the baseline.
pub struct HostDir {
    root: PathBuf,
    id: String,
}

fn git_env(cmd: &mut tokio::process::Command) {
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "patchloop")
        .env("GIT_AUTHOR_EMAIL", "patchloop@localhost")
        .env("GIT_COMMITTER_NAME", "patchloop")
        .env("GIT_COMMITTER_EMAIL", "patchloop@localhost");
}

impl HostDir {
    /// Commit everything in `root` as the baseline.
    pub async fn new(root: &Path) -> Result<Self, SandboxError> {
        let me = HostDir {
            root: root.to_path_buf(),
            id: format!("hostdir:{}", root.display()),
        };
        let script = "git init -q . && git add -A && git commit -qm baseline --allow-empty";
        let r = me.exec(ExecRequest::shell(script)).await?;
        if !r.status.success() {
            return Err(SandboxError::Other(format!(
                "git baseline failed: {}",
                r.output.render()
            )));
        }
        Ok(me)
    }

    /// Write the embedded files to `root`, then commit them.
    pub async fn with_files(root: &Path, files: &[(&str, &str)]) -> Result<Self, SandboxError> {
        for (rel, body) in files {
            let p = root.join(rel);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent).map_err(|e| SandboxError::Other(e.to_string()))?;
            }
            std::fs::write(&p, body).map_err(|e| SandboxError::Other(e.to_string()))?;
        }
        Self::new(root).await
    }
}

#[async_trait]
impl Sandbox for HostDir {
    async fn exec(&self, req: ExecRequest) -> Result<ExecResult, SandboxError> {
        let start = Instant::now();
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c")
            .arg("exec \"$@\" 2>&1")
            .arg("sh")
            .args(&req.argv);
        cmd.current_dir(
            req.workdir
                .as_deref()
                .map(PathBuf::from)
                .unwrap_or(self.root.clone()),
        )
        .stdin(if req.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .kill_on_drop(true);
        git_env(&mut cmd);
        let mut child = cmd
            .spawn()
            .map_err(|e| SandboxError::Other(e.to_string()))?;
        if let (Some(input), Some(mut sin)) = (req.stdin.clone(), child.stdin.take()) {
            tokio::spawn(async move {
                let _ = sin.write_all(&input).await;
            });
        }
        let mut out = CappedOutput::new(req.output_cap);
        let mut stdout = child
            .stdout
            .take()
            .ok_or_else(|| SandboxError::Other("no stdout".into()))?;
        let read = async {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match stdout.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => out.push(&buf[..n]),
                }
            }
            child.wait().await
        };
        let status = match tokio::time::timeout(req.timeout, read).await {
            Ok(Ok(s)) => ExecStatus::Exited(s.code().unwrap_or(-1) as i64),
            Ok(Err(e)) => return Err(SandboxError::Other(e.to_string())),
            Err(_) => ExecStatus::TimedOut,
        };
        Ok(ExecResult {
            status,
            output: out,
            duration: start.elapsed(),
        })
    }

    async fn diff(&self) -> Result<String, SandboxError> {
        let r = self
            .exec(
                ExecRequest::shell("git add -A >/dev/null && git diff --cached --no-color HEAD")
                    .output_cap(16 << 20),
            )
            .await?;
        if !r.status.success() {
            return Err(SandboxError::Other(r.output.render()));
        }
        Ok(String::from_utf8_lossy(&r.output.kept_bytes()).into_owned())
    }

    fn id(&self) -> &str {
        &self.id
    }
}
