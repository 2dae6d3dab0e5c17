use super::*;

#[test]
fn parses_oom_kill_counters() {
    assert_eq!(
        parse_oom_kill("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n"),
        Some(3)
    );
    assert_eq!(
        parse_oom_kill("low 0\nhigh 0\nmax 2\noom 1\noom_kill 1\n"),
        Some(1)
    );
    assert_eq!(parse_oom_kill("nothing here"), None);
}

#[test]
fn first_look_finds_keeper_and_oom_baseline() {
    assert_eq!(
        parse_first_look("7 \n---\noom_kill_disable 0\nunder_oom 0\noom_kill 2\n"),
        Some((7, 2))
    );
    assert_eq!(parse_first_look("1\n9\n\n---\nlow 0\n"), Some((9, 0)));
    assert_eq!(parse_first_look("\n---\noom_kill 3\n"), None);
}

#[test]
fn signal_deaths_trigger_harness_cleanup() {
    assert!(wrapper_may_have_died(137) && wrapper_may_have_died(143));
    assert!(wrapper_may_have_died(-1) && wrapper_may_have_died(255));
    assert!(!wrapper_may_have_died(0) && !wrapper_may_have_died(1) && !wrapper_may_have_died(127));
}

#[test]
fn names_are_docker_safe() {
    assert_eq!(sanitize("run/1 x"), "run-1-x");
    assert_eq!(sanitize(""), "x");
    assert!(sanitize(&"a".repeat(100)).len() <= 40);
}

#[test]
fn kill_script_spares_pid1_keeper_and_itself() {
    let s = kill_others_script(7, 0);
    assert!(s.contains("1|7|$$)"));
    assert!(kill_others_script(7, 9).contains("1|7|9|$$)"));
    assert!(!s.contains("pkill") && !s.contains("ps "));
}
