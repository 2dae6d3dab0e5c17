//! The oracle (`--model oracle`) is the harness's own check: it must apply every gold patch of
//! every bench exactly. Its script is run here through the agent's real `str_replace` matching
//! ([`plan_replace`]: one occurrence or a refusal) on each task's buggy tree, and the files it
//! leaves must be the gold patch's. A hunk whose own lines occur twice in the file was refused
//! by the tool and a partial gold patch judged (three `test`-split tasks looked like bench
//! defects for it). No Docker: the trees come from the benches' snapshots.

use std::collections::BTreeMap;

use crate::verify_common::each_task_tree;

use patchloop::agent::tools::plan_replace;
use patchloop::eval::oracle;
use patchloop::verify::apply;

/// Tasks whose oracle script does not reproduce the gold patch, with why; and how many ran.
fn mismatches(tasks: &str, sources: &str) -> (usize, Vec<String>) {
    let mut bad = Vec::new();
    let n = each_task_tree(tasks, sources, |t, dir| {
        let script = oracle::script(&t.patch, dir).unwrap();
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        let mut why = None;
        for call in script["turns"][0]["tool_calls"].as_array().unwrap() {
            assert_eq!(call["name"], "str_replace");
            let a = &call["arguments"];
            let path = a["path"].as_str().unwrap().to_string();
            let text = match files.get(&path) {
                Some(t) => t.clone(),
                None => std::fs::read_to_string(dir.join(&path)).unwrap_or_default(),
            };
            match plan_replace(
                &text,
                a["old_str"].as_str().unwrap(),
                a["new_str"].as_str().unwrap(),
            ) {
                Ok(r) => {
                    files.insert(path, r.content);
                }
                Err(e) => {
                    why = Some(format!("{path}: {}", e.lines().next().unwrap_or("")));
                    break;
                }
            }
        }
        let before: BTreeMap<String, String> = files
            .keys()
            .filter_map(|p| Some((p.clone(), std::fs::read_to_string(dir.join(p)).ok()?)))
            .collect();
        let gold = apply::apply(&t.patch, &before).unwrap();
        if why.is_none() && gold != files {
            why = Some("the edits leave other text than the gold patch".into());
        }
        if let Some(w) = why {
            bad.push(format!("{}: {w}", t.instance_id));
        }
    });
    (n, bad)
}

#[test]
fn the_oracle_reproduces_every_gold_patch_through_the_edit_tool() {
    for (tasks, sources, at_least) in [
        ("bench/tasks.jsonl", "bench/sources", 50),
        ("bench/real/tasks.jsonl", "bench/real/sources", 24),
        ("bench/real/test/tasks.jsonl", "bench/real/test/sources", 60),
        ("bench/field/tasks.jsonl", "bench/field/sources", 40),
    ] {
        let (n, bad) = mismatches(tasks, sources);
        assert!(n >= at_least, "{tasks}: {n} tasks");
        assert!(
            bad.is_empty(),
            "{tasks}: {} of {n}:\n{}",
            bad.len(),
            bad.join("\n")
        );
    }
}
