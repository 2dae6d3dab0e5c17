//! The step loop: a fast exec path for agent episodes.
//!
//! Why: a Docker exec costs a runc exec (30–60 ms here, ~7 ms of it loading the seccomp
//! profile) on every tool call. Instead, an episode container's main shell starts a small
//! `sh` loop that reads framed requests from the container's stdin (attached over the Engine
//! API) and runs each as a child: one fork per step, a few milliseconds.
//!
//! The loop keeps every guarantee of the exec path: the step runs under its own intermediary
//! shell (a command that kills its parent only kills that), and afterwards the loop itself
//! SIGKILLs every process but PID 1, the keeper and the loop, with builtins only (it must work
//! while a fork bomb holds every pid), then reads the cgroup's OOM counter with builtins.
//!
//! What the loop is NOT trusted for: its output carries the end marker `PLEND<nonce> rc oom`,
//! and a step runs with the loop's uid, so a hostile step could learn the nonce (it can read
//! the loop's memory) and forge an early end. That only garbles the untrusted observations
//! of its own episode. The workspace diff and every verifier run use the exec path
//! ([`super::policy::ContainerPolicy::step_loop`] is off for verification containers).
//!
//! Requests: `PL <nonce> <script-b64-len> <stdin-b64-len>\n` then the two base64 blobs. Base64
//! because the attach stream treats ctrl-p ctrl-q as "detach": raw bytes could cut us off.

use std::sync::LazyLock;

use base64::Engine as _;

/// Shell functions that end every process but those the `case` pattern `spared` matches:
/// `pl_kill` SIGSTOPs until a pass sees no new process (a stopped process cannot fork, so a
/// fork bomb stops growing), SIGKILLs, then keeps SIGKILLing until PID 1 reaped them all
/// (zombies still hold pids, and the next step needs a fork). Dash builtins only: it must
/// work while a fork bomb holds every pid. `pl_*` names because shell functions share the
/// caller's variables. The one cleanup of both exec paths: the step loop and the Docker exec
/// wrapper.
pub fn kill_functions(spared: &str) -> String {
    KILL_TEMPLATE.replace("@SPARED@", spared)
}

const KILL_TEMPLATE: &str = r#"pl_each() {
  pl_n=0
  for pl_d in /proc/[0-9]*; do pl_p=${pl_d#/proc/}; case "$pl_p" in @SPARED@) ;; *) kill "-$1" "$pl_p" 2>/dev/null && pl_n=$((pl_n + 1));; esac; done
}
pl_kill() {
  pl_c=0; pl_prev=-1
  while [ "$pl_c" -lt 100 ]; do
    pl_c=$((pl_c + 1)); pl_each STOP
    [ "$pl_n" -eq "$pl_prev" ] && break
    pl_prev=$pl_n
  done
  pl_each KILL; pl_each KILL
  # Until PID 1 reaped them: zombies still hold pids, and the next step needs a fork. Each
  # pass SIGKILLs as it counts (harmless to a zombie): a straggler forked between the passes
  # above would otherwise hold its pids through every pass.
  pl_c=0
  while [ "$pl_c" -lt 2000 ]; do pl_c=$((pl_c + 1)); pl_each KILL; [ "$pl_n" -eq 0 ] && break; done
}
"#;

/// The container's command in step-loop mode: `sh -c LOOP_SCRIPT sh <lifetime>`.
/// `$$` (the outer shell, exec'd into `sleep`) is the keeper that bounds the container's life;
/// the loop runs in a background subshell that keeps the attached stdin through fd 3 (an
/// asynchronous list's stdin is /dev/null before its own redirections apply).
const LOOP_TEMPLATE: &str = r#"K=$$
pl_oom() {
  o=0
  if [ -r /sys/fs/cgroup/memory.events ]; then f=/sys/fs/cgroup/memory.events; else f=/sys/fs/cgroup/memory/memory.oom_control; fi
  while read -r k v; do [ "$k" = oom_kill ] && o=$v; done 2>/dev/null < "$f"
}
@KILL@pl_loop() {
  read -r L _ < /proc/self/stat
  exec 2>/dev/null
  # Without these every step would run as an empty script: stay silent, the harness execs.
  command -v head >/dev/null && command -v base64 >/dev/null || exit 0
  pl_oom
  echo "PLHELLO $K $L $o"
  while read -r t n sl il; do
    [ "$t" = PL ] || continue
    s=$(head -c "$sl" | base64 -d; echo .)
    s=${s%.}
    i=/dev/null
    if [ "$il" -gt 0 ]; then head -c "$il" | base64 -d > /tmp/.pl-stdin; i=/tmp/.pl-stdin; fi
    sh -c "$s" < "$i" 2>&1
    rc=$?
    # Builtins only until the kill converged: a failed fork ends a non-interactive dash.
    pl_kill
    [ "$i" = /dev/null ] || : > "$i"
    [ -d "/proc/$K" ] || exit 0
    pl_oom
    echo "PLEND$n $rc $o"
  done
}
exec 3<&0
pl_loop <&3 3<&- &
exec 3<&- sleep "$1" </dev/null >/dev/null 2>&1
"#;

/// [`LOOP_TEMPLATE`] with the cleanup functions sparing PID 1, the keeper and the loop.
pub static LOOP_SCRIPT: LazyLock<String> =
    LazyLock::new(|| LOOP_TEMPLATE.replace("@KILL@", &kill_functions(r#"1|"$K"|"$L""#)));

/// What the loop says once it runs: keeper pid, loop pid, OOM-kill baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    pub keeper: u32,
    pub loop_pid: u32,
    pub oom_kills: u64,
}

/// Parse a `PLHELLO K L O` line.
pub fn parse_hello(line: &str) -> Option<Hello> {
    let mut it = line.split_whitespace();
    (it.next()? == "PLHELLO").then_some(())?;
    Some(Hello {
        keeper: it.next()?.parse().ok()?,
        loop_pid: it.next()?.parse().ok()?,
        oom_kills: it.next()?.parse().ok()?,
    })
}

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The step as a shell script run by an intermediary `sh -c` (never `exec`'d: the command's
/// `$PPID` must be that intermediary, not the loop).
pub fn step_script(argv: &[String], workdir: &str, env: &[String]) -> String {
    // The go line: the intermediary shell runs, so the step started ([`MarkerScanner::started`]).
    let mut s = format!("printf 'PLGO\\n'\ncd {} || exit 126\n", quote(workdir));
    for kv in env {
        s.push_str(&format!("export {}\n", quote(kv)));
    }
    let words: Vec<String> = argv.iter().map(|a| quote(a)).collect();
    s.push_str(&words.join(" "));
    s.push_str("\nexit $?\n");
    s
}

/// One framed request for the loop.
pub fn request(nonce: &str, script: &str, stdin: Option<&[u8]>) -> Vec<u8> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let s = b64.encode(script);
    let i = stdin.map(|b| b64.encode(b)).unwrap_or_default();
    let mut out = format!("PL {nonce} {} {}\n", s.len(), i.len()).into_bytes();
    out.extend_from_slice(s.as_bytes());
    out.extend_from_slice(i.as_bytes());
    out
}

/// The end of a step as the loop reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct End {
    pub code: i64,
    pub oom_kills: u64,
}

/// Splits a step's output stream into the command's bytes and the loop's end marker, which
/// may arrive cut across frames. Bytes that could be the start of the marker are held back.
#[derive(Debug)]
pub struct MarkerScanner {
    marker: Vec<u8>,
    pending: Vec<u8>,
    /// Output bytes held until the go line is recognised (and dropped).
    head: Vec<u8>,
    go_checked: bool,
    started: bool,
}

/// The first line of every step's output, printed by its intermediary shell.
const GO_LINE: &[u8] = b"PLGO\n";

/// Room for ` <rc> <oom>\n` after the marker.
const MARKER_TAIL: usize = 48;

impl MarkerScanner {
    pub fn new(nonce: &str) -> Self {
        MarkerScanner {
            marker: format!("PLEND{nonce} ").into_bytes(),
            pending: Vec::new(),
            head: Vec::new(),
            go_checked: false,
            started: false,
        }
    }

    /// Whether the step produced any byte (its go line at least): false when the loop died
    /// before the step's shell ran, so nothing of it ran and it may be retried elsewhere.
    pub fn started(&self) -> bool {
        self.started
    }

    /// Feed bytes; returns the command's output that is certainly not marker, and the end
    /// once the full marker line arrived (bytes after it are dropped: nothing follows it).
    pub fn feed(&mut self, bytes: &[u8]) -> (Vec<u8>, Option<End>) {
        self.started |= !bytes.is_empty();
        if !self.go_checked {
            self.head.extend_from_slice(bytes);
            if self.head.len() < GO_LINE.len() && GO_LINE.starts_with(&self.head) {
                return (Vec::new(), None);
            }
            self.go_checked = true;
            let head = std::mem::take(&mut self.head);
            let rest = head.strip_prefix(GO_LINE).unwrap_or(&head);
            self.pending.extend_from_slice(rest);
        } else {
            self.pending.extend_from_slice(bytes);
        }
        if let Some(at) = find(&self.pending, &self.marker) {
            let rest = &self.pending[at + self.marker.len()..];
            if let Some(nl) = rest.iter().position(|&b| b == b'\n') {
                let line = String::from_utf8_lossy(&rest[..nl]).into_owned();
                let out = self.pending[..at].to_vec();
                self.pending.clear();
                let mut it = line.split_whitespace();
                let code = it.next().and_then(|c| c.parse().ok()).unwrap_or(-1);
                let oom_kills = it.next().and_then(|c| c.parse().ok()).unwrap_or(0);
                return (out, Some(End { code, oom_kills }));
            }
            if rest.len() > MARKER_TAIL {
                // Not our line after all (cannot happen with a fresh nonce); pass it on.
                let out = std::mem::take(&mut self.pending);
                return (out, None);
            }
            let out = self.pending[..at].to_vec();
            self.pending.drain(..at);
            return (out, None);
        }
        let keep = self.marker.len().min(self.pending.len());
        let out: Vec<u8> = self.pending.drain(..self.pending.len() - keep).collect();
        (out, None)
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A fresh nonce per request (128 random bits).
pub fn nonce() -> String {
    format!("{:032x}", rand::random::<u128>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_lines_parse() {
        assert_eq!(
            parse_hello("PLHELLO 7 9 2\n"),
            Some(Hello {
                keeper: 7,
                loop_pid: 9,
                oom_kills: 2
            })
        );
        assert_eq!(parse_hello("PLHELLO 7 x 2"), None);
        assert_eq!(parse_hello("hello 7 9 2"), None);
    }

    #[test]
    fn scripts_quote_every_word() {
        let s = step_script(
            &[
                "sh".into(),
                "-c".into(),
                "echo 'a' $HOME; kill $PPID".into(),
            ],
            "/work space",
            &["A=b c".into()],
        );
        assert_eq!(
            s,
            "printf 'PLGO\\n'\ncd '/work space' || exit 126\nexport 'A=b c'\n'sh' '-c' 'echo '\\''a'\\'' $HOME; kill $PPID'\nexit $?\n"
        );
    }

    #[test]
    fn requests_carry_no_control_bytes() {
        let r = request("ab", "printf '\\x10\\x11'", Some(&[0x10, 0x11, 0, b'\n']));
        let text = String::from_utf8(r).unwrap();
        let (head, body) = text.split_once('\n').unwrap();
        assert_eq!(head, "PL ab 24 8");
        assert_eq!(body.len(), 32);
        assert!(body.bytes().all(|b| b.is_ascii_graphic()));
    }

    #[test]
    fn the_go_line_is_dropped_and_means_started() {
        let mut s = MarkerScanner::new("n1");
        assert!(!s.started());
        // Cut inside the go line, as frames may be.
        assert_eq!(s.feed(b"PL"), (Vec::new(), None));
        let (out, end) = s.feed(b"GO\nhello\nPLENDn1 0 0\n");
        assert_eq!((out, end.map(|e| e.code)), (b"hello\n".to_vec(), Some(0)));
        assert!(s.started());

        // A stream that ends before any byte: the step never started.
        let s = MarkerScanner::new("n2");
        assert!(!s.started());
        // Output that does not begin with the go line is kept whole.
        let mut s = MarkerScanner::new("n3");
        let (out, _) = s.feed(b"PLGX and more output here");
        assert!(out.starts_with(b"PLGX") && s.started());
        assert!(step_script(&["true".into()], "/w", &[]).starts_with("printf 'PLGO\\n'\n"));
    }

    #[test]
    fn scanner_finds_a_marker_cut_across_frames() {
        let mut s = MarkerScanner::new("n1");
        let mut out = Vec::new();
        let mut end = None;
        for chunk in [&b"hello PL"[..], b"EN", b"Dn1 13", b"7 2", b"\n"] {
            let (o, e) = s.feed(chunk);
            out.extend(o);
            end = end.or(e);
        }
        assert_eq!(out, b"hello ");
        assert_eq!(
            end,
            Some(End {
                code: 137,
                oom_kills: 2
            })
        );
    }

    #[test]
    fn scanner_passes_lookalikes_through() {
        let mut s = MarkerScanner::new("n1");
        let (a, e1) = s.feed(b"PLENDn2 0 0\nPLEND");
        let (b, e2) = s.feed(b"x and more output that is long enough\n");
        assert!(e1.is_none() && e2.is_none());
        let (c, e3) = s.feed(b"PLENDn1 0 0\n");
        assert_eq!(
            e3,
            Some(End {
                code: 0,
                oom_kills: 0
            })
        );
        let all = [a, b, c].concat();
        assert_eq!(
            all,
            b"PLENDn2 0 0\nPLENDx and more output that is long enough\n"
        );
    }
}
