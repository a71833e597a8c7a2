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

/// A file under `../shared`, or `None` with a skip notice when it is missing. Under CI (`CI` set),
/// where `../shared` is part of the checkout, a missing file fails the test with a clear message
/// instead of passing silently.
pub fn shared_file(relative: &str) -> Option<PathBuf> {
    let path = shared_dir().join(relative);
    if path.exists() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!("{} is missing: CI runs beside the read-only `shared/` folder (see the README)", path.display());
    }
    eprintln!("skipped: {} not found (the read-only `shared/` folder beside the workspace)", path.display());
    None
}
