//! The read-only helper behind `Sandbox::helper_call`: one JSON line per request and answer.

use std::pin::Pin;

use bollard::container::LogOutput;
use futures_util::StreamExt;
use tokio::io::{AsyncWrite, AsyncWriteExt};

use super::{Container, LogStream};
use crate::sandbox::{HELPER_USER, SandboxError};

/// The read-only helper of [`Sandbox::helper_call`]: an exec as [`HELPER_USER`] whose attached
/// stdin/stdout carry one JSON line per request and per answer.
pub(super) struct HelperIo {
    input: Pin<Box<dyn AsyncWrite + Send>>,
    output: LogStream,
    /// Stdout bytes read past the last answer's newline.
    pending: Vec<u8>,
}

/// Largest helper answer (a workspace snapshot of a big repository is a few MiB).
const HELPER_CAP: usize = 64 << 20;

impl Container {
    /// Start the read-only helper: an exec as [`HELPER_USER`] with stdin and stdout attached.
    pub(super) async fn start_helper(&self, argv: &[String]) -> Result<HelperIo, SandboxError> {
        let (_, output, input) = self
            .attach_exec(argv.to_vec(), true, &[], "/".into(), Some(HELPER_USER))
            .await?;
        Ok(HelperIo {
            input,
            output,
            pending: Vec::new(),
        })
    }
}

/// Send one request line, read stdout up to the answer's newline. Stderr is kept only to
/// explain a helper that died.
pub(super) async fn helper_round_trip(io: &mut HelperIo, request: &str) -> Result<String, String> {
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
