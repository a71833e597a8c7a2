//! The rules of the final-answer contract, named: which rule produced each candidate of a final
//! statement, and which rule decided that a statement commits to nothing or to too much. The
//! names are stable snake_case (as a linter names its rules): `Score.rule`, the JSON output and
//! `rlverify check --explain` report them.

use super::Source;

/// One rule of the final-answer contract (`verify/README.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    /// A marker committed the answer (the strategy that found it).
    Marker(Source),
    /// A value that continues a list right after the answer (`$2$ and $3$`).
    ListContinuation,
    /// A value a parenthetical right after the answer opens with (`$81$ ($64$ if ...)`).
    Parenthetical,
    /// A value a hedge offers after the answer (`, or perhaps $6$`).
    Hedge,
    /// A part of an answer whose own text hedges (`5 \text{ or } 6`).
    HedgeInside,
    /// A value stated after the answer for the answer's quantity (`Checking again, the count
    /// must be $15$.`, `The code gives $15$.`): a different value for the same quantity.
    LaterValue,
    /// Another field of the structured record that holds the answer (`"backup": 4`).
    SecondField,
    /// A value a self-assessment after the answer offers as another candidate (`the other
    /// candidate is $10$`, `Backup answer: $10$`, `I'm torn between $9$ and $10$`, `I'd put 70% on
    /// $9$ and 30% on $10$`).
    OtherCandidate,
    /// The words around a value change it (`\text{less than } 7`).
    Qualified,
    /// The final statement offers several different candidates.
    SeveralCandidates,
    /// Every candidate equals the gold: the answer restated.
    Restated,
    /// The sentence of the answer negates it (`The answer is not $\boxed{3}$.`).
    Negated,
    /// The sentence of the answer asks about it (`Is the answer $\boxed{3}$?`).
    Questioned,
    /// The sentence after the answer takes it back (`$\boxed{3}$? No.`, `Scratch that.`).
    Retracted,
    /// The answer is someone else's (`my friend claims $\boxed{36}$`).
    Attributed,
    /// The box shows a format or an example, or stands in a comment, code or a quotation.
    Mentioned,
    /// The sentence makes the value a bound or an approximation (`at least $\boxed{11}$`,
    /// `$\boxed{11}$ or more`, `roughly $\boxed{11}$`), as the same words inside the box would.
    Bounded,
    /// The sentence states a property of the answer, not the answer (`the sum of the digits of the
    /// answer is 9`).
    Property,
    /// The response says it did not solve the problem (`I could not finish; this is a guess.`).
    Disowned,
    /// A sentence that opens with the article `a` answers no choice (`The answer is a tricky one`).
    NotAChoice,
}

impl Rule {
    /// Stable snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::Marker(source) => source.as_str(),
            Rule::ListContinuation => "list_continuation",
            Rule::Parenthetical => "parenthetical",
            Rule::Hedge => "hedge",
            Rule::HedgeInside => "hedge_inside",
            Rule::LaterValue => "later_value",
            Rule::SecondField => "second_field",
            Rule::OtherCandidate => "other_candidate",
            Rule::Qualified => "qualified",
            Rule::SeveralCandidates => "several_candidates",
            Rule::Restated => "restated",
            Rule::Negated => "negated",
            Rule::Questioned => "questioned",
            Rule::Retracted => "retracted",
            Rule::Attributed => "attributed",
            Rule::Mentioned => "mentioned",
            Rule::Bounded => "bounded",
            Rule::Property => "property",
            Rule::Disowned => "disowned",
            Rule::NotAChoice => "not_a_choice",
        }
    }
}
