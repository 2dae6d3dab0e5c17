//! Sections E (hung commands, survivors, zombies, stdin), N (crash safety: kill -9 of the
//! harness, panic) and O (parallel episodes).

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use tokio::io::{AsyncBufReadExt, BufReader};

use patchloop::sandbox::policy::ContainerPolicy;
use patchloop::sandbox::{ExecRequest, ExecStatus, LABEL_RUN, Sandbox, reaper};

use crate::common;
use crate::probes::{Ctx, Outcome, remove, survivors};

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

/// Timeout bound (docs/security.md E1: N + k + 1 s): the harness kills at N itself (no TERM grace),
/// so the slack covers the kill exec and the round trips on a loaded 2-core machine (the
/// commands under test would otherwise run for 100 s or more, so the bound still proves it).
const KILL_SLACK: Duration = Duration::from_secs(4);

/// E1–E8 in one hardened container.
pub async fn processes(ctx: &Ctx) -> Vec<Outcome> {
    let h = ctx.hardened(&common::hardened_policy(), "proc").await;
    let mut out = Vec::new();
    let limit = secs(2);

    // E1 hung command.
    let t = Instant::now();
    let r = common::exec(
        &h,
        ExecRequest::shell("echo started; sleep 987651").timeout(limit),
    )
    .await;
    let wall = t.elapsed();
    let (left, ps) = survivors(&h, "987651").await;
    let quick = common::exec(&h, ExecRequest::shell("sleep 0.3").timeout(limit)).await;
    out.push(Outcome::new(
        "E1-hung-command-timeout",
        r.status == ExecStatus::TimedOut && wall <= limit + KILL_SLACK && left == 0,
        format!(
            "{:?} after {wall:?}, survivors {left}: {}",
            r.status,
            common::truncate(&ps, 200)
        ),
        r.output.render().contains("started") && quick.status == ExecStatus::Exited(0),
        format!(
            "command ran ({:?}); a 0.3 s command under the same limit: {:?}",
            r.output.render().trim(),
            quick.status
        ),
    ));

    // E2 TERM-ignoring command.
    let t = Instant::now();
    let r = common::exec(
        &h,
        ExecRequest::shell("trap '' TERM; echo trapped; sleep 987652").timeout(limit),
    )
    .await;
    let wall = t.elapsed();
    let (left, _) = survivors(&h, "987652").await;
    let ctl = common::sh(
        &h,
        "trap '' TERM; kill -TERM $$; echo survived-term",
        secs(10),
    )
    .await;
    out.push(Outcome::new(
        "E2-term-ignoring-timeout",
        r.status == ExecStatus::TimedOut && wall <= limit + KILL_SLACK && left == 0,
        format!("{:?} after {wall:?}, survivors {left}", r.status),
        ctl.output.render().contains("survived-term"),
        "the trap really ignores SIGTERM",
    ));

    // E3 setsid / nohup / subshell / double-fork daemon: 0 survivors after the step.
    let script = r#"setsid sleep 987653 &
nohup sleep 987654 >/dev/null 2>&1 &
(sleep 987655 &)
python3 -c '
import os
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "987656"])
'
sleep 0.5
n=0; for d in /proc/[0-9]*; do [ "$(cat $d/comm 2>/dev/null)" = sleep ] || continue; case "$(tr '\0' ' ' < $d/cmdline)" in *9876*) n=$((n+1));; esac; done
echo during=$n"#;
    let t = Instant::now();
    let r = common::sh(&h, script, secs(20)).await;
    let wall = t.elapsed();
    let (left, ps) = survivors(&h, "98765").await;
    let text = r.output.render();
    out.push(Outcome::new(
        "E3-setsid-nohup-daemon-survivors",
        r.status == ExecStatus::Exited(0) && wall < secs(10) && left == 0,
        format!(
            "{:?} in {wall:?}; survivors {left}: {}",
            r.status,
            common::truncate(&ps, 300)
        ),
        text.contains("during=4"),
        format!(
            "4 detached sleeps were running during the step: {}",
            text.trim()
        ),
    ));

    // E3b the command kills its own step wrapper (before the wrapper's cleanup could run).
    for (id, sig, code, marker) in [
        ("E3-wrapper-sigkilled-survivors", "KILL", 137, "987702"),
        ("E3-wrapper-sigtermed-survivors", "TERM", 143, "987703"),
    ] {
        let r = common::sh(
            &h,
            &format!("setsid sleep {marker} >/dev/null 2>&1 </dev/null & sleep 0.2; kill -{sig} $PPID; sleep 0.2"),
            secs(20),
        )
        .await;
        let (left, ps) = survivors(&h, marker).await;
        out.push(Outcome::new(
            id,
            left == 0,
            format!("survivors {left}: {}", common::truncate(&ps, 200)),
            r.status == ExecStatus::Exited(code),
            format!("the command killed its wrapper: {:?}", r.status),
        ));
    }

    // E3c a fork-walker (a process that keeps moving to a new pid, so a /proc snapshot is
    // always stale) does not outlive the step. Seen through the kernel's last-allocated pid
    // (/proc/loadavg, read with a builtin): it climbs only while something forks.
    let forks = "read _ _ _ _ a < /proc/loadavg; sleep 0.5; read _ _ _ _ b < /proc/loadavg; echo forks=$((b - a))";
    let walker = format!(
        "python3 -c '\nimport os\nos.setsid()\nwhile True:\n    if os.fork() == 0:\n        continue\n    os._exit(0)\n' >/dev/null 2>&1 </dev/null &\nsleep 0.3\n{forks}"
    );
    let during = common::sh(&h, &walker, secs(20)).await;
    let after = common::sh(&h, forks, secs(20)).await;
    let count = |r: &patchloop::sandbox::ExecResult| {
        r.output
            .render()
            .lines()
            .find_map(|l| l.strip_prefix("forks="))
            .and_then(|n| n.trim().parse::<i64>().ok())
            .unwrap_or(i64::MAX)
    };
    out.push(Outcome::new(
        "E3-fork-walker-survivors",
        count(&after) <= 5,
        format!("{} pids allocated in 0.5 s after the step", count(&after)),
        (50..i64::MAX).contains(&count(&during)),
        format!(
            "{} pids allocated in 0.5 s while the walker ran",
            count(&during)
        ),
    ));

    // E4 a background job holding stdout open does not hold the step.
    let t = Instant::now();
    let r = common::sh(
        &h,
        "sleep 987657 & sleep 0.2; kill -0 $! && echo bg-alive",
        secs(20),
    )
    .await;
    let wall = t.elapsed();
    let (left, _) = survivors(&h, "987657").await;
    out.push(Outcome::new(
        "E4-background-job-holds-stdout",
        r.status == ExecStatus::Exited(0) && wall < secs(10) && left == 0,
        format!("{:?} in {wall:?}, survivors {left}", r.status),
        r.output.render().contains("bg-alive"),
        "the job was alive when the step ended",
    ));

    // E5 zombies: orphans are reaped by the init.
    let zombie = "import os, time\nkids = [os.fork() for _ in range(5)]\nif 0 in kids:\n    os._exit(0)\ntime.sleep(0.5)\nz = sum(1 for k in kids if 'State:\\tZ' in open(f'/proc/{k}/status').read())\nprint(f'zombies_during={z}')\n";
    let r = common::exec(
        &h,
        ExecRequest::argv(["python3", "-c", zombie]).timeout(secs(20)),
    )
    .await;
    common::pause(200).await;
    let scan = common::sh(
        &h,
        "n=0; for s in /proc/[0-9]*/status; do grep -q '^State:.Z' $s 2>/dev/null && n=$((n+1)); done; echo zombies=$n",
        secs(20),
    )
    .await;
    out.push(Outcome::new(
        "E5-zombies-reaped",
        scan.output.render().trim() == "zombies=0",
        scan.output.render().trim().to_string(),
        r.output.render().contains("zombies_during=5"),
        r.output.render().trim().to_string(),
    ));

    // E6 stdin is EOF: readers finish at once.
    let t = Instant::now();
    let cat = common::exec(&h, ExecRequest::argv(["cat"]).timeout(secs(20))).await;
    let py = common::exec(
        &h,
        ExecRequest::argv(["python3", "-c", "input()"]).timeout(secs(20)),
    )
    .await;
    let wall = t.elapsed();
    let fed = common::exec(
        &h,
        ExecRequest::argv(["cat"])
            .stdin("hello-stdin")
            .timeout(secs(20)),
    )
    .await;
    out.push(Outcome::new(
        "E6-stdin-eof",
        cat.status == ExecStatus::Exited(0)
            && py.status == ExecStatus::Exited(1)
            && wall < secs(10),
        format!(
            "cat {:?}, input() {:?}, both in {wall:?}",
            cat.status, py.status
        ),
        fed.output.render() == "hello-stdin",
        "stdin given is delivered",
    ));

    // E7 a stopped process still times out.
    let t = Instant::now();
    let r = common::exec(
        &h,
        ExecRequest::shell("echo before-stop; kill -STOP $$; echo after-stop").timeout(limit),
    )
    .await;
    let wall = t.elapsed();
    let text = r.output.render();
    out.push(Outcome::new(
        "E7-stopped-process-timeout",
        r.status == ExecStatus::TimedOut
            && wall <= limit + KILL_SLACK
            && !text.contains("after-stop"),
        format!("{:?} after {wall:?}: {}", r.status, text.trim()),
        text.contains("before-stop"),
        "the command ran until it stopped itself",
    ));

    // E8 a background writer cannot change the diff after the step.
    common::sh(
        &h,
        "(while :; do date +%s%N >> /workspace/bg.txt; sleep 0.05; done) & sleep 0.5; echo started",
        secs(20),
    )
    .await;
    let d1 = h.diff().await.unwrap_or_else(|e| panic!("diff: {e}"));
    common::pause(1000).await;
    let d2 = h.diff().await.unwrap_or_else(|e| panic!("diff: {e}"));
    out.push(Outcome::new(
        "E8-diff-stable-after-step",
        d1 == d2,
        format!("diff sizes {} vs {}", d1.len(), d2.len()),
        d1.contains("bg.txt"),
        "the background writer did write during its step",
    ));
    remove(h).await;
    out.extend(step_loop(ctx).await);
    out
}

/// E9: the step loop (the episode's fast exec path) keeps the exec path's guarantees against
/// a step that attacks the loop itself. Own container: E9d kills the loop.
async fn step_loop(ctx: &Ctx) -> Vec<Outcome> {
    let h = ctx.hardened(&common::hardened_policy(), "loop").await;
    let mut out = Vec::new();
    let on_loop = h.uses_step_loop();

    // E9a a forged end marker (any nonce but the live one) does not end the step early.
    let r = common::sh(
        &h,
        r"printf 'PLEND%032x 0 0\n' 7; printf 'PLEND 0 0\n'; sleep 0.3; echo after-forgery; exit 3",
        secs(20),
    )
    .await;
    let text = r.output.render();
    out.push(Outcome::new(
        "E9-loop-forged-marker",
        r.status == ExecStatus::Exited(3) && text.contains("after-forgery"),
        format!("{:?}: {}", r.status, common::truncate(text.trim(), 200)),
        on_loop,
        "the container runs steps through the step loop",
    ));

    // E9b the attach stream's detach keys (ctrl-p ctrl-q) in a command and in stdin.
    let r = common::exec(
        &h,
        ExecRequest::argv(["sh", "-c", r"cat; printf '\020\021|'; echo done"])
            .stdin(vec![0x10, 0x11, b'x'])
            .timeout(secs(20)),
    )
    .await;
    let after = common::sh(&h, "echo still-attached", secs(20)).await;
    out.push(Outcome::new(
        "E9-loop-detach-keys",
        r.status == ExecStatus::Exited(0)
            && r.output.render().contains("done")
            && after.output.render().contains("still-attached")
            && h.uses_step_loop(),
        format!(
            "{:?} {:?}; next step: {:?}",
            r.status,
            common::truncate(&r.output.render(), 80),
            after.status
        ),
        on_loop,
        "the container runs steps through the step loop",
    ));

    // E9c a step that reads the loop's stdin (same uid) steals no request: nothing is
    // pending while it runs, and the next step still arrives whole.
    let r = common::sh(
        &h,
        r#"for f in /proc/[0-9]*/fd/0; do timeout 1 head -c 100 "$f" 2>/dev/null; done; echo read-done"#,
        secs(30),
    )
    .await;
    let next = common::sh(&h, "echo next-step-ok", secs(20)).await;
    out.push(Outcome::new(
        "E9-loop-stdin-steal",
        next.status == ExecStatus::Exited(0) && next.output.render().contains("next-step-ok"),
        format!(
            "stealer {:?}; next step {:?}: {}",
            r.status,
            next.status,
            common::truncate(next.output.render().trim(), 100)
        ),
        r.output.render().contains("read-done"),
        "the stealing step ran",
    ));

    // E9d a step that kills the loop (and leaves a detached survivor): no survivor, the
    // episode goes on through docker exec.
    let t = Instant::now();
    let r = common::sh(
        &h,
        r#"setsid sleep 987710 >/dev/null 2>&1 </dev/null &
for d in /proc/[0-9]*; do
  case "$(tr '\0' ' ' < "$d/cmdline" 2>/dev/null)" in "sh -c K="*) kill -9 "${d#/proc/}" && echo killed-loop;; esac
done
sleep 0.2; echo done"#,
        secs(5),
    )
    .await;
    let wall = t.elapsed();
    let next = common::sh(&h, "echo after-loop-death", secs(20)).await;
    let (left, ps) = survivors(&h, "987710").await;
    out.push(Outcome::new(
        "E9-loop-killed",
        left == 0 && next.output.render().contains("after-loop-death") && wall < secs(20),
        format!(
            "killer {:?} in {wall:?}; next step {:?}; survivors {left}: {}",
            r.status,
            next.status,
            common::truncate(&ps, 200)
        ),
        !h.uses_step_loop(),
        "the step did kill the loop (the container fell back to exec)",
    ));
    remove(h).await;
    out.push(loop_without_tools(ctx).await);
    out
}

/// E9e an image without `base64` (the loop could not decode a step, so every step would run
/// as an empty script): the loop stays silent and the container runs steps by exec.
async fn loop_without_tools(ctx: &Ctx) -> Outcome {
    use bollard::query_parameters::{CommitContainerOptionsBuilder, RemoveImageOptions};
    let c = ctx
        .control(&common::hardened_policy().control(), "nob64")
        .await;
    let rm = common::sh(
        &c,
        "rm -f \"$(command -v base64)\" && ! command -v base64",
        secs(20),
    )
    .await;
    let tag = format!("nob64-{}", std::process::id());
    let committed = ctx
        .docker
        .commit_container(
            CommitContainerOptionsBuilder::new()
                .container(c.name())
                .repo("patchloop-test-nob64")
                .tag(&tag)
                .build(),
            bollard::models::ContainerConfig::default(),
        )
        .await;
    remove(c).await;
    let image = format!("patchloop-test-nob64:{tag}");
    let outcome = match committed {
        Err(e) => Outcome::new(
            "E9-loop-missing-tools-falls-back",
            false,
            format!("committing the image without base64 failed: {e}"),
            false,
            "no image",
        ),
        Ok(_) => {
            let h = common::start(
                &ctx.docker,
                &image,
                &common::hardened_policy(),
                &ctx.run,
                "nob64",
            )
            .await;
            let r = common::sh(&h, "echo via-exec", secs(20)).await;
            let o = Outcome::new(
                "E9-loop-missing-tools-falls-back",
                !h.uses_step_loop() && r.output.render().contains("via-exec"),
                format!(
                    "step loop in use: {}; a step printed {:?}",
                    h.uses_step_loop(),
                    r.output.render().trim()
                ),
                rm.status == ExecStatus::Exited(0),
                "base64 was removed from the image",
            );
            remove(h).await;
            o
        }
    };
    let _ = ctx
        .docker
        .remove_image(&image, None::<RemoveImageOptions>, None)
        .await;
    outcome
}

/// The policy of the crash child's container: a short life, a named read-only volume.
fn crash_policy() -> ContainerPolicy {
    ContainerPolicy {
        lifetime_secs: 5,
        ..common::hardened_policy()
    }
}

/// Entry point of the helper process (see `crash_child` in security.rs).
pub fn crash_child_main() {
    let (Ok(image), Ok(run), Ok(mode)) = (
        std::env::var("PL_CRASH_IMAGE"),
        std::env::var("PL_CRASH_RUN"),
        std::env::var("PL_CRASH_MODE"),
    ) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let d = common::docker().await;
        let c = common::start(&d, &image, &crash_policy(), &run, "episode").await;
        println!("PL-CRASH-STARTED {}", c.name());
        if mode == "mid-exec" {
            println!("PL-CRASH-EXEC");
            let _ = c
                .exec(ExecRequest::shell("sleep 100").timeout(secs(100)))
                .await;
        }
        tokio::time::sleep(secs(100)).await;
    });
}

async fn run_containers(ctx: &Ctx, run: &str) -> Vec<String> {
    use bollard::query_parameters::ListContainersOptions;
    let filters = HashMap::from([("label".to_string(), vec![format!("{LABEL_RUN}={run}")])]);
    ctx.docker
        .list_containers(Some(ListContainersOptions {
            all: true,
            filters: Some(filters),
            ..Default::default()
        }))
        .await
        .unwrap_or_else(|e| panic!("listing containers: {e}"))
        .into_iter()
        .filter_map(|c| c.id)
        .collect()
}

async fn run_volumes(ctx: &Ctx, run: &str) -> Vec<String> {
    use bollard::query_parameters::ListVolumesOptions;
    let filters = HashMap::from([("label".to_string(), vec![format!("{LABEL_RUN}={run}")])]);
    ctx.docker
        .list_volumes(Some(ListVolumesOptions {
            filters: Some(filters),
        }))
        .await
        .unwrap_or_else(|e| panic!("listing volumes: {e}"))
        .volumes
        .unwrap_or_default()
        .into_iter()
        .map(|v| v.name)
        .collect()
}

/// N1: SIGKILL the harness (a child process) after start and mid-step. No container outlives
/// its deadline (bounded PID 1 + AutoRemove) and the reaper finds none of it afterwards.
async fn kill_9(ctx: &Ctx, mode: &str) -> Vec<Outcome> {
    let run = common::run_id(&format!("crash-{mode}"));
    let exe = std::env::current_exe().expect("current test binary");
    let mut child = tokio::process::Command::new(exe)
        .args([
            "--ignored",
            "--exact",
            "crash_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("PL_CRASH_IMAGE", &ctx.image)
        .env("PL_CRASH_RUN", &run)
        .env("PL_CRASH_MODE", mode)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the crash child");
    let stdout = child.stdout.take().expect("child stdout");
    let mut lines = BufReader::new(stdout).lines();
    let mut name = None;
    let wait_for = if mode == "mid-exec" {
        "PL-CRASH-EXEC"
    } else {
        "PL-CRASH-STARTED"
    };
    // PID 1 is running when STARTED is printed: the deadline counts from there.
    let mut started = Instant::now();
    let read = tokio::time::timeout(secs(60), async {
        while let Ok(Some(l)) = lines.next_line().await {
            // libtest prints "test crash_child ... " on the same line first.
            if let Some(i) = l.find("PL-CRASH-STARTED ") {
                name = Some(l[i + "PL-CRASH-STARTED ".len()..].trim().to_string());
                started = Instant::now();
            }
            if l.contains(wait_for) {
                break;
            }
        }
    })
    .await;
    let Some(name) = name.filter(|_| read.is_ok()) else {
        let _ = child.kill().await;
        return vec![Outcome::new(
            format!("N1-kill-9-{mode}"),
            false,
            "the crash child never started its container",
            false,
            "-",
        )];
    };
    if mode == "mid-exec" {
        common::pause(500).await;
    }
    let _ = child.start_kill(); // SIGKILL: no drop guard, no cleanup of any kind runs.
    let status = child.wait().await.expect("wait for the crash child");
    let alive = is_running(ctx, &name).await;
    if alive {
        ctx.check_posture(&name, &crash_policy()).await;
    }

    // (a) gone by the deadline + 5 s without any help.
    let deadline = started + secs(crash_policy().lifetime_secs + 5);
    let mut left = run_containers(ctx, &run).await;
    while !left.is_empty() && Instant::now() < deadline {
        common::pause(250).await;
        left = run_containers(ctx, &run).await;
    }
    let gone_after = started.elapsed();
    // (b) the reaper at the next start finds no container of this run; it removes the
    // named read-only volume AutoRemove leaves behind.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let report = reaper::reap(&ctx.docker, now)
        .await
        .unwrap_or_else(|e| panic!("reaper: {e}"));
    let after_reaper = run_containers(ctx, &run).await;
    let volumes = run_volumes(ctx, &run).await;
    vec![
        Outcome::new(
            format!("N1-kill-9-{mode}-no-container-outlives-deadline"),
            left.is_empty(),
            format!(
                "{} containers left {gone_after:?} after start (lifetime {} s)",
                left.len(),
                crash_policy().lifetime_secs
            ),
            alive && status.code().is_none(),
            format!("container running right after the harness was SIGKILLed ({status})"),
        ),
        Outcome::new(
            format!("N1-kill-9-{mode}-reaper-finds-none"),
            after_reaper.is_empty()
                && volumes.is_empty()
                && !report.containers_removed.iter().any(|id| left.contains(id)),
            format!(
                "after reaper: {} containers, volumes {volumes:?}",
                after_reaper.len()
            ),
            alive,
            "the episode container existed after the crash",
        ),
    ]
}

async fn is_running(ctx: &Ctx, name: &str) -> bool {
    use bollard::query_parameters::InspectContainerOptions;
    ctx.docker
        .inspect_container(name, None::<InspectContainerOptions>)
        .await
        .ok()
        .and_then(|i| i.state)
        .and_then(|s| s.running)
        == Some(true)
}

/// N2: a panic in the harness task: the drop guard removes the container.
async fn panic_guard(ctx: &Ctx) -> Outcome {
    let (name_tx, name_rx) = tokio::sync::oneshot::channel::<String>();
    let (go_tx, go_rx) = tokio::sync::oneshot::channel::<()>();
    let (d, image, run) = (ctx.docker.clone(), ctx.image.clone(), ctx.run.clone());
    let policy = common::hardened_policy();
    let p2 = policy.clone();
    let task = tokio::spawn(async move {
        let c = common::start(&d, &image, &p2, &run, "panic").await;
        let _ = name_tx.send(c.name().to_string());
        let _ = go_rx.await;
        // `c` is dropped while unwinding: its drop guard must remove the container.
        panic!(
            "simulated harness panic (expected by the N2 probe) holding {}",
            c.name()
        );
    });
    let name = name_rx.await.expect("panic task started its container");
    ctx.check_posture(&name, &policy).await;
    let alive = is_running(ctx, &name).await;
    let _ = go_tx.send(());
    let panicked = task.await.is_err_and(|e| e.is_panic());
    let t = Instant::now();
    let mut gone = false;
    while t.elapsed() < secs(10) {
        use bollard::query_parameters::InspectContainerOptions;
        if ctx
            .docker
            .inspect_container(&name, None::<InspectContainerOptions>)
            .await
            .is_err()
        {
            gone = true;
            break;
        }
        common::pause(200).await;
    }
    Outcome::new(
        "N2-panic-drop-guard-removes",
        gone,
        format!("removed={gone} {:?} after the panic", t.elapsed()),
        alive && panicked,
        "the container was running and the task did panic",
    )
}

pub async fn crash_safety(ctx: &Ctx) -> Vec<Outcome> {
    let (a, b, c) = tokio::join!(
        kill_9(ctx, "after-start"),
        kill_9(ctx, "mid-exec"),
        panic_guard(ctx)
    );
    let mut out = a;
    out.extend(b);
    out.push(c);
    out
}

/// O1: 8 episodes in parallel: distinct names, no cross-workspace reads or writes.
pub async fn parallel_episodes(ctx: &Ctx) -> Vec<Outcome> {
    let policy = common::hardened_policy();
    let roles: Vec<String> = (0..8).map(|i| format!("par{i}")).collect();
    let cs = join_all(roles.iter().map(|r| ctx.hardened(&policy, r))).await;
    let names: HashSet<&str> = cs.iter().map(|c| c.name()).collect();
    let tag: u32 = rand::random();
    let nonces: Vec<String> = (0..8).map(|i| format!("PLNONCE{i}x{tag:08x}")).collect();
    let writes: Vec<String> = nonces
        .iter()
        .map(|n| {
            format!("echo '# {n}' >> calc/__init__.py && echo {n} > /workspace/own.txt && echo {n} > /tmp/own.txt")
        })
        .collect();
    join_all(
        cs.iter()
            .zip(&writes)
            .map(|(c, w)| common::sh(c, w, secs(30))),
    )
    .await;
    let seen = join_all(cs.iter().map(|c| {
        common::sh(
            c,
            "grep -rhoa 'PLNONCE[0-9]x[0-9a-f]*' /workspace /tmp 2>/dev/null | sort -u",
            secs(30),
        )
    }))
    .await;
    let diffs = join_all(cs.iter().map(|c| c.diff())).await;
    let mut out = vec![Outcome::new(
        "O1-distinct-names",
        names.len() == 8,
        format!("{names:?}"),
        cs.len() == 8,
        "8 episodes started concurrently without a conflict",
    )];
    for (i, ((r, d), own)) in seen.iter().zip(&diffs).zip(&nonces).enumerate() {
        let visible: Vec<String> = r
            .output
            .render()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        let diff = d.as_ref().map(String::as_str).unwrap_or("");
        let foreign = nonces
            .iter()
            .filter(|n| *n != own)
            .any(|n| diff.contains(n.as_str()));
        out.push(Outcome::new(
            format!("O1-episode-{i}-isolated"),
            visible == vec![own.clone()] && !foreign,
            format!("visible nonces {visible:?}, foreign in diff: {foreign}"),
            diff.contains(own.as_str()),
            "its own write is in its diff",
        ));
    }
    join_all(cs.into_iter().map(remove)).await;
    out
}
