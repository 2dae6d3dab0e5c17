//! The `/patchloop fix [--model X]` comment command: a pure parser.
//!
//! Only the comment's first line counts, and it must be exactly the command: text quoted
//! from someone else (`> /patchloop fix`), inside a code fence or indented as code, or
//! anywhere but the first line starts nothing. The command is data: its arguments are never
//! handed to a shell.

/// A parsed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixCommand {
    /// `--model X`: overrides the configured model for this run.
    pub model: Option<String>,
}

/// Why a comment is not a command (for the one-line "ignored because …" notice).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotACommand {
    #[error("the first line is not `/patchloop fix`")]
    NoCommand,
    #[error("`/patchloop` needs the subcommand `fix` (usage: /patchloop fix [--model NAME])")]
    UnknownSubcommand(String),
    #[error("bad arguments to /patchloop fix: {0} (usage: /patchloop fix [--model NAME])")]
    BadArguments(String),
}

const PREFIX: &str = "/patchloop";

/// Parse a comment body. `Ok` only when the first line is the command.
pub fn parse(body: &str) -> Result<FixCommand, NotACommand> {
    // First line, with a trailing `\r` (Windows clients) removed. Leading whitespace means
    // indentation (a Markdown code block) or a continuation: not a command.
    let first = body.lines().next().unwrap_or("");
    let first = first.trim_end();
    let rest = match first.strip_prefix(PREFIX) {
        Some(r) => r,
        None => return Err(NotACommand::NoCommand),
    };
    // `/patchloopfix` or `/patchloop-bot` are other words, not our command.
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return Err(NotACommand::NoCommand);
    }
    let mut words = rest.split_whitespace();
    match words.next() {
        Some("fix") => {}
        Some(other) => return Err(NotACommand::UnknownSubcommand(other.to_string())),
        None => return Err(NotACommand::UnknownSubcommand(String::new())),
    }
    let mut model = None;
    while let Some(w) = words.next() {
        let value = if let Some(v) = w.strip_prefix("--model=") {
            v.to_string()
        } else if w == "--model" {
            match words.next() {
                Some(v) => v.to_string(),
                None => return Err(NotACommand::BadArguments("--model needs a value".into())),
            }
        } else {
            return Err(NotACommand::BadArguments(format!("unexpected `{w}`")));
        };
        if model.is_some() {
            return Err(NotACommand::BadArguments("--model given twice".into()));
        }
        if !valid_model_name(&value) {
            return Err(NotACommand::BadArguments(format!(
                "model name `{value}` may only contain letters, digits and . _ - : /"
            )));
        }
        // A scripted model is a test double that reads a file of the action container: the
        // repository's config may name one (tests do), a comment may not.
        if value.to_ascii_lowercase().starts_with("scripted:") {
            return Err(NotACommand::BadArguments(format!(
                "`{value}` is a scripted test double, not a model a comment can choose"
            )));
        }
        model = Some(value);
    }
    Ok(FixCommand { model })
}

/// Model names are passed to an HTTP API, never a shell; still, keep them boring so that
/// `$(id)` or `${{ }}` cannot ride along into logs or prompts.
fn valid_model_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_command() {
        assert_eq!(parse("/patchloop fix"), Ok(FixCommand { model: None }));
        assert_eq!(
            parse("/patchloop fix\r\nplease"),
            Ok(FixCommand { model: None })
        );
        assert_eq!(parse("/patchloop   fix  "), Ok(FixCommand { model: None }));
    }

    #[test]
    fn model_flag() {
        let want = Ok(FixCommand {
            model: Some("qwen2.5-coder:7b".into()),
        });
        assert_eq!(parse("/patchloop fix --model qwen2.5-coder:7b"), want);
        assert_eq!(parse("/patchloop fix --model=qwen2.5-coder:7b"), want);
        assert!(matches!(
            parse("/patchloop fix --model"),
            Err(NotACommand::BadArguments(_))
        ));
        assert!(matches!(
            parse("/patchloop fix --model a --model b"),
            Err(NotACommand::BadArguments(_))
        ));
        for body in [
            "/patchloop fix --model scripted:/proc/self/environ",
            "/patchloop fix --model=Scripted:x.yaml",
        ] {
            assert!(
                matches!(parse(body), Err(NotACommand::BadArguments(ref m)) if m.contains("test double")),
                "{body}"
            );
        }
    }

    #[test]
    fn shell_like_arguments_are_rejected_as_data() {
        for body in [
            "/patchloop fix $(id)",
            "/patchloop fix --model $(id)",
            "/patchloop fix --model ${{secrets.X}}",
            "/patchloop fix ; rm -rf /",
        ] {
            assert!(
                matches!(parse(body), Err(NotACommand::BadArguments(_))),
                "{body}"
            );
        }
    }

    #[test]
    fn not_first_line_quoted_fenced_or_indented() {
        for body in [
            "> /patchloop fix",
            "```\n/patchloop fix\n```",
            "    /patchloop fix",
            " /patchloop fix",
            "please\n/patchloop fix",
            "",
            "/patchloopfix",
            "/PATCHLOOP fix",
            "`/patchloop fix`",
        ] {
            assert_eq!(parse(body), Err(NotACommand::NoCommand), "{body:?}");
        }
    }

    #[test]
    fn other_subcommands() {
        assert_eq!(
            parse("/patchloop help"),
            Err(NotACommand::UnknownSubcommand("help".into()))
        );
        assert_eq!(
            parse("/patchloop"),
            Err(NotACommand::UnknownSubcommand(String::new()))
        );
    }
}
