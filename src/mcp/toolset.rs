//! The tools offered over MCP: the agent's tools (minus `submit`, which only ends an agent
//! episode) with MCP-oriented descriptions, plus `verify_patch`. Pure.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::agent::tools;

/// MCP's own tool, beside the agent's table entries that have an MCP text.
pub const VERIFY_PATCH: &str = "verify_patch";

/// Every tool the server offers, in order: the agent's (from [`tools::TOOLS`]) then
/// `verify_patch`.
pub fn tool_names() -> Vec<&'static str> {
    tools::TOOLS
        .iter()
        .filter(|t| t.mcp.is_some())
        .map(|t| t.name)
        .chain([VERIFY_PATCH])
        .collect()
}

/// What every sandboxed tool shares, appended to the agent's own description.
const SANDBOX_NOTE: &str = "Runs inside a network-less, locked-down container holding a copy of \
the repository at /workspace (the current directory); paths are relative to it. The user's own \
files are never modified: call `diff` for the patch to review and `git apply`.";

pub const VERIFY_DESCRIPTION: &str = "Verify the current changes (the `diff` output) with \
patchloop's verifier, the same one its CI bot uses: in a fresh container it checks the patch \
policy (no edits to tests, CI files or test configuration), runs the tests several times \
without and with the patch, and returns the verdict (verified, still_failing, regression, flaky, \
tampered, needs_review, policy, not_reproducible, error) and the receipt in Markdown. fail_to_pass defaults to \
the tests failing in the unmodified repository. Takes a while (3 runs before, 3 after).";

fn verify_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "fail_to_pass": {
                "type": "array", "items": {"type": "string"},
                "description": "Test ids (pytest node ids) that fail before the patch and must pass after it (default: every test failing in the unmodified repository)"
            },
            "reruns": {
                "type": "integer", "minimum": 1, "maximum": 5,
                "description": "Runs before and after the patch; every run must agree (default 3)"
            }
        },
        "additionalProperties": false
    })
}

/// The MCP tool list: names, descriptions and input schemas.
pub fn tool_list() -> Vec<rmcp::model::Tool> {
    let mut out = Vec::new();
    for def in &tools::TOOLS {
        let Some(extra) = def.mcp else { continue };
        let description = format!("{} {extra} {SANDBOX_NOTE}", def.description);
        out.push(rmcp::model::Tool::new(
            def.name,
            description,
            Arc::new(as_object((def.parameters)())),
        ));
    }
    out.push(rmcp::model::Tool::new(
        VERIFY_PATCH,
        VERIFY_DESCRIPTION,
        Arc::new(as_object(verify_schema())),
    ));
    out
}

fn as_object(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

/// `verify_patch` arguments, checked. `Err` is the message for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyArgs {
    pub fail_to_pass: Option<Vec<String>>,
    pub reruns: usize,
}

pub fn parse_verify_args(args: &Value) -> Result<VerifyArgs, String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Raw {
        #[serde(default)]
        fail_to_pass: Option<Vec<String>>,
        #[serde(default)]
        reruns: Option<i64>,
    }
    let raw: Raw = if args.is_null() {
        Raw {
            fail_to_pass: None,
            reruns: None,
        }
    } else {
        serde_json::from_value(args.clone()).map_err(|e| {
            format!(
                "Invalid arguments for `verify_patch`: {e}. Expected arguments matching: {}",
                verify_schema()
            )
        })?
    };
    let reruns = match raw.reruns {
        None => 3,
        Some(n @ 1..=5) => n as usize,
        Some(n) => return Err(format!("verify_patch: reruns must be 1..=5, got {n}")),
    };
    Ok(VerifyArgs {
        fail_to_pass: raw.fail_to_pass.filter(|v| !v.is_empty()),
        reruns,
    })
}

/// The message for a call to a tool that does not exist.
pub fn unknown_tool(name: &str) -> String {
    format!(
        "Unknown tool `{name}`. Available tools: {}.",
        tool_names().join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seven_tools_with_object_schemas_and_no_submit() {
        let list = tool_list();
        let names: Vec<_> = list.iter().map(|t| t.name.to_string()).collect();
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
        assert_eq!(names, tool_names());
        for t in &list {
            assert_eq!(
                t.input_schema.get("type"),
                Some(&json!("object")),
                "{}",
                t.name
            );
            let d = t.description.as_deref().unwrap_or_default();
            assert!(d.len() > 60, "{}: {d}", t.name);
        }
        let replace = &list[3];
        assert!(
            replace
                .description
                .as_deref()
                .unwrap_or_default()
                .contains("Read-only file system")
        );
        assert_eq!(
            replace.input_schema.get("required"),
            Some(&json!(["path", "old_str", "new_str"]))
        );
    }

    #[test]
    fn verify_args() {
        assert_eq!(
            parse_verify_args(&Value::Null).unwrap(),
            VerifyArgs {
                fail_to_pass: None,
                reruns: 3
            }
        );
        let a = parse_verify_args(&json!({"fail_to_pass": ["t::x"], "reruns": 1})).unwrap();
        assert_eq!(a.fail_to_pass, Some(vec!["t::x".to_string()]));
        assert_eq!(a.reruns, 1);
        assert!(
            parse_verify_args(&json!({"reruns": 9}))
                .unwrap_err()
                .contains("1..=5")
        );
        assert!(
            parse_verify_args(&json!({"bogus": 1}))
                .unwrap_err()
                .contains("Invalid arguments")
        );
        assert!(
            parse_verify_args(&json!({"fail_to_pass": []}))
                .unwrap()
                .fail_to_pass
                .is_none()
        );
        assert!(unknown_tool("rm").contains("verify_patch"));
    }
}
