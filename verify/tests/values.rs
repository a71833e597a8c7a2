//! Issue 30, the values side: units and scales, a condition instead of a value, golds whose
//! backslashes a JSON layer ate, percent for a fractional gold, and chat-template and harness
//! markers. Each class in both directions: responses that must be wrong, and right answers that
//! must stay right (instances written for these tests, not the examples).

use rlverify::{score, Config, Score};

fn judged(gold: &str, response: &str) -> Score {
    score(response, gold, &Config::default())
}

/// Asserts every `(gold, response)` row is scored `correct` (`right`) or not (`!right`).
fn check(rows: &[(&str, &str)], right: bool) {
    let failures: Vec<String> = rows
        .iter()
        .filter(|(gold, response)| judged(gold, response).correct != right)
        .map(|(gold, response)| format!("gold {gold:?} response {response:?}: {:?}", judged(gold, response)))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} should be {}:\n{}",
        failures.len(),
        rows.len(),
        if right { "right" } else { "wrong" },
        failures.join("\n")
    );
}

#[test]
fn a_unit_that_changes_the_value_is_wrong() {
    check(
        &[
            ("4 \\text{ km}", "The road is $\\boxed{4 \\text{ m}}$ long."),
            ("2 \\text{ kg}", "So the bag weighs $\\boxed{2 \\text{ g}}$."),
            ("3 \\text{ hours}", "It takes $\\boxed{3 \\text{ minutes}}$."),
            ("6 \\text{ ft}", "The fence is $\\boxed{6 \\text{ inches}}$ tall."),
            ("10 \\text{ L}", "The tank holds $\\boxed{10 \\text{ mL}}$."),
            ("2 \\text{ m}", "$\\boxed{2 \\text{ kg}}$"),
            ("45^\\circ", "The angle is $\\boxed{45 \\text{ radians}}$."),
            ("\\$15", "She paid $\\boxed{15 \\text{ cents}}$."),
            ("15", "She paid $\\boxed{15 \\text{ cents}}$."),
            ("50 \\text{ cents}", "It costs $\\boxed{50 \\text{ dollars}}$."),
            ("7", "He bought $\\boxed{7 \\text{ dozen}}$ eggs."),
            ("8", "The answer is $\\boxed{8 \\text{ thousand}}$."),
            ("\\frac{1}{5}", "The share is $\\boxed{0.2\\%}$."),
            ("30 \\text{ cm}^2", "The area is $\\boxed{30 \\text{ cm}}$."),
            ("2 \\text{ lb}", "$\\boxed{30 \\text{ oz}}$"),
            ("1 \\text{ mile}", "$\\boxed{5000 \\text{ feet}}$"),
        ],
        false,
    );
}

#[test]
fn the_gold_unit_or_an_exact_conversion_of_it_is_right() {
    check(
        &[
            ("4 \\text{ km}", "The road is $\\boxed{4000 \\text{ m}}$ long."),
            ("2 \\text{ kg}", "So the bag weighs $\\boxed{2000 \\text{ grams}}$."),
            ("3 \\text{ hours}", "It takes $\\boxed{180 \\text{ minutes}}$."),
            ("6 \\text{ ft}", "The fence is $\\boxed{72 \\text{ inches}}$ tall."),
            ("45^\\circ", "The angle is $\\boxed{\\frac{\\pi}{4} \\text{ radians}}$."),
            ("\\$15", "She paid $\\boxed{1500 \\text{ cents}}$."),
            ("\\$15", "She paid $\\boxed{15 \\text{ dollars}}$."),
            ("50 \\text{ cents}", "It costs $\\boxed{50}$ cents."),
            ("50 \\text{ cents}", "It costs $\\boxed{\\$0.50}$."),
            ("50 \\text{ cents}", "It costs $\\boxed{50 \\text{ cents}}$."),
            ("84", "He bought $\\boxed{7 \\text{ dozen}}$ eggs."),
            ("1.5 \\text{ kg}", "$\\boxed{1.5 \\text{ kg}}$"),
            ("1.5 \\text{ kg}", "$\\boxed{1.5}$"),
            ("7", "The rope is $\\boxed{7 \\text{ cm}}$ long."),
            ("7", "She has $\\boxed{7 \\text{ apples}}$."),
            ("1 \\text{ mile}", "$\\boxed{5280 \\text{ feet}}$"),
            ("2 \\text{ lb}", "$\\boxed{32 \\text{ oz}}$"),
            ("1.2 \\text{ km}", "$\\boxed{1200 \\text{ metres}}$"),
        ],
        true,
    );
}

/// A unit or scale right after the answer, on its line and before any other clause, is part of
/// it, as if written inside it: for a box and for a plain final statement alike.
#[test]
fn a_unit_after_the_answer_is_part_of_it() {
    check(
        &[
            // Against a gold without a unit, a scale word and money change the value.
            ("5", "She needs \\boxed{5} dozens of cookies."),
            ("12", "So she bakes $\\boxed{12}$ dozen."),
            ("8", "The answer is $\\boxed{8}$ thousand."),
            ("3", "The final answer is $3$ million."),
            ("50", "Each stick costs \\boxed{50} cents."),
            ("\\$12", "Each stick costs \\boxed{12} cents."),
            ("20", "The town has $\\boxed{20}$ hundred people."),
            // Against a gold with a unit, the conversion rules.
            ("12 \\text{ km}", "The road is $\\boxed{12}$ m."),
            ("12 \\text{ km}", "The road is \\(\\boxed{12}\\) m long."),
            ("3 \\text{ hours}", "It takes $\\boxed{3}$ minutes."),
            ("27 \\text{ dollars}", "She earns $\\boxed{27}$ cents."),
            ("5 \\text{ m}", "The side is $\\boxed{5} \\text{ cm}$."),
            ("40 \\text{ km/h}", "It drives at \\boxed{40} miles per hour."),
        ],
        false,
    );
    check(
        &[
            // The gold's unit or an exact conversion of it.
            ("60", "She needs \\boxed{5} dozens of cookies."),
            ("8000", "The answer is $\\boxed{8}$ thousand."),
            ("\\$12", "Each stick costs \\boxed{1200} cents."),
            ("0.5", "Each stick costs \\boxed{50} cents."),
            ("12 \\text{ km}", "The road is $\\boxed{12000}$ m."),
            ("27 \\text{ dollars}", "She earns $\\boxed{2700}$ cents."),
            ("3 \\text{ hours}", "It takes \\(\\boxed{180}\\) minutes."),
            ("49 \\text{ m}^2", "The area is $\\boxed{49} \\text{ m}^2$."),
            ("800", "The floor is \\(\\boxed{800}\\) square feet."),
            // A unit of measure against a gold without one: the question named it.
            ("8", "The rope is $\\boxed{8}$ meters long."),
            ("16", "It takes \\(\\boxed{16}\\) hours.<|endofblock|><|text|>16<|endofblock|>"),
            ("68", "The water must cool \\( \\boxed{68} \\) degrees for Donny to drink it."),
            ("8", "The final answer is $8$ kilometers."),
            // A counted noun, a word that is no unit, a new sentence or line: nothing changes.
            ("5", "She has \\boxed{5} apples."),
            ("4", "She needs \\boxed{4} more 12-ounce cans of juice."),
            ("3", "It rains \\boxed{3} a day."),
            ("7", "So $\\boxed{7}$.\n\nDozens of checks agree."),
            ("44", "The share is \\(\\boxed{44}\\) percent."),
        ],
        true,
    );
}

#[test]
fn real_unit_spellings_are_kept() {
    check(
        &[
            ("64", "The crate weighs $\\boxed{64 \\text{ lbs}}$."),
            ("156", "$\\boxed{156 \\text{ kgs}}$"),
            ("90", "Her heart rate is $\\boxed{90\\ \\text{bpm}}$."),
            ("12", "The rug covers $\\boxed{12 \\text{ sq ft}}$."),
            ("3.5", "The jug holds $\\boxed{3.5 \\text{ litres}}$."),
            ("40", "The speed is $\\boxed{40 \\text{ km/h}}$."),
            ("250", "Pour $\\boxed{250\\,\\text{mL}}$."),
            ("18", "The box holds $\\boxed{18 \\text{ cm}^3}$."),
            ("36", "The floor measures $\\boxed{36 \\text{ square metres}}$."),
            ("49", "The area is $\\boxed{49 \\text{ m}^2}$."),
            ("75", "He types $\\boxed{75 \\, \\text{WPM}}$."),
            ("16", "The plot is $\\boxed{16\\text{ m²}}$."),
        ],
        true,
    );
}

#[test]
fn rates_and_products_uom_does_not_name_are_composed() {
    check(
        &[
            ("3 \\text{ km/h}", "The speed is $\\boxed{3000 \\text{ m/h}}$."),
            ("3 \\text{ km/h}", "The speed is $\\boxed{3000 \\text{ meters per hour}}$."),
            ("5 \\text{ kWh}", "It uses $\\boxed{5000 \\text{ Wh}}$."),
            ("1 \\text{ GB/s}", "$\\boxed{1000 \\text{ MB/s}}$"),
            ("9", "It uses $\\boxed{9 \\text{ kWh}}$."),
            ("2 \\text{ m/s}^2", "$\\boxed{200 \\text{ cm/s}^2}$"),
        ],
        true,
    );
    check(
        &[
            ("3 \\text{ km/h}", "The speed is $\\boxed{3 \\text{ m/h}}$."),
            ("3 \\text{ km/h}", "The speed is $\\boxed{3000 \\text{ m/s}}$."),
            ("5 \\text{ kWh}", "It uses $\\boxed{5 \\text{ Wh}}$."),
            ("2 \\text{ m/s}^2", "$\\boxed{2 \\text{ m/s}}$"),
        ],
        false,
    );
}

/// A letter after a number is a unit only where the other side writes a unit that it converts to
/// (a gold of `4 \text{ km}` makes the `m` of `4000 m` a metre); everywhere else it is a
/// variable (`5 x`, and `5 m` against a gold of 5: nothing says `m` is not a variable).
#[test]
fn letters_after_a_number_are_a_unit_only_against_a_unit() {
    check(
        &[
            ("4 \\text{ km}", "The road is $\\boxed{4000 m}$ long."),
            ("2 \\text{ kg}", "So the bag weighs $\\boxed{2000 g}$."),
            ("3 \\text{ minutes}", "It takes $\\boxed{180 s}$."),
            ("3 \\text{ L}", "$\\boxed{3000 mL}$"),
            ("5 \\text{ m}", "$\\boxed{5 m}$"),
            ("5 m", "$\\boxed{500 \\text{ cm}}$"),
            ("10 \\text{ m/s}^2", "$\\boxed{10 m/s^2}$"),
            ("2 \\text{ m}^2", "$\\boxed{20000 cm^2}$"),
            ("-5 \\text{ m}", "$\\boxed{-500 cm}$"),
        ],
        true,
    );
    check(
        &[
            ("4 \\text{ km}", "The road is $\\boxed{4 m}$ long."),
            ("2 \\text{ kg}", "So the bag weighs $\\boxed{2 g}$."),
            ("5 \\text{ m}", "$\\boxed{5 x}$"),
            ("5 \\text{ m}", "$\\boxed{5 s}$"),
            ("10 \\text{ m/s}^2", "$\\boxed{10 m/s}$"),
            ("5", "$\\boxed{5 m}$"),
            ("5", "$\\boxed{5 x}$"),
            ("2n", "$\\boxed{2}$"),
        ],
        false,
    );
}

/// Units of everyday answers that uom names only with a qualifier (`liquid quart`) or not at all
/// (calendar units): an unqualified quart or pint is the US liquid one, a month a twelfth of a
/// 365-day year.
#[test]
fn quarts_pints_and_calendar_units_convert() {
    check(
        &[
            ("550 \\text{ gallons}", "Karla saved $\\boxed{2200}$ quarts of gasoline."),
            ("1 \\text{ gallon}", "$\\boxed{8 \\text{ pints}}$"),
            ("1 \\text{ year}", "$\\boxed{12 \\text{ months}}$"),
            ("14 \\text{ days}", "$\\boxed{2 \\text{ weeks}}$"),
            ("30 \\text{ years}", "$\\boxed{3 \\text{ decades}}$"),
        ],
        true,
    );
    check(
        &[
            ("550 \\text{ gallons}", "Karla saved $\\boxed{550}$ quarts of gasoline."),
            ("5730 \\text{ years}", "It takes $\\boxed{5730}$ months."),
            ("3 \\text{ weeks}", "$\\boxed{3 \\text{ days}}$"),
        ],
        false,
    );
}

/// A number and a unit in one `\\text{}` are the value in that unit, not a sentence whose words
/// are dropped (`\\text{5 dozen}` is 60).
#[test]
fn a_number_and_its_unit_in_one_text_are_a_quantity() {
    check(
        &[
            ("60", "$\\boxed{\\text{5 dozen}}$"),
            ("3400", "$\\boxed{\\text{34 hundred}}$"),
            ("3 \\text{ km/h}", "$\\boxed{\\text{3000 m/h}}$"),
            ("5", "$\\boxed{\\text{5 cm}}$"),
            ("5", "$\\boxed{\\text{5 apples}}$"),
            ("\\text{5 m}", "$\\boxed{500 \\text{ cm}}$"),
        ],
        true,
    );
    check(
        &[
            ("5", "$\\boxed{\\text{5 dozen}}$"),
            ("34", "$\\boxed{\\text{34 hundred}}$"),
            ("5", "$\\boxed{\\text{5 cents}}$"),
            ("5 \\text{ km}", "$\\boxed{\\text{5 m}}$"),
        ],
        false,
    );
}

#[test]
fn a_condition_on_the_unknown_is_not_its_value() {
    check(
        &[
            ("6", "Therefore $\\boxed{|t| = 6}$."),
            ("16", "So $\\boxed{m^2 = 16}$."),
            ("12", "Hence $\\boxed{2n = 12}$."),
            ("20", "The answer is $\\boxed{y + 3 = 20}$."),
        ],
        false,
    );
    check(
        &[
            ("6", "Therefore $\\boxed{t = 6}$."),
            ("9", "So $\\boxed{\\frac{3}{4} \\cdot 12 = 9}$."),
            ("5", "The side is $\\boxed{AB = 5}$."),
            ("5", "Then $\\boxed{|AB| = 5}$."),
            ("x^2", "$\\boxed{f(x) = x^2}$"),
        ],
        true,
    );
}

#[test]
fn golds_whose_backslashes_a_json_layer_ate_are_invalid() {
    for gold in [
        "\u{9}heta + 1",
        "2 \u{9}imes 3",
        "5\u{9}ext{ cm}",
        "\u{9}frac{2}{3}",
        "x \u{a}eq 4",
        "\u{a}u_0",
        "\u{d}ho = 2",
        "\\left(1, 2\u{d}ight)",
        "\u{c}rac{1}{2}",
        "\u{8}inom{4}{2}",
    ] {
        let s = judged(gold, "$\\boxed{1}$");
        assert_eq!((s.status.as_str(), s.correct, s.reward), ("invalid_gold", false, 0.0), "{gold:?}");
        // What rlbench and rltrain build once per problem: its reason is what they report.
        assert_eq!(rlverify::Gold::new(gold, &Config::default()).invalid, Some("control_characters"), "{gold:?}");
    }
    // Real line breaks and tabs are text, not evidence.
    for gold in ["She sold 48 clips.\nThen 24 more.\n#### 72", "72\r\n", "line\n\t72"] {
        assert_ne!(judged(gold, "$\\boxed{72}$").status.as_str(), "invalid_gold", "{gold:?}");
    }
}

#[test]
fn a_percent_answers_a_proportion_as_its_hundredth() {
    check(
        &[
            ("\\frac{3}{4}", "So $\\boxed{75\\%}$ of them."),
            ("\\frac15", "The share is $\\boxed{20}\\%$."),
            ("0.3", "That is $\\boxed{30\\%}$."),
            ("40", "The discount is $\\boxed{40\\%}$."),
            ("12.5\\%", "$\\boxed{0.125}$"),
        ],
        true,
    );
    check(
        &[
            ("\\frac{3}{4}", "So $\\boxed{0.75\\%}$ of them."),
            ("0.3", "That is $\\boxed{0.3\\%}$."),
            ("75", "So $\\boxed{\\frac34}$."),
        ],
        false,
    );
}

#[test]
fn template_markers_end_the_turn_by_their_shape() {
    let invented = "so the total is $\\boxed{6}$.<|eot|>\n\nuser: and with one more?\n\nassistant: $\\boxed{7}$";
    check(&[("6", invented)], true);
    check(&[("7", invented)], false);
    let header = "Thus $\\boxed{12}$.<|end_of_response|><|header_start|>user<|header_end|> next \\boxed{13}";
    check(&[("12", header)], true);
    check(&[("13", header)], false);
    // A marker that is text inside the answer cuts nothing.
    check(&[("12", "Fields are joined with <|sep|> between them, so the count is $\\boxed{12}$.")], true);
}

#[test]
fn a_harness_echo_after_the_answer_is_a_restatement() {
    let code = "n = 3 * 4\nn<|endofblock|><|execution|>12<|endofblock|><|text|>";
    check(
        &[("12", &format!("{code}So the tiles number $\\boxed{{12}}$ in all.<|endofblock|><|text|>12<|endofblock|>"))],
        true,
    );
    check(&[("12", &format!("{code}So $\\boxed{{12}}$ boxes.<|endofblock|><|text|>12 or 13<|endofblock|>"))], false);
}

/// Number words of the languages the lexicon reads, with their compounds: an answer in words is
/// read by its value, a restatement in words agrees, and another value in words is a second
/// candidate.
#[test]
fn number_words_of_other_languages() {
    check(
        &[
            ("5", "The answer is cinco."),
            ("5", "Die Antwort ist fünf."),
            ("29", "La respuesta es veintinueve."),
            ("27", "La réponse est vingt-sept."),
            ("97", "La réponse est quatre-vingt-dix-sept."),
            ("27", "Die Antwort ist siebenundzwanzig."),
            ("28", "La risposta è ventotto."),
            ("27", "Ответ: двадцать семь"),
            ("27", "答案是二十七"),
            ("27", "So the answer is $\\boxed{27}$ (vingt-sept)."),
            ("27", "So the answer is $\\boxed{27}$ (veintisiete)."),
            ("27", "So the answer is $\\boxed{27}$ (twenty-seven)."),
            ("12", "A: 12 (doce)"),
            ("27", "So the answer is $\\boxed{27}$ (once we simplify)."),
        ],
        true,
    );
    check(
        &[
            ("28", "So the answer is $\\boxed{28}$ (o veintinueve)."),
            ("27", "So the answer is $\\boxed{27}$ (oder achtundzwanzig)."),
            ("27", "So the answer is $\\boxed{27}$ (ou vingt-huit)."),
            ("27", "So the answer is $\\boxed{27}$, or perhaps veintiocho."),
            ("12", "A: 12 (o trece)"),
            ("5", "The answer is seis."),
            ("27", "La réponse est vingt-huit."),
        ],
        false,
    );
}
