//! `rlverify._rlverify`: the Python bindings of the rlverify verifier (the pure-Python package
//! `rlverify` re-exports them and adds the math-verify compatible module and the trainer adapters).
//!
//! Every entry point copies its strings out of Python, releases the GIL (`Python::detach`) for the
//! verifier work, and turns any Rust panic into a Python `RuntimeError`: nothing unwinds into
//! Python. There is no global state besides the worker pools, which are rebuilt in a forked child
//! (a child inherits no threads), and no signals: the verifier's cost bounds are step budgets.

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use rayon::prelude::*;
use rlverify::format::{is_well_formed, total_reward, CPGD_FORMAT_WEIGHT};
use rlverify::options::{config_options, ConfigOption};
use rlverify::{Config, Extraction, ExtractOptions, Gold, VerifierOption};
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

/// Everything the keyword options decide: the library configuration plus the CLI's format reward.
#[derive(Clone, Debug, Default)]
struct Options {
    cfg: Config,
    /// `rlverify score --format-reward[=W]`: `reward = accuracy + W * format_ok`.
    format_weight: Option<f64>,
}

/// The keyword that is no option of `Config` (`rlverify score --format-reward[=W]`).
const FORMAT_REWARD: &str = "format_reward";

/// The keyword options, named and spelled as the flags of `rlverify score` (`--last-number` is
/// `last_number=`), with the CLI's defaults (`Config::default()`): every option of the
/// verifier's table (`rlverify::options::config_options`: names, values and defaults defined
/// once there), then `format_reward`. `None` keeps the default. An option added to the table is
/// a keyword with no edit here (and one line per function in `_rlverify.pyi`, which a test
/// checks).
fn option_names() -> Vec<String> {
    config_options().map(|o| o.key()).chain([FORMAT_REWARD.to_string()]).collect()
}

/// Sets an option from its name as the command line spells it (`no-answer`; case and `_` for `-`
/// do not matter).
fn set_option(option: &dyn ConfigOption, cfg: &mut Config, value: &Bound<'_, PyAny>) -> PyResult<()> {
    let name = option.key();
    let names = || option.values().iter().map(|(v, _)| format!("'{v}'")).collect::<Vec<_>>().join(", ");
    let Ok(text) = value.extract::<String>() else {
        let shown = value.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".to_string());
        return Err(PyValueError::new_err(format!("{name}: expected one of {}, got {shown}", names())));
    };
    option
        .set(cfg, &text)
        .map_err(|_| PyValueError::new_err(format!("{name}: expected one of {}, got '{text}'", names())))
}

/// `format_reward`: `False` off, `True` the CPGD weight 0.5, a number its weight.
fn format_weight(value: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    if let Ok(b) = value.cast::<pyo3::types::PyBool>() {
        return Ok(b.is_true().then_some(CPGD_FORMAT_WEIGHT));
    }
    match value.extract::<f64>() {
        Ok(w) if w.is_finite() => Ok(Some(w)),
        Ok(w) => Err(PyValueError::new_err(format!("format_reward: the weight must be a finite number, got {w}"))),
        Err(_) => Err(PyValueError::new_err(format!(
            "format_reward: expected True, False, None or a number, got {}",
            value.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".to_string())
        ))),
    }
}

impl Options {
    fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Options> {
        let mut o = Options::default();
        let Some(kwargs) = kwargs else { return Ok(o) };
        for (key, value) in kwargs.iter() {
            let key: String = key.extract()?;
            let option = config_options().find(|o| o.key() == key);
            if option.is_none() && key != FORMAT_REWARD {
                let known = option_names().join(", ");
                return Err(PyTypeError::new_err(format!("unexpected keyword argument '{key}' (options: {known})")));
            }
            if value.is_none() {
                continue;
            }
            match option {
                Some(option) => set_option(option, &mut o.cfg, &value)?,
                None => o.format_weight = format_weight(&value)?,
            }
        }
        Ok(o)
    }
}

/// The result of scoring one response (what a line of `rlverify score` says).
#[pyclass(module = "rlverify", frozen, eq, hash, get_all)]
#[derive(Clone, Debug, PartialEq)]
struct Score {
    /// Whether the response's final answer equals the gold answer.
    correct: bool,
    /// The reward: 1/0 (`reward="binary"`) or 1/-1 (`"signed"`), plus the format weight when the
    /// response is well formed and `format_reward` is on.
    reward: f64,
    /// `correct`, `wrong`, `no_answer`, `ambiguous`, `unparsable`, `limit` or `invalid_gold`.
    status: String,
    /// The answer extracted from the response, or None.
    extracted: Option<String>,
    /// The rule that decided the comparison (`exact`, `decimal_tolerance`, `text`, ...).
    rule: String,
    /// Which cost bound was hit when `status` is `limit`, else None.
    limit: Option<String>,
    /// With `format_reward`: whether the response is `<think>..</think><answer>..</answer>`.
    format_ok: Option<bool>,
    /// The candidates of the final statement when it offers several (`ambiguous`), else empty.
    candidates: Vec<String>,
}

impl std::hash::Hash for Score {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        // `+ 0.0` makes -0.0 hash as 0.0, which it equals.
        (
            self.correct,
            (self.reward + 0.0).to_bits(),
            &self.status,
            &self.extracted,
            &self.rule,
            &self.limit,
            self.format_ok,
            &self.candidates,
        )
            .hash(h)
    }
}

#[pymethods]
impl Score {
    #[new]
    #[pyo3(signature = (correct, reward, status, extracted=None, rule="none".to_string(), limit=None, format_ok=None, candidates=Vec::new()))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        correct: bool,
        reward: f64,
        status: String,
        extracted: Option<String>,
        rule: String,
        limit: Option<String>,
        format_ok: Option<bool>,
        candidates: Vec<String>,
    ) -> Self {
        Score { correct, reward, status, extracted, rule, limit, format_ok, candidates }
    }

    fn __repr__(&self) -> String {
        let opt = |s: &Option<String>| s.as_ref().map_or("None".to_string(), |s| py_str_repr(s));
        let mut out = format!(
            "Score(correct={}, reward={}, status={}, extracted={}, rule={}",
            if self.correct { "True" } else { "False" },
            py_float(self.reward),
            py_str_repr(&self.status),
            opt(&self.extracted),
            py_str_repr(&self.rule),
        );
        if self.limit.is_some() {
            out.push_str(&format!(", limit={}", opt(&self.limit)));
        }
        if let Some(ok) = self.format_ok {
            out.push_str(&format!(", format_ok={}", if ok { "True" } else { "False" }));
        }
        if !self.candidates.is_empty() {
            let items: Vec<String> = self.candidates.iter().map(|c| py_str_repr(c)).collect();
            out.push_str(&format!(", candidates=[{}]", items.join(", ")));
        }
        out.push(')');
        out
    }

    /// Pickling: rebuilt from its fields.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let s = slf.get();
        let args = (
            s.correct,
            s.reward,
            s.status.clone(),
            s.extracted.clone(),
            s.rule.clone(),
            s.limit.clone(),
            s.format_ok,
            s.candidates.clone(),
        )
            .into_pyobject(slf.py())?;
        Ok((slf.get_type().into_any(), args))
    }
}

/// A Python-style repr of a string (single quotes, escapes), for `Score.__repr__`.
fn py_str_repr(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

fn py_float(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e16 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

/// Score one response against one gold answer; a panic becomes an error message.
fn score_one(gold: &str, response: &str, o: &Options) -> Result<Score, String> {
    catch_unwind(AssertUnwindSafe(|| {
        let s = Gold::new(gold, &o.cfg).score(response, &o.cfg);
        let format_ok = o.format_weight.map(|_| is_well_formed(response));
        let reward = match (format_ok, o.format_weight) {
            (Some(ok), Some(w)) => total_reward(s.reward, ok, w),
            _ => s.reward,
        };
        Score {
            correct: s.correct,
            reward,
            status: s.status.as_str().to_string(),
            extracted: s.extracted,
            rule: s.rule.to_string(),
            limit: s.limit.map(|k| k.as_str().to_string()),
            format_ok,
            candidates: s.candidates,
        }
    }))
    .map_err(|_| "internal error: the verifier panicked (please report this input)".to_string())
}

/// `score(gold, response, **options) -> Score`
///
/// Score one model response against one gold answer. The gold may be a bare answer (`\frac12`,
/// `42`) or a reference solution with a `\boxed{}`; the response is a whole model output (the
/// final answer is extracted from it). Options: `reward="binary"|"signed"`,
/// `last_number="auto"|"always"|"never"`, `truncated="no-answer"|"lenient"`,
/// `format_reward=False|True|<weight>`, with the defaults of `rlverify score`.
#[pyfunction]
#[pyo3(signature = (gold, response, **options))]
fn score(py: Python<'_>, gold: String, response: String, options: Option<&Bound<'_, PyDict>>) -> PyResult<Score> {
    let o = Options::from_kwargs(options)?;
    py.detach(|| score_one(&gold, &response, &o)).map_err(PyRuntimeError::new_err)
}

/// `verify(gold, response, **options) -> bool`
///
/// True when the response's final answer equals the gold answer (same options as `score`).
#[pyfunction]
#[pyo3(signature = (gold, response, **options))]
fn verify(py: Python<'_>, gold: String, response: String, options: Option<&Bound<'_, PyDict>>) -> PyResult<bool> {
    score(py, gold, response, options).map(|s| s.correct)
}

/// `extract(response, last_number=False, extract=None) -> str | None`
///
/// The final answer the verifier reads in a response (`\boxed{}`, `<answer>` tags, "the final
/// answer is", `#### 42`, ...), or None; end-of-turn tokens and what follows them are cut first.
/// `last_number=True` falls back to the last number; `extract="lenient"` also reads answers
/// without a marker (the last math block), as `score(..., extract="lenient")` does.
#[pyfunction]
#[pyo3(signature = (response, last_number=false, extract=None))]
fn extract(
    py: Python<'_>,
    response: String,
    last_number: bool,
    extract: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<String>> {
    let mut cfg = Config { extract: Extraction::Strict, ..Config::default() };
    if let Some(v) = extract.filter(|v| !v.is_none()) {
        let option = config_options().find(|o| o.flag() == Extraction::FLAG);
        set_option(option.expect("the extract option"), &mut cfg, v)?;
    }
    let mode = cfg.extract;
    py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let opts = ExtractOptions {
                last_number_fallback: last_number,
                lenient: mode == Extraction::Lenient,
                ..ExtractOptions::default()
            };
            rlverify::extract(&response, &opts).map(|a| a.text)
        }))
    })
    .map_err(|_| PyRuntimeError::new_err("internal error: the extractor panicked (please report this input)"))
}

/// `value(answer) -> (real, imag, integer_text) | None`
///
/// The number an answer stands for (`0.5`, `\frac{1}{2}`, `2\sqrt{2}`, `50\%`, `3+4i`), as
/// floats, with the exact decimal digits when it is an integer; None when it is not a number (a
/// set, an interval, an equation, text, a free symbol). A value in degrees (`30^\circ`) is its
/// number of degrees. What `float()`, `int()` and `complex()` of `rlverify.compat.Answer` use.
#[pyfunction]
fn value(py: Python<'_>, answer: String) -> PyResult<Option<(f64, f64, Option<String>)>> {
    use rlverify::equiv::eval::{bf_to_f64, Evaluator, PREC};
    py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let cfg = Config::default();
            let expr = rlverify::parse(&answer, &cfg.limits).ok()?;
            let expr = match expr {
                rlverify::Expr::Degrees(inner) => *inner,
                other => other,
            };
            let mut budget = rlverify::Budget::new(&cfg.limits);
            let mut consts = None;
            let v = Evaluator::new(PREC, &mut budget, &mut consts, &[]).eval(&expr).ok()?;
            let integer = v.exact().and_then(|q| {
                let real = q.im.is_integer() && q.im.to_integer().bits() == 0;
                (real && q.re.is_integer()).then(|| q.re.to_integer().to_string())
            });
            let c = v.to_cf(PREC);
            Some((bf_to_f64(&c.re), bf_to_f64(&c.im), integer))
        }))
    })
    .map_err(|_| PyRuntimeError::new_err("internal error: the evaluator panicked (please report this input)"))
}

/// Worker pools by thread count, and the process they were built in: a forked child inherits
/// the pools but not their threads, so it builds its own.
struct Pools {
    pid: u32,
    by_threads: HashMap<usize, Arc<rayon::ThreadPool>>,
}

static POOLS: Mutex<Option<Pools>> = Mutex::new(None);

fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, String> {
    let pid = std::process::id();
    let mut guard = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    if guard.as_ref().is_some_and(|p| p.pid != pid) {
        // Inherited from the parent: its threads do not exist here. Dropping it would signal
        // threads that are not there; leak it instead (once per fork).
        if let Some(old) = guard.take() {
            std::mem::forget(old);
        }
    }
    let pools = guard.get_or_insert_with(|| Pools { pid, by_threads: HashMap::new() });
    if let Some(p) = pools.by_threads.get(&threads) {
        return Ok(p.clone());
    }
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|k| format!("rlverify-{k}"))
        .build()
        .map_err(|e| format!("failed to start the worker threads: {e}"))?;
    let built = Arc::new(built);
    pools.by_threads.insert(threads, built.clone());
    Ok(built)
}

/// `score_batch(golds, responses, threads=None, **options) -> list[Score]`
///
/// Score `responses[i]` against `golds[i]` for every i, in parallel on the verifier's worker
/// threads with the GIL released, and return the scores in input order. `threads`: worker
/// threads (default: all cores).
#[pyfunction]
#[pyo3(signature = (golds, responses, threads=None, **options))]
fn score_batch(
    py: Python<'_>,
    golds: Vec<String>,
    responses: Vec<String>,
    threads: Option<i64>,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<Score>> {
    let o = Options::from_kwargs(options)?;
    if golds.len() != responses.len() {
        return Err(PyValueError::new_err(format!(
            "golds and responses differ in length: {} golds, {} responses",
            golds.len(),
            responses.len()
        )));
    }
    let threads = match threads {
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        Some(n) if n >= 1 => usize::try_from(n).unwrap_or(usize::MAX).min(1024),
        Some(n) => return Err(PyValueError::new_err(format!("threads: must be a positive integer or None, got {n}"))),
    };
    let result: Result<Vec<Score>, String> = py.detach(|| {
        if threads == 1 || golds.len() < 2 {
            return golds.iter().zip(&responses).map(|(g, r)| score_one(g, r, &o)).collect();
        }
        let pool = pool(threads)?;
        pool.install(|| {
            golds.par_iter().zip(responses.par_iter()).with_min_len(4).map(|(g, r)| score_one(g, r, &o)).collect()
        })
    });
    result.map_err(PyRuntimeError::new_err)
}

/// Fast, exact, signal-free math answer verification (the Rust core of the `rlverify` package).
#[pymodule(gil_used = false)]
fn _rlverify(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Score>()?;
    m.add_function(wrap_pyfunction!(score, m)?)?;
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add_function(wrap_pyfunction!(extract, m)?)?;
    m.add_function(wrap_pyfunction!(score_batch, m)?)?;
    m.add_function(wrap_pyfunction!(value, m)?)?;
    m.add("__version__", rlverify::VERSION)?;
    m.add("OPTIONS", option_names())?;
    Ok(())
}
