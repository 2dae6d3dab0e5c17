//! Shared helpers for the tests that read what a run wrote.

use serde_json::Value;

/// Every line of a JSON-lines file (a trajectory), parsed.
pub fn jsonl(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
