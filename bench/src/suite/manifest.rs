//! The suite manifest (`data/suites.json`, compiled into the binary).

use super::{Fields, SuiteError};
use serde::Deserialize;

/// The manifest shipped with rlbench.
const BUILTIN: &str = include_str!("../../data/suites.json");

/// One suite of the manifest.
#[derive(Clone, Debug, Deserialize)]
pub struct SuiteSpec {
    /// The name `--suite` accepts.
    pub name: String,
    /// File name inside the data directory.
    pub file: String,
    /// Expected number of problems (checked on load; a mismatch is a warning).
    pub count: Option<usize>,
    /// Kind of gold answers (`integer`, `number`, `latex`), informative.
    #[serde(default)]
    pub answer_type: String,
    /// One-line description.
    #[serde(default)]
    pub description: String,
    /// Field holding the problem text (default `problem`).
    pub problem_field: Option<String>,
    /// Field holding the gold answer (default `answer`).
    pub answer_field: Option<String>,
}

impl SuiteSpec {
    /// The field names to read this suite with.
    pub fn fields(&self) -> Fields {
        let d = Fields::default();
        Fields {
            problem: self.problem_field.clone().unwrap_or(d.problem),
            answer: self.answer_field.clone().unwrap_or(d.answer),
            id: d.id,
        }
    }
}

/// The list of known suites.
#[derive(Clone, Debug, Deserialize)]
pub struct Manifest {
    /// Every suite, in the order reports list them.
    pub suites: Vec<SuiteSpec>,
}

impl Manifest {
    /// The manifest compiled in from `data/suites.json`.
    pub fn builtin() -> Result<Manifest, SuiteError> {
        Manifest::parse(BUILTIN)
    }

    /// Parse a manifest from JSON text.
    pub fn parse(text: &str) -> Result<Manifest, SuiteError> {
        serde_json::from_str(text).map_err(|e| SuiteError::Manifest(e.to_string()))
    }

    /// A suite by name (exact, case-insensitive).
    pub fn get(&self, name: &str) -> Option<&SuiteSpec> {
        self.suites.iter().find(|s| s.name.eq_ignore_ascii_case(name))
    }

    /// All suite names, in manifest order.
    pub fn names(&self) -> Vec<String> {
        self.suites.iter().map(|s| s.name.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_lists_the_seven_suites() {
        let m = Manifest::builtin().map_err(|e| e.to_string());
        let m = m.as_ref().map(|m| m.names());
        assert_eq!(
            m,
            Ok(vec!["aime24", "aime25", "amc23", "math500", "minerva", "olympiadbench", "gsm8k"]
                .into_iter()
                .map(String::from)
                .collect())
        );
    }
}
