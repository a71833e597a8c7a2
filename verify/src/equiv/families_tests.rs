//! The answer-shape families of issue 14 (policies in `verify/EQUIVALENCE.md`, "Answer shapes"):
//! one table per family, each row `(gold, prediction, expected)` run through the whole pipeline
//! (`check`: extraction, parsing, comparison). Rows marked `Both` are also run with gold and
//! prediction swapped (the mirror direction of the rule); every family has rows that must stay
//! wrong (a partial list, another interval, a swapped tuple, another function).

use crate::check;

#[derive(Clone, Copy)]
enum Dir {
    /// Only as written (gold first).
    One,
    /// As written and mirrored.
    Both,
}
use Dir::{Both, One};

type Row = (&'static str, &'static str, bool, Dir);

fn run(family: &str, rows: &[Row]) {
    let mut failures = Vec::new();
    for &(gold, pred, want, dir) in rows {
        if check(gold, pred) != want {
            failures.push(format!("{gold:?} vs {pred:?}: want {want}"));
        }
        if matches!(dir, Both) && check(pred, gold) != want {
            failures.push(format!("(mirror) {pred:?} vs {gold:?}: want {want}"));
        }
    }
    assert!(failures.is_empty(), "{family}: {} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn relations_and_intervals() {
    run(
        "relations vs intervals",
        &[
            (r"-3 \le y \le 5", r"y \in [-3,5]", true, Both),
            (r"-3 \le y \le 5", r"[-3,5]", true, Both),
            (r"-3 \le y \le 5", r"(-3,5]", false, Both),
            (r"0 < g(t) < 2", r"(0,2)", true, Both),
            (r"0 < f(x) \le 1", r"(0,1]", true, Both),
            (r"0 < g(t) < 2", r"[0,2)", false, Both),
            (r"g(t) > 2", r"(2, \infty)", true, Both),
            (r"1 < k \le 4 \text{ or } 6 \le k < 9", r"(1,4] \cup [6,9)", true, Both),
            (r"k < 0 \text{ or } k > 4", r"(-\infty, 0) \cup (4, \infty)", true, Both),
            (r"1 < k \le 4 \text{ or } 6 \le k < 9", r"(1,4] \cup [6,9]", false, Both),
            (r"1 < k \le 4 \text{ or } 6 \le k < 9", r"(1,4]", false, Both),
            (r"1 < k \le 4 \text{ or } 6 \le m < 9", r"(1,4] \cup [6,9)", false, Both),
            (r"b \le -1 \text{ or } b = 3", r"(-\infty,-1] \cup \{3\}", true, Both),
            (r"b \le -1 \text{ or } b = 3", r"(-\infty,-1]", false, Both),
            (r"b \le -1 \text{ or } b = 3", r"(-\infty,-1] \cup \{4\}", false, Both),
            (r"\{t \mid -2<t<2\}", r"(-2,2)", true, Both),
            (r"\{x : x > 3\}", r"(3, \infty)", true, Both),
            (r"\{x \in \mathbb{R} \mid x > 3\}", r"(3, \infty)", true, Both),
            (r"\{x \in \mathbb{Z} \mid x > 3\}", r"(3, \infty)", false, Both),
            (r"\left\{ x \mid x \ge 1 \right\}", r"[1, \infty)", true, Both),
            (r"\{t \mid -2<t<2\}", r"(-2,2]", false, Both),
            (r"\{t \mid -2<t<2\}", r"[-2,2]", false, Both),
            // Several conditions are an intersection, not read as an "or".
            (r"\{x \mid x > 1, x < 3\}", r"(1, \infty) \cup (-\infty, 3)", false, One),
            (r"1\leq|z|\leq \frac{3}{2}", r"z \in [-\frac{3}{2}, -1] \cup [1, \frac{3}{2}]", true, Both),
            (r"|x| < 2", r"(-2, 2)", true, Both),
            (r"|x| > 1", r"(-\infty,-1) \cup (1,\infty)", true, Both),
            (r"1\leq|z|\leq \frac{3}{2}", r"[1, \frac{3}{2}]", false, Both),
            (r"|x| < 2", r"(0, 2)", false, Both),
            (r"|x| > a", r"(a, \infty)", false, Both),
        ],
    );
}

#[test]
fn answers_spread_over_words_and_boxes() {
    run(
        "words and boxes",
        &[
            ("4,5,6", "The numbers are $4$ and $5$ and $6$.", true, One),
            ("$4$ and $5$ and $6$", "4,5,6", true, Both),
            ("4,5,6", "The numbers are $4$ and $5$.", false, One),
            ("4,5,7", "The numbers are $4$ and $5$ and $6$.", false, One),
            ("8,3,5", "So it is $8,3$ or $5$.", true, One),
            ("$21,16$ or $11$", "$21,16,11$", true, Both),
            ("$21,16$ or $11$", "$21,16,12$", false, Both),
            ("3,3", r"\boxed{3} and \boxed{3}", true, One),
            ("3,3", r"\boxed{3}", false, One),
            ("3,3,3", r"\boxed{3} and \boxed{3}", false, One),
            ("5", r"\boxed{5} and \boxed{5}", true, One),
            ("(3,3)", r"$x = \boxed{3}$, $y = \boxed{3}$", true, One),
            // A relation in a block is a statement, not a list item: the last one answers.
            // Two values stated, one asked for: two candidates, never the last one alone.
            ("3", "so $x = 2$ and $y = 3$", false, One),
            ("(2, 3)", "so $x = 2$ and $y = 3$", true, One),
            ("2,3", "The solutions are $x = 2$ or $x = 3$.", true, One),
            ("2,4", "The solutions are $x = 2$ or $x = 3$.", false, One),
            ("1,2", "Maximum: 2, Minimum: 1", true, One),
            (r"(-\infty,-1) \cup (3,\infty)", r"x < -1 \lor x > 3", true, One),
            (r"(-\infty,-1] \cup \{3\}", r"\{b \mid b \le -1 \text{ or } b = 3\}", true, One),
            // "and" between conditions is their intersection.
            (r"(-1, 3)", r"\{x \mid x > -1 \text{ and } x < 3\}", true, One),
            (r"(-\infty, -1) \cup (3, \infty)", r"\{x \mid x > -1 \text{ and } x < 3\}", false, One),
            ("(2,1),(4,1)", "a=2,b=1;a=4,b=1", true, Both),
            ("p=5,q=2;p=7,q=2", "(5,2),(7,2)", true, Both),
            ("(2,1),(4,1)", "a=2,b=1;a=1,b=4", false, Both),
            ("(2,1),(4,1)", "a=2,b=1;b=1,a=4", false, One),
            ("(2,1),(4,1)", "a=2,b=1", false, One),
            ("1,2", "Maximum = 2, Minimum = 1", true, Both),
            ("(2,1)", "Maximum = 2, Minimum = 1", true, One),
            ("1,2", "Maximum = 2, Minimum = 3", false, Both),
            // A second value beside 17 (that it does not parse does not make it go away).
            ("17", "The answers are $17$ and $\\prod_{j=1}^m\\bigl(j\\bigr)$", false, One),
            ("18", "The answers are $17$ and $\\prod_{j=1}^m\\bigl(j\\bigr)$", false, One),
        ],
    );
}

#[test]
fn unordered_collections_of_tuples() {
    run(
        "tuples",
        &[
            ("(1,2),(3,4)", "(3,4),(1,2)", true, Both),
            ("(1,2),(3,4)", "(3,4),(1,2),(1,2)", true, Both),
            ("(1,2),(3,4)", "(2,1),(3,4)", false, Both),
            ("(1,2),(3,4)", "(1,2)", false, Both),
            ("(1,2),(3,4)", "(1,2),(3,4),(5,6)", false, Both),
            (r"(\pm 1, 0, \pm 2)", "(1,0,2),(1,0,-2),(-1,0,2),(-1,0,-2)", true, Both),
            (r"(\pm 1, 0, \pm 2)", "(-1,0,-2),(1,0,2),(-1,0,2),(1,0,-2)", true, Both),
            (r"(\pm 1, 0, \pm 2)", "(1,0,2),(1,0,-2),(-1,0,2)", false, Both),
            (r"(\pm 1, 0, \pm 2)", "(1,0,2)", false, Both),
            (r"(\pm 1, 0, \pm 2)", r"(\pm 2, 0, \pm 1)", false, Both),
            (r"\{2\pm\sqrt3, 1\}", r"\{1, 2+\sqrt3, 2-\sqrt3\}", true, Both),
            (r"\{2\pm\sqrt3, 1\}", r"\{1, 2+\sqrt3\}", false, Both),
            (r"2\pm\sqrt3, 1", r"1, 2-\sqrt3, 2+\sqrt3", true, Both),
            // Lists of numbers keep their multiplicities.
            ("1,1,2", "1,2,2", false, Both),
            ("1,2", "1,2,2", false, Both),
        ],
    );
}

#[test]
fn equations_naming_a_value() {
    run(
        "named golds",
        &[
            ("P_1:P_2 = 3:8", "3:8", true, Both),
            ("P_1:P_2 = 3:8", r"\frac{3}{8}", true, Both),
            ("P_1:P_2 = 3:8", "8:3", false, Both),
            (r"\frac{AM}{MB} = \frac{2}{\sqrt5}", r"\frac{2}{\sqrt5}", true, Both),
            (r"\frac{AM}{MB} = \frac{2}{\sqrt5}", r"\frac{2\sqrt5}{5}", true, Both),
            (r"\frac{AM}{MB} = \frac{2}{\sqrt5}", r"\frac{\sqrt5}{2}", false, Both),
            ("x:y = 2", "2", true, Both),
            ("x:y = 2", "1/2", false, Both),
            ("V_{1}:V_{2}=11:21", "11:21", true, Both),
            ("3:8", "6:16", false, One),
            ("3:4", "6:8", true, Both),
            ("3:4:5", "3:4:5", true, One),
            ("3:4:5", "6:8:10", false, One),
            // `h:mm` is a time of day, not a quotient.
            ("2:30", "1:15", false, Both),
            ("12:00", "1:00", false, Both),
            ("1:58", r"1:58 \text{ a.m.}", true, Both),
            ("13:58", r"1:58 \text{ p.m.}", true, Both),
            (r"1:58 \text{ a.m.}", r"1:58 \text{ p.m.}", false, Both),
            ("10:00", "10:00 PM", false, Both),
        ],
    );
}

#[test]
fn renamings() {
    run(
        "renamings",
        &[
            ("g(t) = 3t", "g(s) = 3s", true, Both),
            ("f(x) = x^2 + 1", "f(u) = u^2 + 1", true, Both),
            ("g(t) = 3t", "g(s) = 3t", false, Both),
            ("g(t) = 3t", "g(s) = 4s", false, Both),
            ("g(t) = 3t", "h(s) = 3s", false, Both),
            ("f(x) = x + y", "f(y) = y + x", false, Both),
            (r"y = k e^{-x} + x", r"y = x + C e^{-x}", true, Both),
            (r"y = C_1 e^{x} + C_2 e^{2x}", r"y = c_2 e^{x} + c_1 e^{2x}", true, Both),
            (r"y = k e^{-x} + x", r"y = x + C e^{x}", false, Both),
            (r"y = k e^{-x} + x", r"y = x + 2 e^{-x}", false, Both),
            // A constant alone is a parameter, not an arbitrary constant.
            ("k", "C", false, Both),
            ("2k+1", "2C+1", false, Both),
            // Other symbols are never renamed.
            ("x^2", "y^2", false, Both),
        ],
    );
}

#[test]
fn logarithms_and_constants() {
    run(
        "log and constants",
        &[
            (r"\ln 2", r"\log 2", true, Both),
            (r"\ln(x+1)", r"\log(x+1)", true, Both),
            (r"\ln 3", r"\log 2", false, Both),
            // Without `\ln` on the other side, `\log` keeps its base 10.
            (r"2", r"\log 100", true, Both),
            (r"2", r"\ln 100", false, Both),
            (r"\Gamma(3/2)", "gamma(3/2)", true, Both),
            (r"\Gamma(3/2)", "gamma(1.5)", true, Both),
            (r"\Gamma(3/2)", r"\Gamma(5/2)", false, Both),
            (r"\Gamma(2)", r"2\Gamma", false, Both),
            (r"\Gamma(x+1)", "gamma(1+x)", true, Both),
            (r"\gamma", "EulerGamma", true, Both),
            ("0.5772", "EulerGamma", false, Both),
        ],
    );
}

#[test]
fn multiple_choice_ordinals_and_words() {
    run(
        "choice and words",
        &[
            ("C", "(C) y = 2x + 1", true, One),
            ("C", r"\textbf{(C)}\ 250", true, One),
            ("D", r"\boxed{(D) $4(x+1)=4x$}", true, One),
            ("C", "(D) y = 2x + 1", false, One),
            ("C", r"\textbf{(B)}\ 250", false, One),
            // The label is not the answer for a non-letter gold: the text after it is.
            ("y = 2x + 1", r"\boxed{(C) y = 2x + 1}", true, One),
            ("7", r"7^{\mathrm{th}}", true, Both),
            ("21", "21^{st}", true, Both),
            ("9", "9th Week", true, One),
            ("3", "3rd", true, Both),
            ("3", "4th", false, Both),
            ("x^2", "x^{th}", false, One),
            ("12", r"\text{Bo earns \$12.}", true, One),
            ("13", r"\text{Bo earns \$12.}", false, One),
            ("12", r"\text{Bo does not earn \$12.}", false, One),
            ("12", r"\text{between 12 and 13}", false, One),
            (r"30.25^\circ", r"30^\circ 15'", true, Both),
            (r"30^\circ 15'", "30.25", true, One),
            (r"30^\circ 15'", r"30^\circ 16'", false, Both),
            (r"10.51^\circ", r"10^\circ 30' 36''", true, Both),
        ],
    );
}

#[test]
fn powers_of_zero_one_and_minus_one() {
    run(
        "trivial powers",
        &[
            ("1", "1^{(3^{98765432})}", true, Both),
            ("0", "0^{(3^{98765432})}", true, Both),
            ("-1", "(-1)^{(3^{98765432})}", true, Both),
            ("1", "(-1)^{(2^{98765432})}", true, Both),
            ("-1", "(-1)^{(2^{98765432} + 1)}", true, Both),
            ("-1", "(-1)^{(2^{98765432})}", false, Both),
            ("1", "0^{(3^{98765432})}", false, Both),
            ("2", "1^{(3^{98765432})}", false, Both),
        ],
    );
}
