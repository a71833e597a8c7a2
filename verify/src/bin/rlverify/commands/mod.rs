//! One module per subcommand, plus the input plumbing they share.

mod bench;
mod check;
mod extract;
mod score;
mod serve;

use crate::args::{Cli, Command};
use anyhow::Context;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::process::ExitCode;

/// Run the parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Score(args) => score::run(args),
        Command::Check(args) => check::run(args),
        Command::Extract(args) => extract::run(args),
        Command::Bench(args) => bench::run(args),
        Command::Serve(args) => serve::run(args),
    }
}

/// A rayon pool with `threads` workers (`None` or 0: one per core).
fn thread_pool(threads: Option<usize>) -> anyhow::Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .thread_name(|k| format!("rlverify-{k}"))
        .build()
        .context("failed to start the worker threads")
}

/// A text argument, or standard input when it is `-` (invalid UTF-8 is replaced, not rejected).
fn text_arg(arg: &str) -> anyhow::Result<String> {
    if arg != "-" {
        return Ok(arg.to_string());
    }
    let mut bytes = Vec::new();
    io::stdin().lock().read_to_end(&mut bytes).context("failed to read standard input")?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// An opened JSONL input.
struct Input {
    reader: Box<dyn BufRead>,
    /// The name used in diagnostics (`<stdin>` for `-`).
    name: String,
    /// The file size, when known (for the progress bar).
    len: Option<u64>,
}

fn open_input(path: &Path) -> anyhow::Result<Input> {
    if path.as_os_str() == "-" {
        return Ok(Input {
            reader: Box::new(BufReader::with_capacity(1 << 20, io::stdin())),
            name: "<stdin>".to_string(),
            len: None,
        });
    }
    let file = File::open(path).with_context(|| format!("failed to open `{}`", path.display()))?;
    let len = file.metadata().ok().map(|m| m.len());
    Ok(Input { reader: Box::new(BufReader::with_capacity(1 << 20, file)), name: path.display().to_string(), len })
}

/// One non-blank input line.
struct Line {
    /// 1-based line number in the file.
    number: u64,
    /// The line without its line ending.
    bytes: Vec<u8>,
}

/// Reads a JSONL stream in bounded chunks of non-blank lines.
struct LineChunks {
    reader: Box<dyn BufRead>,
    next_number: u64,
    bytes_read: u64,
    done: bool,
}

impl LineChunks {
    fn new(reader: Box<dyn BufRead>) -> Self {
        LineChunks { reader, next_number: 1, bytes_read: 0, done: false }
    }

    /// The next chunk of at most `max_lines` lines, stopping early once `max_bytes` are held.
    /// Returns an empty chunk at the end of the input.
    fn next_chunk(&mut self, max_lines: usize, max_bytes: usize) -> io::Result<Vec<Line>> {
        let mut chunk = Vec::new();
        let mut held = 0usize;
        while !self.done && chunk.len() < max_lines && held < max_bytes {
            let mut bytes = Vec::new();
            let n = self.reader.read_until(b'\n', &mut bytes)?;
            if n == 0 {
                self.done = true;
                break;
            }
            self.bytes_read += n as u64;
            let number = self.next_number;
            self.next_number += 1;
            if bytes.last() == Some(&b'\n') {
                bytes.pop();
            }
            if bytes.last() == Some(&b'\r') {
                bytes.pop();
            }
            if number == 1 && bytes.starts_with(b"\xEF\xBB\xBF") {
                bytes.drain(..3);
            }
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            held += bytes.len();
            chunk.push(Line { number, bytes });
        }
        Ok(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_skip_blank_lines_and_keep_numbers() {
        let data = "\u{feff}{\"a\":1}\r\n\n  \n{\"b\":2}\n{\"c\":3}";
        let mut lines = LineChunks::new(Box::new(io::Cursor::new(data.as_bytes().to_vec())));
        let first = lines.next_chunk(2, usize::MAX).unwrap();
        let numbers: Vec<u64> = first.iter().map(|l| l.number).collect();
        assert_eq!(numbers, vec![1, 4]);
        assert_eq!(first[0].bytes, b"{\"a\":1}");
        let rest = lines.next_chunk(2, usize::MAX).unwrap();
        assert_eq!((rest.len(), rest[0].number, rest[0].bytes.as_slice()), (1, 5, &b"{\"c\":3}"[..]));
        assert!(lines.next_chunk(2, usize::MAX).unwrap().is_empty());
    }

    #[test]
    fn chunks_respect_the_byte_bound() {
        let data = "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n";
        let mut lines = LineChunks::new(Box::new(io::Cursor::new(data.as_bytes().to_vec())));
        assert_eq!(lines.next_chunk(100, 1).unwrap().len(), 1);
        assert_eq!(lines.next_chunk(100, 1000).unwrap().len(), 2);
    }
}
