//! Long fuzz runs of the verifier on stable Rust (cargo-fuzz needs nightly). The mutator and the
//! properties are in `tests/fuzzer/mod.rs` (module doc), shared with the short run of
//! `tests/fuzz.rs`.
//!
//! ```text
//! cargo run --release -p rlverify --example fuzz -- --seconds 600 --threads 2
//! cargo run --release -p rlverify --example fuzz -- --inputs 10000000 --threads 2 --out target/fuzz
//! cargo run --release -p rlverify --example fuzz -- --replay target/fuzz   # a saved file or a folder
//! cargo run --release -p rlverify --example fuzz -- --seed 1 --index 123456   # rebuild one case
//! ```
//!
//! Options: `--seconds N` (time budget, default 60), `--inputs N` (stop after N cases; the run
//! stops at whichever comes first), `--threads N` (default 1), `--seed S` (default 1), `--start I`
//! (first case index), `--out DIR` (failing inputs are saved there as JSON, default
//! `target/fuzz-failures`; at most 20 per property and call), `--max-ms MS` (the `slow` bound per
//! scoring call, default 500), `--shared DIR` (the read-only shared folder with the corpora;
//! `--no-shared` uses only the built-in seeds), `--fresh-every N` (score every Nth case again on a
//! fresh thread, default 256), `--hang-secs N` (a case still running after N s, default 20, is
//! reported as `hang` and saved; its worker is left behind and replaced).
//!
//! Case `i` of seed `s` is the same whatever the thread count, so an input that aborts the process
//! (which `catch_unwind` cannot catch, e.g. a stack overflow) is found again from the progress
//! lines with `--start` and `--index`. Exit status 1 when a property failed.

#[path = "../tests/fuzzer/mod.rs"]
mod fuzzer;

use fuzzer::{builtin_seeds, case, check_case, describe, from_json, to_json, CheckOptions, Failure, Seeds};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

struct Args {
    seconds: f64,
    inputs: u64,
    threads: usize,
    seed: u64,
    start: u64,
    out: PathBuf,
    max_ms: u64,
    shared: Option<PathBuf>,
    fresh_every: u64,
    hang_secs: u64,
    replay: Vec<PathBuf>,
    index: Option<u64>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        seconds: 60.0,
        inputs: u64::MAX,
        threads: 1,
        seed: 1,
        start: 0,
        out: PathBuf::from("target/fuzz-failures"),
        max_ms: 500,
        shared: Some(Seeds::shared_dir()),
        fresh_every: 256,
        hang_secs: 20,
        replay: Vec::new(),
        index: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--no-shared" {
            a.shared = None;
            continue;
        }
        if flag == "-h" || flag == "--help" {
            return Err(String::new());
        }
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |v: &str| v.parse::<u64>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--seconds" => a.seconds = value.parse().map_err(|e| format!("--seconds {value}: {e}"))?,
            "--inputs" => a.inputs = num(&value)?,
            "--threads" => a.threads = num(&value)?.max(1) as usize,
            "--seed" => a.seed = num(&value)?,
            "--start" => a.start = num(&value)?,
            "--out" => a.out = PathBuf::from(value),
            "--max-ms" => a.max_ms = num(&value)?,
            "--shared" => a.shared = Some(PathBuf::from(value)),
            "--fresh-every" => a.fresh_every = num(&value)?.max(1),
            "--hang-secs" => a.hang_secs = num(&value)?.max(1),
            "--replay" => a.replay.push(PathBuf::from(value)),
            "--index" => a.index = Some(num(&value)?),
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    Ok(a)
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            let usage = "usage: fuzz [--seconds N] [--inputs N] [--threads N] [--seed S] [--start I] [--out DIR] \
                         [--max-ms MS] [--shared DIR | --no-shared] [--fresh-every N] [--hang-secs N] [--replay PATH]... [--index I]";
            eprintln!("{e}\n{usage}");
            std::process::exit(if e.is_empty() { 0 } else { 2 });
        }
    };
    let opts = CheckOptions { max_call: Duration::from_millis(args.max_ms), fresh_thread: true };
    if !args.replay.is_empty() {
        std::process::exit(replay(&args.replay, &opts));
    }
    let mut seeds = builtin_seeds();
    if let Some(dir) = &args.shared {
        let n = seeds.load_shared(dir);
        eprintln!("seeds: {n} from {} plus the built-in ones", dir.display());
    }
    eprintln!("seed pool: {} answers, {} responses", seeds.answers.len(), seeds.responses.len());
    if let Some(i) = args.index {
        let c = case(&seeds, args.seed, i);
        println!("{}", to_json(&c, None, args.seed, i));
        let r = check_case(&c, &opts);
        println!("{}", r.as_ref().map_or_else(|f| f.to_string(), |_| "ok".to_string()));
        std::process::exit(i32::from(r.is_err()));
    }
    std::process::exit(run(&args, &seeds, &opts));
}

/// Re-run saved inputs; the exit status is 1 if any still fails.
fn replay(paths: &[PathBuf], opts: &CheckOptions) -> i32 {
    let mut files = Vec::new();
    for p in paths {
        match std::fs::read_dir(p) {
            Ok(entries) => files.extend(entries.filter_map(|e| e.ok().map(|e| e.path()))),
            Err(_) => files.push(p.clone()),
        }
    }
    files.sort();
    let mut failed = 0;
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "json")) {
        let saved = std::fs::read_to_string(f).ok().and_then(|t| serde_json::from_str(&t).ok());
        let Some(c) = saved.as_ref().and_then(from_json) else {
            eprintln!("{}: not a saved case", f.display());
            failed += 1;
            continue;
        };
        match check_case(&c, opts) {
            Ok(()) => println!("{}: ok", f.display()),
            Err(e) => {
                failed += 1;
                println!("{}: {e}\n  {}", f.display(), describe(&c));
            }
        }
    }
    println!("{} of {} saved inputs fail", failed, files.len());
    i32::from(failed > 0)
}

/// Save a failure unless 20 of the same kind were saved already.
fn save(out: &Path, saved: &Mutex<HashMap<String, u64>>, c: &fuzzer::Case, f: &Failure, seed: u64, i: u64) {
    let what = f.detail.split(':').next().unwrap_or("").chars().take(40).collect::<String>();
    let kind = format!("{}-{}", f.property, what.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
    let mut saved = saved.lock().unwrap();
    let n = saved.entry(kind.clone()).or_insert(0);
    *n += 1;
    if *n > 20 {
        return;
    }
    let _ = std::fs::create_dir_all(out);
    let path = out.join(format!("{kind}-s{seed}-i{i}.json"));
    if let Err(e) = std::fs::write(&path, to_json(c, Some(f), seed, i).to_string()) {
        eprintln!("cannot save {}: {e}", path.display());
    }
}

/// What one worker is doing: the case it is on and since when (for the hang watchdog).
struct Slot {
    index: Option<u64>,
    since: Instant,
    /// Declared hung: the worker stops when (if ever) its case returns, a new one took its place.
    abandoned: bool,
}

fn run(args: &Args, seeds: &Seeds, opts: &CheckOptions) -> i32 {
    const CHUNK: u64 = 64;
    let next = AtomicU64::new(args.start);
    let end = args.start.saturating_add(args.inputs);
    let done = AtomicU64::new(0);
    let failures = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let saved = Mutex::new(HashMap::new());
    let slots: Mutex<Vec<Slot>> = Mutex::new(Vec::new());
    let started = Instant::now();
    let budget = Duration::from_secs_f64(args.seconds);
    let hang = Duration::from_secs(args.hang_secs);
    eprintln!(
        "fuzzing: seed {}, start {}, threads {}, budget {} s, inputs {}",
        args.seed,
        args.start,
        args.threads,
        args.seconds,
        if args.inputs == u64::MAX { "unbounded".to_string() } else { args.inputs.to_string() }
    );
    let report = |c: &fuzzer::Case, f: &Failure, i: u64| {
        failures.fetch_add(1, Ordering::Relaxed);
        eprintln!("FAIL case {i}: {f}\n  {}", describe(c));
        save(&args.out, &saved, c, f, args.seed, i);
    };
    let work = |id: usize| {
        while !stop.load(Ordering::Relaxed) {
            let from = next.fetch_add(CHUNK, Ordering::Relaxed);
            if from >= end {
                break;
            }
            for i in from..(from + CHUNK).min(end) {
                {
                    let mut slots = slots.lock().unwrap();
                    if slots[id].abandoned {
                        return;
                    }
                    slots[id].index = Some(i);
                    slots[id].since = Instant::now();
                }
                let c = case(seeds, args.seed, i);
                let o = CheckOptions { fresh_thread: i % args.fresh_every == 0, ..opts.clone() };
                if let Err(f) = check_case(&c, &o) {
                    report(&c, &f, i);
                }
                done.fetch_add(1, Ordering::Relaxed);
            }
            if started.elapsed() >= budget {
                stop.store(true, Ordering::Relaxed);
            }
        }
        slots.lock().unwrap()[id].index = None;
    };
    let work = &work;
    let mut hung = 0;
    std::thread::scope(|s| {
        let new_slot = || {
            let mut slots = slots.lock().unwrap();
            slots.push(Slot { index: None, since: Instant::now(), abandoned: false });
            slots.len() - 1
        };
        for _ in 0..args.threads {
            let id = new_slot();
            s.spawn(move || work(id));
        }
        let mut last = Instant::now();
        while !stop.load(Ordering::Relaxed) && done.load(Ordering::Relaxed) < end - args.start {
            std::thread::sleep(Duration::from_millis(200));
            if started.elapsed() >= budget {
                stop.store(true, Ordering::Relaxed);
            }
            // A case running longer than the hang bound: report it (it is rebuilt from its
            // index), leave its worker behind and start another.
            let stuck: Vec<(usize, u64)> = {
                let mut slots = slots.lock().unwrap();
                let mut v = Vec::new();
                for (id, slot) in slots.iter_mut().enumerate() {
                    if let Some(i) = slot.index.filter(|_| !slot.abandoned && slot.since.elapsed() > hang) {
                        slot.abandoned = true;
                        v.push((id, i));
                    }
                }
                v
            };
            for (_, i) in stuck {
                hung += 1;
                let c = case(seeds, args.seed, i);
                let f =
                    Failure { property: "hang", detail: format!("score: still running after {} s", hang.as_secs()) };
                report(&c, &f, i);
                let id = new_slot();
                s.spawn(move || work(id));
            }
            if last.elapsed() >= Duration::from_secs(30) {
                last = Instant::now();
                let n = done.load(Ordering::Relaxed);
                let t = started.elapsed().as_secs_f64();
                eprintln!(
                    "[{t:.0} s] {n} inputs, {:.0}/s, {} failures, next index {}",
                    n as f64 / t,
                    failures.load(Ordering::Relaxed),
                    next.load(Ordering::Relaxed)
                );
            }
        }
        let code = summary(args, done.load(Ordering::Relaxed), started, failures.load(Ordering::Relaxed));
        if hung > 0 {
            // Hung workers never return: leave without joining them.
            println!("{hung} hung cases left running; exiting");
            std::process::exit(code);
        }
        code
    })
}

fn summary(args: &Args, n: u64, started: Instant, failures: u64) -> i32 {
    let t = started.elapsed().as_secs_f64();
    println!(
        "done: {n} inputs in {t:.1} s ({:.0} inputs/s, {} threads), {failures} failures{}",
        n as f64 / t,
        args.threads,
        if failures > 0 { format!(", saved under {}", args.out.display()) } else { String::new() }
    );
    i32::from(failures > 0)
}
