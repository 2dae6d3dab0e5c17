//! The quota'd tmpfs workspace: filled from the image's copy at start, checked when a step fills it.

use std::time::{Duration, Instant};

use super::{Container, first_look_script};
use crate::sandbox::image::is_disk_full;
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::{ExecRequest, SandboxError, WORKSPACE};

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

impl Container {
    /// Copy the image's workspace into the quota'd tmpfs before the first step. Directories
    /// runc created (as root) for nested test-directory mounts are opened to the sandbox user
    /// first, by a capability-less root exec (root owns them; chmod needs no capability then).
    /// With `first_look`, the copy runs in the first look's exec (no step loop yet; nothing but
    /// find and tar runs, so no cleanup wrapper is needed) and its result is returned.
    pub(super) async fn populate_workspace(
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
        if !parents.is_empty() && policy.hardening == crate::sandbox::policy::Hardening::Hardened {
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
                crate::sandbox::policy::WORKSPACE_MB_ENV,
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

    /// Is the workspace tmpfs (nearly) full, in bytes or inodes? Asked only after a step whose
    /// output mentions ENOSPC, so quiet steps pay nothing.
    pub(super) async fn quota_reached(&self) -> bool {
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
}

/// Between the first look's output and the workspace copy's, when they share an exec.
const POPULATE_SEPARATOR: &str = "@@patchloop-populate@@";
