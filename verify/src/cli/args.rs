//! The verifier's flags, defined once for the three tools: where the fields of a JSON row are
//! ([`FieldArgs`]) and how a verdict is read and rewarded ([`ScoringArgs`], [`AnswerArgs`],
//! [`FormatRewardArgs`]). Their values are the verifier's own ([`VerifierOption`]).

use crate::input::{FieldPath, FieldSpec};
use crate::options::VerifierOption;
use crate::{Config, Extraction, LastNumber, RewardKind, Truncated};
use clap::builder::PossibleValue;

/// clap reads the verifier's options by their [`VerifierOption`] names, with each value's help.
macro_rules! value_enum {
    ($($ty:ty),+) => {$(
        impl clap::ValueEnum for $ty {
            fn value_variants<'a>() -> &'a [Self] {
                <$ty as VerifierOption>::ALL
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                Some(PossibleValue::new(self.as_str()).help(self.help()))
            }
        }
    )+};
}

value_enum!(RewardKind, Extraction, LastNumber, Truncated);

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
/// [`rlcli::fill_default_notes`] and [`scoring_default_note`]).
#[derive(Debug, clap::Args, Clone, Copy, Default, PartialEq, Eq)]
#[command(next_help_heading = "Scoring")]
pub struct AnswerArgs {
    /// Which readings of a response count as its answer.
    ///
    /// Risk of `lenient`: a response that gives up on its last number is read as answering it,
    /// so a policy trained on that reward learns to end on a guess.
    #[arg(long, value_enum, value_name = "MODE")]
    pub extract: Option<Extraction>,
    /// When the last number of a response with no explicit answer is its answer (`rlverify
    /// extract`, which has no gold, never takes it under `auto`).
    #[arg(long, value_enum, value_name = "WHEN")]
    pub last_number: Option<LastNumber>,
    /// What a response cut off mid-derivation (no final-answer marker, an unfinished last line)
    /// answers.
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
    /// Reward encoding.
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
    rlcli::parse_f64_in(s, |_| true, "the weight is a finite number")
}

/// `[default: X]` of a scoring flag (by its clap id), from the verifier's defaults.
pub fn scoring_default_note(id: &str) -> Option<String> {
    let cfg = Config::default();
    let value = match id {
        "reward" => cfg.reward.as_str(),
        "extract" => cfg.extract.as_str(),
        "last_number" => cfg.last_number.as_str(),
        "truncated" => cfg.truncated.as_str(),
        _ => return None,
    };
    Some(format!("[default: {value}]"))
}

/// [`rlcli::fill_default_notes`] with the verifier's defaults ([`scoring_default_note`]) on `cmd` and
/// each of its subcommands.
pub fn with_scoring_defaults(cmd: clap::Command) -> clap::Command {
    let cmd = rlcli::fill_default_notes(cmd, &scoring_default_note);
    let names: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_string()).collect();
    names.into_iter().fold(cmd, |cmd, name| cmd.mut_subcommand(name, with_scoring_defaults))
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

    #[derive(Debug, Parser)]
    struct T {
        #[command(flatten)]
        scoring: ScoringArgs,
        #[command(flatten)]
        format: FormatRewardArgs,
        #[command(flatten)]
        threads: rlcli::ThreadsArg,
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
        let get = |args: &[&str]| {
            T::try_parse_from(args.iter().copied()).map(|t| (t.format.format_reward, t.threads.given()))
        };
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
