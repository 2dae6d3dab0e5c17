//! `patchloop fix` / `demo` as a user runs them: exit codes and what is printed.

use std::process::Command;

use patchloop::agent::testing::DemoImage;

fn patchloop() -> Command {
    Command::new(env!("CARGO_BIN_EXE_patchloop"))
}

#[test]
fn unknown_model_spec_is_exit_2_with_the_accepted_forms() {
    let out = patchloop()
        .args(["fix", "--repo", ".", "--model", "gpt-4"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("accepted forms") && err.contains("ollama:MODEL"),
        "{err}"
    );
}

#[test]
fn fix_with_a_scripted_model_exits_0_and_an_unreachable_ollama_exits_2() {
    let image = DemoImage::build(&format!("patchloop-agent-cli:{}", std::process::id())).unwrap();
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
