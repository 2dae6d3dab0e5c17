//! One MCP session: the lazily started container, the idle reaper, the rmcp handler.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::Mutex;

use super::toolset;
use crate::agent::tools::{self, ToolConfig};
use crate::sandbox::container::Container;
use crate::sandbox::image::BaseOptions;
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::prepare::{self, PrepareOptions};
use crate::sandbox::{Sandbox, docker};
use crate::verify::{PreparedImage, VerifyRequest};

/// Role label of the session container (the lifecycle tests look for it).
pub const ROLE: &str = "mcp";

#[derive(Debug, Clone, clap::Args)]
pub struct McpArgs {
    /// The checkout to work on (a copy goes into the sandbox) [default: a built-in demo
    /// repository with one planted bug in `median()`].
    #[arg(long)]
    pub repo: Option<PathBuf>,
    /// Test command (default: the repository config's test_command, else the prepared
    /// image's, `python -m pytest`).
    #[arg(long, value_parser = crate::testcmd::TestCommand::from_flag)]
    pub test_cmd: Option<crate::testcmd::TestCommand>,
    /// Another config file merged over the repository's .github/patchloop.yml.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Seconds without a tool call after which the sandbox container is removed (the next
    /// call starts a fresh copy).
    #[arg(long, default_value_t = 900)]
    pub idle_timeout: u64,
}

struct State {
    docker: Option<bollard::Docker>,
    image: Option<PreparedImage>,
    container: Option<Container>,
    /// Tests failing in the unmodified repository (verify_patch's default fail_to_pass).
    baseline_failing: Option<Vec<String>>,
    /// The previous container was removed while idle: say so on the next result.
    reset_note: Option<String>,
}

struct Session {
    repo: PathBuf,
    test_cmd: Option<crate::testcmd::TestCommand>,
    /// The verifier's policy from the repository's config (its test globs and the paths
    /// under `.github/` a patch may change), through the one plan builder.
    verify_policy: crate::verify::policy::PolicyConfig,
    idle: Duration,
    run_id: String,
    state: Mutex<State>,
    last_used: std::sync::Mutex<Instant>,
}

#[derive(Clone)]
struct Handler(Arc<Session>);

/// A failure shown to the client as an error result.
struct Shown(String);

impl Session {
    fn touch(&self) {
        if let Ok(mut t) = self.last_used.lock() {
            *t = Instant::now();
        }
    }

    fn idle_for(&self) -> Duration {
        self.last_used
            .lock()
            .map(|t| t.elapsed())
            .unwrap_or_default()
    }

    fn policy(&self, image: &PreparedImage) -> ContainerPolicy {
        ContainerPolicy {
            read_only_paths: image.tests_dirs.clone(),
            // A session may last a working day; the reaper removes it after that.
            lifetime_secs: 12 * 3600,
            ..ContainerPolicy::default()
        }
    }

    fn tool_config(&self, image: &PreparedImage) -> ToolConfig {
        ToolConfig {
            // The image's when it was prepared with this command: it has what the command
            // delegates to resolved from the checkout's files.
            test_cmd: match &self.test_cmd {
                Some(c) if c.written != image.test_cmd.written => c.clone(),
                _ => image.test_cmd.clone(),
            },
            obs_cap: 16 * 1024,
            ..ToolConfig::default()
        }
    }

    async fn docker(&self, st: &mut State) -> Result<bollard::Docker, Shown> {
        if let Some(d) = &st.docker {
            return Ok(d.clone());
        }
        let d = docker::connect().await.map_err(|e| {
            Shown(format!(
                "Docker is not reachable: {e}\nStart the Docker daemon (`sudo systemctl start docker`, \
                 or `scripts/ensure-docker` in the patchloop checkout; on macOS/Windows start Docker \
                 Desktop), then call the tool again."
            ))
        })?;
        st.docker = Some(d.clone());
        Ok(d)
    }

    /// The prepared image of the repository, built now when missing (progress to stderr and,
    /// when the client asked for it, as progress notifications).
    async fn image(
        &self,
        st: &mut State,
        d: &bollard::Docker,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<PreparedImage, Shown> {
        if let Some(i) = &st.image {
            return Ok(i.clone());
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let forward = ctx.meta.get_progress_token().map(|token| {
            let peer = ctx.peer.clone();
            tokio::spawn(async move {
                let mut n = 0.0;
                while let Some(line) = rx.recv().await {
                    n += 1.0;
                    let mut p = ProgressNotificationParam::new(token.clone(), n);
                    p.message = Some(line);
                    let _ = peer.notify_progress(p).await;
                }
            })
        });
        let opts = PrepareOptions {
            path: self.repo.clone(),
            test_cmd: self.test_cmd.clone(),
            base: BaseOptions {
                progress: Some(Arc::new(move |line: &str| {
                    eprintln!("{line}");
                    let _ = tx.send(line.to_string());
                })),
                ..BaseOptions::default()
            },
            ..PrepareOptions::default()
        };
        let res = prepare::prepare(d, &opts).await;
        drop(opts);
        if let Some(f) = forward {
            let _ = f.await;
        }
        let img = res.map_err(|e| {
            Shown(format!(
                "Preparing the sandbox image of {} failed: {:#}\nFix the repository's build (or pass \
                 --test-cmd), or build it yourself with `patchloop prepare --path {}` to see the \
                 whole log.",
                self.repo.display(),
                anyhow::Error::new(e),
                self.repo.display()
            ))
        })?;
        let image = PreparedImage::from(img);
        st.image = Some(image.clone());
        Ok(image)
    }

    /// Start the session container when there is none.
    async fn ensure_container(
        &self,
        st: &mut State,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<(), Shown> {
        if st.container.is_some() {
            return Ok(());
        }
        let d = self.docker(st).await?;
        let image = self.image(st, &d, ctx).await?;
        let c = Container::start(&d, &image.tag, &self.policy(&image), &self.run_id, ROLE)
            .await
            .map_err(|e| {
                Shown(format!(
                    "Starting the sandbox container from {} failed: {e}",
                    image.tag
                ))
            })?;
        tracing::info!(container = c.name(), "session container started");
        st.container = Some(c);
        Ok(())
    }

    async fn remove_container(&self, st: &mut State) {
        if let Some(c) = st.container.take() {
            let name = c.name().to_string();
            match c.remove().await {
                Ok(()) => tracing::info!(container = name, "session container removed"),
                Err(e) => tracing::warn!(
                    "removing the session container {name} failed (the reaper will retry): {e}"
                ),
            }
        }
    }

    async fn call(
        &self,
        name: &str,
        args: &Value,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<String, Shown> {
        if !toolset::tool_names().contains(&name) {
            return Err(Shown(toolset::unknown_tool(name)));
        }
        let verify_args = if name == toolset::VERIFY_PATCH {
            Some(toolset::parse_verify_args(args).map_err(Shown)?)
        } else {
            None
        };
        let mut st = self.state.lock().await;
        self.ensure_container(&mut st, ctx).await?;
        let Some(image) = st.image.clone() else {
            return Err(Shown("internal error: no sandbox image".into()));
        };
        let cfg = self.tool_config(&image);
        let result = match verify_args {
            Some(va) => self.verify_patch(&mut st, &image, &cfg, va).await,
            None => {
                let Some(c) = st.container.as_ref() else {
                    return Err(Shown("internal error: no sandbox container".into()));
                };
                match tools::execute(c, &cfg, name, args).await {
                    Ok(o) if o.malformed => Err(Shown(o.text)),
                    Ok(o) => Ok(o.text),
                    Err(e) => Err(Shown(format!(
                        "The sandbox failed: {e}\nThe next call starts a fresh copy of the repository \
                         (earlier edits are lost; `diff` them first if you can)."
                    ))),
                }
            }
        };
        if let Err(Shown(msg)) = &result
            && msg.starts_with("The sandbox failed")
        {
            self.remove_container(&mut st).await;
        }
        let note = st.reset_note.take();
        drop(st);
        self.touch();
        match (note, result) {
            (Some(n), Ok(t)) => Ok(format!("{n}\n\n{t}")),
            (Some(n), Err(Shown(t))) => Err(Shown(format!("{n}\n\n{t}"))),
            (None, r) => r,
        }
    }

    async fn verify_patch(
        &self,
        st: &mut State,
        image: &PreparedImage,
        cfg: &ToolConfig,
        va: toolset::VerifyArgs,
    ) -> Result<String, Shown> {
        let Some(c) = st.container.as_ref() else {
            return Err(Shown("internal error: no sandbox container".into()));
        };
        let patch = c
            .diff()
            .await
            .map_err(|e| Shown(format!("Reading the current diff failed: {e}")))?;
        if patch.trim().is_empty() {
            return Err(Shown(
                "Nothing to verify: the repository copy has no changes yet. Edit the code with \
                 str_replace first."
                    .into(),
            ));
        }
        let d = self.docker(st).await?;
        let fail_to_pass = match va.fail_to_pass {
            Some(v) => v,
            None => self.baseline_failing(st, &d, image, cfg).await?,
        };
        if fail_to_pass.is_empty() {
            return Err(Shown(
                "No test fails in the unmodified repository, so there is nothing for the patch to \
                 fix; pass fail_to_pass with the ids of tests you added or expect to change."
                    .into(),
            ));
        }
        let mut req = VerifyRequest::new(image.clone(), patch, fail_to_pass);
        req.reruns = va.reruns;
        req.policy = self.verify_policy.clone();
        req.run_id = format!("{}-verify", self.run_id);
        let receipt = crate::pipeline::verify(&d, &req, Some(&self.repo)).await;
        Ok(format!(
            "verdict: {}: {}\n\n{}",
            receipt.decision.verdict.as_str(),
            receipt.decision.reason,
            crate::verify::receipt::render_markdown(&receipt)
        ))
    }

    /// The failing tests of the unmodified repository, from one run in a fresh container.
    async fn baseline_failing(
        &self,
        st: &mut State,
        d: &bollard::Docker,
        image: &PreparedImage,
        cfg: &ToolConfig,
    ) -> Result<Vec<String>, Shown> {
        if let Some(v) = &st.baseline_failing {
            return Ok(v.clone());
        }
        let failing =
            crate::pipeline::reproduce_fresh(d, image, &self.policy(image), cfg, &self.run_id)
                .await
                .map_err(|e| Shown(format!("Running the unmodified tests failed: {e:#}")))?;
        st.baseline_failing = Some(failing.clone());
        Ok(failing)
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("patchloop", env!("CARGO_PKG_VERSION")))
            .with_instructions(include_str!("instructions.md"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(toolset::tool_list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.map(Value::Object).unwrap_or(json!({}));
        let result = match self.0.call(&request.name, &args, &context).await {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(Shown(text)) => CallToolResult::error(vec![ContentBlock::text(text)]),
        };
        Ok(result.into())
    }
}

/// Removes the container once the session has been idle for `idle`.
async fn idle_reaper(session: Arc<Session>) {
    loop {
        let idle = session.idle_for();
        if idle < session.idle {
            tokio::time::sleep(session.idle - idle + Duration::from_millis(50)).await;
            continue;
        }
        let mut st = session.state.lock().await;
        // A call may have finished while we waited for the lock.
        if session.idle_for() >= session.idle && st.container.is_some() {
            session.remove_container(&mut st).await;
            st.reset_note = Some(format!(
                "Note: the previous sandbox was removed after {} s without tool calls; this is a \
                 fresh copy of the repository and earlier edits are gone.",
                session.idle.as_secs()
            ));
        }
        drop(st);
        tokio::time::sleep(session.idle.max(Duration::from_secs(1))).await;
    }
}

/// `patchloop mcp`: serve one session on stdin/stdout until the client disconnects.
pub async fn serve(args: McpArgs) -> anyhow::Result<()> {
    // The demo repository lives as long as the session; a stable directory name keeps the
    // prepared image's tag stable, so later sessions reuse it.
    let mut _demo_dir = None;
    let repo = match &args.repo {
        Some(r) => {
            if !r.is_dir() {
                anyhow::bail!(
                    "--repo {} is not a directory: pass the checkout to work on",
                    r.display()
                );
            }
            std::fs::canonicalize(r).with_context(|| format!("cannot resolve {}", r.display()))?
        }
        None => {
            let dir = tempfile::Builder::new()
                .prefix("patchloop-mcp-")
                .tempdir()
                .context("cannot create a temporary directory for the demo repository")?;
            let repo = dir.path().join("patchloop-demo");
            crate::agent::demo::write_repo(&repo).with_context(|| {
                format!("cannot write the demo repository to {}", repo.display())
            })?;
            _demo_dir = Some(dir);
            repo
        }
    };
    // The repository's own configuration, as the action and `fix` read it: its test command
    // (unless --test-cmd) and the CI paths a patch may touch.
    let cfg = crate::config::load_local(Some(&repo), args.config.as_deref(), None)?;
    let plan = crate::pipeline::plan::build(&cfg, None, false, &Default::default())
        .context("the repository's configuration")?;
    let session = Arc::new(Session {
        repo,
        test_cmd: args.test_cmd.clone().or(plan.test_cmd.clone()),
        verify_policy: plan.verify_policy,
        idle: Duration::from_secs(args.idle_timeout.max(1)),
        run_id: format!(
            "mcp-{}-{:04x}",
            crate::clock::now_unix(),
            rand::random::<u16>()
        ),
        state: Mutex::new(State {
            docker: None,
            image: None,
            container: None,
            baseline_failing: None,
            reset_note: None,
        }),
        last_used: std::sync::Mutex::new(Instant::now()),
    });
    let reaper = tokio::spawn(idle_reaper(session.clone()));
    let served = Handler(session.clone())
        .serve(rmcp::transport::stdio())
        .await
        .context("starting the MCP session on stdin/stdout");
    let outcome = match served {
        Ok(running) => {
            tokio::select! {
                r = running.waiting() => r.map(|_| ()).context("the MCP session task failed"),
                _ = crate::pipeline::interrupted() => Ok(()),
            }
        }
        Err(e) => Err(e),
    };
    reaper.abort();
    let mut st = session.state.lock().await;
    session.remove_container(&mut st).await;
    outcome
}
