//! The layering of `equiv` (module doc of `equiv`): every module names only modules of lower
//! layers, so no two files import each other.

/// The layers, lowest first. A module may name (`super::m`, `use super::m`) only the modules of
/// the layers before its own.
const LAYERS: &[&[&str]] = &[
    &["number", "elementary", "fast", "rule"],
    &["eval"],
    &["context"],
    &["quantity"],
    &["scalar"],
    &["read"],
    &["matrix", "roots", "sets", "families", "relation", "structure"],
    &["policies"],
];

/// The modules of `equiv` that `src` names, outside its tests.
fn named_modules(src: &str, all: &[&str]) -> Vec<String> {
    let code = src.split("#[cfg(test)]").next().unwrap_or(src);
    let mut out = Vec::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (i, _) in line.match_indices("super::") {
            let rest = &line[i + "super::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if all.contains(&name.as_str()) && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

#[test]
fn every_module_reads_only_lower_layers() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/equiv");
    let all: Vec<&str> = LAYERS.iter().flat_map(|l| l.iter().copied()).collect();
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|f| f.ends_with(".rs") && f != "mod.rs" && f != "tests.rs" && !f.ends_with("_tests.rs"))
        .collect();
    files.sort();
    let mut wrong = Vec::new();
    for f in &files {
        let name = f.trim_end_matches(".rs");
        let Some(layer) = LAYERS.iter().position(|l| l.contains(&name)) else {
            wrong.push(format!("{name}: in no layer of LAYERS"));
            continue;
        };
        let src = std::fs::read_to_string(dir.join(f)).unwrap();
        for m in named_modules(&src, &all) {
            let below = LAYERS[..layer].iter().any(|l| l.contains(&m.as_str()));
            if !below {
                wrong.push(format!("{name} names {m}, not in a lower layer"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}
