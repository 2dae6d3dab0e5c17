//! Starts one hardened container and runs a few commands through the Engine API.
//! `cargo run --example sandbox_smoke -- IMAGE`
use std::time::{Duration, Instant};

use patchloop::sandbox::{
    ExecRequest, Sandbox, container::Container, docker, policy::ContainerPolicy,
};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let image = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "patchloop-probe:ws".into());
    let d = docker::connect().await?;
    let policy = ContainerPolicy {
        read_only_paths: vec!["tests".into()],
        ..Default::default()
    };
    let t = Instant::now();
    let c = Container::start(&d, &image, &policy, "smoke", "episode").await?;
    println!("started {} in {:?}", c.id(), t.elapsed());
    for cmd in [
        "id; cat /proc/self/status | grep -E 'CapEff|NoNewPrivs|Seccomp'",
        "echo x > tests/new.py; echo rc=$?; echo y >> calc/__init__.py; echo rc=$?",
        "sleep 60 & echo started-bg",
        "setsid sleep 100 & echo setsid",
        "ls /proc | grep -E '^[0-9]+$' | wc -l",
        "sleep 100",
        "yes | head -c 100000000",
        "python3 -c 'b=bytearray(); [b.extend(bytes(10**8)) for _ in range(100)]'",
    ] {
        let t = Instant::now();
        let r = c
            .exec(
                ExecRequest::shell(cmd)
                    .timeout(Duration::from_secs(3))
                    .output_cap(400),
            )
            .await?;
        println!(
            "--- {cmd}\n{:?} in {:?}\n{}",
            r.status,
            t.elapsed(),
            r.output.render()
        );
    }
    let mut times = vec![];
    for _ in 0..20 {
        let t = Instant::now();
        c.exec(ExecRequest::argv(["true"])).await?;
        times.push(t.elapsed());
    }
    times.sort();
    println!("exec p50 {:?}", times[10]);
    println!("diff:\n{}", c.diff().await?);
    let t = Instant::now();
    c.remove().await?;
    println!("removed in {:?}", t.elapsed());
    Ok(())
}
