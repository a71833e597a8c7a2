//! `rlverify score`: JSONL in, JSONL out, in parallel, in order, in bounded memory.

use super::stream::{Next, Stream};
use super::{open_input, thread_pool, Line, LineChunks};
use crate::args::ScoreArgs;
use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use rlcli::{signals, Exit};
use rlverify::format::{is_well_formed, total_reward};
use rlverify::input::{parse_json, resolve, FieldSpec, InputError, Responses};
use rlverify::{Config, Gold, Score, Status};
use serde::Serialize;
use serde_json::Value;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Lines per parallel chunk, per worker thread.
const LINES_PER_THREAD: usize = 256;
/// Bytes of input held per chunk at most (one huge line still makes a chunk of one).
const CHUNK_BYTES: usize = 64 << 20;

/// Everything a worker needs to score one line (`serve`'s batch route scores lines the same way).
pub(super) struct Ctx {
    pub(super) cfg: Config,
    pub(super) fields: FieldSpec,
    pub(super) format_weight: Option<f64>,
}

/// The statuses in summary order.
const STATUSES: [Status; 7] = Status::ALL;

/// A response's score and, with `--format-reward`, whether it is well formed.
type Graded = (Score, Option<bool>);

/// One scored response, for the summary.
pub(super) struct Item {
    status: Status,
    format_ok: Option<bool>,
}

/// One output line.
pub(super) struct Scored {
    pub(super) json: String,
    pub(super) items: Vec<Item>,
    /// The error of a malformed line, and whether it is a missing field.
    pub(super) error: Option<(String, bool)>,
    number: u64,
}

pub fn run(args: ScoreArgs) -> anyhow::Result<Exit> {
    let ctx = Ctx { cfg: args.scoring.config(), fields: args.fields.spec(), format_weight: args.format.format_reward };
    let pool = thread_pool(args.threads)?;
    let input = open_input(&args.input)?;
    let mut output = match &args.output {
        Some(path) => Some(Output::create(path, &args.input)?),
        None => None,
    };
    let mut out: Box<dyn Write> = match &mut output {
        Some(o) => Box::new(BufWriter::new(o.file.try_clone().context("failed to open the output")?)),
        None => Box::new(BufWriter::new(io::stdout().lock())),
    };
    signals::install(
        "\nrlverify score: stopping: the rows being scored are written, the rest are not (press Ctrl-C again to \
         quit at once)\n",
    );
    let progress = progress_bar(input.len, args.no_progress);
    let max_lines = LINES_PER_THREAD * pool.current_num_threads().max(1);
    let lines = Stream::spawn(LineChunks::new(input.reader), max_lines, CHUNK_BYTES)
        .context("failed to start the input reader")?;
    let mut summary = Summary::default();
    let start = Instant::now();
    loop {
        let mut flush = || out.flush();
        let next = lines.next_chunk(max_lines, CHUNK_BYTES, &mut flush, &signals::stop_requested);
        let chunk = match next.with_context(|| format!("failed to read `{}`", input.name))? {
            Next::Lines(chunk) => chunk,
            Next::End | Next::Stopped => break,
        };
        let scored: Vec<Scored> = pool.install(|| chunk.par_iter().map(|line| score_line(line, &ctx)).collect());
        for s in &scored {
            out.write_all(s.json.as_bytes())
                .and_then(|()| out.write_all(b"\n"))
                .context("failed to write the output")?;
            if let Some((message, _)) = &s.error {
                if summary.malformed < rlverify::cli::MAX_PRINTED_LINE_ERRORS {
                    progress.suspend(|| rlcli::print_line_error(&input.name, s.number, message));
                }
            }
            summary.add(s);
        }
        progress.set_position(lines.bytes_read());
        progress.set_message(format!("{} responses", summary.items));
        if signals::stop_requested() {
            break;
        }
    }
    let stopped = signals::received();
    if summary.lines == 0 {
        let Some(exit) = stopped else {
            bail!("`{}` has no rows: nothing to score (the input is empty or only blank lines)", input.name);
        };
        rlcli::info(format_args!("rlverify score: stopped by {} before any row was scored", signals::received_name()));
        return Ok(exit);
    }
    out.flush().context("failed to write the output")?;
    drop(out);
    if let Some(o) = output.take() {
        o.commit()?;
    }
    progress.finish_and_clear();
    rlverify::cli::print_more_line_errors(summary.malformed, summary.missing_field > 0);
    if !args.quiet {
        summary.print(start.elapsed().as_secs_f64(), pool.current_num_threads(), ctx.format_weight.is_some());
    }
    if let Some(exit) = stopped {
        let dest = args.output.as_ref().map_or_else(|| "standard output".to_string(), |p| format!("`{}`", p.display()));
        rlcli::info(format_args!(
            "rlverify score: stopped by {}: the first {} rows of `{}` are scored in {dest}; the rest are not",
            signals::received_name(),
            summary.lines,
            input.name
        ));
        return Ok(exit);
    }
    Ok(if summary.malformed > 0 { Exit::Negative } else { Exit::Success })
}

/// `-o FILE`: written into a temporary file beside it and renamed over it at the end, so a
/// failed run leaves the old file as it was and an input is never truncated before it is read.
/// An output that is one of the inputs (the same file, a hard link to it, or the file standard
/// input is redirected from) is refused before anything is written. A device or a pipe (`-o
/// /dev/null`) is written in place.
struct Output {
    file: File,
    path: PathBuf,
    /// The temporary file, renamed to `path` by [`Output::commit`]; `None` for devices and pipes.
    tmp: Option<PathBuf>,
}

impl Output {
    fn create(path: &Path, input: &Path) -> anyhow::Result<Output> {
        let existing = std::fs::metadata(path).ok();
        if let Some(out) = &existing {
            let inputs: Vec<(String, std::fs::Metadata)> = if input.as_os_str() == "-" {
                stdin_metadata().map(|m| ("standard input".to_string(), m)).into_iter().collect()
            } else {
                std::fs::metadata(input).map(|m| (format!("the input `{}`", input.display()), m)).into_iter().collect()
            };
            for (what, m) in inputs {
                if same_file(out, &m) {
                    bail!(
                        "the output `{}` is {what} (the same file): writing it would replace the scores' own input; \
                         pass another -o FILE",
                        path.display()
                    );
                }
            }
        }
        if existing.as_ref().is_some_and(|m| !m.is_file()) {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(|| format!("failed to open `{}`", path.display()))?;
            return Ok(Output { file, path: path.to_path_buf(), tmp: None });
        }
        let name = path.file_name().map_or_else(|| "output".into(), |n| n.to_string_lossy().into_owned());
        let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
        let file = File::create(&tmp).with_context(|| format!("failed to create `{}`", tmp.display()))?;
        Ok(Output { file, path: path.to_path_buf(), tmp: Some(tmp) })
    }

    /// Puts the finished output in place.
    fn commit(mut self) -> anyhow::Result<()> {
        self.file.sync_all().ok();
        if let Some(tmp) = self.tmp.take() {
            std::fs::rename(&tmp, &self.path)
                .with_context(|| format!("failed to move `{}` to `{}`", tmp.display(), self.path.display()))?;
        }
        Ok(())
    }
}

impl Drop for Output {
    /// An output that was not committed (an error, a closed pipe) leaves no temporary file.
    fn drop(&mut self) {
        if let Some(tmp) = &self.tmp {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Whether two metadata describe the same file: (device, inode) on Unix.
#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.is_file() && b.is_file() && a.len() == b.len() && a.modified().ok() == b.modified().ok()
}

/// What standard input is (a file it is redirected from, a pipe, a terminal).
fn stdin_metadata() -> Option<std::fs::Metadata> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = io::stdin().as_fd().try_clone_to_owned().ok()?;
        File::from(fd).metadata().ok()
    }
    #[cfg(not(unix))]
    None
}

fn progress_bar(len: Option<u64>, disabled: bool) -> ProgressBar {
    if disabled || !io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = match len {
        Some(n) => ProgressBar::new(n).with_style(
            ProgressStyle::with_template("{bar:30} {bytes}/{total_bytes} {msg} ({elapsed}, eta {eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} {bytes} read, {msg} ({elapsed})")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        ),
    };
    bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
    bar
}

/// Score one input line into its output line.
pub(super) fn score_line(line: &Line, ctx: &Ctx) -> Scored {
    let value: Value = match parse_json(&line.bytes) {
        Ok(v) => v,
        Err(e) => return error_line(line.number, None, &e),
    };
    let id = ctx.fields.find_id(&value);
    let record = match resolve(&value, &ctx.fields) {
        Ok(r) => r,
        Err(e) => return error_line(line.number, id, &e),
    };
    let gold = match catch_unwind(AssertUnwindSafe(|| Gold::new(&record.gold, &ctx.cfg))) {
        Ok(g) => g,
        Err(_) => return internal_error(line.number, id, "the gold answer"),
    };
    let mut scores = Vec::with_capacity(record.responses.as_slice().len());
    for (k, response) in record.responses.as_slice().iter().enumerate() {
        match catch_unwind(AssertUnwindSafe(|| gold.score(response, &ctx.cfg))) {
            Ok(s) => scores.push((s, ctx.format_weight.map(|_| is_well_formed(response)))),
            Err(_) => return internal_error(line.number, id, &format!("response {k}")),
        }
    }
    let items = scores.iter().map(|(s, f)| Item { status: s.status, format_ok: *f }).collect();
    let json = match &record.responses {
        Responses::One(_) => one_json(id.as_ref(), &scores[0], ctx.format_weight),
        Responses::Many(_) => many_json(id.as_ref(), &scores, ctx.format_weight),
    };
    Scored { json, items, error: None, number: line.number }
}

fn error_line(number: u64, id: Option<(String, Value)>, err: &InputError) -> Scored {
    let message = err.to_string();
    let mut obj = JsonObject::new();
    obj.field("line", &number);
    if let Some((key, value)) = &id {
        obj.field(key, value);
    }
    obj.field("error", &message);
    Scored { json: obj.finish(), items: Vec::new(), error: Some((message, err.is_missing_field())), number }
}

fn internal_error(number: u64, id: Option<(String, Value)>, what: &str) -> Scored {
    let message = format!("internal error: the verifier panicked on {what} (please report this line)");
    let mut obj = JsonObject::new();
    obj.field("line", &number);
    if let Some((key, value)) = &id {
        obj.field(key, value);
    }
    obj.field("error", &message);
    Scored { json: obj.finish(), items: Vec::new(), error: Some((message, false)), number }
}

fn reward(score: &Score, format_ok: Option<bool>, weight: Option<f64>) -> f64 {
    match (format_ok, weight) {
        (Some(ok), Some(w)) => total_reward(score.reward, ok, w),
        _ => score.reward,
    }
}

fn one_json(id: Option<&(String, Value)>, (score, format_ok): &Graded, weight: Option<f64>) -> String {
    let mut obj = JsonObject::new();
    if let Some((key, value)) = id {
        obj.field(key, value);
    }
    obj.field("correct", &score.correct);
    obj.field("reward", &reward(score, *format_ok, weight));
    obj.field("status", score.status.as_str());
    obj.field("extracted", &score.extracted);
    if !score.candidates.is_empty() {
        obj.field("candidates", &score.candidates);
    }
    if let Some(limit) = score.limit {
        obj.field("limit", limit.as_str());
    }
    if let Some(ok) = format_ok {
        obj.field("format_ok", ok);
    }
    obj.finish()
}

fn many_json(id: Option<&(String, Value)>, scores: &[Graded], weight: Option<f64>) -> String {
    let mut obj = JsonObject::new();
    if let Some((key, value)) = id {
        obj.field(key, value);
    }
    let list = |f: &dyn Fn(&Graded) -> Value| -> Vec<Value> { scores.iter().map(f).collect() };
    obj.field("correct", &list(&|(s, _)| Value::from(s.correct)));
    obj.field("reward", &list(&|(s, f)| Value::from(reward(s, *f, weight))));
    obj.field("status", &list(&|(s, _)| Value::from(s.status.as_str())));
    obj.field("extracted", &list(&|(s, _)| s.extracted.clone().map_or(Value::Null, Value::from)));
    if scores.iter().any(|(s, _)| !s.candidates.is_empty()) {
        obj.field("candidates", &list(&|(s, _)| Value::from(s.candidates.clone())));
    }
    if scores.iter().any(|(s, _)| s.limit.is_some()) {
        obj.field("limit", &list(&|(s, _)| s.limit.map_or(Value::Null, |k| Value::from(k.as_str()))));
    }
    if weight.is_some() {
        obj.field("format_ok", &list(&|(_, f)| f.map_or(Value::Null, Value::from)));
    }
    obj.field("n_correct", &scores.iter().filter(|(s, _)| s.correct).count());
    obj.finish()
}

/// A JSON object written in insertion order (serde_json's `Map` sorts keys by default).
struct JsonObject {
    text: String,
}

impl JsonObject {
    fn new() -> Self {
        JsonObject { text: String::from("{") }
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) {
        if self.text.len() > 1 {
            self.text.push(',');
        }
        self.text.push_str(&to_json(key));
        self.text.push(':');
        self.text.push_str(&to_json(value));
    }

    fn finish(mut self) -> String {
        self.text.push('}');
        self.text
    }
}

/// Serialise a value; only maps with non-string keys can fail, which never reach here.
fn to_json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_string())
}

/// Counts for the final summary.
#[derive(Default)]
struct Summary {
    lines: u64,
    malformed: u64,
    missing_field: u64,
    items: u64,
    by_status: [u64; 7],
    format_ok: u64,
}

impl Summary {
    fn add(&mut self, s: &Scored) {
        self.lines += 1;
        if let Some((_, missing)) = &s.error {
            self.malformed += 1;
            self.missing_field += u64::from(*missing);
        }
        for item in &s.items {
            self.items += 1;
            if let Some(k) = STATUSES.iter().position(|st| *st == item.status) {
                self.by_status[k] += 1;
            }
            self.format_ok += u64::from(item.format_ok == Some(true));
        }
    }

    fn print(&self, secs: f64, threads: usize, with_format: bool) {
        let rate = if secs > 0.0 { self.items as f64 / secs } else { 0.0 };
        let correct = self.by_status[0];
        let pct = |n: u64| if self.items > 0 { 100.0 * n as f64 / self.items as f64 } else { 0.0 };
        let mut err = io::stderr().lock();
        let _ = writeln!(
            err,
            "scored {} responses on {} lines in {secs:.2}s ({rate:.0} items/s, {threads} thread{})",
            self.items,
            self.lines,
            if threads == 1 { "" } else { "s" }
        );
        let _ = writeln!(err, "accuracy: {:.2}% ({correct}/{})", pct(correct), self.items);
        let statuses: Vec<String> =
            STATUSES.iter().zip(self.by_status).map(|(st, n)| format!("{} {n}", st.as_str())).collect();
        let _ = writeln!(err, "status: {}", statuses.join(", "));
        if with_format {
            let _ = writeln!(err, "format ok: {:.2}% ({}/{})", pct(self.format_ok), self.format_ok, self.items);
        }
        if self.malformed > 0 {
            let _ = writeln!(err, "malformed lines: {} of {}", self.malformed, self.lines);
        }
    }
}
