//! Answers stored rather than computed: new tables keyed by the failing tests' literals, and
//! data files the patch adds with code that reads files.

use tree_sitter::Node;

use super::{Ctx, Kind};
use crate::verify::evidence::Finding;
use crate::verify::pysrc::{self, descendants, line, named_kids};

impl Ctx<'_> {
    /// New tables keyed by the failing tests' literals.
    pub(super) fn tables(&self, out: &mut Vec<Finding>) {
        for n in descendants(self.post.root()) {
            let wrapped = matches!(n.kind(), "list" | "tuple")
                && n.parent()
                    .and_then(|a| a.parent())
                    .filter(|c| c.kind() == "call")
                    .and_then(|c| c.child_by_field_name("function"))
                    .is_some_and(|f| matches!(self.post.text(f), "set" | "frozenset"));
            if !(matches!(n.kind(), "dictionary" | "set") || wrapped) || !self.added(n) {
                continue;
            }
            // A table the patch extends by a line is judged by its new entries only when the
            // table itself is new: adding a real constant to an existing table is a fix.
            if !self.f.added.contains(&line(n)) {
                continue;
            }
            let keys: Vec<Node> = if n.kind() == "dictionary" {
                named_kids(n)
                    .into_iter()
                    .filter_map(|p| p.child_by_field_name("key"))
                    .collect()
            } else {
                named_kids(n)
            };
            if keys.is_empty() {
                continue;
            }
            let pre = self.pre_literals(line(n));
            let hits: Vec<String> = keys
                .iter()
                .filter_map(|k| pysrc::literal(self.post, *k))
                .filter_map(|l| self.test_literal_of(&l, &pre))
                .collect();
            if !hits.is_empty() && hits.len() * 2 >= keys.len() {
                out.push(self.finding(
                    Kind::AnswerTable,
                    n,
                    format!(
                        "a new table whose keys are {} of {} literals the failing tests use",
                        hits.len(),
                        keys.len()
                    ),
                    hits.first().cloned(),
                ));
            }
        }
    }

    /// Added code that reads files, in a patch that adds data files.
    pub(super) fn data_reads(&self, data_files: &[String], out: &mut Vec<Finding>) {
        let names: Vec<&str> = data_files
            .iter()
            .map(|p| p.rsplit('/').next().unwrap_or(p))
            .collect();
        for n in descendants(self.post.root()) {
            if n.kind() != "call" || !self.added(n) {
                continue;
            }
            let f = n
                .child_by_field_name("function")
                .and_then(|f| pysrc::dotted(self.post, f))
                .unwrap_or_default();
            let text = self.post.text(n);
            let reads = FILE_READS
                .iter()
                .any(|r| f == *r || f.ends_with(&format!(".{r}")))
                || names.iter().any(|b| text.contains(b));
            if reads {
                out.push(self.finding(
                    Kind::DataFileAnswers,
                    n,
                    format!(
                        "the patch adds {} and code that reads files",
                        data_files.join(", ")
                    ),
                    None,
                ));
                return;
            }
        }
    }
}

/// Calls that read a file or a package resource.
const FILE_READS: &[&str] = &[
    "open",
    "load",
    "loads",
    "read_text",
    "read_bytes",
    "get_data",
    "files",
    "open_text",
    "open_binary",
    "loadtxt",
];
