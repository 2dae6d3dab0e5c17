//! Connecting to the Docker daemon, with errors that say how to start one.

use bollard::Docker;

use super::SandboxError;

/// The socket (or URL) we will try, for error messages.
pub fn target() -> String {
    std::env::var("DOCKER_HOST").unwrap_or_else(|_| "unix:///var/run/docker.sock".to_string())
}

/// Connect (honouring `DOCKER_HOST`), negotiate the API version (Debian's 20.10 speaks 1.41)
/// and ping, so a missing daemon is reported here, once, with the fix.
pub async fn connect() -> Result<Docker, SandboxError> {
    let no_daemon = |reason: String| SandboxError::NoDaemon {
        socket: target(),
        reason,
    };
    let docker = Docker::connect_with_defaults().map_err(|e| no_daemon(e.to_string()))?;
    let docker = docker
        .negotiate_version()
        .await
        .map_err(|e| no_daemon(e.to_string()))?;
    docker.ping().await.map_err(|e| no_daemon(e.to_string()))?;
    Ok(docker)
}

/// Connect and reap what dead runs left behind: every command that creates containers starts
/// here, so a `kill -9`ed earlier run costs nothing but its deadline.
pub async fn connect_and_reap() -> Result<Docker, SandboxError> {
    let d = connect().await?;
    let report = super::reaper::reap(&d, crate::clock::now_unix()).await?;
    if !report.containers_removed.is_empty() || !report.volumes_removed.is_empty() {
        tracing::info!(
            containers = report.containers_removed.len(),
            volumes = report.volumes_removed.len(),
            "reaped leftovers of dead runs"
        );
    }
    Ok(d)
}
