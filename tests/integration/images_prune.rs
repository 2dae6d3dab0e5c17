//! `patchloop images prune` against the real daemon, narrowed by `--name` to images this test
//! made: the dry run removes nothing, the real run removes the unused image and keeps the one
//! a container holds, and a young image is left alone.

use std::process::Command;

use crate::verify_common::base_image;

fn docker(args: &[&str]) -> String {
    let out = Command::new("docker").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "docker {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn exists(tag: &str) -> bool {
    Command::new("docker")
        .args(["image", "inspect", tag])
        .output()
        .unwrap()
        .status
        .success()
}

/// A one-file image tagged `tag`, committed from the test base.
fn commit(tag: &str) {
    let c = docker(&["create", &base_image(), "true"]);
    docker(&["commit", &c, tag]);
    docker(&["rm", &c]);
}

fn prune(args: &[&str]) -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_patchloop"))
        .args(["images", "prune"])
        .args(args)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    (stdout, stderr)
}

#[test]
fn prune_removes_old_unused_images_and_keeps_used_and_young_ones() {
    let prefix = format!("prunetest-{:08x}", rand::random::<u32>());
    let unused = format!("patchloop-sandbox:{prefix}-unused");
    let held = format!("patchloop-sandbox:{prefix}-held");
    commit(&unused);
    commit(&held);
    let holder = docker(&["create", &held, "true"]);

    // Both are younger than a day: nothing to do.
    let (stdout, stderr) = prune(&["--name", &prefix, "--older-than", "1d"]);
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("removed 0 image tag(s)") && stderr.contains("2 younger than 1day"),
        "{stderr}"
    );

    let (stdout, stderr) = prune(&["--name", &prefix, "--older-than", "0s", "--dry-run"]);
    assert!(
        stdout.contains(&format!("would remove {unused} ("))
            && stdout.contains(&format!("would remove {held} (")),
        "{stdout}"
    );
    assert!(stderr.contains("would remove 2 image tag(s)"), "{stderr}");
    assert!(
        exists(&unused) && exists(&held),
        "a dry run removed something"
    );

    let (stdout, stderr) = prune(&["--name", &prefix, "--older-than", "0s"]);
    assert!(
        stdout.contains(&format!("removed {unused} (")),
        "{stdout}{stderr}"
    );
    assert!(
        stdout.contains(&format!("kept {held}: a container uses it")),
        "{stdout}"
    );
    assert!(!exists(&unused), "{unused} is still there");
    assert!(exists(&held), "{held} was removed under its container");
    assert!(exists(&base_image()), "the base went: --name must narrow");

    docker(&["rm", &holder]);
    let (stdout, _) = prune(&["--name", &prefix, "--older-than", "0s"]);
    assert!(stdout.contains(&format!("removed {held} (")), "{stdout}");
    assert!(!exists(&held));
}
