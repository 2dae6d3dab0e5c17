//! The dependencies layer: keyed by the dependency files, built once (Python: wheels, then install).

use bollard::Docker;
use bollard::query_parameters::BuildImageOptionsBuilder;

use super::{DEPS_REPO, WHEELS_REPO, dir, hashed};
use crate::sandbox::builder::Builder;
use crate::sandbox::context::{Entry, SourceTree};
use crate::sandbox::image::{self, ImageError, ProgressFn, WITH_CA};
use crate::sandbox::lang::{self, ProjectKind};
use crate::sandbox::layer::{self, LayerContainer};

const DEPS_DOCKERFILE: &str = include_str!("../../../images/sandbox/deps.Dockerfile");

const DEPS_PY: &str = include_str!("../../../images/sandbox/deps.py");

const LANG_DEPS_DOCKERFILE: &str = include_str!("../../../images/sandbox/lang-deps.Dockerfile");

const RUST_DEPS_SH: &str = include_str!("../../../images/sandbox/rust-deps.sh");

const NODE_DEPS_SH: &str = include_str!("../../../images/sandbox/node-deps.sh");

const GO_DEPS_SH: &str = include_str!("../../../images/sandbox/go-deps.sh");

/// What only a Python dependencies layer takes: deps.py's ci-deps.json, the requirement files it
/// names, and where its wheels are built.
pub(super) struct PythonInputs<'a> {
    pub(super) ci_json: Option<&'a str>,
    pub(super) ci_files: &'a [String],
    pub(super) builder: Option<&'a Builder>,
}

/// The dependencies image for this tree: reused when its tag (base + dependency files + recipe)
/// exists. Returns (tag, reused).
pub(super) async fn ensure_deps(
    docker: &Docker,
    base: &str,
    kind: ProjectKind,
    tree: &SourceTree,
    ca: &[u8],
    progress: &Option<ProgressFn>,
    python: PythonInputs<'_>,
) -> Result<(String, bool), ImageError> {
    let PythonInputs {
        ci_json,
        ci_files,
        builder,
    } = python;
    let mut dep_files: Vec<Entry> = Vec::new();
    for e in &tree.entries {
        if let Entry::File { src, dest, mode } = e
            && (lang::is_dependency_file(kind, dest) || ci_files.contains(dest))
        {
            dep_files.push(Entry::File {
                src: src.clone(),
                dest: format!("patchloop/project/{dest}"),
                mode: *mode,
            });
        }
    }
    // Python's recipe parts are unchanged from before other kinds existed (same tags).
    let (dockerfile, script, script_name) = match kind {
        ProjectKind::Python => (DEPS_DOCKERFILE, DEPS_PY, "deps.py"),
        ProjectKind::Rust => (LANG_DEPS_DOCKERFILE, RUST_DEPS_SH, "deps.sh"),
        ProjectKind::Node => (LANG_DEPS_DOCKERFILE, NODE_DEPS_SH, "deps.sh"),
        ProjectKind::Go => (LANG_DEPS_DOCKERFILE, GO_DEPS_SH, "deps.sh"),
    };
    let mut keys = vec![
        base.to_string(),
        dockerfile.into(),
        script.into(),
        WITH_CA.into(),
    ];
    keys.extend(ci_json.map(str::to_string));
    if let Some(b) = builder {
        keys.extend([b.tag_part(), INSTALL_WHEELS.to_string()]);
    }
    let hash = hashed(dep_files.clone(), keys).await?;
    let tag = format!("{DEPS_REPO}:{}", &hash[..16]);
    if docker.inspect_image(&tag).await.is_ok() {
        image::say(
            progress,
            &format!("dependencies image {tag} exists; reusing it"),
        );
        return Ok((tag, true));
    }
    let mut entries = vec![
        Entry::data(
            "Dockerfile",
            dockerfile
                .replace("{{BASE}}", base)
                .replace("{{BUILDER}}", builder.map_or(base, |b| b.image.as_str())),
            0o644,
        ),
        dir("patchloop"),
        Entry::data("patchloop/with-ca.sh", WITH_CA, 0o755),
        Entry::data("patchloop/ca.crt", ca.to_vec(), 0o644),
        Entry::data(format!("patchloop/{script_name}"), script, 0o644),
        dir("patchloop/project"),
    ];
    if let Some(j) = ci_json {
        entries.push(Entry::data("patchloop/ci-deps.json", j, 0o644));
    }
    // Manifests below the top (cargo workspace members) need their directories.
    let mut parents: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for e in &dep_files {
        let mut p = e.dest();
        while let Some((parent, _)) = p.rsplit_once('/') {
            if parent == "patchloop/project" {
                break;
            }
            parents.insert(parent.to_string());
            p = parent;
        }
    }
    entries.extend(parents.into_iter().map(|p| dir(&p)));
    entries.extend(dep_files);
    image::say(progress, &format!("building dependencies image {tag}"));
    let Some(builder) = builder else {
        let options = BuildImageOptionsBuilder::default()
            .dockerfile("Dockerfile")
            .t(&tag)
            .rm(true)
            .forcerm(true)
            .build();
        image::run_build(docker, options, entries, "dependencies layer", progress).await?;
        return Ok((tag, false));
    };
    // Python, stage 1: the wheels, on the builder (network, the build CA, a C toolchain).
    let wheels = wheels_tag(&hash);
    let options = BuildImageOptionsBuilder::default()
        .dockerfile("Dockerfile")
        .t(&wheels)
        .rm(true)
        .forcerm(true)
        .build();
    let built = image::run_build(docker, options, entries, "dependencies layer", progress).await;
    let installed = match built {
        Ok(_) => install_wheels(docker, base, &wheels, &tag, builder, progress).await,
        Err(e) => Err(e),
    };
    // The wheels image (the builder plus the wheels) is only a means to the install.
    layer::remove_tag(docker, &wheels).await;
    installed.map(|()| (tag, false))
}

/// The tag of a build's wheels stage: the dependencies' hash, and a part of its own. Two
/// prepares of the same dependencies at once (two jobs on one runner, parallel tests) built the
/// same tag, and the first to finish removed it under the other's install ("No such image").
/// Docker's build cache still serves the second build's layers. Not pure: random.
pub(super) fn wheels_tag(hash: &str) -> String {
    format!(
        "{WHEELS_REPO}:{}-{:08x}",
        &hash[..16.min(hash.len())],
        rand::random::<u32>()
    )
}

/// The install stage of a Python dependencies layer, run as root without network: the wheels
/// directory of stage 1 installed on the base from that directory only, then deleted in the same
/// layer (`sandbox::layer`).
const INSTALL_WHEELS: &str = "/opt/venv/bin/python /tmp/patchloop-wheels/deps.py install /tmp/patchloop-wheels && rm -rf /tmp/patchloop-wheels /root/.cache";

/// Label of a Python dependencies image: the builder its wheels were made on (`none` without a
/// toolchain).
pub const LABEL_DEPS_BUILDER: &str = "patchloop.deps.builder";

/// Stage 2 of a Python dependencies layer: `wheels`' `/tmp/patchloop-wheels` installed on `base`
/// and committed as `tag`.
async fn install_wheels(
    docker: &Docker,
    base: &str,
    wheels: &str,
    tag: &str,
    builder: &Builder,
    progress: &Option<ProgressFn>,
) -> Result<(), ImageError> {
    let c = LayerContainer::create(docker, base, INSTALL_WHEELS, "dependencies layer (install)")
        .await?;
    c.copy_from_image(wheels, "/tmp/patchloop-wheels", "/tmp")
        .await?;
    c.run(progress, |_| false).await?;
    let used = if builder.toolchain {
        builder.image.clone()
    } else {
        "none".into()
    };
    c.commit(
        tag,
        None,
        std::collections::HashMap::from([(LABEL_DEPS_BUILDER.to_string(), used)]),
    )
    .await?;
    Ok(())
}
