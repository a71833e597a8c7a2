//! Prompt templates (`data/prompts/*.json`, compiled in; or any template file).

use serde::Deserialize;
use std::path::Path;

/// The template `rlbench run` uses unless told otherwise.
pub const DEFAULT_PROMPT: &str = "boxed";

/// The placeholder replaced by the problem text.
pub const PLACEHOLDER: &str = "{problem}";

const BUILTIN: &[(&str, &str)] = &[
    ("boxed", include_str!("../data/prompts/boxed.json")),
    ("think", include_str!("../data/prompts/think.json")),
    ("plain", include_str!("../data/prompts/plain.json")),
];

/// Errors while loading a template.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("unknown prompt `{0}`; built-in prompts: boxed, think, plain; or give a template file")]
    /// Neither a built-in name nor a file (the name).
    Unknown(String),
    #[error("{path}: {message}")]
    /// A template file that cannot be used.
    Invalid {
        /// The file.
        path: String,
        /// What is wrong with it.
        message: String,
    },
}

/// A prompt template: a system and a user message for chat servers, and one text for plain
/// completion servers.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct PromptTemplate {
    /// Its name (`boxed`, `think`, `plain`, or the file's).
    pub name: String,
    #[serde(default)]
    /// One line on what it asks for.
    pub description: String,
    /// System message (chat API).
    pub system: Option<String>,
    /// User message with `{problem}` (chat API).
    pub user: String,
    /// Whole prompt with `{problem}` (completions API); defaults to system, blank line, user.
    pub completion: Option<String>,
}

/// A template filled with one problem.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderedPrompt {
    /// System message (chat API).
    pub system: Option<String>,
    /// User message with the problem (chat API).
    pub user: String,
    /// The single text sent to `/v1/completions` (and to the embedded engine).
    pub completion: String,
}

impl PromptTemplate {
    /// A built-in template by name (any case), or a template file (`.json` as in `data/prompts/`, or a text
    /// file whose whole content is the user message).
    pub fn load(name_or_path: &str) -> Result<PromptTemplate, PromptError> {
        if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| n.eq_ignore_ascii_case(name_or_path)) {
            return PromptTemplate::from_json(text, name);
        }
        let path = Path::new(name_or_path);
        if !path.is_file() {
            return Err(PromptError::Unknown(name_or_path.to_string()));
        }
        let invalid = |message: String| PromptError::Invalid { path: name_or_path.to_string(), message };
        let text = std::fs::read_to_string(path).map_err(|e| invalid(e.to_string()))?;
        let t = if path.extension().is_some_and(|e| e == "json") {
            PromptTemplate::from_json(&text, name_or_path)?
        } else {
            let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            PromptTemplate { name, description: String::new(), system: None, user: text, completion: None }
        };
        t.validate().map_err(invalid)?;
        Ok(t)
    }

    /// The built-in templates.
    pub fn builtins() -> Vec<PromptTemplate> {
        BUILTIN.iter().filter_map(|(n, t)| PromptTemplate::from_json(t, n).ok()).collect()
    }

    fn from_json(text: &str, origin: &str) -> Result<PromptTemplate, PromptError> {
        let t: PromptTemplate = serde_json::from_str(text)
            .map_err(|e| PromptError::Invalid { path: origin.to_string(), message: e.to_string() })?;
        t.validate().map_err(|message| PromptError::Invalid { path: origin.to_string(), message })?;
        Ok(t)
    }

    fn validate(&self) -> Result<(), String> {
        if !self.user.contains(PLACEHOLDER) {
            return Err(format!("the user message has no `{PLACEHOLDER}` placeholder"));
        }
        if let Some(c) = &self.completion {
            if !c.contains(PLACEHOLDER) {
                return Err(format!("the completion text has no `{PLACEHOLDER}` placeholder"));
            }
        }
        Ok(())
    }

    /// The completion-API text with the placeholder still in it.
    fn completion_template(&self) -> String {
        match (&self.completion, &self.system) {
            (Some(c), _) => c.clone(),
            (None, Some(s)) => format!("{s}\n\n{}", self.user),
            (None, None) => self.user.clone(),
        }
    }

    /// Fill the template with a problem.
    pub fn render(&self, problem: &str) -> RenderedPrompt {
        RenderedPrompt {
            system: self.system.clone(),
            user: self.user.replace(PLACEHOLDER, problem),
            completion: self.completion_template().replace(PLACEHOLDER, problem),
        }
    }

    /// A stable hash of what the template sends (system, user and completion texts; not the name or
    /// description), as 16 hex digits of 64-bit FNV-1a.
    pub fn hash(&self) -> String {
        let mut h = rlbase::Fnv1a::new();
        h.write(self.system.as_deref().unwrap_or("").as_bytes());
        h.write(&[0]);
        h.write(self.user.as_bytes());
        h.write(&[0]);
        h.write(self.completion_template().as_bytes());
        format!("{:016x}", h.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_load_and_render() {
        let boxed = PromptTemplate::load("boxed").map_err(|e| e.to_string());
        let Ok(boxed) = boxed else { panic!("{boxed:?}") };
        let r = boxed.render("What is 1+1?");
        assert_eq!(
            r.system.as_deref(),
            Some("Please reason step by step, and put your final answer within \\boxed{}.")
        );
        assert_eq!(r.user, "What is 1+1?");
        assert!(r.completion.starts_with("What is 1+1?\nPlease reason step by step"));
        let think = PromptTemplate::load("think").map_err(|e| e.to_string());
        let Ok(think) = think else { panic!("{think:?}") };
        assert!(think.system.as_deref().is_some_and(|s| s.contains("<think> </think> and <answer> </answer>")));
        let plain = PromptTemplate::load("plain").map_err(|e| e.to_string());
        let Ok(plain) = plain else { panic!("{plain:?}") };
        assert_eq!(plain.render("x").user, "x");
        assert_eq!(plain.render("x").system, None);
        assert_eq!(PromptTemplate::builtins().len(), 3);
    }

    #[test]
    fn braces_other_than_the_placeholder_are_kept() {
        let t = PromptTemplate {
            name: "t".into(),
            description: String::new(),
            system: None,
            user: "{problem} in \\boxed{} {x}".into(),
            completion: None,
        };
        assert_eq!(t.render("P").user, "P in \\boxed{} {x}");
    }

    #[test]
    fn hash_tracks_content_not_name() {
        let a = PromptTemplate {
            name: "a".into(),
            description: "x".into(),
            system: None,
            user: "{problem}".into(),
            completion: None,
        };
        let mut b = a.clone();
        b.name = "b".into();
        assert_eq!(a.hash(), b.hash());
        b.user = "{problem}!".into();
        assert_ne!(a.hash(), b.hash());
        assert!(matches!(PromptTemplate::load("nope-not-a-template"), Err(PromptError::Unknown(_))));
        // Built-in names, as the suite names, are read whatever their case.
        let upper = PromptTemplate::load("Boxed").map(|t| (t.name.clone(), t.hash()));
        assert_eq!(upper.ok(), PromptTemplate::load("boxed").ok().map(|t| (t.name.clone(), t.hash())));
    }
}
