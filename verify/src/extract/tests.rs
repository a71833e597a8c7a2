//! Table-driven tests of [`extract`]: response -> expected text, parts and source.

use super::*;

/// Which options a case runs with.
#[derive(Clone, Copy)]
enum Opts {
    /// `ExtractOptions::default()` (the gold path).
    Default,
    /// Last-number fallback on (a response scored against a plain-number gold).
    Number,
    /// Whole-text fallback off.
    NoWhole,
    /// The lenient readings (`--extract lenient`): last math block, reasoning fallback.
    Lenient,
}

impl Opts {
    fn get(self) -> ExtractOptions {
        match self {
            Opts::Default => ExtractOptions::default(),
            Opts::Number => ExtractOptions { last_number_fallback: true, ..ExtractOptions::default() },
            Opts::NoWhole => ExtractOptions { whole_fallback: false, ..ExtractOptions::default() },
            Opts::Lenient => ExtractOptions { lenient: true, ..ExtractOptions::default() },
        }
    }
}

/// One expected extraction: `None` means no answer.
struct Case {
    input: &'static str,
    opts: Opts,
    want: Option<(&'static str, &'static [&'static str], Source)>,
}

const fn ok(input: &'static str, text: &'static str, source: Source) -> Case {
    Case { input, opts: Opts::Default, want: Some((text, &[], source)) }
}

const fn list(input: &'static str, text: &'static str, parts: &'static [&'static str]) -> Case {
    Case { input, opts: Opts::Default, want: Some((text, parts, Source::Boxed)) }
}

const fn num(input: &'static str, text: &'static str, source: Source) -> Case {
    Case { input, opts: Opts::Number, want: Some((text, &[], source)) }
}

/// A reading that only `--extract lenient` takes (strict: no answer, see `strict_has_no_fallback`).
const fn lenient(input: &'static str, text: &'static str, source: Source) -> Case {
    Case { input, opts: Opts::Lenient, want: Some((text, &[], source)) }
}

const fn none(input: &'static str) -> Case {
    Case { input, opts: Opts::Default, want: None }
}

const fn none_with(input: &'static str, opts: Opts) -> Case {
    Case { input, opts, want: None }
}

use Source::*;

const CASES: &[Case] = &[
    // --- Boxes: the last one, nesting, escapes, spacing forms.
    ok(r"So the answer is $\boxed{5}$.", "5", Boxed),
    ok(r"\boxed{\frac{1}{2}}", r"\frac{1}{2}", Boxed),
    ok(r"We get \boxed{3} first, then after checking: the result is \boxed{4}.", "4", Boxed),
    ok(r"\boxed{\{1, 2\}}", r"\{1, 2\}", Boxed),
    ok(r"\boxed{\left\{ x \mid x > 0 \right\}}", r"\left\{ x \mid x > 0 \right\}", Boxed),
    ok(r"\boxed{\sqrt{\frac{a}{b}}}", r"\sqrt{\frac{a}{b}}", Boxed),
    ok(r"The answer is \boxed 5.", "5", Boxed),
    ok(r"\fbox{12}", "12", Boxed),
    ok(r"The final answer is \(\framebox{194}\).", "194", Boxed),
    ok(r"\framebox[2cm][c]{7}", "7", Boxed),
    // --- Layouts: tables, label lines, headings (`layout`).
    ok("So it is 8.\n\n| **Final answer** | $8$ |\n|---|---|", "8", Layout),
    ok("Summary:\n\n| | |\n|---|---|\n| Result | $10$ |", "10", Layout),
    ok("Hence x = 17000.\n\nAnswer ⟶ $17000$", "17000", Layout),
    ok("They have 28 pets.\n\n#### Result: $28$", "28", Layout),
    ok("We get it.\n\nFinal Answer\n============\n\n$7$", "7", Layout),
    ok("**Answer:** 17", "17", AnswerColon),
    Case {
        input: "x = 600\n\n### Answer\n\n* $600$\n* $601$",
        opts: Opts::Default,
        want: Some(("600, 601", &["600", "601"], Layout)),
    },
    Case {
        input: "So $\\boxed{2}$.\n\n| Case | Answer |\n|---|---|\n| first | $2$ |\n| second | $3$ |",
        opts: Opts::Default,
        want: Some(("2, 3", &["2", "3"], Boxed)),
    },
    ok("So $\\boxed{2}$.\n\n| Final answer |\n|---|\n| $2$ |", "2", Boxed),
    none("We count them.\n\nAlternative: $6$"),
    ok(r"\boxed {7}", "7", Boxed),
    ok(r"\boxed{ 42. }", "42", Boxed),
    ok(r"\boxed{\text{(B)}}", "B", Boxed),
    ok(r"\boxed{B}", "B", Boxed),
    ok(r"\boxed{\textbf{(E)}}", "E", Boxed),
    ok(r"\boxed{(-\infty, -3] \cup [2, \infty)}", r"(-\infty, -3] \cup [2, \infty)", Boxed),
    ok(r"\boxed{\begin{pmatrix} 1 \\ 2 \end{pmatrix}}", r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", Boxed),
    ok(r"\boxed{\boxed{8}}", "8", Boxed),
    ok(r"\boxed{x = 5}", "x = 5", Boxed),
    ok(r"\boxed{\dfrac{3}{4}\text{ cm}}", r"\dfrac{3}{4}\text{ cm}", Boxed),
    ok(r"so $\boxed{-2,1}$.", "-2,1", Boxed),
    none(r"\boxed{3} and later \boxed{4"),
    // A final box never closed: the answer was never finished, whatever came before it.
    none("So $x = 2$, hence \\boxed{\\frac{1}{2"),
    none("The answer is 7, so \\boxed{7"),
    ok(r"\boxed{} then \boxed{6}", "6", Boxed),
    ok(r"\boxed{6} then \boxed{}", "6", Boxed),
    ok(r"\boxed{\displaystyle \frac{1}{3}}", r"\displaystyle \frac{1}{3}", Boxed),
    lenient(r"\boxedx{5} and $7$", "7", MathDelimiters),
    ok(r"\boxed{5\\}", "5", Boxed),
    ok(r"\boxed{$9$}", "9", Boxed),
    ok(r"\boxed{\$18.90}", r"\$18.90", Boxed),
    ok("The final answer is $\\boxed{5}$. I hope it is correct.", "5", Boxed),
    ok("**Final Answer**\n\\[ \\boxed{5} \\]", "5", Boxed),
    ok("Therefore\n\\[\n\\boxed{(1, 2, 3)}\n\\]", "(1, 2, 3)", Boxed),
    ok(r"\boxed{4}. So, after rechecking, it is \boxed{5}", "5", Boxed),
    // --- Lists of boxes.
    list(r"\boxed{2} and \boxed{3}", "2, 3", &["2", "3"]),
    list(r"$\boxed{1}\boxed{2}$", "1, 2", &["1", "2"]),
    list(r"\(\boxed{1}\) and \(\boxed{-2}\).", "1, -2", &["1", "-2"]),
    list(r"$$\boxed{2}, \boxed{3}, \boxed{5}, \boxed{7}, \boxed{13}$$", "2, 3, 5, 7, 13", &["2", "3", "5", "7", "13"]),
    list(r"$\boxed{a} \quad \text{and} \quad \boxed{b}$", "a, b", &["a", "b"]),
    list(r"\boxed{1} papers and \boxed{2} bins", "1, 2", &["1", "2"]),
    list(r"x_1 = \boxed{2}, x_2 = \boxed{3}", "2, 3", &["2", "3"]),
    list(r"\boxed{2} or \boxed{-2}", "2, -2", &["2", "-2"]),
    list("Solutions:\n\\[\\boxed{1}\\]\n\\[\\boxed{4}\\]", "1, 4", &["1", "4"]),
    list(r"\boxed{5} and \boxed{5}", "5, 5", &["5", "5"]),
    list(r"\boxed{5} \boxed{5} \boxed{5}", "5, 5, 5", &["5", "5", "5"]),
    list(r"\boxed{1} \boxed{2} \boxed{1}", "1, 2, 1", &["1", "2", "1"]),
    // Joined math blocks of values: `$4$ and $5$ and $6$`, `$8, 3$ or $5$`; relations stay apart.
    Case { input: "The numbers are $4$ and $5$ and $6$.", opts: Opts::Default, want: Some(("4, 5, 6", &["4", "5", "6"], Source::Conclusion)) },
    Case { input: "So it is $8, 3$ or $5$", opts: Opts::Default, want: Some(("8, 3, 5", &["8, 3", "5"], Source::Conclusion)) },
    Case { input: "$17$ and $\\prod_{j=1}^m j$", opts: Opts::Default, want: Some(("17 and \\prod_{j=1}^m j", &[], Source::Whole)) },
    Case { input: "so $x = 2$ and $y = 3$", opts: Opts::Default, want: Some(("x = 2, y = 3", &["x = 2", "y = 3"], Source::Conclusion)) },
    lenient("we get $2$. Then $3$", "3", MathDelimiters),
    ok(r"\boxed{1} no no no no no \boxed{2}", "2", Boxed),
    ok(r"First \boxed{4}. Then we realise the mistake, so \boxed{5}", "5", Boxed),
    ok("We try \\boxed{4}: wrong. \\boxed{7}", "7", Boxed),
    ok(r"\boxed{9998.57} roughly. But the exact answer is \(\boxed{9998.571428571429}\).", "9998.571428571429", Boxed),
    // --- <think> regions.
    ok("<think>maybe \\boxed{3}</think>\nThe answer is \\boxed{4}.", "4", Boxed),
    ok("<think>maybe \\boxed{3}</think>\nThe answer is 4.", "4", FinalAnswerPhrase),
    ok("<think>I get \\boxed{3} for sure</think>", "3", Boxed),
    ok("<think>long reasoning, \\boxed{12} looks right, and then", "12", Boxed),
    ok("<think>a</think> <think>b</think> 7", "7", Whole),
    none("<think>hmm, not sure"),
    none("<think>ok</think>"),
    ok("<think>x=1</think>\n\n$2$", "2", Whole),
    // --- <answer> tags.
    ok("<answer> \\boxed{3} </answer>", "3", AnswerTag),
    ok("reasoning \\boxed{9} ... <answer>5</answer>", "5", AnswerTag),
    ok("<think>work</think><answer>\\frac{1}{2}</answer>", r"\frac{1}{2}", AnswerTag),
    ok("<answer>The answer is $7$.</answer>", "7", AnswerTag),
    ok("<answer>1</answer> retry <answer>2</answer>", "2", AnswerTag),
    ok("<answer>(C)</answer>", "C", AnswerTag),
    ok("<Answer>42</Answer>", "42", AnswerTag),
    ok("<answer>5 \\boxed{6}", "6", Boxed),
    // --- Phrases.
    ok("So the answer is 42.", "42", FinalAnswerPhrase),
    ok("The final answer is $\\frac{3}{4}$. I hope it is correct.", r"\frac{3}{4}", FinalAnswerPhrase),
    ok("Final Answer: The final answer is $[-3, 2]$. I hope it is correct.", "[-3, 2]", FinalAnswerPhrase),
    ok("The answer is: 42", "42", FinalAnswerPhrase),
    ok("THE ANSWER IS 12.", "12", FinalAnswerPhrase),
    ok("The answer is **42**.", "42", FinalAnswerPhrase),
    ok("**Answer: 42**", "42", AnswerColon),
    ok("**Final Answer:** $\\frac{2}{3}$", r"\frac{2}{3}", FinalAnswerPhrase),
    ok("Answer: D", "D", AnswerColon),
    ok("**Answer:** 17", "17", AnswerColon),
    ok("**Answer**: $x^2$", "x^2", AnswerColon),
    ok("Final Answer: 3.5", "3.5", FinalAnswerPhrase),
    ok("The answer is (C)", "C", FinalAnswerPhrase),
    ok("Final answer is B", "B", FinalAnswerPhrase),
    ok("The answer is U.", "U", FinalAnswerPhrase),
    ok("Answer $ 9 $", "9", AnswerColon),
    ok("Answer \\[ \n 9 \n \\]", "9", AnswerColon),
    ok("Answer $$ \n 9 \n $$", "9", AnswerColon),
    ok("The answer is $\\frac{1}{3}.$", r"\frac{1}{3}", FinalAnswerPhrase),
    ok("Final Answer: The largest $n$ is 34.", "34", FinalAnswerPhrase),
    ok("The answer is therefore 3.14.", "3.14", FinalAnswerPhrase),
    ok("The answer is 4 0/0.", "4 0/0", FinalAnswerPhrase),
    ok("The answer is 5. Wait, let me double check: yes.", "5", FinalAnswerPhrase),
    ok("The answer is 3, but the correct answer is 4.", "4", FinalAnswerPhrase),
    ok("{\n  \"reasoning\": \"2+2\",\n  \"answer\": \"13\"\n}", "13", AnswerColon),
    ok("{\"reasoning\": \"x\", \"answer\": \"\\\\frac{1}{2}\"}", r"\frac{1}{2}", AnswerColon),
    ok("{\"answer\": 148.49}", "148.49", AnswerColon),
    ok("She has 9*3 = <<9*3=27>>27 selfies\nA: 45", "45", AnswerColon),
    ok("A: 7", "7", AnswerColon),
    ok("the answer = 12", "12", AnswerColon),
    ok("The correct answer is $x = 2$.", "x = 2", FinalAnswerPhrase),
    ok("Thus the final answer is: the value $5$ found above.", "5", FinalAnswerPhrase),
    ok("答案 the answer is 六 7.", "六 7", FinalAnswerPhrase),
    // --- Not phrases.
    none("To answer this question we need more steps and then some more reasoning is needed here."),
    none("The answers are listed below and we discuss them in turn at great length here."),
    // --- GSM8K.
    ok("Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n#### 72", "72", Gsm8k),
    ok("so\n#### $1,234", "1,234", Gsm8k),
    ok("#### -5", "-5", Gsm8k),
    ok("#### Step 1: compute\nwe get stuff and more stuff to say\n#### 18", "18", Gsm8k),
    ok("####\nThe answer is $5$", "5", FinalAnswerPhrase),
    // --- Bold.
    // A unit after a bold answer is read into it, as after a box.
    ok("We add them up.\nThe total is **42** dollars.", "42 \\text{ dollars}", Bold),
    ok("We add them up.\nThe answer is **42** apples.", "42", FinalAnswerPhrase),
    // A number in words before its aside: the aside restates it or offers another value.
    Case {
        input: "We add them up.\nThe answer is: twelve (12).",
        opts: Opts::Default,
        want: Some(("twelve, 12", &["twelve", "12"], FinalAnswerPhrase)),
    },
    Case { input: "We add them up.\nA: twelve (12)", opts: Opts::Default, want: Some(("twelve, 12", &["twelve", "12"], AnswerColon)) },
    ok("Answer in bold **$7$**\n\nThat is all of it, we are done with it now.", "7", Bold),
    num("**Step 1:** add the two numbers carefully\nwe get 5 overall in the end here", "5", LastNumber),
    none_with("**Final Answer**\nwe could not finish the derivation of the value in time", Opts::Default),
    // --- Choice letters.
    ok("Comparing all options carefully...\nSo the correct option is (C).", "C", Choice),
    none("Which is closest? \\[\\textbf{(A) }3.2 \\qquad \\textbf{(B) } 3.5 \\qquad \\textbf{(C) } 3.8\\]"),
    ok("5. **Result**: the probability is \\( \\frac{1}{115} \\)", r"\frac{1}{115}", Conclusion),
    ok("We eliminate the others.\nI choose option D", "D", Choice),
    ok("Options are compared in detail; the best is \\textbf{(E)}", "E", Choice),
    ok("(A) fails because the value is negative\nthe probability is P(A) = $\\frac{1}{2}$", r"P(A) = $\frac{1}{2}$", Conclusion),
    // --- Math delimiters.
    ok("We compute $x$ and find that it equals $\\frac{7}{4}$", r"\frac{7}{4}", Conclusion),
    ok("the value is \\(3\\sqrt{2}\\)", r"3\sqrt{2}", Conclusion),
    // A display formula that ends the response after a concluding colon is its answer (issue 30).
    ok("The result:\n\\[ 10 \\]\n", "10", Conclusion),
    // --- A concluding last sentence without marker words (`concluding`), HTML bold.
    ok("We add the parts.\n\nThis gives $7$ as the final count.", "7", Conclusion),
    ok("We add the parts.\n\nThe total comes to forty-nine.", "forty-nine", Conclusion),
    ok("We add the parts.\n\nCollecting the results, the quantity asked for is\n\\[\n75\n\\]", "75", Conclusion),
    ok("Costs are $3 each.\n\nAltogether, that makes $\\frac{2}{3}$.", r"\frac{2}{3}", Conclusion),
    none("We add the parts.\n\nWe need 5 more steps to finish."),
    none("We add the parts.\n\nSuppose the total is $7$."),
    none("We add the parts.\n\nThe total comes to seven or eight."),
    // A last clause that picks one value from the list its sentence gives; `that` before `is our
    // answer` refers back to it. A list with no pick stays open.
    ok("We add.\n\nThis leaves $42$, $44$ or $45$; taking the greatest, we get $45$.", "45", Conclusion),
    ok("We add.\n\nAmong $0.15$, $7$ and $13$, the smallest that works is $0.15$, so that is our answer.", "0.15", Conclusion),
    none("We add.\n\nThis leaves $42$, $44$ or $45$; taking the greatest, we get $46$."),
    none("We add.\n\nAmong $1$, $7$ and $13$, none works, so that is our answer."),
    // Blockquotes and `<details>` blocks are structure around a label and its value.
    ok("We add.\n\n> **Answer**\n>\n> $97$", "97", Layout),
    ok("We add.\n\n<details open>\n<summary><b>Answer</b></summary>\n\n$31$\n\n</details>", "31", Layout),
    ok("We add the parts.\n\n<strong>12 \\frac{3}{5}</strong>", r"12 \frac{3}{5}", Bold),
    none("We add the parts.\n\n<b>11</b> or <b>12</b>"),
    ok("$$ (3, \\infty) $$", r"(3, \infty)", Whole),
    lenient("It costs \\$5 and we get $x+1$ here", "x+1", MathDelimiters),
    ok("Thus $x <= 2$ is our answer.", "x <= 2", Conclusion),
    ok("$42.$", "42", Whole),
    ok("$\\text{E}$", "E", Whole),
    ok("$-2,1$", "-2,1", Whole),
    ok("$19, 46, and 82$", "19, 46, and 82", Whole),
    ok("finally $y$ then $ $", "y", Conclusion),
    // --- Whole short text (bare LaTeX, gold strings).
    ok("\\frac{1}{2}", r"\frac{1}{2}", Whole),
    ok("(3, \\infty)", r"(3, \infty)", Whole),
    ok("\\text{Monday}", r"\text{Monday}", Whole),
    ok("  42  ", "42", Whole),
    ok("43,500", "43,500", Whole),
    ok("10{,}000", "10{,}000", Whole),
    ok("\\text{(C)}", "C", Choice),
    ok("B", "B", Choice),
    ok("14 \\text{ right triangles}", r"14 \text{ right triangles}", Whole),
    ok("\\begin{pmatrix} -5 & 0 \\\\ 0 & -5 \\end{pmatrix}", r"\begin{pmatrix} -5 & 0 \\ 0 & -5 \end{pmatrix}", Whole),
    ok("no solution", "no solution", Whole),
    ok("x_{0} \\cos (\\omega t)+$ $\\dot{x}_{0}", r"x_{0} \cos (\omega t)+ \dot{x}_{0}", Whole),
    ok("\\$32,\\!348", r"\$32,\!348", Whole),
    ok("0.4", "0.4", Whole),
    ok("-5", "-5", Whole),
    ok("4 4/9", "4 4/9", Whole),
    ok("1, 2, 3, ...", "1, 2, 3, ...", Whole),
    none("I think it is probably something like five, but we are not sure."),
    none_with("\\frac{1}{2}", Opts::NoWhole),
    none(""),
    none("   \n\t  "),
    // --- Last-number fallback (opt-in).
    num("He pays 3 * 4 = 12 dollars, so 18 in total.", "18 in total", Conclusion),
    num("The total comes to $1,234.", "1,234", LastNumber),
    num("The temperature falls to -3.5 degrees in the night time here.", "-3.5", LastNumber),
    num("not it's not 10 it's 1,000.99m²", "1,000.99", LastNumber),
    ok("so there are 5 cars that drove through the traffic jam early", "5 cars", Conclusion),
    ok("The error was 50 and is now 100, so the error grows by 100%.", "100", Conclusion),
    ok("A. Because the function is odd, only (A) works here", "A", Choice),
    ok("B is the only valid option.", "B", Choice),
    ok("Some text with a stray $ sign.\n\nThe final answer is $10,455$.", "10,455", FinalAnswerPhrase),
    // Dollars as currency pair up into "blocks" of prose: those are not math answers.
    num("He pays $5 for the apples and $3 for the pears, so he spends $8 in total.", "8", LastNumber),
    num("The answer is 7 apples.", "7 apples", FinalAnswerPhrase),
    none_with("The total comes to $1,234.", Opts::Default),
    none_with("no digits anywhere in this long sentence of prose text here", Opts::Number),
    // --- Real-looking multi-paragraph responses.
    ok("To find the number of vertices, we use Euler's formula.\n\nWe have \\( V - E + F = 2 \\).\n\n\\[ V_3 = 8 \\]\n\nTherefore, the number of vertices where exactly 3 edges meet is:\n\n\\[ \\boxed{8} \\]", "8", Boxed),
    ok("## Step 1: Understand\nThe distance is 6.\n\n## Step 2: Compute\nOne third is 2.\n\nThe final answer is: $\\boxed{2}$", "2", Boxed),
    ok("```python\nprint(5600.0)\n```\n```output\n5600.0\n```\nThe redwood weighs $\\boxed{5600.0}$ pounds.", "5600.0 \\text{ pounds}", Boxed),
    ok("verification_total == total_minutes<|endofblock|><|execution|>True<|endofblock|><|text|>The verification confirms \\( \\boxed{215} \\) minutes.<|endofblock|><|text|>215<|endofblock|>", "215 \\text{ minutes}", Boxed),
    // A harness's echo after the answer restates it (`12.0` for `\$12.00`: the same value);
    // another value there is a second candidate, never the answer in its place.
    ok("The pens cost \\( \\boxed{\\$12.00} \\).<|endofblock|><|text|>12.0<|endofblock|>", r"\$12.00", Boxed),
    ok("So \\boxed{1 - i}<|endofblock|><|text|>The answer is 1 - i.<|endofblock|>", "1 - i", Boxed),
    list("So \\boxed{16}<|end_of_block|><|answer|>\\boxed{15}<|end_of_block|>", "16, 15", &["16", "15"]),
    list("So $\\boxed{7}$.<|block_end|>\n<|result|>\\boxed{8}", "7, 8", &["7", "8"]),
    list("It is \\boxed{7}.<|eob|><|text|>Final answer: \\boxed{8}<|eob|>", "7, 8", &["7", "8"]),
    ok("The set is:\n\\[ M \\cap N = \\{-2\\}. \\]\n\nThe final answer is:\n\\[ \\boxed{\\{-2\\}}. \\]", r"\{-2\}", Boxed),
    ok("Thus the largest value of $x$ is $1$.\n\nTherefore the answer is $1$.", "1", FinalAnswerPhrase),
    ok("Let me compute.\n\nThe sum is $6 + 7 = 13$.", "6 + 7 = 13", Conclusion),
    ok("By symmetry the area is $\\pi r^2$ and the radius is $3$, so the area is $9\\pi$", r"9\pi", Conclusion),
    // --- Multi-byte UTF-8 everywhere.
    ok("Die Lösung ist \\boxed{5} 🎉", "5", Boxed),
    ok("\\boxed{ü²}", "ü²", Boxed),
    ok("🎉🎉 the answer is 🎉", "🎉", FinalAnswerPhrase),
    ok("الجواب هو \\boxed{٣}", "٣", Boxed),
    lenient("שלום $x$ עולם", "x", MathDelimiters),
    ok("αβγ", "αβγ", Whole),
    num("ζ we counted 12 of them ζ", "12", LastNumber),
    ok("**€**", "€", Bold),
    // --- Chat-template tokens end the model's turn: an invented next turn is not the answer.
    ok("So $b = \\boxed{\\frac{5}{3}}$. <|im_start|>user\nAnother one.<|im_start|>assistant\n$x = \\boxed{8}$", r"\frac{5}{3}", Boxed),
    ok("The answer is $4$.<|im_end|>\n<|im_start|>user\nThe answer is $9$.", "4", FinalAnswerPhrase),
    ok("The result is \\boxed{3}<|eot_id|><|start_header_id|>user<|end_header_id|>\\boxed{7}", "3", Boxed),
    ok("<|im_start|>assistant\nThe answer is \\boxed{6}", "6", Boxed),
    ok("a <| b and \\boxed{2} <|not a template token|> \\boxed{5}", "5", Boxed),
    // --- A last math block that asks is a question (an echo of the problem), not an answer, and
    // the later fallbacks do not pick a number of the statement instead.
    none("Evaluate $\\lceil (3.6)^2 \\rceil - ( \\lceil 3.6 \\rceil ) ^2$. Propel\nEvaluate $\\lceil (3.6)^2 \\rceil - ( \\lceil 3.6 \\rceil ) ^2$."),
    none_with("Let $ABCDE$ be a pentagon with $AB=14$ and $\\angle B=60^\\circ$. Find $m+n+p$.", Opts::Number),
    none_with("What is the value of $x$ in the equation $2x + 3 = 7$? \\boxed{}.", Opts::Number),
    lenient("Simplify $(-k + 4) + (-2 + 3k)$.\n\nCombining like terms, we get $2k + 2$", "2k + 2", MathDelimiters),
    lenient("Compute $3 \\cdot 4 = 12$.", r"3 \cdot 4 = 12", MathDelimiters),
    lenient("Finding the roots, we get $x = 2$", "x = 2", MathDelimiters),
    ok("Evaluate $7 - 2$. The difference is $5$", "5", Conclusion),
    // --- A marked answer in the reasoning beats an unmarked one in a cut-off summary.
    ok("<think>so m+n = 116.\n**Final Answer**\n\\boxed{116}\n</think>\n\nThe probability is \\( \\frac{1}{115} \\), so \\( m = 1", "116", Boxed),
    ok("<think>maybe \\boxed{3}</think>\nThe final answer is $4$.", "4", FinalAnswerPhrase),
    ok("<think>I think it is $7$</think>\nThus $x = 8$", "x = 8", Conclusion),
    ok("<think>so the answer is 3? Wait, no.</think>\nThus $x = 8$", "x = 8", Conclusion),
    lenient("<think>so the answer is 3.</think>\n", "3", FinalAnswerPhrase),
    // --- An approximation right after the answer joins it; another value after it is a hedge.
    ok(r"So $\boxed{\frac56}$ (approximately $0.83$).", r"\frac56 \approx 0.83", Boxed),
    ok(r"\[\boxed{\frac{\sqrt{21}}{5}}\] ($\approx 0.92$ to 2 decimal places)", r"\frac{\sqrt{21}}{5} \approx 0.92", Boxed),
    ok(r"So $\boxed{\frac13}$, which is about $0.33$.", r"\frac13 \approx 0.33", Boxed),
    list(r"So $\boxed{\frac13}$ (about 0.33), or perhaps $\frac12$.", r"\frac13 \approx 0.33, \frac12", &[r"\frac13 \approx 0.33", r"\frac12"]),
    ok(r"So the value is approximately $\boxed{0.33}$.", "0.33", Boxed),
    // --- A restatement right after the answer: the same value restates it, another is a candidate.
    ok(r"So $\boxed{75}$, i.e., $75$.", "75", Boxed),
    list(r"So $\boxed{75}$, i.e., $76$.", "75, 76", &["75", "76"]),
    list(r"So $\boxed{75}$, namely $76$.", "75, 76", &["75", "76"]),
    ok("A: 75 つまり $75$ です。", "75", AnswerColon),
    Case { input: "A: 75 つまり $76$ です。", opts: Opts::Default, want: Some(("75, 76", &["75", "76"], AnswerColon)) },
    // A leading text of exactness words changes nothing (`\text{exactly } \text{C}` is `C`).
    ok(r"The correct option is \(\boxed{\text{exactly } \text{C}}\).", "C", Boxed),
    ok(r"So it is $\boxed{\text{precisely } 9}$.", "9", Boxed),
];

fn run(case: &Case) -> Option<Answer> {
    extract(case.input, &case.opts.get())
}

/// The lenient cases of the table have no answer in strict mode: no marker, no answer.
#[test]
fn strict_has_no_fallback() {
    for case in CASES.iter().filter(|c| matches!(c.opts, Opts::Lenient)) {
        assert_eq!(extract(case.input, &ExtractOptions::default()), None, "{:?}", case.input);
    }
}

#[test]
fn table() {
    assert!(CASES.len() >= 120, "only {} cases", CASES.len());
    let mut failures = Vec::new();
    for case in CASES {
        let got = run(case).map(|a| (a.text.clone(), a.parts(), a.source));
        let want = case
            .want
            .map(|(text, parts, source)| (text.to_string(), parts.iter().map(|p| p.to_string()).collect(), source));
        if got != want {
            failures.push(format!("input {:?}\n   got  {:?}\n   want {:?}", case.input, got, want));
        }
    }
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), CASES.len(), failures.join("\n"));
}

/// Inputs built to break scanners: none may panic, and the results must be sensible.
#[test]
fn adversarial() {
    let opts = ExtractOptions { last_number_fallback: true, whole_fallback: true, ..ExtractOptions::default() };
    let mb = 1 << 20;
    // A megabyte of unclosed box openings: no box.
    let s = r"\boxed{".repeat(mb / 7);
    assert_eq!(extract(&s, &ExtractOptions::default()), None);
    // The same, then a complete box at the end: still inside unclosed boxes, so no box.
    let s2 = format!("{s}\\boxed{{5}}");
    assert_eq!(extract(&s2, &ExtractOptions::default()), None);
    // A complete box after a megabyte of closed junk groups.
    let s2b = "{x}".repeat(mb / 3) + "\\boxed{5}";
    assert_eq!(extract(&s2b, &opts).map(|a| a.text), Some("5".into()));
    // A megabyte of complete boxes joined by commas: one list with one distinct part.
    let s3 = r"\boxed{1}, ".repeat(mb / 11);
    let a = extract(&s3, &opts);
    assert_eq!(a.map(|a| (a.text, a.source)), Some(("1".into(), Source::Boxed)));
    // A hundred thousand distinct boxes in one list: all kept, in order (no quadratic dedupe).
    let s3b: String = (0..100_000).map(|i| format!("\\boxed{{{i}}}, ")).collect();
    let a = extract(&s3b, &opts).map(|a| a.parts());
    assert_eq!(a.as_ref().map(Vec::len), Some(100_000));
    assert_eq!(a.as_ref().and_then(|p| p.last()).map(String::as_str), Some("99999"));
    // Unbalanced braces everywhere.
    let s4 = "}{".repeat(mb / 2) + r"\boxed{7}";
    assert_eq!(extract(&s4, &opts).map(|a| a.text), Some("7".into()));
    // Deep nesting.
    let s5 = format!("\\boxed{{{}x{}}}", "{".repeat(100_000), "}".repeat(100_000));
    assert!(extract(&s5, &opts).is_some());
    // Dollars and delimiters.
    for junk in ["$".repeat(mb), "\\(".repeat(mb / 2), "\\[".repeat(mb / 2), "$$ $".repeat(mb / 4), "\\".repeat(mb)] {
        let _ = extract(&junk, &opts);
    }
    // Phrases and markers repeated.
    for junk in [
        "answer ".repeat(mb / 7),
        "Answer: ".repeat(mb / 8),
        "####".repeat(mb / 4),
        "**".repeat(mb / 2),
        "<answer>".repeat(mb / 8),
        "</think>".repeat(mb / 8),
        "(A)".repeat(mb / 3),
        "1,".repeat(mb / 2),
        "-.".repeat(mb / 2),
    ] {
        let _ = extract(&junk, &opts);
    }
    // NUL bytes, control characters, emoji, RTL marks, combining characters.
    let weird = [
        "\0\0\\boxed{\0}\0",
        "\u{202E}\\boxed{5}\u{202C}",
        "\u{200F}الجواب: ٥",
        "e\u{301}\u{301}\\boxed{é}",
        "🎉\\boxed{🎉}🎉",
        "\\boxed{\u{10FFFF}",
        "$\u{1F600}$",
        "\\",
        "$",
        "**",
        "\\boxed",
        "\\boxed ",
        "\\fbox",
        "<answer>",
        "</answer><answer>",
        "####",
        "A:",
        "answer:",
        "the answer is",
        "{\"answer\": \"",
        "{\"answer\": \"\\",
        ".",
        "-",
        "−",
        "\\boxed{5}\\",
    ];
    for w in weird {
        let _ = extract(w, &opts);
        let _ = extract(w, &ExtractOptions::default());
    }
    assert_eq!(extract("\0\0\\boxed{\0}\0", &opts).map(|a| a.text), Some("\0".into()));
    assert_eq!(extract("🎉\\boxed{🎉}🎉", &opts).map(|a| a.text), Some("🎉".into()));
    // Every prefix of a multi-byte response: no slicing panic at any cut.
    let s6 = "Lösung: die Antwort 🎉 ist \\boxed{ü²} — ok\n**€5** $α$ #### ½ A: ß";
    for (i, _) in s6.char_indices() {
        let _ = extract(&s6[..i], &opts);
        let _ = extract(&s6[i..], &opts);
    }
}

/// Random concatenations of the tokens the scanners care about (and multi-byte text): no panic.
/// Deterministic (a fixed xorshift seed), so a failure is reproducible.
#[test]
fn token_soup() {
    const TOKENS: &[&str] = &[
        r"\boxed{",
        r"\boxed ",
        r"\fbox{",
        "{",
        "}",
        r"\{",
        r"\}",
        r"\\",
        "\\",
        "$",
        "$$",
        r"\(",
        r"\)",
        r"\[",
        r"\]",
        r"\$",
        "<answer>",
        "</answer>",
        "<think>",
        "</think>",
        "The answer is ",
        "Answer:",
        "final answer",
        "answer\": ",
        "\"",
        "####",
        "**",
        "(A)",
        "(E)",
        "option ",
        "\n",
        "\n\n",
        ". ",
        ", ",
        " and ",
        "A:",
        "1,234",
        "-3.5",
        "−",
        "é",
        "🎉",
        "א",
        "\0",
        " ",
        "x",
        "42",
        r"\text{",
        r"\frac",
        ".",
    ];
    let opts = ExtractOptions { last_number_fallback: true, whole_fallback: true, ..ExtractOptions::default() };
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..3000 {
        let len = (next() % 40) as usize;
        let s: String = (0..len).map(|_| TOKENS[(next() % TOKENS.len() as u64) as usize]).collect();
        for o in [&opts, &ExtractOptions::default()] {
            if let Some(a) = extract(&s, o) {
                assert!(!a.text.is_empty(), "empty answer for {s:?}");
                assert!(!a.candidates.is_empty(), "one-part list for {s:?}");
            }
        }
    }
}

/// Runs `extract` over every real response of the dev corpus (skipped when the file is missing):
/// no panic, and prints how many extractions equal the gold text exactly.
#[test]
fn real_generations_corpus() {
    let Some(path) = rl_tests::shared_file("corpora/real_generations_dev.jsonl") else { return };
    let data = std::fs::read_to_string(&path).expect("read the corpus");
    let (mut n, mut found, mut exact) = (0usize, 0usize, 0usize);
    let (mut labelled_right, mut labelled_right_exact) = (0usize, 0usize);
    for line in data.lines() {
        let Ok(row) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        let (Some(resp), Some(gold)) = (row["response"].as_str(), row["gold"].as_str()) else { continue };
        n += 1;
        let gold_text = extract(gold, &ExtractOptions::default()).map(|a| a.text);
        let opts = ExtractOptions { last_number_fallback: true, ..ExtractOptions::default() };
        let right = row["label"].as_bool() == Some(true);
        labelled_right += usize::from(right);
        if let Some(a) = extract(resp, &opts) {
            found += 1;
            if Some(&a.text) == gold_text.as_ref() {
                exact += 1;
                labelled_right_exact += usize::from(right);
            }
        }
    }
    eprintln!(
        "real_generations_dev: {n} responses, {found} with an answer, {exact} equal to the gold text; \
         of {labelled_right} labelled correct, {labelled_right_exact} equal to the gold text"
    );
    assert!(n > 0);
}

/// A filler of finished reasoning sentences, long enough for a derivation (`looks_truncated`).
fn derivation(steps: usize) -> String {
    (1..=steps).map(|k| format!("## Step {k}: we simplify the expression and keep going.\n")).collect()
}

#[test]
fn truncated_responses_have_no_unmarked_answer() {
    let strict = ExtractOptions::default();
    let lenient = ExtractOptions { truncated_fallback: true, last_number_fallback: true, ..ExtractOptions::default() };
    let number = ExtractOptions { last_number_fallback: true, ..ExtractOptions::default() };
    let cut = [
        format!("{}## Step 17: so $m = 3$.\n## Step 18: Then we divide both sides by", derivation(30)),
        format!("{}We get $x = 2$ and then $\\frac{{4 + 5 \\cdot 0}}{{5", derivation(30)),
        format!("{}## Step 40: substituting, $a = 7$ gives the equation $a^2 +", derivation(30)),
        format!("{}The total is 12 + 30 = 42 and then we add", derivation(30)),
        format!("{}## Step 52: we need at least 2013 lines", derivation(30)),
        format!("{}(C) is wrong because", derivation(30)),
        format!("{}## Step 40: substituting, $a = 7$ gives the equation $", derivation(30)),
    ];
    for r in &cut {
        assert!(looks_truncated(r), "{r:?}");
        assert_eq!(extract(r, &strict), None, "{r:?}");
        assert_eq!(extract(r, &number), None, "{r:?}");
        assert!(extract(r, &lenient).is_some(), "lenient mode keeps the old answer: {r:?}");
    }
    // Finished responses keep their unmarked answers, and a marked answer always counts.
    let finished = [
        (format!("{}So the value is $m = 3$.", derivation(30)), "m = 3"),
        (format!("{}Therefore the answer is $42$", derivation(30)), "42"),
        (format!("{}Thus \\[ x = \\frac{{1}}{{2}} \\]", derivation(30)), "x = \\frac{1}{2}"),
        (format!("{}The area is $12$ m²", derivation(30)), "12"),
        (format!("{}So the answer is 18", derivation(30)), "18"),
        (format!("{}so \\boxed{{7}} and then we check that", derivation(30)), "7"),
        ("I choose option D".to_string(), "D"),
    ];
    for (r, want) in &finished {
        assert!(!looks_truncated(r) || r.contains("boxed"), "{r:?}");
        let opts = if want.chars().all(|c| c.is_ascii_digit()) { &number } else { &strict };
        assert_eq!(extract(r, opts).map(|a| a.text).as_deref(), Some(*want), "{r:?}");
    }
    // Short texts are terse answers, never called cut off.
    assert!(!looks_truncated("we get 5 overall in the end here"));
    assert!(!looks_truncated("x = "));
}

/// The parts of the answer extracted from `s` with the default options.
fn parts_of(s: &str) -> Option<Vec<String>> {
    extract(s, &ExtractOptions::default()).map(|a| a.candidates.iter().map(|c| c.text.clone()).collect())
}

#[test]
fn markdown_emphasis_is_markup_around_a_value() {
    let one = |s: &str, v: &str| assert_eq!(parts_of(s), Some(vec![v.to_string()]), "{s}");
    one("We add.\n\n***140***", "140");
    one("We add.\n\n___140___", "140");
    one("We add.\n\nThe answer is *256*.", "256");
    one("We add.\n\nThe answer is _256_.", "256");
    one("We add.\n\nFinal answer: *$\\frac{5}{8}$*", "\\frac{5}{8}");
    one("We add.\n\n*Answer:* 27", "27");
    one("We add.\n\nSo we get _27_.", "27");
    one("We add.\n\n*27*", "27");
    one("We add.\n\nThe result is ***-i***.", "-i");
    // `*` between operands and `_` of a subscript are math, never emphasis.
    assert_eq!(clean("2*3*4"), "2*3*4");
    assert_eq!(clean("x^*"), "x^*");
    assert_eq!(clean("a_1 + b_1"), "a_1 + b_1");
    assert_eq!(clean("*5*"), "5");
    assert_eq!(clean("_x_"), "x");
    // A choice letter under LaTeX emphasis is the letter.
    assert_eq!(clean("\\underline{(B)}"), "B");
    assert_eq!(clean("\\emph{C}"), "C");
    assert_eq!(parts_of("We add.\n\n$2*3*4$"), None);
}

#[test]
fn a_hedge_after_an_italic_answer_is_a_candidate() {
    let two = |s: &str| assert_eq!(parts_of(s).map(|p| p.len()), Some(2), "{s}");
    two("We add.\n\n*27* (maybe 28)");
    two("We add.\n\n_27_, or possibly 28");
    two("We add.\n\nThe result is *27*, perhaps 28.");
    two("We add.\n\nAnswer: *1* (could also be *2*)");
    two("We add.\n\nFinal answer: **$\\frac{5}{8}$** (possibly **7**)");
    two("We add.\n\n$\\underline{27}$ (maybe $28$)");
    // The same value restated is no second candidate; one italic span beside another is offered.
    assert_eq!(parts_of("We add.\n\n*27* (twenty-seven)").map(|p| p[0].clone()), Some("27".into()));
    assert_eq!(parts_of("We add.\n\n*12* or *13*"), None);
    // Emphasis around words marks nothing.
    assert_eq!(parts_of("We add.\n\n*Note* that it works"), None);
}

#[test]
fn latex_emphasis_around_a_value_on_the_last_line_marks_it() {
    let one = |s: &str, v: &str| assert_eq!(parts_of(s), Some(vec![v.to_string()]), "{s}");
    one("We add.\n\n$\\mathbf{1210}$", "1210");
    one("We add.\n\n$\\underline{-3969}$", "-3969");
    one("We add.\n\n$\\boldsymbol{\\frac{3}{2}}$", "\\frac{3}{2}");
    one("We add.\n\n$\\underline{\\underline{0}}$", "\\underline{0}");
    // A symbol's name in bold is no answer marker.
    assert_eq!(parts_of("We add the forces.\n\nThe force is $\\mathbf{F}$ in total"), None);
}

#[test]
fn a_recap_after_the_answer_states_a_value_only_for_the_answers_quantity() {
    let derivation = "The dogs eat 3 x 5 = 15 kg and 2 x 3 = 6 kg, so 15 + 6 = 21 kg a day.\n\
                      Therefore, in a week they eat 21 x 7 = 147 kg.\n\nA: 147";
    let parts = |tail: &str| parts_of(&format!("{derivation}\n\n{tail}")).unwrap_or_default();
    // Values written before the answer, recapped in a table, a list or a repeated line.
    for tail in [
        "**Summary:**\n\n| Step | Result |\n|---|---|\n| Step 1 | $3$ |\n| Step 2 | $5$ |",
        "Recap:\n\n| Stage | Result |\n|---|---|\n| after the first step | $15$ |\n| Total | $147$ |",
        "Let me verify this.\n\nTherefore, in a week they eat 21 x 7 = 147 kg.\n\nSo the check gives $147$.",
        "To recap the steps:\n1. $15$\n2. $6$\n3. Total: $147$",
    ] {
        assert_eq!(parts(tail), vec!["147".to_string()], "{tail}");
    }
    // A row, a line or a check's result naming the answer's quantity states another value.
    for tail in [
        "Recap:\n\n| Step | Result |\n|---|---|\n| Step 1 | $15$ |\n| Total | $21$ |",
        "To recap the steps:\n1. $15$\n2. $6$\n3. Total: $148$",
        "Let me verify this.\n\nTherefore, in a week they eat 21 x 7 = 147 kg.\n\nResult of the verification: $148$.",
        "This re-derivation yields $148$.",
        "| Case | Answer |\n|---|---|\n| first reading | $147$ |\n| second reading | $21$ |",
    ] {
        assert_eq!(parts(tail).len(), 2, "{tail}");
    }
}

#[test]
fn a_summary_or_details_block_after_the_answer_states_it_again() {
    let parts = |s: &str| parts_of(s).unwrap_or_default();
    // Another value there is a candidate, even one written before (`x+3 = 5`: 3).
    assert_eq!(parts("x+3 = 5.\n\nThe final answer is: $\\boxed{2}$\n\n***\n\n## TL;DR\n\n$3$"), ["2", "3"]);
    assert_eq!(
        parts("So 160.\nA: 160\n\n<details>\n<summary>Answer (after double-checking)</summary>\n\n$161$\n\n</details>"),
        ["160", "161"]
    );
    assert_eq!(parts("We add.\n\n$\\boxed{4}$\n\n---\n\n### In short\n\n$5$"), ["4", "5"]);
    // The same value restates the answer; a footer states nothing.
    assert_eq!(parts("x+3 = 5.\n\n$\\boxed{2}$\n\n---\n\n## TL;DR\n\n$2$"), ["2"]);
    assert_eq!(parts("A: 160\n\n<details>\n<summary>Answer</summary>\n\n$160$\n\n</details>"), ["160"]);
    assert_eq!(parts("$\\boxed{2}$\n\n---\n\n> *Tip:* re-read the question."), ["2"]);
}
