//! The episode container policy: a plain value, logged in every trajectory, turned into a
//! Docker create request by exactly one function ([`ContainerPolicy::create_body`]).
//!
//! Invariant: no other code builds a `HostConfig` for a sandbox container. The security suite
//! inspects every container patchloop creates and compares it with this policy.

use std::collections::HashMap;

use bollard::models::{
    ContainerCreateBody, HostConfig, HostConfigCgroupnsModeEnum, HostConfigLogConfig, Mount,
    MountType, MountVolumeOptions, ResourcesUlimits,
};
use serde::{Deserialize, Serialize};

use super::{LABEL_DEADLINE, LABEL_ROLE, LABEL_RUN, WORKSPACE, seccomp};

/// The uid:gid every sandboxed process runs as.
pub const SANDBOX_USER: &str = "1000:1000";

/// How much the container is locked down. `Control` exists only for the security suite's
/// positive controls: the same probe must succeed there, or the negative probe proves nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Hardening {
    Hardened,
    Control,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerPolicy {
    pub hardening: Hardening,
    /// Container lifetime: PID 1 is `sleep <lifetime>`, so a container outlives no deadline
    /// even when the harness is killed.
    pub lifetime_secs: u64,
    pub memory_bytes: i64,
    pub nano_cpus: i64,
    pub pids_limit: i64,
    /// Size of the `/tmp` tmpfs (also `$HOME`); below the memory limit so a full tmpfs is
    /// ENOSPC, not an OOM kill.
    pub tmp_bytes: i64,
    pub tmp_inodes: i64,
    /// Quota of the workspace: a tmpfs of this size, filled from the image's copy at
    /// `/opt/patchloop/workspace` when the container starts, so a step cannot fill the host's
    /// disk (a Docker volume has no size limit on overlay-over-ext4). It counts against
    /// `memory_bytes`. 0 = the old disk-backed volume, unbounded.
    #[serde(default = "default_workspace_bytes")]
    pub workspace_bytes: i64,
    #[serde(default = "default_workspace_inodes")]
    pub workspace_inodes: i64,
    pub nofile: i64,
    /// Largest single file a process may write (RLIMIT_FSIZE), bytes.
    pub fsize_bytes: i64,
    pub log_max_size: String,
    /// Paths (relative to the workspace) mounted read-only: the test directories.
    pub read_only_paths: Vec<String>,
    /// The complete environment of the container: never derived from the host's.
    pub env: Vec<String>,
    /// Run steps through the in-container step loop (a few ms per step) instead of one
    /// Docker exec each (30-60 ms). Off for verification: its output must not depend on a
    /// process the code under test shares a uid with (see `sandbox::steploop`).
    #[serde(default = "default_step_loop")]
    pub step_loop: bool,
}

fn default_step_loop() -> bool {
    true
}

/// The operator's override of the workspace quota, in MiB (0: no quota). An environment
/// variable of the machine running patchloop, never repository configuration: repository
/// content must not be able to widen the sandbox.
pub const WORKSPACE_MB_ENV: &str = "PATCHLOOP_WORKSPACE_MB";

fn default_workspace_bytes() -> i64 {
    const DEFAULT: i64 = 1 << 30;
    match std::env::var(WORKSPACE_MB_ENV) {
        Err(_) => DEFAULT,
        Ok(v) => match v.trim().parse::<i64>() {
            Ok(mb) if mb >= 0 => mb << 20,
            _ => {
                tracing::warn!(
                    "{WORKSPACE_MB_ENV}={v:?} is not a number of MiB; using the default 1024"
                );
                DEFAULT
            }
        },
    }
}

fn default_workspace_inodes() -> i64 {
    200_000
}

impl Default for ContainerPolicy {
    fn default() -> Self {
        ContainerPolicy {
            hardening: Hardening::Hardened,
            lifetime_secs: 3600,
            memory_bytes: 2 << 30,
            nano_cpus: 2_000_000_000,
            pids_limit: 256,
            tmp_bytes: 512 << 20,
            tmp_inodes: 100_000,
            workspace_bytes: default_workspace_bytes(),
            workspace_inodes: default_workspace_inodes(),
            nofile: 1024,
            fsize_bytes: 256 << 20,
            log_max_size: "1m".into(),
            read_only_paths: Vec::new(),
            env: default_env(),
            step_loop: true,
        }
    }
}

/// The fixed allowlisted environment: nothing from the host (tokens above all) ever enters.
pub fn default_env() -> Vec<String> {
    [
        "PATH=/opt/patchloop/editable/bin:/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME=/tmp",
        "LANG=C.UTF-8",
        "LC_ALL=C.UTF-8",
        "PYTHONDONTWRITEBYTECODE=1",
        "PYTHONUNBUFFERED=1",
        // One string hash for every run: a suite that parametrizes over a set (isodate's
        // test cases) gets the same test ids in the baseline, each check and the verifier.
        "PYTHONHASHSEED=0",
        "PIP_NO_INDEX=1",
        "PIP_DISABLE_PIP_VERSION_CHECK=1",
        "GIT_EDITOR=true",
        "GIT_PAGER=cat",
        "PAGER=cat",
        // No TERM: GitHub's runners set none, and `TERM=dumb` turns colour off in libraries
        // whose tests expect it with a mocked tty (termcolor).
    ]
    .into_iter()
    .map(String::from)
    .collect()
}

/// Labels that let the reaper find and judge a container without any harness state.
#[derive(Debug, Clone)]
pub struct RunLabels {
    pub run_id: String,
    pub role: String,
    /// Unix seconds after which the container may be removed by anyone.
    pub deadline_unix: u64,
}

impl RunLabels {
    pub fn to_map(&self) -> HashMap<String, String> {
        HashMap::from([
            (LABEL_RUN.to_string(), self.run_id.clone()),
            (LABEL_ROLE.to_string(), self.role.clone()),
            (LABEL_DEADLINE.to_string(), self.deadline_unix.to_string()),
        ])
    }
}

impl ContainerPolicy {
    /// The unhardened twin used by positive controls: network, root, writable root, default caps.
    pub fn control(&self) -> Self {
        ContainerPolicy {
            hardening: Hardening::Control,
            ..self.clone()
        }
    }

    /// Names of the volumes holding the read-only paths of container `name` (the reaper and
    /// `Container::remove` delete them; Docker does not, as they are named).
    pub fn read_only_volume_names(&self, name: &str) -> Vec<String> {
        (0..self.read_only_paths.len())
            .map(|i| format!("{name}-ro{i}"))
            .collect()
    }

    /// THE place a sandbox container's create request is built.
    pub fn create_body(&self, image: &str, labels: &RunLabels, name: &str) -> ContainerCreateBody {
        let hardened = self.hardening == Hardening::Hardened;
        let labels = labels.to_map();

        // The workspace and the test directories are volumes: Docker fills an empty volume from
        // the image on first mount, and that works when patchloop itself runs in a container (no
        // host path involved). The workspace volume is anonymous (AutoRemove deletes it); Docker
        // refuses read-only anonymous volumes, so the test directories get named ones.
        let volume = |target: String, read_only: bool, source: Option<String>| Mount {
            target: Some(target),
            source,
            typ: Some(MountType::VOLUME),
            read_only: Some(read_only),
            volume_options: Some(MountVolumeOptions {
                labels: Some(labels.clone()),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut mounts = Vec::new();
        if self.workspace_bytes <= 0 {
            mounts.push(volume(WORKSPACE.to_string(), false, None));
        }
        for (p, vol) in self
            .read_only_paths
            .iter()
            .zip(self.read_only_volume_names(name))
        {
            let p = p.trim_matches('/');
            mounts.push(volume(format!("{WORKSPACE}/{p}"), hardened, Some(vol)));
        }

        let mut tmpfs = HashMap::from([(
            "/tmp".to_string(),
            format!(
                "rw,nosuid,nodev,noexec,size={},nr_inodes={},mode=1777",
                self.tmp_bytes, self.tmp_inodes
            ),
        )]);
        if self.workspace_bytes > 0 {
            // Executable (build scripts, compiled tests) but never setuid; owned by the sandbox
            // user. Docker mounts it before the nested test-directory volumes.
            tmpfs.insert(
                WORKSPACE.to_string(),
                format!(
                    "rw,nosuid,nodev,exec,size={},nr_inodes={},mode=0755,uid=1000,gid=1000",
                    self.workspace_bytes, self.workspace_inodes
                ),
            );
        }
        let ulimits = vec![
            ResourcesUlimits {
                name: Some("nofile".into()),
                soft: Some(self.nofile),
                hard: Some(self.nofile),
            },
            ResourcesUlimits {
                name: Some("fsize".into()),
                soft: Some(self.fsize_bytes),
                hard: Some(self.fsize_bytes),
            },
        ];
        let log_config = HostConfigLogConfig {
            typ: Some("json-file".into()),
            config: Some(HashMap::from([
                ("max-size".to_string(), self.log_max_size.clone()),
                ("max-file".to_string(), "1".to_string()),
            ])),
        };

        let host_config = HostConfig {
            network_mode: Some(if hardened { "none" } else { "bridge" }.into()),
            readonly_rootfs: Some(hardened),
            privileged: Some(false),
            cap_drop: hardened.then(|| vec!["ALL".to_string()]),
            security_opt: Some(if hardened {
                vec![
                    "no-new-privileges:true".to_string(),
                    seccomp::security_opt(),
                ]
            } else {
                vec!["seccomp=unconfined".to_string()]
            }),
            memory: Some(self.memory_bytes),
            // Equal to memory: no swap, so a memory bomb is an OOM, not a host slowdown.
            memory_swap: Some(self.memory_bytes),
            nano_cpus: Some(self.nano_cpus),
            pids_limit: Some(self.pids_limit),
            ulimits: Some(ulimits),
            tmpfs: Some(tmpfs),
            init: Some(true),
            // Docker's default on cgroup v1 is the host's cgroup namespace: the container would
            // read its host cgroup path (its full id) in /proc/self/cgroup.
            cgroupns_mode: Some(if hardened {
                HostConfigCgroupnsModeEnum::PRIVATE
            } else {
                HostConfigCgroupnsModeEnum::HOST
            }),
            auto_remove: Some(true),
            log_config: Some(log_config),
            mounts: Some(mounts),
            ..Default::default()
        };

        ContainerCreateBody {
            image: Some(image.to_string()),
            // PID 1's child (the keeper) ends at the deadline; AutoRemove then deletes everything.
            // In step-loop mode the keeper is the loop's parent shell, exec'd into `sleep`.
            cmd: Some(if self.step_loop {
                vec![
                    "sh".into(),
                    "-c".into(),
                    super::steploop::LOOP_SCRIPT.clone(),
                    "sh".into(),
                    self.lifetime_secs.to_string(),
                ]
            } else {
                vec!["sleep".into(), self.lifetime_secs.to_string()]
            }),
            entrypoint: Some(vec![]),
            user: Some(if hardened { SANDBOX_USER } else { "0:0" }.into()),
            working_dir: Some(WORKSPACE.into()),
            env: Some(self.env.clone()),
            labels: Some(labels),
            network_disabled: Some(hardened),
            // The step loop reads requests from stdin, attached by the harness before start.
            open_stdin: Some(self.step_loop),
            stdin_once: Some(false),
            attach_stdin: Some(self.step_loop),
            attach_stdout: Some(self.step_loop),
            attach_stderr: Some(self.step_loop),
            tty: Some(false),
            host_config: Some(host_config),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels() -> RunLabels {
        RunLabels {
            run_id: "r1".into(),
            role: "episode".into(),
            deadline_unix: 42,
        }
    }

    fn hardened() -> ContainerCreateBody {
        ContainerPolicy {
            read_only_paths: vec!["tests".into(), "/pkg/tests/".into()],
            ..Default::default()
        }
        .create_body("img:1", &labels(), "c1")
    }

    #[test]
    fn every_hardening_flag_is_set() {
        let b = hardened();
        let h = b.host_config.clone().unwrap();
        assert_eq!(h.network_mode.as_deref(), Some("none"));
        assert_eq!(b.network_disabled, Some(true));
        assert_eq!(h.readonly_rootfs, Some(true));
        assert_eq!(h.privileged, Some(false));
        assert_eq!(h.cap_drop, Some(vec!["ALL".to_string()]));
        assert!(h.cap_add.is_none());
        let sec = h.security_opt.unwrap();
        assert!(sec.contains(&"no-new-privileges:true".to_string()));
        assert!(sec.iter().any(|s| s.starts_with("seccomp={")));
        assert_eq!(h.memory, h.memory_swap);
        assert!(h.nano_cpus.unwrap() > 0);
        assert!(h.pids_limit.unwrap() > 0);
        assert_eq!(h.init, Some(true));
        assert_eq!(h.auto_remove, Some(true));
        let names: Vec<_> = h
            .ulimits
            .unwrap()
            .into_iter()
            .filter_map(|u| u.name)
            .collect();
        assert_eq!(names, vec!["nofile", "fsize"]);
        let tmp = &h.tmpfs.unwrap()["/tmp"];
        assert!(tmp.contains("size=") && tmp.contains("noexec") && tmp.contains("nr_inodes="));
        assert_eq!(h.log_config.unwrap().config.unwrap()["max-size"], "1m");
        assert!(h.binds.is_none() && h.devices.is_none() && h.volumes_from.is_none());
        assert!(h.pid_mode.is_none() && h.ipc_mode.is_none() && h.userns_mode.is_none());
        assert_eq!(h.cgroupns_mode, Some(HostConfigCgroupnsModeEnum::PRIVATE));
        assert_eq!(b.user.as_deref(), Some("1000:1000"));
        // The keeper bounds the container's life in both modes.
        let cmd = b.cmd.unwrap_or_default();
        assert_eq!(cmd.last().map(String::as_str), Some("3600"));
        assert_eq!(b.open_stdin, Some(true));
        let exec_mode = ContainerPolicy {
            step_loop: false,
            ..ContainerPolicy::default()
        }
        .create_body("img", &labels(), "n");
        assert_eq!(
            exec_mode.cmd,
            Some(vec!["sleep".to_string(), "3600".to_string()])
        );
        assert_eq!(exec_mode.open_stdin, Some(false));
    }

    #[test]
    fn the_workspace_is_a_sized_tmpfs_unless_the_quota_is_off() {
        let h = hardened().host_config.unwrap();
        let ws = h.tmpfs.as_ref().unwrap().get("/workspace").unwrap();
        assert!(ws.contains(&format!("size={}", 1i64 << 30)), "{ws}");
        assert!(
            ws.contains("nr_inodes=200000") && ws.contains("uid=1000"),
            "{ws}"
        );
        assert!(ws.contains("nosuid") && ws.contains("nodev"), "{ws}");
        let mounts = h.mounts.unwrap();
        assert!(
            mounts
                .iter()
                .all(|m| m.target.as_deref() != Some("/workspace"))
        );

        let off = ContainerPolicy {
            workspace_bytes: 0,
            ..Default::default()
        }
        .create_body("img:1", &labels(), "c1")
        .host_config
        .unwrap();
        assert!(!off.tmpfs.unwrap().contains_key("/workspace"));
        assert_eq!(off.mounts.unwrap()[0].target.as_deref(), Some("/workspace"));
    }

    #[test]
    fn mounts_are_tests_ro_volumes() {
        let h = hardened().host_config.unwrap();
        let m: Vec<_> = h
            .mounts
            .unwrap()
            .into_iter()
            .map(|m| (m.target.unwrap(), m.read_only.unwrap(), m.source))
            .collect();
        assert_eq!(
            m,
            vec![
                (
                    "/workspace/tests".to_string(),
                    true,
                    Some("c1-ro0".to_string())
                ),
                (
                    "/workspace/pkg/tests".to_string(),
                    true,
                    Some("c1-ro1".to_string())
                ),
            ]
        );
    }

    #[test]
    fn env_comes_only_from_the_allowlist() {
        // SAFETY of the invariant: planting a secret in our own env must not change the body.
        let b = hardened();
        let env = b.env.unwrap();
        assert_eq!(env, default_env());
        assert!(
            env.iter()
                .all(|e| !e.contains("TOKEN") && !e.contains("KEY"))
        );
    }

    #[test]
    fn labels_carry_run_role_and_deadline() {
        let l = hardened().labels.unwrap();
        assert_eq!(l[LABEL_RUN], "r1");
        assert_eq!(l[LABEL_ROLE], "episode");
        assert_eq!(l[LABEL_DEADLINE], "42");
    }

    #[test]
    fn control_is_unhardened() {
        let b = ContainerPolicy::default()
            .control()
            .create_body("img", &labels(), "c2");
        let h = b.host_config.unwrap();
        assert_eq!(h.network_mode.as_deref(), Some("bridge"));
        assert_eq!(h.readonly_rootfs, Some(false));
        assert!(h.cap_drop.is_none());
        assert_eq!(b.user.as_deref(), Some("0:0"));
    }

    #[test]
    fn policy_round_trips_through_serde() {
        let p = ContainerPolicy::default();
        let s = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<ContainerPolicy>(&s).unwrap(), p);
    }
}
