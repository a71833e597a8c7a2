//! An input read on its own thread, so that `rlverify score` takes the lines as they arrive:
//! `producer | rlverify score - | consumer` scores and writes each line without waiting for a
//! whole chunk or for the end of the input, a file still goes in large parallel chunks, and a
//! signal is noticed while the input is silent.

use super::LineChunks;
use rlverify::input::Line;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// How often a wait for input looks at the stop flag (SIGINT, SIGTERM).
const STOP_POLL: Duration = Duration::from_millis(100);

/// What [`Stream::next_chunk`] found.
pub(super) enum Next {
    /// The lines that were ready, in order (at least one).
    Lines(Vec<Line>),
    /// The end of the input.
    End,
    /// `stop()` turned true while waiting for input.
    Stopped,
}

/// Bytes of lines read and not yet taken: the reader waits while they exceed the bound.
struct Held {
    bytes: Mutex<usize>,
    taken: Condvar,
    max: usize,
}

impl Held {
    /// Waits for room for `n` more bytes (one line always fits an empty queue), then counts them.
    fn add(&self, n: usize) {
        let mut held = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        while *held > 0 && *held + n > self.max {
            held = self.taken.wait(held).unwrap_or_else(|e| e.into_inner());
        }
        *held += n;
    }

    fn release(&self, n: usize) {
        let mut held = self.bytes.lock().unwrap_or_else(|e| e.into_inner());
        *held = held.saturating_sub(n);
        self.taken.notify_all();
    }
}

/// The lines of an input, read ahead on a thread within `max_lines` lines and `max_bytes` bytes.
pub(super) struct Stream {
    rx: Receiver<io::Result<Line>>,
    held: Arc<Held>,
    bytes_read: Arc<AtomicU64>,
}

impl Stream {
    pub fn spawn(mut lines: LineChunks, max_lines: usize, max_bytes: usize) -> io::Result<Stream> {
        let (tx, rx) = sync_channel(max_lines.max(1));
        let held = Arc::new(Held { bytes: Mutex::new(0), taken: Condvar::new(), max: max_bytes });
        let bytes_read = Arc::new(AtomicU64::new(0));
        let (reader_held, reader_bytes) = (held.clone(), bytes_read.clone());
        std::thread::Builder::new().name("rlverify-read".into()).spawn(move || loop {
            let next = lines.next_line();
            reader_bytes.store(lines.bytes_read, Ordering::Relaxed);
            let line = match next {
                Ok(Some(line)) => line,
                Ok(None) => return,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            reader_held.add(line.bytes.len());
            if tx.send(Ok(line)).is_err() {
                return;
            }
        })?;
        Ok(Stream { rx, held, bytes_read })
    }

    /// Bytes of the input read so far (for the progress bar).
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    /// The lines ready now, at most `max_lines` and about `max_bytes`. When none is ready,
    /// `idle` runs first (the caller flushes its output, so that a consumer downstream sees
    /// every result before the next line arrives) and then the wait, until a line comes, the
    /// input ends or `stop()`.
    pub fn next_chunk(
        &self,
        max_lines: usize,
        max_bytes: usize,
        idle: &mut dyn FnMut() -> io::Result<()>,
        stop: &dyn Fn() -> bool,
    ) -> io::Result<Next> {
        let first = match self.rx.try_recv() {
            Ok(line) => line,
            Err(TryRecvError::Disconnected) => return Ok(Next::End),
            Err(TryRecvError::Empty) => {
                idle()?;
                loop {
                    if stop() {
                        return Ok(Next::Stopped);
                    }
                    match self.rx.recv_timeout(STOP_POLL) {
                        Ok(line) => break line,
                        Err(RecvTimeoutError::Timeout) => continue,
                        Err(RecvTimeoutError::Disconnected) => return Ok(Next::End),
                    }
                }
            }
        };
        let mut chunk = vec![first?];
        let mut bytes = chunk[0].bytes.len();
        while chunk.len() < max_lines && bytes < max_bytes {
            match self.rx.try_recv() {
                Ok(line) => {
                    let line = line?;
                    bytes += line.bytes.len();
                    chunk.push(line);
                }
                Err(_) => break,
            }
        }
        self.held.release(bytes);
        Ok(Next::Lines(chunk))
    }
}
