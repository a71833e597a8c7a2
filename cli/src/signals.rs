//! SIGINT (Ctrl-C) and SIGTERM (Slurm, Kubernetes, `timeout`, `kill`) ask a long command to stop
//! where its work can be kept: the first one sets a flag ([`stop_requested`]) and prints the
//! command's message; the work in progress finishes and is saved; the command then exits with
//! [`Exit::Interrupted`] (130) or [`Exit::Terminated`] (143), whichever signal came
//! ([`received`]). A second signal ends the process at once.

use super::Exit;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicUsize, Ordering};

/// Set by the first SIGINT or SIGTERM.
static STOP: AtomicBool = AtomicBool::new(false);
/// The signal that set [`STOP`] (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// The message the handler writes (a `'static` byte string, so the handler only reads it).
static MESSAGE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static MESSAGE_LEN: AtomicUsize = AtomicUsize::new(0);

/// The flag the first SIGINT or SIGTERM sets (for loops that poll it, e.g. `rltrain::train_until`).
pub fn stop_flag() -> &'static AtomicBool {
    &STOP
}

/// Whether a stop was asked for.
pub fn stop_requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// The exit status of the signal that asked to stop: [`Exit::Interrupted`] for SIGINT,
/// [`Exit::Terminated`] for SIGTERM; `None` when no signal came.
pub fn received() -> Option<Exit> {
    #[cfg(unix)]
    match SIGNAL.load(Ordering::SeqCst) {
        libc::SIGINT => return Some(Exit::Interrupted),
        libc::SIGTERM => return Some(Exit::Terminated),
        _ => {}
    }
    STOP.load(Ordering::SeqCst).then_some(Exit::Interrupted)
}

/// The signal's name, for messages: `SIGINT`, `SIGTERM`.
pub fn received_name() -> &'static str {
    match received() {
        Some(Exit::Terminated) => "SIGTERM",
        _ => "SIGINT",
    }
}

#[cfg(unix)]
extern "C" fn on_signal(signal: libc::c_int) {
    if STOP.swap(true, Ordering::SeqCst) {
        return;
    }
    SIGNAL.store(signal, Ordering::SeqCst);
    let (ptr, len) = (MESSAGE.load(Ordering::SeqCst), MESSAGE_LEN.load(Ordering::SeqCst));
    // SAFETY: write(2) and signal(2) are async-signal-safe; `ptr` is null or the start of a
    // `'static` byte string of `len` bytes (set before the handler was installed). Restoring the
    // default actions makes a second signal end the process at once.
    unsafe {
        if !ptr.is_null() {
            libc::write(2, ptr.cast_const().cast(), len);
        }
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
    }
}

/// Routes the first SIGINT or SIGTERM to [`stop_flag`], writing `message` to standard error
/// when it comes (what happens now, and that a second signal quits at once).
pub fn install(message: &'static str) {
    MESSAGE.store(message.as_ptr().cast_mut(), Ordering::SeqCst);
    MESSAGE_LEN.store(message.len(), Ordering::SeqCst);
    #[cfg(unix)]
    // SAFETY: `on_signal` only touches atomics and calls async-signal-safe functions.
    unsafe {
        let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}
