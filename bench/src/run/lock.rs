//! One writer per run directory: `run.lock`, held with an OS file lock (released by the OS when
//! the process ends, even on a kill, so a stale file never blocks), holding the owner's pid, and
//! removed when the run ends.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// File name of the lock inside a run directory.
pub const LOCK_FILE: &str = "run.lock";

/// An exclusive lock on a run directory, held until dropped.
#[derive(Debug)]
pub struct RunLock {
    file: File,
    path: PathBuf,
}

/// The lock files this process holds: [`remove_held_locks`] removes them on a stop signal, when
/// the process exits without running the locks' destructors.
static HELD: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

impl Drop for RunLock {
    /// Removes `run.lock` while still holding it (a process that opened the old file and locks it
    /// afterwards sees it is no longer the file at that path, and starts over).
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        held().retain(|p| p != &self.path);
        let _ = self.file.unlock();
    }
}

/// Removes the `run.lock` files this process holds, for a process about to exit (a SIGINT or
/// SIGTERM handler): the OS frees the locks themselves at exit, and no file is left behind.
pub fn remove_held_locks() {
    for path in held().drain(..) {
        let _ = std::fs::remove_file(path);
    }
}

/// Why a run directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process (or another run in this one) holds the lock.
    #[error("{dir} is in use by another rlbench run ({owner}; lock file {lock}); wait for it to finish or pass another --out")]
    Busy {
        /// The run directory.
        dir: PathBuf,
        /// Its lock file.
        lock: PathBuf,
        /// Who holds it (process id and host).
        owner: String,
    },
    #[error("{path}: {source}")]
    /// The lock file could not be created or read.
    Io {
        /// The lock file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl RunLock {
    /// Take the lock of `dir` without waiting. The error names the directory and the pid written
    /// by the holder.
    pub fn acquire(dir: &Path) -> Result<RunLock, LockError> {
        let path = dir.join(LOCK_FILE);
        let io = |source| LockError::Io { path: path.clone(), source };
        let mut attempts = 0;
        let mut file = loop {
            // Not truncated on open: the holder's pid must stay readable for the error.
            let mut file =
                OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    let mut text = String::new();
                    let _ = file.read_to_string(&mut text);
                    let owner = match text.trim() {
                        "" => "pid unknown".to_string(),
                        pid => format!("pid {pid}"),
                    };
                    return Err(LockError::Busy { dir: dir.to_path_buf(), lock: path.clone(), owner });
                }
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
            // The holder before us may have removed the file between our open and our lock.
            attempts += 1;
            if is_at(&file, &path) || attempts > 16 {
                break file;
            }
        };
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(format!("{}\n", std::process::id()).as_bytes()).map_err(io)?;
        file.flush().map_err(io)?;
        held().push(path.clone());
        Ok(RunLock { file, path })
    }
}

/// Whether `file` is still the file at `path`.
#[cfg(unix)]
fn is_at(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

#[cfg(not(unix))]
fn is_at(_: &File, path: &Path) -> bool {
    path.exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_with_the_holders_pid_until_the_first_is_dropped() {
        let dir = std::env::temp_dir().join(format!("rlbench-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(std::fs::create_dir_all(&dir).is_ok());
        let first = RunLock::acquire(&dir);
        assert!(first.is_ok(), "{first:?}");
        let err = RunLock::acquire(&dir).map(|_| ()).map_err(|e| e.to_string());
        let pid = format!("pid {}", std::process::id());
        assert!(matches!(&err, Err(m) if m.contains(&pid) && m.contains(&dir.display().to_string())), "{err:?}");
        drop(first);
        assert!(!dir.join(LOCK_FILE).exists(), "removed on drop");
        assert!(RunLock::acquire(&dir).is_ok(), "released on drop");
    }
}
