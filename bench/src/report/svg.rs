//! A hand-written SVG line plot of Pass@k against k (log2 axis), one line per suite.

use crate::metrics::SuiteMetrics;
use std::fmt::Write;

const PALETTE: &[&str] = &["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The plot as an SVG document.
pub fn passk_svg(suites: &[(String, SuiteMetrics)]) -> String {
    let (w, h) = (720.0, 420.0);
    let (left, right, top, bottom) = (60.0, 170.0, 30.0, 50.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let max_k = suites.iter().flat_map(|(_, m)| m.pass_at.iter().map(|(k, _)| *k)).max().unwrap_or(1).max(1);
    let max_x = (max_k as f64).log2().max(1.0);
    let x = |k: usize| left + pw * (k as f64).log2() / max_x;
    let y = |v: f64| top + ph * (1.0 - v.clamp(0.0, 1.0));
    let mut s = String::new();
    let _ = writeln!(s, r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#);
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="{}" y="18" text-anchor="middle" font-size="14">Pass@k by suite</text>"#, left + pw / 2.0);
    for i in 0..=5 {
        let v = i as f64 / 5.0;
        let yy = y(v);
        let _ = writeln!(s, r##"<line x1="{left}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#ddd"/>"##, left + pw);
        let _ = writeln!(s, r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}%</text>"#, left - 6.0, yy + 4.0, i * 20);
    }
    let mut k = 1;
    while k <= max_k {
        let xx = x(k);
        let _ = writeln!(s, r##"<line x1="{xx:.1}" y1="{top}" x2="{xx:.1}" y2="{:.1}" stroke="#eee"/>"##, top + ph);
        let _ = writeln!(s, r#"<text x="{xx:.1}" y="{:.1}" text-anchor="middle">{k}</text>"#, top + ph + 16.0);
        k *= 2;
    }
    let _ = writeln!(s, r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">k (samples)</text>"#, left + pw / 2.0, h - 10.0);
    let _ = writeln!(s, r##"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>"##);
    for (i, (name, m)) in suites.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let pts: Vec<String> = m.pass_at.iter().map(|(k, v)| format!("{:.1},{:.1}", x(*k), y(*v))).collect();
        if pts.len() > 1 {
            let _ = writeln!(s, r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#, pts.join(" "));
        }
        for (k, v) in &m.pass_at {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>{} pass@{k} = {:.1}%</title></circle>"#,
                x(*k),
                y(*v),
                esc(name),
                100.0 * v
            );
        }
        let ly = top + 10.0 + 18.0 * i as f64;
        let lx = left + pw + 14.0;
        let _ = writeln!(s, r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="2"/>"#, lx + 18.0);
        let _ = writeln!(s, r#"<text x="{}" y="{}">{}</text>"#, lx + 24.0, ly + 4.0, esc(name));
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::ProblemTally;

    #[test]
    fn one_line_per_suite_and_escaped_names() {
        let t = ProblemTally { n: 4, correct: 1, ..ProblemTally::default() };
        let m = SuiteMetrics::from_tallies([&t]);
        let svg = passk_svg(&[("a<b".into(), m.clone()), ("c".into(), m)]);
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("a&lt;b"));
        assert_eq!(svg.matches("<circle").count(), 6); // k = 1, 2, 4 for each suite
    }
}
