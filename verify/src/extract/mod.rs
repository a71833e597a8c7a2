//! Final-answer extraction from a full model response (STUB: replaced by the extraction module).

/// Where an extracted answer came from, in priority order of the strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// `\boxed{..}` / `\fbox{..}` (the last one, or several joined into a list).
    Boxed,
    /// `<answer>...</answer>`.
    AnswerTag,
    /// "The final answer is ...".
    FinalAnswerPhrase,
    /// "Answer: ...".
    AnswerColon,
    /// GSM8K `#### 42`.
    Gsm8k,
    /// Markdown bold `**...**`.
    Bold,
    /// The last `$...$`, `\(...\)`, `\[...\]`, `$$...$$` block.
    MathDelimiters,
    /// A multiple-choice letter (A)-(E).
    Choice,
    /// The last number in the text (fallback).
    LastNumber,
    /// The whole (short) text taken as the answer: bare LaTeX with no delimiters.
    Whole,
}

impl Source {
    /// Stable snake_case name for JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Boxed => "boxed",
            Source::AnswerTag => "answer_tag",
            Source::FinalAnswerPhrase => "final_answer_phrase",
            Source::AnswerColon => "answer_colon",
            Source::Gsm8k => "gsm8k",
            Source::Bold => "bold",
            Source::MathDelimiters => "math_delimiters",
            Source::Choice => "choice",
            Source::LastNumber => "last_number",
            Source::Whole => "whole",
        }
    }
}

/// An extracted final answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The answer as one string for the parser (list parts joined by ", ").
    pub text: String,
    /// The parts when the answer is a list of several boxes (empty otherwise).
    pub parts: Vec<String>,
    /// Which strategy found it.
    pub source: Source,
}

/// Extraction switches.
#[derive(Clone, Debug)]
pub struct ExtractOptions {
    /// Fall back to the last number in the text when nothing else matched.
    pub last_number_fallback: bool,
    /// Accept a whole short response with no delimiters as bare LaTeX.
    pub whole_fallback: bool,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions { last_number_fallback: false, whole_fallback: true }
    }
}

/// Extract the final answer of `response`. STUB: returns the trimmed text.
pub fn extract(response: &str, opts: &ExtractOptions) -> Option<Answer> {
    let t = response.trim();
    if t.is_empty() || !opts.whole_fallback {
        return None;
    }
    Some(Answer { text: t.to_string(), parts: Vec::new(), source: Source::Whole })
}
