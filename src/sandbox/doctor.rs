//! `patchloop doctor`: is this machine fit to run episodes? Reports the daemon, the posture
//! probes in a real hardened container, the base images present, and leftovers.

use std::fmt::Write as _;

use bollard::Docker;
use bollard::query_parameters::{ListContainersOptions, ListImagesOptions, ListVolumesOptions};

use super::container::Container;
use super::policy::ContainerPolicy;
use super::probe::{self, Probe};
use super::{LABEL_RUN, Sandbox, SandboxError};

#[derive(Debug, Default)]
pub struct DoctorReport {
    pub daemon: String,
    pub api_version: String,
    pub security_options: Vec<String>,
    pub images: Vec<String>,
    pub probe_image: Option<String>,
    pub probes: Vec<Probe>,
    pub probe_error: Option<String>,
    pub leftover_containers: usize,
    pub leftover_volumes: usize,
}

impl DoctorReport {
    pub fn healthy(&self) -> bool {
        self.probe_error.is_none() && !self.probes.is_empty() && self.probes.iter().all(|p| p.ok)
    }

    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "daemon:      Docker {} (API {})",
            self.daemon, self.api_version
        );
        let _ = writeln!(s, "security:    {}", self.security_options.join(", "));
        let _ = writeln!(
            s,
            "images:      {}",
            if self.images.is_empty() {
                "none (run `patchloop images build`)".to_string()
            } else {
                self.images.join(", ")
            }
        );
        match (&self.probe_image, &self.probe_error) {
            (_, Some(e)) => {
                let _ = writeln!(s, "probes:      not run: {e}");
            }
            (Some(img), None) => {
                let _ = writeln!(s, "probes:      in a hardened container from {img}");
                for p in &self.probes {
                    let _ = writeln!(
                        s,
                        "  {} {:<20} {}",
                        if p.ok { "ok  " } else { "FAIL" },
                        p.probe,
                        p.observed
                    );
                }
            }
            (None, None) => {}
        }
        let _ = writeln!(
            s,
            "leftovers:   {} containers, {} volumes labelled {LABEL_RUN}",
            self.leftover_containers, self.leftover_volumes
        );
        let _ = writeln!(
            s,
            "verdict:     {}",
            if self.healthy() {
                "ready: the sandbox holds on this daemon"
            } else {
                "NOT ready: see above"
            }
        );
        s
    }
}

/// Images patchloop built (base, deps, sandbox), newest first.
async fn patchloop_images(docker: &Docker) -> Result<Vec<String>, SandboxError> {
    let images = docker
        .list_images(Some(ListImagesOptions::default()))
        .await
        .map_err(SandboxError::docker("listing images"))?;
    let mut tags: Vec<(i64, String)> = images
        .into_iter()
        .flat_map(|i| {
            let created = i.created;
            i.repo_tags.into_iter().map(move |t| (created, t))
        })
        .filter(|(_, t)| t.starts_with("patchloop-base"))
        .collect();
    tags.sort_by_key(|t| std::cmp::Reverse(t.0));
    Ok(tags.into_iter().map(|(_, t)| t).collect())
}

pub async fn run(docker: &Docker, image: Option<String>) -> Result<DoctorReport, SandboxError> {
    let mut report = DoctorReport::default();
    let version = docker
        .version()
        .await
        .map_err(SandboxError::docker("reading the daemon version"))?;
    report.daemon = version.version.unwrap_or_default();
    report.api_version = version.api_version.unwrap_or_default();
    let info = docker
        .info()
        .await
        .map_err(SandboxError::docker("reading daemon info"))?;
    report.security_options = info.security_options.unwrap_or_default();
    report.images = patchloop_images(docker).await?;

    report.probe_image = image.or_else(|| report.images.first().cloned());
    match &report.probe_image {
        None => {
            report.probe_error =
                Some("no base image to probe with: run `patchloop images build`".into())
        }
        Some(img) => {
            let policy = ContainerPolicy {
                lifetime_secs: 120,
                ..Default::default()
            };
            match Container::start(docker, img, &policy, "doctor", "probe").await {
                Err(e) => report.probe_error = Some(e.to_string()),
                Ok(c) => {
                    match probe::posture(&c as &dyn Sandbox).await {
                        Ok(p) => report.probes = p,
                        Err(e) => report.probe_error = Some(e.to_string()),
                    }
                    c.remove().await?;
                }
            }
        }
    }

    let filter = Some(std::collections::HashMap::from([(
        "label".to_string(),
        vec![LABEL_RUN.to_string()],
    )]));
    report.leftover_containers = docker
        .list_containers(Some(ListContainersOptions {
            all: true,
            filters: filter.clone(),
            ..Default::default()
        }))
        .await
        .map_err(SandboxError::docker("listing containers"))?
        .len();
    report.leftover_volumes = docker
        .list_volumes(Some(ListVolumesOptions { filters: filter }))
        .await
        .map_err(SandboxError::docker("listing volumes"))?
        .volumes
        .map(|v| v.len())
        .unwrap_or(0);
    Ok(report)
}
