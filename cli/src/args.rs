//! The number parsers that refuse a value where it is typed, and the one `-j N`/`--threads N`.

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

/// `-j N`/`--threads N`, the same in every command that runs work on several threads: flatten it
/// (`#[command(flatten)] threads: ThreadsArg`) instead of declaring the flag again.
#[derive(Debug, clap::Args, Clone, Copy, Default, PartialEq, Eq)]
pub struct ThreadsArg {
    /// Worker threads (0 or unset: one per core; at most 256).
    #[arg(long = "threads", short = 'j', value_name = "N", help_heading = "Performance", value_parser = parse_threads)]
    threads: Option<usize>,
}

impl ThreadsArg {
    /// `n` threads (0: one per core).
    pub fn new(n: usize) -> ThreadsArg {
        ThreadsArg { threads: Some(n) }
    }

    /// The number given, `None` when unset or 0 (one per core; what rayon's builders take as 0).
    pub fn given(self) -> Option<usize> {
        self.threads.filter(|&n| n > 0)
    }

    /// The number of threads to run: the number given, or one per core.
    pub fn count(self) -> usize {
        self.given().unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct T {
        #[command(flatten)]
        threads: ThreadsArg,
    }

    #[test]
    fn thread_counts() {
        let get = |args: &[&str]| T::try_parse_from(args.iter().copied()).map(|t| t.threads);
        assert_eq!(get(&["t"]).ok().map(ThreadsArg::given), Some(None));
        assert_eq!(get(&["t", "-j", "4"]).ok().map(ThreadsArg::given), Some(Some(4)));
        assert_eq!(get(&["t", "--threads", "0"]).ok().map(ThreadsArg::given), Some(None));
        assert!(get(&["t", "-j", "0"]).is_ok_and(|t| t.count() >= 1));
        let err = get(&["t", "-j", "100000"]).expect_err("refused").to_string();
        assert!(err.contains("--threads") && err.contains("at most 256"), "{err}");
    }

    #[test]
    fn numbers_are_refused_where_typed() {
        assert_eq!(parse_f64_in("0.5", |v| v > 0.0, "positive"), Ok(0.5));
        assert!(parse_f64_in("nan", |_| true, "finite").is_err());
        assert!(parse_f64_in("-1", |v| v > 0.0, "positive").is_err_and(|e| e.contains("positive")));
        assert_eq!(parse_positive("3"), Ok(3));
        assert!(parse_positive("0").is_err());
    }
}
