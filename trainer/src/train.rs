//! The training loop, top to bottom ([`train_until`]): each step is a named method of the run
//! (`Session`), in order: rollout (with π_old) → advantages (from the verified rewards) → update
//! passes (for each iteration and mini-batch: log-probs with grad → objective (+ KL to reference,
//! drift, entropy) with global normalisers → backward → NaN guard → clip → fused AdamW) → log →
//! evaluation → checkpoint.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use candle_core::{DType, Tensor};
use rlbench::suite::Fields;
use rlengine::{CpuDecode, Engine, Model};
use serde_json::{json, Map, Value};

use crate::advantage::{self, frac_zero_std_groups, Estimator, Rollout};
use crate::aggregate::GlobalNorm;
use crate::checkpoint::{self, TrainerState};
use crate::config::{Resolved, TrainConfig};
use crate::data::{Dataset, PromptOrder};
use crate::error::{Error, Result};
use crate::eval::{self, EvalSet};
use crate::memory::available::Available;
use crate::memory::plan::{self, ChosenBy, Demand, MemoryPlan};
use crate::metrics::{batch_metrics, Metrics};
use crate::objectives::{cpgd, LossConfig, LossInputs};
use crate::optim::{clip_scale, global_norm, AdamW, AdamWConfig, LrSchedule};
use crate::policy::{self, SequenceBatch};
use crate::reward::Rewarder;
use crate::rng::{derive_seed, TrainRng};
use crate::rollout::{self, RolloutBatch, Sample};
use crate::run_dir::{JsonlWriter, RunDir};

/// What the loop reports while it runs (the binary renders it; the library never prints).
#[derive(Debug)]
pub enum Event<'a> {
    /// Training is about to start (or resume) at `first_step` of `total_steps`.
    Start {
        /// First step to run.
        first_step: u64,
        /// Last step + 1.
        total_steps: u64,
        /// Model description.
        model: String,
        /// Problems usable for training.
        problems: usize,
    },
    /// A non-fatal problem (bad data lines, a skipped update).
    Warning(&'a str),
    /// A step's metrics line.
    Step(&'a Value),
    /// An evaluation line.
    Eval(&'a Value),
    /// A checkpoint was written.
    Checkpoint(&'a Path),
}

/// What a finished run leaves.
#[derive(Debug)]
pub struct Outcome {
    /// The run directory.
    pub run_dir: PathBuf,
    /// Training steps completed.
    pub steps: u64,
    /// The last metrics line.
    pub last_metrics: Option<Value>,
    /// The trained engine.
    pub engine: Engine,
    /// The newest checkpoint this run wrote.
    pub checkpoint: Option<PathBuf>,
    /// Whether the run stopped early because `stop` was set (Ctrl-C).
    pub interrupted: bool,
    /// `path:line: why` of every line of the training and evaluation data that was skipped
    /// (each also an [`Event::Warning`] at the start): a run that skipped data is done with a
    /// negative result.
    pub skipped_data_lines: Vec<String>,
}

/// Trains as `cfg` says; with `resume`, continues from the newest checkpoint of `cfg.run.out`.
pub fn train(cfg: &TrainConfig, resume: bool, on_event: &mut dyn FnMut(Event)) -> Result<Outcome> {
    train_until(cfg, resume, &AtomicBool::new(false), on_event)
}

/// [`train`] that stops early, after the current step and a checkpoint, once `stop` is set (the
/// binary sets it on Ctrl-C). Each step, in order: rollout, rewards and advantages, update
/// passes, log, evaluation, checkpoint.
pub fn train_until(
    cfg: &TrainConfig,
    resume: bool,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(Event),
) -> Result<Outcome> {
    let mut run = Session::start(cfg, resume, on_event)?;
    if cfg.eval.eval_every > 0 && run.state.step == 0 {
        run.evaluate(0, on_event)?;
    }
    let (mut saved, mut interrupted) = (None, false);
    while run.state.step < cfg.run.steps {
        let step = run.state.step + 1; // 1-based in metrics and checkpoint names
        let clock = Clock::start();
        let lr = run.schedule.lr(run.state.step);
        let mut sampled = run.rollout(step, &clock)?; // 1. rollout (and π_old)
        let train_started = Instant::now();
        let (ref_logp, advantages) = run.advantages(&mut sampled)?; // 2. advantages
        let mut acc = UpdateStats { mismatch: sampled.mismatch, ..UpdateStats::default() };
        run.update(step, lr, &sampled, ref_logp.as_deref(), &advantages, &mut acc, on_event)?; // 3. updates
        let train_s = train_started.elapsed().as_secs_f64();
        run.log(step, lr, &sampled, &acc, &clock, train_s, on_event)?; // 4. log
        if cfg.eval.eval_every > 0 && (step.is_multiple_of(cfg.eval.eval_every) || step == cfg.run.steps) {
            run.evaluate(step, on_event)?; // 5. evaluation
        }
        interrupted = stop.load(Ordering::Relaxed);
        if (cfg.run.save_every > 0 && step.is_multiple_of(cfg.run.save_every)) || step == cfg.run.steps || interrupted {
            saved = Some(run.checkpoint(on_event)?); // 6. checkpoint
        }
        if interrupted {
            break;
        }
    }
    Ok(Outcome {
        run_dir: run.dir.root.clone(),
        steps: run.state.step,
        last_metrics: run.state.metrics_tail.clone(),
        engine: run.engine,
        checkpoint: saved,
        interrupted,
        skipped_data_lines: run.skipped_data_lines,
    })
}

// -------------------------------------------------------------------- the steps

/// Everything a run holds from one step to the next.
struct Session<'a> {
    cfg: &'a TrainConfig,
    loss_cfg: LossConfig,
    data: Dataset,
    engine: Engine,
    model: Model,
    vars: Vec<(String, candle_core::Var)>,
    quantized: bool,
    reference: Option<Model>,
    cpgd_correction: Option<f64>,
    /// Rows per forward/backward and recomputation, as planned ([`plan::plan`]).
    memory: MemoryPlan,
    eval_sets: Vec<EvalSet>,
    /// `path:line: why` of the data lines skipped (training and evaluation data).
    skipped_data_lines: Vec<String>,
    rewarder: Rewarder,
    opt: AdamW,
    schedule: LrSchedule,
    dir: RunDir,
    state: TrainerState,
    metrics_out: JsonlWriter,
    rollouts_out: JsonlWriter,
}

/// Per-token log-probs of every sample of a batch.
type TokenLogprobs = Vec<Vec<f32>>;

/// Wall-clock times of one step.
struct Clock {
    started: Instant,
}

impl Clock {
    fn start() -> Self {
        Self { started: Instant::now() }
    }

    fn seconds(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }
}

/// One step's rollout batch and where its `π_old` came from.
struct Sampled {
    batch: RolloutBatch,
    /// The sampler's log-probs when `π_old` is the trainer's own (quantized rollouts).
    sampler_logp: Option<Vec<Vec<f32>>>,
    /// `π_old` is the update's own detached forward (quantized rollouts, one update per step).
    old_from_update: bool,
    /// The sampler/trainer mismatch, when `π_old` was recomputed before the update.
    mismatch: Option<Mismatch>,
    quantize_s: f64,
    rollout_s: f64,
    recompute_s: f64,
}

impl<'a> Session<'a> {
    /// Setup: data, model, the memory plan (a run that cannot fit stops here, before the run
    /// directory exists), reference, rewards, optimizer, run directory, and the state of a fresh
    /// run or of the newest checkpoint.
    fn start(cfg: &'a TrainConfig, resume: bool, on_event: &mut dyn FnMut(Event)) -> Result<Self> {
        let Resolved { loss: loss_cfg, verify, cpgd_correction, overlong, quantized, .. } = cfg.resolved()?;
        let device = policy::device(cfg.run.device)?;
        let available = Available::of(&device)?;
        if cfg.model.model == "tiny" {
            // Before its weights are allocated (a byte-level vocabulary bounds the task's).
            let shape = plan::tiny_config(&cfg.model, rlengine::Tokenizer::byte_level()?.vocab_size());
            plan::check_state(&shape, DType::F32, &available, "the tiny model")?;
        }
        let fields =
            Fields { problem: cfg.data.problem_field.clone(), answer: cfg.data.answer_field.clone(), id: "id".into() };
        let data = Dataset::load(&cfg.data.data, &fields, cfg.data.task_size, cfg.run.seed)?;
        let mut skipped_data_lines = data.skipped.clone();
        let engine = policy::load(cfg, &data, &device)?;
        let model = engine.model().clone();
        let vars = model.vars().to_vec();
        let needs_ref = loss_cfg.ref_kl.is_some() || estimator_needs_kl(&loss_cfg.advantage);
        let memory = memory_plan(cfg, &engine, &data, &available, needs_ref, on_event)?;
        let reference = if needs_ref { Some(policy::frozen_copy(&model)?) } else { None };
        let eval_sets = load_eval_sets(cfg, &fields, &mut skipped_data_lines)?;
        for line in &skipped_data_lines {
            on_event(Event::Warning(&format!("skipped bad data line {line}")));
        }
        let rewarder = Rewarder { verify, format_weight: cfg.rollout.format.format_reward, overlong };
        let adam = AdamWConfig {
            beta1: cfg.optim.adam_beta1,
            beta2: cfg.optim.adam_beta2,
            eps: cfg.optim.adam_eps,
            weight_decay: cfg.optim.weight_decay,
        };
        let mut opt = AdamW::new(&vars, adam)?;
        let schedule = LrSchedule {
            kind: cfg.optim.lr_schedule,
            peak: cfg.optim.lr,
            warmup: cfg.optim.warmup_steps,
            total: cfg.run.steps,
            min_ratio: cfg.optim.min_lr_ratio,
        };
        let dir = RunDir::create(&cfg.run.out)?;
        let cfg_recorded = TrainConfig { memory: Some(memory.clone()), ..cfg.clone() };
        let fresh = TrainerState {
            step: 0,
            optimizer_steps: 0,
            rng: TrainRng::new(derive_seed(&[cfg.run.seed, 1])),
            data: PromptOrder::new(data.problems.len(), derive_seed(&[cfg.run.seed, 2])),
            bad_streak: 0,
            skipped_total: 0,
            metrics_tail: None,
            data_fingerprint: Some(data.fingerprint()),
        };
        let state = resume_state(cfg, resume, &dir, &engine, &mut opt, fresh, on_event)?;
        dir.write_config(&cfg_recorded)?;
        let metrics_out = JsonlWriter::append(&dir.metrics_path())?;
        let rollouts_out = JsonlWriter::append(&dir.rollouts_path())?;
        on_event(Event::Start {
            first_step: state.step,
            total_steps: cfg.run.steps,
            model: policy::describe_model(cfg),
            problems: data.problems.len(),
        });
        Ok(Self {
            cfg,
            loss_cfg,
            data,
            engine,
            model,
            vars,
            quantized,
            reference,
            cpgd_correction,
            memory,
            eval_sets,
            skipped_data_lines,
            rewarder,
            opt,
            schedule,
            dir,
            state,
            metrics_out,
            rollouts_out,
        })
    }

    fn pad(&self) -> u32 {
        self.engine.tokenizer().pad_id()
    }

    /// Step 1, rollout: P prompts x G responses, sampler log-probs as π_old, rewards from rlverify.
    /// On the quantized decoder, π_old is the trainable model's own no-grad forward instead.
    fn rollout(&mut self, step: u64, clock: &Clock) -> Result<Sampled> {
        let cfg = self.cfg;
        sync_decoder(&mut self.engine, self.quantized)?;
        let quantize_s = clock.seconds();
        let mut batch = rollout::collect(&self.engine, cfg, &self.data, &mut self.state.data, &self.rewarder, step)?;
        let rollout_s = clock.seconds();
        let recompute_started = Instant::now();
        // With one update per step (one pass, one mini-batch) that update's own forward is at
        // θ_old, so its detached log-probs are π_old and no separate forward is needed (as verl
        // does on-policy); otherwise one no-grad forward of the trainable model recomputes π_old.
        let old_from_update = self.quantized
            && cfg.optim.iterations == 1
            && cfg.optim.mini_batches == 1
            && !estimator_needs_kl(&self.loss_cfg.advantage)
            && !batch.samples.is_empty();
        let sampler_logp: Option<Vec<Vec<f32>>> = if old_from_update {
            Some(batch.samples.iter().map(|s| s.old_logp.clone()).collect())
        } else if self.quantized && !batch.samples.is_empty() {
            let trainer = detached_logprobs(&self.model, &batch.samples, cfg, self.pad(), &self.memory)?;
            Some(batch.samples.iter_mut().zip(trainer).map(|(s, t)| std::mem::replace(&mut s.old_logp, t)).collect())
        } else {
            None
        };
        let mismatch = match (&sampler_logp, old_from_update) {
            (Some(sampler), false) => Some(Mismatch::of(&batch.samples, sampler)),
            _ => None,
        };
        let recompute_s = recompute_started.elapsed().as_secs_f64();
        Ok(Sampled { batch, sampler_logp, old_from_update, mismatch, quantize_s, rollout_s, recompute_s })
    }

    /// Step 2, advantages with the objective's estimator (per token, on the host), from the rewards
    /// the rollout scored; the reference log-probs when the loss or the estimator needs them; the
    /// truncated importance weights of a recomputed π_old.
    fn advantages(&self, sampled: &mut Sampled) -> Result<(Option<TokenLogprobs>, Vec<Vec<f64>>)> {
        let samples = &sampled.batch.samples;
        let ref_logp = match &self.reference {
            Some(r) if !samples.is_empty() => Some(detached_logprobs(r, samples, self.cfg, self.pad(), &self.memory)?),
            _ => None,
        };
        let mut advantages = compute_advantages(&self.loss_cfg.advantage, samples, ref_logp.as_deref())?;
        if let (Some(cap), Some(sampler), false) =
            (self.cfg.rollout.tis_cap, &sampled.sampler_logp, sampled.old_from_update)
        {
            let old: Vec<&[f32]> = samples.iter().map(|s| s.old_logp.as_slice()).collect();
            let w = advantage::truncated_is(&mut advantages, &old, sampler, cap);
            if let Some(m) = &mut sampled.mismatch {
                m.tis_weight = Some(w);
            }
        }
        Ok((ref_logp, advantages))
    }

    /// Step 3, updates: `--iterations` passes over the batch, each over `--mini-batches` (one optimizer
    /// step each), with CPGD's epoch correction from the second pass on and the NaN guard.
    #[allow(clippy::too_many_arguments)]
    fn update(
        &mut self,
        step: u64,
        lr: f64,
        sampled: &Sampled,
        ref_logp: Option<&[Vec<f32>]>,
        advantages: &[Vec<f64>],
        acc: &mut UpdateStats,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<()> {
        let cfg = self.cfg;
        let samples = &sampled.batch.samples;
        if samples.is_empty() {
            return Ok(());
        }
        let pad = self.pad();
        for iteration in 0..cfg.optim.iterations {
            // CPGD §6.1 (arXiv:2505.12504): from the second pass on, A ← clip(sg π_{m-1}/π_old) · A.
            let corrected = match self.cpgd_correction {
                Some(eps) if iteration > 0 => {
                    let prev = detached_logprobs(&self.model, samples, cfg, pad, &self.memory)?;
                    let old: Vec<&[f32]> = samples.iter().map(|s| s.old_logp.as_slice()).collect();
                    let (adv, mean_w) = cpgd::epoch_corrected_advantages(advantages, &prev, &old, eps)?;
                    acc.cpgd_weights.push(mean_w);
                    Some(adv)
                }
                _ => None,
            };
            let mut order: Vec<usize> = (0..samples.len()).collect();
            self.state.rng.shuffle(&mut order);
            for (mb, rows) in split_even(&order, cfg.optim.mini_batches).into_iter().enumerate() {
                let ctx = UpdateCtx {
                    cfg,
                    loss_cfg: &self.loss_cfg,
                    model: &self.model,
                    samples,
                    advantages: corrected.as_deref().unwrap_or(advantages),
                    ref_logp,
                    inject_nan: cfg.run.inject_nan_at_step == Some(step) && iteration == 0 && mb == 0,
                    micro: self.memory.micro_batch_size,
                    recompute: self.memory.recompute_activations,
                    sampler_logp: if sampled.old_from_update { sampled.sampler_logp.as_deref() } else { None },
                    pad,
                };
                match compute_gradients(&ctx, &rows, acc)? {
                    Gradients::Ok(grads) => {
                        let norm = global_norm(&grads)?;
                        if let Some(i) = norm.first_bad {
                            let name = self.vars.get(i).map_or("?", |(n, _)| n.as_str());
                            let cause = format!("non-finite gradient of `{name}` (grad norm {})", norm.norm);
                            skip_update(&mut self.state, acc, cfg, step, &cause, on_event)?;
                            continue;
                        }
                        self.state.bad_streak = 0;
                        self.opt.step(&self.vars, &grads, clip_scale(norm.norm, cfg.optim.grad_clip), lr)?;
                        self.state.optimizer_steps = self.opt.steps();
                        acc.grad_norms.push(norm.norm);
                    }
                    Gradients::Bad(cause) => skip_update(&mut self.state, acc, cfg, step, &cause, on_event)?,
                }
            }
        }
        Ok(())
    }

    /// Step 4, log: the metrics line, a few rollout samples, and the step event.
    #[allow(clippy::too_many_arguments)]
    fn log(
        &mut self,
        step: u64,
        lr: f64,
        sampled: &Sampled,
        acc: &UpdateStats,
        clock: &Clock,
        train_s: f64,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<()> {
        let batch = &sampled.batch;
        let step_s = clock.seconds();
        let mut line = metrics_line(step, batch, acc, lr, sampled.rollout_s, train_s, step_s);
        if let (Some(m), Value::Object(map)) = (&acc.mismatch, &mut line) {
            map.insert("rollout/logp_abs_diff".into(), m.abs_diff.into());
            map.insert("rollout/kl_k3".into(), m.k3.into());
            map.insert("time/recompute_s".into(), sampled.recompute_s.into());
            map.insert("time/quantize_s".into(), sampled.quantize_s.into());
            if let Some(w) = m.tis_weight {
                map.insert("rollout/tis_weight_mean".into(), w.into());
            }
        }
        self.metrics_out.write(&line)?;
        for s in batch.samples.iter().take(self.cfg.run.save_rollouts) {
            let p = &self.data.problems[s.problem];
            self.rollouts_out.write(&json!({
                "step": step, "id": p.id, "prompt": p.problem, "response": s.text,
                "answer": p.answer, "reward": s.reward.total, "correct": s.reward.correct,
            }))?;
        }
        on_event(Event::Step(&line));
        self.state.step = step;
        self.state.metrics_tail = Some(line);
        Ok(())
    }

    /// Step 5, evaluation of the current weights on every evaluation set.
    fn evaluate(&mut self, step: u64, on_event: &mut dyn FnMut(Event)) -> Result<()> {
        sync_decoder(&mut self.engine, self.quantized)?;
        run_eval(&self.engine, self.cfg, &self.eval_sets, step, &mut self.metrics_out, on_event)
    }

    /// Step 6, checkpoint: weights, optimizer and trainer state; older ones pruned.
    fn checkpoint(&mut self, on_event: &mut dyn FnMut(Event)) -> Result<PathBuf> {
        let dir = checkpoint::save(&self.dir.checkpoints(), &self.engine, &self.opt, &self.state)?;
        checkpoint::prune(&self.dir.checkpoints(), self.cfg.run.keep_checkpoints)?;
        on_event(Event::Checkpoint(&dir));
        Ok(dir)
    }
}

/// The state to start from: `fresh`, or with `resume` the newest checkpoint's (weights and
/// optimizer restored into `engine` and `opt`); refuses to overwrite another run.
fn resume_state(
    cfg: &TrainConfig,
    resume: bool,
    run: &RunDir,
    engine: &Engine,
    opt: &mut AdamW,
    fresh: TrainerState,
    on_event: &mut dyn FnMut(Event),
) -> Result<TrainerState> {
    let restored = match resume {
        true => checkpoint::restore_newest(&run.checkpoints(), engine, opt, &mut |w| on_event(Event::Warning(w)))?,
        false => None,
    };
    match (resume, restored) {
        (true, Some((dir, mut state))) => {
            state.check_same_data(&fresh, &cfg.data.data, &dir)?;
            if cfg.run.steps < state.step {
                return Err(Error::Run(format!(
                    "--steps {} is below the step of the checkpoint `{}` ({}); pass --steps {} or more to continue \
                     the run, or start a new one with another --out",
                    cfg.run.steps,
                    dir.display(),
                    state.step,
                    state.step + 1
                )));
            }
            if cfg.run.steps == state.step {
                on_event(Event::Warning(&format!(
                    "the checkpoint `{}` is already at step {} = --steps: nothing to train; raise --steps to continue",
                    dir.display(),
                    state.step
                )));
            }
            state.data = state.data.restored();
            run.truncate_after(state.step)?;
            Ok(state)
        }
        (true, None) => {
            run.restart_without_checkpoint()?;
            Ok(fresh)
        }
        (false, _) => {
            if std::fs::metadata(run.metrics_path()).is_ok_and(|m| m.len() > 0) {
                return Err(Error::Run(format!(
                    "`{}` already holds a run; continue it with --resume {0} or choose another --out",
                    run.root.display()
                )));
            }
            Ok(fresh)
        }
    }
}

// -------------------------------------------------------------------- the pieces

/// Points generation at the current weights: quantizes them for the quantized decoder (the
/// weights changed since the last rollout), or keeps the dense path.
fn sync_decoder(engine: &mut Engine, quantized: bool) -> Result<()> {
    if quantized {
        engine.set_cpu_decode(CpuDecode::Quantized)?;
    }
    Ok(())
}

/// How far the sampler's log-probs are from the trainer's on the sampled tokens.
#[derive(Debug, Clone, Copy, Default)]
struct Mismatch {
    /// Mean `|log π_old - log π_sampler|`.
    abs_diff: f64,
    /// Mean k3 estimate of KL(π_sampler ‖ π_old): `r - 1 - ln r`, `r = π_old/π_sampler`.
    k3: f64,
    /// Mean truncated importance weight, when the correction is on.
    tis_weight: Option<f64>,
}

impl Mismatch {
    fn of(samples: &[Sample], sampler: &[Vec<f32>]) -> Self {
        let (mut abs, mut k3, mut n) = (0.0, 0.0, 0usize);
        for (s, q) in samples.iter().zip(sampler) {
            for (&p, &q) in s.old_logp.iter().zip(q) {
                let d = f64::from(p) - f64::from(q);
                abs += d.abs();
                k3 += d.exp() - 1.0 - d;
                n += 1;
            }
        }
        let n = n.max(1) as f64;
        Self { abs_diff: abs / n, k3: k3 / n, tis_weight: None }
    }
}

fn estimator_needs_kl(est: &Estimator) -> bool {
    matches!(est, Estimator::ReinforcePP { kl_coef, .. } | Estimator::Loo { kl_coef, .. } if *kl_coef != 0.0)
}

/// The evaluation sets, each line skipped added to `skipped`.
fn load_eval_sets(cfg: &TrainConfig, fields: &Fields, skipped: &mut Vec<String>) -> Result<Vec<EvalSet>> {
    let mut sets = Vec::new();
    for spec in &cfg.eval.eval_data {
        let d = Dataset::load(spec, fields, cfg.data.task_size, derive_seed(&[cfg.run.seed, 0xE7A1]))?;
        skipped.extend(d.skipped);
        let mut problems = d.problems;
        if cfg.eval.eval_limit > 0 {
            problems.truncate(cfg.eval.eval_limit);
        }
        sets.push(EvalSet { name: d.name, problems });
    }
    Ok(sets)
}

fn run_eval(
    engine: &Engine,
    cfg: &TrainConfig,
    sets: &[EvalSet],
    step: u64,
    out: &mut JsonlWriter,
    on_event: &mut dyn FnMut(Event),
) -> Result<()> {
    let scores =
        sets.iter().map(|s| Ok((s.name.clone(), eval::evaluate(engine, cfg, s, step)?))).collect::<Result<Vec<_>>>()?;
    let line = eval::metrics_line(step, cfg.eval.eval_k.max(1), &scores);
    out.write(&line)?;
    on_event(Event::Eval(&line));
    Ok(())
}

/// The memory plan of the run ([`plan::plan`]) from the policy's shape, the longest prompt of the
/// data plus `--max-new-tokens`, and what the device has. A resumed run keeps the plan it
/// recorded while that still fits (the same micro-batches give the same float sums).
fn memory_plan(
    cfg: &TrainConfig,
    engine: &Engine,
    data: &Dataset,
    available: &Available,
    reference: bool,
    on_event: &mut dyn FnMut(Event),
) -> Result<MemoryPlan> {
    let model = engine.model();
    let mut prompt_tokens = 0;
    for p in &data.problems {
        prompt_tokens = prompt_tokens.max(policy::prompt_ids(engine, cfg, &p.problem)?.len());
    }
    let step_rows = cfg.rollout.prompts_per_step * cfg.rollout.group_size;
    let demand = Demand {
        model: model.config(),
        dtype: model.dtype(),
        cpu: model.device().is_cpu(),
        rows: step_rows.div_ceil(cfg.optim.mini_batches.max(1)),
        prompt_tokens,
        response_tokens: cfg.rollout.max_new_tokens,
        rollout_rows: cfg.rollout.gen_batch.clamp(1, step_rows.max(1)),
        quantized: cfg.quantized_rollouts(),
        reference,
        user_micro_batch: cfg.optim.micro_batch_size,
        user_recompute: cfg.optim.recompute_activations,
    };
    if let (None, Some(kept)) =
        (cfg.optim.micro_batch_size, cfg.memory.as_ref().filter(|m| m.chosen_by == ChosenBy::Auto))
    {
        let same = Demand {
            user_micro_batch: Some(kept.micro_batch_size),
            user_recompute: Some(kept.recompute_activations),
            ..demand.clone()
        };
        match plan::plan(&same, available) {
            Ok(p) if p.predicted_peak_bytes <= p.budget_bytes => {
                return Ok(MemoryPlan { chosen_by: ChosenBy::Auto, ..p })
            }
            _ => on_event(Event::Warning(&format!(
                "the run's micro-batches of {} rows no longer fit the memory available; planning anew (the float sums \
                 of the updates change)",
                kept.micro_batch_size
            ))),
        }
    }
    let chosen = plan::plan(&demand, available)?;
    if chosen.predicted_peak_bytes > chosen.budget_bytes {
        on_event(Event::Warning(&format!(
            "--micro-batch-size {} is predicted to need {:.1} GiB at {} positions per row, more than the {:.1} GiB \
             planned ({:.1} GiB available); leave the flag out to choose a size that fits",
            chosen.micro_batch_size,
            crate::memory::gib(chosen.predicted_peak_bytes),
            chosen.positions,
            crate::memory::gib(chosen.budget_bytes),
            crate::memory::gib(chosen.available_bytes),
        )));
    }
    Ok(chosen)
}

/// Log-probs of every sample's response under `reference` (no autograd), in rows of at most 64,
/// or of the planned micro-batch when it splits a mini-batch.
fn detached_logprobs(
    reference: &Model,
    samples: &[Sample],
    cfg: &TrainConfig,
    pad: u32,
    memory: &MemoryPlan,
) -> Result<Vec<Vec<f32>>> {
    let mut out = Vec::with_capacity(samples.len());
    for rows in samples.chunks(memory.detached_rows()) {
        let pairs: Vec<(&[u32], &[u32])> = rows.iter().map(|s| (s.prompt.as_slice(), s.response.as_slice())).collect();
        let seqs = SequenceBatch::new(&pairs, pad, &reference.device())?;
        let lp = policy::response_logprobs_detached(reference, &seqs, cfg.rollout.temperature)?;
        let host: Vec<Vec<f32>> = lp.logp.to_dtype(DType::F32)?.to_vec2()?;
        for (row, s) in host.into_iter().zip(rows) {
            out.push(row[..s.response.len()].to_vec());
        }
    }
    Ok(out)
}

fn compute_advantages(est: &Estimator, samples: &[Sample], ref_logp: Option<&[Vec<f32>]>) -> Result<Vec<Vec<f64>>> {
    if samples.is_empty() {
        return Ok(Vec::new());
    }
    let rewards: Vec<f64> = samples.iter().map(|s| s.reward.total).collect();
    let groups: Vec<usize> = samples.iter().map(|s| s.group).collect();
    let lengths: Vec<usize> = samples.iter().map(|s| s.response.len()).collect();
    // k1 KL of π_old vs π_ref per token, for estimators that shape rewards with it.
    let kl: Option<Vec<Vec<f64>>> = ref_logp.map(|r| {
        samples
            .iter()
            .zip(r)
            .map(|(s, r)| s.old_logp.iter().zip(r).map(|(&o, &r)| f64::from(o) - f64::from(r)).collect())
            .collect()
    });
    let ro = Rollout { rewards: &rewards, groups: &groups, lengths: &lengths, kl: kl.as_deref() };
    Ok(advantage::compute(est, &ro)?)
}

/// Splits `items` into `n` contiguous parts whose sizes differ by at most one (no empty part).
pub fn split_even(items: &[usize], n: usize) -> Vec<Vec<usize>> {
    let n = n.clamp(1, items.len().max(1));
    let (base, extra) = (items.len() / n, items.len() % n);
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for i in 0..n {
        let len = base + usize::from(i < extra);
        out.push(items[start..start + len].to_vec());
        start += len;
    }
    out.retain(|p| !p.is_empty());
    out
}

struct UpdateCtx<'a> {
    cfg: &'a TrainConfig,
    loss_cfg: &'a LossConfig,
    model: &'a Model,
    samples: &'a [Sample],
    advantages: &'a [Vec<f64>],
    ref_logp: Option<&'a [Vec<f32>]>,
    inject_nan: bool,
    /// Rows per forward/backward.
    micro: usize,
    /// Recompute activations layer by layer.
    recompute: bool,
    /// Set when π_old is this update's own detached forward (quantized rollouts, one update per
    /// step): the sampler's log-probs, for the mismatch metrics and the truncated IS weight.
    sampler_logp: Option<&'a [Vec<f32>]>,
    pad: u32,
}

enum Gradients {
    Ok(Vec<Option<Tensor>>),
    Bad(String),
}

/// Running sums over the updates of one step.
#[derive(Default)]
struct UpdateStats {
    updates: usize,
    skipped: usize,
    causes: Vec<String>,
    loss: f64,
    kl_ref: Option<f64>,
    grad_norms: Vec<f64>,
    tokens: f64,
    ln: f64,
    hp: f64,
    lp: f64,
    hn: f64,
    objective_clip: f64,
    ratio_sum: f64,
    ratio_min: f64,
    ratio_max: f64,
    kl_old_k3: f64,
    entropy: f64,
    /// Mean CPGD epoch weight of each corrected pass.
    cpgd_weights: Vec<f64>,
    /// Sampler/trainer mismatch of quantized rollouts.
    mismatch: Option<Mismatch>,
}

impl UpdateStats {
    fn add_tokens(&mut self, m: &Metrics) {
        let n = m.n_tokens as f64;
        if n == 0.0 {
            return;
        }
        if self.tokens == 0.0 {
            (self.ratio_min, self.ratio_max) = (f64::INFINITY, f64::NEG_INFINITY);
        }
        self.tokens += n;
        self.ln += m.clipfrac_low * n;
        self.hp += m.clipfrac_high * n;
        self.lp += m.clipfrac_lp * n;
        self.hn += m.clipfrac_hn * n;
        self.objective_clip += m.clipfrac_objective * n;
        self.ratio_sum += m.ratio_mean * n;
        self.ratio_min = self.ratio_min.min(m.ratio_min);
        self.ratio_max = self.ratio_max.max(m.ratio_max);
        self.kl_old_k3 += m.ppo_kl_k3 * n;
        self.entropy += m.entropy.unwrap_or(0.0) * n;
    }
}

fn scalar(t: &Tensor) -> Result<f64> {
    Ok(t.to_dtype(DType::F64)?.to_scalar::<f64>()?)
}

/// Forward + loss + backward of one mini-batch (in micro-batches, with the mini-batch's global
/// normalisers); a non-finite log-prob or loss term is returned as [`Gradients::Bad`].
fn compute_gradients(ctx: &UpdateCtx, rows: &[usize], acc: &mut UpdateStats) -> Result<Gradients> {
    let samples = ctx.samples;
    let lengths: Vec<usize> = rows.iter().map(|&i| samples[i].response.len()).collect();
    let groups: Vec<usize> = rows.iter().map(|&i| samples[i].group).collect();
    let global = GlobalNorm::from_lengths(&lengths, Some(&groups))?;
    let vars = ctx.model.vars();
    let device = ctx.model.device();
    let pad = ctx.pad;
    let mut grads: Vec<Option<Tensor>> = vec![None; vars.len()];
    let (mut loss, mut kl) = (0.0, None::<f64>);
    let mut micro_metrics = Vec::new();
    // Sums of |d|, k3, tokens and TIS weights over the micro-batches (π_old from this forward).
    let mut mismatch: Option<(f64, f64, f64, f64)> = None;
    for chunk in rows.chunks(ctx.micro.max(1)) {
        let pairs: Vec<(&[u32], &[u32])> =
            chunk.iter().map(|&i| (samples[i].prompt.as_slice(), samples[i].response.as_slice())).collect();
        let seqs = SequenceBatch::new(&pairs, pad, &device)?;
        let (lp, recompute) = if ctx.recompute {
            let (lp, r) = policy::response_logprobs_recomputed(ctx.model, &seqs, ctx.cfg.rollout.temperature)?;
            (lp, Some(r))
        } else {
            (policy::response_logprobs(ctx.model, &seqs, ctx.cfg.rollout.temperature)?, None)
        };
        let dtype = lp.logp.dtype();
        let width = seqs.response_width;
        let mask = seqs.mask(dtype, &device)?;
        // Padding is selected away by the objectives, but a NaN there would still poison the
        // finiteness check: test valid tokens only.
        let probe = mask.ne(0.0)?.where_cond(&lp.logp.detach(), &mask.zeros_like()?)?;
        if !scalar(&probe.sum_all()?)?.is_finite() {
            return Ok(Gradients::Bad("non-finite log-probs (the logits hold NaN or inf)".into()));
        }
        let rows_of = |f: &dyn Fn(usize) -> Vec<f64>| -> Vec<Vec<f64>> { chunk.iter().map(|&i| f(i)).collect() };
        let mut adv = advantage::to_tensor(&rows_of(&|i| ctx.advantages[i].clone()), width, dtype, &device)?;
        let old = match ctx.sampler_logp {
            Some(sampler) => {
                // π_old = this forward, detached; the sampler's log-probs give the mismatch.
                let old = lp.logp.detach();
                let q = advantage::to_tensor(
                    &rows_of(&|i| sampler[i].iter().map(|&x| f64::from(x)).collect()),
                    width,
                    dtype,
                    &device,
                )?;
                let d = ((&old - &q)? * &mask)?;
                let n = scalar(&mask.sum_all()?)?;
                let k3 = ((d.exp()? - 1.0)? - &d)?;
                let m = mismatch.get_or_insert((0.0, 0.0, 0.0, 0.0));
                m.0 += scalar(&d.abs()?.sum_all()?)?;
                m.1 += scalar(&k3.sum_all()?)?;
                m.2 += n;
                if let Some(cap) = ctx.cfg.rollout.tis_cap {
                    let w = (d.exp()?.clamp(0.0, cap)? * &mask)?;
                    m.3 += scalar(&w.sum_all()?)?;
                    adv = (adv * w)?;
                }
                old
            }
            None => advantage::to_tensor(
                &rows_of(&|i| samples[i].old_logp.iter().map(|&x| f64::from(x)).collect()),
                width,
                dtype,
                &device,
            )?,
        };
        let mut inp = LossInputs::new(lp.logp, old, adv, mask)?;
        if let Some(r) = ctx.ref_logp {
            let rt = advantage::to_tensor(
                &rows_of(&|i| r[i].iter().map(|&x| f64::from(x)).collect()),
                width,
                dtype,
                &device,
            )?;
            inp = inp.with_ref(rt)?;
        }
        let entropy = if ctx.loss_cfg.entropy_coef != 0.0 { lp.entropy } else { lp.entropy.detach() };
        inp = inp.with_entropy(entropy)?;
        let chunk_groups: Vec<usize> = chunk.iter().map(|&i| samples[i].group).collect();
        let mut out = ctx.loss_cfg.loss_with(&inp, Some(&chunk_groups), Some(&global))?;
        if ctx.inject_nan {
            out.policy = out.policy.affine(f64::NAN, 0.0)?;
            out.total = out.total.affine(f64::NAN, 0.0)?;
        }
        let terms = [
            ("policy", Some(&out.policy)),
            ("drift", out.drift.as_ref()),
            ("reference-KL", out.kl.as_ref()),
            ("entropy", out.entropy.as_ref()),
            ("total", Some(&out.total)),
        ];
        for (name, t) in terms {
            if let Some(t) = t {
                let v = scalar(t)?;
                if !v.is_finite() {
                    return Ok(Gradients::Bad(format!("non-finite {name} loss term ({v})")));
                }
            }
        }
        loss += scalar(&out.total)?;
        if let Some(k) = &out.kl {
            kl = Some(kl.unwrap_or(0.0) + scalar(k)?);
        }
        micro_metrics.push(batch_metrics(&inp, &out.terms.regions)?);
        let mut g = out.total.backward()?;
        if let Some(r) = recompute {
            r.backward(&mut g)?;
        }
        // Detached: candle leaves a parameter's gradient attached to the forward graph it was
        // computed from, so a kept gradient would keep this micro-batch's activations alive.
        for (slot, (_, var)) in grads.iter_mut().zip(vars) {
            if let Some(t) = g.get(var) {
                let t = t.detach();
                *slot = Some(match slot.take() {
                    Some(a) => (a + t)?,
                    None => t,
                });
            }
        }
    }
    if let Some((abs, k3, n, w)) = mismatch {
        let n = n.max(1.0);
        acc.mismatch =
            Some(Mismatch { abs_diff: abs / n, k3: k3 / n, tis_weight: ctx.cfg.rollout.tis_cap.map(|_| w / n) });
    }
    acc.updates += 1;
    acc.loss += loss;
    if let Some(k) = kl {
        acc.kl_ref = Some(acc.kl_ref.unwrap_or(0.0) + k);
    }
    for m in &micro_metrics {
        acc.add_tokens(m);
    }
    Ok(Gradients::Ok(grads))
}

fn skip_update(
    state: &mut TrainerState,
    acc: &mut UpdateStats,
    cfg: &TrainConfig,
    step: u64,
    cause: &str,
    on_event: &mut dyn FnMut(Event),
) -> Result<()> {
    let message = format!("step {step}: {cause}; update skipped");
    on_event(Event::Warning(&message));
    acc.skipped += 1;
    acc.causes.push(message.clone());
    state.skipped_total += 1;
    state.bad_streak += 1;
    if state.bad_streak >= cfg.run.max_bad_steps {
        return Err(Error::TooManyBadSteps { count: state.bad_streak, last: message });
    }
    Ok(())
}

fn mean_std(v: &[f64]) -> (f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    (mean, (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt())
}

#[allow(clippy::too_many_arguments)]
fn metrics_line(
    step: u64,
    batch: &RolloutBatch,
    acc: &UpdateStats,
    lr: f64,
    rollout_s: f64,
    train_s: f64,
    step_s: f64,
) -> Value {
    let scores: Vec<f64> = batch.generated.iter().map(|r| r.score).collect();
    let (reward_mean, reward_std) = mean_std(&scores);
    let n = batch.generated.len().max(1) as f64;
    let acc_frac = batch.generated.iter().filter(|r| r.correct).count() as f64 / n;
    let lens: Vec<f64> = batch.generated_lengths.iter().map(|&(l, _)| l as f64).collect();
    let clipped = batch.generated_lengths.iter().filter(|&&(_, t)| t).count() as f64 / n;
    let tokens: f64 = lens.iter().sum();
    let t = acc.tokens;
    let frac = |x: f64| if t > 0.0 { Value::from(x / t) } else { Value::Null };
    let per_update = |x: f64| if acc.updates > 0 { Value::from(x / acc.updates as f64) } else { Value::Null };
    let rewards_seen: Vec<f64> = batch.samples.iter().map(|s| s.reward.total).collect();
    let groups: Vec<usize> = batch.samples.iter().map(|s| s.group).collect();
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    put("step", step.into());
    put("reward/mean", reward_mean.into());
    put("reward/std", reward_std.into());
    put("acc", acc_frac.into());
    put("response_length/mean", mean_std(&lens).0.into());
    put("response_length/max", lens.iter().copied().fold(0.0, f64::max).into());
    put("response_length/clip_ratio", clipped.into());
    put("clip_frac/LN", frac(acc.ln));
    put("clip_frac/HP", frac(acc.hp));
    put("clip_frac/LP", frac(acc.lp));
    put("clip_frac/HN", frac(acc.hn));
    put("clip_frac/total", frac(acc.ln + acc.hp + acc.lp + acc.hn));
    put("clip_frac/objective", frac(acc.objective_clip));
    put("ratio/mean", frac(acc.ratio_sum));
    put("ratio/min", if t > 0.0 { acc.ratio_min.into() } else { Value::Null });
    put("ratio/max", if t > 0.0 { acc.ratio_max.into() } else { Value::Null });
    put("kl/old_k3", frac(acc.kl_old_k3));
    put("kl/ref", acc.kl_ref.map_or(Value::Null, per_update));
    put("entropy", frac(acc.entropy));
    put("loss", per_update(acc.loss));
    put("grad_norm", if acc.grad_norms.is_empty() { Value::Null } else { mean_std(&acc.grad_norms).0.into() });
    put("lr", lr.into());
    put("time/rollout_s", rollout_s.into());
    put("time/train_s", train_s.into());
    put("time/step_s", step_s.into());
    put("tokens_per_s", (tokens / step_s.max(1e-9)).into());
    put("skipped", acc.skipped.into());
    put("updates", acc.updates.into());
    put("frac_zero_std_groups", frac_zero_std_groups(&rewards_seen, &groups).into());
    put("dynamic_sampling/dropped_groups", batch.dropped_groups.into());
    if !acc.cpgd_weights.is_empty() {
        put("cpgd/epoch_weight_mean", mean_std(&acc.cpgd_weights).0.into());
    }
    if !acc.causes.is_empty() {
        put("nan_guard", acc.causes.clone().into());
    }
    Value::Object(m)
}
