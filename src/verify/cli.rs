//! `patchloop verify`: flags, held-out files, receipt writing, exit status.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context as _, bail};

use clap::Args;

use super::policy::{DirTree, PolicyConfig, default_test_globs};
use super::runner::{Holdout, PreparedImage, RerunScope, VerifyRequest, error_receipt, verify};
use super::verdict::Verdict;

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The repository checkout the patch is for (its pre-patch files feed the policy).
    #[arg(long, default_value = ".")]
    pub repo: PathBuf,
    /// The patch (unified git diff) to verify.
    #[arg(long)]
    pub patch: PathBuf,
    /// A sandbox image built by `patchloop prepare` for this checkout [default: prepare one now].
    #[arg(long)]
    pub image: Option<String>,
    /// Base image options, used when the sandbox image is prepared here (no --image).
    #[command(flatten)]
    pub base: crate::sandbox::image_cli::BaseArgs,
    /// Test ids (pytest node ids) that fail before the patch and must pass after it.
    #[arg(long = "fail-to-pass", num_args = 1.., required = true)]
    pub fail_to_pass: Vec<String>,
    /// Test ids that must keep passing (default: every test that passed before the patch).
    #[arg(long = "pass-to-pass", num_args = 1..)]
    pub pass_to_pass: Vec<String>,
    /// Runs before and after the patch; every run must agree.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=20))]
    pub reruns: u16,
    /// What the re-runs select: `all` (every run is the whole suite) or `fail-to-pass` (one
    /// full run per phase, then only the fail-to-pass tests; a new failure in the patched full
    /// run brings back full re-runs). Python projects only.
    #[arg(long, value_enum, default_value_t = RerunScope::All)]
    pub rerun_scope: RerunScope,
    /// Held-out test files or directories, copied in only for verification: `SRC` (placed at
    /// its path relative to --repo, or in the first test directory) or `SRC:DEST`.
    #[arg(long, num_args = 1..)]
    pub holdout: Vec<String>,
    /// Extra globs of test-owned files (fixtures, snapshots) a patch may not touch.
    #[arg(long = "test-glob")]
    pub test_globs: Vec<String>,
    /// Paths under .github/ a patch may change (globs).
    #[arg(long = "allow-ci-path")]
    pub allow_ci_paths: Vec<String>,
    /// Wall-clock limit of one test run, seconds.
    #[arg(long, default_value_t = 900)]
    pub run_timeout: u64,
    /// Where receipt.json and receipt.md are written.
    #[arg(long, default_value = "patchloop-receipt")]
    pub out: PathBuf,
}

/// Run the command; returns the verdict. Receipts are written on every path, including the
/// ones where verification cannot start (no Docker, no image, unreadable patch).
pub async fn run(args: VerifyArgs) -> anyhow::Result<Verdict> {
    let fallback_image = PreparedImage {
        tag: args.image.clone().unwrap_or_default(),
        tests_dirs: vec!["tests".into()],
        test_cmd: crate::testcmd::TestCommand::python_pytest(),
    };
    let receipt = match prepare(&args).await {
        Ok((docker, req)) => verify(&docker, &req, &DirTree(args.repo.clone())).await,
        Err((patch, e)) => {
            let req = VerifyRequest::new(fallback_image, patch, args.fail_to_pass.clone());
            error_receipt(&req, format!("{e:#}"), &DirTree(args.repo.clone()))
        }
    };
    super::receipt::write(&args.out, &receipt)?;
    println!(
        "{}: {}\nreceipt: {}",
        receipt.decision.verdict.as_str(),
        receipt.decision.reason,
        args.out.join("receipt.md").display()
    );
    Ok(receipt.decision.verdict)
}

/// Everything before the container: inputs, Docker, the image's labels, held-out files.
/// On failure, returns the patch text read so far (for the receipt's sha256) and the error.
async fn prepare(
    args: &VerifyArgs,
) -> Result<(bollard::Docker, VerifyRequest), (String, anyhow::Error)> {
    let patch_bytes = std::fs::read(&args.patch)
        .with_context(|| format!("reading the patch {}", args.patch.display()))
        .map_err(|e| (String::new(), e))?;
    let patch = match String::from_utf8(patch_bytes) {
        Ok(p) => p,
        Err(_) => {
            return Err((
                String::new(),
                anyhow::anyhow!(
                    "the patch {} is not UTF-8 text; binary patches are not accepted",
                    args.patch.display()
                ),
            ));
        }
    };
    let fail = |e: anyhow::Error| (patch.clone(), e);
    if !args.repo.is_dir() {
        return Err(fail(anyhow::anyhow!(
            "--repo {} is not a directory; pass the checkout the patch is for",
            args.repo.display()
        )));
    }
    let docker = crate::sandbox::docker::connect()
        .await
        .map_err(|e| fail(e.into()))?;
    let image = match args.image.clone() {
        Some(tag) => {
            PreparedImage::inspect(&docker, &tag)
                .await
                .map_err(|e| fail(anyhow::Error::msg(e)))?
                .0
        }
        None => {
            let opts = crate::sandbox::prepare::PrepareOptions {
                path: args.repo.clone(),
                test_cmd: None,
                tests_dirs: Vec::new(),
                kind: None,
                base: crate::sandbox::image::BaseOptions {
                    offline: args.base.offline,
                    mirror: args.base.mirror.clone(),
                    ca_cert: args.base.ca_cert.clone(),
                    progress: Some(std::sync::Arc::new(|line: &str| eprintln!("{line}"))),
                },
                ..Default::default()
            };
            let prepared = crate::sandbox::prepare::prepare(&docker, &opts)
                .await
                .map_err(|e| {
                    fail(anyhow::Error::new(e).context(format!(
                        "preparing the sandbox image of {} (or pass --image TAG)",
                        args.repo.display()
                    )))
                })?;
            PreparedImage::from(prepared)
        }
    };
    let holdouts = load_holdouts(&args.holdout, &args.repo, &image.tests_dirs).map_err(fail)?;
    let mut req = VerifyRequest::new(image, patch.clone(), args.fail_to_pass.clone());
    req.pass_to_pass = args.pass_to_pass.clone();
    req.reruns = usize::from(args.reruns);
    req.rerun_scope = args.rerun_scope;
    req.holdouts = holdouts;
    req.run_timeout = Duration::from_secs(args.run_timeout);
    req.policy = PolicyConfig {
        test_globs: default_test_globs()
            .into_iter()
            .chain(args.test_globs.iter().cloned())
            .collect(),
        allowed_ci_paths: args.allow_ci_paths.clone(),
        ..PolicyConfig::default()
    };
    Ok((docker, req))
}

/// `SRC[:DEST]` -> files with workspace-relative destinations.
pub fn load_holdouts(
    specs: &[String],
    repo: &Path,
    tests_dirs: &[String],
) -> anyhow::Result<Vec<Holdout>> {
    let mut out = Vec::new();
    for spec in specs {
        let (src, dest) = match spec.rsplit_once(':') {
            Some((s, d)) if !d.is_empty() && !s.is_empty() => {
                (PathBuf::from(s), Some(d.to_string()))
            }
            _ => (PathBuf::from(spec), None),
        };
        let dest = match dest {
            Some(d) => d.trim_matches('/').to_string(),
            None => default_dest(&src, repo, tests_dirs)?,
        };
        collect(&src, &dest, &mut out)?;
    }
    Ok(out)
}

fn default_dest(src: &Path, repo: &Path, tests_dirs: &[String]) -> anyhow::Result<String> {
    let abs = std::fs::canonicalize(src)
        .with_context(|| format!("held-out path {} does not exist", src.display()))?;
    if let Ok(repo) = std::fs::canonicalize(repo)
        && let Ok(rel) = abs.strip_prefix(&repo)
    {
        return Ok(rel.to_string_lossy().into_owned());
    }
    let name = abs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let dir = tests_dirs.first().map(String::as_str).unwrap_or("tests");
    Ok(format!("{}/{name}", dir.trim_matches('/')))
}

fn collect(src: &Path, dest: &str, out: &mut Vec<Holdout>) -> anyhow::Result<()> {
    let meta = std::fs::symlink_metadata(src)
        .with_context(|| format!("held-out path {} does not exist", src.display()))?;
    if meta.file_type().is_symlink() {
        bail!(
            "held-out path {} is a symbolic link; pass the file itself",
            src.display()
        );
    }
    if meta.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(src)
            .with_context(|| format!("reading held-out directory {}", src.display()))?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == "__pycache__" {
                continue;
            }
            collect(&e.path(), &format!("{dest}/{name}"), out)?;
        }
        return Ok(());
    }
    let contents =
        std::fs::read(src).with_context(|| format!("reading held-out file {}", src.display()))?;
    out.push(Holdout {
        dest: dest.to_string(),
        contents,
    });
    Ok(())
}

/// Exit status: 0 verified, 1 rejected, 2 could not decide (infrastructure or input error).
pub fn exit_code(v: Verdict) -> u8 {
    match v {
        Verdict::Verified => 0,
        Verdict::Error => 2,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holdout_destinations() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(repo.path().join("tests/hidden")).unwrap();
        std::fs::write(repo.path().join("tests/hidden/test_h.py"), "x").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("test_o.py"), "y").unwrap();
        let specs = vec![
            repo.path().join("tests/hidden").display().to_string(),
            outside.path().join("test_o.py").display().to_string(),
            format!(
                "{}:pkg/tests/test_x.py",
                outside.path().join("test_o.py").display()
            ),
        ];
        let h = load_holdouts(&specs, repo.path(), &["t".into()]).unwrap();
        let dests: Vec<_> = h.iter().map(|h| h.dest.as_str()).collect();
        assert_eq!(
            dests,
            vec![
                "tests/hidden/test_h.py",
                "t/test_o.py",
                "pkg/tests/test_x.py"
            ]
        );
        assert_eq!(h[1].contents, b"y");
        assert!(load_holdouts(&["/nonexistent/x".into()], repo.path(), &[]).is_err());
    }

    #[test]
    fn exit_codes() {
        assert_eq!(exit_code(Verdict::Verified), 0);
        assert_eq!(exit_code(Verdict::Tampered), 1);
        assert_eq!(exit_code(Verdict::Error), 2);
    }
}
