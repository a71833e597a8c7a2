//! The answer phrase of another language (issue 30, class 11): the final statement `Antwort: x`,
//! `答案：x`, ... without a box; against it, the same phrase offering a second value (`x oder y`).

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "answer_language",
    split: Split::Dev,
    why: "issue 30 class 11, named with its words (答案, Antwort, réponse, respuesta, ответ, 答え): developed against",
    operators: &[
        Operator { name: "foreign_answer_phrase", expect: Expect::Right, apply: foreign_answer_phrase },
        Operator { name: "foreign_phrase_hedge", expect: Expect::Wrong, apply: foreign_phrase_hedge },
    ],
};

fn foreign_answer_phrase(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "答案：{x}",
        "Antwort: {x}",
        "Réponse : {x}",
        "Respuesta: {x}",
        "Ответ: {x}",
        "答え：{x}",
        "Risposta: {x}",
        "Resposta: {x}",
        "정답: {x}",
        "Cevap: {x}",
    ]);
    base.with_statement(&fill(t, &[("x", &base.math())]))
}

fn foreign_phrase_hedge(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "答案：{x} 或 {y}",
        "Antwort: {x} oder {y}",
        "Réponse : {x} ou {y}",
        "Respuesta: {x} o {y}",
        "Ответ: {x} или {y}",
        "答え：{x} または {y}",
        "Risposta: {x} oppure {y}",
    ]);
    base.with_statement(&fill(t, &[("x", &base.math()), ("y", &base.alt_math())]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    #[test]
    fn foreign_answer_phrase_states_the_answer_without_a_box() {
        let (base, v) = example(foreign_answer_phrase, "27", BOXED_27);
        let last = &v[base.head().len()..];
        assert!(v.starts_with(base.head()) && last.trim_end().ends_with("$27$") && !v.contains("\\boxed"), "{v}");
    }

    #[test]
    fn foreign_phrase_hedge_offers_a_second_value() {
        let (base, v) = example(foreign_phrase_hedge, "27", BOXED_27);
        let last = &v[base.head().len()..];
        assert!(last.contains("$27$") && last.trim_end().ends_with("$28$"), "{v}");
    }
}
