use super::build::is_lost_parent;
use super::rootfs::{euid_from_status, rootfs_tag};
use super::*;

#[test]
fn base_tag_is_content_addressed_and_stable() {
    let t = base_tag();
    assert!(t.starts_with("patchloop-base:py-"));
    assert_eq!(t.len(), "patchloop-base:py-".len() + 16);
    assert_eq!(t, base_tag());
}

#[test]
fn each_kind_has_its_own_tag_and_python_keeps_its_own() {
    let opts = BaseOptions::default();
    assert_eq!(base_tag_for(ProjectKind::Python, &opts), base_tag());
    let rust = base_tag_for(ProjectKind::Rust, &opts);
    let node = base_tag_for(ProjectKind::Node, &opts);
    assert!(rust.starts_with("patchloop-base:rust-"), "{rust}");
    assert!(node.starts_with("patchloop-base:node-"), "{node}");
    // The Rust tag depends on the cargo-nextest copied in (or its absence).
    let with = tag_of(
        ProjectKind::Rust,
        &Extra {
            bytes: vec![1],
            tag_part: Some("nextest abc".into()),
        },
    );
    let without = tag_of(
        ProjectKind::Rust,
        &Extra {
            bytes: Vec::new(),
            tag_part: Some("no nextest".into()),
        },
    );
    assert_ne!(with, without);
    // One debootstrap per machine: every kind starts from the same rootfs.
    for k in ProjectKind::ALL {
        assert_eq!(BaseRecipe::for_kind(k).include, DEBOOTSTRAP_INCLUDE);
    }
}

#[test]
fn bases_of_other_pythons_have_tags_of_their_own() {
    // Bookworm's offline base is the default one; another suite's names its Python.
    assert_eq!(debian_python_tag(SUITE, "3.11"), base_tag());
    let trixie = debian_python_tag("trixie", "3.13");
    assert!(trixie.starts_with("patchloop-base:py3.13-"), "{trixie}");
    assert_ne!(trixie, debian_python_tag("bullseye", "3.9"));
    assert_ne!(trixie, online_python_tag("3.13"));
    assert_eq!(trixie, debian_python_tag("trixie", "3.13"));
    // The rootfs is per suite; bookworm's keeps its tag.
    assert_ne!(
        rootfs_tag("trixie", DEBOOTSTRAP_INCLUDE),
        rootfs_tag(SUITE, DEBOOTSTRAP_INCLUDE)
    );
    assert!(rootfs_tag("trixie", DEBOOTSTRAP_INCLUDE).starts_with("patchloop-rootfs:trixie-"));
    assert!(is_python_version("3.13") && !is_python_version("3") && !is_python_version("3.x"));
}

#[test]
fn mirror_is_read_from_deb822_and_one_line_sources() {
    let deb822 = "Types: deb\n# http://snapshot.debian.org/x\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n\nTypes: deb\nURIs: http://deb.debian.org/debian-security\n";
    assert_eq!(
        mirror_from_sources(deb822).as_deref(),
        Some("http://deb.debian.org/debian")
    );
    let legacy = "deb http://security.debian.org/ bookworm-security main\ndeb [arch=amd64] http://mirror.example/debian/ bookworm main\n";
    assert_eq!(
        mirror_from_sources(legacy).as_deref(),
        Some("http://mirror.example/debian")
    );
    assert_eq!(mirror_from_sources("# nothing\n"), None);
    assert_eq!(resolve_mirror(Some("http://m/d")), "http://m/d");
}

#[test]
fn euid_is_parsed_from_proc_status() {
    assert_eq!(euid_from_status("Name:\tx\nUid:\t1000\t0\t0\t0\n"), Some(0));
    assert_eq!(euid_from_status("Uid:\t0\t1000\t0\t0\n"), Some(1000));
    assert_eq!(euid_from_status("Name: x\n"), None);
}

#[test]
fn failing_command_prefers_our_marker_then_the_daemon_message() {
    let log = "Step 3/3 : RUN x\npatchloop: running: pip install -r r.txt\npatchloop: FAILED: pip install -r r.txt\n";
    assert_eq!(failing_command(log, "whatever"), "pip install -r r.txt");
    assert_eq!(
        failing_command(
            "Step 2/3 : RUN make",
            "The command '/bin/sh -c make' returned a non-zero code: 2"
        ),
        "/bin/sh -c make"
    );
    assert_eq!(
        failing_command("Step 2/3 : COPY a b", "boom"),
        "Step 2/3 : COPY a b"
    );
}

#[test]
fn failures_are_classified() {
    let full = classify_failure(
        "source layer",
        "Step 3/6 : COPY a b",
        "failed to copy files: write /var/lib/docker/overlay2/x: no space left on device",
    );
    assert!(matches!(full, ImageError::DiskFull { .. }));
    assert!(full.to_string().contains("out of disk space"));
    let failed = classify_failure(
        "dependencies layer",
        "patchloop: FAILED: pip install -r requirements.txt",
        "The command '/bin/sh -c x' returned a non-zero code: 1",
    );
    match &failed {
        ImageError::BuildFailed {
            command, log_tail, ..
        } => {
            assert_eq!(command, "pip install -r requirements.txt");
            assert!(log_tail.contains("non-zero code"));
        }
        other => panic!("expected BuildFailed, got {other:?}"),
    }
    assert_eq!(failed.exit_code(), 2);
    let tls = classify_failure("base image", "SSLError(CERTIFICATE_VERIFY_FAILED)", "x");
    assert!(tls.to_string().contains("--ca-cert"), "{tls}");
}

#[test]
fn ansi_colours_are_stripped() {
    assert_eq!(strip_ansi("\u{1b}[91mERROR: x\u{1b}[0m\r"), "ERROR: x");
    assert_eq!(strip_ansi("plain"), "plain");
}

#[test]
fn disk_full_is_recognised() {
    assert!(is_disk_full(
        "write /var/lib/docker/x: No space left on device"
    ));
    assert!(!is_disk_full("returned a non-zero code: 1"));
}

#[test]
fn a_cached_layer_removed_under_a_build_is_retried_and_nothing_else_is() {
    // The daemon's words when another job's `rmi` removed the layer a build was committing on
    // (seen with a concurrent `patchloop eval` on the same daemon).
    let error = "failed to export image: failed to set parent sha256:a3c4a50d535ea00cf7472aaad823d82174ae5512709861d7b4816645d0167312: unknown parent image ID sha256:a3c4a50d535ea00cf7472aaad823d82174ae5512709861d7b4816645d0167312";
    match classify_failure(
        "install layer",
        "Step 5/8 : COPY workspace /workspace",
        error,
    ) {
        ImageError::BuildFailed { log_tail, .. } => assert!(is_lost_parent(&log_tail)),
        other => panic!("{other:?}"),
    }
    let failed = "The command '/bin/sh -c pip install .' returned a non-zero code: 1";
    match classify_failure("install layer", "ERROR: No matching distribution", failed) {
        ImageError::BuildFailed { log_tail, .. } => assert!(!is_lost_parent(&log_tail)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn log_tail_keeps_the_last_lines() {
    let mut t = LogTail::new(2);
    for l in ["a", "b", "c"] {
        t.push(l.into());
    }
    assert_eq!(t.render(), "b\nc");
}

#[tokio::test]
async fn host_lock_serialises_builders() {
    let name = format!("test-{}", std::process::id());
    let name2 = name.clone();
    let opts = BaseOptions::default();
    let first = host_lock(&name, &opts).await.ok();
    assert!(first.is_some());
    let waiter =
        tokio::spawn(async move { host_lock(&name, &BaseOptions::default()).await.is_ok() });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!waiter.is_finished(), "the second builder must wait");
    drop(first);
    let got = tokio::time::timeout(Duration::from_secs(5), waiter).await;
    assert!(matches!(got, Ok(Ok(true))));
    let _ = std::fs::remove_file(std::env::temp_dir().join(format!("patchloop-{name2}.lock")));
}

#[test]
fn harness_files_are_embedded() {
    assert!(
        HARNESS_FILES
            .iter()
            .any(|(n, c)| *n == "pl_guard.py" && !c.is_empty())
    );
}
