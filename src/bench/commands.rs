//! `patchloop bench gen`: snapshot a checkout, prepare its sandbox image, validate mutants in
//! one container, write `tasks.jsonl`, `gen-report.json` and the snapshot under the output dir.

use crate::testcmd::TestCommand;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::bench::generate::{
    self, GenOptions, GenReport, content_commit, library_sources, read_tree,
};
use crate::bench::sandbox_runner::ContainerRunner;
use crate::bench::task::to_jsonl;
use crate::bench::validate::Rejection;
use crate::sandbox::container::Container;
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::prepare::{PrepareOptions, prepare};

#[derive(Debug, Clone)]
pub struct GenArgs {
    pub repo: PathBuf,
    pub out: PathBuf,
    /// `owner/name`; default `local/<directory name>`.
    pub name: Option<String>,
    pub max_tasks: usize,
    pub max_candidates: Option<usize>,
    pub seed: u64,
    pub test_cmd: Option<TestCommand>,
    /// Use this already prepared image of the repository instead of preparing one.
    pub image: Option<String>,
    /// Workspace-relative test directories (with --image; prepare detects them otherwise).
    pub tests_dirs: Vec<String>,
    /// Remove the prepared image afterwards (kept by default: a re-run reuses it).
    pub remove_image: bool,
}

/// The sandbox image generation runs in.
#[derive(Debug, Clone)]
pub struct ImageSpec {
    pub tag: String,
    pub test_cmd: TestCommand,
    pub tests_dirs: Vec<String>,
}

async fn resolve_image(
    docker: &bollard::Docker,
    args: &GenArgs,
    snapshot_dir: &Path,
) -> anyhow::Result<ImageSpec> {
    match &args.image {
        Some(tag) => Ok(ImageSpec {
            tag: tag.clone(),
            test_cmd: args
                .test_cmd
                .clone()
                .unwrap_or_else(TestCommand::python_pytest),
            tests_dirs: args.tests_dirs.clone(),
        }),
        None => {
            let img = prepare(
                docker,
                &PrepareOptions {
                    path: snapshot_dir.to_path_buf(),
                    test_cmd: args.test_cmd.clone(),
                    tests_dirs: args.tests_dirs.clone(),
                    ..Default::default()
                },
            )
            .await
            .with_context(|| {
                format!("preparing the sandbox image of {}", snapshot_dir.display())
            })?;
            Ok(ImageSpec {
                tag: img.tag,
                test_cmd: img.test_cmd,
                tests_dirs: img.tests_dirs,
            })
        }
    }
}

pub struct GenOutput {
    pub image_tag: String,
    pub tasks_path: PathBuf,
    pub snapshot_dir: PathBuf,
    pub report: GenReport,
}

/// Write a snapshot directory (`<owner>+<name>-<first 12 of base_commit>`) of `files`.
pub fn write_snapshot(dir: &Path, files: &BTreeMap<String, Vec<u8>>) -> std::io::Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    for (rel, bytes) in files {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(p, bytes)?;
    }
    Ok(())
}

pub async fn gen_tasks(args: &GenArgs) -> anyhow::Result<GenOutput> {
    let repo_dir = args
        .repo
        .canonicalize()
        .with_context(|| format!("the repository {} does not exist", args.repo.display()))?;
    let name = match &args.name {
        Some(n) if n.split('/').count() == 2 && !n.starts_with('/') && !n.ends_with('/') => {
            n.clone()
        }
        Some(n) => anyhow::bail!("--name {n:?} must be owner/name, e.g. pytoolz/toolz"),
        None => format!(
            "local/{}",
            repo_dir
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_else(|| "repo".into())
        ),
    };
    let files = read_tree(&repo_dir)
        .with_context(|| format!("cannot read the repository {}", repo_dir.display()))?;
    let base_commit = content_commit(&files);
    let snapshot_name = format!("{}-{}", name.replace('/', "+"), &base_commit[..12]);
    let sources_dir = args.out.join("sources");
    let snapshot_dir = sources_dir.join(&snapshot_name);
    write_snapshot(&snapshot_dir, &files)
        .with_context(|| format!("cannot write the snapshot {}", snapshot_dir.display()))?;

    let docker = crate::sandbox::connect_and_reap().await?;
    eprintln!("preparing the sandbox image of {name} ...");
    let prepared = resolve_image(&docker, args, &snapshot_dir).await?;
    let sources = library_sources(&files, &prepared.tests_dirs);
    if sources.is_empty() {
        anyhow::bail!(
            "no library Python files found in {} (outside test directories {:?})",
            repo_dir.display(),
            prepared.tests_dirs
        );
    }
    let policy = ContainerPolicy {
        read_only_paths: prepared.tests_dirs.clone(),
        ..Default::default()
    };
    let run_id = format!("bench-gen-{}", std::process::id());
    let container = Container::start(&docker, &prepared.tag, &policy, &run_id, "bench-gen").await?;
    let result = async {
        let runner = ContainerRunner::new(&container, &prepared.test_cmd, sources.clone()).await?;
        let opts = GenOptions {
            repo: name.clone(),
            max_tasks: args.max_tasks,
            max_candidates: args.max_candidates.unwrap_or(args.max_tasks * 15 + 20),
            seed: args.seed,
        };
        let mut n = 0usize;
        let mut accepted = 0usize;
        let mut progress = |m: &crate::bench::mutate::Mutation, r: Result<(), Rejection>| {
            n += 1;
            if r.is_ok() {
                accepted += 1;
            }
            eprintln!(
                "[{n:>4}] {:<22} {} ({accepted} accepted)",
                m.id,
                match r {
                    Ok(()) => "accepted",
                    Err(r) => r.as_str(),
                }
            );
        };
        generate::generate(&runner, &sources, &base_commit, &opts, &mut progress)
            .await
            .map_err(anyhow::Error::from)
    }
    .await;
    if let Err(e) = container.remove().await {
        tracing::warn!(error = %e, "could not remove the generation container");
    }
    if args.remove_image && args.image.is_none() {
        let removed = docker
            .remove_image(
                &prepared.tag,
                None::<bollard::query_parameters::RemoveImageOptions>,
                None,
            )
            .await;
        if let Err(e) = removed {
            tracing::warn!(error = %e, image = %prepared.tag, "could not remove the image");
        }
    }
    let (tasks, report) = result?;
    std::fs::create_dir_all(&args.out)?;
    let tasks_path = args.out.join("tasks.jsonl");
    std::fs::write(&tasks_path, to_jsonl(&tasks)?)
        .with_context(|| format!("cannot write {}", tasks_path.display()))?;
    std::fs::write(
        args.out.join("gen-report.json"),
        serde_json::to_string_pretty(&report)?,
    )?;
    Ok(GenOutput {
        image_tag: prepared.tag,
        tasks_path,
        snapshot_dir,
        report,
    })
}
