//! The commit a report names: that of this project's own source, read with git in the folder the
//! binary was built from (`CARGO_MANIFEST_DIR`), never the current directory's, which may be
//! another repository or none.

use std::path::Path;
use std::process::Command;

/// The short commit of the source this binary was built from, `+modified` when a Rust source, a
/// manifest or the lock file differs from it (the files that decide the numbers); `unknown` with
/// the reason when that folder is gone or not a git checkout.
pub fn source_commit() -> String {
    commit_of(Path::new(env!("CARGO_MANIFEST_DIR")))
}

/// The commit checked out at `dir`, as [`source_commit`] describes it.
fn commit_of(dir: &Path) -> String {
    let git = |args: &[&str]| Command::new("git").arg("-C").arg(dir).args(args).output().ok();
    match git(&["rev-parse", "--short=12", "HEAD"]) {
        Some(o) if o.status.success() => {
            let hash = String::from_utf8_lossy(&o.stdout).trim().to_string();
            // `:/` roots each pattern at the top of the checkout, whatever `dir` is inside it.
            let modified = git(&["diff", "--quiet", "HEAD", "--", ":/*.rs", ":/*.toml", ":/Cargo.lock"])
                .is_some_and(|o| o.status.code() == Some(1));
            if modified {
                format!("{hash}+modified")
            } else {
                hash
            }
        }
        _ => format!("unknown (the source folder `{}` is not a git checkout)", dir.display()),
    }
}
