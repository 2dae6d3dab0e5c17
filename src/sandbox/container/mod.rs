//! A running sandbox container: create/start through the policy, exec with hard limits,
//! harness-owned diff, and removal on every path (drop guard).
//!
//! Why the step wrapper: `timeout` inside the container does not end a step (a `setsid`
//! grandchild or a `sleep 60 &` survives it, docs/security.md E3). Every command therefore runs under
//! a tiny `sh` wrapper that, when the command returns, SIGKILLs every process in the container
//! except PID 1 (docker-init) and the keeper (`sleep <lifetime>`). The same loop runs from the
//! harness when a step times out. Execs on one container are serialised so one step's cleanup
//! never kills another step's processes.
//!
//! When the policy asks for it (episodes), steps go through the in-container step loop instead
//! (`super::steploop`: one fork per step instead of a runc exec); the diff, timeouts' kills and
//! every verification run still use Docker execs.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bollard::Docker;
use bollard::container::LogOutput;
use bollard::exec::{CreateExecOptions, StartExecOptions, StartExecResults};
use bollard::query_parameters::{
    AttachContainerOptionsBuilder, CreateContainerOptions, RemoveContainerOptionsBuilder,
};
use futures_util::{Stream, StreamExt};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;

use super::image::is_disk_full;
use super::output::CappedOutput;
use super::policy::{ContainerPolicy, RunLabels};
use super::{ExecRequest, ExecResult, ExecStatus, Sandbox, SandboxError, WORKSPACE};

mod baseline;
mod helper;
mod loop_io;
mod workspace;

use baseline::DIFF_SCRIPT;
pub use baseline::RESET_SCRIPT;
use helper::{HelperIo, helper_round_trip};
use loop_io::{LoopIo, read_hello};
pub use workspace::WORKSPACE_COPY;

/// Extra seconds the deadline label gives beyond PID 1's own lifetime before the reaper acts.
const DEADLINE_GRACE_SECS: u64 = 30;
/// Reading stops (and the step is killed) once a command has printed this many times its cap.
const FLOOD_FACTOR: u64 = 64;
/// Appended to the output of a step killed for flooding.
const FLOOD_NOTE: &[u8] = b"\n[output limit reached: the command was killed]\n";

/// Bytes read before a step counts as a flood and is killed.
fn flood_limit(cap: usize) -> u64 {
    (cap as u64).saturating_mul(FLOOD_FACTOR).max(8 << 20)
}

/// Prints the container cgroup's OOM counters (cgroup v2, else v1).
const OOM_COUNTER: &str =
    "cat /sys/fs/cgroup/memory.events 2>/dev/null || cat /sys/fs/cgroup/memory/memory.oom_control";

/// Largest diff we accept; a truncated diff would be a wrong patch.
const DIFF_CAP: usize = 16 << 20;

/// A live container. Dropping it removes the container in the background; call
/// [`Container::remove`] to wait for removal. PID 1 ends at the deadline anyway (AutoRemove).
pub struct Container {
    docker: Docker,
    id: String,
    name: String,
    /// Named volumes (read-only test dirs) to delete with the container.
    volumes: Vec<String>,
    keeper_pid: u32,
    /// The step loop's pid (0 without one): spared by every cleanup, like the keeper.
    loop_pid: u32,
    oom_kills_seen: Mutex<u64>,
    /// One exec at a time: the post-step cleanup kills every other process. Holds the
    /// attached step loop when the policy asks for one.
    exec_lock: Mutex<Option<LoopIo>>,
    /// Set when the step loop stopped answering (a step killed it): exec from then on.
    loop_broken: AtomicBool,
    /// The read-only helper, once started; `helper_broken` once it failed (never restarted).
    helper: Mutex<Option<HelperIo>>,
    helper_broken: AtomicBool,
    /// The workspace tmpfs size (0: disk-backed, no quota) and whether a step filled it.
    workspace_quota: i64,
    workspace_full: AtomicBool,
    removed: bool,
}

type LogStream = Pin<Box<dyn Stream<Item = Result<LogOutput, bollard::errors::Error>> + Send>>;

use crate::clock::now_unix;

fn random_suffix() -> String {
    let n: u32 = rand::random();
    format!("{n:08x}")
}

/// A name Docker accepts: `[a-zA-Z0-9][a-zA-Z0-9_.-]*`.
fn sanitize(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    if s.is_empty() { "x".into() } else { s }
}

/// The cleanup ([`super::steploop::kill_functions`]) that ends every process but PID 1, the
/// keeper, the step loop (when there is one) and the shell itself.
fn kill_others_script(keeper: u32, loop_pid: u32) -> String {
    let spared = if loop_pid == 0 {
        format!("1|{keeper}|$$")
    } else {
        format!("1|{keeper}|{loop_pid}|$$")
    };
    format!("{}pl_kill", super::steploop::kill_functions(&spared))
}

impl Container {
    /// Create and start a container from `image` under `policy`, labelled with `run_id`/`role`.
    pub async fn start(
        docker: &Docker,
        image: &str,
        policy: &ContainerPolicy,
        run_id: &str,
        role: &str,
    ) -> Result<Container, SandboxError> {
        let labels = RunLabels {
            run_id: run_id.to_string(),
            role: role.to_string(),
            deadline_unix: now_unix() + policy.lifetime_secs + DEADLINE_GRACE_SECS,
        };
        let started = Instant::now();
        let name = format!(
            "patchloop-{}-{}-{}",
            sanitize(run_id),
            sanitize(role),
            random_suffix()
        );
        let body = policy.create_body(image, &labels, &name);
        let volumes = policy.read_only_volume_names(&name);
        let created = docker
            .create_container(
                Some(CreateContainerOptions {
                    name: Some(name.clone()),
                    ..Default::default()
                }),
                body,
            )
            .await
            .map_err(SandboxError::docker(format!(
                "creating container {name} from image {image}"
            )))?;
        let mut container = Container {
            docker: docker.clone(),
            id: created.id,
            name,
            volumes,
            keeper_pid: 0,
            loop_pid: 0,
            oom_kills_seen: Mutex::new(0),
            exec_lock: Mutex::new(None),
            loop_broken: AtomicBool::new(false),
            helper: Mutex::new(None),
            helper_broken: AtomicBool::new(false),
            workspace_quota: policy.workspace_bytes.max(0),
            workspace_full: AtomicBool::new(false),
            removed: false,
        };
        // From here on the drop guard removes the container on any error.
        // Attach before start: the loop's hello line must not be missed.
        let mut io = if policy.step_loop {
            let attached = docker
                .attach_container(
                    &container.id,
                    Some(
                        AttachContainerOptionsBuilder::new()
                            .stdin(true)
                            .stdout(true)
                            .stderr(true)
                            .stream(true)
                            .logs(false)
                            .build(),
                    ),
                )
                .await
                .map_err(SandboxError::docker(format!(
                    "attaching to container {}",
                    container.name
                )))?;
            Some(LoopIo {
                input: attached.input,
                output: attached.output,
            })
        } else {
            None
        };
        docker
            .start_container(
                &container.id,
                None::<bollard::query_parameters::StartContainerOptions>,
            )
            .await
            .map_err(SandboxError::docker(format!(
                "starting container {}",
                container.name
            )))?;
        let hello = match io.as_mut() {
            Some(io) => read_hello(&mut io.output).await,
            None => None,
        };
        tracing::debug!(
            container = %container.name,
            step_loop = hello.is_some(),
            ms = started.elapsed().as_millis() as u64,
            "container started"
        );
        let mut populated = false;
        match hello {
            Some(h) => {
                container.keeper_pid = h.keeper;
                container.loop_pid = h.loop_pid;
                *container.oom_kills_seen.get_mut() = h.oom_kills;
                *container.exec_lock.get_mut() = io;
            }
            None => {
                // No loop (policy) or it never said hello: one exec per step. The first look
                // and the workspace copy share one exec (each costs a runc exec).
                let (keeper, baseline) = if policy.workspace_bytes > 0 {
                    container.populate_workspace(policy, true).await?
                } else {
                    container.first_look().await?
                };
                container.keeper_pid = keeper;
                *container.oom_kills_seen.get_mut() = baseline;
                populated = true;
            }
        }
        if policy.workspace_bytes > 0 && !populated {
            container.populate_workspace(policy, false).await?;
        }
        Ok(container)
    }

    /// Create and start an exec with stdout/stderr (and optionally stdin) attached.
    async fn attach_exec(
        &self,
        argv: Vec<String>,
        stdin: bool,
        env: &[String],
        workdir: String,
        user: Option<&str>,
    ) -> Result<(String, LogStream, Pin<Box<dyn AsyncWrite + Send>>), SandboxError> {
        let exec = self
            .docker
            .create_exec(
                &self.id,
                CreateExecOptions {
                    cmd: Some(argv),
                    attach_stdin: Some(stdin),
                    attach_stdout: Some(true),
                    attach_stderr: Some(true),
                    tty: Some(false),
                    env: Some(env.to_vec()),
                    working_dir: Some(workdir),
                    user: user.map(str::to_string),
                    ..Default::default()
                },
            )
            .await
            .map_err(|e| self.gone_or(e, "creating an exec"))?;
        let started = self
            .docker
            .start_exec(
                &exec.id,
                Some(StartExecOptions {
                    detach: false,
                    tty: false,
                    output_capacity: Some(64 * 1024),
                }),
            )
            .await
            .map_err(|e| self.gone_or(e, "starting an exec"))?;
        match started {
            StartExecResults::Attached { output, input } => Ok((exec.id, output, input)),
            StartExecResults::Detached => Err(SandboxError::Other("exec started detached".into())),
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// One exec right after start (each exec costs a runc exec, ~30-50 ms): PID 1 is
    /// docker-init and its first child is the keeper that bounds the container's life; the
    /// cgroup's OOM-kill counter is the baseline later OOMs are judged against.
    async fn first_look(&self) -> Result<(u32, u64), SandboxError> {
        let out = self
            .raw_exec(
                vec!["sh".into(), "-c".into(), first_look_script()],
                None,
                Duration::from_secs(20),
                4096,
                None,
                &[],
                None,
            )
            .await?;
        self.look(&out.output.render())
    }

    /// The keeper and OOM baseline from a first look's output, or why the container is unusable.
    fn look(&self, text: &str) -> Result<(u32, u64), SandboxError> {
        parse_first_look(text).ok_or_else(|| SandboxError::ContainerGone {
            id: self.name.clone(),
            reason: format!("no keeper process found under PID 1 (saw {text:?})"),
        })
    }

    /// Kill every process but PID 1 and the keeper, then read the cgroup's OOM-kill counter:
    /// an OOM under exec shows only as exit 137 plus this counter (docs/security.md D2).
    async fn cleanup_and_oom_count(&self) -> Result<u64, SandboxError> {
        let out = self
            .raw_exec(
                vec![
                    "sh".into(),
                    "-c".into(),
                    format!(
                        "{}; {OOM_COUNTER}",
                        kill_others_script(self.keeper_pid, self.loop_pid)
                    ),
                ],
                None,
                Duration::from_secs(10),
                4096,
                None,
                &[],
                None,
            )
            .await?;
        Ok(parse_oom_kill(&out.output.render()).unwrap_or(0))
    }

    /// Kill every process but PID 1 and the keeper.
    async fn kill_others(&self) -> Result<(), SandboxError> {
        self.raw_exec(
            vec![
                "sh".into(),
                "-c".into(),
                kill_others_script(self.keeper_pid, self.loop_pid),
            ],
            None,
            Duration::from_secs(10),
            4096,
            None,
            &[],
            None,
        )
        .await
        .map(|_| ())
    }

    /// One exec over the Engine API: capture output with a cap, enforce the timeout by killing
    /// the step's processes, return the exit code. No cleanup wrapper here (see `exec`).
    // One Engine API call's worth of options, each needed by some caller.
    #[allow(clippy::too_many_arguments)]
    async fn raw_exec(
        &self,
        argv: Vec<String>,
        stdin: Option<Vec<u8>>,
        timeout: Duration,
        cap: usize,
        workdir: Option<String>,
        env: &[String],
        user: Option<&str>,
    ) -> Result<ExecResult, SandboxError> {
        let started = Instant::now();
        let workdir = workdir.unwrap_or_else(|| WORKSPACE.to_string());
        let (exec_id, mut output, mut input) = self
            .attach_exec(argv, stdin.is_some(), env, workdir, user)
            .await?;

        if let Some(bytes) = stdin {
            // A process that never reads stdin must not block us: write in the background.
            tokio::spawn(async move {
                let _ = input.write_all(&bytes).await;
                let _ = input.shutdown().await;
            });
        } else {
            drop(input);
        }

        let mut captured = CappedOutput::new(cap);
        let flood_limit = flood_limit(cap);
        let mut flooded = false;
        let read = async {
            while let Some(chunk) = output.next().await {
                match chunk {
                    Ok(log) => {
                        captured.push(&log.into_bytes());
                        if captured.total_bytes() > flood_limit {
                            flooded = true;
                            break;
                        }
                    }
                    Err(_) => break,
                }
            }
        };
        let timed_out = tokio::time::timeout(timeout, read).await.is_err();
        drop(output);
        if timed_out || flooded {
            // The step's processes are still running: end them (the keeper and PID 1 stay).
            // Boxed: kill_others is itself an exec.
            Box::pin(self.kill_others()).await?;
        }
        if flooded {
            captured.push(FLOOD_NOTE);
        }
        let code = self.exit_code(&exec_id).await?;
        let status = if timed_out {
            ExecStatus::TimedOut
        } else {
            ExecStatus::Exited(code.unwrap_or(-1))
        };
        Ok(ExecResult {
            status,
            output: captured,
            duration: started.elapsed(),
        })
    }

    /// The exec's exit code; it may lag the end of the output stream by a few milliseconds.
    async fn exit_code(&self, exec_id: &str) -> Result<Option<i64>, SandboxError> {
        for attempt in 0..100u32 {
            let info = self
                .docker
                .inspect_exec(exec_id)
                .await
                .map_err(|e| self.gone_or(e, "inspecting an exec"))?;
            if info.running != Some(true) {
                return Ok(info.exit_code);
            }
            tokio::time::sleep(Duration::from_millis(if attempt < 10 { 5 } else { 50 })).await;
        }
        Ok(None)
    }

    fn gone_or(&self, e: bollard::errors::Error, action: &str) -> SandboxError {
        use bollard::errors::Error as E;
        match &e {
            E::DockerResponseServerError {
                status_code: 404 | 409,
                message,
            } => SandboxError::ContainerGone {
                id: self.name.clone(),
                reason: message.clone(),
            },
            _ => SandboxError::Docker {
                action: format!("{action} in container {}", self.name),
                source: e,
            },
        }
    }

    /// Stop and remove now (the anonymous workspace volumes go with it).
    pub async fn remove(mut self) -> Result<(), SandboxError> {
        self.removed = true;
        remove_container(&self.docker, &self.id, &self.volumes).await
    }
}

async fn remove_container(
    docker: &Docker,
    id: &str,
    volumes: &[String],
) -> Result<(), SandboxError> {
    let opts = RemoveContainerOptionsBuilder::new()
        .force(true)
        .v(true)
        .build();
    let removed = docker.remove_container(id, Some(opts)).await;
    for v in volumes {
        // AutoRemove may still hold the volume for a moment; the reaper gets any straggler.
        for _ in 0..20 {
            match docker
                .remove_volume(v, None::<bollard::query_parameters::RemoveVolumeOptions>)
                .await
            {
                Err(bollard::errors::Error::DockerResponseServerError {
                    status_code: 409, ..
                }) => tokio::time::sleep(Duration::from_millis(50)).await,
                _ => break,
            }
        }
    }
    match removed {
        Ok(()) => Ok(()),
        // Already gone (AutoRemove raced us), or removal already in progress.
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404 | 409,
            ..
        }) => Ok(()),
        Err(e) => Err(SandboxError::Docker {
            action: format!("removing container {id}"),
            source: e,
        }),
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        if self.removed {
            return;
        }
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let docker = self.docker.clone();
            let id = self.id.clone();
            let volumes = std::mem::take(&mut self.volumes);
            handle.spawn(async move {
                let _ = remove_container(&docker, &id, &volumes).await;
            });
        }
        // Without a runtime the bounded PID 1, AutoRemove and the reaper still clean up.
    }
}

/// PID 1's children, a `---` line, the cgroup's OOM counters ([`parse_first_look`]).
/// Waits (up to ~2 s) for docker-init to have forked the keeper: an exec can race it.
fn first_look_script() -> String {
    format!(
        "i=0; while [ $i -lt 200 ] && [ -r /proc/1/task/1/children ] && [ -z \"$(cat /proc/1/task/1/children)\" ]; do i=$((i+1)); sleep 0.01; done; {{ cat /proc/1/task/1/children 2>/dev/null || for d in /proc/[0-9]*; do p=${{d#/proc/}}; [ \"$p\" != 1 ] && [ \"$p\" != $$ ] && echo \"$p\"; done; }}; echo; echo ---; {OOM_COUNTER}"
    )
}

/// Did the step wrapper possibly die before its cleanup? A signal death shows as 128+n (the
/// command may have signalled its parent); -1 means the exit code was never reported.
fn wrapper_may_have_died(code: i64) -> bool {
    !(0..128).contains(&code)
}

/// `(keeper pid, oom_kill baseline)` from the output of [`Container::first_look`]'s script:
/// PID 1's children, a `---` line, then the cgroup's OOM counters.
fn parse_first_look(text: &str) -> Option<(u32, u64)> {
    let (pids, counters) = text.split_once("\n---\n").unwrap_or((text, ""));
    let keeper = pids
        .split_whitespace()
        .filter_map(|t| t.parse::<u32>().ok())
        .find(|&p| p != 1)?;
    Some((keeper, parse_oom_kill(counters).unwrap_or(0)))
}

/// `oom_kill N` from memory.events (v2) or memory.oom_control (v1).
fn parse_oom_kill(text: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let mut it = l.split_whitespace();
        (it.next() == Some("oom_kill"))
            .then(|| it.next().and_then(|n| n.parse().ok()))
            .flatten()
    })
}

impl Container {
    /// One step: through the step loop when there is one, else one wrapped Docker exec.
    async fn exec_inner(&self, req: ExecRequest) -> Result<ExecResult, SandboxError> {
        let mut one_at_a_time = self.exec_lock.lock().await;
        if self.uses_step_loop()
            && let Some(io) = one_at_a_time.as_mut()
        {
            // `None`: the loop died before the step started (a fork failed while reading the
            // request): nothing ran, so the step is safe to run through an exec instead.
            if let Some(r) = self.loop_exec(io, req.clone()).await? {
                return Ok(r);
            }
            tracing::debug!(container = %self.name, "step loop lost before the step started; using exec");
        }
        // sh -c 'WRAPPER' sh ARGV...: the command runs as "$@" (no interpolation); afterwards
        // every process it left behind is killed so nothing outlives the step.
        let wrapper = format!(
            "\"$@\"; rc=$?; {}; exit $rc",
            kill_others_script(self.keeper_pid, self.loop_pid)
        );
        let mut argv = vec![
            "sh".to_string(),
            "-c".to_string(),
            wrapper,
            "sh".to_string(),
        ];
        argv.extend(req.argv);
        let mut result = self
            .raw_exec(
                argv,
                req.stdin,
                req.timeout,
                req.output_cap,
                req.workdir,
                &req.env,
                None,
            )
            .await?;
        if let ExecStatus::Exited(code) = result.status
            && wrapper_may_have_died(code)
        {
            // The command can signal its own parent: a wrapper killed before its cleanup
            // leaves the step's processes running (`setsid sleep 1e9 & kill -9 $PPID`). Clean
            // up from here, and read the OOM counter in the same exec.
            let count = self.cleanup_and_oom_count().await?;
            if code == 137 {
                let mut seen = self.oom_kills_seen.lock().await;
                if count > *seen {
                    *seen = count;
                    result.status = ExecStatus::Oom;
                }
            }
        }
        Ok(result)
    }
}

#[async_trait]
impl Sandbox for Container {
    async fn exec(&self, req: ExecRequest) -> Result<ExecResult, SandboxError> {
        // First and last argument, short: enough to tell steps apart in a debug log.
        let what: String = match req.argv.as_slice() {
            [] => String::new(),
            [one] => one.clone(),
            [first, .., last] => format!("{first} … {last}"),
        }
        .chars()
        .take(60)
        .collect();
        let mut result = self.exec_inner(req).await;
        if let Ok(r) = &mut result
            && self.workspace_quota > 0
            && is_disk_full(&r.output.render())
            && self.quota_reached().await
        {
            self.workspace_full.store(true, Ordering::Relaxed);
            r.status = ExecStatus::QuotaExceeded;
            r.output.push(
                format!(
                    "\n[the workspace quota ({} MiB) is full]\n",
                    self.workspace_quota >> 20
                )
                .as_bytes(),
            );
        }
        if let Ok(r) = &result {
            tracing::debug!(
                container = %self.name,
                command = %what,
                status = ?r.status,
                ms = r.duration.as_millis() as u64,
                "step"
            );
        }
        result
    }
    async fn diff(&self) -> Result<String, SandboxError> {
        let _one_at_a_time = self.exec_lock.lock().await;
        // Freeze the workspace first: a background writer must not change the diff under us.
        self.kill_others().await?;
        let out = self
            .raw_exec(
                vec!["sh".into(), "-c".into(), DIFF_SCRIPT.into()],
                None,
                Duration::from_secs(120),
                DIFF_CAP,
                None,
                &[],
                None,
            )
            .await?;
        if out.output.is_truncated() {
            return Err(SandboxError::Other(format!(
                "the workspace diff is larger than {} MiB; refusing a truncated patch",
                DIFF_CAP >> 20
            )));
        }
        let text = String::from_utf8_lossy(&out.output.kept_bytes()).into_owned();
        if !out.status.success() {
            return Err(SandboxError::Other(format!(
                "taking the workspace diff failed ({:?}): {}",
                out.status,
                text.trim()
            )));
        }
        Ok(text)
    }

    fn workspace_full(&self) -> bool {
        self.workspace_full.load(Ordering::Relaxed)
    }

    async fn helper_call(
        &self,
        argv: &[String],
        request: &str,
        timeout: Duration,
    ) -> Option<Result<String, SandboxError>> {
        if self.helper_broken.load(Ordering::Relaxed) {
            return None;
        }
        let started = Instant::now();
        let mut guard = self.helper.lock().await;
        if guard.is_none() {
            match self.start_helper(argv).await {
                Ok(io) => *guard = Some(io),
                Err(e) => {
                    self.helper_broken.store(true, Ordering::Relaxed);
                    tracing::debug!(container = %self.name, "no read-only helper: {e}");
                    return None;
                }
            }
        }
        let io = guard.as_mut()?;
        let answer = tokio::time::timeout(timeout, helper_round_trip(io, request))
            .await
            .unwrap_or_else(|_| Err(format!("no answer within {}s", timeout.as_secs())));
        match answer {
            Ok(line) => {
                tracing::debug!(
                    container = %self.name,
                    ms = started.elapsed().as_millis() as u64,
                    bytes = line.len(),
                    "helper call"
                );
                Some(Ok(line))
            }
            Err(reason) => {
                // A helper that failed once is not trusted with the next request.
                self.helper_broken.store(true, Ordering::Relaxed);
                *guard = None;
                Some(Err(SandboxError::Other(format!(
                    "the read-only helper in {} failed: {reason}",
                    self.name
                ))))
            }
        }
    }

    /// The container name (readable in logs, unique per run).
    #[allow(clippy::misnamed_getters)]
    fn id(&self) -> &str {
        &self.name
    }
}

/// Labels → map, for the reaper and doctor.
pub fn labels_of(summary: &bollard::models::ContainerSummary) -> HashMap<String, String> {
    summary.labels.clone().unwrap_or_default()
}

#[cfg(test)]
mod tests;
