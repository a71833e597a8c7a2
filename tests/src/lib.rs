//! Cross-crate tests live in `tests/tests/`; this library only holds shared test helpers.

use std::path::PathBuf;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// The read-only shared folder beside the workspace (`../shared`).
pub fn shared_dir() -> PathBuf {
    workspace_root().parent().expect("workspace has a parent").join("shared")
}
