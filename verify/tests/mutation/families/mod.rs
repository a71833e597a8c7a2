//! The families of operators, one module per family. Each module holds its operators, the
//! templates they draw from (several phrasings each) and a unit test per operator on a fixed base.
//!
//! **The split.** [`Split::Dev`] families are the classes issue 30 names most plainly (a later
//! correction, boxes that are not the answer, structured fields, units and scales, chat turns, a
//! choice read from an article, a negated box, the answer phrase of another language, number words
//! and fullwidth digits, concluding sentences): fixes are written against them. The
//! [`Split::HeldOut`] families are kept back to measure a first look: four the issue does not
//! name at all (pleasantries and other-reading hedges, bounds instead of values, a code check
//! after the answer, numbers after the answer that do not answer), two it names only loosely (answer tags with other names and underscore bold,
//! a sentence in a `\text{}` box) and two it names (alternatives in another script, a condition
//! instead of a value), so the held-out score covers both shapes nobody wrote down and named
//! shapes in phrasings nobody tested. Five more held-out families were added on 2026-11-27 and
//! scored first-seen on 07ad560, before any fix for them (an exact answer given as an
//! approximation, a self-assessment that splits belief, answer layouts as tables, headings and
//! frames, invented sub-questions, a revision or hedge in another language). A second set of six
//! held-out families was added on 2026-11-27 and scored first-seen on 42b6fdd, before any fix for
//! them (a value offered under a condition, emphasis followed by a hedge, an answer given early and
//! a check that ends on another value, values spoken in a dialogue, LaTeX transcription variants
//! of the answer, a recap table or list after the answer). A third set of five held-out families was
//! added on 2026-11-27 and scored first-seen on a3fc502, before any fix for them (a long afterword
//! after the answer, the answer inside a list of values in prose, numbers formatted in other
//! conventions, apologies that box again, answers inside Markdown and HTML structure).

use super::{Base, Family, Rng, Variant};

pub mod answer_inside_prose_list;
pub mod answer_language;
pub mod answer_layout;
pub mod answer_markup;
pub mod apologies_and_retries;
pub mod approximation;
pub mod article_choice;
pub mod bound_not_value;
pub mod chat_turn;
pub mod code_after_answer;
pub mod condition_not_value;
pub mod conditional_alternative;
pub mod delayed_commitment;
pub mod dialogue_voice;
pub mod eaten_gold;
pub mod emphasis_hedge;
pub mod foreign_box;
pub mod foreign_number_words;
pub mod harness_separator;
pub mod later_correction;
pub mod long_tail_after_answer;
pub mod markdown_structure;
pub mod multi_part;
pub mod negated_box;
pub mod numbers_after_answer;
pub mod numbers_with_formatting;
pub mod other_script_alternative;
pub mod pleasantries;
pub mod recap_table;
pub mod second_language_revision;
pub mod self_assessment;
pub mod sentence_in_box;
pub mod structured_fields;
pub mod transcription_variants;
pub mod unit_conversion;
pub mod unit_scale;
pub mod unit_spelling;
pub mod unmarked_conclusion;
pub mod value_form;
pub mod value_relation;

/// Every family, development families first.
pub fn all() -> [&'static Family; 40] {
    [
        &later_correction::FAMILY,
        &foreign_box::FAMILY,
        &structured_fields::FAMILY,
        &unit_scale::FAMILY,
        &chat_turn::FAMILY,
        &article_choice::FAMILY,
        &negated_box::FAMILY,
        &answer_language::FAMILY,
        &value_form::FAMILY,
        &unmarked_conclusion::FAMILY,
        &other_script_alternative::FAMILY,
        &condition_not_value::FAMILY,
        &answer_markup::FAMILY,
        &sentence_in_box::FAMILY,
        &pleasantries::FAMILY,
        &bound_not_value::FAMILY,
        &code_after_answer::FAMILY,
        &numbers_after_answer::FAMILY,
        &unit_conversion::FAMILY,
        &unit_spelling::FAMILY,
        &value_relation::FAMILY,
        &harness_separator::FAMILY,
        &eaten_gold::FAMILY,
        &foreign_number_words::FAMILY,
        &approximation::FAMILY,
        &self_assessment::FAMILY,
        &answer_layout::FAMILY,
        &multi_part::FAMILY,
        &second_language_revision::FAMILY,
        &conditional_alternative::FAMILY,
        &emphasis_hedge::FAMILY,
        &delayed_commitment::FAMILY,
        &dialogue_voice::FAMILY,
        &transcription_variants::FAMILY,
        &recap_table::FAMILY,
        &long_tail_after_answer::FAMILY,
        &answer_inside_prose_list::FAMILY,
        &numbers_with_formatting::FAMILY,
        &apologies_and_retries::FAMILY,
        &markdown_structure::FAMILY,
    ]
}

/// Test support: `apply` on the base of `response` for `gold` (which must be right today), with
/// the engine's seed; panics when the base or the variant is missing.
#[cfg(test)]
pub fn example(apply: fn(&Base, &mut Rng) -> Option<Variant>, gold: &str, response: &str) -> (Base, String) {
    let base = Base::new("example", gold, response).expect("the example is a right response with a located answer");
    let variant = apply(&base, &mut Rng::new(super::SEED)).expect("the operator applies to the example");
    (base, variant.response)
}

/// Test support: what `apply`'s variant of `response` (for `gold`) writes after the base's head
/// (the statement it puts in place of the base's), trimmed.
#[cfg(test)]
pub fn statement_of(apply: fn(&Base, &mut Rng) -> Option<Variant>, gold: &str, response: &str) -> String {
    let (base, v) = example(apply, gold, response);
    assert!(v.starts_with(base.head()), "{v}");
    v[base.head().len()..].trim().to_string()
}

/// Test support: [`statement_of`] the variant of [`BOXED_27`] (gold 27).
#[cfg(test)]
pub fn statement_of_27(apply: fn(&Base, &mut Rng) -> Option<Variant>) -> String {
    statement_of(apply, "27", BOXED_27)
}

/// Test support: the last box of `apply`'s variant of [`BOXED_27`] (gold 27), to its end.
#[cfg(test)]
pub fn last_box_of_27(apply: fn(&Base, &mut Rng) -> Option<Variant>) -> String {
    let (_, v) = example(apply, "27", BOXED_27);
    v[v.rfind("\\boxed{").expect("a box")..].to_string()
}

/// The fixed base of most unit tests: a short derivation that ends in a boxed integer.
#[cfg(test)]
pub const BOXED_27: &str = "We add 20 and 7 to get 27 apples.\n\nTherefore, the total is $\\boxed{27}$.";
