//! A running sandbox container: create/start through the policy, exec with hard limits,
//! harness-owned diff, and removal on every path (drop guard).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use bollard::Docker;

use super::policy::{ContainerPolicy, RunLabels};
use super::{ExecRequest, ExecResult, Sandbox, SandboxError};

/// A live container. Dropping it removes the container (best effort, in the background);
/// call [`Container::remove`] to wait for removal.
pub struct Container {
    docker: Docker,
    id: String,
    name: String,
    removed: bool,
}

impl Container {
    /// Create and start a container from `image` under `policy`, labelled with `run_id`/`role`.
    pub async fn start(
        docker: &Docker,
        image: &str,
        policy: &ContainerPolicy,
        run_id: &str,
        role: &str,
    ) -> Result<Container, SandboxError> {
        let _ = (
            docker,
            image,
            policy,
            run_id,
            role,
            RunLabels::deadline_from_now,
        );
        Err(SandboxError::Other("not implemented yet".into()))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Stop and remove now (the anonymous workspace volumes go with it).
    pub async fn remove(mut self) -> Result<(), SandboxError> {
        self.removed = true;
        Ok(())
    }
}

impl RunLabels {
    fn deadline_from_now(lifetime: Duration) -> u64 {
        (SystemTime::now() + lifetime)
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    }
}

#[async_trait]
impl Sandbox for Container {
    async fn exec(&self, req: ExecRequest) -> Result<ExecResult, SandboxError> {
        let _ = (&self.docker, req);
        Err(SandboxError::Other("not implemented yet".into()))
    }

    async fn diff(&self) -> Result<String, SandboxError> {
        Err(SandboxError::Other("not implemented yet".into()))
    }

    fn id(&self) -> &str {
        &self.id
    }
}
