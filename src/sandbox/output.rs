//! Bounded capture of command output: keep the first and last bytes, count the rest.
//!
//! A hostile or careless command can print gigabytes, one line with no newline, or invalid
//! UTF-8. The harness keeps at most `cap` bytes (half head, half tail), never panics on the
//! content, and renders an explicit truncation marker so the model knows output is missing.

use std::collections::VecDeque;

/// Output captured with a byte cap: the head, the tail, and how much was dropped between.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CappedOutput {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    total: u64,
}

impl CappedOutput {
    /// Keep at most `cap` bytes: `cap / 2` from the start and the rest from the end.
    pub fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        CappedOutput {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_cap,
            tail_cap: cap - head_cap,
            total: 0,
        }
    }

    /// Append bytes; memory stays bounded by the cap whatever is pushed.
    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.head.len() < self.head_cap {
            let take = (self.head_cap - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if self.tail_cap == 0 || bytes.is_empty() {
            return;
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&bytes[bytes.len() - self.tail_cap..]);
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes);
    }

    /// Total bytes seen, kept or not.
    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    /// Bytes dropped between head and tail.
    pub fn omitted_bytes(&self) -> u64 {
        self.total - (self.head.len() + self.tail.len()) as u64
    }

    pub fn is_truncated(&self) -> bool {
        self.omitted_bytes() > 0
    }

    /// The kept bytes, head then tail, without a marker.
    pub fn kept_bytes(&self) -> Vec<u8> {
        let mut v = self.head.clone();
        v.extend(self.tail.iter());
        v
    }

    /// Lossy UTF-8 text with an explicit marker where bytes were dropped.
    pub fn render(&self) -> String {
        let head = String::from_utf8_lossy(&self.head);
        if !self.is_truncated() {
            let tail: Vec<u8> = self.tail.iter().copied().collect();
            return format!("{head}{}", String::from_utf8_lossy(&tail));
        }
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        format!(
            "{head}\n[... output truncated: {} of {} bytes omitted ...]\n{}",
            self.omitted_bytes(),
            self.total,
            String::from_utf8_lossy(&tail)
        )
    }
}

/// Truncate a string to at most `cap` bytes (head + tail on char boundaries) with the same marker.
pub fn truncate_text(text: &str, cap: usize) -> String {
    let mut out = CappedOutput::new(cap);
    out.push(text.as_bytes());
    out.render()
}

/// At most `n` characters of `s`, with `…` when cut (for values quoted in reports).
pub fn clip_chars(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The last `n` bytes of `s` or fewer, starting on a char boundary (the end of a command's
/// output is where its error usually is).
pub fn tail_chars(s: &str, n: usize) -> &str {
    let mut i = s.len().saturating_sub(n);
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_and_tail_respect_char_boundaries() {
        assert_eq!(clip_chars("ééé", 2), "éé…");
        assert_eq!(clip_chars("ab", 2), "ab");
        assert_eq!(tail_chars("ééé", 3), "é");
        assert_eq!(tail_chars("abc", 10), "abc");
    }

    #[test]
    fn small_output_is_kept_verbatim() {
        let mut o = CappedOutput::new(100);
        o.push(b"hello ");
        o.push(b"world");
        assert_eq!(o.render(), "hello world");
        assert!(!o.is_truncated());
        assert_eq!(o.total_bytes(), 11);
    }

    #[test]
    fn flood_keeps_head_and_tail_with_marker() {
        let mut o = CappedOutput::new(10);
        for _ in 0..1000 {
            o.push(b"abcdefghij");
        }
        o.push(b"END!!");
        let r = o.render();
        assert!(r.starts_with("abcde\n[... output truncated: 9995 of 10005 bytes omitted ...]\n"));
        assert!(r.ends_with("END!!"), "{r}");
        assert_eq!(o.kept_bytes().len(), 10);
    }

    #[test]
    fn single_huge_chunk_without_newline() {
        let mut o = CappedOutput::new(8);
        o.push(&vec![b'x'; 1 << 20]);
        assert_eq!(o.kept_bytes().len(), 8);
        assert_eq!(o.omitted_bytes(), (1 << 20) - 8);
    }

    #[test]
    fn invalid_utf8_renders_lossily() {
        let mut o = CappedOutput::new(6);
        o.push(&[0xff, 0xfe, b'a', 0xc3, 0x28, b'b', b'c', 0x80]);
        let r = o.render();
        assert!(r.contains('\u{fffd}'));
        assert!(r.contains("truncated"));
    }

    #[test]
    fn truncate_text_on_multibyte_is_safe() {
        let s = "é".repeat(100);
        let t = truncate_text(&s, 9);
        assert!(t.contains("omitted"));
    }

    #[test]
    fn zero_cap_keeps_nothing_but_counts() {
        let mut o = CappedOutput::new(0);
        o.push(b"abc");
        assert_eq!(o.total_bytes(), 3);
        assert!(o.render().contains("3 of 3 bytes omitted"));
    }
}
