use super::*;

const ROOT: &str = "/tmp/tb";

fn repo() -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for (p, s) in [
        (
            "shop/__init__.py",
            include_str!("../testdata/traceback/repo/shop/__init__.py"),
        ),
        (
            "shop/prices.py",
            include_str!("../testdata/traceback/repo/shop/prices.py"),
        ),
        (
            "shop/rates.py",
            include_str!("../testdata/traceback/repo/shop/rates.py"),
        ),
        (
            "shop/syn.py",
            include_str!("../testdata/traceback/repo/shop/syn.py"),
        ),
        (
            "tests/test_prices.py",
            include_str!("../testdata/traceback/repo/tests/test_prices.py"),
        ),
        (
            "tests/test_broken.py",
            include_str!("../testdata/traceback/repo/tests/test_broken.py"),
        ),
        (
            "tests/test_syn.py",
            include_str!("../testdata/traceback/repo/tests/test_syn.py"),
        ),
    ] {
        m.insert(p.to_string(), s.to_string());
    }
    m
}

/// The two rounds of reading as the pipeline does them, from the fixture repository.
fn context(output: &str, ids: &[&str], budget: usize) -> (ContextPlan, Context) {
    let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    let plan = plan_in(output, &ids, ROOT);
    let all = repo();
    let mut files: BTreeMap<String, String> = plan
        .files()
        .into_iter()
        .filter_map(|p| all.get(&p).map(|s| (p, s.clone())))
        .collect();
    for p in plan.imports(&files) {
        if let Some(s) = all.get(&p) {
            files.insert(p, s.clone());
        }
    }
    let c = render(&plan, &files, budget);
    (plan, c)
}

fn frame(path: &str, line: usize, func: Option<&str>) -> Frame {
    Frame {
        path: path.into(),
        line,
        func: func.map(str::to_string),
    }
}

#[test]
fn long_format_two_frames_deep_into_the_library() {
    let out = include_str!("../testdata/traceback/pytest-long.txt");
    let (plan, c) = context(out, &["tests/test_prices.py::test_total_two_deep"], 3072);
    assert_eq!(
        plan.frames,
        vec![
            frame("tests/test_prices.py", 11, None),
            frame("shop/prices.py", 16, Some("total")),
            frame("shop/prices.py", 7, None),
        ]
    );
    let t = &c.text;
    // Code frames before test frames, each with path:line.
    let code_at = t.find("- shop/prices.py:16 in total").expect(t);
    let test_at = t.find("- tests/test_prices.py:11 [test]").expect(t);
    assert!(code_at < test_at, "{t}");
    assert!(t.contains("- shop/prices.py:7\n"), "{t}");
    // The test function, not its file.
    assert!(t.contains("10  def test_total_two_deep():"), "{t}");
    assert!(!t.contains("def test_parse_amount"), "{t}");
    // Both library functions on the traceback, outermost first, with their lines.
    let total = t
        .find("shop/prices.py:15 total (traceback line 16):")
        .expect(t);
    let parse = t
        .find("shop/prices.py:4 parse_amount (traceback line 7):")
        .expect(t);
    assert!(total < parse, "{t}");
    assert!(
        t.contains("\n7      return int(whole) * 100 + int(frac or 0)"),
        "{t}"
    );
    assert!(!t.contains("class Cart"), "{t}");
    assert!(t.len() <= 3072, "{}", t.len());
    assert_eq!(c.focus.code[0].name, "total");
    assert_eq!(c.focus.line_in("shop/prices.py"), Some(15));
    assert_eq!(c.focus.line_in("./tests/test_prices.py"), Some(11));
}

#[test]
fn short_format_gives_the_same_frames_with_names() {
    let out = include_str!("../testdata/traceback/pytest-short.txt");
    let (plan, c) = context(out, &["tests/test_prices.py::test_total_two_deep"], 3072);
    assert_eq!(
        plan.frames,
        vec![
            frame("tests/test_prices.py", 11, Some("test_total_two_deep")),
            frame("shop/prices.py", 16, Some("total")),
            frame("shop/prices.py", 7, Some("parse_amount")),
        ]
    );
    assert!(
        c.text.contains("- shop/prices.py:7 in parse_amount\n"),
        "{}",
        c.text
    );
    assert_eq!(
        c.focus
            .code
            .iter()
            .map(|l| l.name.as_str())
            .collect::<Vec<_>>(),
        ["total", "parse_amount"]
    );
}

#[test]
fn native_format_file_frames_with_absolute_paths() {
    let out = include_str!("../testdata/traceback/pytest-native.txt");
    let (plan, c) = context(out, &["tests/test_prices.py::test_total_two_deep"], 3072);
    assert_eq!(plan.frames[1], frame("shop/prices.py", 16, Some("total")));
    assert_eq!(plan.frames.len(), 3);
    assert_eq!(c.focus.code[1].name, "parse_amount");
}

#[test]
fn class_based_test_finds_the_method_it_calls() {
    let out = include_str!("../testdata/traceback/pytest-long.txt");
    let (plan, c) = context(out, &["tests/test_prices.py::TestCart::test_count"], 3072);
    // An assertion failure: the only frame is the test's.
    assert_eq!(plan.frames, vec![frame("tests/test_prices.py", 21, None)]);
    let t = &c.text;
    assert!(
        t.contains("Failing test TestCart::test_count (tests/test_prices.py:19"),
        "{t}"
    );
    assert!(t.contains("19      def test_count(self):"), "{t}");
    // `Cart().add(...)` and `cart.count()` resolve through the import to the methods.
    let names: Vec<&str> = c.focus.code.iter().map(|l| l.name.as_str()).collect();
    assert!(names.contains(&"Cart.count"), "{names:?}");
    assert!(t.contains("shop/prices.py:28 Cart.count:"), "{t}");
    assert!(t.contains("29          return len(self.items) - 1"), "{t}");
}

#[test]
fn parametrized_id_maps_to_its_decorated_function() {
    let out = include_str!("../testdata/traceback/pytest-long.txt");
    let id = "tests/test_prices.py::test_parse_param[$0.5-50]";
    let (plan, c) = context(out, &[id], 3072);
    assert_eq!(plan.tests[0].name, "test_parse_param");
    // Only this test's section is read, not the other failures'.
    assert_eq!(plan.frames, vec![frame("tests/test_prices.py", 26, None)]);
    let t = &c.text;
    assert!(t.contains("@pytest.mark.parametrize"), "{t}");
    assert!(t.contains("shop/prices.py:4 parse_amount:"), "{t}");
    assert_eq!(c.focus.code.len(), 1, "{:?}", c.focus.code);
}

#[test]
fn collection_errors_point_at_module_level_code_and_syntax_errors() {
    let out = include_str!("../testdata/traceback/pytest-collect.txt");
    // JUnit names a collection error by its module; no test function to show.
    let (plan, c) = context(out, &["tests/test_broken.py", "tests/test_syn.py"], 3072);
    assert!(
        plan.frames
            .contains(&frame("shop/rates.py", 10, Some("<module>"))),
        "{:?}",
        plan.frames
    );
    assert!(plan.frames.contains(&frame("shop/syn.py", 2, None)));
    // The standard library and site-packages frames are not the repository's.
    assert!(
        plan.frames
            .iter()
            .all(|f| !f.path.contains("importlib") && !f.path.contains("_pytest")),
        "{:?}",
        plan.frames
    );
    let t = &c.text;
    assert!(
        t.contains("shop/rates.py:6 load (traceback line 7):"),
        "{t}"
    );
    assert!(t.contains("10  INVERSE = load("), "{t}");
    assert!(t.contains("\n2      if x"), "{t}");
}

#[test]
fn the_budget_is_kept_and_long_functions_are_cut_around_the_frame() {
    let out = include_str!("../testdata/traceback/pytest-long.txt");
    for budget in [600, 1000, 3072] {
        let (_, c) = context(out, &["tests/test_prices.py::test_total_two_deep"], budget);
        assert!(c.text.len() <= budget, "{budget}: {}", c.text.len());
        assert!(c.text.contains("shop/prices.py:16 in total"), "{}", c.text);
    }
    let src: String = (1..=100).map(|i| format!("x{i} = {i}\n")).collect();
    let e = excerpt(&src, 1, 100, Some(50), 120);
    assert!(e.starts_with("  1  x1 = 1\n    ...\n"), "{e}");
    assert!(e.contains(" 50  x50 = 50\n"), "{e}");
    assert!(e.ends_with("    ...\n"), "{e}");
    assert!(e.len() <= 120, "{}", e.len());
    assert_eq!(excerpt("a\nb\n", 1, 2, None, 100), "1  a\n2  b\n");
}

#[test]
fn a_function_re_exported_by_its_package_is_found_in_its_module() {
    // The demo's test does `from stats import median`; `stats/__init__.py` re-exports it
    // from `stats/median.py`. Output from the demo's episode container.
    let out = include_str!("../testdata/traceback/pytest-demo.txt");
    let ids = ["tests/test_median.py::test_even_length_averages_the_middle_pair".to_string()];
    let plan = plan(out, &ids);
    let demo = |p: &str| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/demo-repo")
            .join(p);
        std::fs::read_to_string(path).ok()
    };
    let mut files: BTreeMap<String, String> = plan
        .files()
        .into_iter()
        .filter_map(|p| demo(&p).map(|s| (p, s)))
        .collect();
    let more = plan.imports(&files);
    assert!(more.contains(&"stats/median.py".to_string()), "{more:?}");
    for p in more {
        if let Some(s) = demo(&p) {
            files.insert(p, s);
        }
    }
    let c = render(&plan, &files, DEFAULT_BUDGET);
    assert_eq!(c.focus.code.len(), 1, "{}", c.text);
    assert_eq!(
        (c.focus.code[0].path.as_str(), c.focus.code[0].name.as_str()),
        ("stats/median.py", "median")
    );
    assert!(c.text.contains("def median("), "{}", c.text);
}

#[test]
fn nothing_located_gives_no_context() {
    let c = context("1 passed", &["tests/test_x.py::test_y"], 3072).1;
    assert!(c.text.is_empty());
    assert_eq!(c.focus, Focus::default());
    assert!(TestRef::parse("tests/stats.test.js::median").is_none());
}

#[test]
fn paths_outside_the_repository_are_dropped() {
    assert_eq!(
        repo_path("/workspace/a/b.py", "/workspace").as_deref(),
        Some("a/b.py")
    );
    assert_eq!(repo_path("./a.py", "/workspace").as_deref(), Some("a.py"));
    assert_eq!(repo_path("/usr/lib/python3.11/x.py", "/workspace"), None);
    assert_eq!(repo_path("../venv/x.py", "/workspace"), None);
    assert_eq!(repo_path("/workspace2/x.py", "/workspace"), None);
    assert_eq!(
        repo_path(".venv/lib/site-packages/x.py", "/workspace"),
        None
    );
    assert!(is_test_path("tests/helpers.py") && is_test_path("pkg/test_x.py"));
    assert!(!is_test_path("shop/prices.py") && !is_test_path("tests.py"));
    let f = Focus {
        read_only: vec!["tests".into()],
        ..Focus::default()
    };
    assert!(f.is_read_only("./tests/test_x.py") && f.is_read_only("/workspace/tests/a.py"));
    assert!(!f.is_read_only("tests_extra/a.py") && !f.is_read_only("shop/a.py"));
}

#[test]
fn where_to_look_names_the_code_and_a_call_not_yet_repeated() {
    let out = include_str!("../testdata/traceback/pytest-short.txt");
    let (_, c) = context(out, &["tests/test_prices.py::test_total_two_deep"], 3072);
    let f = &c.focus;
    let w = f.where_to_look(None);
    assert!(
        w.contains("- shop/prices.py:15 total (traceback line 16)\n"),
        "{w}"
    );
    assert!(
        w.contains("- shop/prices.py:4 parse_amount (traceback line 7)\n"),
        "{w}"
    );
    let first = r#"Read it: {"name": "view_file", "arguments": {"path": "shop/prices.py", "start_line": 15, "end_line": 17}}"#;
    assert!(w.ends_with(first), "{w}");
    let w = f.where_to_look(Some(("./shop/prices.py", Some(15))));
    assert!(w.contains(r#""start_line": 4, "end_line": 7"#), "{w}");
    let w = f.where_to_look(Some(("shop/prices.py", Some(4))));
    assert!(w.ends_with(first), "{w}");
    let mut both = f.clone();
    both.code.truncate(1);
    assert!(
        both.where_to_look(Some(("shop/prices.py", Some(15))))
            .contains("str_replace")
    );
    assert!(Focus::default().where_to_look(None).contains("search"));
}
