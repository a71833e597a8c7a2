//! The verifier's flags, defined once for the three tools: where the fields of a JSON row are
//! ([`FieldArgs`]); how a verdict is read and rewarded is [`crate::options`]'
//! ([`ScoringArgs`](crate::options::ScoringArgs), [`AnswerArgs`],
//! [`FormatRewardArgs`](crate::options::FormatRewardArgs)), with their defaults in the help
//! ([`with_scoring_defaults`]) and a check that a command takes them all
//! ([`verifier_flag_problems`]).

use crate::input::{FieldPath, FieldSpec};
use crate::options::{config_options, AnswerArgs, ConfigOption, REWARD};

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

/// `[default: X]` of a scoring flag (by its clap id), from the verifier's defaults.
pub fn scoring_default_note(id: &str) -> Option<String> {
    let option = config_options().find(|o| o.key() == id)?;
    Some(format!("[default: {}]", option.default_value()))
}

/// [`rlcli::fill_default_notes`] with the verifier's defaults ([`scoring_default_note`]) on `cmd` and
/// each of its subcommands.
pub fn with_scoring_defaults(cmd: clap::Command) -> clap::Command {
    let cmd = rlcli::fill_default_notes(cmd, &scoring_default_note);
    let names: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_string()).collect();
    names.into_iter().fold(cmd, |cmd, name| cmd.mut_subcommand(name, with_scoring_defaults))
}

/// Which of the verifier's options a command takes (each takes the ones before): the options
/// that decide a verdict ([`AnswerArgs`]); also the reward encoding; also the format reward.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Takes {
    /// [`AnswerArgs`] (`rlverify extract`, `rlbench`).
    Answer,
    /// And `--reward` (`rlverify check|bench`).
    Reward,
    /// And `--format-reward` (`rlverify score|serve`, `rltrain`).
    FormatReward,
}

/// Where the command at `path` of `cmd` (`&["score"]`; `&[]` for `cmd` itself) departs from the
/// verifier's option table: an option of [`AnswerArgs::OPTIONS`] (and as `takes` says, the
/// reward encoding and the format reward) without its flag, hidden, or without one of the
/// option's values. Empty when it takes them all. Each tool's tests call it on its commands, so
/// that an option added to the table in the verifier is known to reach every tool.
pub fn verifier_flag_problems(cmd: &clap::Command, path: &[&str], takes: Takes) -> Vec<String> {
    let mut cmd = cmd.clone();
    cmd.build();
    let name = std::iter::once(cmd.get_name()).chain(path.iter().copied()).collect::<Vec<_>>().join(" ");
    let mut sub = &cmd;
    for step in path {
        match sub.find_subcommand(step) {
            Some(s) => sub = s,
            None => return vec![format!("{name}: no such command")],
        }
    }
    let find = |flag: &str| sub.get_arguments().find(|a| a.get_long() == Some(flag) && !a.is_hide_set());
    let mut out = Vec::new();
    let table: Vec<&dyn ConfigOption> =
        (takes >= Takes::Reward).then_some(REWARD).into_iter().chain(AnswerArgs::OPTIONS.iter().copied()).collect();
    for option in table {
        let Some(arg) = find(option.flag()) else {
            out.push(format!("{name} has no --{}", option.flag()));
            continue;
        };
        let taken: Vec<String> = arg.get_possible_values().iter().map(|v| v.get_name().to_string()).collect();
        for (value, _) in option.values() {
            if !taken.iter().any(|t| t == value) {
                out.push(format!("{name} --{} does not take `{value}`", option.flag()));
            }
        }
    }
    if takes == Takes::FormatReward && find("format-reward").is_none() {
        out.push(format!("{name} has no --format-reward"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::{GOLD_FIELDS, ID_FIELDS, PROMPT_FIELDS, RESPONSE_FIELDS};
    use crate::options::{FormatRewardArgs, ScoringArgs};
    use crate::{Config, Extraction, LastNumber, RewardKind};
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
