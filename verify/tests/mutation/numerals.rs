//! Integers written without ASCII digits: English number words, the decimal digits of other
//! scripts, fullwidth digits and Roman numerals (ASCII letters or Unicode's Roman numeral signs).

const ONES: [&str; 20] = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
];
const TENS: [&str; 10] = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"];

/// `n` in English words (`327` is `three hundred twenty-seven`), for `0 <= n < 1_000_000`.
pub fn words(n: i64) -> Option<String> {
    if !(0..1_000_000).contains(&n) {
        return None;
    }
    fn below_thousand(n: usize) -> String {
        let (hundreds, rest) = (n / 100, n % 100);
        let rest_words = match rest {
            0 => String::new(),
            1..=19 => ONES[rest].to_string(),
            _ if rest % 10 == 0 => TENS[rest / 10].to_string(),
            _ => format!("{}-{}", TENS[rest / 10], ONES[rest % 10]),
        };
        match (hundreds, rest) {
            (0, _) => rest_words,
            (h, 0) => format!("{} hundred", ONES[h]),
            (h, _) => format!("{} hundred {rest_words}", ONES[h]),
        }
    }
    let n = n as usize;
    Some(match (n / 1000, n % 1000) {
        (0, 0) => "zero".to_string(),
        (0, r) => below_thousand(r),
        (t, 0) => format!("{} thousand", below_thousand(t)),
        (t, r) => format!("{} thousand {}", below_thousand(t), below_thousand(r)),
    })
}

/// Scripts whose decimal digits are ten consecutive code points, by the code point of their zero.
pub const DIGIT_SCRIPTS: &[(&str, u32)] = &[
    ("Arabic-Indic", 0x0660),
    ("Devanagari", 0x0966),
    ("Bengali", 0x09E6),
    ("Thai", 0x0E50),
    ("Tamil", 0x0BE6),
    ("fullwidth", 0xFF10),
];

/// The digits of a non-negative `n` in the script whose zero is `zero`.
pub fn digits_in(n: i64, zero: u32) -> Option<String> {
    (n >= 0).then(|| n.to_string().chars().filter_map(|c| char::from_u32(zero + c.to_digit(10)?)).collect())
}

/// Fullwidth digits (`２７`); a minus sign stays ASCII.
pub fn fullwidth(n: i64) -> String {
    let digits = digits_in(n.abs(), 0xFF10).unwrap_or_default();
    if n < 0 {
        format!("-{digits}")
    } else {
        digits
    }
}

/// `n` in Roman numerals (`XXVII`), for `1 <= n < 4000`.
pub fn roman(n: i64) -> Option<String> {
    if !(1..4000).contains(&n) {
        return None;
    }
    let table = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut rest = n;
    let mut out = String::new();
    for (value, letters) in table {
        while rest >= value {
            out.push_str(letters);
            rest -= value;
        }
    }
    Some(out)
}

/// `n` in Unicode's Roman numeral signs (`ⅩⅩⅦ`, U+2160 block), letter for letter.
pub fn roman_signs(n: i64) -> Option<String> {
    let sign = |c: char| match c {
        'I' => 'Ⅰ',
        'V' => 'Ⅴ',
        'X' => 'Ⅹ',
        'L' => 'Ⅼ',
        'C' => 'Ⅽ',
        'D' => 'Ⅾ',
        _ => 'Ⅿ',
    };
    Some(roman(n)?.chars().map(sign).collect())
}

#[test]
fn numerals_are_written_right() {
    assert_eq!(words(0).as_deref(), Some("zero"));
    assert_eq!(words(27).as_deref(), Some("twenty-seven"));
    assert_eq!(words(300).as_deref(), Some("three hundred"));
    assert_eq!(words(12_045).as_deref(), Some("twelve thousand forty-five"));
    assert_eq!(words(-1), None);
    assert_eq!(digits_in(27, 0x0660).as_deref(), Some("٢٧"));
    assert_eq!(fullwidth(-27), "-２７");
    assert_eq!(roman(1994).as_deref(), Some("MCMXCIV"));
    assert_eq!(roman_signs(27).as_deref(), Some("ⅩⅩⅤⅠⅠ"));
    assert_eq!(roman(0), None);
}
