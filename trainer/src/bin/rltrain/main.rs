//! `rltrain`: train a policy with verifiable rewards (`rltrain --objective dgpo ...`), list the
//! objectives (`rltrain objectives`) and the synthetic tasks (`rltrain tasks`), plot runs
//! (`rltrain plot RUN_DIR`), run the stability studies (`rltrain study NAME`).
//!
//! Exit status: `rlcli::EXIT_STATUS_HELP`. SIGINT (Ctrl-C) and SIGTERM (Slurm,
//! Kubernetes, `timeout`) finish the current step, save a checkpoint, say how to continue and
//! exit 130 or 143. Log lines go to standard error and are dropped when nobody reads them (a
//! closed `2>&1 | head`): training never stops for its log.

mod args;
mod study;

use rlcli::{info, signals, Exit};
use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use rltrain::config::{ResumeChange, TrainLayer};
use rltrain::objectives::Objective;
use rltrain::run_dir::RunDir;
use rltrain::tasks::{Task, TASKS};
use rltrain::{Event, TrainConfig};
use serde_json::Value;

use args::{Cli, Command, TrainArgs};

fn main() -> ExitCode {
    rlengine::element_wise_on_caller();
    let cli: Cli = rlcli::parse(args::command());
    rlcli::main(|| run(cli))
}

fn run(cli: Cli) -> anyhow::Result<Exit> {
    match cli.command {
        Some(Command::Objectives) => {
            print!("{}", Objective::render_table());
            println!("\nPaper presets (`--paper NAME`; a flag you give wins over the preset):\n");
            print!("{}", rltrain::presets::render_table());
            Ok(Exit::Success)
        }
        Some(Command::Tasks { name: None, .. }) => {
            for t in TASKS {
                println!("{:<10} {}", t.name, t.description);
            }
            Ok(Exit::Success)
        }
        Some(Command::Tasks { name: Some(name), size, seed }) => {
            print!("{}", Task::from_name(&name)?.to_jsonl(size, seed));
            Ok(Exit::Success)
        }
        Some(Command::Plot { run_dirs, keys, out }) => {
            let plotted = match run_dirs.as_slice() {
                [one] => rltrain::plot::plot_run(one)?,
                many => {
                    let runs: Vec<(String, std::path::PathBuf)> = many
                        .iter()
                        .map(|d| {
                            (
                                d.file_name()
                                    .map_or_else(|| d.display().to_string(), |n| n.to_string_lossy().into_owned()),
                                d.clone(),
                            )
                        })
                        .collect();
                    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
                    rltrain::plot::plot_compare(&runs, &keys, &out)?
                }
            };
            for s in &plotted.skipped {
                rlcli::print_warning(&format!("skipped {s}"));
            }
            for f in plotted.files {
                println!("{}", f.display());
            }
            Ok(Exit::Success)
        }
        Some(Command::Study(args)) => study::run(args),
        Some(Command::Train(args)) => train(*args),
        None => train(cli.train),
    }
}

/// Defaults (or the resumed run's config.json) < paper preset and model defaults < --config file
/// < flags.
fn resolve(args: &TrainArgs) -> anyhow::Result<TrainConfig> {
    let base = match &args.resume {
        Some(dir) => Some(
            RunDir { root: dir.clone() }.read_config().with_context(|| format!("cannot resume `{}`", dir.display()))?,
        ),
        None => None,
    };
    let mut layers = Vec::new();
    if let Some(path) = &args.config {
        let text = std::fs::read_to_string(path).with_context(|| format!("cannot read `{}`", path.display()))?;
        let file: Value = serde_json::from_str(&text).with_context(|| format!("`{}` is not JSON", path.display()))?;
        layers.push(TrainLayer::from_json(&file).with_context(|| format!("`{}`", path.display()))?);
    }
    let mut flags = args.settings.clone();
    if let Some(dir) = &args.resume {
        flags.run.out = Some(dir.clone());
    }
    layers.push(flags);
    let mut cfg = TrainConfig::resolve_layers(base.as_ref(), &layers)?;
    if let (Some(before), Some(dir)) = (&base, &args.resume) {
        let changes = cfg.changes_from(before)?;
        if !changes.is_empty() && !args.allow_changes {
            let list: Vec<String> = changes.iter().map(|(k, was, now)| format!("{k}: {was} -> {now}")).collect();
            anyhow::bail!(
                "--resume {}: these settings differ from the run's: {}; pass --allow-changes to continue with them \
                 (recorded in its config.json), or drop the flags",
                dir.display(),
                list.join("; ")
            );
        }
        let step = rltrain::checkpoint::latest_step(&RunDir { root: dir.clone() }.checkpoints())?.unwrap_or(0);
        for (field, from, to) in changes {
            cfg.changes.push(ResumeChange { step, field, from, to });
        }
    }
    Ok(cfg)
}

/// A terminal progress bar at `position` of `len`, `unit` after the count (` runs`), with elapsed
/// time, ETA and a message.
fn progress_bar(len: u64, position: u64, unit: &str) -> ProgressBar {
    let bar = ProgressBar::new(len).with_position(position);
    let template = format!("{{bar:30}} {{pos}}/{{len}}{unit} [{{elapsed_precise}}<{{eta_precise}}] {{msg}}");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style);
    }
    bar
}

/// What the first SIGINT or SIGTERM prints: the loop finishes its step, saves a checkpoint and
/// returns.
const STOP_MESSAGE: &str =
    "\nrltrain: stopping: finishing this step and saving a checkpoint (signal again to quit now)\n";

fn fmt(v: &Value, key: &str) -> String {
    match v.get(key).and_then(Value::as_f64) {
        Some(x) if x.abs() >= 100.0 || x == 0.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.3}"),
        None => "-".into(),
    }
}

fn train(args: TrainArgs) -> anyhow::Result<Exit> {
    let cfg = resolve(&args)?;
    let tty = std::io::stderr().is_terminal();
    let mut bar: Option<ProgressBar> = None;
    let log_every = cfg.run.log_every;
    let total = cfg.run.steps;
    let mut on_event = |e: Event| match e {
        Event::Start { first_step, total_steps, model, problems } => {
            info(format_args!(
                "rltrain: {} on {} ({} problems), model {model}, steps {}..{total_steps}, out {}",
                cfg.objective.objective.name,
                cfg.data.data,
                problems,
                first_step + 1,
                cfg.run.out.display()
            ));
            if tty {
                bar = Some(progress_bar(total_steps, first_step, ""));
            }
        }
        Event::Warning(w) => match &bar {
            Some(b) => b.println(rlcli::warning_line(w)),
            None => rlcli::print_warning(w),
        },
        Event::Step(v) => {
            let step = v.get("step").and_then(Value::as_u64).unwrap_or(0);
            let line = format!(
                "step {step}/{total} reward {} acc {} len {} entropy {} kl_old {} grad {} lr {} {}s/step",
                fmt(v, "reward/mean"),
                fmt(v, "acc"),
                fmt(v, "response_length/mean"),
                fmt(v, "entropy"),
                fmt(v, "kl/old_k3"),
                fmt(v, "grad_norm"),
                v.get("lr").and_then(Value::as_f64).map_or("-".into(), |x| format!("{x:.2e}")),
                fmt(v, "time/step_s"),
            );
            if let Some(b) = &bar {
                b.set_position(step);
                b.set_message(format!("reward {} acc {}", fmt(v, "reward/mean"), fmt(v, "acc")));
            }
            if log_every > 0 && (step.is_multiple_of(log_every) || step == total) {
                match &bar {
                    Some(b) => b.println(line),
                    None => info(line),
                }
            }
        }
        Event::Eval(v) => {
            let line = format!("eval {v}");
            match &bar {
                Some(b) => b.println(line),
                None => info(line),
            }
        }
        Event::Checkpoint(p) => {
            if let Some(b) = &bar {
                b.set_message(format!("saved {}", p.display()));
            }
        }
    };
    signals::install(STOP_MESSAGE);
    let outcome = rltrain::train_until(&cfg, args.resume.is_some(), signals::stop_flag(), &mut on_event)?;
    if let Some(b) = &bar {
        b.abandon();
    }
    if outcome.interrupted {
        info(format_args!(
            "stopped by {} after step {}: checkpoint in {}; continue with `rltrain --resume {}`",
            signals::received_name(),
            outcome.steps,
            outcome.checkpoint.as_ref().map_or_else(|| "-".into(), |p| p.display().to_string()),
            outcome.run_dir.display()
        ));
        return Ok(signals::received().unwrap_or(Exit::Interrupted));
    }
    info(format_args!("done: {} steps; metrics in {}", outcome.steps, outcome.run_dir.join("metrics.jsonl").display()));
    match outcome.skipped_data_lines.len() {
        0 => Ok(Exit::Success),
        n => {
            // Done, with a negative result: the run trained on fewer problems than the file holds.
            let lines = if n == 1 { "1 data line was" } else { &format!("{n} data lines were") };
            info(format_args!("{lines} skipped (file:line listed above)"));
            Ok(Exit::Negative)
        }
    }
}
