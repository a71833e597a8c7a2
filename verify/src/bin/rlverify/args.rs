//! What the user typed: the clap definitions of every subcommand and flag.

use clap::{Args, CommandFactory, Parser, Subcommand};
use rlcli::ThreadsArg;
use rlverify::cli::AnswerArgs;
pub use rlverify::cli::{FieldArgs, FormatRewardArgs, ScoringArgs};
use std::path::PathBuf;

/// Decide whether math answers are right: extract the final answer, parse its LaTeX, compare exactly.
#[derive(Debug, Parser)]
#[command(name = "rlverify", version, propagate_version = true, max_term_width = 100)]
#[command(after_help = "Use `rlverify help <command>` for the details of a command.")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Score a JSONL file of responses against gold answers (JSONL in, JSONL out).
    ///
    /// One output line per non-blank input line, in the same order, with the input's id (`id`,
    /// `idx`, `problem_id` or `unique_id`) and `correct`, `reward`, `status`, `extracted` (plus
    /// `limit` when a cost bound was hit). A line with K responses gets lists of K and `n_correct`.
    /// A malformed line gets `{"line": N, "error": "..."}` and the rest of the file is still scored.
    ///
    /// Lines are scored as they arrive: `producer | rlverify score - | consumer` answers each line
    /// without waiting for the end of the input. The output is written to a temporary file beside
    /// `-o FILE` and renamed at the end, so an input is never truncated before it is read (also
    /// through a hard link or standard input redirected from it).
    ///
    /// Exit status: 0 when every line was read, 1 when some line was malformed, 2 on usage or I/O
    /// errors or an input with no rows; 130 or 143 when SIGINT or SIGTERM stopped it (the rows
    /// scored by then are written, to `-o FILE` too).
    #[command(after_help = "Examples:\n  rlverify score generations.jsonl -o scored.jsonl\n  \
        cat preds.jsonl | rlverify score - --reward signed --format-reward\n  \
        rlverify score eval.jsonl --response-field outputs.0.text --gold-field meta.answer")]
    Score(ScoreArgs),
    /// Check one prediction against one gold answer.
    ///
    /// Prints `correct` or `wrong` with the status. Exit status 0 when correct, 1 otherwise.
    /// Answers that start with `-` are answers, not flags (`rlverify check -5 '\boxed{-5}'`).
    #[command(after_help = "Examples:\n  rlverify check '\\frac{1}{2}' 'so the answer is \\boxed{0.5}'\n  \
        rlverify check 42 41 --explain\n  rlverify check -5 '\\boxed{-5}'")]
    Check(CheckArgs),
    /// Print the final answer extracted from a response.
    ///
    /// Exit status 0 when an answer was found, 1 otherwise.
    #[command(after_help = "Example:\n  echo 'so the answer is $\\boxed{7}$.' | rlverify extract - --verbose")]
    Extract(ExtractArgs),
    /// Measure scoring throughput and per-item latency on a JSONL file.
    ///
    /// Times every `score(response, gold)` call (gold extraction and parsing included) on one
    /// thread and on all threads, and prints a Markdown table for BENCHMARKS.md.
    #[command(after_help = "Example:\n  rlverify bench ../shared/corpora/real_generations_dev.jsonl --repeat 3")]
    Bench(BenchArgs),
    /// Serve rewards over HTTP (OpenRLHF's and slime's remote reward protocols, and `score` rows).
    ///
    /// `POST /get_reward` takes OpenRLHF's `{"query": [...], "prompts": [...], "labels": [...]}`
    /// (each response is its query after the prompt) and answers `{"rewards", "scores",
    /// "extra_logs"}`; `POST /slime` takes slime's `{"prompt", "response", "label"}` and answers the
    /// reward as a bare number; `POST /score` takes the rows `score` reads (JSONL, or a JSON list)
    /// and answers `score`'s output rows in order. `GET /health`, `GET /metrics` (Prometheus).
    ///
    /// An item whose gold cannot be read is scored `invalid_gold` (`--invalid-gold-reward`) and the
    /// rest of the request goes on; only a malformed request gets 400, naming the field. Requests
    /// beyond `--max-in-flight` wait in a queue bounded by `--max-queue` bytes (the server stops
    /// reading beyond it) and `--queue-timeout` (then 503 with `Retry-After`).
    ///
    /// The first line on standard output is `listening on http://ADDR`; the access log goes to
    /// standard error. SIGINT/SIGTERM stop accepting, finish the requests in flight, and exit 0.
    #[command(after_help = "Examples:\n  rlverify serve --port 5000\n  \
        rlverify serve --host 0.0.0.0 --port 5000 --reward signed --format-reward=0.2\n  \
        rlverify serve --port 0 --gold-field reward_model.ground_truth   # /score rows in verl's shape")]
    Serve(ServeArgs),
}

#[derive(Debug, Args)]
pub struct ScoreArgs {
    /// JSONL file to score, or `-` for standard input.
    #[arg(value_name = "FILE")]
    pub input: PathBuf,
    /// Write the scored JSONL here instead of standard output.
    #[arg(short, long, value_name = "FILE", help_heading = "Output")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub format: FormatRewardArgs,
    #[command(flatten)]
    pub scoring: ScoringArgs,
    #[command(flatten)]
    pub fields: FieldArgs,
    #[command(flatten)]
    pub threads: ThreadsArg,
    /// Never show a progress bar (it is only shown when standard error is a terminal).
    #[arg(long, help_heading = "Output")]
    pub no_progress: bool,
    /// Do not print the summary on standard error.
    #[arg(long, short, help_heading = "Output")]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The gold answer (bare LaTeX, or a reference solution with a `\boxed{}`).
    #[arg(allow_hyphen_values = true)]
    pub gold: String,
    /// The prediction (a bare answer or a whole response), or `-` for standard input.
    #[arg(allow_hyphen_values = true)]
    pub pred: String,
    /// Show the extracted answers, their parses, the verdict and the rule that decided it.
    #[arg(long, short)]
    pub explain: bool,
    #[command(flatten)]
    pub scoring: ScoringArgs,
}

#[derive(Debug, Args)]
pub struct ExtractArgs {
    /// The response text, or `-` for standard input.
    #[arg(allow_hyphen_values = true)]
    pub text: String,
    /// Also print which strategy found the answer (and the parts of a multi-box answer).
    #[arg(long, short)]
    pub verbose: bool,
    #[command(flatten)]
    pub answer: AnswerArgs,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// JSONL file of responses and gold answers (any shape `score` accepts).
    #[arg(value_name = "FILE")]
    pub input: PathBuf,
    #[command(flatten)]
    pub threads: ThreadsArg,
    /// Passes over the file per configuration; throughput is the median pass.
    #[arg(long, short, value_name = "R", default_value_t = 3)]
    pub repeat: usize,
    /// Also list the N slowest items (one more single-threaded pass), to find what to optimise.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub slowest: usize,
    #[command(flatten)]
    pub scoring: ScoringArgs,
    #[command(flatten)]
    pub fields: FieldArgs,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on (loopback by default; `0.0.0.0` or `::` to accept other machines).
    #[arg(long, default_value = "127.0.0.1", help_heading = "Server")]
    pub host: String,
    /// Port to listen on (0: any free port; the address is printed on standard output).
    #[arg(long, short, default_value_t = 5000, help_heading = "Server")]
    pub port: u16,
    /// Largest request body accepted (bytes, or with a K/M/G suffix); larger ones get 413.
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_size, help_heading = "Server")]
    pub max_body: usize,
    /// Scoring requests handled at once; later ones wait in the queue, in arrival order.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..),
          help_heading = "Server")]
    pub max_in_flight: u32,
    /// Request bodies held at once (arriving, queued or being scored), in bytes (K/M/G suffix).
    ///
    /// Beyond it the server stops reading: the clients wait on their connections (TCP
    /// backpressure) instead of getting an error. At least `--max-body`.
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = parse_size, help_heading = "Server")]
    pub max_queue: usize,
    /// Seconds a request may wait for room in the queue and for a scoring slot; then 503 with
    /// `Retry-After`.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = parse_seconds, help_heading = "Server")]
    pub queue_timeout: f64,
    /// Seconds for a request head to arrive (from the connection opening, or from the previous
    /// answer on a kept-alive connection); the connection is closed after it.
    #[arg(long, value_name = "SECS", default_value_t = 30.0, value_parser = parse_seconds, help_heading = "Server")]
    pub header_timeout: f64,
    /// Seconds for a request body to arrive once its head has; then 408.
    #[arg(long, value_name = "SECS", default_value_t = 60.0, value_parser = parse_seconds, help_heading = "Server")]
    pub body_timeout: f64,
    /// Seconds a request may take in all (body, queue and scoring); a late one gets 408 or 503.
    ///
    /// Each item is also bounded by the verifier's own cost limits, so this only bites on huge
    /// batches or clients that send their body too slowly.
    #[arg(long, value_name = "SECS", default_value_t = 300.0, value_parser = parse_seconds, help_heading = "Server")]
    pub request_timeout: f64,
    /// No access log on standard error.
    #[arg(long, short, help_heading = "Server")]
    pub quiet: bool,
    /// The reward of an item whose gold answer cannot be read (null, not a string or a number,
    /// empty, malformed): status `invalid_gold`, never counted right, and by default neither
    /// rewarded nor penalised. The rest of the request is scored as usual.
    #[arg(long, value_name = "R", default_value_t = 0.0, allow_negative_numbers = true,
          value_parser = parse_reward, help_heading = "Scoring")]
    pub invalid_gold_reward: f64,
    /// Leave `extra_logs` out of `/get_reward` answers (OpenRLHF 0.8.x cannot read list-valued
    /// logs; 0.10 and later can).
    #[arg(long, help_heading = "Scoring")]
    pub no_extra_logs: bool,
    #[command(flatten)]
    pub format: FormatRewardArgs,
    #[command(flatten)]
    pub scoring: ScoringArgs,
    /// Where the fields are: in `score` rows (`POST /score`), as in `score`; in a slime or
    /// OpenRLHF body, read first (an OpenRLHF body holds lists there, responses taken whole), with
    /// the protocol's own fields (`response`/`label`, `query`/`labels`) read when they are absent.
    #[command(flatten)]
    pub fields: FieldArgs,
    #[command(flatten)]
    pub threads: ThreadsArg,
}

/// The command line: the verifier's defaults in the help of the scoring flags, the exit-status
/// table at the end of every `--help`.
pub fn command() -> clap::Command {
    rlcli::finish_help(rlverify::cli::with_scoring_defaults(Cli::command()))
}

fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((k, _)) => t.split_at(k),
        None => (t, ""),
    };
    let shift = match unit.to_ascii_uppercase().trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("`{s}` is not a size (a number of bytes, e.g. 1048576, 512K, 64M)")),
    };
    let n: usize = digits.parse().map_err(|_| format!("`{s}` is not a size (e.g. 1048576, 512K, 64M)"))?;
    n.checked_mul(1 << shift).filter(|&b| b > 0).ok_or_else(|| format!("`{s}` is not a usable size"))
}

fn parse_reward(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(format!("`{s}` is not a finite number")),
    }
}

fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x < 1e9 => Ok(x),
        _ => Err(format!("`{s}` is not a positive number of seconds")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// `-j`, `-V`, `--format-reward=W`, the exit-status table, clean help texts and defaults that
    /// can be typed, in every subcommand.
    #[test]
    fn flags_are_the_other_tools() {
        assert_eq!(rlcli::shared_flag_problems(&command()), Vec::<String>::new());
    }

    /// Every option of the verifier's table (`rlverify::options::config_options`) is a flag of
    /// every command that scores, with all its values: an option added in `rlverify::options`
    /// reaches them with no edit here.
    #[test]
    fn every_verifier_option_is_a_flag() {
        use rlverify::cli::{verifier_flag_problems, Takes};
        let cmd = command();
        let commands = [
            ("score", Takes::FormatReward),
            ("serve", Takes::FormatReward),
            ("check", Takes::Reward),
            ("bench", Takes::Reward),
            ("extract", Takes::Answer),
        ];
        for (path, takes) in commands {
            assert_eq!(verifier_flag_problems(&cmd, &[path], takes), Vec::<String>::new());
        }
        // A command without an option is named.
        let problems = verifier_flag_problems(&cmd, &["extract"], Takes::FormatReward);
        assert_eq!(problems, ["rlverify extract has no --reward", "rlverify extract has no --format-reward"]);
    }

    #[test]
    fn cli_definition_is_valid() {
        Cli::command().debug_assert();
    }

    /// The defaults `--help` shows are the library's (`Config::default()`), written once, in
    /// every command that takes the scoring flags.
    #[test]
    fn help_shows_the_library_defaults() {
        let cfg = rlverify::Config::default();
        let expected: Vec<(&str, &str)> =
            rlverify::options::config_options().map(|o| (o.flag(), o.get(&cfg))).collect();
        assert_eq!(expected[..2], [("reward", "binary"), ("extract", "strict")]);
        for sub in ["score", "check", "bench", "serve", "extract"] {
            let mut cmd = command().find_subcommand(sub).expect(sub).clone();
            let help = cmd.render_long_help().to_string().split_whitespace().collect::<Vec<_>>().join(" ");
            for (flag, value) in &expected {
                if sub == "extract" && *flag == "reward" {
                    continue;
                }
                let at = help.find(&format!("--{flag} <")).unwrap_or_else(|| panic!("{sub}: no --{flag}"));
                let note = format!("[default: {value}]");
                let block = &help[at..];
                let next = block[2..].find(" --").map_or(block.len(), |k| k + 2);
                assert!(block[..next].contains(&note), "{sub} --{flag}: {note} missing in {}", &block[..next]);
            }
        }
        let parsed = match Cli::try_parse_from(["rlverify", "score", "f"]).map(|c| c.command) {
            Ok(Command::Score(s)) => s.scoring.config(),
            other => panic!("{other:?}"),
        };
        assert_eq!((parsed.reward, parsed.last_number, parsed.truncated), (cfg.reward, cfg.last_number, cfg.truncated));
        assert_eq!(parsed.extract, cfg.extract);
    }

    /// Answers that start with `-` are values: a negative number, `-\frac12`.
    #[test]
    fn negative_answers_are_values() {
        for (gold, pred) in [("-5", "\\boxed{-5}"), ("-\\frac12", "-0.5"), ("-x", "-")] {
            match Cli::try_parse_from(["rlverify", "check", gold, pred]).map(|c| c.command) {
                Ok(Command::Check(c)) => assert_eq!((c.gold.as_str(), c.pred.as_str()), (gold, pred)),
                other => panic!("{gold} {pred}: {other:?}"),
            }
        }
        match Cli::try_parse_from(["rlverify", "check", "--explain", "-5", "-5"]).map(|c| c.command) {
            Ok(Command::Check(c)) => assert!(c.explain && c.gold == "-5"),
            other => panic!("{other:?}"),
        }
        match Cli::try_parse_from(["rlverify", "extract", "-3 is it", "--verbose"]).map(|c| c.command) {
            Ok(Command::Extract(e)) => assert!(e.verbose && e.text == "-3 is it"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn format_reward_spellings() {
        let parse = |args: &[&str]| Cli::try_parse_from(args.iter().copied());
        let get = |args: &[&str]| match parse(args).map(|c| c.command) {
            Ok(Command::Score(s)) => s.format.format_reward,
            other => panic!("{args:?}: {other:?}"),
        };
        assert_eq!(get(&["rlverify", "score", "f"]), None);
        assert_eq!(get(&["rlverify", "score", "f", "--format-reward"]), Some(0.5));
        assert_eq!(get(&["rlverify", "score", "f", "--format-reward=0.2"]), Some(0.2));
        // The weight needs `=`, so a file name after the flag is not taken for a weight.
        assert_eq!(get(&["rlverify", "score", "--format-reward", "f"]), Some(0.5));
        assert!(parse(&["rlverify", "score", "f", "--format-reward=nan"]).is_err());
        assert!(parse(&["rlverify", "score", "f", "--reward", "ternary"]).is_err());
        assert!(parse(&["rlverify", "score", "f", "--gold-field", "a..b"]).is_err());
    }

    #[test]
    fn serve_defaults_and_sizes() {
        let serve = match Cli::try_parse_from(["rlverify", "serve"]).map(|c| c.command) {
            Ok(Command::Serve(s)) => s,
            other => panic!("{other:?}"),
        };
        assert_eq!((serve.host.as_str(), serve.port, serve.max_body), ("127.0.0.1", 5000, 64 << 20));
        assert_eq!(parse_size("1K"), Ok(1024));
        assert_eq!(parse_size("3mib"), Ok(3 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        for bad in ["", "0", "1X", "-1", "K", "99999999999999G"] {
            assert!(parse_size(bad).is_err(), "{bad:?}");
        }
        assert_eq!((serve.max_queue, serve.invalid_gold_reward, serve.no_extra_logs), (1 << 30, 0.0, false));
        let reward =
            match Cli::try_parse_from(["rlverify", "serve", "--invalid-gold-reward", "-0.5"]).map(|c| c.command) {
                Ok(Command::Serve(s)) => s.invalid_gold_reward,
                other => panic!("{other:?}"),
            };
        assert_eq!(reward, -0.5);
        assert!(Cli::try_parse_from(["rlverify", "serve", "--invalid-gold-reward", "nan"]).is_err());
        assert!(Cli::try_parse_from(["rlverify", "serve", "--header-timeout", "0"]).is_err());
        assert!(Cli::try_parse_from(["rlverify", "serve", "--max-in-flight", "0"]).is_err());
        assert!(Cli::try_parse_from(["rlverify", "serve", "--request-timeout", "-1"]).is_err());
    }
}
