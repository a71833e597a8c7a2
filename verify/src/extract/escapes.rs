//! LaTeX escaped twice: a JSON or string layer that doubled every backslash (`\\frac{1}{2}`,
//! `-2 \\le x \\le 7`, `\\boxed{5}`).
//!
//! A text is read as doubly escaped only when it holds LaTeX commands written with two
//! backslashes and none written with one: a mixed text (`\frac{1}{2} \\ \text{next}` has a line
//! break `\\`) is left alone. Then every `\\` becomes `\` (so a doubled line break `\\\\` is
//! one line break `\\` again). Only well-known command names count, so a literal `\n` or a path
//! is no evidence either way. One linear pass to decide, one to rewrite.

use std::borrow::Cow;

/// Command names whose presence with one or two backslashes tells how the text is escaped.
const COMMANDS: &[&str] = &[
    "frac",
    "dfrac",
    "tfrac",
    "sqrt",
    "boxed",
    "fbox",
    "le",
    "leq",
    "ge",
    "geq",
    "ne",
    "neq",
    "pi",
    "cdot",
    "times",
    "div",
    "pm",
    "mp",
    "infty",
    "left",
    "right",
    "text",
    "textbf",
    "mathrm",
    "mathbf",
    "mathbb",
    "begin",
    "end",
    "sin",
    "cos",
    "tan",
    "log",
    "ln",
    "exp",
    "alpha",
    "beta",
    "gamma",
    "theta",
    "lambda",
    "mu",
    "sigma",
    "omega",
    "in",
    "cup",
    "cap",
    "emptyset",
    "approx",
    "circ",
    "sum",
    "prod",
    "int",
    "lim",
    "binom",
    "dbinom",
    "overline",
    "angle",
    "lt",
    "gt",
    "quad",
    "qquad",
    "dots",
    "ldots",
    "cdots",
    "vec",
    "bar",
    "hat",
    "sqrt",
    "cdotp",
    "mid",
    "setminus",
    "varnothing",
    "displaystyle",
];

/// `text` with doubled backslashes halved when the text is doubly escaped (see the module doc).
pub(crate) fn single_escaped(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    if memchr::memmem::find(b, b"\\\\").is_none() {
        return Cow::Borrowed(text);
    }
    let mut double = 0usize;
    let mut i = 0;
    while let Some(off) = memchr::memchr(b'\\', &b[i..]) {
        let p = i + off;
        let mut run = 0;
        while b.get(p + run) == Some(&b'\\') {
            run += 1;
        }
        let name_start = p + run;
        let name_len = b[name_start..].iter().take_while(|c| c.is_ascii_alphabetic()).count();
        if name_len > 0 && (run == 1 || run == 2) && COMMANDS.contains(&&text[name_start..name_start + name_len]) {
            if run == 1 {
                // A command written with one backslash: the text is not doubly escaped.
                return Cow::Borrowed(text);
            }
            double += 1;
        }
        i = name_start.max(p + 1);
    }
    if double == 0 {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(k) = rest.find("\\\\") {
        out.push_str(&rest[..k + 1]);
        rest = &rest[k + 2..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::single_escaped;

    #[test]
    fn doubly_escaped_latex_is_halved() {
        assert_eq!(single_escaped(r"\\frac{1}{2}"), r"\frac{1}{2}");
        assert_eq!(single_escaped(r"$-2 \\le x \\le 7$"), r"$-2 \le x \le 7$");
        assert_eq!(single_escaped(r"so \\boxed{\\sqrt{3}}."), r"so \boxed{\sqrt{3}}.");
        assert_eq!(
            single_escaped(r"\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}"),
            r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}"
        );
    }

    #[test]
    fn single_or_mixed_escapes_are_kept() {
        for s in
            [r"\frac{1}{2}", r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", r"\frac12 \\ \\text{x}", "no commands \\\\ here"]
        {
            assert_eq!(single_escaped(s), s);
        }
    }
}
