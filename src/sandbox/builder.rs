//! The builder image of the Python dependencies layer: the Python base plus the C toolchain and
//! Python headers GitHub's runners have (`images/builder/`), tagged
//! `patchloop-builder:<hash of the base tag and the recipe>` and built once per base. A
//! requirement with no wheel for the image's Python is compiled there; only its wheel reaches
//! the sandbox image (`prepare`'s two dependency stages), so no compiler ever runs in an
//! episode. When no toolchain can be installed (no Debian mirror answers) the base itself is the
//! builder and prepare says so: what needs a compiler is then left out, as before.

use std::collections::HashMap;

use bollard::Docker;
use bollard::query_parameters::BuildImageOptionsBuilder;
use sha2::{Digest, Sha256};

use super::context::Entry;
use super::image::{self, BaseOptions, ImageError, WITH_CA};

pub const BUILDER_REPO: &str = "patchloop-builder";
const BUILDER_DOCKERFILE: &str = include_str!("../../images/builder/Dockerfile");
const BUILDER_SETUP: &str = include_str!("../../images/builder/setup.sh");
/// Label of a builder image: the base it extends.
pub const LABEL_BUILDER_BASE: &str = "patchloop.builder.base";

/// Where the wheels of a dependencies layer are built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Builder {
    /// The image the wheel stage runs on.
    pub image: String,
    /// Whether it has the C toolchain (false: the base itself, after the toolchain's install
    /// failed).
    pub toolchain: bool,
}

impl Builder {
    /// What the dependencies layer's tag hashes: a layer built without the toolchain must not
    /// be reused once one can be had.
    pub fn tag_part(&self) -> String {
        if self.toolchain {
            format!("builder {}", self.image)
        } else {
            "no builder".into()
        }
    }
}

/// `patchloop-builder:<hash>` of a base tag.
pub fn builder_tag(base: &str) -> String {
    let mut h = Sha256::new();
    for part in [base, BUILDER_DOCKERFILE, BUILDER_SETUP, WITH_CA] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    format!("{BUILDER_REPO}:{}", &hex::encode(h.finalize())[..16])
}

/// Bases whose toolchain install failed in this process (not tried again per prepare).
static FAILED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The builder of a Python base: reused when its tag exists, else built (one builder per machine
/// at a time). A failed toolchain install degrades to the base itself with a progress note;
/// running out of disk space or losing the daemon is an error.
pub async fn ensure_builder(
    docker: &Docker,
    base: &str,
    opts: &BaseOptions,
) -> Result<Builder, ImageError> {
    let tag = builder_tag(base);
    let found = Builder {
        image: tag.clone(),
        toolchain: true,
    };
    if docker.inspect_image(&tag).await.is_ok() {
        opts.say(&format!("builder image {tag} exists; reusing it"));
        return Ok(found);
    }
    let without = || Builder {
        image: base.to_string(),
        toolchain: false,
    };
    if FAILED
        .lock()
        .map(|f| f.iter().any(|b| b == base))
        .unwrap_or(false)
    {
        opts.say(&format!(
            "note: no C toolchain for {base} (its install failed earlier in this run): wheels are built on the base"
        ));
        return Ok(without());
    }
    let lock = format!("builder-{}", tag.replace([':', '/'], "-"));
    let _lock = image::host_lock(&lock, opts).await?;
    if docker.inspect_image(&tag).await.is_ok() {
        opts.say(&format!(
            "builder image {tag} was built meanwhile; reusing it"
        ));
        return Ok(found);
    }
    let started = std::time::Instant::now();
    opts.say(&format!(
        "building the builder image {tag} (the base plus a C toolchain for requirements without a wheel; once per base)"
    ));
    let entries = vec![
        Entry::data(
            "Dockerfile",
            BUILDER_DOCKERFILE.replace("{{BASE}}", base),
            0o644,
        ),
        Entry::Dir {
            dest: "patchloop".into(),
            mode: 0o755,
        },
        Entry::data("patchloop/setup.sh", BUILDER_SETUP, 0o755),
        Entry::data("patchloop/with-ca.sh", WITH_CA, 0o755),
        Entry::data("patchloop/ca.crt", opts.ca_bytes()?, 0o644),
    ];
    let labels = HashMap::from([(LABEL_BUILDER_BASE.to_string(), base.to_string())]);
    let options = BuildImageOptionsBuilder::default()
        .dockerfile("Dockerfile")
        .t(&tag)
        .rm(true)
        .forcerm(true)
        .labels(&labels)
        .build();
    let built = image::run_build(docker, options, entries, "builder image", &opts.progress).await;
    if built.is_ok() {
        opts.say(&format!(
            "built {tag} in {:.0}s",
            started.elapsed().as_secs_f64()
        ));
    }
    let chosen = after_build(base, found, built.map(|_| ()), opts);
    if matches!(
        chosen,
        Ok(Builder {
            toolchain: false,
            ..
        })
    ) && let Ok(mut f) = FAILED.lock()
    {
        f.push(base.to_string());
    }
    chosen
}

/// The builder after its build (pure but for the progress line): the toolchain image when it
/// built; the base itself, with a note saying what that costs, when the toolchain's install
/// failed; an error when the disk is full or the daemon failed.
fn after_build(
    base: &str,
    found: Builder,
    built: Result<(), ImageError>,
    opts: &BaseOptions,
) -> Result<Builder, ImageError> {
    match built {
        Ok(()) => Ok(found),
        Err(e @ ImageError::BuildFailed { .. }) => {
            opts.say(&format!(
                "{NO_TOOLCHAIN_NOTE}; wheels are built on the base ({e})"
            ));
            Ok(Builder {
                image: base.to_string(),
                toolchain: false,
            })
        }
        Err(e) => Err(e),
    }
}

/// What prepare says when the builder has no toolchain.
pub const NO_TOOLCHAIN_NOTE: &str = "note: the C toolchain could not be installed, so requirements without a wheel for this Python will be left out";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_toolchain_install_falls_back_to_the_base_and_says_so() {
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let sink = lines.clone();
        let opts = BaseOptions {
            progress: Some(std::sync::Arc::new(move |l: &str| {
                sink.lock().unwrap().push(l.to_string())
            })),
            ..Default::default()
        };
        let found = Builder {
            image: "patchloop-builder:1".into(),
            toolchain: true,
        };
        let failed = ImageError::BuildFailed {
            stage: "builder image".into(),
            command: "apt-get install -y build-essential".into(),
            log_tail: "E: Unable to locate package".into(),
            hint: "h".into(),
        };
        let b = after_build("patchloop-base:py-1", found.clone(), Err(failed), &opts).unwrap();
        assert_eq!(
            b,
            Builder {
                image: "patchloop-base:py-1".into(),
                toolchain: false
            }
        );
        let said = lines.lock().unwrap().join("\n");
        assert!(said.contains(NO_TOOLCHAIN_NOTE), "{said}");
        assert!(
            said.contains("apt-get install -y build-essential"),
            "{said}"
        );
        // A built toolchain is used; a full disk is no reason to degrade.
        assert_eq!(
            after_build("b", found.clone(), Ok(()), &opts).unwrap(),
            found
        );
        let full = ImageError::DiskFull {
            stage: "builder image".into(),
            log_tail: "no space left on device".into(),
        };
        assert!(matches!(
            after_build("b", found, Err(full), &opts),
            Err(ImageError::DiskFull { .. })
        ));
    }

    #[test]
    fn the_builder_tag_follows_the_base_and_the_recipe() {
        let a = builder_tag("patchloop-base:py-1");
        assert!(a.starts_with("patchloop-builder:"), "{a}");
        assert_eq!(a, builder_tag("patchloop-base:py-1"));
        assert_ne!(a, builder_tag("patchloop-base:py3.9-2"));
        let with = Builder {
            image: a.clone(),
            toolchain: true,
        };
        let without = Builder {
            image: "patchloop-base:py-1".into(),
            toolchain: false,
        };
        assert_ne!(with.tag_part(), without.tag_part());
        assert!(with.tag_part().contains(&a));
    }
}
