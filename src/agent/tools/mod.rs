//! The agent's tools: a public contract (names and arguments) shared by the episode loop and the
//! MCP server. Every call runs through the [`Sandbox`] trait. Failures the model can fix (bad
//! path, no match, malformed arguments) come back as observation text; only sandbox failures
//! (dead daemon, vanished container) are errors.
//!
//! Use [`execute`] from any client: it needs a sandbox, a [`ToolConfig`] and the call.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::agent::context::{self, Focus};
use crate::agent::model::ToolSpec;
use crate::sandbox::output::truncate_text;
use crate::sandbox::{ExecRequest, ExecResult, ExecStatus, Sandbox, SandboxError};
use crate::testcmd::TestCommand;

mod edit;
mod testrun;

use edit::str_replace;
pub use edit::{Replacement, most_similar_region, plan_replace, read_only_answer, write_file};
pub use testrun::{
    TestRun, TestSummary, run_tests, run_tests_script, shell_quote, summarize_junit,
    summarize_junit_result,
};

#[derive(Debug, Clone)]
pub struct ToolConfig {
    /// The repository's test command (the image's `patchloop.test_command`), e.g.
    /// `PYTHONPATH=src python -m pytest`.
    pub test_cmd: TestCommand,
    /// Largest observation returned to the model, bytes (head + tail kept, marker between).
    pub obs_cap: usize,
    pub exec_timeout: Duration,
    pub test_timeout: Duration,
    pub max_search_matches: usize,
    /// Bytes of failing-code context in the first prompt (0: none).
    pub context_budget: usize,
    /// `view_file` without a range shows a window of a file longer than this many lines.
    pub long_file_lines: usize,
    /// Where the failing-code context points (code under test, lines per file, read-only
    /// dirs): `view_file` windows and refused edits answer with it. Empty outside an episode.
    pub focus: Focus,
}

/// Lines a `view_file` window shows.
pub const VIEW_WINDOW: usize = 100;

impl Default for ToolConfig {
    fn default() -> Self {
        ToolConfig {
            test_cmd: TestCommand::python_pytest(),
            obs_cap: 8 * 1024,
            exec_timeout: Duration::from_secs(60),
            test_timeout: Duration::from_secs(crate::config::TEST_TIMEOUT_SECONDS),
            max_search_matches: 50,
            context_budget: context::DEFAULT_BUDGET,
            long_file_lines: 200,
            focus: Focus::default(),
        }
    }
}

/// What a tool call produced for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub text: String,
    /// `submit` accepted: the episode ends.
    pub submitted: bool,
    /// The call itself was wrong (unknown tool, arguments not matching the schema): the loop
    /// counts it as a format error.
    pub malformed: bool,
}

impl Observation {
    fn text(s: impl Into<String>) -> Self {
        Observation {
            text: s.into(),
            submitted: false,
            malformed: false,
        }
    }

    fn malformed(s: impl Into<String>) -> Self {
        Observation {
            malformed: true,
            ..Observation::text(s)
        }
    }
}

/// Which handler runs a tool: the dispatch in [`execute`] matches on it exhaustively.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Bash,
    ViewFile,
    Search,
    StrReplace,
    RunTests,
    Diff,
    Submit,
}

/// One tool, declared once: its name, what the model (and MCP clients) are told, its argument
/// schema, the handler that runs it and whether MCP offers it.
pub struct ToolDef {
    pub tool: Tool,
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: fn() -> Value,
    /// Offered over MCP, with this text appended for MCP clients; `None`: the agent's only
    /// (`submit` ends an episode, which an MCP session does not have).
    pub mcp: Option<&'static str>,
}

/// Every tool, in the order they are offered. The loop, MCP's tool list and the unknown-tool
/// message all read this table.
pub const TOOLS: [ToolDef; 7] = [
    ToolDef {
        tool: Tool::Bash,
        name: "bash",
        description: "Run a shell command in the repository (no network). Returns its output and exit code.",
        parameters: || json!({"type": "object", "properties": {"command": {"type": "string", "description": "The bash command"}}, "required": ["command"]}),
        mcp: Some(
            "Output is capped (head and tail kept); each command is killed after 60 s. No network, \
             no root; /tmp is small and noexec. Use it to explore or run scripts, not to edit \
             (prefer str_replace).",
        ),
    },
    ToolDef {
        tool: Tool::ViewFile,
        name: "view_file",
        description: "Show a file with line numbers, optionally only lines start_line..end_line (1-based, inclusive). Without a range, a file over 200 lines shows a 100-line window (around the lines the failing test's traceback names, else the start) and says how to page.",
        parameters: || {
            json!({"type": "object", "properties": {
                "path": {"type": "string", "description": "Path relative to the repository root"},
                "start_line": {"type": "integer"}, "end_line": {"type": "integer"}}, "required": ["path"]})
        },
        mcp: Some(
            "Lines are prefixed with their number and a tab: do not copy the numbers into \
             str_replace's old_str.",
        ),
    },
    ToolDef {
        tool: Tool::Search,
        name: "search",
        description: "Search files for a regular expression (grep -E); returns file:line: text for each match.",
        parameters: || {
            json!({"type": "object", "properties": {
                "pattern": {"type": "string"}, "path": {"type": "string", "description": "File or directory (default: the whole repository)"}},
                "required": ["pattern"]})
        },
        mcp: Some("At most 50 matches are listed; narrow the pattern or path when capped."),
    },
    ToolDef {
        tool: Tool::StrReplace,
        name: "str_replace",
        description: "Replace old_str with new_str in a file. old_str must match exactly once, including whitespace.",
        parameters: || {
            json!({"type": "object", "properties": {
                "path": {"type": "string"}, "old_str": {"type": "string"}, "new_str": {"type": "string"}},
                "required": ["path", "old_str", "new_str"]})
        },
        mcp: Some(
            "On no match or several matches nothing is changed and the closest region is shown. \
             Test directories are mounted read-only: editing a test fails with `Read-only file system`.",
        ),
    },
    ToolDef {
        tool: Tool::RunTests,
        name: "run_tests",
        description: "Run the test suite (or only the given test ids) and summarise passed/failed tests.",
        parameters: || {
            json!({"type": "object", "properties": {
                "tests": {"type": "array", "items": {"type": "string"}, "description": "Optional test ids or files"}}})
        },
        mcp: Some(
            "Uses the repository's test command (pytest by default); ids look like \
             `tests/test_x.py::test_name`.",
        ),
    },
    ToolDef {
        tool: Tool::Diff,
        name: "diff",
        description: "Show your changes so far as a unified diff.",
        parameters: || json!({"type": "object", "properties": {}}),
        mcp: Some("The unified diff of the copy against the original checkout (git apply format)."),
    },
    ToolDef {
        tool: Tool::Submit,
        name: "submit",
        description: "Submit your changes as the fix. Call this once the tests pass.",
        parameters: || json!({"type": "object", "properties": {}}),
        mcp: None,
    },
];

/// The table entry of a tool name.
pub fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

/// Every tool name, in order.
pub fn names() -> Vec<&'static str> {
    TOOLS.iter().map(|t| t.name).collect()
}

impl ToolDef {
    pub fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.into(),
            description: self.description.into(),
            parameters: (self.parameters)(),
        }
    }
}

/// JSON schemas of every tool, as offered to the model.
pub fn specs() -> Vec<ToolSpec> {
    TOOLS.iter().map(ToolDef::spec).collect()
}

#[derive(Deserialize)]
struct BashArgs {
    command: String,
}
#[derive(Deserialize)]
struct ViewArgs {
    path: String,
    #[serde(default)]
    start_line: Option<i64>,
    #[serde(default)]
    end_line: Option<i64>,
}
#[derive(Deserialize)]
struct SearchArgs {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
}
#[derive(Deserialize)]
struct ReplaceArgs {
    path: String,
    old_str: String,
    new_str: String,
}
#[derive(Deserialize, Default)]
struct TestsArgs {
    #[serde(default)]
    tests: Option<TestsList>,
}
#[derive(Deserialize)]
#[serde(untagged)]
enum TestsList {
    One(String),
    Many(Vec<String>),
}

fn parse_args<T: for<'de> Deserialize<'de>>(tool: &str, args: &Value) -> Result<T, Observation> {
    serde_json::from_value(args.clone()).map_err(|e| {
        let schema = find(tool)
            .map(|t| (t.parameters)().to_string())
            .unwrap_or_default();
        Observation::malformed(format!(
            "Invalid arguments for `{tool}`: {e}. Expected arguments matching: {schema}"
        ))
    })
}

/// Run one tool call. `Ok` is always an observation for the model (including its mistakes);
/// `Err` means the sandbox itself failed.
pub async fn execute(
    sandbox: &dyn Sandbox,
    cfg: &ToolConfig,
    name: &str,
    args: &Value,
) -> Result<Observation, SandboxError> {
    let obs = match run(sandbox, cfg, name, args).await? {
        Ok(o) | Err(o) => o,
    };
    Ok(Observation {
        text: truncate_text(&obs.text, cfg.obs_cap),
        ..obs
    })
}

type ToolResult = Result<Observation, Observation>;

async fn run(
    sandbox: &dyn Sandbox,
    cfg: &ToolConfig,
    name: &str,
    args: &Value,
) -> Result<ToolResult, SandboxError> {
    let Some(def) = find(name) else {
        return Ok(Err(Observation::malformed(format!(
            "Unknown tool `{name}`. Available tools: {}.",
            names().join(", ")
        ))));
    };
    Ok(match def.tool {
        Tool::Bash => match parse_args::<BashArgs>(name, args) {
            Ok(a) => Ok(bash(sandbox, cfg, &a.command).await?),
            Err(o) => Err(o),
        },
        Tool::ViewFile => match parse_args::<ViewArgs>(name, args) {
            Ok(a) => view_file(sandbox, cfg, &a.path, a.start_line, a.end_line).await?,
            Err(o) => Err(o),
        },
        Tool::Search => match parse_args::<SearchArgs>(name, args) {
            Ok(a) => search(sandbox, cfg, &a.pattern, a.path.as_deref()).await?,
            Err(o) => Err(o),
        },
        Tool::StrReplace => match parse_args::<ReplaceArgs>(name, args) {
            Ok(a) => str_replace(sandbox, cfg, &a.path, &a.old_str, &a.new_str).await?,
            Err(o) => Err(o),
        },
        Tool::RunTests => {
            let a: TestsArgs = if args.is_null() {
                TestsArgs::default()
            } else {
                match parse_args(name, args) {
                    Ok(a) => a,
                    Err(o) => return Ok(Err(o)),
                }
            };
            let tests = match a.tests {
                None => Vec::new(),
                Some(TestsList::One(s)) => vec![s],
                Some(TestsList::Many(v)) => v,
            };
            Ok(Observation::text(
                run_tests(sandbox, cfg, &tests).await?.render(cfg.obs_cap),
            ))
        }
        Tool::Diff => {
            let d = sandbox.diff().await?;
            Ok(Observation::text(if d.trim().is_empty() {
                "No changes yet.".to_string()
            } else {
                d
            }))
        }
        Tool::Submit => {
            let d = sandbox.diff().await?;
            if d.trim().is_empty() {
                Err(Observation::text(
                    "Nothing to submit: the workspace has no changes. Edit the code with str_replace first.",
                ))
            } else {
                Ok(Observation {
                    submitted: true,
                    ..Observation::text(format!("Submitted. Your patch:\n{d}"))
                })
            }
        }
    })
}

fn status_line(r: &ExecResult, timeout: Duration) -> String {
    match r.status {
        ExecStatus::Exited(c) => format!("[exit code {c}]"),
        ExecStatus::TimedOut => format!(
            "[timed out after {}s: the command and everything it started were killed]",
            timeout.as_secs()
        ),
        ExecStatus::Oom => "[killed: out of memory]".to_string(),
        ExecStatus::QuotaExceeded => "[stopped: the workspace quota is full]".to_string(),
    }
}

async fn bash(
    sandbox: &dyn Sandbox,
    cfg: &ToolConfig,
    command: &str,
) -> Result<Observation, SandboxError> {
    let r = sandbox
        .exec(
            ExecRequest::shell(command)
                .timeout(cfg.exec_timeout)
                .output_cap(cfg.obs_cap),
        )
        .await?;
    Ok(Observation::text(format!(
        "{}\n{}",
        r.output.render(),
        status_line(&r, cfg.exec_timeout)
    )))
}

/// Read a whole file through the sandbox. `Err` is an observation (missing file, too large).
async fn read_file(
    sandbox: &dyn Sandbox,
    path: &str,
) -> Result<Result<String, Observation>, SandboxError> {
    const MAX: usize = 4 << 20;
    let r = sandbox
        .exec(ExecRequest::argv(["cat", "--", path]).output_cap(MAX))
        .await?;
    if !r.status.success() {
        return Ok(Err(Observation::text(format!(
            "Cannot read `{path}`: {}",
            r.output.render().trim()
        ))));
    }
    if r.output.is_truncated() {
        return Ok(Err(Observation::text(format!(
            "`{path}` is larger than {MAX} bytes; view parts with start_line/end_line or use search."
        ))));
    }
    Ok(Ok(
        String::from_utf8_lossy(&r.output.kept_bytes()).into_owned()
    ))
}

/// `lines[start..=end]` numbered from `start` (1-based). Pure.
pub fn number_lines(text: &str, start: usize, end: usize) -> String {
    let width = end.max(1).to_string().len();
    text.lines()
        .enumerate()
        .skip(start.saturating_sub(1))
        .take_while(|(i, _)| *i < end)
        .map(|(i, l)| format!("{:>width$}  {l}\n", i + 1))
        .collect()
}

async fn view_file(
    sandbox: &dyn Sandbox,
    cfg: &ToolConfig,
    path: &str,
    start: Option<i64>,
    end: Option<i64>,
) -> Result<ToolResult, SandboxError> {
    let text = match read_file(sandbox, path).await? {
        Ok(t) => t,
        Err(o) => return Ok(Err(o)),
    };
    Ok(render_view(cfg, path, &text, start, end)
        .map_err(Observation::text)
        .map(Observation::text))
}

/// The `view_file` text of `text`. Without a range, a file longer than `cfg.long_file_lines`
/// shows a [`VIEW_WINDOW`]-line window around the first line the focus names in it (else the
/// start), followed by the exact call for the next page. Pure.
pub fn render_view(
    cfg: &ToolConfig,
    path: &str,
    text: &str,
    start: Option<i64>,
    end: Option<i64>,
) -> Result<String, String> {
    let total = text.lines().count();
    if total == 0 {
        return Ok(format!("`{path}` is empty."));
    }
    if start.is_none() && end.is_none() && total > cfg.long_file_lines {
        let anchor = cfg.focus.line_in(path);
        // A little before the anchor (the def line above a frame), the rest after it.
        let s = anchor.map_or(1, |a| a.saturating_sub(VIEW_WINDOW / 5).max(1));
        let e = (s + VIEW_WINDOW - 1).min(total);
        let s = e.saturating_sub(VIEW_WINDOW - 1).max(1);
        let why = match anchor {
            Some(a) => format!("around line {a}, which the failing test's traceback names"),
            None => "its start".to_string(),
        };
        let mut out = format!(
            "{path} has {total} lines; showing lines {s}-{e} ({why}).\n{path} (lines {s}-{e} of {total}):\n"
        );
        out.push_str(&number_lines(text, s, e));
        let page = |a: usize, b: usize| {
            format!(
                r#"{{"name": "view_file", "arguments": {{"path": "{path}", "start_line": {a}, "end_line": {b}}}}}"#
            )
        };
        out.push_str(&format!("[showing lines {s}-{e} of {total}. To see other lines call view_file with start_line and end_line"));
        if e < total {
            out.push_str(&format!(
                ", e.g. the next lines: {}",
                page(e + 1, (e + VIEW_WINDOW).min(total))
            ));
        }
        if s > 1 {
            out.push_str(&format!(
                ", the lines before: {}",
                page(s.saturating_sub(VIEW_WINDOW).max(1), s - 1)
            ));
        }
        out.push_str("; or search for a name.]\n");
        return Ok(out);
    }
    let start = start.unwrap_or(1).max(1) as usize;
    let end = end.map(|e| e.max(0) as usize).unwrap_or(total).min(total);
    if start > end {
        // A short file asked for past its end (small models copy a line number from another
        // file): show it whole rather than an empty answer they repeat.
        if start > total && total <= cfg.long_file_lines {
            return Ok(format!(
                "Empty range {start}..{end}: `{path}` has only {total} lines; here it is whole.\n\
                 {path} (lines 1-{total} of {total}):\n{}",
                number_lines(text, 1, total)
            ));
        }
        return Err(format!(
            "Empty range {start}..{end}: `{path}` has {total} lines."
        ));
    }
    let mut out = format!("{path} (lines {start}-{end} of {total}):\n");
    out.push_str(&number_lines(text, start, end));
    Ok(out)
}

async fn search(
    sandbox: &dyn Sandbox,
    cfg: &ToolConfig,
    pattern: &str,
    path: Option<&str>,
) -> Result<ToolResult, SandboxError> {
    let target = path.filter(|p| !p.trim().is_empty()).unwrap_or(".");
    let r = sandbox
        .exec(
            ExecRequest::argv([
                "grep",
                "-rnIE",
                "--exclude-dir=.git",
                "-e",
                pattern,
                "--",
                target,
            ])
            .timeout(cfg.exec_timeout)
            .output_cap(256 * 1024),
        )
        .await?;
    match r.status {
        ExecStatus::Exited(0) => {}
        ExecStatus::Exited(1) => {
            return Ok(Ok(Observation::text(format!(
                "No matches for `{pattern}` in {target}."
            ))));
        }
        _ => {
            return Ok(Err(Observation::text(format!(
                "search failed: {} {}",
                r.output.render().trim(),
                status_line(&r, cfg.exec_timeout)
            ))));
        }
    }
    let text = r.output.render();
    let lines: Vec<&str> = text.lines().collect();
    let shown = lines.len().min(cfg.max_search_matches);
    let mut out: String = lines[..shown]
        .iter()
        .map(|l| format!("{}\n", l.strip_prefix("./").unwrap_or(l)))
        .collect();
    if lines.len() > shown || r.output.is_truncated() {
        out.push_str(&format!(
            "[... showing {shown} of {}{} matches; narrow the pattern or the path ...]\n",
            lines.len(),
            if r.output.is_truncated() { "+" } else { "" }
        ));
    }
    Ok(Ok(Observation::text(out)))
}

#[cfg(test)]
mod tests;
