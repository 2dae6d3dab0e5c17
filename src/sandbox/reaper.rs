//! Removes what a dead harness left behind: labelled containers whose deadline passed, and
//! the named read-only volumes no container uses any more.
//!
//! Runs at start-up of every command that creates containers. It judges only by labels, so it
//! needs no state from the run that created them.

use std::collections::HashMap;

use bollard::Docker;
use bollard::query_parameters::{
    ListContainersOptions, ListVolumesOptions, RemoveContainerOptionsBuilder,
};

use super::{LABEL_DEADLINE, LABEL_RUN, SandboxError};

/// What one reaper pass found and removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ReapReport {
    /// Labelled containers still within their deadline (left alone).
    pub live: usize,
    pub containers_removed: Vec<String>,
    pub volumes_removed: Vec<String>,
}

fn label_filter() -> Option<HashMap<String, Vec<String>>> {
    Some(HashMap::from([(
        "label".to_string(),
        vec![LABEL_RUN.to_string()],
    )]))
}

/// Is a container with these labels past its deadline at `now` (unix seconds)?
/// A missing or unreadable deadline counts as expired: such a container is not ours to keep.
pub fn expired(labels: &HashMap<String, String>, now: u64) -> bool {
    labels
        .get(LABEL_DEADLINE)
        .and_then(|d| d.parse::<u64>().ok())
        .is_none_or(|d| d <= now)
}

/// A prepare container older than this was abandoned (finalize takes seconds; a Rust
/// project's first compile minutes).
const PREPARE_MAX_AGE_SECS: u64 = 2 * 3600;

fn prepare_abandoned(created_unix: u64, now: u64) -> bool {
    now.saturating_sub(created_unix) > PREPARE_MAX_AGE_SECS
}

/// One pass: remove expired containers, then unused patchloop volumes.
pub async fn reap(docker: &Docker, now: u64) -> Result<ReapReport, SandboxError> {
    let mut report = ReapReport::default();
    let containers = docker
        .list_containers(Some(ListContainersOptions {
            all: true,
            filters: label_filter(),
            ..Default::default()
        }))
        .await
        .map_err(SandboxError::docker("listing patchloop containers"))?;
    let mut volumes_in_use = std::collections::HashSet::new();
    for c in containers {
        let labels = c.labels.clone().unwrap_or_default();
        let id = c.id.clone().unwrap_or_default();
        if expired(&labels, now) {
            let opts = RemoveContainerOptionsBuilder::new()
                .force(true)
                .v(true)
                .build();
            match docker.remove_container(&id, Some(opts)).await {
                Ok(()) => report.containers_removed.push(id),
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 404 | 409,
                    ..
                }) => {}
                Err(e) => {
                    return Err(SandboxError::Docker {
                        action: format!("removing expired container {id}"),
                        source: e,
                    });
                }
            }
        } else {
            report.live += 1;
            for m in c.mounts.unwrap_or_default() {
                if let Some(name) = m.name {
                    volumes_in_use.insert(name);
                }
            }
        }
    }

    // Source-layer containers (prepare's finalize step) carry no labels (the image would
    // inherit them): judged by name and age.
    let prepares = docker
        .list_containers(Some(ListContainersOptions {
            all: true,
            filters: Some(HashMap::from([(
                "name".to_string(),
                vec![crate::sandbox::layer::PREPARE_CONTAINER_PREFIX.to_string()],
            )])),
            ..Default::default()
        }))
        .await
        .map_err(SandboxError::docker("listing patchloop prepare containers"))?;
    for c in prepares {
        let named = c.names.iter().flatten().any(|n| {
            n.trim_start_matches('/')
                .starts_with(crate::sandbox::layer::PREPARE_CONTAINER_PREFIX)
        });
        let created = c.created.unwrap_or(0).max(0) as u64;
        if named && prepare_abandoned(created, now) {
            let id = c.id.clone().unwrap_or_default();
            let opts = RemoveContainerOptionsBuilder::new().force(true).build();
            if docker.remove_container(&id, Some(opts)).await.is_ok() {
                report.containers_removed.push(id);
            }
        }
    }

    let volumes = docker
        .list_volumes(Some(ListVolumesOptions {
            filters: label_filter(),
        }))
        .await
        .map_err(SandboxError::docker("listing patchloop volumes"))?;
    for v in volumes.volumes.unwrap_or_default() {
        if volumes_in_use.contains(&v.name) {
            continue;
        }
        // Docker refuses to remove a volume any container still references (409): such a
        // volume belongs to a container created after our listing and is left alone.
        if docker
            .remove_volume(
                &v.name,
                None::<bollard::query_parameters::RemoveVolumeOptions>,
            )
            .await
            .is_ok()
        {
            report.volumes_removed.push(v.name);
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadline_judgement() {
        let l = |d: &str| HashMap::from([(LABEL_DEADLINE.to_string(), d.to_string())]);
        assert!(expired(&l("100"), 100));
        assert!(expired(&l("99"), 100));
        assert!(!expired(&l("101"), 100));
        assert!(expired(&l("garbage"), 100));
        assert!(expired(&HashMap::new(), 100));
    }

    #[test]
    fn prepare_containers_are_abandoned_after_two_hours() {
        assert!(!prepare_abandoned(1000, 1000 + 60));
        assert!(!prepare_abandoned(1000, 1000 + 7200));
        assert!(prepare_abandoned(1000, 1000 + 7201));
        assert!(!prepare_abandoned(2000, 1000));
    }
}
