//! Posture probes: read the kernel's own view from inside a sandbox container (capabilities,
//! no_new_privs, seccomp mode, io_uring, AF_VSOCK, user namespaces, interfaces, read-only root)
//! instead of trusting the flags we passed. Used by `patchloop doctor` and before episodes.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ExecRequest, Sandbox, SandboxError};

const SCRIPT: &str = include_str!("probe_posture.py");

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    pub probe: String,
    /// The sandbox held.
    pub ok: bool,
    pub observed: String,
}

/// Run every posture probe in `sandbox` (needs python3 in the image).
pub async fn posture(sandbox: &dyn Sandbox) -> Result<Vec<Probe>, SandboxError> {
    let r = sandbox
        .exec(
            ExecRequest::argv(["python3", "-I", "-"])
                .stdin(SCRIPT)
                .timeout(Duration::from_secs(30)),
        )
        .await?;
    let text = r.output.render();
    let probes: Vec<Probe> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    if probes.is_empty() || !r.status.success() {
        return Err(SandboxError::Other(format!(
            "the posture probe did not run ({:?}): {}",
            r.status,
            text.trim()
        )));
    }
    Ok(probes)
}

/// The probes that failed, rendered for an error message.
pub fn failures(probes: &[Probe]) -> Vec<String> {
    probes
        .iter()
        .filter(|p| !p.ok)
        .map(|p| format!("{} (observed: {})", p.probe, p.observed))
        .collect()
}
