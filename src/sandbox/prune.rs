//! `patchloop images prune`: removes the images patchloop built that are older than an age.
//!
//! Every prepared checkout and every eval task leaves a `patchloop-sandbox:*` tag (plus its
//! `patchloop-install:*` / `patchloop-deps:*` parents, and a `patchloop-wheels:*` stage a killed
//! prepare did not remove); on a self-hosted runner they pile up. Only tags in patchloop's own
//! repositories are candidates, base and builder images only when asked (offline they take
//! minutes to rebuild), and removal is never forced: Docker refuses an image
//! a container still uses, which is reported as kept. Removing a tag whose image has children
//! only untags it; the layers go with the last child.

use bollard::Docker;
use bollard::query_parameters::{ListImagesOptions, RemoveImageOptions};

use super::SandboxError;
use super::builder::BUILDER_REPO;
use super::image::{BASE_REPO, ROOTFS_REPO};
use super::prepare::{DEPS_REPO, INSTALL_REPO, SANDBOX_REPO, WHEELS_REPO};

/// What to prune.
#[derive(Debug, Clone)]
pub struct PruneOptions {
    /// Only images created more than this many seconds before `now`.
    pub older_than_secs: u64,
    /// Only `patchloop-sandbox` tags whose name (after the colon) starts with this.
    pub name_prefix: Option<String>,
    /// Also the base images, their builders and the offline rootfs.
    pub bases: bool,
    /// List, remove nothing.
    pub dry_run: bool,
}

/// One tag the pass looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub tag: String,
    /// Seconds since the image was created.
    pub age_secs: u64,
    /// The image's own layers: its size less that of its nearest tagged ancestor (the base,
    /// or the dependencies image it was built on).
    pub own_size: u64,
}

/// Why a candidate stayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    pub tag: String,
    pub reason: String,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PruneReport {
    /// Removed (or, in a dry run, would be removed).
    pub removed: Vec<Candidate>,
    /// Old enough but still there: in use by a container, or Docker refused.
    pub kept: Vec<Kept>,
    /// patchloop tags younger than the age (left alone).
    pub younger: usize,
}

/// The repositories a pass may touch, in removal order (children before their parents, so a
/// parent's layers go in the same pass).
fn repos(opts: &PruneOptions) -> Vec<&'static str> {
    if opts.name_prefix.is_some() {
        return vec![SANDBOX_REPO];
    }
    let mut r = vec![SANDBOX_REPO, INSTALL_REPO, DEPS_REPO, WHEELS_REPO];
    if opts.bases {
        r.extend([BUILDER_REPO, BASE_REPO, ROOTFS_REPO]);
    }
    r
}

/// What [`select`] needs of an image (`docker image ls --all`).
#[derive(Debug, Clone)]
pub struct ImageInfo {
    pub id: String,
    /// Empty when the image is local-built from nothing, or its parent is not local.
    pub parent_id: String,
    pub tags: Vec<String>,
    /// Unix seconds.
    pub created: i64,
    /// Bytes, the parent's layers included.
    pub size: i64,
}

fn is_tagged(i: &ImageInfo) -> bool {
    i.tags.iter().any(|t| t != "<none>:<none>")
}

/// Size less the nearest tagged ancestor's. Dockerfile builds leave untagged intermediate
/// images between the two, which are skipped.
fn own_size(image: &ImageInfo, by_id: &std::collections::HashMap<&str, &ImageInfo>) -> u64 {
    let mut parent = by_id.get(image.parent_id.as_str());
    // A cycle cannot happen in Docker's graph; the bound only keeps a bad answer finite.
    for _ in 0..1000 {
        match parent {
            Some(p) if is_tagged(p) => return u64::try_from(image.size - p.size).unwrap_or(0),
            Some(p) => parent = by_id.get(p.parent_id.as_str()),
            None => break,
        }
    }
    u64::try_from(image.size).unwrap_or(0)
}

/// The tags to remove, in removal order, and how many patchloop tags are too young. Pure.
pub fn select(images: &[ImageInfo], opts: &PruneOptions, now: u64) -> (Vec<Candidate>, usize) {
    let by_id: std::collections::HashMap<&str, &ImageInfo> =
        images.iter().map(|i| (i.id.as_str(), i)).collect();
    let repos = repos(opts);
    let mut out = Vec::new();
    let mut younger = 0;
    for image in images {
        let age_secs = now.saturating_sub(u64::try_from(image.created).unwrap_or(0));
        for tag in &image.tags {
            let Some((repo, name)) = tag.rsplit_once(':') else {
                continue;
            };
            let Some(rank) = repos.iter().position(|r| *r == repo) else {
                continue;
            };
            if let Some(prefix) = &opts.name_prefix
                && !name.starts_with(prefix.as_str())
            {
                continue;
            }
            // `0s` means every image, even one created this second.
            if opts.older_than_secs > 0 && age_secs <= opts.older_than_secs {
                younger += 1;
                continue;
            }
            out.push((
                rank,
                Candidate {
                    tag: tag.clone(),
                    age_secs,
                    own_size: own_size(image, &by_id),
                },
            ));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.tag.cmp(&b.1.tag)));
    (out.into_iter().map(|(_, c)| c).collect(), younger)
}

/// One pass over the daemon's images.
pub async fn prune(
    docker: &Docker,
    opts: &PruneOptions,
    now: u64,
) -> Result<PruneReport, SandboxError> {
    // --all: the untagged intermediate images are needed to find each image's tagged ancestor.
    let images = docker
        .list_images(Some(ListImagesOptions {
            all: true,
            ..Default::default()
        }))
        .await
        .map_err(SandboxError::docker("listing images"))?;
    let images: Vec<_> = images
        .into_iter()
        .map(|i| ImageInfo {
            id: i.id,
            parent_id: i.parent_id,
            tags: i.repo_tags,
            created: i.created,
            size: i.size,
        })
        .collect();
    let (candidates, younger) = select(&images, opts, now);
    let mut report = PruneReport {
        younger,
        ..Default::default()
    };
    for c in candidates {
        if opts.dry_run {
            report.removed.push(c);
            continue;
        }
        let removed = docker
            .remove_image(
                &c.tag,
                Some(RemoveImageOptions {
                    force: false,
                    noprune: false,
                    ..Default::default()
                }),
                None,
            )
            .await;
        match removed {
            Ok(_) => report.removed.push(c),
            // 409: a container (running or not) uses it. Never forced: that container may be
            // a live episode's.
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 409, ..
            }) => report.kept.push(Kept {
                tag: c.tag,
                reason: "a container uses it".into(),
            }),
            // Gone meanwhile (another prune, or a parent removed with its last child).
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => {}
            Err(e) => report.kept.push(Kept {
                tag: c.tag,
                reason: e.to_string(),
            }),
        }
    }
    Ok(report)
}

/// `3d 4h`, `2h 0m`, `15m 3s`, `40s`: the largest unit and the next, for a listing.
pub fn age(secs: u64) -> String {
    const UNITS: [(u64, &str); 4] = [(86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")];
    let i = UNITS.iter().position(|(n, _)| secs >= *n).unwrap_or(3);
    let (n, u) = UNITS[i];
    match UNITS.get(i + 1) {
        Some((m, v)) => format!("{}{u} {}{v}", secs / n, secs % n / m),
        None => format!("{}{u}", secs / n),
    }
}

/// `1.2 GiB`, `36 MiB`, `412 KiB`: for a listing.
pub fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{} MiB", b >> 20),
        b => format!("{} KiB", b.div_ceil(1024)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> PruneOptions {
        PruneOptions {
            older_than_secs: 7 * 86_400,
            name_prefix: None,
            bases: false,
            dry_run: false,
        }
    }

    const NOW: u64 = 100 * 86_400;

    fn img(tags: &[&str], days_old: u64) -> ImageInfo {
        ImageInfo {
            id: format!("sha256:{}", tags.join(",")),
            parent_id: String::new(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            created: (NOW - days_old * 86_400) as i64,
            size: 1 << 20,
        }
    }

    fn tags(c: &[Candidate]) -> Vec<&str> {
        c.iter().map(|c| c.tag.as_str()).collect()
    }

    #[test]
    fn only_old_patchloop_tags_children_first() {
        let images = [
            img(&["patchloop-deps:aaa"], 30),
            img(&["patchloop-wheels:ccc"], 30),
            img(&["patchloop-builder:ddd"], 30),
            img(&["patchloop-sandbox:proj-1"], 30),
            img(&["patchloop-install:bbb"], 30),
            img(&["patchloop-sandbox:proj-2"], 1),
            img(&["python:3.12-slim", "patchloop-base:py-1"], 30),
            img(&["patchloop-rootfs:bookworm-1"], 30),
            img(&["myapp:latest", "mypatchloop-sandbox:x"], 30),
            img(&[], 30),
        ];
        let (c, younger) = select(&images, &opts(), NOW);
        assert_eq!(
            tags(&c),
            [
                "patchloop-sandbox:proj-1",
                "patchloop-install:bbb",
                "patchloop-deps:aaa",
                "patchloop-wheels:ccc"
            ]
        );
        assert_eq!(younger, 1);
        assert_eq!(c[0].age_secs, 30 * 86_400);
    }

    #[test]
    fn bases_only_when_asked() {
        let images = [
            img(&["python:3.12-slim", "patchloop-base:py-1"], 30),
            img(&["patchloop-rootfs:bookworm-1"], 30),
            img(&["patchloop-builder:ddd"], 30),
        ];
        let (c, _) = select(
            &images,
            &PruneOptions {
                bases: true,
                ..opts()
            },
            NOW,
        );
        assert_eq!(
            tags(&c),
            [
                "patchloop-builder:ddd",
                "patchloop-base:py-1",
                "patchloop-rootfs:bookworm-1"
            ]
        );
    }

    #[test]
    fn a_name_prefix_narrows_to_sandbox_tags() {
        let images = [
            img(&["patchloop-sandbox:proj-1"], 30),
            img(&["patchloop-sandbox:other-1"], 30),
            img(&["patchloop-deps:proj"], 30),
        ];
        let (c, _) = select(
            &images,
            &PruneOptions {
                name_prefix: Some("proj".into()),
                bases: true,
                ..opts()
            },
            NOW,
        );
        assert_eq!(tags(&c), ["patchloop-sandbox:proj-1"]);
    }

    #[test]
    fn the_age_is_exclusive_and_a_future_date_is_young() {
        let mut future = img(&["patchloop-sandbox:f"], 0);
        future.created = (NOW + 50) as i64;
        let images = [img(&["patchloop-sandbox:edge"], 7), future];
        let (c, younger) = select(&images, &opts(), NOW);
        assert!(c.is_empty(), "{c:?}");
        assert_eq!(younger, 2);
        let all = PruneOptions {
            older_than_secs: 0,
            ..opts()
        };
        assert_eq!(select(&images, &all, NOW).0.len(), 2);
    }

    #[test]
    fn own_size_is_measured_from_the_nearest_tagged_ancestor() {
        let mut base = img(&["patchloop-base:py-1"], 30);
        base.size = 300;
        let mut step = img(&["<none>:<none>"], 30);
        (step.id, step.parent_id, step.size) = ("mid".into(), base.id.clone(), 320);
        let mut deps = img(&["patchloop-deps:d"], 30);
        (deps.parent_id, deps.size) = ("mid".into(), 350);
        let mut sandbox = img(&["patchloop-sandbox:s"], 30);
        (sandbox.parent_id, sandbox.size) = (deps.id.clone(), 351);
        let mut orphan = img(&["patchloop-sandbox:o"], 30);
        (orphan.parent_id, orphan.size) = ("sha256:not-local".into(), 400);
        let (c, _) = select(&[base, step, deps, sandbox, orphan], &opts(), NOW);
        let own: Vec<_> = c.iter().map(|c| (c.tag.as_str(), c.own_size)).collect();
        assert_eq!(
            own,
            [
                ("patchloop-sandbox:o", 400),
                ("patchloop-sandbox:s", 1),
                ("patchloop-deps:d", 50)
            ]
        );
    }

    #[test]
    fn ages_read_as_two_units() {
        assert_eq!(age(0), "0s");
        assert_eq!(age(59), "59s");
        assert_eq!(age(3_600 + 120 + 5), "1h 2m");
        assert_eq!(age(3 * 86_400 + 4 * 3_600 + 7), "3d 4h");
        assert_eq!(age(86_400 + 30), "1d 0h");
        assert_eq!(age(60), "1m 0s");
        assert_eq!(size(0), "0 KiB");
        assert_eq!(size(1), "1 KiB");
        assert_eq!(size(36 << 20 | 5), "36 MiB");
        assert_eq!(size(3 << 29), "1.5 GiB");
    }
}
