//! `rltrain study NAME`: runs a stability study ([`rltrain::studies`]), `--threads` runs at a time,
//! with a progress bar on a terminal (a line every tenth of the runs in a log), records where its
//! numbers came from (commit, command, machine) and prints the verdicts. SIGINT and SIGTERM finish the runs under way and keep
//! every finished run; the same command continues.

use std::io::IsTerminal;

use indicatif::ProgressBar;
use rlcli::{info, signals, Exit};
use rltrain::studies::{self, Progress, Provenance, Study, StudyOptions, STUDIES};

use crate::args::StudyArgs;

const STOP_MESSAGE: &str =
    "\nrltrain study: stopping: finishing the runs under way; finished runs are kept (signal again to quit now)\n";

/// Runs `rltrain study`.
pub fn run(args: StudyArgs) -> anyhow::Result<Exit> {
    let Some(name) = args.name.as_deref() else {
        for s in STUDIES {
            println!("{:<6} {}", s.name, s.claim);
        }
        return Ok(Exit::Success);
    };
    let study = Study::from_name(name).ok_or_else(|| anyhow::anyhow!("unknown study `{name}`"))?;
    one_thread_per_run();
    let seeds = args.seeds.unwrap_or(study.seeds);
    let out = args.out.clone().unwrap_or_else(|| studies::default_out(study, seeds, args.steps));
    let jobs = args.threads.count();
    let opts = StudyOptions {
        report_dir: args.report.clone().unwrap_or_else(|| out.clone()),
        out,
        seeds,
        steps: args.steps,
        jobs,
        provenance: Provenance { commit: studies::source_commit(), command: command_line(), machine: machine(jobs) },
        inject_nan_at_step: args.inject_nan_at_step,
    };
    let tty = std::io::stderr().is_terminal();
    let mut bar: Option<ProgressBar> = None;
    let (mut total_runs, mut stopped_early) = (0usize, 0usize);
    let mut on_progress = |p: Progress| match p {
        Progress::Start { runs, reused, outdated } => {
            total_runs = runs;
            let outdated = match outdated {
                0 => String::new(),
                n => format!(", {n} finished before with a configuration the code has changed since, trained again"),
            };
            info(format_args!(
                "rltrain study {name}: {runs} runs ({reused} finished before, reused{outdated}), {jobs} at a time, in {}",
                opts.out.display()
            ));
            if tty {
                bar = Some(crate::progress_bar(runs as u64, 0, " runs"));
            }
        }
        Progress::RunDone { done, total, run, acc_last } => match &bar {
            Some(b) => {
                b.set_position(done as u64);
                b.set_message(format!("{run}: acc {acc_last:.2}"));
            }
            None if done % (total / 10).max(1) == 0 || done == total => {
                info(format_args!("{done}/{total} runs; last: {run}, acc last 10 {acc_last:.2}"));
            }
            None => {}
        },
        Progress::RunFailed { run, error } => {
            stopped_early += 1;
            let warning = format!("{run} stopped early: {error}");
            match &bar {
                Some(b) => b.println(rlcli::warning_line(&warning)),
                None => rlcli::print_warning(&warning),
            }
        }
    };
    signals::install(STOP_MESSAGE);
    let outcome = studies::run_study(study, &opts, signals::stop_flag(), &mut on_progress)?;
    if let Some(b) = &bar {
        b.abandon();
    }
    if outcome.interrupted {
        info(format_args!(
            "stopped by {}: {} runs trained and kept in {}; run the same command to continue",
            signals::received_name(),
            outcome.trained,
            opts.out.display()
        ));
        return Ok(signals::received().unwrap_or(Exit::Interrupted));
    }
    for (f, r) in study.findings.iter().zip(&outcome.findings) {
        let interval = r.differences[f.metric.index()];
        let caveat = r.caveat.as_deref().map_or_else(String::new, |c| format!("  ({c})"));
        println!(
            "{:<28} {:<13} {:<22} {}{caveat}",
            f.id,
            r.verdict.as_str(),
            f.prediction(),
            f.metric.render(&interval)
        );
    }
    if let Some(report) = &outcome.report {
        info(format_args!("report: {}", report.display()));
    }
    if stopped_early > 0 {
        // Done, with a negative result: the report counts what the stopped runs logged.
        let runs = if stopped_early == 1 { "1 run" } else { &format!("{stopped_early} runs") };
        info(format_args!(
            "rltrain study {name}: {runs} of {} stopped early: their errors are the warnings above and `stopped` in {}; \
             the same command trains them again",
            total_runs,
            opts.report_dir.join(studies::SUMMARY_FILE).display()
        ));
        return Ok(Exit::Negative);
    }
    Ok(Exit::Success)
}

/// The study runs `--threads` runs side by side, each on one thread: the tiny model's matrices are too
/// small for rayon's threads to pay (one run alone: 7.9 s on one thread, 9.8 s on two; two runs
/// side by side on two threads each spent half their time in the kernel). Results do not depend
/// on it. `RAYON_NUM_THREADS` set by the user wins; rayon reads it when its pool is first used.
fn one_thread_per_run() {
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        std::env::set_var("RAYON_NUM_THREADS", "1");
    }
}

/// The command as typed, with the program called `rltrain` and arguments quoted for a shell.
fn command_line() -> String {
    let quote = |a: &str| {
        if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./,=:".contains(c)) {
            a.to_string()
        } else {
            format!("'{}'", a.replace('\'', r"'\''"))
        }
    };
    std::iter::once("rltrain".to_string())
        .chain(std::env::args().skip(1).map(|a| quote(&a)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// CPU model, the instruction-set extensions the matrix kernels choose by, thread settings.
fn machine(jobs: usize) -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let env = |k: &str| std::env::var(k).unwrap_or_else(|_| "unset".into());
    format!(
        "{model} ({}), {cpus} CPUs, {jobs} jobs, RAYON_NUM_THREADS={}, CANDLE_NUM_THREADS={}",
        simd_features(),
        env("RAYON_NUM_THREADS"),
        env("CANDLE_NUM_THREADS")
    )
}

#[cfg(target_arch = "x86_64")]
fn simd_features() -> String {
    let mut f = vec!["x86_64"];
    if std::arch::is_x86_feature_detected!("avx2") {
        f.push("avx2");
    }
    if std::arch::is_x86_feature_detected!("fma") {
        f.push("fma");
    }
    if std::arch::is_x86_feature_detected!("avx512f") {
        f.push("avx512f");
    }
    f.join("+")
}

#[cfg(not(target_arch = "x86_64"))]
fn simd_features() -> String {
    std::env::consts::ARCH.to_string()
}
