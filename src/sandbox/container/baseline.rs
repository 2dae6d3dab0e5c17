//! The scripts that diff and reset the workspace against the image's read-only baseline commit.

/// The harness-owned diff: the pristine baseline git dir (read-only in the image) against the
/// workspace, with no system/global config, no hooks, no fsmonitor, a private index and object
/// dir in /tmp. Nothing in the workspace's own `.git` is ever read.
/// The baseline repository with a throwaway index and object store: `g` is git over the
/// workspace against the image's read-only baseline commit.
macro_rules! baseline_git {
    ($body:literal) => {
        concat!(
            r#"set -e
B=/opt/patchloop/baseline.git
T=$(mktemp -d /tmp/.pl-git-XXXXXX)
trap 'rm -rf "$T"' EXIT
cp "$B/index" "$T/index"
mkdir "$T/objects"
export GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null GIT_DIR="$B" GIT_WORK_TREE=/workspace \
  GIT_INDEX_FILE="$T/index" GIT_OBJECT_DIRECTORY="$T/objects" GIT_ALTERNATE_OBJECT_DIRECTORIES="$B/objects" \
  GIT_TERMINAL_PROMPT=0 GIT_OPTIONAL_LOCKS=0
g() { git -c core.fsmonitor= -c core.hooksPath=/dev/null -c 'safe.directory=*' -c core.untrackedCache=false \
  -c core.autocrlf=false -c core.safecrlf=false -c diff.noprefix=false -c diff.renames=false "$@"; }
cd /workspace
g add -A -- . >/dev/null
"#,
            $body
        )
    };
}

pub(super) const DIFF_SCRIPT: &str = baseline_git!(
    "g diff --cached --binary --no-color --no-ext-diff --no-textconv --full-index HEAD\n"
);

/// Back to the baseline commit: files the workspace added are removed, changed and deleted
/// ones restored from it (ignored caches stay). Between repair attempts, so the next
/// strategy starts from the same tree the verifier applies patches to.
pub const RESET_SCRIPT: &str = baseline_git!(
    r#"g diff --cached --name-only --no-renames --diff-filter=A -z HEAD > "$T/added"
g diff --cached --name-only --no-renames --diff-filter=MDT -z HEAD > "$T/restore"
if [ -s "$T/added" ]; then xargs -0 rm -f -- < "$T/added"; fi
if [ -s "$T/restore" ]; then g checkout HEAD --pathspec-from-file="$T/restore" --pathspec-file-nul; fi
"#
);
