//! Tidy checks that run inside `cargo test`: the module layering ARCHITECTURE.md promises.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module → the top-level modules its non-test code names as `crate::X`.
fn import_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut modules = BTreeSet::new();
    for e in std::fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().into_owned();
        if name != "lib" && name != "main" {
            modules.insert(name);
        }
    }
    let re = regex::Regex::new(r"crate::(\w+)").unwrap();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(src).unwrap();
            let first = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            let me = first.trim_end_matches(".rs").to_string();
            if me == "lib" || me == "main" {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            // Test modules sit at the end of each file; they may reach anywhere.
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for c in re.captures_iter(line) {
                    let m = c[1].to_string();
                    if m != me && modules.contains(&m) {
                        graph.entry(me.clone()).or_default().insert(m);
                    }
                }
            }
        }
    }
    graph
}

/// A cycle through `start`, if any (depth-first over the graph).
fn cycle_from(g: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![vec![start.to_string()]];
    while let Some(path) = stack.pop() {
        let last = path.last().unwrap();
        for next in g.get(last).into_iter().flatten() {
            if next == start {
                let mut c = path.clone();
                c.push(next.clone());
                return Some(c);
            }
            if !path.contains(next) {
                let mut p = path.clone();
                p.push(next.clone());
                stack.push(p);
            }
        }
    }
    None
}

#[test]
fn modules_import_downhill_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = import_graph(&src);
    // `cargo test --lib tidy:: -- --nocapture` prints the graph this checks.
    for (m, deps) in &g {
        println!(
            "{m} -> {}",
            deps.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    for (m, deps) in &g {
        assert!(
            !deps.contains("cli"),
            "{m} imports crate::cli: helpers live with their owners, cli only dispatches"
        );
        if let Some(c) = cycle_from(&g, m) {
            panic!("import cycle: {}\nfull graph: {g:#?}", c.join(" -> "));
        }
    }
    // The layering ARCHITECTURE.md draws: the sandbox below everything but the clock, the
    // agent never above the pipeline, config a leaf.
    assert_eq!(
        g.get("sandbox").cloned().unwrap_or_default(),
        BTreeSet::from(["clock".to_string()])
    );
    assert!(g.get("config").is_none_or(|d| d.is_empty()), "{g:?}");
    for low in ["agent", "verify", "sandbox", "github", "config"] {
        let deps = g.get(low).cloned().unwrap_or_default();
        assert!(!deps.contains("pipeline"), "{low} imports the pipeline");
    }
    // The check sees real edges (a graph of nothing would pass everything above).
    assert!(g["pipeline"].contains("agent") && g["pipeline"].contains("verify"));
}

/// The agent reaches containers only through the `Sandbox` trait: no Docker client, no image
/// preparation, no concrete container in its non-test code.
#[test]
fn the_agent_sees_only_the_sandbox_trait() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/agent");
    let mut stack = vec![dir];
    let mut checked = 0;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).unwrap();
                let code = text.split("#[cfg(test)]").next().unwrap_or("");
                for banned in [
                    "bollard",
                    "sandbox::docker",
                    "sandbox::prepare",
                    "sandbox::container",
                ] {
                    assert!(!code.contains(banned), "{} uses {banned}", p.display());
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 10, "only {checked} files checked");
}

#[test]
fn a_cycle_is_found() {
    let mut g = BTreeMap::new();
    g.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    g.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(cycle_from(&g, "a").unwrap(), ["a", "b", "a"]);
    g.insert("b".to_string(), BTreeSet::new());
    assert!(cycle_from(&g, "a").is_none());
}
