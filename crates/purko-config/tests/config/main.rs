//! purko-config's tests: every example manifest loads, each error says where and what, the
//! committed JSON Schema is the generated one, secrets resolve.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a broken fixture should fail the test loudly"
)]

mod errors;
mod examples;
mod loading;
mod schema;
mod secrets;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The workspace's root folder.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh folder under the system's temporary folder, removed on drop.
#[derive(Debug)]
pub struct Scratch {
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "purko-config-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self { dir }
    }

    /// Writes `text` to `name` (creating folders) and returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    /// `error` as text, with this folder shown as `<dir>`.
    pub fn show(&self, error: &purko_config::Error) -> String {
        error
            .to_string()
            .replace(&self.dir.display().to_string(), "<dir>")
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The smallest valid agent, named `name`.
pub fn agent_yaml(name: &str) -> String {
    format!("apiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata:\n  name: {name}\nspec: {{}}\n")
}
