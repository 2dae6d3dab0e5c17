//! Tidy checks that run inside `cargo test`: the module layering ARCHITECTURE.md promises.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A file's code without its inline test module (which sits at the end and may reach
/// anywhere). A `#[cfg(test)]` item that is not the test module (a test-only helper function)
/// does not end the scan: the code after it is still read.
fn non_test_code(text: &str) -> &str {
    let re =
        regex::Regex::new(r"#\[cfg\(test\)\]\s*(?:pub(?:\(\w+\))?\s+)?mod\s+\w+\s*\{").unwrap();
    match re.find(text) {
        Some(m) => &text[..m.start()],
        None => text,
    }
}

/// A file that holds only tests (`tests.rs`, `x_tests.rs`, moved out of `x.rs`).
fn is_test_file(p: &Path) -> bool {
    p.file_name()
        .map(|n| n.to_string_lossy())
        .is_some_and(|n| n == "tests.rs" || n.ends_with("_tests.rs"))
}

/// Every `.rs` file under `dir` (a directory module's files, its children's too).
fn rs_files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

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
            // `tidy` is compiled for tests only.
            if me == "lib" || me == "main" || me == "tidy" {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            if is_test_file(&p) {
                continue;
            }
            let code = non_test_code(&text);
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
    // The layering ARCHITECTURE.md draws: the sandbox below everything but the leaf values
    // (the clock, the typed test command), the agent never above the pipeline, config and the
    // leaf values leaves.
    assert!(
        g.get("sandbox")
            .cloned()
            .unwrap_or_default()
            .is_subset(&BTreeSet::from([
                "clock".to_string(),
                "testcmd".to_string(),
                "testid".to_string()
            ])),
        "{g:?}"
    );
    for leaf in ["clock", "testcmd", "testid"] {
        assert!(
            g.get(leaf).is_none_or(|d| d.is_empty()),
            "{leaf} is a leaf: {g:?}"
        );
    }
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

/// Every `crate::…`, `super::…` and `self::…` path a piece of Rust names, with `use` trees
/// expanded (`use super::{a::B, c}` names `super::a::B` and `super::c`).
fn named_paths(code: &str) -> Vec<String> {
    fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
        let tree = tree.trim();
        let Some(open) = tree.find('{') else {
            let t = tree.split(" as ").next().unwrap_or("").trim();
            if !t.is_empty() {
                out.push(format!("{prefix}{t}"));
            }
            return;
        };
        let head = &tree[..open];
        let body = tree[open + 1..].trim_end().trim_end_matches('}');
        // Split the braces' body on top-level commas.
        let (mut depth, mut start) = (0, 0);
        for (i, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand(&format!("{prefix}{head}"), &body[start..i], out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        expand(&format!("{prefix}{head}"), &body[start..], out);
    }
    // Comments (doc links included) name paths without depending on them.
    let code: String = code
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let code = code.as_str();
    let mut out = Vec::new();
    let use_re = regex::Regex::new(r"(?s)\buse\s+([^;]+);").unwrap();
    for c in use_re.captures_iter(code) {
        expand(
            "",
            &c[1].split_whitespace().collect::<Vec<_>>().join(" "),
            &mut out,
        );
    }
    let path_re = regex::Regex::new(r"\b(?:crate|super|self)(?:::\w+)+").unwrap();
    out.extend(path_re.find_iter(code).map(|m| m.as_str().to_string()));
    out.retain(|p| p.starts_with("crate::") || p.starts_with("super::") || p.starts_with("self::"));
    out
}

/// For every directory of modules under `src` (a module with files of its own), the graph
/// between its files: file → the sibling files its non-test code names, directly or through
/// a name the directory's `mod.rs` re-exports. `mod.rs` itself is not a node (it declares
/// and re-exports its children).
fn file_graphs(src: &Path) -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let test_mod = regex::Regex::new(r"#\[cfg\(test\)\]\s*(?:pub\s+)?mod\s+(\w+)\s*;").unwrap();
    let pub_use = regex::Regex::new(r"(?s)pub use\s+([^;]+);").unwrap();
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let rel: Vec<String> = dir
            .strip_prefix(src)
            .unwrap()
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let modrs = std::fs::read_to_string(dir.join("mod.rs")).unwrap_or_default();
        // Children compiled only for tests are not part of the layering.
        let test_only: BTreeSet<String> = test_mod
            .captures_iter(&modrs)
            .map(|c| c[1].to_string())
            .collect();
        // A child directory is one node made of all its files (not only its mod.rs): an edge
        // from `runner/checks.rs` to a sibling of `runner/` is the directory's edge.
        let mut files: BTreeMap<String, Vec<std::path::PathBuf>> = BTreeMap::new();
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_stem().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                stack.push(p.clone());
                let inner: Vec<_> = rs_files_under(&p)
                    .into_iter()
                    .filter(|f| !is_test_file(f))
                    .collect();
                files.insert(name, inner);
            } else if p.extension().is_some_and(|x| x == "rs")
                && !matches!(name.as_str(), "mod" | "lib" | "main")
                && !test_only.contains(&name)
            {
                files.insert(name, vec![p]);
            }
        }
        if rel.is_empty() {
            continue; // the crate root: modules, which `import_graph` checks
        }
        // Names the directory's mod.rs re-exports, by the child they come from.
        let mut reexports: BTreeMap<String, String> = BTreeMap::new();
        let code = non_test_code(&modrs);
        for c in pub_use.captures_iter(code) {
            let mut paths = Vec::new();
            let tree = c[1].split_whitespace().collect::<Vec<_>>().join(" ");
            let text = format!("use {tree};");
            paths.extend(named_paths(&text));
            // `pub use child::{A, B}` (no crate/super prefix): the child is the first segment.
            let bare = tree.split("::").next().unwrap_or("").trim();
            if files.contains_key(bare) {
                for name in tree.split(|c: char| !c.is_alphanumeric() && c != '_') {
                    if !name.is_empty() && name != bare {
                        reexports.insert(name.to_string(), bare.to_string());
                    }
                }
            }
        }
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (name, paths) in &files {
            let text: String = paths
                .iter()
                .map(|p| std::fs::read_to_string(p).unwrap_or_default())
                .map(|t| non_test_code(&t).to_string())
                .collect::<Vec<_>>()
                .join("\n");
            let code = text.as_str();
            // The module path of this file, and of the directory it sits in.
            let me: Vec<String> = rel.iter().cloned().chain([name.clone()]).collect();
            for p in named_paths(code) {
                let segs: Vec<&str> = p.split("::").collect();
                let abs: Vec<String> = match segs[0] {
                    "crate" => segs[1..].iter().map(|s| s.to_string()).collect(),
                    "self" => me
                        .iter()
                        .cloned()
                        .chain(segs[1..].iter().map(|s| s.to_string()))
                        .collect(),
                    _ => {
                        let ups = segs.iter().take_while(|s| **s == "super").count();
                        if ups > me.len() {
                            continue;
                        }
                        me[..me.len() - ups]
                            .iter()
                            .cloned()
                            .chain(segs[ups..].iter().map(|s| s.to_string()))
                            .collect()
                    }
                };
                if abs.len() <= rel.len() || abs[..rel.len()] != rel[..] {
                    continue;
                }
                let next = &abs[rel.len()];
                let sibling = if files.contains_key(next) {
                    Some(next.clone())
                } else {
                    reexports.get(next).cloned()
                };
                if let Some(s) = sibling.filter(|s| s != name) {
                    g.entry(name.clone()).or_default().insert(s);
                }
            }
        }
        out.insert(rel.join("/"), g);
    }
    out
}

/// No two files inside a module name each other, however indirectly: a file's helpers live
/// below it, so each file reads (and changes) alone.
#[test]
fn files_inside_a_module_import_downhill_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graphs = file_graphs(&src);
    let mut cycles = Vec::new();
    for (dir, g) in &graphs {
        for f in g.keys() {
            if let Some(c) = cycle_from(g, f) {
                cycles.push(format!("src/{dir}: {}", c.join(" -> ")));
            }
        }
    }
    assert!(cycles.is_empty(), "file cycles:\n{}", cycles.join("\n"));
    // The check sees real edges.
    assert!(
        graphs["pipeline"]["fix"].contains("plan"),
        "{:?}",
        graphs["pipeline"]
    );
    assert!(graphs["agent/candidates"]["runner"].contains("infill"));
    // A directory module is one node made of all its files: `verify/runner/generalisation.rs`
    // reaching `verify::layers` is `runner`'s edge.
    assert!(
        graphs["verify"]["runner"].contains("layers"),
        "{:?}",
        graphs["verify"]
    );
}

#[test]
fn use_trees_and_inline_paths_are_named() {
    let p = named_paths(
        "use super::{edits::{FileEdit, parse_reply}, Problem};\nuse crate::verify::junit as j;\n\
         fn f() { super::probe::truncate(x); }",
    );
    for want in [
        "super::edits::FileEdit",
        "super::edits::parse_reply",
        "super::Problem",
        "crate::verify::junit",
        "super::probe::truncate",
    ] {
        assert!(p.contains(&want.to_string()), "{want} in {p:?}");
    }
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

/// Test ids are taken apart only by `crate::testid` (issue #42): no other non-test code
/// splits, searches or prefixes a string on `::` (Rust paths in this file are not test ids).
#[test]
fn only_testid_splits_test_ids() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let pattern = regex::Regex::new(
        r#"\.(split|split_once|rsplit|rsplit_once|find|rfind|contains|starts_with|ends_with|strip_prefix|split_terminator)\("::"\)"#,
    )
    .unwrap();
    let mut found = Vec::new();
    for p in rs_files_under(&src) {
        let rel = p.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        if rel == "testid.rs" || rel == "tidy.rs" || rel.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        for (n, line) in non_test_code(&text).lines().enumerate() {
            if pattern.is_match(line) {
                found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "split test ids with crate::testid:\n{}",
        found.join("\n")
    );
}
