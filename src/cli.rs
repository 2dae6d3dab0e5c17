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
    /// Build base images (`images build [--offline]`).
    Images {
        #[command(subcommand)]
        command: crate::sandbox::image_cli::ImagesCommand,
    },
    /// Build the sandbox image of a checkout; prints its tag.
    Prepare(crate::sandbox::image_cli::PrepareArgs),
}

pub async fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Doctor => ExitCode::SUCCESS,
        Command::Images { command } => crate::sandbox::image_cli::images(command).await,
        Command::Prepare(args) => crate::sandbox::image_cli::prepare(args).await,
    }
}
