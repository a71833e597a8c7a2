//! Numbers written in words, in the languages the lexicon reads: English, Spanish, German,
//! French, Italian, Portuguese, Russian, and the numerals of Chinese and Japanese (`二十七`).
//!
//! Table-driven: each language is a table of words (and the parts of its compound words), each
//! with its value and how it combines with what came before ([`Join`]). A phrase is read in one
//! language: its words are split at spaces and hyphens (`vingt-sept`, `cuarenta y cinco`), and a
//! word that the table does not hold whole is split into parts of the table, longest first
//! (`siebenundzwanzig` = `sieben` `und` `zwanzig`, `ventisette` = `venti` `sette`,
//! `veintinueve` = `veinti` `nueve`, `duecento` = `due` `cento`). The parts combine as numbers
//! are spoken:
//!
//! - a value below a hundred **adds**, in falling order (`soixante-dix-sept` = 60 + 10 + 7,
//!   `twenty seven`); a unit then a ten only after German `und` (`sieben und zwanzig`);
//! - French `vingt` after a unit **multiplies** it (`quatre-vingt-dix` = 4 × 20 + 10);
//! - a hundred word multiplies what came before (`deux cents`, `zweihundert`, `three hundred`);
//! - a thousand or more closes a group (`dos mil doce`, `two thousand twelve`);
//! - `and`, `y`, `e`, `et` join two parts and nothing else.
//!
//! A phrase that breaks these rules (`five five`, `seven twenty`) is no number. Words that are
//! also common English words (`once`, `due`, `elf`, `cent`, `null`, `um`) are read only inside a
//! phrase of several parts, never alone: `(once we simplify)` offers no value. Cost: a phrase
//! has at most [`MAX_PARTS`] parts; a word is split by a bounded search.

/// How a part combines with what came before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Join {
    /// Added, in falling order (`twenty`, `sept`, `veinti`).
    Add,
    /// Multiplies the group so far, at least one (`hundred`, `cent`, `hundert`, `cento`).
    Hundred,
    /// Closes the group so far, at least one, times its value (`thousand`, `mil`, `тысяча`).
    Scale,
    /// French `vingt` (`quatre-vingt`): multiplies a unit before it, else adds 20.
    Vingt,
    /// `and`, `y`, `e`, `et`: joins two parts.
    And,
    /// German `und`: a unit, then the ten it adds to (`siebenundzwanzig`).
    Und,
}

use std::collections::HashSet;
use std::sync::LazyLock;
use Join::*;

/// One language's words.
struct Language {
    /// Words and the parts of compound words, lower-case, with their values.
    words: &'static [(&'static str, u64, Join)],
    /// Whether its words compound without a space (`siebenundzwanzig`, `ventisette`).
    compounds: bool,
    /// Its words that offer another value (`oder`, `o`, `ou`, `vielleicht`; each of the lexicon's
    /// `HedgeCue` class): after one, a word that is also an English word (`elf`, `once`, `un`) is
    /// this language's number.
    hedges: &'static [&'static str],
}

const ENGLISH: &[(&str, u64, Join)] = &[
    ("zero", 0, Add),
    ("one", 1, Add),
    ("two", 2, Add),
    ("three", 3, Add),
    ("four", 4, Add),
    ("five", 5, Add),
    ("six", 6, Add),
    ("seven", 7, Add),
    ("eight", 8, Add),
    ("nine", 9, Add),
    ("ten", 10, Add),
    ("eleven", 11, Add),
    ("twelve", 12, Add),
    ("thirteen", 13, Add),
    ("fourteen", 14, Add),
    ("fifteen", 15, Add),
    ("sixteen", 16, Add),
    ("seventeen", 17, Add),
    ("eighteen", 18, Add),
    ("nineteen", 19, Add),
    ("twenty", 20, Add),
    ("thirty", 30, Add),
    ("forty", 40, Add),
    ("fifty", 50, Add),
    ("sixty", 60, Add),
    ("seventy", 70, Add),
    ("eighty", 80, Add),
    ("ninety", 90, Add),
    ("hundred", 100, Hundred),
    ("thousand", 1000, Scale),
    ("million", 1_000_000, Scale),
    ("billion", 1_000_000_000, Scale),
    ("and", 0, And),
];

const SPANISH: &[(&str, u64, Join)] = &[
    ("cero", 0, Add),
    ("uno", 1, Add),
    ("un", 1, Add),
    ("una", 1, Add),
    ("ún", 1, Add),
    ("dos", 2, Add),
    ("dós", 2, Add),
    ("tres", 3, Add),
    ("trés", 3, Add),
    ("cuatro", 4, Add),
    ("cinco", 5, Add),
    ("seis", 6, Add),
    ("séis", 6, Add),
    ("siete", 7, Add),
    ("ocho", 8, Add),
    ("nueve", 9, Add),
    ("diez", 10, Add),
    ("once", 11, Add),
    ("doce", 12, Add),
    ("trece", 13, Add),
    ("catorce", 14, Add),
    ("quince", 15, Add),
    ("dieciséis", 16, Add),
    ("dieciseis", 16, Add),
    ("diecisiete", 17, Add),
    ("dieciocho", 18, Add),
    ("diecinueve", 19, Add),
    ("veinte", 20, Add),
    ("veinti", 20, Add),
    ("treinta", 30, Add),
    ("cuarenta", 40, Add),
    ("cincuenta", 50, Add),
    ("sesenta", 60, Add),
    ("setenta", 70, Add),
    ("ochenta", 80, Add),
    ("noventa", 90, Add),
    ("cien", 100, Add),
    ("ciento", 100, Add),
    ("doscientos", 200, Add),
    ("trescientos", 300, Add),
    ("cuatrocientos", 400, Add),
    ("quinientos", 500, Add),
    ("seiscientos", 600, Add),
    ("setecientos", 700, Add),
    ("ochocientos", 800, Add),
    ("novecientos", 900, Add),
    ("mil", 1000, Scale),
    ("millón", 1_000_000, Scale),
    ("millones", 1_000_000, Scale),
    ("y", 0, And),
];

const GERMAN: &[(&str, u64, Join)] = &[
    ("null", 0, Add),
    ("eins", 1, Add),
    ("ein", 1, Add),
    ("eine", 1, Add),
    ("zwei", 2, Add),
    ("drei", 3, Add),
    ("vier", 4, Add),
    ("fünf", 5, Add),
    ("sechs", 6, Add),
    ("sieben", 7, Add),
    ("acht", 8, Add),
    ("neun", 9, Add),
    ("zehn", 10, Add),
    ("elf", 11, Add),
    ("zwölf", 12, Add),
    ("dreizehn", 13, Add),
    ("vierzehn", 14, Add),
    ("fünfzehn", 15, Add),
    ("sechzehn", 16, Add),
    ("siebzehn", 17, Add),
    ("achtzehn", 18, Add),
    ("neunzehn", 19, Add),
    ("zwanzig", 20, Add),
    ("dreißig", 30, Add),
    ("dreissig", 30, Add),
    ("vierzig", 40, Add),
    ("fünfzig", 50, Add),
    ("sechzig", 60, Add),
    ("siebzig", 70, Add),
    ("achtzig", 80, Add),
    ("neunzig", 90, Add),
    ("hundert", 100, Hundred),
    ("tausend", 1000, Scale),
    ("million", 1_000_000, Scale),
    ("millionen", 1_000_000, Scale),
    ("und", 0, Und),
];

const FRENCH: &[(&str, u64, Join)] = &[
    ("zéro", 0, Add),
    ("zero", 0, Add),
    ("un", 1, Add),
    ("une", 1, Add),
    ("deux", 2, Add),
    ("trois", 3, Add),
    ("quatre", 4, Add),
    ("cinq", 5, Add),
    ("six", 6, Add),
    ("sept", 7, Add),
    ("huit", 8, Add),
    ("neuf", 9, Add),
    ("dix", 10, Add),
    ("onze", 11, Add),
    ("douze", 12, Add),
    ("treize", 13, Add),
    ("quatorze", 14, Add),
    ("quinze", 15, Add),
    ("seize", 16, Add),
    ("vingt", 20, Vingt),
    ("vingts", 20, Vingt),
    ("trente", 30, Add),
    ("quarante", 40, Add),
    ("cinquante", 50, Add),
    ("soixante", 60, Add),
    ("cent", 100, Hundred),
    ("cents", 100, Hundred),
    ("mille", 1000, Scale),
    ("million", 1_000_000, Scale),
    ("millions", 1_000_000, Scale),
    ("et", 0, And),
];

const ITALIAN: &[(&str, u64, Join)] = &[
    ("zero", 0, Add),
    ("uno", 1, Add),
    ("un", 1, Add),
    ("una", 1, Add),
    ("due", 2, Add),
    ("tre", 3, Add),
    ("tré", 3, Add),
    ("quattro", 4, Add),
    ("cinque", 5, Add),
    ("sei", 6, Add),
    ("sette", 7, Add),
    ("otto", 8, Add),
    ("nove", 9, Add),
    ("dieci", 10, Add),
    ("undici", 11, Add),
    ("dodici", 12, Add),
    ("tredici", 13, Add),
    ("quattordici", 14, Add),
    ("quindici", 15, Add),
    ("sedici", 16, Add),
    ("diciassette", 17, Add),
    ("diciotto", 18, Add),
    ("diciannove", 19, Add),
    ("venti", 20, Add),
    ("vent", 20, Add),
    ("trenta", 30, Add),
    ("trent", 30, Add),
    ("quaranta", 40, Add),
    ("quarant", 40, Add),
    ("cinquanta", 50, Add),
    ("cinquant", 50, Add),
    ("sessanta", 60, Add),
    ("sessant", 60, Add),
    ("settanta", 70, Add),
    ("settant", 70, Add),
    ("ottanta", 80, Add),
    ("ottant", 80, Add),
    ("novanta", 90, Add),
    ("novant", 90, Add),
    ("cento", 100, Hundred),
    ("mille", 1000, Scale),
    ("mila", 1000, Scale),
    ("milione", 1_000_000, Scale),
    ("milioni", 1_000_000, Scale),
    ("e", 0, And),
];

const PORTUGUESE: &[(&str, u64, Join)] = &[
    ("zero", 0, Add),
    ("um", 1, Add),
    ("uma", 1, Add),
    ("dois", 2, Add),
    ("duas", 2, Add),
    ("três", 3, Add),
    ("tres", 3, Add),
    ("quatro", 4, Add),
    ("cinco", 5, Add),
    ("seis", 6, Add),
    ("sete", 7, Add),
    ("oito", 8, Add),
    ("nove", 9, Add),
    ("dez", 10, Add),
    ("onze", 11, Add),
    ("doze", 12, Add),
    ("treze", 13, Add),
    ("catorze", 14, Add),
    ("quatorze", 14, Add),
    ("quinze", 15, Add),
    ("dezesseis", 16, Add),
    ("dezasseis", 16, Add),
    ("dezessete", 17, Add),
    ("dezassete", 17, Add),
    ("dezoito", 18, Add),
    ("dezenove", 19, Add),
    ("dezanove", 19, Add),
    ("vinte", 20, Add),
    ("trinta", 30, Add),
    ("quarenta", 40, Add),
    ("cinquenta", 50, Add),
    ("sessenta", 60, Add),
    ("setenta", 70, Add),
    ("oitenta", 80, Add),
    ("noventa", 90, Add),
    ("cem", 100, Add),
    ("cento", 100, Add),
    ("duzentos", 200, Add),
    ("trezentos", 300, Add),
    ("quatrocentos", 400, Add),
    ("quinhentos", 500, Add),
    ("seiscentos", 600, Add),
    ("setecentos", 700, Add),
    ("oitocentos", 800, Add),
    ("novecentos", 900, Add),
    ("mil", 1000, Scale),
    ("milhão", 1_000_000, Scale),
    ("milhões", 1_000_000, Scale),
    ("e", 0, And),
];

const RUSSIAN: &[(&str, u64, Join)] = &[
    ("ноль", 0, Add),
    ("нуль", 0, Add),
    ("один", 1, Add),
    ("одна", 1, Add),
    ("одно", 1, Add),
    ("два", 2, Add),
    ("две", 2, Add),
    ("три", 3, Add),
    ("четыре", 4, Add),
    ("пять", 5, Add),
    ("шесть", 6, Add),
    ("семь", 7, Add),
    ("восемь", 8, Add),
    ("девять", 9, Add),
    ("десять", 10, Add),
    ("одиннадцать", 11, Add),
    ("двенадцать", 12, Add),
    ("тринадцать", 13, Add),
    ("четырнадцать", 14, Add),
    ("пятнадцать", 15, Add),
    ("шестнадцать", 16, Add),
    ("семнадцать", 17, Add),
    ("восемнадцать", 18, Add),
    ("девятнадцать", 19, Add),
    ("двадцать", 20, Add),
    ("тридцать", 30, Add),
    ("сорок", 40, Add),
    ("пятьдесят", 50, Add),
    ("шестьдесят", 60, Add),
    ("семьдесят", 70, Add),
    ("восемьдесят", 80, Add),
    ("девяносто", 90, Add),
    ("сто", 100, Add),
    ("двести", 200, Add),
    ("триста", 300, Add),
    ("четыреста", 400, Add),
    ("пятьсот", 500, Add),
    ("шестьсот", 600, Add),
    ("семьсот", 700, Add),
    ("восемьсот", 800, Add),
    ("девятьсот", 900, Add),
    ("тысяча", 1000, Scale),
    ("тысячи", 1000, Scale),
    ("тысяч", 1000, Scale),
    ("миллион", 1_000_000, Scale),
    ("миллиона", 1_000_000, Scale),
    ("миллионов", 1_000_000, Scale),
];

const LANGUAGES: &[Language] = &[
    Language { words: ENGLISH, compounds: false, hedges: &[] },
    Language { words: SPANISH, compounds: true, hedges: &["o", "quizá", "quizás", "posiblemente", "probablemente"] },
    Language {
        words: GERMAN,
        compounds: true,
        hedges: &["oder", "vielleicht", "eventuell", "möglicherweise", "wahrscheinlich"],
    },
    Language { words: FRENCH, compounds: false, hedges: &["ou", "possiblement", "probablement"] },
    Language { words: ITALIAN, compounds: true, hedges: &["o", "oppure", "forse", "probabilmente"] },
    Language { words: PORTUGUESE, compounds: false, hedges: &["ou", "talvez", "possivelmente", "provavelmente"] },
    Language { words: RUSSIAN, compounds: false, hedges: &["или", "либо", "возможно"] },
];

/// Words that are also common English words: read only inside a phrase of several parts.
const ENGLISH_HOMOGRAPHS: &[&str] = &["once", "due", "elf", "cent", "cents", "null", "um", "un", "tre", "mil"];

/// Most parts of a phrase (`quatre-vingt-dix-sept mille deux cent trente et un`).
pub(crate) const MAX_PARTS: usize = 16;
/// Most bytes of a phrase read.
const MAX_PHRASE_BYTES: usize = 120;

/// The value of `text` when it is a number in words of one language (`five`, `veintinueve`,
/// `siebenundzwanzig`, `quatre-vingt-dix-sept`, `двадцать семь`, `二十七`): see the module doc.
pub(crate) fn value(text: &str) -> Option<u64> {
    let t = text.trim();
    if t.is_empty() || t.len() > MAX_PHRASE_BYTES {
        return None;
    }
    if t.chars().all(|c| cjk_digit(c).is_some() || cjk_power(c).is_some()) {
        return cjk_value(t);
    }
    let lower = t.to_lowercase();
    let words: Vec<&str> = lower.split(|c: char| c.is_whitespace() || c == '-').filter(|w| !w.is_empty()).collect();
    if words.is_empty()
        || words.len() > MAX_PARTS
        || (words.len() == 1 && ENGLISH_HOMOGRAPHS.contains(&words[0]))
        || !may_start(words[0])
    {
        return None;
    }
    LANGUAGES.iter().find_map(|lang| {
        let mut parts = Vec::new();
        for w in &words {
            split(lang, w, &mut parts, 0)?;
        }
        combine(&parts)
    })
}

/// The longest leading run of words of `text` that is a number in words (at most [`MAX_PARTS`]
/// words, on one line): its byte length and value. `text` starts at a word.
pub(crate) fn leading(text: &str) -> Option<(usize, u64)> {
    let mut cap = text.len().min(MAX_PHRASE_BYTES + 8);
    while !text.is_char_boundary(cap) {
        cap -= 1;
    }
    let text = &text[..cap];
    let line = &text[..text.find(['\n', '\r']).unwrap_or(text.len())];
    if line.starts_with(|c: char| cjk_digit(c).is_some() || cjk_power(c).is_some()) {
        // No spaces between Chinese words: the run of numerals.
        let end = line
            .char_indices()
            .find(|&(_, c)| cjk_digit(c).is_none() && cjk_power(c).is_none())
            .map_or(line.len(), |(k, _)| k);
        return cjk_value(&line[..end]).map(|v| (end, v));
    }
    let first_end = line.find(|c: char| !c.is_alphabetic()).unwrap_or(line.len());
    let first = &line[..first_end];
    let known =
        if first.bytes().all(|c| c.is_ascii_lowercase()) { may_start(first) } else { may_start(&first.to_lowercase()) };
    if first_end == 0 || first_end > 40 || !known {
        return None;
    }
    let stop = line
        .char_indices()
        .find(|&(k, c)| k > MAX_PHRASE_BYTES || !(c.is_alphabetic() || c == ' ' || c == '-'))
        .map_or(line.len(), |(k, _)| k);
    let segment = &line[..stop];
    let mut ends: Vec<usize> = segment
        .char_indices()
        .filter(|&(k, c)| !c.is_alphabetic() && segment[..k].ends_with(char::is_alphabetic))
        .map(|(k, _)| k)
        .take(MAX_PARTS)
        .collect();
    if segment.ends_with(char::is_alphabetic) && ends.len() < MAX_PARTS {
        ends.push(segment.len());
    }
    ends.iter().rev().find_map(|&end| value(&segment[..end]).map(|v| (end, v)))
}

/// [`leading`], after the hedge word `cue` (lower-cased): a word that is also an English word
/// (`elf`, `once`, `un`) is read alone as the number of a language whose hedge `cue` is (`oder
/// elf`, `o once`, `ou un`), never after an English cue (`or once we simplify`).
#[cfg(test)]
pub(crate) fn leading_after(cue: &str, text: &str) -> Option<(usize, u64)> {
    leading(text).or_else(|| homograph_after(cue, text))
}

/// The word that is also an English word and a number of the language of the hedge `cue` at the
/// start of `text` (`elf` after `oder`), when [`leading`] has found no number there.
pub(crate) fn homograph_after(cue: &str, text: &str) -> Option<(usize, u64)> {
    let len = text.find(|c: char| !c.is_alphabetic()).unwrap_or(text.len());
    let word = &text[..len];
    if len == 0 || len > 16 || !ENGLISH_HOMOGRAPHS.iter().any(|h| h.eq_ignore_ascii_case(word)) {
        return None;
    }
    let lower = word.to_ascii_lowercase();
    LANGUAGES.iter().filter(|lang| lang.hedges.contains(&cue)).find_map(|lang| {
        let (_, v, _) = lang.words.iter().find(|(w, _, j)| *w == lower && !matches!(j, And | Und))?;
        Some((len, *v))
    })
}

/// Every word of every table, and the first three letters of the words of compounding languages:
/// a word that is neither, nor starts with one of them, starts no number (the cheap test made
/// before reading a phrase, since a statement's words are mostly not numbers).
struct Index {
    words: HashSet<&'static str>,
    stems: HashSet<&'static str>,
}

static INDEX: LazyLock<Index> = LazyLock::new(|| {
    let mut index = Index { words: HashSet::new(), stems: HashSet::new() };
    for lang in LANGUAGES {
        // `and`, `y`, `und` join two parts and start none.
        for (w, _, _) in lang.words.iter().filter(|(_, _, j)| !matches!(j, And | Und)) {
            index.words.insert(w);
            if lang.compounds {
                index.stems.insert(stem(w));
            }
        }
    }
    index
});

/// The first three characters of `w` (all of it when shorter).
fn stem(w: &str) -> &str {
    &w[..w.char_indices().nth(3).map_or(w.len(), |(k, _)| k)]
}

/// Whether the lower-cased `word` may start a number in words (see [`Index`]).
fn may_start(word: &str) -> bool {
    let index = &*INDEX;
    index.words.contains(word) || index.stems.contains(stem(word))
}

/// Split `word` into parts of `lang` (longest first), appended to `parts`; `None` when it cannot be.
fn split(lang: &Language, word: &str, parts: &mut Vec<(u64, Join)>, depth: usize) -> Option<()> {
    if let Some(&(_, v, j)) = lang.words.iter().find(|(w, _, _)| *w == word) {
        parts.push((v, j));
        return Some(());
    }
    if !lang.compounds || depth >= 6 || parts.len() >= MAX_PARTS {
        return None;
    }
    let mut prefixes: Vec<&(&str, u64, Join)> =
        lang.words.iter().filter(|(w, _, _)| w.len() >= 2 && word.len() > w.len() && word.starts_with(w)).collect();
    prefixes.sort_by_key(|(w, _, _)| std::cmp::Reverse(w.len()));
    for &(w, v, j) in prefixes {
        let at = parts.len();
        parts.push((v, j));
        if split(lang, &word[w.len()..], parts, depth + 1).is_some() {
            return Some(());
        }
        parts.truncate(at);
    }
    None
}

/// The value of parts in the order spoken (module doc), or `None` when they break its rules.
fn combine(parts: &[(u64, Join)]) -> Option<u64> {
    let (mut total, mut group) = (0u64, 0u64);
    // The last part added in this group, and whether a part was read at all.
    let mut last: Option<u64> = None;
    let (mut und, mut any) = (false, false);
    for (k, &(v, join)) in parts.iter().enumerate() {
        match join {
            And | Und => {
                // Between two number parts only; `und` then needs a ten after a unit.
                let next_is_number = parts.get(k + 1).is_some_and(|p| !matches!(p.1, And | Und));
                if k == 0 || !next_is_number {
                    return None;
                }
                if join == Und {
                    if last.is_none_or(|l| l >= 10) {
                        return None;
                    }
                    und = true;
                }
            }
            Add | Vingt => {
                if join == Vingt && last.is_some_and(|l| (2..10).contains(&l)) && group < 10 {
                    group *= 20;
                    last = Some(group);
                } else {
                    let fits = match last {
                        None => true,
                        Some(_) if und => v % 10 == 0 && (20..100).contains(&v),
                        Some(l) if l >= 100 => v < l.min(1000) || (l >= 1000 && v < 1000),
                        Some(l) if l % 10 == 0 && l >= 20 => v < 10 || ((l == 60 || l == 80) && v < 20),
                        Some(10) => v < 10,
                        Some(_) => false,
                    };
                    if !fits {
                        return None;
                    }
                    group = group.checked_add(v)?;
                    // After `und` the unit and its ten are one number: nothing more adds to it.
                    last = Some(if und { group } else { v });
                    und = false;
                }
            }
            Hundred => {
                if group >= 100 {
                    return None;
                }
                group = group.max(1).checked_mul(v)?;
                last = Some(group);
            }
            Scale => {
                total = total.checked_add(group.max(1).checked_mul(v)?)?;
                group = 0;
                last = Some(v);
            }
        }
        any |= !matches!(join, And | Und);
    }
    (any && !und).then_some(total.checked_add(group)?)
}

/// A Chinese or Japanese digit (`〇`, `零`, `一` ... `九`, `两`).
fn cjk_digit(c: char) -> Option<u64> {
    Some(match c {
        '〇' | '零' => 0,
        '一' => 1,
        '二' | '两' | '兩' => 2,
        '三' => 3,
        '四' => 4,
        '五' => 5,
        '六' => 6,
        '七' => 7,
        '八' => 8,
        '九' => 9,
        _ => return None,
    })
}

/// A Chinese or Japanese power of ten (`十`, `百`, `千`, `万`, `億`).
fn cjk_power(c: char) -> Option<u64> {
    Some(match c {
        '十' => 10,
        '百' => 100,
        '千' => 1000,
        '万' | '萬' => 10_000,
        '亿' | '億' => 100_000_000,
        _ => return None,
    })
}

/// `二十七` = 27, `一百零五` = 105, `三千` = 3000, `十二` = 12, `五万` = 50000.
fn cjk_value(t: &str) -> Option<u64> {
    let (mut total, mut section, mut digit): (u64, u64, Option<u64>) = (0, 0, None);
    let mut count = 0;
    for c in t.chars() {
        count += 1;
        if count > MAX_PARTS {
            return None;
        }
        if let Some(d) = cjk_digit(c) {
            if digit.is_some_and(|x| x != 0) && d != 0 {
                // Two digits in a row (`二三`) spell no number here.
                return None;
            }
            digit = Some(d);
        } else if let Some(p) = cjk_power(c) {
            if p >= 10_000 {
                section = section.checked_add(digit.unwrap_or(0))?;
                total = total.checked_add(section.max(1).checked_mul(p)?)?;
                section = 0;
            } else {
                section = section.checked_add(digit.unwrap_or(1).checked_mul(p)?)?;
            }
            digit = None;
        }
    }
    total.checked_add(section)?.checked_add(digit.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Option<u64> {
        value(s)
    }

    #[test]
    fn english_homographs_after_a_hedge_of_their_language() {
        assert_eq!(leading_after("oder", "elf)"), Some((3, 11)));
        assert_eq!(leading_after("o", "once"), Some((4, 11)));
        assert_eq!(leading_after("ou", "un."), Some((2, 1)));
        assert_eq!(leading_after("or", "once we simplify"), None);
        assert_eq!(leading_after("oder", "zwölf"), Some(("zwölf".len(), 12)));
        // Each language's hedge words are hedge cues of the lexicon.
        for lang in LANGUAGES {
            for h in lang.hedges {
                assert!(crate::lexicon::is(h, crate::lexicon::Class::HedgeCue), "{h}");
            }
        }
    }

    #[test]
    fn english() {
        assert_eq!(v("five"), Some(5));
        assert_eq!(v("Twenty-one"), Some(21));
        assert_eq!(v("three hundred and five"), Some(305));
        assert_eq!(v("two thousand twelve"), Some(2012));
        assert_eq!(v("five five"), None);
        assert_eq!(v("seven twenty"), None);
        assert_eq!(v("and"), None);
        assert_eq!(v("five and"), None);
    }

    #[test]
    fn spanish() {
        assert_eq!(v("cinco"), Some(5));
        assert_eq!(v("veintinueve"), Some(29));
        assert_eq!(v("veintidós"), Some(22));
        assert_eq!(v("cuarenta y cinco"), Some(45));
        assert_eq!(v("ciento veinte"), Some(120));
        assert_eq!(v("doscientos treinta y uno"), Some(231));
        assert_eq!(v("dos mil doce"), Some(2012));
        assert_eq!(v("dieciséis"), Some(16));
        assert_eq!(v("cuarenta cinco y"), None);
    }

    #[test]
    fn german() {
        assert_eq!(v("fünf"), Some(5));
        assert_eq!(v("siebenundzwanzig"), Some(27));
        assert_eq!(v("einunddreißig"), Some(31));
        assert_eq!(v("zweihundertsiebenundzwanzig"), Some(227));
        assert_eq!(v("dreitausendfünf"), Some(3005));
        assert_eq!(v("siebzehn"), Some(17));
        assert_eq!(v("zwanzigundsieben"), None);
        assert_eq!(v("elf"), None, "an English word alone");
    }

    #[test]
    fn french() {
        assert_eq!(v("vingt-sept"), Some(27));
        assert_eq!(v("soixante et onze"), Some(71));
        assert_eq!(v("soixante-dix-sept"), Some(77));
        assert_eq!(v("quatre-vingts"), Some(80));
        assert_eq!(v("quatre-vingt-un"), Some(81));
        assert_eq!(v("quatre-vingt-dix-neuf"), Some(99));
        assert_eq!(v("vingt et un"), Some(21));
        assert_eq!(v("deux cents"), Some(200));
        assert_eq!(v("mille deux cent trente"), Some(1230));
        assert_eq!(v("dix-sept"), Some(17));
    }

    #[test]
    fn italian_and_portuguese() {
        assert_eq!(v("ventisette"), Some(27));
        assert_eq!(v("ventotto"), Some(28));
        assert_eq!(v("trentadue"), Some(32));
        assert_eq!(v("duecento"), Some(200));
        assert_eq!(v("centoventi"), Some(120));
        assert_eq!(v("tremila"), Some(3000));
        assert_eq!(v("vinte e sete"), Some(27));
        assert_eq!(v("cento e vinte"), Some(120));
        assert_eq!(v("três"), Some(3));
        assert_eq!(v("due"), None, "an English word alone");
    }

    #[test]
    fn russian() {
        assert_eq!(v("пять"), Some(5));
        assert_eq!(v("двадцать семь"), Some(27));
        assert_eq!(v("сто двадцать три"), Some(123));
        assert_eq!(v("две тысячи двадцать"), Some(2020));
        assert_eq!(v("семь двадцать"), None);
    }

    #[test]
    fn chinese_and_japanese() {
        assert_eq!(v("五"), Some(5));
        assert_eq!(v("二十七"), Some(27));
        assert_eq!(v("十二"), Some(12));
        assert_eq!(v("一百零五"), Some(105));
        assert_eq!(v("三千"), Some(3000));
        assert_eq!(v("五万"), Some(50000));
        assert_eq!(v("二三"), None);
    }

    #[test]
    fn leading_phrases() {
        assert_eq!(leading("vingt-sept)"), Some((10, 27)));
        assert_eq!(leading("cuarenta y cinco manzanas"), Some((16, 45)));
        assert_eq!(leading("once we simplify"), None);
        assert_eq!(leading("we simplify"), None);
    }
}
