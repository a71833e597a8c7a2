//! Counters and the Prometheus text of `GET /metrics`.

use super::App;
use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Samples kept for the quantiles (the most recent ones).
const WINDOW: usize = 10_000;

/// The routes with their own metrics label (anything else is `other`).
pub(super) const ROUTES: [&str; 5] = ["/get_reward", "/slime", "/score", "/health", "/metrics"];

/// Recent samples for quantiles, and the sum and count of all of them.
#[derive(Default)]
pub(super) struct Window {
    recent: VecDeque<f64>,
    sum: f64,
    count: u64,
}

impl Window {
    pub fn push(&mut self, x: f64) {
        if self.recent.len() == WINDOW {
            self.recent.pop_front();
        }
        self.recent.push_back(x);
        self.sum += x;
        self.count += 1;
    }

    /// A Prometheus summary: the 0.5, 0.9 and 0.99 quantiles of the recent samples, sum, count.
    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help} (quantiles over the last {WINDOW}).");
        let _ = writeln!(out, "# TYPE {name} summary");
        let mut sorted: Vec<f64> = self.recent.iter().copied().collect();
        sorted.sort_by(f64::total_cmp);
        for q in [0.5, 0.9, 0.99] {
            let v = match sorted.len() {
                0 => f64::NAN,
                n => sorted[((q * n as f64).ceil() as usize).clamp(1, n) - 1],
            };
            let _ = writeln!(out, "{name}{{quantile=\"{q}\"}} {v}");
        }
        let _ = writeln!(out, "{name}_sum {}", self.sum);
        let _ = writeln!(out, "{name}_count {}", self.count);
    }
}

pub(super) struct Metrics {
    start: Instant,
    /// Requests by route and status code.
    requests: Mutex<BTreeMap<(&'static str, u16), u64>>,
    items: AtomicU64,
    invalid_golds: AtomicU64,
    latency: Mutex<Window>,
}

impl Metrics {
    pub fn new() -> Self {
        Metrics {
            start: Instant::now(),
            requests: Mutex::new(BTreeMap::new()),
            items: AtomicU64::new(0),
            invalid_golds: AtomicU64::new(0),
            latency: Mutex::new(Window::default()),
        }
    }

    pub fn record(&self, route: &'static str, status: u16, items: usize, invalid_golds: usize, secs: f64) {
        if let Ok(mut m) = self.requests.lock() {
            *m.entry((route, status)).or_insert(0) += 1;
        }
        self.items.fetch_add(items as u64, Ordering::Relaxed);
        self.invalid_golds.fetch_add(invalid_golds as u64, Ordering::Relaxed);
        if matches!(route, "/get_reward" | "/slime" | "/score") {
            if let Ok(mut l) = self.latency.lock() {
                l.push(secs);
            }
        }
    }
}

/// One metric with its help and type lines.
fn metric(out: &mut String, name: &str, kind: &str, help: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}");
}

/// The Prometheus text exposition of every metric.
pub(super) fn render(app: &App) -> String {
    let (m, q) = (&app.metrics, &app.queue);
    let mut out = String::new();
    out.push_str("# HELP rlverify_requests_total HTTP requests answered, by route and status code.\n");
    out.push_str("# TYPE rlverify_requests_total counter\n");
    let requests = m.requests.lock().map(|r| r.clone()).unwrap_or_default();
    let mut errors = 0u64;
    for ((route, code), n) in &requests {
        let _ = writeln!(out, "rlverify_requests_total{{route=\"{route}\",code=\"{code}\"}} {n}");
        if *code >= 400 {
            errors += n;
        }
    }
    let counters = [
        ("rlverify_errors_total", "Requests answered with a 4xx or 5xx status.", errors),
        (
            "rlverify_rejected_total",
            "Requests answered 503 because they could not start within --queue-timeout.",
            q.timeouts.load(Ordering::Relaxed),
        ),
        ("rlverify_items_total", "Responses scored.", m.items.load(Ordering::Relaxed)),
        (
            "rlverify_invalid_gold_total",
            "Items whose gold answer could not be read (scored invalid_gold).",
            m.invalid_golds.load(Ordering::Relaxed),
        ),
    ];
    for (name, help, value) in counters {
        metric(&mut out, name, "counter", help, value);
    }
    let (held, bound) = q.held_bytes();
    let gauges = [
        ("rlverify_in_flight", "Scoring requests being scored now (at most --max-in-flight).", q.scoring()),
        ("rlverify_queued", "Requests read and waiting for a scoring slot.", q.queued()),
        ("rlverify_reading", "Requests whose body is arriving.", q.reading()),
        ("rlverify_queue_bytes", "Body bytes held by requests not answered yet.", held),
        ("rlverify_queue_limit_bytes", "The bound on held body bytes (--max-queue).", bound),
    ];
    for (name, help, value) in gauges {
        metric(&mut out, name, "gauge", help, value);
    }
    if let Ok(w) = q.waits.lock() {
        w.render(&mut out, "rlverify_queue_wait_seconds", "Time a request waited for queue room and a scoring slot");
    }
    if let Ok(l) = m.latency.lock() {
        l.render(&mut out, "rlverify_request_duration_seconds", "Scoring request latency, body included");
    }
    metric(
        &mut out,
        "rlverify_uptime_seconds",
        "gauge",
        "Seconds since the server started.",
        format_args!("{:.3}", m.start.elapsed().as_secs_f64()),
    );
    out
}
