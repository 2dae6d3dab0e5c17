//! Build plumbing shared with `prepare`: streaming a context to the builder, reading its failures.

use std::collections::VecDeque;

use bollard::Docker;
use futures_util::StreamExt;

use super::{ImageError, ProgressFn, say};
use crate::sandbox::context::{self, Entry};

/// The last lines of a log.
pub(crate) struct LogTail {
    lines: VecDeque<String>,
    cap: usize,
}

impl LogTail {
    pub(crate) fn new(cap: usize) -> Self {
        LogTail {
            lines: VecDeque::with_capacity(cap),
            cap,
        }
    }

    pub(crate) fn push(&mut self, line: String) {
        if self.lines.len() == self.cap {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    pub(crate) fn render(&self) -> String {
        self.lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

pub(crate) fn is_disk_full(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    t.contains("no space left on device") || t.contains("disk quota exceeded")
}

/// What failed, from the build log and the daemon's error: a `patchloop: FAILED: CMD` line our
/// scripts print wins, then the daemon's "The command '...' returned a non-zero code", then the
/// last `Step N/M` line.
pub fn failing_command(log: &str, error: &str) -> String {
    if let Some(line) = log
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("patchloop: FAILED: "))
    {
        return line.to_string();
    }
    if let Some(rest) = error.strip_prefix("The command '")
        && let Some((cmd, _)) = rest.rsplit_once("' returned")
    {
        return cmd.to_string();
    }
    if let Some(step) = log.lines().rev().find(|l| l.starts_with("Step ")) {
        return step.to_string();
    }
    error.to_string()
}

/// The error for a failed build: out of disk space, or the failing command with the log's tail.
pub fn classify_failure(stage: &str, log_tail: &str, error: &str) -> ImageError {
    let log_tail = format!("{log_tail}\n{error}");
    if is_disk_full(&log_tail) {
        return ImageError::DiskFull {
            stage: stage.to_string(),
            log_tail,
        };
    }
    let hint = if log_tail.contains("CERTIFICATE_VERIFY_FAILED") {
        "TLS verification failed (a TLS-intercepting proxy?): pass its CA with --ca-cert FILE (or set SSL_CERT_FILE / PIP_CERT)"
    } else {
        "fix the command above (or the files it reads) and run again"
    };
    ImageError::BuildFailed {
        stage: stage.to_string(),
        command: failing_command(&log_tail, error),
        log_tail,
        hint: hint.into(),
    }
}

/// Removes ANSI escape sequences (the builder colours stderr) and carriage returns.
pub fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.peek() == Some(&'[') {
                chars.next();
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        if c != '\r' {
            out.push(c);
        }
    }
    out
}

/// The classic builder's race with a concurrent image removal: the cached layer a build was
/// about to commit on top of was deleted under it (another job's cleanup removed an image whose
/// untagged parent that layer was, before this build had made a child of it).
pub(crate) fn is_lost_parent(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    t.contains("unknown parent image id") || t.contains("failed to set parent")
}

/// Streams a context to the build endpoint (classic builder), forwards its output as progress
/// and turns failures into [`ImageError::BuildFailed`] / [`ImageError::DiskFull`]. Returns the
/// image id. A build that lost a cached layer to a concurrent removal ([`is_lost_parent`]) is
/// run once more: the layer is then made afresh.
pub(crate) async fn run_build(
    docker: &Docker,
    options: bollard::query_parameters::BuildImageOptions,
    entries: Vec<Entry>,
    stage: &str,
    progress: &Option<ProgressFn>,
) -> Result<String, ImageError> {
    match build_once(docker, options.clone(), entries.clone(), stage, progress).await {
        Err(ImageError::BuildFailed { log_tail, .. }) if is_lost_parent(&log_tail) => {
            say(
                progress,
                &format!(
                    "{stage}: a cached layer was removed while the build used it (another job's image cleanup on this daemon?); building again"
                ),
            );
            build_once(docker, options, entries, stage, progress).await
        }
        built => built,
    }
}

async fn build_once(
    docker: &Docker,
    options: bollard::query_parameters::BuildImageOptions,
    entries: Vec<Entry>,
    stage: &str,
    progress: &Option<ProgressFn>,
) -> Result<String, ImageError> {
    let tag = options.t.clone().unwrap_or_default();
    let body = bollard::body_try_stream(context::tar_stream(entries));
    let mut stream = docker.build_image(options, None, Some(body));
    let mut tail = LogTail::new(40);
    let mut failure: Option<String> = None;
    while let Some(item) = stream.next().await {
        match item {
            Ok(info) => {
                if let Some(text) = info.stream.as_deref() {
                    for line in text.lines().map(strip_ansi) {
                        if line.trim().is_empty() {
                            continue;
                        }
                        say(progress, &format!("{stage}: {line}"));
                        tail.push(line);
                    }
                }
                if let Some(detail) = info.error_detail.and_then(|d| d.message) {
                    failure = Some(detail);
                }
            }
            Err(bollard::errors::Error::DockerStreamError { error }) => {
                failure = Some(error);
                break;
            }
            Err(e) => {
                let text = e.to_string();
                if is_disk_full(&text) {
                    failure = Some(text);
                    break;
                }
                return Err(ImageError::docker(format!("building the {stage}"))(e));
            }
        }
    }
    if let Some(error) = failure {
        return Err(classify_failure(stage, &tail.render(), &error));
    }
    let inspect = docker
        .inspect_image(&tag)
        .await
        .map_err(ImageError::docker(format!(
            "inspecting the freshly built {tag}"
        )))?;
    Ok(inspect.id.unwrap_or_default())
}
