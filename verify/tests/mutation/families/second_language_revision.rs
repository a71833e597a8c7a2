//! A revision or a hedge in another language after an English answer, as multilingual models
//! drift into: a sentence that says the value is another one (`Non, en fait c'est 28.`, `等等，其实
//! 应该是 28。`) or an aside that offers another value (`(o quizás 28)`); against them, a
//! restatement or a check in another language that gives the same value. The values are digits;
//! number words of other languages are `foreign_number_words`'.

use crate::mutation::{fill, Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "second_language_revision",
    split: Split::HeldOut,
    why: "the later corrections and hedges under way, in the words of other languages than the \
          answer's (none of the fixes' phrases): added on 2026-11-27 and scored first-seen on \
          07ad560, before any fix for it: held out",
    operators: &[
        Operator { name: "foreign_revision", expect: Expect::Wrong, apply: foreign_revision },
        Operator { name: "foreign_hedge_aside", expect: Expect::Wrong, apply: foreign_hedge_aside },
        Operator { name: "foreign_restatement", expect: Expect::Right, apply: foreign_restatement },
        Operator { name: "foreign_check", expect: Expect::Right, apply: foreign_check },
    ],
};

/// After the answer, a sentence in another language that revises it to another value.
fn foreign_revision(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Non, en fait c'est {y}.",
        "Moment, eigentlich ist es {y}.",
        "Espera, en realidad es {y}.",
        "等等，其实应该是 {y}。",
        "Подождите, на самом деле получается {y}.",
        "Aspetta, in realtà è {y}.",
        "Espere, na verdade é {y}.",
        "待って、実は {y} です。",
    ]);
    base.append(&fill(t, &[("y", &base.alt_math())]), rng.below(2) == 0)
}

/// Right after the answer, an aside in another language that offers another value.
fn foreign_hedge_aside(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        " (o quizás {y})",
        " (oder vielleicht {y})",
        " (ou peut-être {y})",
        "（也可能是 {y}）",
        " (или, возможно, {y})",
        " (o forse {y})",
        " (ou talvez {y})",
        " (あるいは {y})",
    ]);
    base.insert_after_answer(&fill(t, &[("y", &base.alt_math())]))
}

/// After the answer, a sentence in another language that restates it.
fn foreign_restatement(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Donc le résultat est bien {x}.",
        "Also ist das Ergebnis {x}.",
        "Es decir, {x}.",
        "所以结果是 {x}。",
        "Итак, получаем {x}.",
        "Quindi il risultato è {x}.",
        "つまり {x} です。",
        "Portanto, o resultado é {x}.",
    ]);
    base.append(&fill(t, &[("x", &base.math())]), rng.below(2) == 0)
}

/// After the answer, a check in another language that finds it again.
fn foreign_check(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let t = rng.pick(&[
        "Vérification : en remplaçant, on retrouve bien {x}.",
        "Probe: Einsetzen ergibt wieder {x}.",
        "Comprobación: al sustituir obtenemos {x} de nuevo.",
        "验证：代入后仍得 {x}。",
        "Проверка: подстановка снова даёт {x}.",
        "Verifica: sostituendo si ottiene di nuovo {x}.",
    ]);
    base.append(&fill(t, &[("x", &base.math())]), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    fn added(op: fn(&Base, &mut Rng) -> Option<Variant>) -> String {
        let (_, v) = example(op, "27", BOXED_27);
        let at = v.find("\\boxed{27}").expect("the box stays") + "\\boxed{27}".len();
        v[at..].to_string()
    }

    /// True when `s` holds a character outside ASCII or a word of the templates' other languages.
    fn foreign(s: &str) -> bool {
        !s.is_ascii()
            || ["eigentlich", "realidad", "verdade", "Ergebnis", "Es decir", "Einsetzen", "sostituendo"]
                .iter()
                .any(|w| s.contains(w))
    }

    #[test]
    fn foreign_revision_gives_another_value_after_the_answer() {
        let a = added(foreign_revision);
        assert!(a.contains("$28$") && foreign(&a), "{a}");
    }

    #[test]
    fn foreign_hedge_aside_offers_another_value_after_the_answer() {
        let a = added(foreign_hedge_aside);
        assert!(a.contains("$28$") && foreign(&a), "{a}");
        let (base, v) = example(foreign_hedge_aside, "27", BOXED_27);
        assert!(v.starts_with(&base.response[..base.span.1]), "{v}");
        assert!(v.ends_with(").") || v.ends_with("）."), "the aside comes before the sentence's period: {v}");
    }

    #[test]
    fn foreign_restatement_restates_the_answer() {
        let a = added(foreign_restatement);
        assert!(a.contains("$27$") && !a.contains("28") && foreign(&a), "{a}");
    }

    #[test]
    fn foreign_check_finds_the_answer_again() {
        let a = added(foreign_check);
        assert!(a.contains("$27$") && !a.contains("28") && foreign(&a), "{a}");
    }
}
