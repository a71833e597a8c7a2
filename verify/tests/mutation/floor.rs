//! The committed floor: for each family, the share of must-be-wrong variants the verifier may
//! accept at most and the share of must-stay-right variants it must keep at least, stored as the
//! counts of the run that set it (`tests/data/mutation_floor.json`). A family regresses when its
//! accepted share rises above the floor's or its kept share falls below it; shares, not counts,
//! so a verifier that scores more bases right (and so makes more variants) is compared fairly.

use super::families;
use super::measure::{family_totals, Tally};
use serde_json::{json, Map, Value};
use std::path::PathBuf;

/// The environment variable that rewrites the floor from the current run.
pub const UPDATE_VAR: &str = "RLVERIFY_UPDATE_MUTATION_FLOOR";

pub fn path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/mutation_floor.json")
}

/// One family's counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    pub wrong_accepted: usize,
    pub wrong_variants: usize,
    pub right_kept: usize,
    pub right_variants: usize,
}

impl Counts {
    pub fn of(tallies: &[Tally], family: &str) -> Counts {
        let (wrong_accepted, wrong_variants, right_kept, right_variants) = family_totals(tallies, family);
        Counts { wrong_accepted, wrong_variants, right_kept, right_variants }
    }

    fn to_json(self) -> Value {
        json!({
            "wrong_accepted": self.wrong_accepted,
            "wrong_variants": self.wrong_variants,
            "right_kept": self.right_kept,
            "right_variants": self.right_variants,
        })
    }

    fn from_json(v: &Value) -> Option<Counts> {
        let n = |k: &str| v.get(k)?.as_u64().map(|n| n as usize);
        Some(Counts {
            wrong_accepted: n("wrong_accepted")?,
            wrong_variants: n("wrong_variants")?,
            right_kept: n("right_kept")?,
            right_variants: n("right_variants")?,
        })
    }

    /// What got worse against `floor`, in words (empty when nothing did).
    pub fn regressions(&self, floor: &Counts) -> Vec<String> {
        let mut out = Vec::new();
        // a/n > fa/fn, and k/n < fk/fn, without division.
        if self.wrong_accepted * floor.wrong_variants.max(1) > floor.wrong_accepted * self.wrong_variants.max(1) {
            out.push(format!(
                "must-be-wrong accepted {}/{} (floor {}/{})",
                self.wrong_accepted, self.wrong_variants, floor.wrong_accepted, floor.wrong_variants
            ));
        }
        if self.right_kept * floor.right_variants < floor.right_kept * self.right_variants
            || (floor.right_kept > 0 && self.right_variants == 0)
        {
            out.push(format!(
                "must-stay-right kept {}/{} (floor {}/{})",
                self.right_kept, self.right_variants, floor.right_kept, floor.right_variants
            ));
        }
        out
    }
}

/// The floor per family, or `None` when the file is missing.
pub fn read() -> Option<Map<String, Value>> {
    let text = std::fs::read_to_string(path()).ok()?;
    let value: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path().display()));
    value.get("families").and_then(Value::as_object).cloned()
}

/// The floor's counts for `family`, when it has them.
pub fn counts(floor: &Map<String, Value>, family: &str) -> Option<Counts> {
    floor.get(family).and_then(Counts::from_json)
}

/// Rewrite the floor from the current run.
pub fn write(tallies: &[Tally]) {
    let mut fams = Map::new();
    for f in families::all() {
        fams.insert(f.name.to_string(), Counts::of(tallies, f.name).to_json());
    }
    let doc = json!({
        "about": "per family, the counts of the run that set the floor; `cargo test -p rlverify --test mutations` \
                  fails when a family's accepted must-be-wrong share rises or its kept must-stay-right share falls. \
                  Rewrite with RLVERIFY_UPDATE_MUTATION_FLOOR=1 after a deliberate change.",
        "families": fams,
    });
    let text = serde_json::to_string_pretty(&doc).expect("the floor serializes") + "\n";
    std::fs::write(path(), text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path().display()));
}
