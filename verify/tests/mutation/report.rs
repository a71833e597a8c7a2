//! The Markdown tables of a measurement (the form BENCHMARKS.md records).

use super::measure::{family_totals, Tally};
use super::{families, Expect, Split};

/// `x/n`, or `–` when there were no variants of that kind.
fn ratio(x: usize, n: usize) -> String {
    if n == 0 {
        "–".to_string()
    } else {
        format!("{x}/{n}")
    }
}

/// One row per family, then the totals of each split and of all: must-be-wrong variants accepted
/// (false positives) and must-stay-right variants kept (recall).
pub fn family_table(tallies: &[Tally]) -> String {
    let mut out = String::from(
        "| family | split | operators | must-be-wrong accepted | must-stay-right kept |\n|---|---|---|---|---|\n",
    );
    let mut sums = [(0, 0, 0, 0); 3];
    for family in families::all() {
        let (wa, wn, rk, rn) = family_totals(tallies, family.name);
        let slot = if family.split == Split::Dev { 0 } else { 1 };
        for s in [slot, 2] {
            sums[s] = (sums[s].0 + wa, sums[s].1 + wn, sums[s].2 + rk, sums[s].3 + rn);
        }
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            family.name,
            family.split.as_str(),
            family.operators.len(),
            ratio(wa, wn),
            ratio(rk, rn)
        ));
    }
    for (name, (wa, wn, rk, rn)) in ["**all dev**", "**all held-out**", "**all**"].into_iter().zip(sums) {
        out.push_str(&format!("| {name} | | | {} | {} |\n", ratio(wa, wn), ratio(rk, rn)));
    }
    out
}

/// One row per operator: its expectation and how many variants the verifier got right.
pub fn operator_table(tallies: &[Tally]) -> String {
    let mut out =
        String::from("| family | operator | must be | accepted (wrong) / kept (right) |\n|---|---|---|---|\n");
    for t in tallies {
        let expect = match t.operator.expect {
            Expect::Wrong => "wrong",
            Expect::Right => "right",
        };
        out.push_str(&format!(
            "| {} | {} | {expect} | {} |\n",
            t.family.name,
            t.operator.name,
            ratio(t.counted(), t.variants)
        ));
    }
    out
}
