//! `patchloop fix` / `demo` as a user runs them: exit codes and what is printed.

use std::process::Command;

use patchloop::pipeline::testing::DemoImage;

fn patchloop() -> Command {
    Command::new(env!("CARGO_BIN_EXE_patchloop"))
}

#[test]
fn unusable_model_specs_are_exit_2_with_their_key_and_the_accepted_forms() {
    // Refused by the plan builder, before any image is prepared.
    let out = patchloop()
        .args(["fix", "--repo", ".", "--model", "ollama:"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`model` (given by the caller)")
            && err.contains("accepted forms")
            && err.contains("ollama:MODEL"),
        "{err}"
    );
    let out = patchloop()
        .args(["fix", "--repo", ".", "--model", "qwen2.5-coder:1.5b"])
        .args([
            "--escalate",
            "qwen2.5-coder:14b",
            "--escalate",
            "anthropic:",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`repair.escalate[1]` (flag `command line`)"),
        "the bare name is accepted, the empty spec named: {err}"
    );
}

#[tokio::test]
async fn fix_with_a_scripted_model_exits_0_and_an_unreachable_ollama_exits_2() {
    let image = DemoImage::prepare("agent-test-cli").await.unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/scripted/demo-fix.yaml"
    );
    let out = patchloop()
        .args([
            "fix",
            "--repo",
            ".",
            "--image",
            &image.0,
            "--model",
            &format!("scripted:{script}"),
            // A bare name, as the action's `escalate` input takes it (never reached here:
            // the scripted model fixes the bug on the first tier).
            "--escalate",
            "qwen2.5-coder:14b",
        ])
        .arg("--out")
        .arg(out_dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("+    return (ordered[mid - 1] + ordered[mid]) / 2"),
        "{stdout}"
    );
    assert!(
        stdout.lines().last().unwrap().starts_with("fixed: "),
        "{stdout}"
    );
    assert!(
        out_dir.path().join("patch.diff").exists()
            && out_dir.path().join("trajectory.jsonl").exists()
    );

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let out = patchloop()
        .args([
            "fix",
            "--repo",
            ".",
            "--image",
            &image.0,
            "--model",
            "ollama:qwen2.5-coder:1.5b",
        ])
        .args(["--ollama-url", &url])
        .arg("--out")
        .arg(out_dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&url)
            && err.contains("ollama serve")
            && err.contains("ollama pull qwen2.5-coder:1.5b"),
        "{err}"
    );
}

#[test]
fn demo_prepares_the_embedded_repository_and_fixes_it() {
    let out_dir = tempfile::tempdir().unwrap();
    let run = || {
        patchloop()
            .arg("demo")
            .arg("--out")
            .arg(out_dir.path())
            .output()
            .unwrap()
    };
    let out = run();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("+    return (ordered[mid - 1] + ordered[mid]) / 2"),
        "{stdout}"
    );
    let last = stdout.lines().last().unwrap();
    assert!(
        last.starts_with("fixed: ") && last.contains("scripted"),
        "{last}"
    );
    // A second run reuses the same prepared image (stable tag), so nothing piles up.
    let out = run();
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("building patchloop-sandbox:"),
        "the second run rebuilt: {err}"
    );
    // The demo image stays: its tag is stable (so it never piles up) and other tests in this
    // binary (the MCP server's) may be running containers of it right now.
}
