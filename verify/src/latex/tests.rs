//! The parser's specification: `input => Display of the tree`, error cases and cost bounds.

use super::*;

fn show(s: &str) -> String {
    match parse(s, &Limits::default()) {
        Ok(e) => e.to_string(),
        Err(ParseError::Limit(k)) => format!("LIMIT {k}"),
        Err(ParseError::Syntax { .. }) => "ERR".to_string(),
    }
}

/// Check a table of `input => expected` and report every mismatch at once.
fn check_table(rows: &[(&str, &str)]) {
    let mut bad = Vec::new();
    for (input, want) in rows {
        let got = show(input);
        if got != *want {
            bad.push(format!("{input:?}\n    want {want}\n    got  {got}"));
        }
    }
    assert!(bad.is_empty(), "{} of {} rows differ:\n{}", bad.len(), rows.len(), bad.join("\n"));
}

#[test]
fn numbers() {
    check_table(&[
        ("42", "42"),
        ("-42", "-(42)"),
        ("+7", "7"),
        ("0", "0"),
        ("007", "7"),
        ("3.14", "157/50~2dp"),
        ("0.25", "1/4~2dp"),
        (".5", "1/2~1dp"),
        ("-0.5", "-(1/2~1dp)"),
        ("56.0", "56~1dp"),
        ("5.", "5"),
        ("-3./2", "-((3~0dp / 2))"),
        ("123456789012345678901234567890", "123456789012345678901234567890"),
        // scientific notation
        ("8.7e8", "870000000~1dp"),
        ("8.7E-3", "87/10000~1dp"),
        ("3e8", "300000000"),
        ("1e-5", "1/100000"),
        ("8.7 \\times 10^{8}", "870000000~1dp"),
        ("8.7 \\cdot 10^8", "870000000~1dp"),
        ("5.3\\times10^{-9}", "53/10000000000~1dp"),
        ("-2.5 \\times 10^{3}", "-(2500~1dp)"),
        ("3 \\times 10^{x}", "(3 * (10 ^ x))"),
        // thousands separators
        ("1,234", "1234"),
        ("1,234,567", "1234567"),
        ("4'800", "4800"),
        ("12’345’678", "12345678"),
        ("4'80", "ERR"),
        ("-1,234.5", "-(2469/2~1dp)"),
        ("1{,}234", "1234"),
        ("14{,}916", "14916"),
        ("10,\\!080", "10080"),
        ("11,\\! 111,\\! 111,\\! 100", "11111111100"),
        ("12\\,000", "12000"),
        ("1\u{202f}234\u{202f}567", "1234567"),
        ("12\u{a0}000", "12000"),
        ("1\\,5", "ERR"),
        ("\\$32,\\!348", "32348"),
        ("x = 12,000", "x = 12000"),
        // ... and what is not a thousands separator
        ("1,2", "list[1, 2]"),
        ("-2,1", "list[-(2), 1]"),
        ("1,22", "list[1, 22]"),
        ("0,111", "list[0, 111]"),
        ("1234,567", "list[1234, 567]"),
        ("27,54,108,135", "list[27, 54, 108, 135]"),
        ("1,234,56", "list[1, 234, 56]"),
        ("(3,331)", "tuple(3, 331)"),
        ("(2,251,252)", "tuple(2, 251, 252)"),
        ("3, 500", "list[3, 500]"),
        ("1 234", "ERR"),
    ]);
}

#[test]
fn fractions_roots_powers() {
    check_table(&[
        ("\\frac{3}{4}", "(3 / 4)"),
        ("\\dfrac{3}{4}", "(3 / 4)"),
        ("\\tfrac{1}{3}", "(1 / 3)"),
        ("\\cfrac{1}{2}", "(1 / 2)"),
        ("\\frac12", "(1 / 2)"),
        ("\\frac1{2}", "(1 / 2)"),
        ("\\frac 59", "(5 / 9)"),
        ("\\frac{270}7", "(270 / 7)"),
        ("\\frac x2", "(x / 2)"),
        ("\\frac{\\pi}{2}", "(pi / 2)"),
        ("-\\frac{1}{2}", "-((1 / 2))"),
        ("\\frac{-1}{2}", "(-(1) / 2)"),
        ("3/4", "(3 / 4)"),
        ("a/b/c", "((a / b) / c)"),
        ("1/2x", "((1 / 2) * x)"),
        ("2x/3", "((2 * x) / 3)"),
        ("6 \\div 3", "(6 / 3)"),
        ("2\\frac{1}{2}", "(2 + (1 / 2))"),
        ("137 \\frac{1}{2}", "(137 + (1 / 2))"),
        ("-2\\frac12", "-((2 + (1 / 2)))"),
        ("2\\frac{3}{2}", "(2 * (3 / 2))"),
        ("2\\frac{x}{y}", "(2 * (x / y))"),
        ("x\\frac12", "(x * (1 / 2))"),
        ("2 1/2", "(2 + (1 / 2))"),
        ("11 6/6", "ERR"),
        ("4 4/0", "ERR"),
        ("\\sqrt{2}", "root[2](2)"),
        ("\\sqrt2", "root[2](2)"),
        ("\\sqrt 12", "root[2](12)"),
        ("\\sqrt[3]{4}", "root[3](4)"),
        ("\\sqrt[n]{x+1}", "root[n]((x + 1))"),
        ("3\\sqrt{2}", "(3 * root[2](2))"),
        ("√3", "root[2](3)"),
        ("√(x+1)", "root[2]((x + 1))"),
        ("\\sqrt{\\sqrt{2}}", "root[2](root[2](2))"),
        ("x^2", "(x ^ 2)"),
        ("x^{n+1}", "(x ^ (n + 1))"),
        ("2^{-1}", "(2 ^ -(1))"),
        ("x^-1", "(x ^ -(1))"),
        ("2^10", "(2 ^ 10)"),
        ("2**3", "(2 ^ 3)"),
        ("e^(x+1)", "(e ^ (x + 1))"),
        ("x²", "(x ^ 2)"),
        ("-x^2", "-((x ^ 2))"),
        ("(-x)^2", "(-(x) ^ 2)"),
        ("2x^2", "(2 * (x ^ 2))"),
        ("e^{i\\pi}", "(e ^ (i * pi))"),
        ("x_1^2", "(x_1 ^ 2)"),
        ("{x^2}^3", "((x ^ 2) ^ 3)"),
        ("5!", "(5)!"),
        ("\\frac{100!}{2^{50}}", "((100)! / (2 ^ 50))"),
    ]);
}

#[test]
fn products_and_sums() {
    check_table(&[
        ("2x", "(2 * x)"),
        ("2\\pi", "(2 * pi)"),
        ("2 \\pi r", "(2 * pi * r)"),
        ("(a)(b)", "(a * b)"),
        ("(a+1)(b+2)", "((a + 1) * (b + 2))"),
        ("x y", "(x * y)"),
        ("ab", "(a * b)"),
        ("2 \\cdot 3", "(2 * 3)"),
        ("2 \\times 3", "(2 * 3)"),
        ("2*3*4", "(2 * 3 * 4)"),
        ("2×3", "(2 * 3)"),
        ("2·3", "(2 * 3)"),
        ("6÷3", "(6 / 3)"),
        ("a+b+c", "(a + b + c)"),
        ("a-b", "(a + -(b))"),
        ("a - -b", "(a + b)"),
        ("a + -b", "(a + -(b))"),
        ("--x", "x"),
        ("---x", "-(x)"),
        ("−5", "-(5)"),
        ("5 − 3", "(5 + -(3))"),
        ("-2x", "-((2 * x))"),
        ("1-2i", "(1 + -((2 * i)))"),
        ("2 3", "ERR"),
        ("(n-2) 2^{n}+1", "(((n + -(2)) * (2 ^ n)) + 1)"),
        ("1 \\pm \\sqrt{19}", "(1 ± root[2](19))"),
        ("\\pm 3", "(± 3)"),
        ("3 \\mp 2", "(3 ± 2)"),
        ("±2", "(± 2)"),
        ("a \\cdot -b", "(a * -(b))"),
        ("35 x 32 x 11", "(35 * 32 * 11)"),
        ("2 x", "(2 * x)"),
        ("2x 3", "(2 * x * 3)"),
    ]);
}

#[test]
fn constants_symbols_functions() {
    check_table(&[
        ("\\pi", "pi"),
        ("π", "pi"),
        ("e", "e"),
        ("\\mathrm{e}", "e"),
        ("i", "i"),
        ("\\mathrm{i}", "i"),
        ("\\infty", "inf"),
        ("∞", "inf"),
        ("-\\infty", "-(inf)"),
        ("x", "x"),
        ("E", "E"),
        ("\\alpha", "alpha"),
        ("\\Delta", "Delta"),
        ("x_1", "x_1"),
        ("a_{n}", "a_n"),
        ("x_{12}", "x_12"),
        ("\\omega_{d}", "omega_d"),
        ("m_{\\max }", "m_max"),
        ("\\lambda_{\\text {red}}", "lambda_red"),
        ("e_1", "e_1"),
        ("y'", "y'"),
        ("y^{\\prime}", "y'"),
        ("f''", "f''"),
        ("\\mathbf{v}", "v"),
        ("\\underline{3}", "3"),
        ("\\underline{\\underline{40}}", "40"),
        ("\\mathbf{1210}", "1210"),
        ("\\mathbf{3\\sqrt{13}}", "(3 * root[2](13))"),
        ("\\boldsymbol{-2 + 2\\sqrt{3}i}", "(-(2) + (2 * root[2](3) * i))"),
        ("\\bm{\\frac{3}{2}}", "(3 / 2)"),
        ("\\emph{7}", "7"),
        ("\\bar{x}", "bar(x)"),
        ("\\dot{x}_0", "dot(x)_0"),
        ("204_5", "204_5"),
        ("4210_{5}", "4210_5"),
        ("\\sin x", "sin(x)"),
        ("\\sin 2x", "sin((2 * x))"),
        ("\\sin x \\cos x", "(sin(x) * cos(x))"),
        ("\\sin(x)", "sin(x)"),
        ("\\sin^2 x", "(sin(x) ^ 2)"),
        ("\\sin^{-1} x", "arcsin(x)"),
        ("\\cos^{-1}(1/2)", "arccos((1 / 2))"),
        ("\\tan \\theta", "tan(theta)"),
        ("\\arctan 1", "arctan(1)"),
        ("\\cot x", "cot(x)"),
        ("\\sec x + \\csc x", "(sec(x) + csc(x))"),
        ("\\sinh x", "sinh(x)"),
        ("\\ln 2", "ln(2)"),
        ("\\ln(2x)", "ln((2 * x))"),
        ("\\log 100", "log10(100)"),
        ("\\lg 100", "log10(100)"),
        ("\\log_2 8", "log[2](8)"),
        ("\\log _{10} 2", "log[10](2)"),
        ("\\log_{b}(x)", "log[b](x)"),
        ("\\exp(x)", "exp(x)"),
        ("\\exp{a t}", "exp((a * t))"),
        ("\\max(a, b)", "max(a, b)"),
        ("\\gcd(12, 18)", "gcd(12, 18)"),
        ("\\operatorname{lcm}(4,6)", "lcm(4, 6)"),
        ("\\operatorname{Res}(f)", "Res(f)"),
        ("sin x", "sin(x)"),
        ("sqrt(2)", "root[2](2)"),
        ("np.arcsin(10/13)", "arcsin((10 / 13))"),
        ("f(x)", "f(x)"),
        ("g(2)", "g(2)"),
        ("f(x) = x+1", "f(x) = (x + 1)"),
        ("2f(x)", "(2 * f(x))"),
        ("I(0)", "I(0)"),
        ("n(n-1)", "(n * (n + -(1)))"),
        ("|x|", "abs(x)"),
        ("|x-1|+|y|", "(abs((x + -(1))) + abs(y))"),
        ("||x|-1|", "abs((abs(x) + -(1)))"),
        ("\\lvert x \\rvert", "abs(x)"),
        ("\\left| x \\right|", "abs(x)"),
        ("2|x|", "(2 * abs(x))"),
        ("\\lfloor x \\rfloor", "floor(x)"),
        ("\\left\\lceil n/2 \\right\\rceil", "ceil((n / 2))"),
        ("\\binom{5}{2}", "binom(5, 2)"),
        ("\\dbinom{n}{k}", "binom(n, k)"),
        ("\\tbinom{2n}{n}", "binom((2 * n), n)"),
        ("{n \\choose k}", "binom(n, k)"),
        ("\\sum_{k=1}^n k", "ERR"),
        ("\\int x dx", "ERR"),
    ]);
}

#[test]
fn percent_degrees_units() {
    check_table(&[
        ("28\\%", "(28)%"),
        ("28%", "(28)%"),
        ("8 \\%", "(8)%"),
        ("17.5%", "(35/2~1dp)%"),
        ("28 percent", "(28)%"),
        ("30^\\circ", "(30)deg"),
        ("30^{\\circ}", "(30)deg"),
        ("30°", "(30)deg"),
        ("30\\degree", "(30)deg"),
        ("30 degrees", "(30)deg"),
        ("\\frac{270}7\\text{ degrees}", "((270 / 7))deg"),
        ("18.8^{\\circ}", "(94/5~1dp)deg"),
        ("5\\text{ cm}", "(5) centimeter"),
        ("5 \\mathrm{m}^2", "(5) square meter"),
        ("6.5 \\mathrm{~m}", "(13/2~1dp) meter"),
        ("15\\mbox{ cm}^2", "(15) square centimeter"),
        ("12 dollars", "(12) dollar"),
        ("\\$12", "12"),
        ("$12$", "12"),
        ("3 inches", "(3) inch"),
        ("4 square units", "4"),
        ("7 hours", "(7) hour"),
        ("5.4 \\text{ cents}", "(27/5~1dp) cent"),
        ("\\frac{1}{3} \\textbf{meters}", "((1 / 3)) meter"),
        ("10 \\text{ widgets}", "10"),
        ("156 \\text{ kgs}", "(156) kilogram"),
        ("25 m²", "(25) square meter"),
        ("25 square metres", "(25) square meter"),
        ("52 \\, \\text{WPM}", "52"),
        ("3 sq ft", "(3) square foot"),
        ("12 \\text{ dozen}", "(12) dozen"),
        ("2 n", "(2 * n)"),
    ]);
    // The unit marker cannot be written by an answer.
    assert!(crate::latex::parse("12\\unit{600}", &crate::limits::Limits::default()).is_err());
}

#[test]
fn brackets_sets_intervals_matrices() {
    check_table(&[
        ("(1, 2)", "tuple(1, 2)"),
        ("(1,2,3)", "tuple(1, 2, 3)"),
        ("\\left( 3, \\frac{\\pi}{2} \\right)", "tuple(3, (pi / 2))"),
        ("(x)", "x"),
        ("[1,2]", "[1, 2]"),
        ("[a,b)", "[a, b)"),
        ("(a,b]", "(a, b]"),
        ("(-\\infty, 3)", "tuple(-(inf), 3)"),
        ("(-\\infty, 0]", "(-(inf), 0]"),
        ("[2, \\infty)", "[2, inf)"),
        ("\\left[ 1, 2 \\right)", "[1, 2)"),
        ("\\{1,2\\}", "{1, 2}"),
        ("\\left\\{1, 2\\right\\}", "{1, 2}"),
        ("\\lbrace 3 \\rbrace", "{3}"),
        ("\\{\\}", "∅"),
        ("\\emptyset", "∅"),
        ("\\varnothing", "∅"),
        ("∅", "∅"),
        ("(0,1) \\cup (2,3)", "(tuple(0, 1) ∪ tuple(2, 3))"),
        ("(-\\infty, 0) \\cup\\{1\\}.", "(tuple(-(inf), 0) ∪ {1})"),
        ("[0,2] \\cap [1,3]", "([0, 2] ∩ [1, 3])"),
        ("A \\cup B \\cup C", "(A ∪ B ∪ C)"),
        // A set minus points: the set intersected with the complement of each point.
        ("[0,2] \\setminus \\{1\\}", "([0, 2] ∩ ((-(inf), 1) ∪ (1, inf)))"),
        ("\\mathbb{R} \\setminus \\{0\\}", "((-(inf), inf) ∩ ((-(inf), 0) ∪ (0, inf)))"),
        ("\\{x \\mid x < \\frac32\\} - \\{-6\\}", "(x < (3 / 2) ∩ ((-(inf), -(6)) ∪ (-(6), inf)))"),
        ("(0, 5) - \\{3\\}", "(tuple(0, 5) ∩ ((-(inf), 3) ∪ (3, inf)))"),
        ("[0,2] \\setminus [1, 2]", "ERR"),
        ("x \\setminus \\{1\\}", "ERR"),
        ("5 - \\{1\\}", "(5 + -({1}))"),
        ("\\langle 1, 2 \\rangle", "tuple(1, 2)"),
        ("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}", "matrix[1, 2; 3, 4]"),
        ("\\begin{bmatrix} 1 & 0 \\\\ 0 & 1 \\end{bmatrix}", "matrix[1, 0; 0, 1]"),
        ("\\begin{pmatrix} -7 \\\\ 16 \\\\ 5 \\end{pmatrix}", "matrix[-(7); 16; 5]"),
        ("\\begin{pmatrix}1 & 2 \\\\3 & 4\\\\\\end{pmatrix}", "matrix[1, 2; 3, 4]"),
        ("\\left[\\begin{array}{cc}1 & 2 \\\\3 & 4\\end{array}\\right]", "matrix[1, 2; 3, 4]"),
        ("\\begin{vmatrix} a & b \\\\ c & d \\end{vmatrix}", "det(matrix[a, b; c, d])"),
        ("\\begin{align} x \\end{align}", "ERR"),
        ("()", "ERR"),
        ("(1,2", "ERR"),
    ]);
}

#[test]
fn relations_and_lists() {
    check_table(&[
        ("x = 5", "x = 5"),
        ("y = 2x+1", "y = ((2 * x) + 1)"),
        ("1 < x \\le 3", "1 < x ≤ 3"),
        ("x \\leq 5", "x ≤ 5"),
        ("x \\geq 5", "x ≥ 5"),
        ("x \\geqslant 2", "x ≥ 2"),
        ("x \\neq 5", "x ≠ 5"),
        ("x \\ne 5", "x ≠ 5"),
        ("x \\lt 5", "x < 5"),
        ("x \\gt 5", "x > 5"),
        ("x <= 2", "x ≤ 2"),
        ("x >= 2", "x ≥ 2"),
        ("x != 5", "x ≠ 5"),
        ("x ≤ 2", "x ≤ 2"),
        ("x ≥ 2", "x ≥ 2"),
        ("x ≠ 2", "x ≠ 2"),
        ("x \\approx 11", "x ≈ 11"),
        ("\\frac{5}{6} (\\approx 0.833)", "(5 / 6) ≈ 833/1000~3dp"),
        ("\\frac{5}{6} \\ (\\approx 0.833)", "(5 / 6) ≈ 833/1000~3dp"),
        ("\\frac{5}{6}\\;(≈ 0.833).", "(5 / 6) ≈ 833/1000~3dp"),
        ("(1, 2) (\\approx 3)", "tuple(1, 2) ≈ 3"),
        ("(\\approx 0.833)", "ERR"),
        ("2 \\cdot (\\approx 0.8)", "ERR"),
        ("x \\not= 1", "x ≠ 1"),
        ("x \\in [1,2]", "[1, 2]"),
        ("x \\in (0, 1]", "(0, 1]"),
        ("x \\to 0", "ERR"),
        ("x=1, y=2", "list[x = 1, y = 2]"),
        ("x=1; y=2", "list[x = 1, y = 2]"),
        ("1; 2", "list[1, 2]"),
        ("6 \\text{ and } 8", "list[6, 8]"),
        ("6 and 8", "list[6, 8]"),
        ("x=1 or x=2", "list[x = 1, x = 2]"),
        ("19, 46, and 82", "list[19, 46, 82]"),
        ("1, 2, 3", "list[1, 2, 3]"),
        ("\\boxed{1}\\boxed{2}", "list[1, 2]"),
        ("\\boxed{1}, \\boxed{2}", "list[1, 2]"),
        ("\\boxed{\\boxed{3}}", "3"),
        ("\\framebox{194}", "194"),
        ("\\framebox[2cm][c]{7}", "7"),
        ("\\fbox{5}", "5"),
        ("(x, y) = (5, 8)", "tuple(x, y) = tuple(5, 8)"),
        ("a=2, a=-6-4 \\sqrt{2}", "list[a = 2, a = (-(6) + -((4 * root[2](2))))]"),
    ]);
}

#[test]
fn text_and_wrappers() {
    check_table(&[
        ("\\text{Monday}", "text(\"monday\")"),
        ("\\text{ No Solution. }", "text(\"no solution\")"),
        ("no solution", "text(\"no solution\")"),
        ("odd", "text(\"odd\")"),
        ("\\textbf{even}", "text(\"even\")"),
        ("\\text{(C)}", "C"),
        ("(C)", "C"),
        ("\\text{E}", "E"),
        ("\\textbf{(B)}", "B"),
        ("B", "B"),
        ("\\text{5}", "5"),
        ("\\displaystyle \\frac{1}{2}", "(1 / 2)"),
        ("\\frac{1}{2}.", "(1 / 2)"),
        ("42,", "42"),
        ("\\, 5 \\;", "5"),
        ("\\!5", "5"),
        ("\\quad 7", "7"),
        ("~7~", "7"),
        ("\\left( \\frac{1}{3} \\right)", "(1 / 3)"),
        ("\\left. x \\right|", "ERR"),
        ("\\bigl( x \\bigr)", "x"),
        ("\\boxed{5}", "5"),
        ("\\textstyle 5", "5"),
        ("\\[ 5 \\]", "5"),
        // A domain statement is dropped; other prose after a formula is not a product of letters.
        ("f(x)=a x+b, where b is an integer", "f(x) = ((a * x) + b)"),
        ("f(x)=a x+b, where b is the intercept", "ERR"),
        ("x \\quad \\text{and} \\quad y", "list[x, y]"),
        ("x_{1}=2,\\quadx_{2}=3", "list[x_1 = 2, x_2 = 3]"),
    ]);
}

#[test]
fn errors_on_garbage() {
    for s in [
        "",
        "   ",
        "$$",
        "\\",
        "{",
        "}",
        ")(",
        "\\frac",
        "\\frac{1}",
        "\\sqrt",
        "x^",
        "1 +",
        "= 5",
        "\u{0}\u{1}\u{2}",
        "\u{fffd}\u{fffd}",
        "日本語",
        "1 ⊕ 2",
        "\\begin{pmatrix}",
        "\\end{pmatrix}",
        "\\text{",
        "|",
        "||",
        "x_",
        "2^^3",
        "\\left(",
        "((1)",
        "\\{1",
        "@#!",
        "1..2",
        "\\boxed{",
    ] {
        let r = parse(s, &Limits::default());
        assert!(r.is_err(), "{s:?} should not parse, got {r:?}");
    }
}

#[test]
fn limits_answer_length() {
    let limits = Limits::default();
    let long = "1+".repeat(limits.max_answer_bytes);
    assert_eq!(parse(&long, &limits), Err(ParseError::Limit(LimitKind::AnswerTooLong)));
    let small = Limits { max_answer_bytes: 4, ..Limits::default() };
    assert_eq!(parse("12345", &small), Err(ParseError::Limit(LimitKind::AnswerTooLong)));
    let tiny_ints = Limits { max_int_bits: 64, ..Limits::default() };
    assert_eq!(parse(&"9".repeat(30), &tiny_ints), Err(ParseError::Limit(LimitKind::IntegerTooLarge)));
    assert_eq!(parse("1.5e30", &tiny_ints), Err(ParseError::Limit(LimitKind::IntegerTooLarge)));
    assert!(show(&"9".repeat(4000)).starts_with("9999"));
    assert_eq!(show("1e999999999999"), "LIMIT exponent_too_large");
    assert_eq!(show("1e20000"), "LIMIT exponent_too_large");
}

/// The workspace's adversarial answers (`rl_tests::adversarial_answers`).
fn adversarial() -> Vec<String> {
    rl_tests::adversarial_answers().into_iter().map(|(_, s)| s).collect()
}

/// Every adversarial input finishes without overflowing a 1 MiB thread stack (half the default;
/// the depth scan, not pest's stack guard, keeps debug builds within it) and without panicking;
/// deep ones hit `TooDeep`.
#[test]
fn adversarial_inputs_on_a_small_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(|| {
            let limits = Limits::default();
            let mut deep = 0;
            for s in adversarial() {
                let r = parse(&s, &limits);
                if r == Err(ParseError::Limit(LimitKind::TooDeep)) {
                    deep += 1;
                }
                // Walk the tree too: Display and Drop recurse over it.
                if let Ok(e) = r {
                    let _ = e.to_string();
                }
            }
            deep
        })
        .expect("spawn test thread");
    let deep = handle.join().expect("parser overflowed the stack or panicked");
    assert!(deep >= 20, "only {deep} adversarial inputs were stopped by the depth scan");
}

/// Inputs at the depth limit still parse: the limit does not reject real answers, and the parser
/// survives the deepest accepted input. Unoptimised (test) builds of the pest parser use about
/// 4 KiB of stack per nesting level and pest refuses to go on with less than 64 KiB left, so this
/// test uses a 1 MiB thread (the default Rust thread has 2 MiB); optimised builds need far less.
#[test]
fn deepest_accepted_inputs_on_a_small_stack() {
    let handle = std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(|| {
            let limits = Limits::default();
            let d = limits.max_depth;
            let nested_parens = format!("{}x{}", "(".repeat(d), ")".repeat(d));
            let nested_powers = format!("{}x{}", "x^{".repeat(d / 2 - 1), "}".repeat(d / 2 - 1));
            let nested_fracs = format!("{}1{}", "\\frac{1}{1+".repeat(d / 2 - 1), "}".repeat(d / 2 - 1));
            let signs = format!("a{}b", "*-a".repeat(d - 2));
            let mut out = Vec::new();
            for s in [&nested_parens, &nested_powers, &nested_fracs, &signs] {
                out.push((s.len(), parse(s, &limits).map(|e| e.to_string().len())));
            }
            let too_deep = format!("{}x{}", "(".repeat(d + 1), ")".repeat(d + 1));
            out.push((too_deep.len(), parse(&too_deep, &limits).map(|e| e.to_string().len())));
            out
        })
        .expect("spawn test thread");
    let out = handle.join().expect("parser overflowed the stack");
    for (len, r) in &out[..4] {
        assert!(r.is_ok(), "input of {len} bytes at the depth limit failed: {r:?}");
    }
    assert_eq!(out[4].1, Err(ParseError::Limit(LimitKind::TooDeep)));
}

#[test]
fn depth_scan_counts_recursion_sources() {
    let ok = |s: &str, d: usize| check_depth(s, d).is_ok();
    assert!(ok("((x))", 2));
    assert!(!ok("((x))", 1));
    assert!(ok("a-b-c-d-e-f", 1), "infix minus does not nest");
    assert!(!ok("-(-(-x))", 4));
    assert!(ok("-1,-2,-3,-4,-5", 1), "separators reset the count");
    assert!(!ok("1/2/3/4", 2));
    assert!(ok(")))(((", 3));
    assert!(!ok("\\lvert \\lvert \\lvert x", 2));
}

#[test]
fn normalized_form_is_exposed() {
    assert_eq!(normalized("\\left( \\dfrac{1}{2} \\right)"), "( \\frac{1}{2} )");
    assert_eq!(normalized("$1{,}234$."), "1234");
}

/// An ellipsis survives as an element of its own (`1, 2, 3, \ldots` is not `1, 2, 3`), whatever
/// its spelling; dots glued to a decimal are a repeating decimal.
#[test]
fn ellipses() {
    check_table(&[
        ("1, 2, 3, \\ldots", "list[1, 2, 3, …]"),
        ("1,2,3,...", "list[1, 2, 3, …]"),
        ("1, 2, 3, \\cdots", "list[1, 2, 3, …]"),
        ("1, 2, 3, \\dots", "list[1, 2, 3, …]"),
        ("1, 2, 3, …", "list[1, 2, 3, …]"),
        ("1, 2, 3, ⋯", "list[1, 2, 3, …]"),
        ("1, 2, 3...", "list[1, 2, 3, …]"),
        ("1, 2, 3 \\ldots", "list[1, 2, 3, …]"),
        ("1, 2, 3", "list[1, 2, 3]"),
        ("\\{1, 2, \\dots\\}", "{1, 2, …}"),
        ("a_1, a_2, \\ldots, a_n", "list[a_1, a_2, …, a_n]"),
        ("1 + 2 + \\cdots + n", "(1 + 2 + … + n)"),
        ("1 + 2 + \\dotsb + n", "(1 + 2 + … + n)"),
        ("0.333...", "333/1000~3dp"),
        ("3.14159…", "314159/100000~5dp"),
        ("\\ldots", "…"),
    ]);
}

/// A Greek letter glued to a variable in a hand-written gold (`\pit` for `\pi t`) is split; a
/// line break between two numbers is not the space of a mixed number.
#[test]
fn glued_letters_and_line_breaks() {
    check_table(&[
        ("2\\cos(\\pit+\\pi/3)", "(2 * cos(((pi * t) + (pi / 3))))"),
        ("\\frac{2\\pic^{2}}{\\lambda}", "((2 * pi * (c ^ 2)) / lambda)"),
        ("\\omegai/4", "((omega * i) / 4)"),
        ("\\pi k", "(pi * k)"),
        ("\\pitchfork", "ERR"),
        ("\\null", "ERR"),
        ("11\n5/6", "ERR"),
        ("11\r\n5/6", "ERR"),
        ("11 5/6", "(11 + (5 / 6))"),
        ("x\n+ 1", "(x + 1)"),
    ]);
}

#[test]
fn fast_paths_agree_with_the_full_parser() {
    let inputs = [
        "42",
        "-42",
        "3.14",
        "-0.5",
        ".5",
        "+7",
        "007",
        "0",
        "5.",
        "1e5",
        "1,234",
        "\\frac{3}{4}",
        "-\\frac{3}{4}",
        "\\dfrac{1}{2}",
        "\\tfrac{10}{3}",
        "\\frac{1.5}{2}",
        "3/4",
        "-3/4",
        "0.5/2",
        "\\sqrt{2}",
        "2\\sqrt{3}",
        "-2\\sqrt{3}",
        "1.5\\sqrt{2}",
        "\\frac{\\sqrt{3}}{2}",
        "\\frac{3\\sqrt{3}}{4}",
        "\\frac{1}{\\sqrt{2}}",
        "\\pi",
        "2\\pi",
        "-\\pi",
        "\\frac{\\pi}{2}",
        "\\frac{3\\pi}{4}",
        "30^\\circ",
        "30^{\\circ}",
        "-30^\\circ",
        "12.5\\%",
        "28%",
        "-5%",
        "\\frac12",
        "\\frac{1}{2}x",
        "\\pix",
        "\\sqrt{x}",
        "2\\sqrt{3}\\pi",
        "3/4/5",
        "\\frac{1}{2}.",
        "2\\frac{1}{2}",
        "\\frac{a}{b}",
        "1/0",
        "\\frac{0}{0}",
        "1,234",
        "-1,234.5",
        "12,345,678",
        "1,23",
        "1,2345",
        "0,123",
        "1,234.",
        "1,234.5.6",
        ",123",
        "1,,234",
        "x = 5",
        "x=5",
        "y = -\\frac{1}{2}",
        "e = 5",
        "i=1",
        "xy = 5",
        "x = 5, y = 6",
        "(1, 2)",
        "(1,2)",
        "(1, 234)",
        "(-1, 2), (3, -4)",
        "(5)",
        "(-5)",
        "-2,1",
        "-2, 1",
        "1, 2, 3",
        "1,2,3",
        "1,234,5",
        "12,345, 6",
        "(1,2",
        "1,",
        "(1, 2),",
        "((1, 2))",
        "(x, 2)",
        "(1; 2)",
        "1, x = 2",
        "x = 1, 2",
        "(\\frac{1}{2}, \\sqrt{3})",
        "2, 30^\\circ",
        "x = (1, 2)",
        "A = 5",
        "(1, 2) ",
        " 1",
        "1 ,2",
        "(1 , 2)",
        "1, 2, 3, ...",
        "1,2,...",
        "0.5...",
        "1, \\ldots",
    ];
    let limits = Limits::default();
    let mut used = 0;
    for s in inputs {
        let fast = fast::plain_number(s, &limits).or_else(|| fast::simple(s, &limits));
        if let Some(fast) = fast {
            used += 1;
            assert_eq!(fast, parse_full(s, &limits), "{s}");
        }
        assert_eq!(parse(s, &limits), parse_full(s, &limits), "{s}");
    }
    assert!(used >= 40, "only {used} inputs took a fast path");
    for s in ["x = 5", "(1, 2)", "-2,1", "(1,2), (3,4)", "\\frac{3}{4}", "2\\sqrt{3}", "1,234"] {
        assert!(fast::plain_number(s, &limits).or_else(|| fast::simple(s, &limits)).is_some(), "{s} is not fast");
    }
}

/// Random token soup (deterministic): the parser never panics and never overflows a small stack.
#[test]
fn answer_shapes_of_the_equivalence_policies() {
    check_table(&[
        // "and" between inequalities is an intersection; between values, a separator.
        ("x > -2 \\text{ and } x < 5", "(x > -(2) ∩ x < 5)"),
        ("x > -2 \\land x < 5", "(x > -(2) ∩ x < 5)"),
        ("x \\ne 2 \\wedge x \\ne 3", "(x ≠ 2 ∩ x ≠ 3)"),
        ("x < 0 \\text{ or } x > 1 \\text{ and } x < 2", "list[x < 0, (x > 1 ∩ x < 2)]"),
        ("x = 2 \\text{ and } x = 3", "list[x = 2, x = 3]"),
        ("Maximum = 2 and Minimum = 1", "list[text(\"maximum\") = 2, text(\"minimum\") = 1]"),
        ("\\{x \\mid x > 1, x < 3\\}", "(x > 1 ∩ x < 3)"),
        ("\\{x \\mid x > 1 \\text{ and } x < 3\\}", "(x > 1 ∩ x < 3)"),
        // Trailing domain statements.
        ("f(x) = 1 \\text{ for all } x \\in \\mathbb{Q}", "f(x) = 1"),
        ("x = k\\pi, k \\in \\mathbb{Z}", "x = (k * pi)"),
        ("(-32 + 3t, 64 - 5t) \\text{ for some integer } t", "tuple((-(32) + (3 * t)), (64 + -((5 * t))))"),
        // Circled numbers.
        ("②③", "list[2, 3]"),
        ("②、③", "list[2, 3]"),
        ("①", "1"),
        // Repeating decimals are exact fractions.
        ("0.\\overline{3}", "((3 + -(0)) / 9)"),
        ("0.1\\overline{6}", "((16 + -(1)) / 90)"),
        ("0.\\overline{142857}", "((142857 + -(0)) / 999999)"),
        ("0.1\\dot{6}", "((16 + -(1)) / 90)"),
        ("\\overline{AB}", "overline(AB)"),
        ("0.\\dot{12}", "(0~0dp * dot(12))"),
        // Mixed numbers: a zero numerator too.
        ("4 0/9", "(4 + (0 / 9))"),
        ("4\\frac{0}{9}", "(4 + (0 / 9))"),
    ]);
}

#[test]
fn random_token_soup_never_panics() {
    const TOKENS: &[&str] = &[
        "1",
        "23",
        "0.5",
        ",",
        ", ",
        ";",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        "\\{",
        "\\}",
        "|",
        "+",
        "-",
        "*",
        "/",
        "^",
        "_",
        "!",
        "%",
        "\\%",
        "=",
        "<",
        "\\le",
        "\\frac",
        "\\sqrt",
        "\\left(",
        "\\right)",
        "\\text{",
        "cm",
        " and ",
        "x",
        "e",
        "i",
        "\\pi",
        "\\infty",
        "\\sin",
        "\\log_",
        "\\cdot",
        "\\pm",
        "^\\circ",
        "°",
        "−",
        "√",
        "\\begin{pmatrix}",
        "\\end{pmatrix}",
        "&",
        "\\\\",
        "\\boxed{",
        "f(",
        "\\in",
        "\\cup",
        "'",
        ".",
        " ",
        "\\,",
        "\\!",
        "{,}",
        "$",
        "\\mathrm{",
        "\\lfloor",
        "\\rfloor",
        "\\binom",
        "\\choose",
        "1,234",
        "e8",
        "\\dfrac",
        "\u{0}",
        "日",
        "\\",
        "\\dot{",
        "\\overline{",
        "②",
        "、",
        "\\land",
        "\\setminus",
        " \\text{ for all } ",
        " \\text{where } ",
        "k \\in \\mathbb{Z}",
        "\\mid",
        "\\forall",
        "∈",
    ];
    let handle = std::thread::Builder::new()
        .stack_size(1024 * 1024)
        .spawn(|| {
            let limits = Limits::default();
            let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
            let mut next = move || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            };
            let mut parsed = 0;
            for _ in 0..3000 {
                let len = (next() % 24) as usize;
                let s: String = (0..len).map(|_| TOKENS[(next() % TOKENS.len() as u64) as usize]).collect();
                if let Ok(e) = parse(&s, &limits) {
                    parsed += 1;
                    let _ = e.to_string();
                }
            }
            parsed
        })
        .expect("spawn test thread");
    let parsed = handle.join().expect("the parser panicked or overflowed the stack");
    assert!(parsed > 0);
}

/// The grammar is linear: a failure deep inside nested groups is not retried level by level (pest
/// unrolls `e{0, 4}` into four optionals, which once made `2^{2^{...^{\bad}}}` cost 4^depth). Such
/// inputs end in a syntax error well inside the rule-call limit, and so do all adversarial inputs
/// of the maximal length; a grammar that backtracks exponentially would hit the limit instead.
#[test]
fn failing_nested_groups_are_not_retried() {
    let handle = std::thread::Builder::new()
        .stack_size(8 * 1024 * 1024)
        .spawn(|| {
            let limits = Limits::default();
            let d = limits.max_depth / 2 - 2;
            let mut over_budget = Vec::new();
            let openers =
                ["2^{", "x^{", "\\sin^{", "\\sin{", "\\frac{1}{", "\\sqrt{", "\\log_{", "{", "\\boxed{", "e^{x^{"];
            for open in openers {
                for bad in ["\\emptyse0t", "1+", "\\frac{", "x^"] {
                    let s = format!("{}{bad}{}", open.repeat(d), "}".repeat(d * open.matches('{').count()));
                    let r = parse(&s, &limits);
                    if r == Err(ParseError::Limit(LimitKind::StepBudget)) {
                        over_budget.push(s);
                    }
                }
            }
            for s in adversarial() {
                if parse(&s, &limits) == Err(ParseError::Limit(LimitKind::StepBudget)) {
                    over_budget.push(s.chars().take(60).collect());
                }
            }
            over_budget
        })
        .expect("spawn test thread");
    let over_budget = handle.join().expect("parser overflowed the stack or panicked");
    assert!(over_budget.is_empty(), "inputs over the rule-call limit: {over_budget:#?}");
}

/// The shortcuts of `parse_normalized` (a lone number, possibly with a unit; a lone letter) give
/// exactly what the grammar gives, errors included, on normalised answers.
#[test]
fn normalized_shortcuts_agree_with_the_grammar() {
    let limits = Limits::default();
    let mut inputs: Vec<String> = [
        "2",
        "007",
        "0",
        "0.0",
        "5.",
        ".5",
        ".",
        "3.3e12",
        "1E-3",
        "2e+5",
        "2e",
        "2e+",
        "2ex",
        "5.e3",
        "1.2.3",
        "2  \\unit{871}",
        "34.0  \\unit{871}",
        "2\\unit{871}",
        "2 \\unit{871} ",
        " 2",
        "2 ",
        "\t2\n",
        "2  \\unit{9999}",
        "2  \\unit{123456}",
        "2  \\unit{}",
        "2  \\unit{871}}",
        "2  \\unit{871} x",
        "2  \\unit{87a}",
        ".5  \\unit{98}",
        "1e3 \\unit{95}",
        "2 3",
        "2_5",
        "2 \\frac{1}{2}",
        "2x",
        "2!",
        "2\\%",
        "-2",
        "+2",
        "2 \\degree",
        "12\\unit{600}",
        "B",
        "e",
        "i",
        "x",
        " y ",
        "xy",
        "\\pi",
        "1234567890123456789",
        "123456789012345678",
        "0.000000000000000001",
        "99999999999999999.9",
        "0.00000000000000000001",
        "1.50",
        "-0.5",
        "2  \\unit{871}  \\unit{871}",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Long literals against the integer caps.
    inputs.push("9".repeat(5000));
    inputs.push(format!("0.{}", "1".repeat(5000)));
    let mut fast = 0;
    for s in &inputs {
        let via_shortcut = parse::parse_normalized(s, &limits);
        assert_eq!(via_shortcut, parse::parse_grammar(s, &limits), "{s:?}");
        fast += usize::from(super::fast::normalized_number(s, &limits).is_some());
    }
    assert!(fast >= 20, "only {fast} inputs took the shortcut");
}

/// Short literals are read in machine integers: the same values as the big-integer reading.
#[test]
fn short_literals_agree_with_big_integer_reading() {
    let limits = Limits::default();
    for s in [
        "0",
        "00",
        "7",
        "10",
        "120",
        "0.5",
        "0.50",
        "2.25",
        "5.",
        ".125",
        "100.000",
        "999999999999999999",
        "0.000000000000000001",
        "12345678.87654321",
    ] {
        let n = number::parse_number(s, &limits).unwrap_or_else(|e| panic!("{s}: {e}"));
        let digits: String = s.chars().filter(char::is_ascii_digit).collect();
        let decimals = s.find('.').map(|k| (s.len() - k - 1) as u32);
        let value = num_rational::BigRational::new(
            digits.parse::<num_bigint::BigInt>().unwrap_or_default(),
            num_traits::pow(num_bigint::BigInt::from(10), decimals.unwrap_or(0) as usize),
        );
        assert_eq!(n, crate::ast::Number { value, decimals }, "{s}");
    }
}
