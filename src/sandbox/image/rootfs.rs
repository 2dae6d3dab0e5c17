//! The offline path: debootstrap a Debian rootfs and import it, for hosts that cannot pull bases.

use std::path::{Path, PathBuf};

use bollard::Docker;
use bollard::query_parameters::CreateImageOptionsBuilder;
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncBufReadExt, AsyncReadExt};

use super::{BaseOptions, ImageError, LogTail, ROOTFS_REPO, is_disk_full, which};

const DEFAULT_MIRROR: &str = "http://deb.debian.org/debian";

/// The Debian mirror: `--mirror`, else the first `deb.debian.org`-style URI of the host's apt
/// sources, else deb.debian.org.
pub fn resolve_mirror(explicit: Option<&str>) -> String {
    if let Some(m) = explicit {
        return m.to_string();
    }
    for path in [
        "/etc/apt/sources.list.d/debian.sources",
        "/etc/apt/sources.list",
    ] {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Some(m) = mirror_from_sources(&text)
        {
            return m;
        }
    }
    DEFAULT_MIRROR.to_string()
}

/// The main-archive mirror named in apt sources (deb822 `URIs:` or one-line `deb URI suite`),
/// skipping security mirrors.
pub fn mirror_from_sources(text: &str) -> Option<String> {
    for line in text.lines().map(str::trim) {
        if line.starts_with('#') {
            continue;
        }
        let uri = if let Some(rest) = line.strip_prefix("URIs:") {
            rest.split_whitespace().next()
        } else if let Some(rest) = line.strip_prefix("deb ") {
            rest.split_whitespace().find(|w| !w.starts_with('['))
        } else {
            None
        };
        if let Some(uri) = uri
            && (uri.starts_with("http://") || uri.starts_with("https://"))
            && !uri.contains("security")
        {
            return Some(uri.trim_end_matches('/').to_string());
        }
    }
    None
}

pub(super) fn rootfs_tag(suite: &str, include: &str) -> String {
    let mut h = Sha256::new();
    h.update(suite.as_bytes());
    h.update(include.as_bytes());
    format!("{ROOTFS_REPO}:{suite}-{}", &hex::encode(h.finalize())[..12])
}

/// Whether this process runs as root (debootstrap needs it), from `/proc/self/status`.
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| euid_from_status(&s))
        == Some(0)
}

pub(super) fn euid_from_status(status: &str) -> Option<u32> {
    let line = status.lines().find(|l| l.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// debootstrap a minbase rootfs of a Debian suite and `docker import` it (Engine API, streamed
/// tar); reused when its tag exists.
pub(super) async fn ensure_rootfs(
    docker: &Docker,
    opts: &BaseOptions,
    suite: &str,
    include: &str,
) -> Result<String, ImageError> {
    let tag = rootfs_tag(suite, include);
    if docker.inspect_image(&tag).await.is_ok() {
        opts.say(&format!("rootfs {tag} exists; reusing it"));
        return Ok(tag);
    }
    if which("debootstrap").is_none() {
        return Err(ImageError::Offline {
            reason: "debootstrap is not installed\n  install it with `apt-get install debootstrap` (scripts/ensure-docker does), or make the online base image (python:3.12-slim, rust:*-slim, node:*-slim) pullable".into(),
        });
    }
    if !is_root() {
        return Err(ImageError::Offline {
            reason: "debootstrap needs root\n  run `sudo patchloop images build --offline` once; later builds reuse the image".into(),
        });
    }
    let mirror = resolve_mirror(opts.mirror.as_deref());
    let dir = tempfile::Builder::new()
        .prefix("patchloop-rootfs-")
        .tempdir_in("/var/tmp")
        .map_err(ImageError::io(
            "cannot create a directory for debootstrap in /var/tmp",
        ))?;
    opts.say(&format!(
        "debootstrap {suite} from {mirror} into {} (about a minute)",
        dir.path().display()
    ));
    debootstrap(dir.path(), &mirror, suite, include, opts).await?;
    opts.say(&format!("importing the rootfs as {tag}"));
    import_dir(docker, dir.path(), &tag).await?;
    Ok(tag)
}

async fn debootstrap(
    dir: &Path,
    mirror: &str,
    suite: &str,
    include: &str,
    opts: &BaseOptions,
) -> Result<(), ImageError> {
    let bin = which("debootstrap").unwrap_or_else(|| PathBuf::from("debootstrap"));
    let mut child = tokio::process::Command::new(bin)
        .arg("--variant=minbase")
        .arg(format!("--include={include}"))
        .arg(suite)
        .arg(dir)
        .arg(mirror)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(ImageError::io("cannot start debootstrap"))?;
    let mut tail = LogTail::new(30);
    let stderr = child.stderr.take();
    let err_task = tokio::spawn(async move {
        let mut text = String::new();
        if let Some(mut e) = stderr {
            let _ = e.read_to_string(&mut text).await;
        }
        text
    });
    if let Some(out) = child.stdout.take() {
        let mut lines = tokio::io::BufReader::new(out).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            // debootstrap prints one line per package; show the phases only.
            if line.starts_with("I: Retrieving Release")
                || line.starts_with("I: Validating") && line.ends_with("Packages")
                || line.starts_with("I: Extracting base-files")
                || line.starts_with("I: Installing core")
                || line.starts_with("I: Configuring required")
                || line.starts_with("I: Unpacking the base")
                || line.starts_with("I: Configuring the base")
                || line.starts_with("I: Base system installed")
            {
                opts.say(&format!("debootstrap: {line}"));
            }
            tail.push(line);
        }
    }
    let status = child
        .wait()
        .await
        .map_err(ImageError::io("debootstrap did not finish"))?;
    let stderr_text = err_task.await.unwrap_or_default();
    for l in stderr_text.lines() {
        tail.push(l.to_string());
    }
    if !status.success() {
        let log_tail = tail.render();
        if is_disk_full(&log_tail) {
            return Err(ImageError::DiskFull {
                stage: "debootstrap".into(),
                log_tail,
            });
        }
        return Err(ImageError::BuildFailed {
            stage: "offline base (debootstrap)".into(),
            command: format!(
                "debootstrap --variant=minbase --include={include} {suite} {} {mirror}",
                dir.display()
            ),
            log_tail,
            hint: "check that the mirror is reachable (choose another with --mirror URL)".into(),
        });
    }
    Ok(())
}

/// `docker import` of a directory: GNU tar streams it (it keeps devices, hard links and xattrs
/// faithfully) into the Engine API's image-create endpoint.
async fn import_dir(docker: &Docker, dir: &Path, tag: &str) -> Result<(), ImageError> {
    let mut child = tokio::process::Command::new("tar")
        .args(["--numeric-owner", "--one-file-system", "-C"])
        .arg(dir)
        .args([
            "--exclude=./var/cache/apt/archives/*.deb",
            "--exclude=./dev/*",
            "--exclude=./proc/*",
            "--exclude=./sys/*",
            "-cf",
            "-",
            ".",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(ImageError::io("cannot start tar to stream the rootfs"))?;
    let Some(stdout) = child.stdout.take() else {
        return Err(ImageError::Offline {
            reason: "tar gave no output stream".into(),
        });
    };
    let body = futures_util::stream::unfold(stdout, |mut out| async move {
        let mut buf = vec![0u8; 256 * 1024];
        match out.read(&mut buf).await {
            Ok(0) => None,
            Ok(n) => {
                buf.truncate(n);
                Some((Ok(bytes::Bytes::from(buf)), out))
            }
            Err(e) => Some((Err(e), out)),
        }
    });
    let (repo, t) = tag.split_once(':').unwrap_or((tag, "latest"));
    let options = CreateImageOptionsBuilder::default()
        .from_src("-")
        .repo(repo)
        .tag(t)
        .build();
    let mut stream = docker.create_image(Some(options), Some(bollard::body_try_stream(body)), None);
    while let Some(item) = stream.next().await {
        if let Err(e) = item {
            let text = e.to_string();
            if is_disk_full(&text) {
                return Err(ImageError::DiskFull {
                    stage: "rootfs import".into(),
                    log_tail: text,
                });
            }
            return Err(ImageError::docker("importing the debootstrap rootfs")(e));
        }
    }
    let status = child
        .wait()
        .await
        .map_err(ImageError::io("tar of the rootfs did not finish"))?;
    if !status.success() {
        return Err(ImageError::Offline {
            reason: format!("tar of the rootfs exited with {status}"),
        });
    }
    Ok(())
}
