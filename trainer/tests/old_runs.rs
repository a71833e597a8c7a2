//! A run directory written by an older rltrain resumes: its `config.json` (fixtures in
//! `tests/data/`, written by main before the settings were declared once) is the base, the
//! resumed run trains on, and the config it records keeps the run's settings and sources.

use std::path::{Path, PathBuf};
use std::process::Command;

use rltrain::config::Source;
use rltrain::TrainConfig;

const BIN: &str = env!("CARGO_BIN_EXE_rltrain");

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("rltrain-old-runs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)).unwrap()
}

fn rltrain(args: &[&str], out: &Path) -> std::process::Output {
    let o = Command::new(BIN).args(args).arg(out).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

#[test]
fn an_old_run_directory_resumes() {
    for name in ["config-main-tiny.json", "config-main-dgpo-paper.json", "config-flat-dgpo-paper.json"] {
        let out = tmp(name);
        let old: TrainConfig = TrainConfig::from_json(&fixture(name)).unwrap();
        // The run's checkpoint, from a run of the same settings; then main's config.json.
        let o = Command::new(BIN)
            .arg("--config")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name))
            .args(["--steps", "1", "--eval-every", "0", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        std::fs::write(out.join("config.json"), fixture(name)).unwrap();
        rltrain(&["--steps", "2", "--resume"], &out);
        let resumed = TrainConfig::from_json(&std::fs::read_to_string(out.join("config.json")).unwrap()).unwrap();
        assert_eq!(resumed.changes, [], "{name}");
        assert_eq!((resumed.run.steps, &resumed.run.out), (2, &out), "{name}");
        let (mut want, mut got) = (old.settings(), resumed.settings());
        for free in ["steps", "out"] {
            want.remove(free);
            got.remove(free);
        }
        assert_eq!(got, want, "{name}: the run's settings");
        for (key, source) in &old.sources {
            if key != "steps" && key != "out" {
                assert_eq!(resumed.sources.get(key), Some(source), "{name}: {key}");
            }
        }
        assert_eq!(resumed.sources.get("steps"), Some(&Source::User));
        let metrics = std::fs::read_to_string(out.join("metrics.jsonl")).unwrap();
        assert!(metrics.lines().any(|l| l.contains("\"step\":2")), "{name}: {metrics}");
        let _ = std::fs::remove_dir_all(&out);
    }
}
