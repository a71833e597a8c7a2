//! The verifier's flags, as the three command lines (`rlverify`, `rlbench`, `rltrain`) take them:
//! where the fields of a JSON row are ([`FieldArgs`]), how a verdict is read and rewarded
//! ([`ScoringArgs`], [`AnswerArgs`], [`FormatRewardArgs`], declared in [`crate::options`] and
//! re-exported here), with the verifier's defaults in their help ([`with_scoring_defaults`]) and
//! a check that a command takes every option ([`verifier_flag_problems`]); the per-line
//! error report of `rlverify score` and `rlbench score`.
//!
//! The rest of the command-line kit (the printer, the exit status, signals, number parsers,
//! `-j`) is the `rlcli` crate.

mod args;

pub use crate::options::{AnswerArgs, FormatRewardArgs, ScoringArgs};
pub use args::{scoring_default_note, verifier_flag_problems, with_scoring_defaults, FieldArgs, Takes};
pub use rlbase::DeviceSpec;

/// Per-line input errors printed in full by `rlverify score` and `rlbench score`; the rest are
/// counted ([`print_more_line_errors`]).
pub const MAX_PRINTED_LINE_ERRORS: u64 = 20;

/// After the printed line errors: how many more there were (nothing when none), then the hint
/// that names the field flags when a line lacked a field.
pub fn print_more_line_errors(errors: u64, missing_field: bool) {
    if errors > MAX_PRINTED_LINE_ERRORS {
        rlcli::info(format_args!("... and {} more malformed lines", errors - MAX_PRINTED_LINE_ERRORS));
    }
    if missing_field {
        rlcli::print_hint(
            "name the fields with `--response-field PATH`, `--gold-field PATH` and `--id-field PATH` (dotted paths)",
        );
    }
}
