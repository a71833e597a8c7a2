//! Reading config files of every shape `rltrain` has written or taken: nested by groups as
//! `config.json` is, flat by flag names (a file of flags, and `config.json` before the groups), or
//! mixed. [`normalise`] moves each setting to its group, so that serde reads one shape.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::flat::RECORDS;
use super::settings::TrainConfig;

/// Where each setting lives in `config.json`: its name (unique) to its path, e.g. `lr` to
/// `["optim", "lr"]`, `clip_low` to `["objective", "overrides", "clip_low"]`; read off
/// [`TrainConfig::default`], whose objects are its groups.
fn setting_paths() -> &'static BTreeMap<String, Vec<String>> {
    fn walk(v: &Value, prefix: &mut Vec<String>, paths: &mut BTreeMap<String, Vec<String>>) {
        if let Value::Object(m) = v {
            for (k, v) in m {
                if prefix.is_empty() && RECORDS.contains(&k.as_str()) {
                    continue;
                }
                prefix.push(k.clone());
                if v.is_object() {
                    walk(v, prefix, paths);
                } else {
                    paths.insert(k.clone(), prefix.clone());
                }
                prefix.pop();
            }
        }
    }
    static PATHS: OnceLock<BTreeMap<String, Vec<String>>> = OnceLock::new();
    PATHS.get_or_init(|| {
        let mut paths = BTreeMap::new();
        walk(&serde_json::to_value(TrainConfig::default()).unwrap_or_default(), &mut Vec::new(), &mut paths);
        paths
    })
}

/// Whether `key` names a group of settings (`run`, ..., `overrides`).
fn is_group(key: &str) -> bool {
    setting_paths().values().any(|path| path[..path.len() - 1].iter().any(|g| g == key))
}

/// A config in the nested shape of `config.json`, whether it was written nested, flat or mixed:
/// each setting moves to its group (`{"lr": 1e-6}` becomes `{"optim": {"lr": 1e-6}}`), and the
/// advantage estimator's name is folded to lower case as `--advantage` folds it. A key that names
/// no setting stays where it is, for serde to name it.
pub fn normalise(config: &Value) -> Value {
    let mut out = nest(config);
    if let Some(Value::String(name)) = out.pointer_mut("/objective/overrides/advantage") {
        *name = name.trim().to_lowercase();
    }
    out
}

/// `layer` without the records of a run (`sources`, `changes`, `memory`): a `config.json` used
/// as a `--config` file gives its settings only.
pub fn settings_only(layer: &Value) -> Value {
    match layer {
        Value::Object(m) => Value::Object(
            m.iter().filter(|(k, _)| !RECORDS.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect(),
        ),
        other => other.clone(),
    }
}

fn nest(layer: &Value) -> Value {
    let Value::Object(m) = layer else { return layer.clone() };
    let mut out = Value::Object(Map::new());
    for (k, v) in m {
        if v.is_object() && is_group(k) {
            deep_merge(&mut out, &nest(v));
            continue;
        }
        let path = match setting_paths().get(k) {
            Some(path) if !RECORDS.contains(&k.as_str()) => path.clone(),
            _ => vec![k.clone()],
        };
        if let Value::Object(o) = &mut out {
            insert_at(o, &path, v.clone());
        }
    }
    out
}

/// Puts `value` at `path` in `root`, making the objects on the way.
fn insert_at(root: &mut Map<String, Value>, path: &[String], value: Value) {
    match path {
        [last] => {
            root.insert(last.clone(), value);
        }
        [first, rest @ ..] => {
            let slot = root.entry(first.clone()).or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(m) = slot {
                insert_at(m, rest, value);
            }
        }
        [] => {}
    }
}

/// Merges `overlay` into `base`, object by object.
fn deep_merge(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(k) {
                    Some(slot) if slot.is_object() && v.is_object() => deep_merge(slot, v),
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (b, o) => *b = o.clone(),
    }
}
