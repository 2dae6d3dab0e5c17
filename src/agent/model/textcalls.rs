//! Recover tool calls that small models write as text instead of structured calls: Qwen-style
//! `<tool_call>{...}</tool_call>` tags, fenced ```json blocks, or the whole reply being a bare
//! JSON object. Broken JSON becomes a call with `invalid_arguments`, answered as an observation.

use serde_json::Value;

use super::ToolCall;

/// Every tool call found in `content`, in order. Returns nothing for ordinary prose.
pub fn parse(content: &str) -> Vec<ToolCall> {
    let tagged = blocks(content, "<tool_call>", "</tool_call>");
    if !tagged.is_empty() {
        return tagged.iter().filter_map(|b| to_call(b, true)).collect();
    }
    let mut fenced = Vec::new();
    for block in fenced_blocks(content) {
        if let Some(call) = to_call(&block, false) {
            fenced.push(call);
        }
    }
    if !fenced.is_empty() {
        return fenced;
    }
    let trimmed = content.trim();
    if trimmed.starts_with('{') && trimmed.ends_with('}') {
        return to_call(trimmed, false).into_iter().collect();
    }
    Vec::new()
}

/// Text between `open` and `close` markers; an unclosed last block runs to the end.
fn blocks(content: &str, open: &str, close: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = content;
    while let Some(i) = rest.find(open) {
        let after = &rest[i + open.len()..];
        match after.find(close) {
            Some(j) => {
                out.push(after[..j].trim().to_string());
                rest = &after[j + close.len()..];
            }
            None => {
                out.push(after.trim().to_string());
                break;
            }
        }
    }
    out
}

/// Bodies of ``` fences (any info string: json, tool_call, none).
fn fenced_blocks(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = content;
    while let Some(i) = rest.find("```") {
        let after = &rest[i + 3..];
        // Skip the info string (json, tool_call, nothing) up to the end of the line.
        let body_start = after.find('\n').map(|n| n + 1).unwrap_or(after.len());
        let body = &after[body_start..];
        match body.find("```") {
            Some(j) => {
                out.push(body[..j].trim().to_string());
                rest = &body[j + 3..];
            }
            None => break,
        }
    }
    out
}

/// A JSON text naming a tool → a call. `lenient` (inside explicit tool-call tags) keeps even
/// unparseable text as a call with an error, since the model clearly meant to call something.
fn to_call(text: &str, lenient: bool) -> Option<ToolCall> {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let looks_like_call = text.contains("\"name\"");
            if !(lenient || looks_like_call) {
                return None;
            }
            return Some(ToolCall {
                id: None,
                name: extract_name(text).unwrap_or_default(),
                arguments: Value::Null,
                invalid_arguments: Some(format!("{e} in: {}", clip(text))),
                from_text: true,
            });
        }
    };
    let obj = value.as_object()?;
    // {"name", "arguments"} or {"function": {"name", "arguments"}} (OpenAI shape as text).
    let obj = match obj.get("function").and_then(Value::as_object) {
        Some(f) if f.contains_key("name") => f,
        _ => obj,
    };
    let name = obj.get("name")?.as_str()?.to_string();
    let args = obj
        .get("arguments")
        .or_else(|| obj.get("parameters"))
        .cloned()
        .unwrap_or_else(|| Value::Object(Default::default()));
    let (arguments, invalid) = normalize_arguments(args);
    Some(ToolCall {
        id: None,
        name,
        arguments,
        invalid_arguments: invalid,
        from_text: true,
    })
}

/// Arguments may arrive as an object or as a JSON string holding one (OpenAI's wire form).
pub fn normalize_arguments(args: Value) -> (Value, Option<String>) {
    match args {
        Value::String(s) if s.trim().is_empty() => (Value::Object(Default::default()), None),
        Value::String(s) => match serde_json::from_str::<Value>(&s) {
            Ok(v @ Value::Object(_)) => (v, None),
            Ok(other) => (
                Value::Null,
                Some(format!(
                    "arguments must be a JSON object, got: {}",
                    clip(&other.to_string())
                )),
            ),
            Err(e) => (Value::Null, Some(format!("{e} in: {}", clip(&s)))),
        },
        Value::Null => (Value::Object(Default::default()), None),
        v @ Value::Object(_) => (v, None),
        other => (
            Value::Null,
            Some(format!(
                "arguments must be a JSON object, got: {}",
                clip(&other.to_string())
            )),
        ),
    }
}

fn extract_name(text: &str) -> Option<String> {
    let re = regex::Regex::new(r#""name"\s*:\s*"([A-Za-z_][A-Za-z0-9_]*)""#).ok()?;
    re.captures(text).map(|c| c[1].to_string())
}

fn clip(s: &str) -> String {
    if s.len() <= 200 {
        return s.to_string();
    }
    let mut end = 200;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// The tool calls of an OpenAI- or Ollama-shaped assistant message (`tool_calls[].function`
/// with `name` and `arguments`), falling back to calls written as text in `content`.
pub fn calls_from_message(msg: &Value, content: &str) -> Vec<ToolCall> {
    let structured: Vec<ToolCall> = msg
        .get("tool_calls")
        .and_then(Value::as_array)
        .map(|arr| {
            arr.iter()
                .map(|c| {
                    let f = c.get("function").cloned().unwrap_or(Value::Null);
                    let (arguments, invalid) =
                        normalize_arguments(f.get("arguments").cloned().unwrap_or(Value::Null));
                    ToolCall {
                        id: c.get("id").and_then(Value::as_str).map(str::to_string),
                        name: f
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        arguments,
                        invalid_arguments: invalid,
                        from_text: false,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    if structured.is_empty() {
        parse(content)
    } else {
        structured
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn qwen_tags() {
        let c = "I'll look.\n<tool_call>\n{\"name\": \"view_file\", \"arguments\": {\"path\": \"a.py\"}}\n</tool_call>";
        let calls = parse(c);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "view_file");
        assert_eq!(calls[0].arguments, json!({"path": "a.py"}));
        assert!(calls[0].from_text && calls[0].invalid_arguments.is_none());
    }

    #[test]
    fn fenced_json_as_small_models_write_it() {
        let c = "```json\n{\"name\": \"run_tests\", \"arguments\": {}}\n```";
        let calls = parse(c);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "run_tests");
        let c = "Sure:\n```\n{\"function\": {\"name\": \"bash\", \"arguments\": \"{\\\"command\\\": \\\"ls\\\"}\"}}\n```\nthen more";
        let calls = parse(c);
        assert_eq!(calls[0].name, "bash");
        assert_eq!(calls[0].arguments, json!({"command": "ls"}));
    }

    #[test]
    fn bare_json_and_parameters_key() {
        let calls = parse("  {\"name\": \"search\", \"parameters\": {\"pattern\": \"def\"}} ");
        assert_eq!(calls[0].name, "search");
        assert_eq!(calls[0].arguments, json!({"pattern": "def"}));
    }

    #[test]
    fn broken_json_is_a_call_with_an_error_not_a_crash() {
        let calls = parse(
            "<tool_call>{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"</tool_call>",
        );
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, "bash");
        assert!(calls[0].invalid_arguments.is_some());
        let calls = parse("```json\n{\"name\": \"diff\", \"arguments\": {,}}\n```");
        assert_eq!(calls[0].name, "diff");
        assert!(calls[0].invalid_arguments.is_some());
    }

    #[test]
    fn prose_and_code_are_not_calls() {
        assert!(parse("The bug is in median().").is_empty());
        assert!(parse("```python\ndef f():\n    return 1\n```").is_empty());
        assert!(parse("```json\n{\"a\": 1}\n```").is_empty());
    }

    #[test]
    fn string_arguments_that_are_not_objects() {
        let (v, e) = normalize_arguments(json!("[1,2]"));
        assert!(v.is_null() && e.is_some());
        let (v, e) = normalize_arguments(json!(""));
        assert_eq!(v, json!({}));
        assert!(e.is_none());
    }
}
