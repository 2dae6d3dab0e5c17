//! Sandbox latency bench: patchloop's Engine API paths against the docker CLI, in one run.
//!
//! `cargo run --release --example bench_sandbox -- [IMAGE] [--iterations N]`
//! (IMAGE defaults to `$PATCHLOOP_TEST_BASE`, else `patchloop-probe:base`.)
//!
//! - exec round trip: `Container::exec(["true"])` (including the post-step cleanup of every
//!   leftover process) through the step loop (the episode default) and through one Engine API
//!   exec per step (the verifier's path), vs `docker exec NAME true` through the CLI;
//! - hardened create + start + remove: `Container::start` + `remove` vs the CLI's
//!   `docker run --rm` with the same hardening flags, running `true`.
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use patchloop::sandbox::{
    ExecRequest, Sandbox, container::Container, docker, policy::ContainerPolicy,
};

fn pct(mut v: Vec<Duration>, p: f64) -> Duration {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

fn cli(args: &[&str]) -> anyhow::Result<Duration> {
    let t = Instant::now();
    let out = Command::new("docker")
        .args(args)
        .output()
        .context("running the docker CLI")?;
    if !out.status.success() {
        bail!(
            "docker {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(t.elapsed())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut image = std::env::var("PATCHLOOP_TEST_BASE")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "patchloop-probe:base".into());
    let mut n = 40usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--iterations" {
            n = args
                .next()
                .and_then(|s| s.parse().ok())
                .context("--iterations needs a number")?;
        } else {
            image = a;
        }
    }
    let d = docker::connect().await?;
    let policy = ContainerPolicy {
        lifetime_secs: 600,
        ..Default::default()
    };
    let run = format!("bench-{:08x}", rand::random::<u32>());

    // Exec round trips: the step loop, one Engine API exec per step, and the CLI, interleaved
    // in rounds so machine noise hits all alike.
    let c = Container::start(&d, &image, &policy, &run, "exec").await?;
    if !c.uses_step_loop() {
        bail!("the step loop did not start in {image}");
    }
    let exec_policy = ContainerPolicy {
        step_loop: false,
        ..policy.clone()
    };
    let e = Container::start(&d, &image, &exec_policy, &run, "exec").await?;
    for _ in 0..5 {
        c.exec(ExecRequest::argv(["true"])).await?;
        e.exec(ExecRequest::argv(["true"])).await?;
        cli(&["exec", e.name(), "true"])?;
    }
    let (mut ours, mut engine, mut theirs) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let t = Instant::now();
        let r = c.exec(ExecRequest::argv(["true"])).await?;
        ours.push(t.elapsed());
        if !r.status.success() {
            bail!("exec of `true` returned {:?}", r.status);
        }
        if i % 2 == 0 {
            let t = Instant::now();
            e.exec(ExecRequest::argv(["true"])).await?;
            engine.push(t.elapsed());
            theirs.push(cli(&["exec", e.name(), "true"])?);
        }
    }
    c.remove().await?;
    e.remove().await?;

    // Hardened create + start + remove.
    let rounds = (n / 4).max(5);
    let (mut start_rm, mut docker_run) = (Vec::new(), Vec::new());
    let mem = policy.memory_bytes.to_string();
    let pids = policy.pids_limit.to_string();
    let tmpfs = format!("/tmp:rw,nosuid,nodev,noexec,size={}", policy.tmp_bytes);
    let nofile = format!("nofile={0}:{0}", policy.nofile);
    let fsize = format!("fsize={0}:{0}", policy.fsize_bytes);
    for _ in 0..rounds {
        let t = Instant::now();
        let c = Container::start(&d, &image, &policy, &run, "cycle").await?;
        c.remove().await?;
        start_rm.push(t.elapsed());
        docker_run.push(cli(&[
            "run",
            "--rm",
            "--network",
            "none",
            "--read-only",
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--user",
            "1000:1000",
            "--memory",
            &mem,
            "--memory-swap",
            &mem,
            "--pids-limit",
            &pids,
            "--tmpfs",
            &tmpfs,
            "--ulimit",
            &nofile,
            "--ulimit",
            &fsize,
            "--init",
            "-v",
            "/workspace",
            &image,
            "true",
        ])?);
    }

    let (o50, c50) = (pct(ours.clone(), 0.5), pct(theirs.clone(), 0.5));
    let (s50, r50) = (pct(start_rm.clone(), 0.5), pct(docker_run.clone(), 0.5));
    println!("image: {image}; {n} execs, {rounds} create/start/remove cycles");
    println!(
        "exec round trip (step loop, with post-step cleanup):  p50 {} p90 {}",
        ms(o50),
        ms(pct(ours, 0.9))
    );
    println!(
        "exec round trip (one Engine API exec per step):      p50 {} p90 {}",
        ms(pct(engine.clone(), 0.5)),
        ms(pct(engine, 0.9))
    );
    println!(
        "docker exec via CLI:                                 p50 {} p90 {}",
        ms(c50),
        ms(pct(theirs, 0.9))
    );
    println!(
        "  -> CLI / step loop = {:.2}x",
        c50.as_secs_f64() / o50.as_secs_f64().max(1e-9)
    );
    println!(
        "hardened create+start+remove (Container::start + remove): p50 {} p90 {}",
        ms(s50),
        ms(pct(start_rm, 0.9))
    );
    println!(
        "docker run --rm (same hardening flags, `true`):           p50 {} p90 {}",
        ms(r50),
        ms(pct(docker_run, 0.9))
    );
    println!(
        "  -> docker run / ours = {:.2}x",
        r50.as_secs_f64() / s50.as_secs_f64().max(1e-9)
    );
    Ok(())
}
