//! The flat view of a config or layer in JSON: every setting by its name, whatever group holds
//! it (what tables, help notes and older config files use).

use serde_json::Value;

/// The keys of `config.json` that are records of the run, not settings.
pub(crate) const RECORDS: [&str; 3] = ["sources", "changes", "memory"];

/// `(setting, value)` of a config or layer in JSON, nested or flat, every setting by its name
/// (the records of a run left out).
pub fn flat_entries(v: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    if let Value::Object(m) = v {
        for (k, v) in m {
            match v {
                _ if RECORDS.contains(&k.as_str()) => {}
                Value::Object(_) => out.extend(flat_entries(v)),
                _ => out.push((k.clone(), v.clone())),
            }
        }
    }
    out
}
