//! Execs in a verification container that more than one layer needs: the prepared image's
//! labels, applying a patch, and the harness helper's commands (snapshots, sources, reports).
//! Below [`super::runner`] and [`super::probe`], so neither imports the other for these.

use std::collections::BTreeMap;
use std::time::Duration;

use bollard::Docker;
use serde::{Deserialize, Serialize};

use super::harness;
use crate::sandbox::output::tail_chars;
use crate::sandbox::{ExecRequest, ExecStatus, Sandbox, WORKSPACE};
use crate::testcmd::TestCommand;

/// What verification needs to know about the prepared image (its labels).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreparedImage {
    pub tag: String,
    /// Workspace-relative test directories (`patchloop.tests_dirs`).
    pub tests_dirs: Vec<String>,
    /// The project's test command (labels `patchloop.test_command`, `patchloop.test_cmd`), e.g.
    /// `PYTHONPATH=src python -m pytest`.
    pub test_cmd: TestCommand,
}

impl PreparedImage {
    /// Read the labels `patchloop prepare` put on an image.
    pub async fn inspect(docker: &Docker, tag: &str) -> Result<(PreparedImage, String), String> {
        let info = docker.inspect_image(tag).await.map_err(|e| {
            format!(
                "image `{tag}` cannot be inspected ({e}); build it with `patchloop prepare` first"
            )
        })?;
        let labels = info.config.and_then(|c| c.labels).unwrap_or_default();
        let tests_dirs = labels
            .get("patchloop.tests_dirs")
            .and_then(|s| serde_json::from_str::<Vec<String>>(s).ok())
            .unwrap_or_default();
        let test_cmd = match labels.get(crate::sandbox::image::LABEL_TEST_CMD) {
            Some(written) => crate::sandbox::prepare::test_command_of(&labels, written),
            None => TestCommand::python_pytest(),
        };
        Ok((
            PreparedImage {
                tag: tag.to_string(),
                tests_dirs,
                test_cmd,
            },
            info.id.unwrap_or_default(),
        ))
    }
}

impl From<crate::sandbox::prepare::PreparedImage> for PreparedImage {
    fn from(p: crate::sandbox::prepare::PreparedImage) -> Self {
        PreparedImage {
            tag: p.tag,
            tests_dirs: p.tests_dirs,
            test_cmd: p.test_cmd,
        }
    }
}

/// The helper commands that only read (workspace snapshots, a run's reports): answered by the
/// sandbox's long-lived read-only helper when it has one (another uid than the code under
/// test: see [`Sandbox::helper_call`]), else by a fresh exec. A few ms instead of ~80.
const HELPER_COMMANDS: &[&str] = &["snapshot", "collect", "sources"];

pub(crate) async fn tool<T: for<'de> Deserialize<'de>>(
    c: &dyn Sandbox,
    cmd: &str,
    input: &serde_json::Value,
) -> Result<T, String> {
    if HELPER_COMMANDS.contains(&cmd) {
        let argv: Vec<String> = ["python3", "-I", "-S", "-B", "-c", harness::PL_TOOL, "serve"]
            .into_iter()
            .map(String::from)
            .collect();
        let request = serde_json::json!({"cmd": cmd, "input": input}).to_string();
        match c
            .helper_call(&argv, &request, Duration::from_secs(120))
            .await
        {
            Some(Ok(line)) => {
                #[derive(Deserialize)]
                #[serde(rename_all = "lowercase")]
                enum Answer<T> {
                    Ok(T),
                    Error(String),
                }
                match serde_json::from_str::<Answer<T>>(&line) {
                    Ok(Answer::Ok(v)) => return Ok(v),
                    Ok(Answer::Error(e)) => {
                        return Err(format!("the harness helper `{cmd}` failed: {e}"));
                    }
                    Err(e) => {
                        return Err(format!(
                            "the harness helper `{cmd}` answered no usable JSON ({e}): {}",
                            tail_chars(&line, 500)
                        ));
                    }
                }
            }
            // The helper is gone: this and later requests go through fresh execs.
            Some(Err(e)) => tracing::warn!("{e}; using one exec per request"),
            None => {}
        }
    }
    let res = c
        .exec(
            ExecRequest::argv(["python3", "-I", "-B", "-c", harness::PL_TOOL, cmd])
                .stdin(input.to_string())
                .timeout(Duration::from_secs(120))
                .output_cap(64 << 20),
        )
        .await
        .map_err(|e| format!("sandbox failure running the harness helper `{cmd}`: {e}"))?;
    let text = res.output.render();
    if !res.status.success() {
        return Err(format!(
            "the harness helper `{cmd}` failed ({:?}): {}",
            res.status,
            tail_chars(&text, 2000)
        ));
    }
    // Output is stdout+stderr combined; the JSON document is the last line.
    let line = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    serde_json::from_str(line).map_err(|e| {
        format!(
            "the harness helper `{cmd}` printed no usable JSON ({e}): {}",
            tail_chars(&text, 500)
        )
    })
}

pub(crate) async fn snapshot(
    c: &dyn Sandbox,
    tests_dirs: &[String],
) -> Result<BTreeMap<String, String>, String> {
    tool(
        c,
        "snapshot",
        &serde_json::json!({"workspace": WORKSPACE, "tests_dirs": tests_dirs}),
    )
    .await
}

/// `git apply` in the workspace: as is, then ignoring whitespace drift, then with the patch's
/// line endings converted to the other convention. The first failure's message is reported.
pub(crate) async fn apply_patch(c: &dyn Sandbox, patch: &str) -> Result<(), String> {
    apply(c, patch, false).await
}

/// `git apply -R`: the workspace back to before the patch (the probe's original tree).
pub(crate) async fn apply_patch_reverse(c: &dyn Sandbox, patch: &str) -> Result<(), String> {
    apply(c, patch, true).await
}

async fn apply(c: &dyn Sandbox, patch: &str, reverse: bool) -> Result<(), String> {
    let lf = patch.replace("\r\n", "\n");
    let crlf = harness::hunks_to_crlf(&lf);
    let stripped = harness::strip_context_trailing_ws(&lf);
    let attempts: [(&str, &[&str]); 6] = [
        (patch, &[]),
        (patch, &["--ignore-whitespace"]),
        (&lf, &[]),
        (&lf, &["--ignore-whitespace"]),
        (&stripped, &["--ignore-whitespace"]),
        (&crlf, &["--ignore-whitespace"]),
    ];
    let mut first_error = None;
    for (text, extra) in attempts {
        let mut argv: Vec<&str> = vec![
            "git",
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=",
            "-c",
            "core.autocrlf=false",
            "apply",
            "--verbose",
            "--whitespace=nowarn",
        ];
        argv.extend_from_slice(extra);
        if reverse {
            argv.push("-R");
        }
        argv.push("-");
        let res = c
            .exec(
                ExecRequest::argv(argv)
                    .stdin(text.as_bytes().to_vec())
                    .env("GIT_CONFIG_NOSYSTEM=1")
                    .env("GIT_CONFIG_GLOBAL=/dev/null")
                    .timeout(Duration::from_secs(120)),
            )
            .await
            .map_err(|e| format!("sandbox failure while applying the patch: {e}"))?;
        if res.status == ExecStatus::Exited(0) {
            return Ok(());
        }
        first_error.get_or_insert_with(|| tail_chars(&res.output.render(), 3000).to_string());
    }
    Err(format!(
        "the patch does not {} to the prepared image (tried as is, ignoring whitespace, and with LF/CRLF line endings): {}",
        if reverse { "reverse" } else { "apply" },
        first_error.unwrap_or_default().trim()
    ))
}
