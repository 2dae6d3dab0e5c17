//! Command-line front end: parse, dispatch, map outcomes to documented exit codes.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "patchloop",
    version,
    about = "Repairs red builds in a locked-down sandbox"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Report the Docker daemon, the sandbox's seccomp probes, base images and leftovers.
    Doctor,
}

pub async fn main() -> ExitCode {
    let _cli = Cli::parse();
    ExitCode::SUCCESS
}
