//! The equivalence policies of `verify/EQUIVALENCE.md` that keep the reward from being gamed and
//! right answers from being turned away, tested both ways: each table holds the rows that must
//! stay wrong next to the right answers of the same shape. Rows go through the parser and the
//! checker only (`latex::parse`, then [`equivalent`]), so they pin the policy independently of
//! how a response's final answer is extracted.

use super::{equivalent, EquivOptions, Verdict};
use crate::latex::parse;
use crate::limits::{Budget, Limits};

/// The verdict for two answer strings, gold first (an unparsable side is `NotEqual`).
fn verdict_with(gold: &str, pred: &str, opts: &EquivOptions) -> Verdict {
    let limits = Limits::default();
    let (Ok(g), Ok(p)) = (parse(gold, &limits), parse(pred, &limits)) else { return Verdict::NotEqual };
    equivalent(&g, &p, opts, &mut Budget::new(&limits)).verdict
}

/// `(gold, prediction, equal?)` rows; every failure is listed.
fn run(family: &str, rows: &[(&str, &str, bool)]) {
    let opts = EquivOptions::default();
    let mut failures = Vec::new();
    for &(gold, pred, want) in rows {
        let got = verdict_with(gold, pred, &opts);
        if (got == Verdict::Equal) != want || matches!(got, Verdict::Limit(_)) {
            failures
                .push(format!("{gold:?} vs {pred:?}: want {}, got {got:?}", if want { "Equal" } else { "NotEqual" }));
        }
    }
    assert!(failures.is_empty(), "{family}: {} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn a_false_links_answer_nothing() {
    run(
        "false links",
        &[
            ("5", r"4 = 3", false),
            ("5", r"2 + 2 = 5", false),
            ("5", r"7 = 5", false),
            ("5", r"2 = 5", false),
            ("5", r"x = 7 = 5", false),
            ("x = 5", r"x = 7 = 5", false),
            ("11", r"x = 5+5+1 = 7 = 11", false),
            (r"\frac{10}{9}", r"\frac{1}{2} = \frac{10}{9}", false),
            ("(1, 2)", r"x = 1, y = 2 = 3", false),
            ("5", r"\pi = 5", false),
            ("5", r"5.1 = 5", false),
            ("5", r"4.6 = 5", false),
            // An equation on an expression of an unknown is a condition, not a value (`x + 2 = 18`
            // may mean x = 16).
            ("18", r"x + 2 = 18", false),
            ("101", r"a + 2z = 2z + a = 101", false),
            ("5", r"|k| = 5", false),
            // Links that hold lead to the value.
            ("5", r"2+3 = 5", true),
            ("9", r"\frac34 \cdot 12 = 9", true),
            ("11", r"x = 5+5+1 = 11", true),
            ("x = 11", r"x = 5+5+1 = 11", true),
            ("(1, 2)", r"x = 1, y = 4 - 2 = 2", true),
            ("0", r"1 = z = x = 0", true),
            // An approximation link holds when the exact side rounds to the decimal.
            (r"\sqrt2", r"\sqrt{2} \approx 1.414", true),
            (r"\sqrt2", r"\sqrt{2} \approx 1.415", false),
            (r"\sqrt2", r"\sqrt{2} = 1.4142135623730951", true),
            (r"\sqrt2", r"\sqrt{2} = 1.4142135623730960", false),
            (r"\sqrt2", r"\sqrt{2} \approx 1.4", true),
            (r"\sqrt2", r"\sqrt{2} \approx 1.5", false),
            ("5", r"\pi = 3", false),
            ("0.33", r"\frac13 = 0.33", true),
        ],
    );
}

#[test]
fn b_a_solved_gold_needs_a_solved_prediction() {
    run(
        "solved relations",
        &[
            (r"x > 3", r"3x + 1 > 10", false),
            (r"x > 3", r"x - 3 > 0", false),
            (r"x = 3", r"2x = 6", false),
            (r"x = 3", r"x^2 = 9", false),
            (r"x \ne 2", r"2x \ne 4", false),
            (r"-1 \le x < 2", r"-2 \le 2x < 4", false),
            (r"x > 3", r"x > 3", true),
            (r"x > 3", r"3 < x", true),
            (r"x > 3", r"(3, \infty)", true),
            (r"x > 3", r"x \in (3, \infty)", true),
            (r"x > 3", r"x \ge 3", false),
            (r"x = 3", r"3 = x", true),
            (r"x = 3", r"x = \frac{6}{2}", true),
            (r"x = 3", r"3", true),
            (r"x \ne 2", r"2 \ne x", true),
            (r"-1 \le x < 2", r"2 > x \ge -1", true),
            // A relation between variables is no solution: proportional forms stay equal, and an
            // unsolved gold accepts the solved form.
            (r"y = 2x + 1", r"2x - y + 1 = 0", true),
            (r"2x > 6", r"x > 3", true),
            (r"2x > 6", r"x < 3", false),
        ],
    );
}

#[test]
fn h_a_gold_value_with_its_approximation() {
    run(
        "value and approximation",
        &[
            (r"\frac{1 + \sqrt{97}}{8} \approx 1.36", r"\frac{1 + \sqrt{97}}{8}", true),
            (r"\frac{1 + \sqrt{97}}{8} \approx 1.36", r"\frac{1 + \sqrt{97}}{8} \approx 1.36", true),
            (r"\frac{1 + \sqrt{97}}{8} \approx 1.36", r"\frac{2 + 2\sqrt{97}}{16}", true),
            (r"\frac{1 + \sqrt{97}}{8} \approx 1.36", r"1.35611", true),
            (r"\frac{1 + \sqrt{97}}{8} \approx 1.36", r"1.35610", false),
            // The approximation answers only under the decimal rules (6 digits for an exact value).
            (r"\frac{1 + \sqrt{97}}{8} \approx 1.36", r"1.36", false),
            (r"\frac{1 + \sqrt{97}}{8} \approx 1.36", r"1.37", false),
            (r"\frac{1 - \sqrt{97}}{8} \approx -1.11", r"\frac{1 + \sqrt{97}}{8}", false),
            (r"x = \frac{1 + \sqrt{97}}{8} \approx 1.36", r"x = \frac{1 + \sqrt{97}}{8}", true),
            (r"x = \frac{1 + \sqrt{97}}{8} \approx 1.36", r"x \approx 1.36", false),
            // A prediction that gives both: its exact value is its answer.
            (r"\frac{1 + \sqrt{97}}{8}", r"\frac{1 + \sqrt{97}}{8} \approx 1.36", true),
            (r"1.36", r"\frac{1 + \sqrt{97}}{8} \approx 1.36", true),
            (r"\pi", r"\pi \approx 3.14", true),
            (r"3.14", r"\pi \approx 3.14", true),
            (r"\frac{1}{3}", r"\frac{1}{3} \approx 0.33", true),
            (r"0.33", r"\frac{1}{3} \approx 0.33", true),
            (r"0.7", r"\frac{37}{50} \approx 0.7", false),
            (r"\frac{22}{7}", r"\pi \approx 3.14", false),
        ],
    );
}

#[test]
fn i_orderings_compare_term_by_term() {
    run(
        "orderings",
        &[
            (r"b < a < d < c", r"b < a < d < c", true),
            (r"b < a < d < c", r"c > d > a > b", true),
            (r"b < a < d < c", r"a < b < d < c", false),
            (r"b < a < d < c", r"b < a < c < d", false),
            (r"b < a < d < c", r"b < a \le d < c", false),
            (r"b < a < d < c", r"c > d > b > a", false),
            (r"b < a < d < c", r"b < a < d", false),
            (r"\tan\frac{7\pi}{5} > \sin\frac{2\pi}{5}", r"\sin\frac{2\pi}{5} < \tan\frac{7\pi}{5}", true),
            (r"\tan\frac{7\pi}{5} > \sin\frac{2\pi}{5}", r"\tan\frac{7\pi}{5} > \sin\frac{2\pi}{5}", true),
            (r"\tan\frac{7\pi}{5} > \sin\frac{2\pi}{5}", r"\tan\frac{7\pi}{5} < \sin\frac{2\pi}{5}", false),
            (r"\tan\frac{7\pi}{5} > \sin\frac{2\pi}{5}", r"\sin\frac{2\pi}{5} > \tan\frac{7\pi}{5}", false),
            (r"\log_2 3 < \sqrt{3} < \frac{7}{4}", r"\frac74 > \sqrt3 > \log_2 3", true),
            (r"\log_2 3 < \sqrt{3} < \frac{7}{4}", r"\frac74 > \log_2 3 > \sqrt3", false),
        ],
    );
}

#[test]
fn d_decimals() {
    run(
        "decimals",
        &[
            // A decimal for an exact gold that no shorter decimal equals: six significant digits,
            // correctly rounded.
            (r"\sqrt3", r"1.73205", true),
            (r"\sqrt3", r"1.732051", true),
            (r"\sqrt3", r"1.73206", false),
            (r"\sqrt3", r"1.7320", false),
            (r"\sqrt3", r"1.73", false),
            (r"3\pi", r"9.42478", true),
            (r"3\pi", r"9.42", false),
            (r"e", r"2.71828", true),
            (r"e", r"2.72", false),
            (r"\frac{1}{3}", r"0.333333", true),
            (r"\frac{1}{3}", r"0.333", false),
            (r"\frac{1}{3}", r"0.3", false),
            (r"\frac{14}{3}", r"4.67", false),
            (r"2\frac{5}{8}", r"2.63", false),
            (r"2\frac{5}{8}", r"2.625", true),
            (r"\frac{1}{8}", r"0.125", true),
            (r"\frac{1}{8}", r"0.13", false),
            (r"1000", r"999.9995", false),
            // A decimal more precise than a decimal gold: a gold of three significant digits it
            // rounds to.
            (r"3.142", r"3.1416", true),
            (r"3.142", r"3.1426", false),
            (r"3.14", r"3.1416", true),
            (r"0.7", r"0.74", false),
            (r"0.7", r"\frac{37}{50}", false),
            (r"4.5", r"4.54", false),
            (r"4.5", r"4.5", true),
            (r"4.5", r"4.50", true),
            (r"4.5", r"\frac92", true),
            (r"12.5", r"12.54", true),
            // An exact prediction against a rounded gold stays right.
            (r"3.14", r"\pi", true),
            (r"3.14", r"\frac{22}{7}", true),
            (r"3.14", r"\sqrt{10}", false),
            (r"0.33", r"\frac13", true),
            (r"1.414", r"\sqrt2", true),
            (r"1.41", r"\sqrt2", true),
            (r"1.42", r"\sqrt2", false),
        ],
    );
    // The option relaxes the digit count, never the rounding.
    let loose = EquivOptions { min_decimal_digits_for_exact: 3, ..EquivOptions::default() };
    assert_eq!(verdict_with(r"\sqrt3", "1.73", &loose), Verdict::Equal);
    assert_eq!(verdict_with(r"3\pi", "9.42", &loose), Verdict::Equal);
    assert_eq!(verdict_with(r"\sqrt3", "1.74", &loose), Verdict::NotEqual);
    assert_eq!(verdict_with(r"\sqrt3", "1.7", &loose), Verdict::NotEqual);
}

#[test]
fn e_exponentials_in_a_variable_never_end_in_a_limit() {
    run(
        "exponentials",
        &[
            (r"3^n", r"3 \cdot 3^{n-1}", true),
            (r"\frac{1}{2}(3^n - 1)", r"\frac{3^n - 1}{2}", true),
            (r"2^{n+1} - 2", r"2(2^n - 1)", true),
            (r"4^n", r"2^{2n}", true),
            (r"\left(\frac{2}{3}\right)^{n}", r"\frac{2^n}{3^n}", true),
            (r"(-2)^n", r"(-1)^n 2^n", true),
            (r"n 2^{n-1}", r"\frac{n 2^n}{2}", true),
            (r"e^{2x}", r"(e^x)^2", true),
            (r"2^n", r"3^n", false),
            (r"3^n", r"3^{n+1}", false),
            (r"3^n", r"3^n + 1", false),
            (r"\frac{1}{2}(3^n - 1)", r"\frac{3^n + 1}{2}", false),
            (r"2^{n+1} - 2", r"2^{n+1} - 1", false),
            (r"n 2^{n-1}", r"n 2^{n}", false),
        ],
    );
}

#[test]
fn f_integer_parameters_named_differently() {
    run(
        "integer parameters",
        &[
            (r"x = k\pi", r"x = n\pi", true),
            (r"x = k\pi", r"x = m\pi", true),
            (r"\frac{\pi}{6} + 2m\pi", r"\frac{\pi}{6} + 2k\pi", true),
            (r"x = \frac{\pi}{4} + \frac{k\pi}{2}", r"x = \frac{\pi}{4} + \frac{n\pi}{2}", true),
            (r"x = (2k+1)\frac{\pi}{2}", r"x = (2n+1)\frac{\pi}{2}", true),
            (r"x = 2k\pi \pm \frac{\pi}{3}", r"x = 2n\pi \pm \frac{\pi}{3}", true),
            (r"x = k \cdot 180^\circ", r"x = n \cdot 180^\circ", true),
            // Another set of solutions, another shape, or other letters stay different.
            (r"x = k\pi", r"x = 2n\pi", false),
            (r"x = k\pi", r"x = \frac{n\pi}{2}", false),
            (r"\frac{\pi}{6} + 2m\pi", r"\frac{\pi}{3} + 2k\pi", false),
            (r"\frac{\pi}{6} + 2m\pi", r"\frac{\pi}{6} + m\pi", false),
            (r"x = k\pi", r"x = t\pi", false),
            (r"x = k\pi", r"x = j\pi", false),
            // Two parameters on a side, or a parameter that is not a multiple of a period.
            (r"x = k\pi + n", r"x = m\pi + n", false),
            (r"2n + 1", r"2k + 1", false),
            (r"n^2", r"k^2", false),
            (r"k\pi", r"x", false),
        ],
    );
}

#[test]
fn c_and_between_inequalities_is_an_intersection() {
    run(
        "and / or",
        &[
            (r"(-\infty,-2) \cup (5,\infty)", r"x < -2 \text{ and } x > 5", false),
            (r"\emptyset", r"x < -2 \text{ and } x > 5", true),
            (r"(-2, 5)", r"x > -2 \text{ and } x < 5", true),
            (r"(-2, 5)", r"x > -2 \land x < 5", true),
            (r"(-2, 5)", r"x > -2 \wedge x < 5", true),
            (r"(-2, 5)", r"x > -2 and x < 5", true),
            (r"-2 < x < 5", r"x > -2 \text{ and } x < 5", true),
            (r"x > -2 \text{ and } x < 5", r"-2 < x < 5", true),
            (r"x > -2 \text{ and } x < 5", r"(-2, 5)", true),
            (r"(-2, 5]", r"x > -2 \text{ and } x < 5", false),
            (r"(-2, 5)", r"x > -2 \text{ and } y < 5", false),
            (r"-2 < y < 5", r"x > -2 \text{ and } x < 5", false),
            (r"(-2, 5)", r"x > -2 \text{ and } x < 6", false),
            (r"[1, 3]", r"x \ge 1 \text{ and } x \le 3", true),
            (r"\{3\}", r"x \ge 3 \text{ and } x \le 3", true),
            (r"(-\infty, 2) \cup (2, 3) \cup (3, \infty)", r"x \ne 2 \text{ and } x \ne 3", true),
            (r"(-\infty, 2) \cup (3, \infty)", r"x \ne 2 \text{ and } x \ne 3", false),
            // "or" stays a union; "and" binds closer than "or".
            (r"(-\infty,-2) \cup (5,\infty)", r"x < -2 \text{ or } x > 5", true),
            (r"(-2, 5)", r"x > -2 \text{ or } x < 5", false),
            (r"(0, 1) \cup (2, 3)", r"x > 0 \text{ and } x < 1 \text{ or } x > 2 \text{ and } x < 3", true),
            (r"(0, 3)", r"x > 0 \text{ and } x < 1 \text{ or } x > 2 \text{ and } x < 3", false),
            // "and" between values or equations is a list separator, as before.
            (r"2, 3", r"2 \text{ and } 3", true),
            (r"2, 3", r"x = 2 \text{ and } x = 3", true),
            (r"x = 1, y = 2", r"x = 1 \text{ and } y = 2", true),
            // Conditions on two variables: the same conditions in any order.
            (r"x > 0 \text{ and } y > 0", r"y > 0 \text{ and } x > 0", true),
            (r"x > 0 \text{ and } y > 0", r"x > 0 \text{ and } y > 1", false),
            (r"x > 0 \text{ and } y > 0", r"x > 0 \text{ or } y > 0", false),
            // A set-builder with several conditions is their intersection.
            (r"(1, 3)", r"\{x \mid x > 1 \text{ and } x < 3\}", true),
            (r"(1, 3)", r"\{x \mid x > 1, x < 3\}", true),
            (r"(1, \infty) \cup (-\infty, 3)", r"\{x \mid x > 1, x < 3\}", false),
        ],
    );
}

#[test]
fn g_trailing_domain_statements_are_dropped() {
    run(
        "domain statements",
        &[
            (r"f(x) = 1", r"f(x) = 1 \text{ for all } x \in \mathbb{Q}", true),
            (r"f(x) = 1 \text{ for all } x \in \mathbb{Q}", r"f(x) = 1", true),
            (r"(-32 + 3t, 64 - 5t)", r"(-32 + 3t, 64 - 5t) \text{ for some integer } t", true),
            (r"x = k\pi", r"x = k\pi \text{where } k \in \mathbb{Z}", true),
            (r"x = k\pi", r"x = k\pi, k \in \mathbb{Z}", true),
            (r"x = k\pi", r"x = n\pi, n \in \mathbb{Z}", true),
            (r"x = k\pi", r"x = k\pi \quad (k \in \mathbb{Z})", true),
            (r"x = k\pi", r"x = k\pi \text{ where } k \text{ is an integer}", true),
            (r"\frac{\pi}{6} + 2k\pi", r"\frac{\pi}{6} + 2k\pi, k \in \mathbb{Z}", true),
            // The value before the statement still decides.
            (r"f(x) = 1", r"f(x) = 2 \text{ for all } x \in \mathbb{Q}", false),
            (r"(-32 + 3t, 64 - 5t)", r"(-32 + 3t, 64 + 5t) \text{ for some integer } t", false),
            (r"x = k\pi", r"x = 2k\pi, k \in \mathbb{Z}", false),
            // A condition that restricts the answer is no domain statement, and a set that is not
            // a number set is part of the answer.
            (r"f(x) = x", r"f(x) = x \text{ for } x > 0", false),
            (r"2", r"2, y \in [1, 2]", false),
            (r"a", r"a, b \in \mathbb{Z}", false),
        ],
    );
}

#[test]
fn j_circled_numbers() {
    run(
        "circled numbers",
        &[
            (r"2, 3", "②③", true),
            (r"2, 3", "②、③", true),
            (r"2, 3", "② ③", true),
            ("②③", r"2, 3", true),
            ("②③", "③②", true),
            (r"1", "①", true),
            (r"2, 3", "②④", false),
            (r"2, 3", "②", false),
            (r"2, 3", "②③④", false),
            (r"10, 20", "⑩⑳", true),
        ],
    );
}

#[test]
fn k_a_set_minus_points() {
    run(
        "set differences",
        &[
            (r"(-\infty,-6)\cup(-6,\frac32)", r"\{x \mid x < \frac32\} - \{-6\}", true),
            (r"(-\infty,-6)\cup(-6,\frac32)", r"\{x \mid x < \frac32\} \setminus \{-6\}", true),
            (r"\{x \mid x < \frac32\} \setminus \{-6\}", r"(-\infty,-6)\cup(-6,\frac32)", true),
            (r"(-\infty,-6)\cup(-6,\frac32)", r"\left\{x \mid x < \frac32\right\} \setminus \left\{-6\right\}", true),
            (r"(-\infty,-6)\cup(-6,\frac32)", r"(-\infty, \frac32) \setminus \{-6\}", true),
            (r"(-\infty,0)\cup(0,\infty)", r"\mathbb{R} \setminus \{0\}", true),
            (r"[0, 1) \cup (1, 2]", r"[0,2] \setminus \{1\}", true),
            (r"[0, 2)", r"[0,2] \setminus \{2\}", true),
            (r"[0, 2]", r"[0,2] \setminus \{5\}", true),
            (r"(-\infty, 1) \cup (1, 2) \cup (2, 3)", r"(-\infty, 3) \setminus \{1, 2\}", true),
            (r"\{1, 3\}", r"\{1, 2, 3\} \setminus \{2\}", true),
            // Another point, another end, a missing point.
            (r"(-\infty,-6)\cup(-6,\frac32)", r"\{x \mid x < \frac32\} - \{6\}", false),
            (r"(-\infty,-6)\cup(-6,\frac32)", r"\{x \mid x \le \frac32\} - \{-6\}", false),
            (r"(-\infty,-6)\cup(-6,\frac32)", r"\{x \mid x < \frac32\}", false),
            (r"(-\infty, \frac32)", r"\{x \mid x < \frac32\} - \{-6\}", false),
            (r"(-\infty,0)\cup(0,\infty)", r"\mathbb{R} \setminus \{1\}", false),
        ],
    );
}

#[test]
fn l_matrices_mixed_numbers_repeating_decimals() {
    run(
        "matrices",
        &[
            (
                r"\begin{pmatrix}2&2\\4&5\end{pmatrix}",
                r"\begin{pmatrix}1&2\\3&4\end{pmatrix} + \begin{pmatrix}1&0\\1&1\end{pmatrix}",
                true,
            ),
            (r"\begin{pmatrix}2&4\\6&8\end{pmatrix}", r"2\begin{pmatrix}1&2\\3&4\end{pmatrix}", true),
            (r"\begin{pmatrix}2&4\\6&8\end{pmatrix}", r"\begin{pmatrix}1&2\\3&4\end{pmatrix} \cdot 2", true),
            (
                r"\begin{pmatrix}0&0\\0&0\end{pmatrix}",
                r"\begin{pmatrix}1&2\\3&4\end{pmatrix} - \begin{pmatrix}1&2\\3&4\end{pmatrix}",
                true,
            ),
            (
                r"\begin{pmatrix}\frac12&1\\\frac32&2\end{pmatrix}",
                r"\frac{1}{2}\begin{pmatrix}1&2\\3&4\end{pmatrix}",
                true,
            ),
            (
                r"\begin{pmatrix}\frac12&1\\\frac32&2\end{pmatrix}",
                r"\frac{\begin{pmatrix}1&2\\3&4\end{pmatrix}}{2}",
                true,
            ),
            (
                r"\begin{pmatrix}1&0\\0&1\end{pmatrix}",
                r"\begin{pmatrix}1&0\\0&1\end{pmatrix}\begin{pmatrix}1&0\\0&1\end{pmatrix}",
                true,
            ),
            (r"\begin{pmatrix}7&10\\15&22\end{pmatrix}", r"\begin{pmatrix}1&2\\3&4\end{pmatrix}^2", true),
            (
                r"\begin{pmatrix}7&10\\15&22\end{pmatrix}",
                r"\begin{pmatrix}1&2\\3&4\end{pmatrix}\begin{pmatrix}1&2\\3&4\end{pmatrix}",
                true,
            ),
            (r"\begin{pmatrix}2x&0\\0&2x\end{pmatrix}", r"x\begin{pmatrix}2&0\\0&2\end{pmatrix}", true),
            (r"(5, 7)", r"\begin{pmatrix}1&2\end{pmatrix} + \begin{pmatrix}4&5\end{pmatrix}", true),
            // Wrong sums, products in the other order, shapes that do not fit, scalars added.
            (
                r"\begin{pmatrix}2&2\\4&5\end{pmatrix}",
                r"\begin{pmatrix}1&2\\3&4\end{pmatrix} + \begin{pmatrix}1&0\\1&2\end{pmatrix}",
                false,
            ),
            (
                r"\begin{pmatrix}2&1\\1&1\end{pmatrix}",
                r"\begin{pmatrix}1&1\\0&1\end{pmatrix}\begin{pmatrix}1&0\\1&1\end{pmatrix}",
                true,
            ),
            (
                r"\begin{pmatrix}2&1\\1&1\end{pmatrix}",
                r"\begin{pmatrix}1&0\\1&1\end{pmatrix}\begin{pmatrix}1&1\\0&1\end{pmatrix}",
                false,
            ),
            (r"\begin{pmatrix}2&3\\4&5\end{pmatrix}", r"\begin{pmatrix}1&2\\3&4\end{pmatrix} + 1", false),
            (
                r"\begin{pmatrix}2&2\end{pmatrix}",
                r"\begin{pmatrix}1&2\end{pmatrix} + \begin{pmatrix}1\\0\end{pmatrix}",
                false,
            ),
            (r"\begin{pmatrix}7&10\\15&22\end{pmatrix}", r"\begin{pmatrix}1&2\\3&4\end{pmatrix}^3", false),
        ],
    );
    run(
        "mixed numbers",
        &[
            (r"\frac{7}{3}", r"2\frac{1}{3}", true),
            (r"\frac{7}{3}", r"2 \frac{1}{3}", true),
            (r"\frac{7}{3}", r"2\dfrac13", true),
            (r"\frac{7}{3}", r"2 1/3", true),
            (r"-\frac{7}{3}", r"-2\frac{1}{3}", true),
            (r"4", r"4 0/9", true),
            (r"4", r"4\frac{0}{9}", true),
            (r"\frac{2}{3}", r"2\frac{1}{3}", false),
            (r"\frac{40}{9}", r"4 0/9", false),
            // An improper fraction after a number is a product.
            (r"3", r"2\frac{3}{2}", true),
        ],
    );
    run(
        "repeating decimals",
        &[
            (r"\frac13", r"0.\overline{3}", true),
            (r"\frac16", r"0.1\overline{6}", true),
            (r"\frac17", r"0.\overline{142857}", true),
            (r"\frac16", r"0.1\dot{6}", true),
            (r"\frac{83}{33}", r"2.5\overline{15}", true),
            (r"2", r"1.\overline{9}", true),
            (r"\frac13", r"0.\overline{33}", true),
            (r"0.\overline{3}", r"\frac13", true),
            (r"\frac13", r"0.\overline{4}", false),
            (r"\frac16", r"0.\overline{16}", false),
            (r"\frac13", r"0.3", false),
            (r"0.333", r"0.\overline{3}", true),
        ],
    );
}

/// The new rules are charged to the budget: adversarial answers of the maximal length built for
/// each of them come back quickly with a verdict (often a limit), in both roles.
#[test]
fn new_rules_keep_bounded_cost() {
    let limits = Limits::default();
    let max = limits.max_answer_bytes;
    let fill = |unit: &str, head: &str, tail: &str| {
        let n = (max - head.len() - tail.len()) / unit.len();
        format!("{head}{}{tail}", unit.repeat(n))
    };
    let cases = [
        // Long chains of equalities between numbers (every link is checked).
        fill(r"\sqrt{2} = ", "", "1.414"),
        fill("1 = ", "", "1"),
        fill(r"\frac{1}{3} \approx ", "", "0.333"),
        fill(r"2^{99999} = ", "", "5"),
        // Orderings and intersections with many parts.
        fill(r"\sqrt{2} < ", "", "5"),
        fill(r"x > 1 \text{ and } ", "", "x < 2"),
        fill(r"x \ne 1 \land ", "", "x \\ne 2"),
        fill(r"\{1\} \cup ", "[0, 100] \\setminus (", "\\{2\\})"),
        fill(r", 1", "[0, 100] \\setminus \\{0", "\\}"),
        fill(r"x > \sqrt{2} \land x < \sqrt{3} \text{ or } ", "", "x = 1"),
        // Matrix arithmetic.
        fill(r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", "", ""),
        fill(r"+\begin{pmatrix}1&2\\3&4\end{pmatrix}", "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", ""),
        format!(r"\begin{{pmatrix}}{}\end{{pmatrix}}^8", ["x&1&1&1&1&1&1&y"; 8].join(r"\\")),
        // Domain statements and repeating decimals.
        fill(r", k \in \mathbb{Z}", "x = k\\pi", ""),
        fill(r" \text{ for all } x", "f(x) = 1", " \\in \\mathbb{Q}"),
        fill("3", "0.", "\\overline{3}"),
        fill(r"0.\overline{3} + ", "", "1"),
        // Integer parameters and exponentials in a variable.
        fill(r"+ k\pi", "x = ", ""),
        fill(r"\cdot 3^{n}", "3^n", ""),
    ];
    let golds = ["5", r"(-2, 5)", r"x = k\pi", r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", r"\frac13"];
    let mut slowest = (std::time::Duration::ZERO, String::new());
    for c in &cases {
        for g in golds {
            for (a, b) in [(g, c.as_str()), (c.as_str(), g), (c.as_str(), c.as_str())] {
                let t = std::time::Instant::now();
                let _ = crate::check(a, b);
                let dt = t.elapsed();
                if dt > slowest.0 {
                    slowest = (dt, format!("{:.60} vs {:.60}", a, b));
                }
            }
        }
    }
    // A debug build is 10 to 30 times slower than a release build; the budget stops a release
    // comparison after about 10 ms.
    assert!(slowest.0 < std::time::Duration::from_secs(2), "slowest call {:?}: {}", slowest.0, slowest.1);
    eprintln!("slowest call {:?}: {}", slowest.0, slowest.1);
}
