//! Synthetic tasks: small arithmetic whose answers `rlverify` checks, generated for any size and
//! seed (`--data task:NAME`), each with a tiny alphabet so a from-scratch model can use a
//! tokenizer of a dozen or so tokens and learn on a CPU in a minute or two.

use std::path::Path;

use rlbench::suite::Problem;

use crate::error::{Error, Result};
use crate::rng::{derive_seed, TrainRng};

/// A registered synthetic task.
#[derive(Debug, Clone, Copy)]
pub struct Task {
    /// Name used in `task:NAME`.
    pub name: &'static str,
    /// One line for `--help` and listings.
    pub description: &'static str,
    /// Every character a problem or answer may contain.
    pub alphabet: &'static str,
    generate: fn(&mut TrainRng) -> (String, String),
}

const DIGITS_OPS: &str = "0123456789+-*=";

fn digit(rng: &mut TrainRng, hi: usize) -> usize {
    rng.below(hi + 1)
}

/// Every registered task.
pub static TASKS: &[Task] = &[
    Task {
        name: "succ",
        description: "successor of a digit: `4+1=` -> `5` (9 distinct problems)",
        alphabet: DIGITS_OPS,
        generate: |r| {
            let a = digit(r, 8);
            (format!("{a}+1="), (a + 1).to_string())
        },
    },
    Task {
        name: "add-small",
        description: "sums of two digits 0-4: `3+4=` -> `7` (25 distinct problems)",
        alphabet: DIGITS_OPS,
        generate: |r| {
            let (a, b) = (digit(r, 4), digit(r, 4));
            (format!("{a}+{b}="), (a + b).to_string())
        },
    },
    Task {
        name: "add",
        description: "sums of two digits: `7+8=` -> `15` (100 distinct problems)",
        alphabet: DIGITS_OPS,
        generate: |r| {
            let (a, b) = (digit(r, 9), digit(r, 9));
            (format!("{a}+{b}="), (a + b).to_string())
        },
    },
    Task {
        name: "sub",
        description: "differences of two digits, never negative: `9-3=` -> `6`",
        alphabet: DIGITS_OPS,
        generate: |r| {
            let (a, b) = (digit(r, 9), digit(r, 9));
            let (a, b) = if a >= b { (a, b) } else { (b, a) };
            (format!("{a}-{b}="), (a - b).to_string())
        },
    },
    Task {
        name: "mul",
        description: "products of two digits: `6*7=` -> `42`",
        alphabet: DIGITS_OPS,
        generate: |r| {
            let (a, b) = (digit(r, 9), digit(r, 9));
            (format!("{a}*{b}="), (a * b).to_string())
        },
    },
    Task {
        name: "add2",
        description: "sums of two two-digit numbers: `34+58=` -> `92`",
        alphabet: DIGITS_OPS,
        generate: |r| {
            let (a, b) = (10 + r.below(90), 10 + r.below(90));
            (format!("{a}+{b}="), (a + b).to_string())
        },
    },
];

impl Task {
    /// Looks a task up by name, in any case; the error names the closest and lists the valid names.
    pub fn from_name(name: &str) -> Result<&'static Task> {
        TASKS.iter().find(|t| t.name.eq_ignore_ascii_case(name.trim())).ok_or_else(|| {
            let names = TASKS.iter().map(|t| t.name);
            Error::Data(format!(
                "unknown task `{name}`{}; valid tasks: {}",
                rlobjectives::names::did_you_mean(name, names.clone()),
                names.collect::<Vec<_>>().join(", ")
            ))
        })
    }

    /// `n` problems drawn with the seed (ids `NAME-0`, `NAME-1`, ...).
    pub fn generate(&self, n: usize, seed: u64) -> Vec<Problem> {
        let mut rng = TrainRng::new(derive_seed(&[seed, rlbase::fnv1a(self.name.as_bytes())]));
        (0..n)
            .map(|i| {
                let (problem, answer) = (self.generate)(&mut rng);
                Problem { id: format!("{}-{i}", self.name), problem, answer }
            })
            .collect()
    }

    /// The problems as JSONL (`id`, `problem`, `answer`), as shipped in `data/tasks/`.
    pub fn to_jsonl(&self, n: usize, seed: u64) -> String {
        self.generate(n, seed)
            .iter()
            .map(|p| serde_json::json!({"id": p.id, "problem": p.problem, "answer": p.answer}).to_string() + "\n")
            .collect()
    }
}

/// Size of the files shipped in `data/tasks/`.
pub const SHIPPED_SIZE: usize = 200;
/// Seed of the files shipped in `data/tasks/`.
pub const SHIPPED_SEED: u64 = 0;

/// The end-of-sequence (and padding) token of task tokenizers, id 0.
pub const TASK_EOS: &str = "<|endoftext|>";

/// A Hugging Face `tokenizer.json` with one token per character of `alphabet` (ids from 1) after
/// the end-of-sequence token (id 0): the "task tokenizer" of tiny models.
pub fn task_tokenizer_json(alphabet: &str) -> String {
    let mut chars: Vec<char> = alphabet.chars().collect();
    chars.sort_unstable();
    chars.dedup();
    let mut vocab = serde_json::Map::new();
    vocab.insert(TASK_EOS.into(), 0.into());
    for (i, c) in chars.iter().enumerate() {
        vocab.insert(c.to_string(), (i + 1).into());
    }
    serde_json::json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [{
            "id": 0, "content": TASK_EOS, "single_word": false, "lstrip": false,
            "rstrip": false, "normalized": false, "special": true
        }],
        "normalizer": null,
        "pre_tokenizer": null,
        "post_processor": null,
        "decoder": {"type": "Fuse"},
        "model": {
            "type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
            "ignore_merges": false, "vocab": vocab, "merges": []
        }
    })
    .to_string()
}

/// Writes the task tokenizer (plus `tokenizer_config.json` naming its EOS) into `dir`.
pub fn write_task_tokenizer(dir: &Path, alphabet: &str) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let path = dir.join("tokenizer.json");
    std::fs::write(&path, task_tokenizer_json(alphabet)).map_err(|e| Error::io(&path, e))?;
    let path = dir.join("tokenizer_config.json");
    let cfg = serde_json::json!({"eos_token": TASK_EOS, "pad_token": TASK_EOS, "add_bos_token": false});
    std::fs::write(&path, cfg.to_string()).map_err(|e| Error::io(&path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_right_and_verified_by_rlverify() {
        let cfg = rlverify::Config::default();
        for task in TASKS {
            let problems = task.generate(50, 7);
            assert_eq!(problems.len(), 50);
            for p in &problems {
                assert!(p.problem.chars().chain(p.answer.chars()).all(|c| task.alphabet.contains(c)), "{p:?}");
                let gold = rlverify::Gold::new(&p.answer, &cfg);
                assert!(gold.score(&p.answer, &cfg).correct, "{p:?}");
                let wrong = (p.answer.parse::<i64>().unwrap_or(0) + 1).to_string();
                assert!(!gold.score(&wrong, &cfg).correct, "{p:?} vs {wrong}");
            }
            // The arithmetic itself: evaluate the problem.
            for p in &problems {
                let expr = p.problem.trim_end_matches('=');
                let value = if let Some((a, b)) = expr.split_once('+') {
                    a.parse::<i64>().unwrap() + b.parse::<i64>().unwrap()
                } else if let Some((a, b)) = expr.split_once('-') {
                    a.parse::<i64>().unwrap() - b.parse::<i64>().unwrap()
                } else if let Some((a, b)) = expr.split_once('*') {
                    a.parse::<i64>().unwrap() * b.parse::<i64>().unwrap()
                } else {
                    panic!("{expr}")
                };
                assert_eq!(value.to_string(), p.answer, "{p:?}");
            }
        }
    }

    #[test]
    fn same_seed_same_problems() {
        let t = Task::from_name("add").unwrap();
        assert_eq!(t.generate(20, 1), t.generate(20, 1));
        assert_ne!(t.generate(20, 1), t.generate(20, 2));
        assert!(Task::from_name("nope").is_err());
    }

    #[test]
    fn shipped_files_match_the_generator() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/tasks");
        for task in TASKS {
            let path = dir.join(format!("{}.jsonl", task.name));
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            assert_eq!(text, task.to_jsonl(SHIPPED_SIZE, SHIPPED_SEED), "{}", path.display());
        }
    }

    #[test]
    fn task_tokenizer_round_trips() {
        let dir = std::env::temp_dir().join(format!("rltrain-tok-test-{}", std::process::id()));
        write_task_tokenizer(&dir, DIGITS_OPS).unwrap();
        let tok = rlengine::Tokenizer::from_hf_dir(&dir).unwrap();
        let ids = tok.encode("12+7=").unwrap();
        assert_eq!(ids.len(), 5);
        assert_eq!(tok.decode(&ids, true).unwrap(), "12+7=");
        assert_eq!(tok.vocab_size(), 15);
        assert_eq!(tok.eos_ids(), &[0]);
        let mut with_eos = ids.clone();
        with_eos.push(0);
        assert_eq!(tok.decode(&with_eos, true).unwrap(), "12+7=");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
