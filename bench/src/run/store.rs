//! The per-suite completions file of a run directory: one JSON record per completion, appended and
//! written with one `write` call as it arrives; on resume, the file is scanned, a partial last line
//! (a kill mid-write) is cut off, and the (problem, sample) pairs already present are skipped.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// One stored completion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Problem id.
    pub id: String,
    /// Sample index in 0..K.
    pub sample: usize,
    /// The gold answer at generation (reports score against the suite's current gold, and say
    /// when it differs from this one).
    pub answer: String,
    /// [`crate::suite::problem_hash`] of the problem statement it answers (absent in runs of older
    /// rlbench versions): a report says when the suite's statement changed since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem_hash: Option<String>,
    /// The completion text.
    pub response: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// `stop`, `length`, ... as the backend reported it.
    pub finish_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Completion tokens, when known.
    pub tokens: Option<u64>,
    /// The seed of the request that produced this completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// Errors reading or writing a completions file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {source}")]
    /// The file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    #[error("{path}:{line}: corrupt record ({message}); only an unterminated last line is repaired automatically")]
    /// A line in the middle of the file is not a record.
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Its line number (from 1).
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// What a scan of an existing file found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Scan {
    /// Sample indices present per problem id.
    pub present: HashMap<String, BTreeSet<usize>>,
    /// Records read (duplicates included).
    pub records: usize,
    /// Duplicate (id, sample) records (the first one counts).
    pub duplicates: usize,
    /// Bytes of an unterminated last line that were cut off.
    pub cut_bytes: u64,
}

/// Read all records of a file, first occurrence of each (id, sample) only. A missing file is
/// empty; an unterminated last line is ignored.
pub fn read_records(path: &Path) -> Result<Vec<Record>, StoreError> {
    let mut out = Vec::new();
    let mut seen: HashMap<String, BTreeSet<usize>> = HashMap::new();
    visit(path, |r| {
        if seen.entry(r.id.clone()).or_default().insert(r.sample) {
            out.push(r);
        }
    })?;
    Ok(out)
}

/// Walk the complete lines of a file; returns (records, bytes of the complete part, total bytes).
fn visit(path: &Path, mut f: impl FnMut(Record)) -> Result<(usize, u64, u64), StoreError> {
    let io = |source| StoreError::Io { path: path.to_path_buf(), source };
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, 0, 0)),
        Err(e) => return Err(io(e)),
    };
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let (mut good, mut total, mut n) = (0u64, 0u64, 0usize);
    let mut lineno = 0;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line).map_err(io)?;
        if read == 0 {
            break;
        }
        lineno += 1;
        total += read as u64;
        if line.last() != Some(&b'\n') {
            // A kill mid-write: the record is incomplete whatever it parses as.
            break;
        }
        let body = &line[..line.len() - 1];
        if !body.iter().all(u8::is_ascii_whitespace) {
            let r: Record = serde_json::from_slice(body).map_err(|e| StoreError::Corrupt {
                path: path.to_path_buf(),
                line: lineno,
                message: e.to_string(),
            })?;
            f(r);
            n += 1;
        }
        good = total;
    }
    Ok((n, good, total))
}

/// Scan a file for resume and cut an unterminated last line off it, so appends start on a fresh line.
pub fn scan_and_repair(path: &Path) -> Result<Scan, StoreError> {
    let mut scan = Scan::default();
    let (records, good, total) = visit(path, |r| {
        if !scan.present.entry(r.id).or_default().insert(r.sample) {
            scan.duplicates += 1;
        }
    })?;
    scan.records = records;
    if total > good {
        let io = |source| StoreError::Io { path: path.to_path_buf(), source };
        let f = OpenOptions::new().write(true).open(path).map_err(io)?;
        f.set_len(good).map_err(io)?;
        f.sync_all().map_err(io)?;
        scan.cut_bytes = total - good;
    }
    Ok(scan)
}

/// An append-only completions file.
#[derive(Debug)]
pub struct Appender {
    path: PathBuf,
    file: File,
}

impl Appender {
    /// Open (creating) a file for appending. Call [`scan_and_repair`] first on an existing file.
    pub fn open(path: &Path) -> Result<Appender, StoreError> {
        let io = |source| StoreError::Io { path: path.to_path_buf(), source };
        let mut file = OpenOptions::new().create(true).append(true).read(true).open(path).map_err(io)?;
        // Defensive: never glue a record onto an unterminated line.
        let len = file.metadata().map_err(io)?.len();
        if len > 0 {
            let mut last = [0u8; 1];
            file.seek(SeekFrom::Start(len - 1)).map_err(io)?;
            file.read_exact(&mut last).map_err(io)?;
            if last[0] != b'\n' {
                file.write_all(b"\n").map_err(io)?;
            }
        }
        Ok(Appender { path: path.to_path_buf(), file })
    }

    /// Append one record as one line, written with a single `write_all` and flushed.
    pub fn append(&mut self, r: &Record) -> Result<(), StoreError> {
        let io = |source| StoreError::Io { path: self.path.clone(), source };
        let mut line = serde_json::to_vec(r).map_err(|e| io(std::io::Error::other(e)))?;
        line.push(b'\n');
        self.file.write_all(&line).map_err(io)?;
        self.file.flush().map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: &str, sample: usize) -> Record {
        Record {
            id: id.into(),
            sample,
            answer: "1".into(),
            problem_hash: None,
            response: format!("r{sample}"),
            finish_reason: Some("stop".into()),
            tokens: None,
            seed: Some(3),
        }
    }

    fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("rlbench-store-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::create_dir_all(&dir);
        dir.join("s.jsonl")
    }

    #[test]
    fn append_scan_and_cut_a_partial_line() {
        let path = tmp("partial");
        let Ok(mut a) = Appender::open(&path) else { panic!("open") };
        for s in 0..3 {
            assert!(a.append(&rec("p", s)).is_ok());
        }
        assert!(a.append(&rec("p", 1)).is_ok()); // a duplicate
        drop(a);
        // Simulate a kill in the middle of the next record.
        let mut bytes = std::fs::read(&path).unwrap_or_default();
        let good_len = bytes.len();
        bytes.extend_from_slice(br#"{"id":"p","sample":3,"answer":"1","resp"#);
        assert!(std::fs::write(&path, &bytes).is_ok());
        let scan = scan_and_repair(&path).map_err(|e| e.to_string());
        let Ok(scan) = scan else { panic!("{scan:?}") };
        assert_eq!(scan.records, 4);
        assert_eq!(scan.duplicates, 1);
        assert_eq!(scan.present.get("p").map(|s| s.iter().copied().collect::<Vec<_>>()), Some(vec![0, 1, 2]));
        assert!(scan.cut_bytes > 0);
        assert_eq!(std::fs::metadata(&path).map(|m| m.len() as usize).ok(), Some(good_len));
        let Ok(mut a) = Appender::open(&path) else { panic!("open") };
        assert!(a.append(&rec("p", 3)).is_ok());
        let all = read_records(&path).map_err(|e| e.to_string());
        assert_eq!(all.map(|v| v.iter().map(|r| r.sample).collect::<Vec<_>>()), Ok(vec![0, 1, 2, 3]));
    }

    #[test]
    fn complete_but_unterminated_line_is_also_dropped() {
        let path = tmp("unterminated");
        let mut line = serde_json::to_string(&rec("q", 0)).unwrap_or_default();
        line.push('\n');
        line.push_str(&serde_json::to_string(&rec("q", 1)).unwrap_or_default());
        assert!(std::fs::write(&path, &line).is_ok());
        let scan = scan_and_repair(&path).map_err(|e| e.to_string());
        assert_eq!(scan.map(|s| s.present.get("q").map(|s| s.len())), Ok(Some(1)));
    }

    #[test]
    fn corruption_in_the_middle_is_an_error() {
        let path = tmp("corrupt");
        assert!(std::fs::write(&path, "garbage\n{}\n").is_ok());
        assert!(matches!(scan_and_repair(&path), Err(StoreError::Corrupt { line: 1, .. })));
        let missing = path.with_file_name("none.jsonl");
        assert_eq!(scan_and_repair(&missing).map(|s| s.records).ok(), Some(0));
    }
}
