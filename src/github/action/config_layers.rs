//! Whose configuration a run trusts: the checkout's or the base branch's, plus org file and inputs.

use std::path::Path;

use anyhow::{Context, anyhow};

use super::{EnvFn, explain};
use crate::config::{self, Config, ConfigFile};
use crate::github::client::GitHub;
use crate::github::event::RepoId;

/// Where the repository layer of the configuration is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSource {
    /// The checkout (`.github/patchloop.yml` in the workspace): only when the head commit
    /// comes from the repository the run belongs to.
    Checkout,
    /// The base repository's default branch, through the contents API: whenever the head
    /// comes from another repository (a fork) or cannot be told to be this one. The checkout
    /// is then the fork author's, and so would be its config (mode, allowed CI paths, who
    /// may run commands, the model) in a run that holds the base repository's token.
    BaseDefaultBranch,
}

/// Load the repository and org layers plus inputs. The org file comes from the
/// organisation's `.github` repository through the contents API (absent → skipped).
pub async fn load_config(
    repo_dir: &Path,
    gh: Option<&GitHub>,
    repo: Option<&RepoId>,
    env: EnvFn<'_>,
    source: ConfigSource,
) -> anyhow::Result<Config> {
    let input_path = env("INPUT_CONFIG").filter(|s| !s.trim().is_empty());
    let (repo_file, input_file) = match source {
        ConfigSource::Checkout => {
            let repo_path = repo_dir.join(config::REPO_CONFIG_PATH);
            let repo_file = match std::fs::read_to_string(&repo_path) {
                Ok(t) => Some(config::parse_file(config::REPO_CONFIG_PATH, &t)?),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => {
                    return Err(e).with_context(|| format!("reading {}", repo_path.display()));
                }
            };
            // An explicit `config` input points at another file in the checkout.
            let input_file = match &input_path {
                Some(p) => {
                    let path = repo_dir.join(p);
                    let t = std::fs::read_to_string(&path).with_context(|| {
                        format!("reading the `config` input file {}", path.display())
                    })?;
                    Some((p.clone(), config::parse_file(p, &t)?))
                }
                None => None,
            };
            (repo_file, input_file)
        }
        ConfigSource::BaseDefaultBranch => {
            let (Some(gh), Some(repo)) = (gh, repo) else {
                return Err(anyhow!(
                    "internal: the base repository's configuration needs the GitHub API"
                ));
            };
            // No `ref`: the contents API then reads the default branch.
            let read = |p: String| async move {
                gh.get_file(repo, &p, None)
                    .await
                    .map_err(explain)
                    .with_context(|| {
                        format!("reading {p} from the default branch of {}", repo.full())
                    })
            };
            let repo_file = match read(config::REPO_CONFIG_PATH.to_string()).await? {
                Some(t) => Some(config::parse_file(config::REPO_CONFIG_PATH, &t)?),
                None => None,
            };
            let input_file = match &input_path {
                Some(p) => {
                    let t = read(p.clone()).await?.ok_or_else(|| {
                        anyhow!(
                            "the `config` input file {p} is not on the default branch of {}",
                            repo.full()
                        )
                    })?;
                    Some((p.clone(), config::parse_file(p, &t)?))
                }
                None => None,
            };
            (repo_file, input_file)
        }
    };
    let mut org_file: Option<(String, ConfigFile)> = None;
    if let (Some(gh), Some(repo)) = (gh, repo) {
        let org_repo = RepoId {
            owner: repo.owner.clone(),
            name: ".github".into(),
        };
        match gh.get_file(&org_repo, config::ORG_CONFIG_PATH, None).await {
            Ok(Some(t)) => {
                let origin = format!("{}/.github/{}", repo.owner, config::ORG_CONFIG_PATH);
                org_file = Some((origin.clone(), config::parse_file(&origin, &t)?));
            }
            Ok(None) => {}
            // The org file is optional; an unreadable one is reported but not fatal.
            Err(e) => tracing::warn!("org config not read: {e}"),
        }
    }
    let inputs = config::inputs_from_env(|k| env(k))?;
    let mut c = Config::merge(
        org_file.as_ref().map(|(p, f)| (p.as_str(), f)),
        repo_file.as_ref().map(|f| (config::REPO_CONFIG_PATH, f)),
        &[],
    );
    if let Some((p, f)) = &input_file {
        c.apply(f, config::Source::Repo(p.clone()));
    }
    for (n, f) in &inputs {
        c.apply(f, config::Source::Input(n.clone()));
    }
    Ok(c)
}
