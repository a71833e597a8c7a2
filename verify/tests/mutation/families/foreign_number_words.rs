//! Number words of other languages after the answer (issue 30, classes 3 and 11): the boxed
//! answer restated in Spanish, German or French words (`\boxed{27} (veintisiete)`), or offered
//! with another value in those words (`\boxed{27} (o veintiocho)`, `oder achtundzwanzig`).

use crate::mutation::{Base, Expect, Family, Operator, Rng, Split, Variant};

pub static FAMILY: Family = Family {
    name: "foreign_number_words",
    split: Split::HeldOut,
    why: "issue 30 classes 3 and 11 in the number words of other languages, which no family writes \
          (`value_form` and `other_script_alternative` write English words): added after the first \
          look at the other families, measured before any fix for it",
    operators: &[
        Operator { name: "foreign_words_restated", expect: Expect::Right, apply: foreign_words_restated },
        Operator { name: "foreign_words_alternative", expect: Expect::Wrong, apply: foreign_words_alternative },
    ],
};

/// A language: its number words below 100 and its `or`.
struct Language {
    words: fn(i64) -> Option<String>,
    or: &'static str,
}

const LANGUAGES: &[Language] = &[
    Language { words: spanish, or: "o" },
    Language { words: german, or: "oder" },
    Language { words: french, or: "ou" },
];

/// Spanish number words, 0 to 99.
pub fn spanish(n: i64) -> Option<String> {
    const LOW: [&str; 30] = [
        "cero",
        "uno",
        "dos",
        "tres",
        "cuatro",
        "cinco",
        "seis",
        "siete",
        "ocho",
        "nueve",
        "diez",
        "once",
        "doce",
        "trece",
        "catorce",
        "quince",
        "dieciséis",
        "diecisiete",
        "dieciocho",
        "diecinueve",
        "veinte",
        "veintiuno",
        "veintidós",
        "veintitrés",
        "veinticuatro",
        "veinticinco",
        "veintiséis",
        "veintisiete",
        "veintiocho",
        "veintinueve",
    ];
    const TENS: [&str; 10] =
        ["", "", "", "treinta", "cuarenta", "cincuenta", "sesenta", "setenta", "ochenta", "noventa"];
    let n = usize::try_from(n).ok().filter(|n| *n < 100)?;
    Some(match n {
        0..=29 => LOW[n].to_string(),
        _ if n % 10 == 0 => TENS[n / 10].to_string(),
        _ => format!("{} y {}", TENS[n / 10], LOW[n % 10]),
    })
}

/// German number words, 0 to 99.
pub fn german(n: i64) -> Option<String> {
    const LOW: [&str; 20] = [
        "null",
        "eins",
        "zwei",
        "drei",
        "vier",
        "fünf",
        "sechs",
        "sieben",
        "acht",
        "neun",
        "zehn",
        "elf",
        "zwölf",
        "dreizehn",
        "vierzehn",
        "fünfzehn",
        "sechzehn",
        "siebzehn",
        "achtzehn",
        "neunzehn",
    ];
    const TENS: [&str; 10] =
        ["", "", "zwanzig", "dreißig", "vierzig", "fünfzig", "sechzig", "siebzig", "achtzig", "neunzig"];
    let n = usize::try_from(n).ok().filter(|n| *n < 100)?;
    Some(match n {
        0..=19 => LOW[n].to_string(),
        _ if n % 10 == 0 => TENS[n / 10].to_string(),
        _ if n % 10 == 1 => format!("einund{}", TENS[n / 10]),
        _ => format!("{}und{}", LOW[n % 10], TENS[n / 10]),
    })
}

/// French number words, 0 to 99.
pub fn french(n: i64) -> Option<String> {
    const LOW: [&str; 20] = [
        "zéro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze", "douze",
        "treize", "quatorze", "quinze", "seize", "dix-sept", "dix-huit", "dix-neuf",
    ];
    const TENS: [&str; 10] = ["", "", "vingt", "trente", "quarante", "cinquante", "soixante", "", "quatre-vingt", ""];
    let n = usize::try_from(n).ok().filter(|n| *n < 100)?;
    let (t, u) = (n / 10, n % 10);
    Some(match n {
        0..=19 => LOW[n].to_string(),
        80 => "quatre-vingts".to_string(),
        _ if t == 7 || t == 9 => {
            let base = TENS[t - 1];
            if n == 71 {
                "soixante et onze".to_string()
            } else {
                format!("{base}-{}", LOW[10 + u])
            }
        }
        _ if u == 0 => TENS[t].to_string(),
        _ if u == 1 && t != 8 => format!("{} et un", TENS[t]),
        _ => format!("{}-{}", TENS[t], LOW[u]),
    })
}

/// The boxed answer restated in another language's words.
fn foreign_words_restated(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer?;
    let lang = rng.pick(LANGUAGES);
    base.insert_after_answer(&format!(" ({})", (lang.words)(n)?))
}

/// The boxed answer, then `or` and another value in another language's words.
fn foreign_words_alternative(base: &Base, rng: &mut Rng) -> Option<Variant> {
    let n = base.integer?;
    let other = if rng.below(2) == 0 { n + 1 } else { n - 1 };
    let lang = rng.pick(LANGUAGES);
    base.insert_after_answer(&format!(" ({} {})", lang.or, (lang.words)(other)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::families::{example, BOXED_27};

    #[test]
    fn number_words_are_written_right() {
        assert_eq!(spanish(27).as_deref(), Some("veintisiete"));
        assert_eq!(spanish(45).as_deref(), Some("cuarenta y cinco"));
        assert_eq!(german(27).as_deref(), Some("siebenundzwanzig"));
        assert_eq!(german(31).as_deref(), Some("einunddreißig"));
        assert_eq!(french(27).as_deref(), Some("vingt-sept"));
        assert_eq!(french(71).as_deref(), Some("soixante et onze"));
        assert_eq!(french(75).as_deref(), Some("soixante-quinze"));
        assert_eq!(french(80).as_deref(), Some("quatre-vingts"));
        assert_eq!(french(81).as_deref(), Some("quatre-vingt-un"));
        assert_eq!(french(99).as_deref(), Some("quatre-vingt-dix-neuf"));
        assert_eq!(french(21).as_deref(), Some("vingt et un"));
        assert_eq!(spanish(100), None);
    }

    #[test]
    fn operators_follow_the_box() {
        let (_, v) = example(foreign_words_restated, "27", BOXED_27);
        assert!(
            ["veintisiete", "siebenundzwanzig", "vingt-sept"].iter().any(|w| v.contains(&format!("$ ({w})"))),
            "{v}"
        );
        let (_, v) = example(foreign_words_alternative, "27", BOXED_27);
        assert!(["(o ", "(oder ", "(ou "].iter().any(|w| v.contains(w)), "{v}");
    }
}
