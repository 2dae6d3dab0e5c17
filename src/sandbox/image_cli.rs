//! CLI glue for `patchloop images build` and `patchloop prepare`: argument structs, progress on
//! stderr, the result on stdout. Errors go back to `cli`, which prints them and exits 2
//! (every [`ImageError`] is a configuration or infrastructure error).

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Subcommand};

use super::image::{self, BaseOptions, ImageError};
use super::lang::ProjectKind;
use super::prepare::{self, PrepareOptions};

/// Options shared by every command that may build the base image.
#[derive(Debug, Clone, Args)]
pub struct BaseArgs {
    /// Build the base from debootstrap + docker import without trying to pull python:3.12-slim.
    #[arg(long)]
    pub offline: bool,
    /// Debian mirror for debootstrap (default: the host's apt sources, else deb.debian.org).
    #[arg(long, value_name = "URL")]
    pub mirror: Option<String>,
    /// CA certificate (PEM) trusted by pip/apt during builds, e.g. a TLS-intercepting proxy's
    /// [default: the file named by SSL_CERT_FILE or PIP_CERT].
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ImagesCommand {
    /// Build (or reuse) a base image (Python unless --lang says otherwise); prints its tag.
    Build(BuildArgs),
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Which base: python (pytest), rust (Debian cargo/rustc) or node (Debian nodejs/npm).
    #[arg(long, value_enum, default_value_t = ProjectKind::Python)]
    pub lang: ProjectKind,
    #[command(flatten)]
    pub base: BaseArgs,
}

#[derive(Debug, Args)]
pub struct PrepareArgs {
    /// The checkout to build a sandbox image of.
    pub path: PathBuf,
    /// Test command run in /workspace [default: python -m pytest].
    #[arg(long, value_name = "CMD")]
    pub test_cmd: Option<String>,
    /// Test directory relative to the checkout (repeatable) [default: detected].
    #[arg(long = "tests-dir", value_name = "DIR")]
    pub tests_dirs: Vec<String>,
    /// Project kind [default: detected: pyproject.toml/setup.py/… python, Cargo.toml rust,
    /// package.json node].
    #[arg(long, value_enum)]
    pub lang: Option<ProjectKind>,
    #[command(flatten)]
    pub base: BaseArgs,
}

fn base_options(args: BaseArgs) -> BaseOptions {
    BaseOptions {
        offline: args.offline,
        mirror: args.mirror,
        ca_cert: args.ca_cert,
        progress: Some(Arc::new(|line: &str| eprintln!("{line}"))),
    }
}

/// `patchloop images ...`: prints the base tag on stdout.
pub async fn images(cmd: ImagesCommand) -> Result<(), ImageError> {
    match cmd {
        ImagesCommand::Build(args) => {
            let opts = base_options(args.base);
            let docker = super::docker::connect().await?;
            let tag = image::ensure_base_image_for(&docker, &opts, args.lang).await?;
            println!("{tag}");
            Ok(())
        }
    }
}

/// `patchloop prepare PATH ...`: progress on stderr, the image tag on stdout.
pub async fn prepare(args: PrepareArgs) -> Result<(), ImageError> {
    let opts = PrepareOptions {
        path: args.path,
        test_cmd: args.test_cmd,
        tests_dirs: args.tests_dirs,
        kind: args.lang,
        base: base_options(args.base),
    };
    let docker = super::docker::connect().await?;
    let started = std::time::Instant::now();
    let img = prepare::prepare(&docker, &opts).await?;
    eprintln!(
        "prepared {} in {:.1}s (dependencies {}; tests: {}; test command: {})",
        img.tag,
        started.elapsed().as_secs_f64(),
        if img.deps_reused { "reused" } else { "built" },
        img.tests_dirs.join(", "),
        img.test_cmd
    );
    println!("{}", img.tag);
    Ok(())
}
