//! A study's folders, checked before anything trains: the runs folder (`--out`) and the report
//! folder (`--report`) must be writable, and neither may hold a study made with other settings
//! (seeds, steps): its finished runs would be trained again and its report replaced, unnoticed.
//! Without `--out`, each choice of settings gets its own folder ([`default_out`]), so a quick
//! check (`--seeds 2 --steps 5`) never lands on a full study.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::report::{REPORT_FILE, SUMMARY_FILE};
use super::{RunSpec, Study, StudyOptions, DONE_FILE};
use crate::error::{Error, Result};

/// The settings a study's report is made with, as `summary.json` records them.
#[derive(Debug, Clone, PartialEq)]
pub struct StudySettings {
    /// The study's name.
    pub study: String,
    /// Seeds per arm.
    pub seeds: u64,
    /// Steps of each setting, by setting name.
    pub steps: BTreeMap<String, u64>,
}

impl StudySettings {
    /// The settings `opts` runs `study` with.
    pub fn of(study: &Study, seeds: u64, steps: Option<u64>) -> Self {
        StudySettings {
            study: study.name.to_string(),
            seeds,
            steps: study.settings.iter().map(|s| (s.name.to_string(), steps.unwrap_or(s.steps))).collect(),
        }
    }

    /// The settings a `summary.json` records, when it is a study's.
    fn recorded(summary: &Value) -> Option<Self> {
        let steps = summary.get("steps")?.as_object()?;
        Some(StudySettings {
            study: summary.get("study")?.as_str()?.to_string(),
            seeds: summary.get("seeds")?.as_u64()?,
            steps: steps.iter().map(|(k, v)| Some((k.clone(), v.as_u64()?))).collect::<Option<_>>()?,
        })
    }

    /// `study cfpo, 12 seeds, 200 steps` (the steps per setting when they differ).
    fn describe(&self) -> String {
        let distinct: BTreeSet<&u64> = self.steps.values().collect();
        let steps = match distinct.first() {
            Some(n) if distinct.len() == 1 => format!("{n} steps"),
            _ => self.steps.iter().map(|(s, n)| format!("{s}: {n} steps")).collect::<Vec<_>>().join(", "),
        };
        format!("study {}, {} seeds, {steps}", self.study, self.seeds)
    }
}

/// The runs folder when `--out` is not given: `runs/study-NAME` for the study's own settings,
/// with `-seedsN` and `-stepsN` added for the ones a command changes.
pub fn default_out(study: &Study, seeds: u64, steps: Option<u64>) -> PathBuf {
    let mut name = format!("runs/study-{}", study.name);
    if seeds != study.seeds {
        name.push_str(&format!("-seeds{seeds}"));
    }
    if let Some(n) = steps.filter(|&n| study.settings.iter().any(|s| s.steps != n)) {
        name.push_str(&format!("-steps{n}"));
    }
    PathBuf::from(name)
}

/// Checks the folders of a study about to run `specs`, before anything is created in them
/// beyond the folders themselves: both can be written, the report folder holds no report made
/// with other settings, and no finished run was trained for another number of steps.
pub(super) fn check(study: &Study, opts: &StudyOptions, specs: &[RunSpec]) -> Result<()> {
    writable(&opts.out, "--out")?;
    writable(&opts.report_dir, "--report")?;
    let settings = StudySettings::of(study, opts.seeds, opts.steps);
    let summary = opts.report_dir.join(SUMMARY_FILE);
    if let Ok(text) = std::fs::read_to_string(&summary) {
        let recorded = serde_json::from_str(&text).ok().and_then(|v| StudySettings::recorded(&v));
        match recorded {
            Some(recorded) if recorded == settings => {}
            Some(recorded) => {
                return Err(Error::Run(format!(
                    "`{}` holds the report of {}; this command makes one of {} and would replace it: choose \
                     another --report (or --out), or delete `{}` to replace that report",
                    opts.report_dir.display(),
                    recorded.describe(),
                    settings.describe(),
                    summary.display()
                )))
            }
            None => {
                return Err(Error::Run(format!(
                    "`{}` is not a study's summary and would be replaced: choose another --report (or --out), or \
                     delete it",
                    summary.display()
                )))
            }
        }
    }
    let other_steps: Vec<(&RunSpec, u64)> = specs
        .iter()
        .filter_map(|spec| {
            let text = std::fs::read_to_string(spec.dir.join(DONE_FILE)).ok()?;
            let recorded = serde_json::from_str::<Value>(&text).ok()?.pointer("/run/steps")?.as_u64()?;
            let asked = opts.steps.unwrap_or(spec.setting.steps);
            (recorded != asked).then_some((spec, recorded))
        })
        .collect();
    if let Some((first, recorded)) = other_steps.first() {
        return Err(Error::Run(format!(
            "`{}` holds {} finished runs trained for {recorded} steps (`{}` among them); this command trains \
             {} steps and would train them again, replacing them: choose another --out (or leave it out: \
             `{}`), or delete `{0}` to start over",
            opts.out.display(),
            other_steps.len(),
            first.dir.display(),
            opts.steps.unwrap_or(first.setting.steps),
            default_out(study, opts.seeds, opts.steps).display()
        )));
    }
    Ok(())
}

/// Creates `dir` and checks that a file can be written into it, and that the report files it
/// already holds can be rewritten (nothing is changed).
fn writable(dir: &Path, flag: &str) -> Result<()> {
    let refuse = |path: &Path, e: std::io::Error| {
        Error::Run(format!(
            "{flag} `{}` cannot be written ({}: {e}); choose a folder you can write to",
            dir.display(),
            path.display()
        ))
    };
    std::fs::create_dir_all(dir).map_err(|e| refuse(dir, e))?;
    let probe = dir.join(format!(".rltrain-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|e| refuse(&probe, e))?;
    let _ = std::fs::remove_file(&probe);
    for name in [REPORT_FILE, SUMMARY_FILE] {
        let path = dir.join(name);
        if path.exists() {
            OpenOptions::new().write(true).open(&path).map_err(|e| refuse(&path, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_choice_of_settings_has_its_own_default_folder() {
        let study = Study::from_name("cfpo").expect("cfpo");
        let own = study.settings[0].steps;
        assert_eq!(default_out(study, study.seeds, None), PathBuf::from("runs/study-cfpo"));
        assert_eq!(default_out(study, study.seeds, Some(own)), PathBuf::from("runs/study-cfpo"));
        assert_eq!(default_out(study, 2, Some(5)), PathBuf::from("runs/study-cfpo-seeds2-steps5"));
        assert_eq!(default_out(study, study.seeds, Some(5)), PathBuf::from("runs/study-cfpo-steps5"));
    }

    #[test]
    fn recorded_settings_read_back_and_describe_themselves() {
        let study = Study::from_name("dgpo").expect("dgpo");
        let settings = StudySettings::of(study, 2, Some(5));
        let summary = serde_json::json!({"study": "dgpo", "seeds": 2, "steps": settings.steps});
        assert_eq!(StudySettings::recorded(&summary), Some(settings.clone()));
        assert_eq!(settings.describe(), "study dgpo, 2 seeds, 5 steps");
    }
}
