//! Test helpers that need Docker (not part of the API).

/// A prepared image of the demo repository (through `sandbox::prepare`, as `patchloop demo`
/// does); removed on drop. `name` becomes part of the tag, so parallel tests do not share one.
pub struct DemoImage(pub String);

impl DemoImage {
    pub async fn prepare(name: &str) -> Result<DemoImage, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let repo = dir.path().join(name);
        crate::agent::demo::write_repo(&repo).map_err(|e| e.to_string())?;
        let docker = crate::sandbox::docker::connect()
            .await
            .map_err(|e| e.to_string())?;
        let opts = crate::sandbox::prepare::PrepareOptions {
            path: repo,
            ..Default::default()
        };
        let img = crate::sandbox::prepare::prepare(&docker, &opts)
            .await
            .map_err(|e| format!("preparing the demo image: {e}"))?;
        Ok(DemoImage(img.tag))
    }
}

impl Drop for DemoImage {
    fn drop(&mut self) {
        let _ = std::process::Command::new("docker")
            .args(["rmi", "-f", &self.0])
            .output();
    }
}
