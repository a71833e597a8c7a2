//! What the user typed. The training flags are the library's settings layer
//! ([`rltrain::config::TrainLayer`]): every one optional, so that it overrides the config file,
//! the paper preset and the defaults only when given. The `[default: ...]` notes of the help are
//! filled from `TrainConfig::default()` (and a pretrained model's defaults) when the command is
//! built ([`command`]); only the defaults that are rules (`true for dapo`) are written by hand.

use std::path::PathBuf;

use clap::{Args, CommandFactory, Parser, Subcommand};
use rlcli::ThreadsArg;
use rltrain::config::{pretrained_defaults, TrainConfig, TrainLayer, CPGD_WEIGHT_CAP};
use serde_json::Value;

/// RL with verifiable rewards on math: sample, grade with rlverify, optimise any objective.
#[derive(Debug, Parser)]
#[command(
    name = "rltrain",
    version,
    propagate_version = true,
    allow_negative_numbers = true,
    args_conflicts_with_subcommands = true,
    after_help = "Examples:\n  rltrain --objective dgpo --model tiny --data task:add-small --steps 100 --out runs/dgpo\n  rltrain --resume runs/dgpo --steps 200\n  rltrain objectives\n  rltrain study dgpo\n\nUse `rltrain help train` for every training flag."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub train: TrainArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Train a policy (the default command).
    #[command(allow_negative_numbers = true)]
    Train(Box<TrainArgs>),
    /// List every objective of the registry with its defaults (Markdown table).
    Objectives,
    /// List the synthetic tasks, or print one as JSONL.
    Tasks {
        /// Task to print (omit to list them).
        name: Option<String>,
        /// Problems to generate.
        #[arg(long, default_value_t = 200)]
        size: usize,
        /// Seed of the generator.
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Plot a run's metrics.jsonl as SVG charts (RUN_DIR/plots/), or overlay several runs.
    Plot {
        /// One run directory, or several to overlay (one line per run, labelled by folder name).
        #[arg(required = true, value_name = "RUN_DIR")]
        run_dirs: Vec<PathBuf>,
        /// Keys to overlay when several runs are given.
        #[arg(long, value_delimiter = ',', default_values_t = DEFAULT_COMPARE_KEYS.map(String::from))]
        keys: Vec<String>,
        /// Folder for the overlay charts (several runs only).
        #[arg(long, value_name = "DIR", default_value = "plots-compare")]
        out: PathBuf,
    },
    /// Run a stability study: one seed paper's findings from many seeds, judged with intervals.
    #[command(after_long_help = STUDY_HELP)]
    Study(StudyArgs),
}

const STUDY_HELP: &str =
    "Each study trains every arm (objective x reuse level) of its settings from seeds 0..N on the \
tiny model, then writes report.md (findings with paired differences over seeds, bootstrap intervals and a verdict), \
summary.json and plots/. A finished run is kept and reused: after Ctrl-C, run the same command to continue. The \
numbers depend only on the build and the CPU family, not on --threads or RAYON_NUM_THREADS.

Examples:
  rltrain study                      list the studies
  rltrain study dgpo                 its 16 seeds, report in runs/study-dgpo
  rltrain study dgpo --report trainer/docs/studies/dgpo
  rltrain study cfpo --seeds 2 --steps 5   a quick check (no verdicts under 8 seeds), in runs/study-cfpo-seeds2-steps5

A folder whose runs or report were made with other seeds or steps is refused before anything trains.";

/// Flags of `rltrain study`.
#[derive(Debug, Clone, Args)]
pub struct StudyArgs {
    /// The study, in any case (omit to list them).
    #[arg(ignore_case = true, value_parser = study_names())]
    pub name: Option<String>,
    /// Seeds per arm (0..N) [default: the study's own, 12-16]; a verdict needs at least 8.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub seeds: Option<u64>,
    /// Train every setting for N steps instead of its own (quick checks).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub steps: Option<u64>,
    /// Folder of the runs [default: runs/study-NAME, plus -seedsN/-stepsN for other settings than the study's].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Folder of report.md, summary.json and plots/ [default: --out].
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Testing hook: every run's step N has a non-finite loss and stops the run (checks that
    /// runs stopped early are reported).
    #[arg(long, value_name = "N", hide = true)]
    pub inject_nan_at_step: Option<u64>,
    // Runs trained at once, one thread each.
    #[command(flatten)]
    pub threads: ThreadsArg,
}

/// Keys `rltrain plot A B ...` overlays by default.
pub const DEFAULT_COMPARE_KEYS: [&str; 7] =
    ["reward/mean", "acc", "entropy", "clip_frac/total", "kl/old_k3", "grad_norm", "response_length/mean"];

/// Flags of `rltrain train`: how the run starts, and its settings (every group's layer of
/// [`rltrain::config`], where each setting and its flag are declared once).
#[derive(Debug, Clone, Default, Args)]
pub struct TrainArgs {
    /// JSON config file; flags given on the command line override it.
    #[arg(long, value_name = "FILE.json", help_heading = "Run")]
    pub config: Option<PathBuf>,
    /// Continue the run in RUN_DIR from its latest checkpoint (its config.json is the base).
    #[arg(long, value_name = "RUN_DIR", help_heading = "Run")]
    pub resume: Option<PathBuf>,
    /// With --resume: continue although settings differ from the run's (recorded in its config.json).
    #[arg(long, requires = "resume", help_heading = "Run")]
    pub allow_changes: bool,
    /// The settings given (the command line's layer).
    #[command(flatten)]
    pub settings: TrainLayer,
}

/// The command line, with the `[default: X]` note of every training flag filled from
/// `TrainConfig::default()`, plus `; Y for a pretrained model` where a pretrained model's default
/// differs ([`pretrained_defaults`]), so the help cannot drift from the config. Flags whose
/// default is a rule (`true for dapo`) say it in their doc comment.
pub fn command() -> clap::Command {
    let defaults = TrainConfig::default().settings();
    let (model, model_later) = (pretrained_defaults(100).settings(), pretrained_defaults(200).settings());
    let shown = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(_) | Value::Bool(_) => Some(v.to_string()),
        _ => None,
    };
    let note = move |id: &str| -> Option<String> {
        let value = match id {
            // `auto` in the config, a rule on the command line (`--reward` takes binary or signed).
            "reward" => return Some("[default: signed for dapo and dgpo, else binary]".into()),
            "cpgd_weight_cap" => Some(serde_json::json!(CPGD_WEIGHT_CAP)),
            _ => defaults.get(id).cloned(),
        };
        let value = shown(&value?)?;
        Some(match (model.get(id), model_later.get(id)) {
            // A pretrained model's default that scales with --steps (the warm-up: a tenth).
            (Some(a), Some(b)) if a != b => format!(
                "[default: {value} for tiny; steps/{} for a pretrained model]",
                100 / a.as_u64().unwrap_or(1).max(1)
            ),
            (Some(m), _) => {
                format!("[default: {value} for tiny; {} for a pretrained model]", shown(m).unwrap_or_default())
            }
            (None, _) => format!("[default: {value}]"),
        })
    };
    let cmd = rlcli::fill_default_notes(Cli::command(), &note);
    rlcli::finish_help(cmd.mut_subcommand("train", |train| rlcli::fill_default_notes(train, &note)))
}

/// The names `rltrain study` takes, in any case (a typo lists them, with the closest).
fn study_names() -> impl clap::builder::TypedValueParser<Value = String> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(rltrain::studies::STUDIES.iter().map(|s| s.name)).map(|n| n.to_lowercase())
}

#[cfg(test)]
mod tests {
    use rltrain::config::{pretrained_defaults, TrainConfig};
    use rlverify::cli::DeviceSpec;
    use serde_json::Value;

    use super::Cli;

    /// `X` of every `[default: X]` note in the help of `rltrain train`, by config key.
    fn help_defaults() -> Vec<(String, String)> {
        let mut cmd = super::command();
        cmd.build();
        let train = cmd.find_subcommand("train").expect("train subcommand");
        let mut out = Vec::new();
        for arg in train.get_arguments() {
            let help = arg.get_long_help().or(arg.get_help()).map(|h| h.to_string()).unwrap_or_default();
            if let Some(start) = help.find("[default: ") {
                let rest = &help[start + "[default: ".len()..];
                let note = rest.split(']').next().unwrap_or_default().to_string();
                out.push((arg.get_id().to_string(), note));
            }
        }
        out
    }

    fn same(note: &str, v: &Value) -> bool {
        match v {
            Value::Number(n) => note.parse::<f64>().ok() == n.as_f64(),
            Value::String(s) => note == s,
            Value::Bool(b) => note.parse::<bool>().ok() == Some(*b),
            _ => false,
        }
    }

    /// The device and the objective are checked where they are typed, with the flag named.
    #[test]
    fn device_and_objective_are_checked_at_parse_time() {
        use clap::Parser;
        let err = Cli::try_parse_from(["rltrain", "--device", "gpu0"]).unwrap_err().to_string();
        assert!(err.contains("--device") && err.contains("auto, cpu, cuda or cuda:N"), "{err}");
        let err = Cli::try_parse_from(["rltrain", "--objective", "dgop"]).unwrap_err().to_string();
        assert!(err.contains("--objective") && err.contains("did you mean `dgpo`"), "{err}");
        let ok = Cli::try_parse_from(["rltrain", "--objective", "dgpo", "--device", "cuda:1"]).expect("valid flags");
        let s = &ok.train.settings;
        assert_eq!((s.objective.objective.map(|o| o.name), s.run.device), (Some("dgpo"), Some(DeviceSpec::Cuda(1))));
    }

    /// Non-finite and out-of-range numbers are refused where they are typed, naming the flag:
    /// none becomes the default silently (JSON has no NaN: a `nan` flag used to serialise to
    /// `null`, which the layering skips, and was recorded as `default`).
    #[test]
    fn non_finite_and_out_of_range_numbers_are_refused_naming_the_flag() {
        use clap::Parser;
        for (flag, value) in [
            ("--lr", "nan"),
            ("--lr", "-1"),
            ("--clip-high", "inf"),
            ("--clip-low", "-1"),
            ("--dual-clip", "inf"),
            ("--grad-clip", "inf"),
            ("--temperature", "nan"),
            ("--temperature", "0"),
            ("--top-p", "1.5"),
            ("--adam-beta2", "1"),
            ("--kl-coef", "NaN"),
            ("--entropy-coef", "inf"),
            ("--tis-cap", "0.5"),
            ("--eval-temperature", "inf"),
            ("--min-lr-ratio", "2"),
        ] {
            for args in [vec!["rltrain", flag, value], vec!["rltrain", "train", flag, value]] {
                let err = Cli::try_parse_from(&args).map(|_| ()).expect_err(&format!("{args:?} accepted"));
                let text = err.to_string();
                assert!(text.contains(flag) && text.contains(value), "{args:?}: {text}");
            }
        }
        let err = Cli::try_parse_from(["rltrain", "--grad-clip", "inf"]).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains("0 turns gradient clipping off"), "{err}");
        let ok =
            Cli::try_parse_from(["rltrain", "--lr", "1e-6", "--grad-clip", "0", "--clip-high", "0.28"]).expect("valid");
        assert_eq!(
            (
                ok.train.settings.optim.lr,
                ok.train.settings.optim.grad_clip,
                ok.train.settings.objective.overrides.clip_high
            ),
            (Some(1e-6), Some(0.0), Some(0.28))
        );
    }

    /// The verifier's flags are `rlverify score`'s, and they reach the config under their keys.
    #[test]
    fn verifier_flags_are_rlverify_s() {
        use clap::Parser;
        let cli = Cli::try_parse_from([
            "rltrain",
            "--reward",
            "signed",
            "--extract",
            "lenient",
            "--last-number",
            "never",
            "--truncated",
            "lenient",
            "--format-reward=0.2",
        ])
        .expect("valid");
        let cfg = TrainConfig::resolve_layers(None, &[cli.train.settings]).expect("resolve");
        let v = cfg.verify_config().expect("verifier config");
        assert_eq!(
            (v.reward, v.extract, v.last_number, v.truncated, cfg.rollout.format.format_reward),
            (
                rlverify::RewardKind::Signed,
                rlverify::Extraction::Lenient,
                rlverify::LastNumber::Never,
                rlverify::Truncated::Lenient,
                0.2
            )
        );
        assert_eq!(cfg.sources.get("extract"), Some(&rltrain::config::Source::User));
        let json = serde_json::to_value(&cfg).expect("json");
        let rollout = &json["rollout"];
        assert_eq!((rollout["extract"].as_str(), rollout["reward"].as_str()), (Some("lenient"), Some("signed")));
        // Unset: the verifier's defaults, and the objective's reward encoding.
        let cli = Cli::try_parse_from(["rltrain", "--objective", "dgpo"]).expect("valid");
        let cfg = TrainConfig::resolve_layers(None, &[cli.train.settings]).expect("resolve");
        let v = cfg.verify_config().expect("verifier config");
        let d = rlverify::Config::default();
        assert_eq!((v.reward, v.extract, v.truncated), (rlverify::RewardKind::Signed, d.extract, d.truncated));
        assert_eq!(cfg.rollout.format.format_reward, 0.0);
    }

    /// Objective names are read in any case; a typo still gets "did you mean".
    #[test]
    fn objective_names_in_any_case() {
        use clap::Parser;
        for name in ["DGPO", "Dgpo", "dgpo", "Dr_GRPO"] {
            let cli = Cli::try_parse_from(["rltrain", "--objective", name]).expect(name);
            let objective = cli.train.settings.objective.objective.map(|o| o.name);
            assert_eq!(objective, Some(if name == "Dr_GRPO" { "dr-grpo" } else { "dgpo" }));
        }
        let err = Cli::try_parse_from(["rltrain", "--objective", "DGOP"]).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains("did you mean `dgpo`"), "{err}");
    }

    /// Names are read in any case, and a swapped pair of letters suggests the right name (`dpgo`
    /// is one edit from `dgpo`, two from `pg`).
    #[test]
    fn names_in_any_case_and_the_closest_suggestion() {
        use clap::Parser;
        use rltrain::config::Paper;
        use rltrain::kl::KlEstimator;
        let err = Cli::try_parse_from(["rltrain", "--objective", "dpgo"]).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains("did you mean `dgpo`"), "{err}");
        let cli =
            Cli::try_parse_from(["rltrain", "--paper", "CFPO", "--kl-estimator", "K3", "--advantage", "Group-Norm"])
                .expect("names in any case");
        let o = &cli.train.settings.objective;
        assert_eq!(
            (o.paper, o.overrides.kl_estimator, o.overrides.advantage.as_deref()),
            (Some(Paper::Cfpo), Some(KlEstimator::K3), Some("group-norm"))
        );
        match Cli::try_parse_from(["rltrain", "study", "DGPO"]).expect("a study in any case").command {
            Some(super::Command::Study(args)) => assert_eq!(args.name.as_deref(), Some("dgpo")),
            other => panic!("{other:?}"),
        }
    }

    /// `-j`, `-V`, `--format-reward=W` and the scoring flags are the other tools'.
    #[test]
    fn flags_are_the_other_tools() {
        assert_eq!(rlcli::shared_flag_problems(&super::command()), Vec::<String>::new());
    }

    /// Every option of the verifier's table (`rlverify::options::config_options`) is a flag of
    /// `rltrain` and `rltrain train`, with all its values, and a key of `config.json` that reads
    /// back: an option added in `rlverify::options` reaches the trainer with no edit here.
    #[test]
    fn every_verifier_option_is_a_flag_and_a_key() {
        let cmd = super::command();
        for path in [&[][..], &["train"]] {
            assert_eq!(
                rlverify::cli::verifier_flag_problems(&cmd, path, rlverify::cli::Takes::FormatReward),
                Vec::<String>::new()
            );
        }
        let defaults = TrainConfig::default().settings();
        let names = TrainConfig::names();
        for option in rlverify::options::config_options() {
            let key = option.key();
            assert!(names.contains(&key.as_str()), "{key} is no setting");
            for (value, _) in option.values() {
                let cfg = TrainConfig::from_json(&serde_json::json!({ &key: value }).to_string()).expect(value);
                let verify = cfg.verify_config().expect("verifier config");
                assert_eq!(option.get(&verify), value, "{key}");
                assert_eq!(cfg.settings()[&key], serde_json::json!(value), "{key}");
            }
            if key != "reward" {
                // `auto` stands for the objective's encoding; the others are the verifier's defaults.
                assert_eq!(defaults[&key], serde_json::json!(option.default_value()), "{key}");
            }
        }
        assert!(names.contains(&"format_reward"));
    }

    #[test]
    fn help_shows_the_real_defaults() {
        let defaults = TrainConfig::default().settings();
        let pretrained = pretrained_defaults(100).settings();
        let notes = help_defaults();
        assert!(notes.len() >= 30, "only {} notes found: {notes:?}", notes.len());
        for (key, note) in notes {
            // Conditional defaults ("true for dapo", "max-new-tokens/5 for dapo") name a rule, not a value.
            let unconditional = note.split(';').next().unwrap_or_default();
            let (value, condition) = match unconditional.split_once(" for ") {
                Some((v, c)) => (v.trim(), Some(c)),
                None => (unconditional.trim(), None),
            };
            // Objective overrides default to the registry; the one constant among them is c_ω.
            let cap = serde_json::json!(rltrain::config::CPGD_WEIGHT_CAP);
            let want = if key == "cpgd_weight_cap" { &cap } else { defaults.get(&key).unwrap_or(&Value::Null) };
            match (want, condition) {
                (Value::Null, Some(_)) => continue, // `None` = the rule in the note
                // The config's `auto`, which the command line spells as its rule.
                (_, Some(_)) if key == "reward" => continue,
                _ => assert!(same(value, want), "--{key}: help says {note:?}, the default is {want}"),
            }
            if let Some(alt) = note.split("; ").nth(1).and_then(|a| a.strip_suffix(" for a pretrained model")) {
                let model = pretrained.get(&key).unwrap_or(&Value::Null);
                let alt = if alt == "steps/10" { "10" } else { alt }; // of the 100 steps above
                assert!(
                    same(alt, model),
                    "--{key}: help says {alt:?} for pretrained models, the model default is {model}"
                );
            }
        }
    }
}
