//! The flags that mean the same thing in `rlverify`, `rlbench` and `rltrain`, defined once: where
//! the fields of a JSON row are ([`FieldArgs`]), how a verdict is read and rewarded
//! ([`ScoringArgs`], [`AnswerArgs`], [`FormatRewardArgs`]), how many threads (`-j`,
//! [`parse_threads`]), and the number parsers that refuse a value where it is typed
//! ([`parse_f64_in`], [`parse_positive`]).

use crate::input::{FieldPath, FieldSpec};
use crate::{Config, Extraction, LastNumber, RewardKind, Truncated};
use clap::ValueEnum;

/// Most worker threads `-j`/`--threads` accepts: more only adds scheduling and memory.
pub const MAX_THREADS: usize = 256;

/// `-j N`/`--threads N` of every tool: 1 to [`MAX_THREADS`], or 0 for one per core.
pub fn parse_threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n <= MAX_THREADS => Ok(n),
        Ok(_) => Err(format!("at most {MAX_THREADS} threads (leave the flag out for one per core)")),
        Err(e) => Err(format!("`{s}` is not a whole number: {e}")),
    }
}

/// A number, refused where it is typed when it is not finite or `ok` says it is out of range
/// (`range` says what is allowed). The flag is named by clap (`invalid value 'nan' for '--lr'`).
pub fn parse_f64_in(s: &str, ok: impl Fn(f64) -> bool, range: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && ok(v) => Ok(v),
        Ok(_) => Err(format!("`{s}` is out of range: {range}")),
        Err(e) => Err(format!("`{s}` is not a number: {e}")),
    }
}

/// A whole number of 1 or more.
pub fn parse_positive(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be 1 or more".to_string()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("`{s}` is not a whole number: {e}")),
    }
}

/// Where the fields are in each JSON line: the same flags for `rlverify score`, `rlverify serve`,
/// `rlverify bench` and `rlbench score` (the defaults are [`crate::input`]'s lists; a test keeps
/// this help in step with them).
#[derive(Debug, clap::Args, Clone, Default)]
#[command(next_help_heading = "Input fields")]
pub struct FieldArgs {
    /// Read the response(s) from this field (a dotted path, e.g. `outputs.0.text`).
    ///
    /// Default: the first of response, responses, completion, completions, generation,
    /// generations, output, outputs, choices, samples, model_output, code, text, prediction,
    /// predictions, pred, preds, messages (a chat: its last assistant message).
    #[arg(long, value_name = "PATH", value_parser = FieldPath::parse)]
    pub response_field: Option<FieldPath>,
    /// Read the gold answer from this field (a dotted path, e.g. `reward_model.ground_truth`).
    ///
    /// Default: the first of gold, answer, ground_truth, gt, target, reward_model.ground_truth,
    /// solution.
    #[arg(long, value_name = "PATH", value_parser = FieldPath::parse)]
    pub gold_field: Option<FieldPath>,
    /// Read the id from this field (a dotted path, e.g. `extra_info.index`); `rlbench score`
    /// groups the samples of a problem by it.
    ///
    /// Default: the first of id, idx, problem_id, unique_id, question_id, index, uid; rows
    /// without one are grouped by their prompt, problem, question, query or input.
    #[arg(long, value_name = "PATH", value_parser = FieldPath::parse)]
    pub id_field: Option<FieldPath>,
}

impl FieldArgs {
    /// The shared reader's field spec.
    pub fn spec(&self) -> FieldSpec {
        FieldSpec { response: self.response_field.clone(), gold: self.gold_field.clone(), id: self.id_field.clone() }
    }
}

/// Which readings of a response count as its answer: the verifier's options of every tool
/// (`rlverify score|check|extract|bench|serve`, `rlbench score|report|run|compare`, `rltrain`).
/// Unset flags keep the verifier's defaults ([`Config::default`]; the help says which, through
/// [`fill_default_notes`] and [`scoring_default_note`]).
#[derive(Debug, clap::Args, Clone, Copy, Default, PartialEq, Eq)]
#[command(next_help_heading = "Scoring")]
pub struct AnswerArgs {
    /// Which readings of a response count as its answer.
    ///
    /// `strict`: only a committed answer (a box, an answer tag, an answer phrase, `####`, a bold
    /// or choice final line, a concluding sentence, or a response that is only an answer);
    /// anything else is `no_answer`. `lenient` also takes the last math block, the last number
    /// (see `--last-number`) and an answer inside the reasoning: for base models that never mark
    /// one. Risk: a response that gives up on its last number is then read as answering it.
    #[arg(long, value_enum, value_name = "MODE")]
    pub extract: Option<Extraction>,
    /// When the last number of a response with no explicit answer is its answer.
    ///
    /// `auto`: with `--extract lenient`, when the gold answer is a plain number (the GSM8K
    /// convention; `rlverify extract`, which has no gold, never); `always`: also in strict mode;
    /// `never`.
    #[arg(long, value_enum, value_name = "WHEN")]
    pub last_number: Option<LastNumber>,
    /// What a response cut off mid-derivation (no final-answer marker, an unfinished last line)
    /// answers.
    ///
    /// `no-answer` gives it none; `lenient` takes its last math block or number, like a finished
    /// response without a marker.
    #[arg(long, value_enum, value_name = "MODE")]
    pub truncated: Option<Truncated>,
}

impl AnswerArgs {
    /// Sets the options given on `cfg`, leaving the others as they are.
    pub fn apply(&self, cfg: &mut Config) {
        if let Some(x) = self.extract {
            cfg.extract = x;
        }
        if let Some(x) = self.last_number {
            cfg.last_number = x;
        }
        if let Some(x) = self.truncated {
            cfg.truncated = x;
        }
    }

    /// The verifier's defaults with these options.
    pub fn config(&self) -> Config {
        let mut cfg = Config::default();
        self.apply(&mut cfg);
        cfg
    }
}

/// The flags that change verdicts and rewards: the reward encoding and [`AnswerArgs`].
#[derive(Debug, clap::Args, Clone, Copy, Default, PartialEq, Eq)]
#[command(next_help_heading = "Scoring")]
pub struct ScoringArgs {
    /// Reward encoding: `binary` is 1/0, `signed` is 1/-1.
    #[arg(long, value_enum, value_name = "KIND")]
    pub reward: Option<RewardKind>,
    /// How the answer is read.
    #[command(flatten)]
    pub answer: AnswerArgs,
}

impl ScoringArgs {
    /// The library configuration these flags describe (unset flags: the defaults).
    pub fn config(&self) -> Config {
        let mut cfg = self.answer.config();
        if let Some(r) = self.reward {
            cfg.reward = r;
        }
        cfg
    }
}

/// The CPGD format reward: `rlverify score|serve`, `rltrain`.
#[derive(Debug, clap::Args, Clone, Copy, Default, PartialEq)]
pub struct FormatRewardArgs {
    /// Add the CPGD format reward: `reward = accuracy + W * format_ok` (`--format-reward` alone: W = 0.5).
    ///
    /// A response is well formed when it is exactly `<think>...</think>` followed by
    /// `<answer>...</answer>` (whitespace aside, each tag once, neither part blank). Give a weight
    /// with `=`: `--format-reward=0.2` (so a following argument is never read as a weight).
    #[arg(long, value_name = "W", num_args = 0..=1, require_equals = true, default_missing_value = "0.5",
          help_heading = "Scoring", value_parser = parse_weight)]
    pub format_reward: Option<f64>,
}

fn parse_weight(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |_| true, "the weight is a finite number")
}

/// `[default: X]` of a scoring flag (by its clap id), from the verifier's defaults.
pub fn scoring_default_note(id: &str) -> Option<String> {
    fn name(v: impl ValueEnum) -> Option<String> {
        v.to_possible_value().map(|p| p.get_name().to_string())
    }
    let cfg = Config::default();
    let value = match id {
        "reward" => name(cfg.reward),
        "extract" => name(cfg.extract),
        "last_number" => name(cfg.last_number),
        "truncated" => name(cfg.truncated),
        _ => None,
    }?;
    Some(format!("[default: {value}]"))
}

/// Appends the note `note(id)` returns (`[default: X]`) to the help of every flag of `cmd` (not
/// of its subcommands: `cmd.mut_subcommand(name, ...)` for those), so that a default written
/// once in a library (`Config::default()`, `TrainConfig::default()`) is the one the help shows.
/// Hidden flags are left alone.
pub fn fill_default_notes(cmd: clap::Command, note: &dyn Fn(&str) -> Option<String>) -> clap::Command {
    cmd.mut_args(|arg| match note(arg.get_id().as_str()) {
        Some(n) if !arg.is_hide_set() => {
            let help = arg.get_help().map_or_else(String::new, |h| h.to_string());
            let long = arg.get_long_help().map(|h| h.to_string());
            let arg = arg.help(format!("{} {n}", help.trim_end_matches('.')).trim_start().to_string());
            match long {
                Some(long) => arg.long_help(format!("{long} {n}")),
                None => arg,
            }
        }
        _ => arg,
    })
}

/// [`fill_default_notes`] with the verifier's defaults ([`scoring_default_note`]) on `cmd` and
/// each of its subcommands.
pub fn with_scoring_defaults(cmd: clap::Command) -> clap::Command {
    let cmd = fill_default_notes(cmd, &scoring_default_note);
    let names: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_string()).collect();
    names.into_iter().fold(cmd, |cmd, name| cmd.mut_subcommand(name, with_scoring_defaults))
}

/// Where a command line departs from the flags the three tools share: `-j` is `--threads`
/// everywhere, `--format-reward` takes its weight after `=`, the scoring flags take the same
/// values, and every command answers `-V`. Each binary's tests call this on its command
/// (`Vec::is_empty` when all is well).
pub fn shared_flag_problems(cmd: &clap::Command) -> Vec<String> {
    let mut cmd = cmd.clone();
    cmd.build();
    let mut out = Vec::new();
    check_command(&cmd, cmd.get_name(), &mut out);
    out
}

fn check_command(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
    let values = |arg: &clap::Arg| -> Vec<String> {
        arg.get_possible_values().iter().map(|v| v.get_name().to_string()).collect()
    };
    let shared = |name: &str| -> Vec<String> {
        let names = |vs: &[clap::builder::PossibleValue]| vs.iter().map(|v| v.get_name().to_string()).collect();
        let pv = |v: Option<clap::builder::PossibleValue>| v.into_iter().collect::<Vec<_>>();
        match name {
            "reward" => {
                names(&RewardKind::value_variants().iter().flat_map(|v| pv(v.to_possible_value())).collect::<Vec<_>>())
            }
            "extract" => {
                names(&Extraction::value_variants().iter().flat_map(|v| pv(v.to_possible_value())).collect::<Vec<_>>())
            }
            "last-number" => {
                names(&LastNumber::value_variants().iter().flat_map(|v| pv(v.to_possible_value())).collect::<Vec<_>>())
            }
            "truncated" => {
                names(&Truncated::value_variants().iter().flat_map(|v| pv(v.to_possible_value())).collect::<Vec<_>>())
            }
            _ => Vec::new(),
        }
    };
    for arg in cmd.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        match long {
            "threads" if arg.get_short() != Some('j') => out.push(format!("{path} --threads has no -j")),
            "format-reward" if !arg.is_require_equals_set() => {
                out.push(format!("{path} --format-reward takes its weight without `=`"))
            }
            "reward" | "extract" | "last-number" | "truncated" if values(arg) != shared(long) => {
                out.push(format!("{path} --{long} takes {:?}, the other tools {:?}", values(arg), shared(long)))
            }
            _ => {}
        }
        if arg.get_short() == Some('j') && long != "threads" {
            out.push(format!("{path} -j is --{long}, not --threads"));
        }
    }
    if !cmd.get_arguments().any(|a| a.get_long() == Some("version") && a.get_short() == Some('V')) {
        out.push(format!("{path} has no -V/--version"));
    }
    // clap's own `help` subcommand takes no flags.
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        check_command(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{GOLD_FIELDS, ID_FIELDS, PROMPT_FIELDS, RESPONSE_FIELDS};
    use clap::{Args, Command, CommandFactory, Parser};

    /// The help lists each lookup order exactly as the reader uses it.
    #[test]
    fn help_lists_the_readers_field_orders() {
        let help = FieldArgs::augment_args(Command::new("t")).render_long_help().to_string();
        let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for list in [RESPONSE_FIELDS, GOLD_FIELDS, ID_FIELDS, PROMPT_FIELDS] {
            let (init, last) = list.split_at(list.len() - 1);
            let sep = if list == PROMPT_FIELDS { " or " } else { ", " };
            let written = format!("{}{sep}{}", init.join(", "), last[0]);
            assert!(help.contains(&written), "--help does not list `{written}`:\n{help}");
        }
    }

    /// The README's field table lists each lookup order as the reader uses it.
    #[test]
    fn readme_lists_the_readers_field_orders() {
        use crate::input::{SAMPLE_FIELDS, SUITE_FIELDS};
        let readme = include_str!("../../README.md");
        for list in [RESPONSE_FIELDS, GOLD_FIELDS, ID_FIELDS, PROMPT_FIELDS, SUITE_FIELDS, SAMPLE_FIELDS] {
            let written = list.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ");
            assert!(readme.contains(&format!("| {written} |")), "verify/README.md does not list {written}");
        }
    }

    /// The checker finds a `-j` that is not `--threads` and a command without `-V`.
    #[test]
    fn shared_flags_are_checked() {
        let good = clap::Command::new("t").version("1").arg(clap::Arg::new("threads").long("threads").short('j'));
        assert_eq!(shared_flag_problems(&good), Vec::<String>::new());
        let bad = clap::Command::new("t").arg(clap::Arg::new("jobs").long("jobs").short('j'));
        assert_eq!(shared_flag_problems(&bad), ["t -j is --jobs, not --threads", "t has no -V/--version"]);
    }

    #[derive(Debug, Parser)]
    struct T {
        #[command(flatten)]
        scoring: ScoringArgs,
        #[command(flatten)]
        format: FormatRewardArgs,
        #[arg(short = 'j', long, value_parser = parse_threads)]
        threads: Option<usize>,
    }

    /// Unset flags keep the verifier's defaults, which the help shows; set ones reach the config.
    #[test]
    fn scoring_flags_default_to_the_library_and_say_so() {
        let cmd = with_scoring_defaults(T::command());
        let help = cmd.clone().render_long_help().to_string();
        for needle in ["[default: binary]", "[default: strict]", "[default: auto]", "[default: no-answer]"] {
            assert!(help.contains(needle), "{needle} missing:\n{help}");
        }
        let t = T::try_parse_from(["t"]).expect("no flags");
        let (cfg, def) = (t.scoring.config(), Config::default());
        assert_eq!(
            (cfg.reward, cfg.extract, cfg.last_number, cfg.truncated),
            (def.reward, def.extract, def.last_number, def.truncated)
        );
        let t = T::try_parse_from(["t", "--reward", "signed", "--extract", "lenient", "--last-number", "never"])
            .expect("flags");
        let cfg = t.scoring.config();
        assert_eq!(
            (cfg.reward, cfg.extract, cfg.last_number),
            (RewardKind::Signed, Extraction::Lenient, LastNumber::Never)
        );
    }

    #[test]
    fn format_reward_and_thread_spellings() {
        let get = |args: &[&str]| T::try_parse_from(args.iter().copied()).map(|t| (t.format.format_reward, t.threads));
        assert_eq!(get(&["t"]).ok(), Some((None, None)));
        assert_eq!(get(&["t", "--format-reward"]).ok(), Some((Some(0.5), None)));
        assert_eq!(get(&["t", "--format-reward=0.2", "-j", "4"]).ok(), Some((Some(0.2), Some(4))));
        for (bad, flag) in [
            (&["t", "--format-reward=nan"][..], "--format-reward"),
            (&["t", "--format-reward=inf"], "--format-reward"),
            (&["t", "-j", "100000"], "--threads"),
        ] {
            let err = get(bad).expect_err("refused").to_string();
            assert!(err.contains(flag), "{err}");
        }
    }
}
