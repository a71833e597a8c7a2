//! The help every command ends with, the parse that adds hints to clap's errors, and the checks
//! that keep the three command lines alike.

use crate::EXIT_STATUS_HELP;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::Command;
use std::ffi::OsString;

/// `cmd` with the exit-status table at the end of its `--help` and of every subcommand's: after
/// the command's own closing text (its examples), which `--help` still shows. Each binary's
/// `command()` passes through here; [`shared_flag_problems`] checks that it did.
pub fn finish_help(cmd: Command) -> Command {
    let closing = cmd.get_after_long_help().or(cmd.get_after_help()).map(|h| h.to_string());
    let cmd = match closing {
        Some(text) if text.ends_with(EXIT_STATUS_HELP) => cmd,
        Some(text) => cmd.after_long_help(format!("{}\n\n{EXIT_STATUS_HELP}", text.trim_end())),
        None => cmd.after_long_help(EXIT_STATUS_HELP),
    };
    let names: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_string()).collect();
    names.into_iter().fold(cmd, |cmd, name| cmd.mut_subcommand(name, finish_help))
}

/// Parses the process's arguments with `cmd` into `T`. `--help` and `--version` print and exit
/// 0, usage errors exit 2 as clap prints them, with a tip when a value was typed after a space
/// to a flag that takes it only after `=`.
pub fn parse<T: clap::FromArgMatches>(cmd: Command) -> T {
    let args: Vec<OsString> = std::env::args_os().collect();
    match cmd.clone().try_get_matches_from(&args).and_then(|m| T::from_arg_matches(&m)) {
        Ok(parsed) => parsed,
        Err(mut err) => {
            if let Some(tip) = equals_tip(&cmd, &args) {
                let mut tips = match err.get(ContextKind::Suggested) {
                    Some(ContextValue::StyledStrs(tips)) => tips.clone(),
                    _ => Vec::new(),
                };
                tips.push(tip.into());
                err.insert(ContextKind::Suggested, ContextValue::StyledStrs(tips));
            }
            err.exit()
        }
    }
}

/// `--format-reward=0.2` for `--format-reward 0.2`: a flag whose value is optional takes it only
/// after `=` (so that a following argument is never read as its value), and a number after a
/// space is then an unexpected argument. The tip for the first such pair in `args`, if any.
fn equals_tip(cmd: &Command, args: &[OsString]) -> Option<String> {
    let mut cmd = cmd.clone();
    cmd.build();
    let mut flags = Vec::new();
    optional_value_flags(&cmd, &mut flags);
    args.windows(2).find_map(|pair| {
        let (flag, value) = (pair[0].to_str()?, pair[1].to_str()?);
        let long = flag.strip_prefix("--")?;
        let looks_like_a_value = value.trim().parse::<f64>().is_ok();
        (flags.iter().any(|f| f == long) && looks_like_a_value)
            .then(|| format!("`{flag}` takes its value after `=`: write `{flag}={value}`"))
    })
}

/// The long names of the flags of `cmd` and its subcommands whose value is optional and given
/// after `=`.
fn optional_value_flags(cmd: &Command, out: &mut Vec<String>) {
    for arg in cmd.get_arguments() {
        let optional = arg.get_num_args().is_some_and(|n| n.min_values() == 0 && n.max_values() == 1);
        if let (Some(long), true) = (arg.get_long(), optional && arg.is_require_equals_set()) {
            out.push(long.to_string());
        }
    }
    for sub in cmd.get_subcommands() {
        optional_value_flags(sub, out);
    }
}

/// Where a command line departs from what the three tools share. For `cmd` and every subcommand:
/// `-V` answers; `-j` is `--threads`; `--format-reward` takes its weight after `=`; the long
/// help ends with the exit-status table ([`finish_help`]) and shows no rustdoc link syntax
/// (`` [`Name`] ``); every value a `[default: X]` note shows is accepted when typed. Each
/// binary's tests call this on its command (`Vec::is_empty` when all is well).
pub fn shared_flag_problems(cmd: &Command) -> Vec<String> {
    let mut cmd = cmd.clone();
    cmd.build();
    let mut out = Vec::new();
    check_command(&cmd, &[cmd.get_name().to_string()], &cmd, &mut out);
    out
}

fn check_command(root: &Command, path: &[String], cmd: &Command, out: &mut Vec<String>) {
    let name = path.join(" ");
    for arg in cmd.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        if long == "threads" && arg.get_short() != Some('j') {
            out.push(format!("{name} --threads has no -j"));
        }
        if arg.get_short() == Some('j') && long != "threads" {
            out.push(format!("{name} -j is --{long}, not --threads"));
        }
        if long == "format-reward" && !arg.is_require_equals_set() {
            out.push(format!("{name} --format-reward takes its weight without `=`"));
        }
        let help = arg.get_long_help().or(arg.get_help()).map(|h| h.to_string()).unwrap_or_default();
        for value in shown_defaults(&help) {
            let mut args: Vec<String> = path.to_vec();
            args.extend([format!("--{long}"), value.to_string()]);
            if let Err(e) = root.clone().try_get_matches_from(&args) {
                if matches!(e.kind(), ErrorKind::InvalidValue | ErrorKind::ValueValidation) {
                    out.push(format!("{name} --{long} shows `[default: {value}]` but refuses `{value}`"));
                }
            }
        }
    }
    if !cmd.get_arguments().any(|a| a.get_long() == Some("version") && a.get_short() == Some('V')) {
        out.push(format!("{name} has no -V/--version"));
    }
    let help = cmd.clone().render_long_help().to_string();
    // Compared word by word: the help wraps long lines at the terminal's width.
    let words = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    if !words(&help).ends_with(&words(EXIT_STATUS_HELP)) {
        out.push(format!("{name} --help does not end with the exit-status table"));
    }
    if help.contains("[`") || help.contains("`]") {
        out.push(format!("{name} --help shows rustdoc link syntax ([`...`])"));
    }
    // clap's own `help` subcommand takes no flags.
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let mut path = path.to_vec();
        path.push(sub.get_name().to_string());
        check_command(root, &path, sub, out);
    }
}

/// The values `[default: X]` notes show as something to type: `X` alone, or `X` before ` for `
/// (`[default: 0.5 for tiny; 0.1 for a pretrained model]`); not another flag (`--out`) or a
/// formula (`max-new-tokens/5`).
fn shown_defaults(help: &str) -> Vec<&str> {
    let typeable = |v: &&str| !v.contains(' ') && !v.starts_with('-') && !v.contains('/');
    help.split("[default: ")
        .skip(1)
        .filter_map(|rest| {
            let note = &rest[..rest.find(']')?];
            note.split("; ").map(|part| part.split(" for ").next().unwrap_or(part)).find(typeable)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Arg;

    fn tool() -> Command {
        Command::new("t").version("1").propagate_version(true).subcommand(
            Command::new("score")
                .after_help("Example:\n  t score f")
                .arg(Arg::new("format-reward").long("format-reward").num_args(0..=1).require_equals(true))
                .arg(Arg::new("file")),
        )
    }

    /// Every help ends with the table, after the command's own examples.
    #[test]
    fn every_help_ends_with_the_exit_table() {
        let cmd = finish_help(tool());
        assert_eq!(shared_flag_problems(&cmd), Vec::<String>::new());
        let mut score = cmd.find_subcommand("score").expect("score").clone();
        let help = score.render_long_help().to_string();
        assert!(help.contains("Example:\n  t score f\n\nExit status"), "{help}");
        assert_eq!(
            finish_help(cmd.clone()).get_after_long_help().map(|h| h.to_string()),
            Some(EXIT_STATUS_HELP.into())
        );
    }

    #[test]
    fn departures_are_found() {
        let bad = Command::new("t")
            .arg(Arg::new("jobs").long("jobs").short('j'))
            .arg(Arg::new("format-reward").long("format-reward").num_args(0..=1))
            .arg(Arg::new("kind").long("kind").value_parser(["a", "b"]).help("Which [`Kind`] [default: auto]"));
        assert_eq!(
            shared_flag_problems(&bad),
            [
                "t -j is --jobs, not --threads",
                "t --format-reward takes its weight without `=`",
                "t --kind shows `[default: auto]` but refuses `auto`",
                "t has no -V/--version",
                "t --help does not end with the exit-status table",
                "t --help shows rustdoc link syntax ([`...`])",
            ]
        );
    }

    #[test]
    fn shown_defaults_are_the_values_to_type() {
        assert_eq!(shown_defaults("x [default: 0.5]"), ["0.5"]);
        assert_eq!(shown_defaults("[default: 1e-6 for tiny; 3e-6 for a pretrained model]"), ["1e-6"]);
        assert_eq!(shown_defaults("[default: one per core]"), Vec::<&str>::new());
        assert_eq!(shown_defaults("[default: --out] [default: max-new-tokens/5 for dapo]"), Vec::<&str>::new());
    }

    /// `--format-reward 0.2` gets a tip naming `--format-reward=0.2`; a file after the flag does not.
    #[test]
    fn a_value_after_a_space_gets_the_equals_tip() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        let tip = equals_tip(&tool(), &args(&["t", "score", "f", "--format-reward", "0.2"]));
        assert_eq!(tip.as_deref(), Some("`--format-reward` takes its value after `=`: write `--format-reward=0.2`"));
        assert_eq!(equals_tip(&tool(), &args(&["t", "score", "--format-reward", "f.jsonl"])), None);
    }
}
