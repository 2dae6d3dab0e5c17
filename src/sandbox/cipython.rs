//! A base image of the CI's Python, for the second run that tells environmental failures apart
//! (`pipeline::env`): when the sandbox image's interpreter differs from the one the repository's
//! CI tests with, the reproduction's failing tests run again on an image of the CI's Python.
//!
//! Where such a base can be had, in order: an image already here (the online or Debian base of
//! that version built earlier, or any image labelled `patchloop.base.python=X.Y`), then
//! `python:X.Y-slim` pulled (online), then the Debian suite whose `python3` is that version
//! debootstrapped the way the bookworm base is (bullseye 3.9, bookworm 3.11, trixie 3.13).
//! The choice is pure ([`sources`]); [`ensure_base`] acts on it. Every base is reused by tag.

use bollard::Docker;

use super::image::{self, BaseOptions};

/// Debian suites and the `python3` each ships (what an offline base of the suite runs).
pub const DEBIAN_PYTHONS: &[(&str, &str)] = &[
    ("bullseye", "3.9"),
    ("bookworm", "3.11"),
    ("trixie", "3.13"),
];

/// The Debian suite whose `python3` is `version`.
pub fn debian_suite_for(version: &str) -> Option<&'static str> {
    DEBIAN_PYTHONS
        .iter()
        .find(|(_, v)| *v == version)
        .map(|(s, _)| *s)
}

/// How far `fix` may go to get an image of the CI's Python (`--ci-python`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum CiPython {
    /// Use an image of the CI's Python already here, else pull `python:X.Y-slim`, else build
    /// the offline base of the Debian suite with that Python (debootstrap: minutes, once per
    /// machine; needs root).
    #[default]
    Build,
    /// Only images already here (no pull, no debootstrap).
    Local,
    /// No second run: failures are told apart by their tracebacks only.
    Off,
}

/// One way to a base of the CI's Python.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A base image already here (tag).
    Present(String),
    /// The online base from `python:X.Y-slim`.
    Pull,
    /// The offline base of a Debian suite.
    Debian(&'static str),
}

/// What of the CI's Python is already on this machine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Present {
    /// A Python base of that version (tag).
    pub base: Option<String>,
    /// `python:X.Y-slim` itself (its base builds without a pull).
    pub slim: bool,
}

/// Why no image of the CI's Python is had; the run then keeps the traceback classification.
#[derive(Debug, thiserror::Error)]
pub enum Unavailable {
    #[error("--ci-python off")]
    Off,
    #[error("`{version}` is not a Python version (X.Y)")]
    BadVersion { version: String },
    #[error(
        "no image of Python {version} is here and --ci-python local allows no pull or build (`--ci-python build` would {how})"
    )]
    NotPresent { version: String, how: String },
    #[error(
        "python:{version}-slim cannot be pulled {why} and no Debian suite ships Python {version} (bullseye 3.9, bookworm 3.11, trixie 3.13)"
    )]
    NoSource { version: String, why: &'static str },
    #[error("no base of Python {version} could be made: {tried}")]
    Failed { version: String, tried: String },
    #[error(
        "--image was given and --repo is no checkout, so the checkout cannot be prepared on Python {version}"
    )]
    NoCheckout { version: String },
    #[error("preparing the checkout on Python {version} ({base}) failed: {reason}")]
    Prepare {
        version: String,
        base: String,
        reason: String,
    },
    #[error("the run on Python {version} ({image}) gave no test report: {reason}")]
    NoReport {
        version: String,
        image: String,
        reason: String,
    },
}

/// The ways to try, in order (pure): an image here first; then, as `mode` allows, the pull
/// (not when `offline`) and the Debian suite with that Python.
pub fn sources(
    version: &str,
    mode: CiPython,
    offline: bool,
    present: &Present,
) -> Result<Vec<Source>, Unavailable> {
    if mode == CiPython::Off {
        return Err(Unavailable::Off);
    }
    if !image::is_python_version(version) {
        return Err(Unavailable::BadVersion {
            version: version.into(),
        });
    }
    if let Some(tag) = &present.base {
        return Ok(vec![Source::Present(tag.clone())]);
    }
    let suite = debian_suite_for(version);
    if mode == CiPython::Local {
        if present.slim {
            return Ok(vec![Source::Pull]);
        }
        let how = match (offline, suite) {
            (false, Some(s)) => {
                format!("pull python:{version}-slim, else debootstrap Debian {s}")
            }
            (false, None) => format!("pull python:{version}-slim"),
            (true, Some(s)) => format!("debootstrap Debian {s}"),
            (true, None) => "find no source either".into(),
        };
        return Err(Unavailable::NotPresent {
            version: version.into(),
            how,
        });
    }
    let mut out = Vec::new();
    if !offline || present.slim {
        out.push(Source::Pull);
    }
    if let Some(s) = suite {
        out.push(Source::Debian(s));
    }
    if out.is_empty() {
        return Err(Unavailable::NoSource {
            version: version.into(),
            why: "offline",
        });
    }
    Ok(out)
}

/// The error when every source was tried and none gave a base (pure).
fn failed(version: &str, tried: Vec<String>, only_pull: bool) -> Unavailable {
    if only_pull {
        return Unavailable::NoSource {
            version: version.into(),
            why: "(no registry answered)",
        };
    }
    Unavailable::Failed {
        version: version.into(),
        tried: tried.join("; "),
    }
}

/// The first tag that can be a base: images built on a base inherit its label, so patchloop's
/// own derived images (builder, dependencies, sandbox, …) are not bases; a user's image is.
fn usable_base(tags: impl IntoIterator<Item = String>) -> Option<String> {
    tags.into_iter().find(|t| {
        t != "<none>:<none>"
            && (!t.starts_with("patchloop-") || t.starts_with(&format!("{}:", image::BASE_REPO)))
    })
}

/// What of `version` is here: our own bases of it (online or Debian), any image labelled with
/// it, and `python:X.Y-slim`.
pub async fn present(docker: &Docker, version: &str) -> Present {
    let mut tags = vec![image::online_python_tag(version)];
    if let Some(s) = debian_suite_for(version) {
        tags.push(image::debian_python_tag(s, version));
    }
    let mut base = None;
    for t in tags {
        if docker.inspect_image(&t).await.is_ok() && image::base_python(docker, &t).await == version
        {
            base = Some(t);
            break;
        }
    }
    if base.is_none() {
        let filters = std::collections::HashMap::from([(
            "label".to_string(),
            vec![format!("{}={version}", image::LABEL_BASE_PYTHON)],
        )]);
        let opts = bollard::query_parameters::ListImagesOptionsBuilder::default()
            .filters(&filters)
            .build();
        base = usable_base(
            docker
                .list_images(Some(opts))
                .await
                .unwrap_or_default()
                .into_iter()
                .flat_map(|i| i.repo_tags),
        );
    }
    let slim = docker
        .inspect_image(&format!("python:{version}-slim"))
        .await
        .is_ok();
    Present { base, slim }
}

/// A Python base of `version`: the first of [`sources`] that gives one. Building it may take
/// minutes (a debootstrap); progress goes to `opts`.
pub async fn ensure_base(
    docker: &Docker,
    opts: &BaseOptions,
    version: &str,
    mode: CiPython,
) -> Result<String, Unavailable> {
    let here = present(docker, version).await;
    let ways = sources(version, mode, opts.offline, &here)?;
    let only_pull = ways == [Source::Pull];
    let mut tried = Vec::new();
    for way in ways {
        let got = match way {
            Source::Present(tag) => {
                opts.say(&format!("an image of Python {version} is here: {tag}"));
                return Ok(tag);
            }
            Source::Pull => image::ensure_online_python_base(docker, opts, version).await,
            Source::Debian(suite) => {
                opts.say(&format!(
                    "building the offline base of Debian {suite} (Python {version}) for the run on the CI's Python; once per machine"
                ));
                image::ensure_debian_python_base(docker, opts, suite, version).await
            }
        };
        match got {
            Ok(tag) => return Ok(tag),
            Err(e) => tried.push(e.to_string()),
        }
    }
    Err(failed(version, tried, only_pull))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_images_inherit_the_python_label_but_are_no_bases() {
        let tags = |v: &[&str]| v.iter().map(|t| t.to_string()).collect::<Vec<_>>();
        assert_eq!(
            usable_base(tags(&[
                "<none>:<none>",
                "patchloop-builder:1",
                "patchloop-sandbox:x-2",
                "patchloop-deps:3",
                "patchloop-base:py3.13-4",
            ])),
            Some("patchloop-base:py3.13-4".into())
        );
        assert_eq!(
            usable_base(tags(&["patchloop-install:1", "my/python3.13-base:1"])),
            Some("my/python3.13-base:1".into())
        );
        assert_eq!(usable_base(tags(&["patchloop-sandbox:x-2"])), None);
    }

    #[test]
    fn debian_suites_by_python() {
        assert_eq!(debian_suite_for("3.9"), Some("bullseye"));
        assert_eq!(debian_suite_for("3.11"), Some("bookworm"));
        assert_eq!(debian_suite_for("3.13"), Some("trixie"));
        assert_eq!(debian_suite_for("3.8"), None);
        assert_eq!(debian_suite_for("3.12"), None);
    }

    #[test]
    fn an_image_here_is_used_first_whatever_the_mode_allows() {
        let here = Present {
            base: Some("patchloop-base:py3.13-x".into()),
            slim: false,
        };
        for mode in [CiPython::Build, CiPython::Local] {
            for offline in [false, true] {
                assert_eq!(
                    sources("3.13", mode, offline, &here).unwrap(),
                    vec![Source::Present("patchloop-base:py3.13-x".into())]
                );
            }
        }
        assert!(matches!(
            sources("3.13", CiPython::Off, false, &here),
            Err(Unavailable::Off)
        ));
    }

    #[test]
    fn build_pulls_online_then_debootstraps_the_suite() {
        let none = Present::default();
        assert_eq!(
            sources("3.13", CiPython::Build, false, &none).unwrap(),
            vec![Source::Pull, Source::Debian("trixie")]
        );
        assert_eq!(
            sources("3.9", CiPython::Build, true, &none).unwrap(),
            vec![Source::Debian("bullseye")]
        );
        assert_eq!(
            sources("3.12", CiPython::Build, false, &none).unwrap(),
            vec![Source::Pull]
        );
        // A python:X.Y-slim here builds its base without the registry, offline too.
        let slim = Present {
            base: None,
            slim: true,
        };
        assert_eq!(
            sources("3.12", CiPython::Build, true, &slim).unwrap(),
            vec![Source::Pull]
        );
        // Offline and no suite ships it: nothing to try, and the message says which suites.
        let e = sources("3.8", CiPython::Build, true, &none).unwrap_err();
        assert!(matches!(e, Unavailable::NoSource { .. }), "{e:?}");
        assert!(e.to_string().contains("trixie 3.13"), "{e}");
    }

    #[test]
    fn local_builds_nothing_and_says_what_build_would_do() {
        let none = Present::default();
        let e = sources("3.13", CiPython::Local, true, &none).unwrap_err();
        assert!(e.to_string().contains("debootstrap Debian trixie"), "{e}");
        assert!(e.to_string().contains("--ci-python build"), "{e}");
        let e = sources("3.12", CiPython::Local, false, &none).unwrap_err();
        assert!(e.to_string().contains("pull python:3.12-slim"), "{e}");
        let slim = Present {
            base: None,
            slim: true,
        };
        assert_eq!(
            sources("3.12", CiPython::Local, true, &slim).unwrap(),
            vec![Source::Pull]
        );
        assert!(matches!(
            sources("3", CiPython::Build, false, &none),
            Err(Unavailable::BadVersion { .. })
        ));
    }

    #[test]
    fn a_failed_pull_alone_is_no_source_and_several_failures_are_listed() {
        let e = failed("3.12", vec!["cannot pull python:3.12-slim: x".into()], true);
        assert!(matches!(e, Unavailable::NoSource { .. }));
        let e = failed(
            "3.13",
            vec!["cannot pull a".into(), "debootstrap b".into()],
            false,
        );
        assert_eq!(
            e.to_string(),
            "no base of Python 3.13 could be made: cannot pull a; debootstrap b"
        );
    }
}
