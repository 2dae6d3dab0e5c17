use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    patchloop::cli::main().await
}
