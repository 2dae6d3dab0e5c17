//! `patchloop mcp` driven by a real MCP client nobody here wrote: the official Python SDK
//! (`mcp` from PyPI, installed into a venv under the target directory on first use). The
//! client script is `tests/mcp/client.py`; it prints one JSON line per observation.
//!
//! Needs Docker (fails loudly without it) and PyPI access the first time.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::Value;

/// The MCP tests share the demo image and count containers: one at a time.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const MCP_SDK: &str = "mcp==2.3.0";

/// The tests run in parallel threads: one of them creates the client venv, the others wait.
static VENV: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn python() -> PathBuf {
    let _one_creator = VENV.lock().unwrap_or_else(|e| e.into_inner());
    let venv = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("mcp-client-venv");
    let py = venv.join("bin/python");
    let ok = |py: &PathBuf| {
        Command::new(py)
            .args(["-c", "import mcp.client.stdio"])
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    if py.exists() && ok(&py) {
        return py;
    }
    let base = ["python3.11", "python3"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok())
        .expect("python3 (3.10+) is needed for the MCP client");
    let st = Command::new(base)
        .args(["-m", "venv", "--clear"])
        .arg(&venv)
        .status()
        .unwrap();
    assert!(st.success(), "creating the venv {}", venv.display());
    let st = Command::new(venv.join("bin/pip"))
        .args(["install", "-q", MCP_SDK])
        .status()
        .unwrap();
    assert!(st.success(), "pip install {MCP_SDK} (needs PyPI)");
    assert!(ok(&py));
    py
}

/// The binary under test; PATCHLOOP_MCP_TEST_BIN overrides it (a target dir shared by several
/// worktrees can hold another branch's build).
fn server_bin() -> String {
    std::env::var("PATCHLOOP_MCP_TEST_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_patchloop").to_string())
}

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    out: BufReader<ChildStdout>,
}

impl Client {
    fn spawn(mode: &str, server_args: &[&str], env: &[(&str, &str)]) -> Client {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/client.py");
        let mut cmd = Command::new(python());
        cmd.arg(script)
            .arg(mode)
            .arg(server_bin())
            .arg("mcp")
            .args(server_args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .env("RUST_LOG", "patchloop=info");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take();
        let out = BufReader::new(child.stdout.take().unwrap());
        Client { child, stdin, out }
    }

    /// The next JSON line; panics when the client ended early.
    fn next(&mut self) -> Value {
        let mut line = String::new();
        let n = self.out.read_line(&mut line).unwrap();
        assert!(n > 0, "the MCP client ended early (see its stderr above)");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    fn until(&mut self, kind: &str) -> Value {
        loop {
            let v = self.next();
            if v["kind"] == kind {
                return v;
            }
        }
    }

    fn poke(&mut self) {
        let s = self.stdin.as_mut().unwrap();
        s.write_all(b"go\n").unwrap();
        s.flush().unwrap();
    }

    fn finish(mut self) {
        self.stdin.take();
        assert_eq!(self.until("closed")["kind"], "closed");
        let st = self.child.wait().unwrap();
        assert!(st.success(), "client exit status {st}");
    }
}

async fn container_exists(hostname: &str) -> bool {
    let d = patchloop::sandbox::docker::connect()
        .await
        .expect("this test needs a Docker daemon");
    d.inspect_container(
        hostname,
        None::<bollard::query_parameters::InspectContainerOptions>,
    )
    .await
    .is_ok()
}

fn text(v: &Value) -> &str {
    v["text"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn python_sdk_fixes_and_verifies_the_demo_bug() {
    let _g = SERIAL.lock().await;
    let mut c = Client::spawn("demo", &[], &[]);
    assert_eq!(c.until("initialized")["server"], "patchloop");

    let tools = c.until("tools");
    let names: Vec<&str> = tools["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "bash",
            "view_file",
            "search",
            "str_replace",
            "run_tests",
            "diff",
            "verify_patch"
        ]
    );
    assert_eq!(
        tools["schemas"]["str_replace"]["required"],
        serde_json::json!(["path", "old_str", "new_str"])
    );

    let view = c.until("call");
    assert_eq!(view["is_error"], false, "{view}");
    assert!(text(&view).contains("return ordered[mid]"), "{view}");
    // Prepare reports progress (notifications) even when it reuses the cached image.
    let progress = c.until("progress");
    assert!(progress["count"].as_u64().unwrap() > 0, "{progress}");

    let before = c.until("call");
    assert!(
        text(&before).contains("1 failed")
            && text(&before).contains("test_even_length_averages_the_middle_pair"),
        "{before}"
    );
    let edit = c.until("call");
    assert!(text(&edit).starts_with("Edited stats/median.py"), "{edit}");
    let after = c.until("call");
    assert!(text(&after).contains("4 passed, 0 failed"), "{after}");
    let diff = c.until("call");
    assert!(
        text(&diff).contains("+        return (ordered[mid - 1] + ordered[mid]) / 2"),
        "{diff}"
    );
    let verify = c.until("call");
    assert_eq!(verify["tool"], "verify_patch");
    assert_eq!(verify["is_error"], false, "{verify}");
    assert!(text(&verify).starts_with("verdict: verified"), "{verify}");
    assert!(text(&verify).contains("patchloop verification"), "{verify}");

    let tamper = c.until("call");
    assert!(
        text(&tamper).contains("Read-only file system"),
        "editing a test must be refused: {tamper}"
    );
    let unknown = c.until("call");
    assert_eq!(unknown["is_error"], true);
    assert!(
        text(&unknown).contains("Unknown tool `no_such_tool`"),
        "{unknown}"
    );
    let bad = c.until("call");
    assert_eq!(bad["is_error"], true);
    assert!(text(&bad).contains("missing field `path`"), "{bad}");
    c.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_get_their_own_container_and_leave_none_behind() {
    let _g = SERIAL.lock().await;
    // Two concurrent sessions: two containers.
    let mut a = Client::spawn("hold", &[], &[]);
    let mut b = Client::spawn("hold", &[], &[]);
    let ha = a.until("hostname")["value"].as_str().unwrap().to_string();
    let hb = b.until("hostname")["value"].as_str().unwrap().to_string();
    assert!(!ha.is_empty() && !hb.is_empty());
    assert_ne!(ha, hb, "each session must have its own container");
    assert!(container_exists(&ha).await && container_exists(&hb).await);
    // Disconnect removes them.
    a.poke();
    b.poke();
    a.finish();
    b.finish();
    assert!(!container_exists(&ha).await, "container {ha} left behind");
    assert!(!container_exists(&hb).await, "container {hb} left behind");

    // Idle timeout removes the container while the session stays open; the next call gets a
    // fresh one and is told so.
    let mut c = Client::spawn("idle", &["--idle-timeout", "2"], &[("IDLE_WAIT", "5")]);
    let h1 = c.until("hostname")["value"].as_str().unwrap().to_string();
    assert!(container_exists(&h1).await);
    c.until("after_idle");
    assert!(
        !container_exists(&h1).await,
        "idle container {h1} not removed"
    );
    c.poke();
    let again = c.until("call");
    assert!(
        text(&again).contains("previous sandbox was removed"),
        "{again}"
    );
    let h2 = c.until("hostname")["value"].as_str().unwrap().to_string();
    assert_ne!(h1, h2);
    c.finish();
    assert!(!container_exists(&h2).await, "container {h2} left behind");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_docker_a_tool_call_is_an_error_result_saying_how_to_start_it() {
    let mut c = Client::spawn(
        "hold",
        &[],
        &[("DOCKER_HOST", "unix:///nonexistent/patchloop-test.sock")],
    );
    let call = c.until("call");
    assert_eq!(call["is_error"], true, "{call}");
    assert!(text(&call).contains("Docker is not reachable"), "{call}");
    assert!(text(&call).contains("Start the Docker daemon"), "{call}");
    // The session survives the failure.
    c.until("hostname");
    c.poke();
    c.finish();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_repository_that_cannot_be_prepared_is_an_error_result_with_the_reason() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::write(repo.path().join("app.py"), "x = 1\n").unwrap();
    let path = repo.path().display().to_string();
    let mut c = Client::spawn("hold", &["--repo", &path], &[]);
    let call = c.until("call");
    assert_eq!(call["is_error"], true, "{call}");
    assert!(
        text(&call).contains("Preparing the sandbox image of"),
        "{call}"
    );
    assert!(text(&call).contains("no test directory found"), "{call}");
    c.until("hostname");
    c.poke();
    c.finish();
    // The user's checkout is untouched.
    let names: Vec<_> = std::fs::read_dir(repo.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("app.py")]);
}
