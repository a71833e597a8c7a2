//! Test support shared by every crate of the workspace (a dev-dependency of each), written once:
//!
//! - the shared-data guard ([`shared_file`], [`shared_path`]): a file of the read-only `../shared`
//!   folder, or a skip notice when it is missing, and a failure under CI, where it is part of the
//!   checkout;
//! - the network gate ([`network_allowed`]): tests that download (the default model from PyPI)
//!   run when what they need is cached, under CI, or when `RLVR_NETWORK_TESTS=1`; otherwise they
//!   skip with a notice instead of failing offline;
//! - the closed-pipe check ([`assert_quiet_into_closed_pipe`]): a command whose reader goes away
//!   ends with status 0 and no panic message, as `rlcli::main` promises; and the full-disk
//!   check ([`assert_error_into_full_stdout`]): an `error:` line and status 2;
//! - the adversarial answers ([`adversarial_answers`]): inputs of about 4 KB built to recurse,
//!   which the verifier's parser tests and its speed example both run.
//!
//! The cross-crate tests themselves live in `tests/tests/`. This library depends on no crate of
//! the workspace, so it never builds in a cycle.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The hand adjudications of the verifier's corpora (`verify/ADJUDICATIONS.md`): one JSON line
/// per checked verdict. This crate owns the file; `verify/tests/corpora.rs` reads it from here.
pub const VERIFIER_ADJUDICATIONS: &str = include_str!("../verifier_adjudications.jsonl");

/// Where [`VERIFIER_ADJUDICATIONS`] lives in the repository (for messages).
pub const VERIFIER_ADJUDICATIONS_FILE: &str = "tests/verifier_adjudications.jsonl";

/// The environment variable that lets tests download what they need (`RLVR_NETWORK_TESTS=1`).
pub const NETWORK_VAR: &str = "RLVR_NETWORK_TESTS";

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// The read-only shared folder beside the workspace (`../shared`).
pub fn shared_dir() -> PathBuf {
    workspace_root().parent().expect("workspace has a parent").join("shared")
}

/// Whether the tests run under CI (`CI` set, as `.ci/run` does).
pub fn under_ci() -> bool {
    std::env::var_os("CI").is_some()
}

/// A file under `../shared`, or `None` with a skip notice when it is missing. Under CI (`CI` set),
/// where `../shared` is part of the checkout, a missing file fails the test with a clear message
/// instead of passing silently.
pub fn shared_file(relative: &str) -> Option<PathBuf> {
    shared_path(relative)
}

/// A file or folder under `../shared`, guarded as [`shared_file`].
pub fn shared_path(relative: &str) -> Option<PathBuf> {
    let path = shared_dir().join(relative);
    if path.exists() {
        return Some(path);
    }
    if under_ci() {
        panic!("{} is missing: CI runs beside the read-only `shared/` folder (see the README)", path.display());
    }
    skip(&format!("{} not found (the read-only `shared/` folder beside the workspace)", path.display()));
    None
}

/// Whether a test that needs the network for `what` should run: yes when it is available offline
/// (`cached`, e.g. the model is in the cache), under CI, or with `RLVR_NETWORK_TESTS=1`; otherwise
/// a skip notice and no.
pub fn network_allowed(what: &str, cached: bool) -> bool {
    let opted_in = std::env::var(NETWORK_VAR).is_ok_and(|v| !v.is_empty() && v != "0");
    if cached || under_ci() || opted_in {
        return true;
    }
    skip(&format!("{what} is not cached and would be downloaded; set {NETWORK_VAR}=1 to allow it"));
    false
}

/// What the tests on the default model need from the network (for [`network_allowed`]).
pub const DEFAULT_MODEL: &str = "the default model (SmolLM2-135M-Instruct, fetched from PyPI)";

/// Prints a test's skip notice.
pub fn skip(why: &str) {
    #[allow(clippy::print_stderr)] // A skipped test says why, where cargo test shows it.
    {
        eprintln!("skipped: {why}");
    }
}

/// Runs `command` with its standard output into a pipe that is closed after the first bytes (as
/// `command | head -c 16`), and checks that it ends with status 0 and without a panic message.
/// The command must print more than a pipe buffer holds. Returns its standard error.
pub fn assert_quiet_into_closed_pipe(command: &mut Command) -> String {
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).expect("some output");
    drop(stdout);
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// Runs `command` with its standard output on `/dev/full` (a full disk), and checks that it ends
/// with status 2 and an `error:` line, without a panic. Returns its standard error; `None` (with a
/// skip notice) where there is no `/dev/full`.
pub fn assert_error_into_full_stdout(command: &mut Command) -> Option<String> {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        skip("no /dev/full on this system");
        return None;
    };
    let out = command.stdout(full).stderr(Stdio::piped()).output().expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.lines().any(|l| l.starts_with("error: ")) && !stderr.contains("panicked"), "{stderr}");
    Some(stderr)
}

/// Answers of at most 4,000 bytes (the default answer cap) built to make a parser recurse or
/// retry: nesting, chains of prefix signs, postfix chains, divisions, unclosed groups, long sums
/// and lists. Each with a short name for reports.
pub fn adversarial_answers() -> Vec<(String, String)> {
    let n = 4000;
    let inputs: Vec<String> = vec![
        "(".repeat(n),
        format!("{}x{}", "(".repeat(n / 2), ")".repeat(n / 2)),
        format!("{}x{}", "{".repeat(n / 2), "}".repeat(n / 2)),
        "[".repeat(n),
        "\\{".repeat(n / 2),
        "|".repeat(n),
        "\\left(".repeat(n / 6),
        "\\lvert ".repeat(n / 7),
        "\\begin{pmatrix}".repeat(n / 15),
        "^".repeat(n),
        "x^".repeat(n / 2),
        "-".repeat(n),
        "- ".repeat(n / 2) + "x",
        "-(".repeat(n / 2),
        "a*-".repeat(n / 4) + "b",
        "a\\cdot -".repeat(n / 8) + "b",
        "\\pm".repeat(n / 3) + "x",
        "\\pm -".repeat(n / 5) + "x",
        "1/".repeat(n / 2) + "2",
        "\\div 2".repeat(n / 6),
        "1\\pm".repeat(n / 4) + "1",
        "\\frac".repeat(n / 5),
        "\\frac{".repeat(n / 6),
        "\\sqrt".repeat(n / 5),
        "\\sqrt{".repeat(n / 6),
        "\\sqrt[".repeat(n / 6),
        format!("{}x{}", "x^{".repeat(n / 4), "}".repeat(n / 4)),
        "x!".repeat(n / 2),
        "x".to_string() + &"!".repeat(n - 1),
        "5".to_string() + &"%".repeat(n - 1),
        "\\sin ".repeat(n / 5) + "x",
        "\\sin(".repeat(n / 5),
        "f(".repeat(n / 2),
        "\\boxed{".repeat(n / 7),
        "\\text{".repeat(n / 6),
        "x_{".repeat(n / 3),
        "\\bar{".repeat(n / 5),
        "2^{-".repeat(n / 4),
        "(1,".repeat(n / 3),
        "1,".repeat(n / 2) + "1",
        "a+".repeat(n / 2) + "a",
        "x=".repeat(n / 2) + "1",
        "\\{\\}".repeat(n / 4),
        "(((((((((((((((((((((((((((((((((((((((((((((((x".repeat(50),
        "1\\frac{".repeat(n / 8),
        "\\log_{".repeat(n / 6),
        "e^{".repeat(n / 3),
        format!("{}x{}@", "(".repeat(47), ")".repeat(47)).repeat(40),
        format!("{}x{}", "\\lvert ".repeat(47), "\\rvert ".repeat(47)),
        "{(".repeat(23) + &"x".repeat(3900),
    ];
    inputs
        .into_iter()
        .map(|mut s| {
            s.truncate(n);
            while !s.is_char_boundary(s.len()) {
                s.pop();
            }
            let name: String = s.chars().take(12).collect();
            (format!("{name} x{}", s.len()), s)
        })
        .collect()
}
