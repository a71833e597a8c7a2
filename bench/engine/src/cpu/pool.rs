//! A small persistent thread pool for the decoder's many short parallel loops (about 150 per
//! token), in the manner of ggml's: the calling thread takes part, and workers spin for a
//! while after each loop before they park, so the next loop starts without waking anyone.
//! rayon's `par_iter` from a thread outside its pool parks the caller and wakes workers through
//! the kernel at every loop, which costs tens of microseconds each time on a busy machine.
//!
//! One caller at a time uses the pool; a concurrent caller runs its loop on rayon instead.

use rayon::prelude::*;
use std::cell::UnsafeCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, TryLockError};
use std::time::{Duration, Instant};

/// How long an idle worker spins before it parks.
const SPIN: Duration = Duration::from_micros(300);

/// Bits of the state word per field: generation | task count | next task.
const FIELD: u32 = 20;
const MASK: u64 = (1 << FIELD) - 1;

/// The most tasks one loop may have (larger loops are split into chunks of tasks).
const MAX_TASKS: usize = MASK as usize;

type Job = *const (dyn Fn(usize) + Sync);

struct Shared {
    /// `generation << 40 | tasks << 20 | next task`: workers claim tasks by compare-and-swap,
    /// so a slow worker can never claim a task of a later loop by mistake.
    state: AtomicU64,
    /// The current loop's body, written by the caller before it publishes a generation and read
    /// by a worker only after it claimed a task of that generation.
    job: UnsafeCell<Option<Job>>,
    /// Tasks of the current loop not finished yet.
    pending: AtomicUsize,
    /// Set when a task panicked in a worker.
    panicked: AtomicBool,
    /// Parked workers wait here for a new generation.
    sleep: Mutex<()>,
    wake: Condvar,
}

// SAFETY: `job` is written only by the one caller that holds `Pool::caller`, while no worker can
// read it (every task of the previous loop has finished), and read by workers only between a
// successful claim and the decrement of `pending`, which the caller waits for.
unsafe impl Sync for Shared {}
// SAFETY: as for `Sync`: the job pointer is only dereferenced under the protocol above.
unsafe impl Send for Shared {}

fn generation(state: u64) -> u64 {
    state >> (2 * FIELD)
}

impl Shared {
    /// Claims and runs tasks of generation `gen` until there are none left.
    fn work(&self, gen: u64) {
        loop {
            let state = self.state.load(Ordering::Acquire);
            let (tasks, next) = ((state >> FIELD) & MASK, state & MASK);
            if generation(state) != gen || next >= tasks {
                return;
            }
            if self.state.compare_exchange_weak(state, state + 1, Ordering::AcqRel, Ordering::Acquire).is_err() {
                continue;
            }
            // SAFETY: a claimed task keeps the job alive (the caller waits for `pending`).
            let job = unsafe { (*self.job.get()).expect("a published job") };
            // SAFETY: as above: the job outlives every claimed task.
            let result = catch_unwind(AssertUnwindSafe(|| unsafe { (*job)(next as usize) }));
            if result.is_err() {
                self.panicked.store(true, Ordering::Release);
            }
            self.pending.fetch_sub(1, Ordering::AcqRel);
        }
    }

    fn worker(&self) {
        let mut seen = generation(self.state.load(Ordering::Acquire));
        loop {
            let start = Instant::now();
            let mut spins = 0u32;
            while generation(self.state.load(Ordering::Acquire)) == seen {
                std::hint::spin_loop();
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(256) && start.elapsed() > SPIN {
                    let guard = self.sleep.lock().unwrap_or_else(|e| e.into_inner());
                    let _guard = self
                        .wake
                        .wait_while(guard, |_| generation(self.state.load(Ordering::Acquire)) == seen)
                        .unwrap_or_else(|e| e.into_inner());
                    break;
                }
            }
            seen = generation(self.state.load(Ordering::Acquire));
            self.work(seen);
        }
    }
}

/// The pool: `threads - 1` workers plus the calling thread.
pub struct Pool {
    shared: Arc<Shared>,
    workers: usize,
    caller: Mutex<()>,
}

impl Pool {
    /// A pool that runs loops on `threads` threads (the caller and `threads - 1` workers).
    pub fn new(threads: usize) -> Self {
        let shared = Arc::new(Shared {
            state: AtomicU64::new(0),
            job: UnsafeCell::new(None),
            pending: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
        });
        let workers = threads.max(1) - 1;
        for i in 0..workers {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name(format!("rlvr-decode-{i}"))
                .spawn(move || shared.worker())
                .expect("spawning a decoding thread");
        }
        Pool { shared, workers, caller: Mutex::new(()) }
    }

    /// The process's pool, with as many threads as rayon's (`RAYON_NUM_THREADS`).
    pub fn global() -> &'static Pool {
        static POOL: OnceLock<Pool> = OnceLock::new();
        POOL.get_or_init(|| Pool::new(rayon::current_num_threads()))
    }

    /// Threads that run a loop.
    pub fn threads(&self) -> usize {
        self.workers + 1
    }

    /// Runs `f(0)`, ..., `f(n - 1)` across the pool's threads and returns when all are done.
    pub fn for_each(&self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        if n == 0 {
            return;
        }
        if n == 1 || self.workers == 0 {
            (0..n).for_each(f);
            return;
        }
        let _caller = match self.caller.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(e)) => e.into_inner(),
            Err(TryLockError::WouldBlock) => {
                (0..n).into_par_iter().for_each(f);
                return;
            }
        };
        for start in (0..n).step_by(MAX_TASKS) {
            let count = (n - start).min(MAX_TASKS);
            let chunk = |i: usize| f(start + i);
            self.run(count, &chunk);
        }
    }

    /// Runs `f(i, chunk)` for every `chunk_len`-long chunk `i` of `out` (the last may be shorter)
    /// across the pool's threads.
    pub fn for_each_chunk_mut<T: Send>(&self, out: &mut [T], chunk_len: usize, f: impl Fn(usize, &mut [T]) + Sync) {
        assert!(chunk_len > 0, "chunks must not be empty");
        let len = out.len();
        let base = SendPtr(out.as_mut_ptr());
        self.for_each(len.div_ceil(chunk_len), &|i| {
            let start = i * chunk_len;
            let n = chunk_len.min(len - start);
            // SAFETY: chunks are disjoint and inside `out`, which outlives the loop.
            let chunk = unsafe { std::slice::from_raw_parts_mut(base.get().add(start), n) };
            f(i, chunk)
        });
    }

    /// One loop of at most `MAX_TASKS` tasks; the caller holds `self.caller`.
    fn run(&self, n: usize, f: &(dyn Fn(usize) + Sync)) {
        let shared = &*self.shared;
        // SAFETY: the lifetime is erased only while this call runs: it returns after every
        // task (the only place workers dereference the job) has finished.
        let job: Job = unsafe { std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), Job>(f as *const _) };
        // SAFETY: no worker reads `job` now (see `Shared`'s Sync note).
        unsafe { *shared.job.get() = Some(job) };
        shared.pending.store(n, Ordering::Release);
        let gen = (generation(shared.state.load(Ordering::Acquire)) + 1) & MASK;
        shared.state.store(gen << (2 * FIELD) | (n as u64) << FIELD, Ordering::Release);
        {
            let _guard = shared.sleep.lock().unwrap_or_else(|e| e.into_inner());
            shared.wake.notify_all();
        }
        shared.work(gen);
        while shared.pending.load(Ordering::Acquire) != 0 {
            std::hint::spin_loop();
        }
        if shared.panicked.swap(false, Ordering::AcqRel) {
            resume_unwind(Box::new("a decoding task panicked"));
        }
    }
}

/// A pointer that tasks writing disjoint parts of one buffer share (the buffer outlives the loop).
pub(crate) struct SendPtr<T>(pub(crate) *mut T);
// SAFETY: users write disjoint elements only (see `for_each_chunk_mut` and `kernels::matmul`).
unsafe impl<T: Send> Sync for SendPtr<T> {}
// SAFETY: as for `Sync`: the pointer is only written through at disjoint elements.
unsafe impl<T: Send> Send for SendPtr<T> {}

impl<T> SendPtr<T> {
    pub(crate) fn get(&self) -> *mut T {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_task_runs_once_across_many_loops() {
        let pool = Pool::new(3);
        for n in [0, 1, 2, 7, 100, 1000] {
            let counts: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            for _ in 0..50 {
                pool.for_each(n, &|i| {
                    counts[i].fetch_add(1, Ordering::Relaxed);
                });
            }
            assert!(counts.iter().all(|c| c.load(Ordering::Relaxed) == 50), "n = {n}");
        }
    }

    #[test]
    fn concurrent_callers_all_finish() {
        let pool = Arc::new(Pool::new(2));
        let total = Arc::new(AtomicUsize::new(0));
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let (pool, total) = (Arc::clone(&pool), Arc::clone(&total));
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        pool.for_each(16, &|_| {
                            total.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(total.load(Ordering::Relaxed), 4 * 200 * 16);
    }

    #[test]
    fn chunks_cover_the_buffer() {
        let pool = Pool::new(2);
        let mut v = vec![0usize; 103];
        pool.for_each_chunk_mut(&mut v, 10, |i, chunk| chunk.iter_mut().for_each(|x| *x = i + 1));
        assert!(v.iter().enumerate().all(|(k, &x)| x == k / 10 + 1));
    }

    #[test]
    fn a_panicking_task_reaches_the_caller_and_the_pool_keeps_working() {
        let pool = Pool::new(2);
        let hit = catch_unwind(AssertUnwindSafe(|| {
            pool.for_each(64, &|i| {
                if i == 63 {
                    panic!("task 63");
                }
            })
        }));
        assert!(hit.is_err());
        let done = AtomicUsize::new(0);
        pool.for_each(10, &|_| {
            done.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(done.load(Ordering::Relaxed), 10);
    }
}
