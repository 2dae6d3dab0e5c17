//! Probe plumbing: outcomes, the suite context (containers started through patchloop's code,
//! each hardened one checked against the golden `docker inspect` spec), and the JSON protocol
//! of the Python probe scripts.

use std::collections::HashMap;
use std::time::Duration;

use bollard::Docker;
use serde::Deserialize;
use tokio::sync::Mutex;

use patchloop::sandbox::container::Container;
use patchloop::sandbox::policy::ContainerPolicy;
use patchloop::sandbox::{ExecRequest, ExecResult};

use crate::common::{self, Canaries};

pub const PRELUDE: &str = include_str!("prelude.py");

/// One probe: `held` = the sandbox stopped the attack (or behaved as required);
/// `control_ok` = the positive control showed the probe can detect the opposite.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub id: String,
    pub held: bool,
    pub detail: String,
    pub control_ok: bool,
    pub control_detail: String,
}

impl Outcome {
    pub fn new(
        id: impl Into<String>,
        held: bool,
        detail: impl Into<String>,
        control_ok: bool,
        control_detail: impl Into<String>,
    ) -> Self {
        Outcome {
            id: id.into(),
            held,
            detail: detail.into(),
            control_ok,
            control_detail: control_detail.into(),
        }
    }
}

/// One line of a probe script.
#[derive(Debug, Clone, Deserialize)]
pub struct Op {
    pub ok: bool,
    pub err: Option<String>,
    pub val: String,
    pub ms: u64,
}

impl Op {
    pub fn describe(&self) -> String {
        match &self.err {
            None => format!("succeeded: {} ({} ms)", self.val, self.ms),
            Some(e) => format!("failed {e}: {} ({} ms)", self.val, self.ms),
        }
    }
    pub fn failed_with(&self, errs: &[&str]) -> bool {
        !self.ok && self.err.as_deref().is_some_and(|e| errs.contains(&e))
    }
}

#[derive(Debug, Deserialize)]
struct OpLine {
    op: String,
    #[serde(flatten)]
    op_data: Op,
}

pub fn parse_ops(text: &str) -> HashMap<String, Op> {
    text.lines()
        .filter_map(|l| serde_json::from_str::<OpLine>(l).ok())
        .map(|l| (l.op, l.op_data))
        .collect()
}

/// Run a probe script (prelude + `script`) with `python3 -I -` and parse its op lines.
pub async fn run_py(
    c: &Container,
    script: &str,
    args: &[&str],
) -> (ExecResult, HashMap<String, Op>) {
    let mut argv = vec!["python3", "-I", "-"];
    argv.extend_from_slice(args);
    let r = common::exec(
        c,
        ExecRequest::argv(argv)
            .stdin(format!("{PRELUDE}\n{script}"))
            .timeout(Duration::from_secs(90))
            .output_cap(1 << 20),
    )
    .await;
    let ops = parse_ops(&r.output.render());
    (r, ops)
}

/// Compare the same op in the hardened and the control run.
pub fn compare(
    id: &str,
    hardened: &HashMap<String, Op>,
    control: &HashMap<String, Op>,
    held: impl Fn(&Op) -> bool,
    control_ok: impl Fn(&Op) -> bool,
) -> Outcome {
    let (h, hd) = match hardened.get(id) {
        Some(op) => (held(op), op.describe()),
        None => (false, "the probe did not report (script crashed?)".into()),
    };
    let (c, cd) = match control.get(id) {
        Some(op) => (control_ok(op), op.describe()),
        None => (false, "the control did not report".into()),
    };
    Outcome::new(id, h, hd, c, cd)
}

/// The shape of most negative probes: refused with one of `errs` here, done in the control.
pub fn refused(
    id: &str,
    hardened: &HashMap<String, Op>,
    control: &HashMap<String, Op>,
    errs: &[&str],
) -> Outcome {
    compare(id, hardened, control, |o| o.failed_with(errs), |o| o.ok)
}

pub struct Ctx {
    pub docker: Docker,
    pub image: String,
    pub run: String,
    pub canaries: &'static Canaries,
    /// (container name, golden-spec violations) for every hardened container started.
    posture: Mutex<Vec<(String, Vec<String>)>>,
    /// Violations the golden check reported for control containers (must be non-empty).
    control_posture: Mutex<Vec<(String, Vec<String>)>>,
}

impl Ctx {
    pub fn new(docker: Docker, image: String, canaries: &'static Canaries) -> Self {
        Ctx {
            docker,
            image,
            run: common::run_id("sec"),
            canaries,
            posture: Mutex::new(Vec::new()),
            control_posture: Mutex::new(Vec::new()),
        }
    }

    /// Start a hardened container and check its `docker inspect` against the golden spec (A1).
    pub async fn hardened(&self, policy: &ContainerPolicy, role: &str) -> Container {
        let c = common::start(&self.docker, &self.image, policy, &self.run, role).await;
        self.check_posture(c.name(), policy).await;
        c
    }

    /// Record the golden-spec check of a container (started here or by another process).
    pub async fn check_posture(&self, name: &str, policy: &ContainerPolicy) {
        let i = common::inspect(&self.docker, name).await;
        let image_env = common::image_env(&self.docker, &self.image).await;
        let v = common::golden_violations(&i, policy, &image_env, &self.canaries.values());
        self.posture.lock().await.push((name.to_string(), v));
    }

    /// Start the unhardened twin; the golden check must reject it (A1's positive control).
    pub async fn control(&self, policy: &ContainerPolicy, role: &str) -> Container {
        let c = common::start(&self.docker, &self.image, policy, &self.run, role).await;
        let i = common::inspect(&self.docker, c.name()).await;
        let image_env = common::image_env(&self.docker, &self.image).await;
        let v = common::golden_violations(&i, policy, &image_env, &self.canaries.values());
        self.control_posture
            .lock()
            .await
            .push((c.name().to_string(), v));
        c
    }

    /// One A1 outcome per hardened container, controlled by the checker rejecting controls.
    pub async fn posture_outcomes(&self) -> Vec<Outcome> {
        let controls = self.control_posture.lock().await.clone();
        let control_ok = !controls.is_empty() && controls.iter().all(|(_, v)| v.len() >= 5);
        let control_detail = format!(
            "golden check on {} control containers: {:?}",
            controls.len(),
            controls
                .iter()
                .map(|(n, v)| format!("{n}: {} violations", v.len()))
                .collect::<Vec<_>>()
        );
        self.posture
            .lock()
            .await
            .iter()
            .map(|(name, v)| {
                Outcome::new(
                    format!("A1-golden-inspect {name}"),
                    v.is_empty(),
                    format!("{v:?}"),
                    control_ok,
                    control_detail.clone(),
                )
            })
            .collect()
    }

    /// Remove whatever of this run is still around (volumes included).
    pub async fn cleanup(&self) {
        use bollard::query_parameters::{ListContainersOptions, RemoveContainerOptionsBuilder};
        let filters = HashMap::from([(
            "label".to_string(),
            vec![format!("{}={}", patchloop::sandbox::LABEL_RUN, self.run)],
        )]);
        if let Ok(list) = self
            .docker
            .list_containers(Some(ListContainersOptions {
                all: true,
                filters: Some(filters),
                ..Default::default()
            }))
            .await
        {
            for c in list {
                let _ = self
                    .docker
                    .remove_container(
                        &c.id.unwrap_or_default(),
                        Some(
                            RemoveContainerOptionsBuilder::new()
                                .force(true)
                                .v(true)
                                .build(),
                        ),
                    )
                    .await;
            }
        }
        common::pause(300).await;
        let _ = patchloop::sandbox::reaper::reap(&self.docker, 0).await;
    }
}

/// Remove a container, failing the test on a daemon error.
pub async fn remove(c: Container) {
    let name = c.name().to_string();
    if let Err(e) = c.remove().await {
        panic!("removing {name} failed: {e}");
    }
}

/// Count processes whose command line contains `marker` (the survivors of a step).
pub async fn survivors(c: &Container, marker: &str) -> (usize, String) {
    // The marker is split so this scan does not match its own command line.
    let (a, b) = marker.split_at(marker.len() / 2);
    let script = format!(
        "M=\"{a}\"\"{b}\"; n=0; for d in /proc/[0-9]*; do c=$(tr '\\0' ' ' < $d/cmdline 2>/dev/null); case \"$c\" in *\"$M\"*) n=$((n+1)); echo \"survivor ${{d#/proc/}}: $c\";; esac; done; echo count=$n"
    );
    let r = common::sh(c, &script, Duration::from_secs(20)).await;
    let out = r.output.render();
    let n = out
        .lines()
        .find_map(|l| l.strip_prefix("count="))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(usize::MAX);
    (n, out)
}
