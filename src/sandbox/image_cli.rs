//! CLI glue for `patchloop images build|prune` and `patchloop prepare`: argument structs,
//! progress on stderr, the result on stdout. Errors go back to `cli`, which prints them and
//! exits 2 (every [`ImageError`] is a configuration or infrastructure error).

use crate::testcmd::TestCommand;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Subcommand};

use super::image::{self, BaseOptions, ImageError};
use super::lang::ProjectKind;
use super::prepare::{self, PrepareOptions};
use super::prune::{self, PruneOptions};

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
    /// Remove the sandbox images patchloop built (and their dependency layers) older than an
    /// age. Images a container uses are kept. Run it between runs, e.g. on a schedule: an
    /// image removed under a run that is about to use it fails that run.
    Prune(PruneArgs),
}

#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Remove images created longer ago than this (e.g. `7d`, `12h`, `30m`, `0s` for all).
    /// A reused image keeps its first creation time.
    #[arg(long, value_name = "AGE", default_value = "7d", value_parser = parse_age)]
    pub older_than: std::time::Duration,
    /// Only sandbox images whose name (after `patchloop-sandbox:`) starts with this.
    #[arg(long, value_name = "PREFIX")]
    pub name: Option<String>,
    /// Also the base images (`patchloop-base:*`), their builders (`patchloop-builder:*`, the
    /// base plus a C toolchain) and the offline rootfs; offline they take minutes to rebuild.
    #[arg(long)]
    pub bases: bool,
    /// List what would be removed; remove nothing.
    #[arg(long)]
    pub dry_run: bool,
}

fn parse_age(s: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(s.trim())
        .map_err(|e| format!("{e} (write it like `7d`, `12h`, `30m` or `0s`)"))
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Which base: python (pytest), rust (Debian cargo/rustc), node (Debian nodejs/npm) or go
    /// (Debian golang-go).
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
    #[arg(long, value_name = "CMD", value_parser = TestCommand::from_flag)]
    pub test_cmd: Option<TestCommand>,
    /// Test directory relative to the checkout (repeatable) [default: detected].
    #[arg(long = "tests-dir", value_name = "DIR")]
    pub tests_dirs: Vec<String>,
    /// Project kind [default: detected: pyproject.toml/setup.py/… python, Cargo.toml rust,
    /// package.json node].
    #[arg(long, value_enum)]
    pub lang: Option<ProjectKind>,
    /// A requirement to install for the tests besides what CI installs (Python, repeatable;
    /// adds to `dependencies.add` of the checkout's .github/patchloop.yml).
    #[arg(long = "add-dep", value_name = "REQ")]
    pub add_deps: Vec<String>,
    /// A package to leave out of the test environment (Python, repeatable; adds to
    /// `dependencies.skip`).
    #[arg(long = "skip-dep", value_name = "NAME")]
    pub skip_deps: Vec<String>,
    /// Resolve the Python test dependencies as of a date (`2023-05-30`) or of the checkout's
    /// own release (`release`: its PKG-INFO, else its git commit): only what the index had
    /// then (overrides `dependencies.as_of`). Without it, dependencies resolved today that
    /// cannot collect an old checkout's tests are resolved again as of its release.
    #[arg(long = "deps-as-of", value_name = "DATE|release")]
    pub deps_as_of: Option<String>,
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
        ImagesCommand::Prune(args) => {
            let docker = super::docker::connect().await?;
            let opts = PruneOptions {
                older_than_secs: args.older_than.as_secs(),
                name_prefix: args.name,
                bases: args.bases,
                dry_run: args.dry_run,
            };
            let r = prune::prune(&docker, &opts, crate::clock::now_unix()).await?;
            let verb = if opts.dry_run {
                "would remove"
            } else {
                "removed"
            };
            for c in &r.removed {
                println!(
                    "{verb} {} ({} of its own layers, created {} ago)",
                    c.tag,
                    prune::size(c.own_size),
                    prune::age(c.age_secs)
                );
            }
            for k in &r.kept {
                println!("kept {}: {}", k.tag, k.reason);
            }
            let own: u64 = r.removed.iter().map(|c| c.own_size).sum();
            eprintln!(
                "{verb} {} image tag(s), about {}; {} kept; {} younger than {} left alone{}",
                r.removed.len(),
                prune::size(own),
                r.kept.len(),
                r.younger,
                humantime::format_duration(args.older_than),
                if opts.dry_run || r.removed.is_empty() {
                    ""
                } else {
                    " (`docker system df` shows what the daemon now holds)"
                }
            );
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
        deps: super::pydeps::DepsOverrides {
            add: args.add_deps,
            skip: args.skip_deps,
            as_of: args.deps_as_of,
            as_of_reason: None,
        },
        base_image: None,
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
    if let Some(src) = &img.deps_source {
        eprintln!("test dependencies from {src}");
    }
    if !img.deps_skipped.is_empty() {
        eprintln!(
            "left out (failed to install; the tests are collected without them): {}",
            img.deps_skipped.join(", ")
        );
    }
    println!("{}", img.tag);
    Ok(())
}
