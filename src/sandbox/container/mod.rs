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
use super::steploop::{self, MarkerScanner};
use super::{ExecRequest, ExecResult, ExecStatus, HELPER_USER, Sandbox, SandboxError, WORKSPACE};

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
/// Where a prepared image keeps a copy of its workspace (hardlinks, made by finalize.sh): the
/// quota'd tmpfs workspace hides the image's own `/workspace`, so it is filled from here.
pub const WORKSPACE_COPY: &str = "/opt/patchloop/workspace";

/// Fills the tmpfs workspace from the image's copy, leaving out the read-only test
/// directories (already mounted; `$@` holds their `--exclude`s). An image with a baseline but
/// no copy predates the quota and is refused; one with neither (a bare base image) starts empty.
const POPULATE_SCRIPT: &str = r#"S=/opt/patchloop/workspace
if [ ! -d "$S" ]; then
  [ -d /opt/patchloop/baseline.git ] || exit 0
  echo "this image has no workspace copy at $S (it was prepared by an older patchloop): rebuild it with \`patchloop prepare\`"
  exit 3
fi
cd "$S" || exit 3
# Members are listed, never recursed into: tar would chmod a listed directory that exists
# (the root-owned mountpoint parents), which the sandbox user may not.
find . "$@" -print0 2>/tmp/.pl-populate | tar --null --no-recursion -T - -cf - 2>>/tmp/.pl-populate | tar -C /workspace -xf - || exit 4
if [ -s /tmp/.pl-populate ]; then cat /tmp/.pl-populate; rm -f /tmp/.pl-populate; exit 5; fi
rm -f /tmp/.pl-populate
"#;

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

/// The read-only helper of [`Sandbox::helper_call`]: an exec as [`HELPER_USER`] whose attached
/// stdin/stdout carry one JSON line per request and per answer.
struct HelperIo {
    input: Pin<Box<dyn AsyncWrite + Send>>,
    output: LogStream,
    /// Stdout bytes read past the last answer's newline.
    pending: Vec<u8>,
}

/// Largest helper answer (a workspace snapshot of a big repository is a few MiB).
const HELPER_CAP: usize = 64 << 20;

/// The attached stdin/stdout of a step-loop container.
struct LoopIo {
    input: Pin<Box<dyn AsyncWrite + Send>>,
    output: LogStream,
}

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

    /// Copy the image's workspace into the quota'd tmpfs before the first step. Directories
    /// runc created (as root) for nested test-directory mounts are opened to the sandbox user
    /// first, by a capability-less root exec (root owns them; chmod needs no capability then).
    /// With `first_look`, the copy runs in the first look's exec (no step loop yet; nothing but
    /// find and tar runs, so no cleanup wrapper is needed) and its result is returned.
    async fn populate_workspace(
        &self,
        policy: &ContainerPolicy,
        first_look: bool,
    ) -> Result<(u32, u64), SandboxError> {
        let started = Instant::now();
        let mut parents: Vec<String> = Vec::new();
        for p in &policy.read_only_paths {
            let parts: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
            for i in 1..parts.len() {
                let dir = format!("{WORKSPACE}/{}", parts[..i].join("/"));
                if !parents.contains(&dir) {
                    parents.push(dir);
                }
            }
        }
        if !parents.is_empty() && policy.hardening == super::policy::Hardening::Hardened {
            let mut argv = vec!["chmod".to_string(), "0777".to_string(), "--".to_string()];
            argv.extend(parents.iter().cloned());
            let out = self
                .raw_exec(
                    argv,
                    None,
                    Duration::from_secs(20),
                    4096,
                    None,
                    &[],
                    Some("0:0"),
                )
                .await?;
            if !out.status.success() {
                return Err(SandboxError::Other(format!(
                    "preparing the workspace tmpfs of {} failed: {}",
                    self.name,
                    out.output.render().trim()
                )));
            }
        }
        let mut argv = vec![
            "sh".to_string(),
            "-c".to_string(),
            POPULATE_SCRIPT.to_string(),
            "sh".to_string(),
        ];
        // find's expression: skip `.`, the test directories (mounted), and the mountpoint
        // parents (they exist; their contents are still copied).
        argv.extend(["!".into(), "-path".into(), ".".into()]);
        for p in &policy.read_only_paths {
            argv.extend([
                "!".into(),
                "(".into(),
                "-path".into(),
                format!("./{}", p.trim_matches('/')),
                "-prune".into(),
                ")".into(),
            ]);
        }
        for d in &parents {
            let rel = d.strip_prefix(WORKSPACE).unwrap_or(d);
            argv.extend(["!".into(), "-path".into(), format!(".{rel}")]);
        }
        let mut look = (0, 0);
        let out = if first_look {
            argv[2] = format!(
                "{}\necho {POPULATE_SEPARATOR}\n{POPULATE_SCRIPT}",
                first_look_script()
            );
            let out = self
                .raw_exec(
                    argv,
                    None,
                    Duration::from_secs(300),
                    64 << 10,
                    None,
                    &[],
                    None,
                )
                .await?;
            let text = out.output.render();
            let before = text.split(POPULATE_SEPARATOR).next().unwrap_or("");
            look = self.look(before)?;
            out
        } else {
            self.exec_inner(ExecRequest::argv(argv).timeout(Duration::from_secs(300)))
                .await?
        };
        tracing::debug!(
            container = %self.name,
            ms = started.elapsed().as_millis() as u64,
            "workspace copied into its tmpfs"
        );
        if out.status.success() {
            return Ok(look);
        }
        let full_text = out.output.render();
        let text = full_text
            .split_once(POPULATE_SEPARATOR)
            .map_or(full_text.as_str(), |(_, after)| after);
        let full = is_disk_full(text);
        Err(SandboxError::Other(if full {
            format!(
                "the checkout does not fit the workspace quota ({} MiB): raise it with {}=<MiB> (0 = no quota, a disk-backed workspace) — {}",
                policy.workspace_bytes >> 20,
                super::policy::WORKSPACE_MB_ENV,
                text.trim()
            )
        } else {
            format!(
                "copying the workspace into its tmpfs failed ({:?}): {}",
                out.status,
                text.trim()
            )
        }))
    }

    /// Start the read-only helper: an exec as [`HELPER_USER`] with stdin and stdout attached.
    async fn start_helper(&self, argv: &[String]) -> Result<HelperIo, SandboxError> {
        let (_, output, input) = self
            .attach_exec(argv.to_vec(), true, &[], "/".into(), Some(HELPER_USER))
            .await?;
        Ok(HelperIo {
            input,
            output,
            pending: Vec::new(),
        })
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

    /// Is the workspace tmpfs (nearly) full, in bytes or inodes? Asked only after a step whose
    /// output mentions ENOSPC, so quiet steps pay nothing.
    async fn quota_reached(&self) -> bool {
        let Ok(out) = self
            .exec_inner(ExecRequest::argv([
                "sh",
                "-c",
                "df -Pk /workspace | tail -n 1; df -Pi /workspace | tail -n 1",
            ]))
            .await
        else {
            return false;
        };
        let text = out.output.render();
        let rows: Vec<Vec<u64>> = text
            .lines()
            .map(|l| {
                l.split_whitespace()
                    .filter_map(|f| f.parse().ok())
                    .collect()
            })
            .collect();
        // Each row: total, used, available (KiB, then inodes).
        let nearly_full = |row: &Vec<u64>, floor: u64| match row.as_slice() {
            [total, _, avail, ..] => *avail <= floor.max(total / 100),
            _ => false,
        };
        rows.first().is_some_and(|r| nearly_full(r, 1024))
            || rows.get(1).is_some_and(|r| nearly_full(r, 16))
    }

    /// Whether steps go through the in-container step loop (false: one Docker exec each).
    pub fn uses_step_loop(&self) -> bool {
        self.loop_pid != 0 && !self.loop_broken.load(Ordering::Relaxed)
    }

    /// One step through the step loop: frame the request, read output until the loop's end
    /// marker. Timeouts and floods end the step with the exec path's cleanup (which spares
    /// the loop); a loop that stops answering is abandoned for the exec path.
    async fn loop_exec(
        &self,
        io: &mut LoopIo,
        req: ExecRequest,
    ) -> Result<Option<ExecResult>, SandboxError> {
        let started = Instant::now();
        let nonce = steploop::nonce();
        let script = steploop::step_script(
            &req.argv,
            req.workdir.as_deref().unwrap_or(WORKSPACE),
            &req.env,
        );
        let frame = steploop::request(&nonce, &script, req.stdin.as_deref());
        if let Err(e) = async {
            io.input.write_all(&frame).await?;
            io.input.flush().await
        }
        .await
        {
            self.loop_broken.store(true, Ordering::Relaxed);
            return Err(SandboxError::ContainerGone {
                id: self.name.clone(),
                reason: format!("the step loop's stdin closed: {e}"),
            });
        }

        let mut scanner = MarkerScanner::new(&nonce);
        let mut captured = CappedOutput::new(req.output_cap);
        let flood_limit = flood_limit(req.output_cap);
        let mut flooded = false;
        let mut end = None;
        let read = async {
            while let Some(chunk) = io.output.next().await {
                let Ok(log) = chunk else { break };
                let (out, e) = scanner.feed(&log.into_bytes());
                captured.push(&out);
                if e.is_some() {
                    end = e;
                    break;
                }
                if captured.total_bytes() > flood_limit {
                    flooded = true;
                    break;
                }
            }
        };
        let timed_out = tokio::time::timeout(req.timeout, read).await.is_err();
        if end.is_none() {
            // The step is still running (timeout, flood) or the loop is gone: end the step
            // from outside, then wait for the loop's marker.
            self.kill_others().await?;
            let drain = async {
                while let Some(chunk) = io.output.next().await {
                    let Ok(log) = chunk else { break };
                    // Keep what is left (bounded by the cap): the held-back tail of the
                    // output and whatever the step printed before it was killed.
                    let (out, e) = scanner.feed(&log.into_bytes());
                    captured.push(&out);
                    if e.is_some() {
                        end = e;
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(10), drain).await;
        }
        if flooded {
            captured.push(FLOOD_NOTE);
        }
        let Some(end) = end else {
            self.loop_broken.store(true, Ordering::Relaxed);
            if !scanner.started() {
                return Ok(None);
            }
            captured.push(b"\n[the sandbox's step loop stopped answering (was it killed?); later steps use docker exec]\n");
            return Ok(Some(ExecResult {
                status: if timed_out {
                    ExecStatus::TimedOut
                } else {
                    ExecStatus::Exited(-1)
                },
                output: captured,
                duration: started.elapsed(),
            }));
        };
        let status = if timed_out {
            ExecStatus::TimedOut
        } else if end.code == 137 {
            let mut seen = self.oom_kills_seen.lock().await;
            if end.oom_kills > *seen {
                *seen = end.oom_kills;
                ExecStatus::Oom
            } else {
                ExecStatus::Exited(137)
            }
        } else {
            ExecStatus::Exited(end.code)
        };
        Ok(Some(ExecResult {
            status,
            output: captured,
            duration: started.elapsed(),
        }))
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

/// Send one request line, read stdout up to the answer's newline. Stderr is kept only to
/// explain a helper that died.
async fn helper_round_trip(io: &mut HelperIo, request: &str) -> Result<String, String> {
    let mut line = request.replace('\n', " ");
    line.push('\n');
    io.input
        .write_all(line.as_bytes())
        .await
        .map_err(|e| format!("writing the request: {e}"))?;
    io.input
        .flush()
        .await
        .map_err(|e| format!("writing the request: {e}"))?;
    let mut stderr = Vec::new();
    loop {
        if let Some(nl) = io.pending.iter().position(|&b| b == b'\n') {
            let answer: Vec<u8> = io.pending.drain(..=nl).collect();
            return String::from_utf8(answer[..nl].to_vec())
                .map_err(|_| "the answer is not UTF-8".to_string());
        }
        if io.pending.len() > HELPER_CAP {
            return Err(format!("an answer over {} MiB", HELPER_CAP >> 20));
        }
        match io.output.next().await {
            Some(Ok(LogOutput::StdOut { message })) => io.pending.extend_from_slice(&message),
            Some(Ok(LogOutput::StdErr { message })) => {
                if stderr.len() < 4096 {
                    stderr.extend_from_slice(&message);
                }
            }
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(format!("reading the answer: {e}")),
            None => {
                return Err(format!(
                    "it exited: {}",
                    String::from_utf8_lossy(&stderr).trim()
                ));
            }
        }
    }
}

/// PID 1's children, a `---` line, the cgroup's OOM counters ([`parse_first_look`]).
/// Waits (up to ~2 s) for docker-init to have forked the keeper: an exec can race it.
fn first_look_script() -> String {
    format!(
        "i=0; while [ $i -lt 200 ] && [ -r /proc/1/task/1/children ] && [ -z \"$(cat /proc/1/task/1/children)\" ]; do i=$((i+1)); sleep 0.01; done; {{ cat /proc/1/task/1/children 2>/dev/null || for d in /proc/[0-9]*; do p=${{d#/proc/}}; [ \"$p\" != 1 ] && [ \"$p\" != $$ ] && echo \"$p\"; done; }}; echo; echo ---; {OOM_COUNTER}"
    )
}

/// Between the first look's output and the workspace copy's, when they share an exec.
const POPULATE_SEPARATOR: &str = "@@patchloop-populate@@";

/// Did the step wrapper possibly die before its cleanup? A signal death shows as 128+n (the
/// command may have signalled its parent); -1 means the exit code was never reported.
fn wrapper_may_have_died(code: i64) -> bool {
    !(0..128).contains(&code)
}

/// The step loop's first line, read from the attached stream (bounded wait: an image whose
/// `sh` cannot run the loop falls back to exec).
async fn read_hello(output: &mut LogStream) -> Option<steploop::Hello> {
    let read = async {
        let mut line = Vec::new();
        while let Some(Ok(chunk)) = output.next().await {
            line.extend_from_slice(&chunk.into_bytes());
            if let Some(nl) = line.iter().position(|&b| b == b'\n') {
                return steploop::parse_hello(&String::from_utf8_lossy(&line[..nl]));
            }
            if line.len() > 4096 {
                return None;
            }
        }
        None
    };
    tokio::time::timeout(Duration::from_secs(10), read)
        .await
        .ok()
        .flatten()
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

/// The harness-owned diff: the pristine baseline git dir (read-only in the image) against the
/// workspace, with no system/global config, no hooks, no fsmonitor, a private index and object
/// dir in /tmp. Nothing in the workspace's own `.git` is ever read.
/// The baseline repository with a throwaway index and object store: `g` is git over the
/// workspace against the image's read-only baseline commit.
macro_rules! baseline_git {
    ($body:literal) => {
        concat!(
            r#"set -e
B=/opt/patchloop/baseline.git
T=$(mktemp -d /tmp/.pl-git-XXXXXX)
trap 'rm -rf "$T"' EXIT
cp "$B/index" "$T/index"
mkdir "$T/objects"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_DIR="$B" GIT_WORK_TREE=/workspace \
  GIT_INDEX_FILE="$T/index" GIT_OBJECT_DIRECTORY="$T/objects" GIT_ALTERNATE_OBJECT_DIRECTORIES="$B/objects" \
  GIT_TERMINAL_PROMPT=0 GIT_OPTIONAL_LOCKS=0
g() { git -c core.fsmonitor= -c core.hooksPath=/dev/null -c 'safe.directory=*' -c core.untrackedCache=false \
  -c core.autocrlf=false -c core.safecrlf=false -c diff.noprefix=false -c diff.renames=false "$@"; }
cd /workspace
g add -A -- . >/dev/null
"#,
            $body
        )
    };
}

const DIFF_SCRIPT: &str = baseline_git!(
    "g diff --cached --binary --no-color --no-ext-diff --no-textconv --full-index HEAD\n"
);

/// Back to the baseline commit: files the workspace added are removed, changed and deleted
/// ones restored from it (ignored caches stay). Between repair attempts, so the next
/// strategy starts from the same tree the verifier applies patches to.
pub const RESET_SCRIPT: &str = baseline_git!(
    r#"g diff --cached --name-only --no-renames --diff-filter=A -z HEAD > "$T/added"
g diff --cached --name-only --no-renames --diff-filter=MDT -z HEAD > "$T/restore"
if [ -s "$T/added" ]; then xargs -0 rm -f -- < "$T/added"; fi
if [ -s "$T/restore" ]; then g checkout HEAD --pathspec-from-file="$T/restore" --pathspec-file-nul; fi
"#
);

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
