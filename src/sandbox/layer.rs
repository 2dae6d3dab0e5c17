//! One image layer made by one container instead of `docker build`, whose every instruction is
//! a container and a commit (~100 ms each) and whose `COPY` layers stay in the image even when a
//! later step deletes what they copied. A stopped container from the parent image (root, network
//! none, no mounts, no environment, no run labels) receives files by `PUT /archive` — from a
//! build context or streamed straight out of another image — runs one script, and is committed
//! once with the parent's configuration and the labels given.
//!
//! prepare makes two layers this way: the source layer (finalize.sh) and the install stage of
//! the Python dependencies layer (the wheels the builder made, installed on the base and deleted
//! in the same layer). The containers are named `patchloop-prepare-*`, so the reaper removes any
//! a killed harness left behind; here they are removed on every path.

use std::collections::HashMap;

use bollard::Docker;
use bollard::models::{ContainerConfig, ContainerCreateBody, HostConfig, ImageConfig};
use bollard::query_parameters::{
    CommitContainerOptionsBuilder, CreateContainerOptionsBuilder, DownloadFromContainerOptions,
    LogsOptionsBuilder, RemoveContainerOptionsBuilder, RemoveImageOptionsBuilder,
    UploadToContainerOptionsBuilder,
};
use futures_util::{StreamExt, TryStreamExt};

use super::context::{self, Entry};
use super::image::{self, ImageError, ProgressFn};

/// Name prefix of the containers that make prepare's layers.
pub const PREPARE_CONTAINER_PREFIX: &str = "patchloop-prepare-";

/// A stopped container from `parent` that will run `script` as root without network.
pub(crate) struct LayerContainer {
    docker: Docker,
    id: String,
    name: String,
    parent_cfg: ImageConfig,
    script: String,
    stage: String,
}

impl LayerContainer {
    /// Creates the container (not started). `stage` names the layer in progress lines and
    /// errors.
    pub(crate) async fn create(
        docker: &Docker,
        parent: &str,
        script: &str,
        stage: &str,
    ) -> Result<LayerContainer, ImageError> {
        let parent_cfg = docker
            .inspect_image(parent)
            .await
            .map_err(ImageError::docker(format!("inspecting {parent}")))?
            .config
            .unwrap_or_default();
        let name = format!("{PREPARE_CONTAINER_PREFIX}{:016x}", rand::random::<u64>());
        let created = create(docker, &name, parent, Some(script)).await?;
        Ok(LayerContainer {
            docker: docker.clone(),
            id: created,
            name,
            parent_cfg,
            script: script.to_string(),
            stage: stage.to_string(),
        })
    }

    /// Puts build-context entries into the container, rooted at `/`.
    pub(crate) async fn upload(&self, entries: Vec<Entry>) -> Result<(), ImageError> {
        self.docker
            .upload_to_container(
                &self.id,
                Some(UploadToContainerOptionsBuilder::new().path("/").build()),
                bollard::body_try_stream(context::tar_stream(entries)),
            )
            .await
            .map_err(self.docker_or_disk_full(format!("copying files into {}", self.name), ""))
    }

    /// Copies `path` (a directory) of `image` into the directory `into` of the container,
    /// streamed from one archive endpoint to the other (nothing touches the host's disk).
    pub(crate) async fn copy_from_image(
        &self,
        image: &str,
        path: &str,
        into: &str,
    ) -> Result<(), ImageError> {
        let name = format!("{PREPARE_CONTAINER_PREFIX}{:016x}", rand::random::<u64>());
        let source = Guard {
            docker: self.docker.clone(),
            id: create(&self.docker, &name, image, None).await?,
        };
        let tar = self
            .docker
            .download_from_container(
                &source.id,
                Some(DownloadFromContainerOptions {
                    path: path.to_string(),
                }),
            )
            .map_err(std::io::Error::other);
        let copied =
            self.docker
                .upload_to_container(
                    &self.id,
                    Some(UploadToContainerOptionsBuilder::new().path(into).build()),
                    bollard::body_try_stream(tar),
                )
                .await
                .map_err(self.docker_or_disk_full(
                    format!("copying {path} of {image} into {}", self.name),
                    "",
                ));
        source.remove().await;
        copied
    }

    /// Starts the script and waits for it. Each output line goes to `on_line` first; the lines
    /// it does not take are progress (`<stage>: line`) and the error's log tail. A non-zero exit
    /// is [`ImageError::BuildFailed`] (or `DiskFull`) naming the script.
    pub(crate) async fn run(
        &self,
        progress: &Option<ProgressFn>,
        mut on_line: impl FnMut(&str) -> bool,
    ) -> Result<(), ImageError> {
        self.docker
            .start_container(
                &self.id,
                None::<bollard::query_parameters::StartContainerOptions>,
            )
            .await
            .map_err(ImageError::docker(format!("starting {}", self.name)))?;
        let mut tail = image::LogTail::new(40);
        // Followed while it runs: a long install shows its progress as it goes.
        let mut logs = self.docker.logs(
            &self.id,
            Some(
                LogsOptionsBuilder::new()
                    .stdout(true)
                    .stderr(true)
                    .follow(true)
                    .build(),
            ),
        );
        let mut partial = String::new();
        while let Some(Ok(chunk)) = logs.next().await {
            partial.push_str(&String::from_utf8_lossy(&chunk.into_bytes()));
            while let Some(nl) = partial.find('\n') {
                let line: String = partial.drain(..=nl).collect();
                self.line(&line, progress, &mut tail, &mut on_line);
            }
        }
        if !partial.is_empty() {
            self.line(&partial, progress, &mut tail, &mut on_line);
        }
        // bollard reports a non-zero exit as an error carrying the code.
        let code = match self.docker.wait_container(&self.id, None).next().await {
            Some(Ok(r)) => r.status_code,
            Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => code,
            Some(Err(e)) => {
                return Err(ImageError::docker(format!("waiting for {}", self.name))(e));
            }
            None => -1,
        };
        if code != 0 {
            return Err(image::classify_failure(
                &self.stage,
                &tail.render(),
                &format!(
                    "The command '{}' returned a non-zero code: {code}",
                    self.script
                ),
            ));
        }
        Ok(())
    }

    fn line(
        &self,
        raw: &str,
        progress: &Option<ProgressFn>,
        tail: &mut image::LogTail,
        on_line: &mut impl FnMut(&str) -> bool,
    ) {
        let line = image::strip_ansi(raw.trim_end_matches('\n'));
        if line.trim().is_empty() || on_line(&line) {
            return;
        }
        image::say(progress, &format!("{}: {line}", self.stage));
        tail.push(line);
    }

    /// Commits the container as `tag` with the parent's configuration (never the script as
    /// its command), `user` when given, and the parent's labels plus `labels`; then removes the
    /// container. Returns the image id.
    pub(crate) async fn commit(
        mut self,
        tag: &str,
        user: Option<&str>,
        labels: HashMap<String, String>,
    ) -> Result<String, ImageError> {
        let p = &self.parent_cfg;
        let mut all = p.labels.clone().unwrap_or_default();
        all.extend(labels);
        let (repo, version) = tag.rsplit_once(':').unwrap_or((tag, "latest"));
        let committed = self
            .docker
            .commit_container(
                CommitContainerOptionsBuilder::new()
                    .container(&self.id)
                    .repo(repo)
                    .tag(version)
                    .pause(false)
                    .build(),
                ContainerConfig {
                    user: user.map(str::to_string).or_else(|| p.user.clone()),
                    cmd: p
                        .cmd
                        .clone()
                        .filter(|c| !c.is_empty())
                        .or_else(|| Some(vec!["/bin/sh".into()])),
                    entrypoint: p.entrypoint.clone().or_else(|| Some(vec![])),
                    working_dir: p.working_dir.clone(),
                    env: p.env.clone(),
                    labels: Some(all),
                    ..Default::default()
                },
            )
            .await
            .map_err(self.docker_or_disk_full(format!("committing {} as {tag}", self.name), ""))?;
        remove_container(self.docker.clone(), std::mem::take(&mut self.id)).await;
        Ok(committed.id)
    }

    /// A Docker error: [`ImageError::DiskFull`] when the daemon ran out of space, else a Docker
    /// error naming `action`.
    fn docker_or_disk_full(
        &self,
        action: String,
        log_tail: &str,
    ) -> impl FnOnce(bollard::errors::Error) -> ImageError {
        let stage = self.stage.clone();
        let log_tail = log_tail.to_string();
        move |e| {
            let text = e.to_string();
            if image::is_disk_full(&text) {
                image::classify_failure(&stage, &log_tail, &text)
            } else {
                ImageError::docker(action)(e)
            }
        }
    }
}

impl Drop for LayerContainer {
    fn drop(&mut self) {
        if self.id.is_empty() {
            return;
        }
        drop(Guard {
            docker: self.docker.clone(),
            id: std::mem::take(&mut self.id),
        });
    }
}

/// A stopped container from `image`, named `name`; with a script, one run as root without
/// network, else never started.
async fn create(
    docker: &Docker,
    name: &str,
    image: &str,
    script: Option<&str>,
) -> Result<String, ImageError> {
    let created = docker
        .create_container(
            Some(CreateContainerOptionsBuilder::new().name(name).build()),
            ContainerCreateBody {
                image: Some(image.to_string()),
                user: Some("0:0".into()),
                cmd: Some(match script {
                    Some(s) => vec!["/bin/sh".into(), "-c".into(), s.into()],
                    None => vec!["/bin/true".into()],
                }),
                entrypoint: Some(vec![]),
                working_dir: Some("/".into()),
                network_disabled: Some(true),
                host_config: Some(HostConfig {
                    network_mode: Some("none".into()),
                    ..Default::default()
                }),
                ..Default::default()
            },
        )
        .await
        .map_err(ImageError::docker(format!("creating {name} from {image}")))?;
    Ok(created.id)
}

/// Removes a container on every path (in the background when dropped).
struct Guard {
    docker: Docker,
    id: String,
}

impl Guard {
    async fn remove(mut self) {
        remove_container(self.docker.clone(), std::mem::take(&mut self.id)).await;
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if self.id.is_empty() {
            return;
        }
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(remove_container(
                self.docker.clone(),
                std::mem::take(&mut self.id),
            ));
        }
    }
}

async fn remove_container(docker: Docker, id: String) {
    let opts = RemoveContainerOptionsBuilder::new()
        .force(true)
        .v(true)
        .build();
    let _ = docker.remove_container(&id, Some(opts)).await;
}

/// Removes an intermediate image's tag (its layers go with it unless another image uses them);
/// best effort: `images prune` removes what is left.
pub(crate) async fn remove_tag(docker: &Docker, tag: &str) {
    let opts = RemoveImageOptionsBuilder::new().force(false).build();
    if let Err(e) = docker.remove_image(tag, Some(opts), None).await {
        tracing::debug!("removing {tag}: {e}");
    }
}
