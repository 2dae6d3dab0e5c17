//! Steps through the in-container step loop (`sandbox::steploop`): one fork per step, no runc exec.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use std::pin::Pin;
use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::{Container, FLOOD_NOTE, LogStream, flood_limit};
use crate::sandbox::output::CappedOutput;
use crate::sandbox::steploop::{self, MarkerScanner};
use crate::sandbox::{ExecRequest, ExecResult, ExecStatus, SandboxError, WORKSPACE};

/// The attached stdin/stdout of a step-loop container.
pub(super) struct LoopIo {
    pub(super) input: Pin<Box<dyn AsyncWrite + Send>>,
    pub(super) output: LogStream,
}

impl Container {
    /// Whether steps go through the in-container step loop (false: one Docker exec each).
    pub fn uses_step_loop(&self) -> bool {
        self.loop_pid != 0 && !self.loop_broken.load(Ordering::Relaxed)
    }

    /// One step through the step loop: frame the request, read output until the loop's end
    /// marker. Timeouts and floods end the step with the exec path's cleanup (which spares
    /// the loop); a loop that stops answering is abandoned for the exec path.
    pub(super) async fn loop_exec(
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
}

/// The step loop's first line, read from the attached stream (bounded wait: an image whose
/// `sh` cannot run the loop falls back to exec).
pub(super) async fn read_hello(output: &mut LogStream) -> Option<steploop::Hello> {
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
