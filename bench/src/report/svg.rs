//! Hand-written SVG line charts: [`line_chart_svg`] draws any [`Chart`] (linear or log2 x axis,
//! a 0-100 % or an automatic y axis, one polyline per series, a legend); [`passk_svg`] is
//! Pass@k against k, one line per suite, and [`passk_overlay_svg`] the same for several runs. rltrain's training curves use the same writer.

use crate::metrics::SuiteMetrics;
use std::fmt::Write;

const PALETTE: &[&str] =
    &["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];

/// Escapes text for SVG content and attributes.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// How the x axis maps values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum XAxis {
    /// log2 from 1 to the largest x (at least 2), ticks at powers of two (x must be >= 1).
    Log2,
    /// Linear from the smallest to the largest x, about six round ticks.
    Linear,
}

/// How the y axis maps values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum YAxis {
    /// Fractions drawn as 0-100 %, clamped.
    Percent,
    /// From the smallest to the largest y (padded), about six round ticks.
    Auto,
}

/// One line of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// `(x, y)` points in drawing order; non-finite points are left out.
    pub points: Vec<(f64, f64)>,
    /// Hover text of a dot at each point; `None` draws no dots.
    pub point_titles: Option<Vec<String>>,
    /// A shaded band around the line, `(x, low, high)` in drawing order (a spread over seeds, an
    /// interval); `None` draws none.
    pub band: Option<Vec<(f64, f64, f64)>>,
}

impl Series {
    /// A line without dots.
    pub fn line(name: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series { name: name.into(), points, point_titles: None, band: None }
    }

    /// A line with a shaded band `(x, low, high)` around it.
    pub fn with_band(name: impl Into<String>, points: Vec<(f64, f64)>, band: Vec<(f64, f64, f64)>) -> Series {
        Series { name: name.into(), points, point_titles: None, band: Some(band) }
    }
}

/// A line chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// Title above the plot.
    pub title: String,
    /// Label under the x axis.
    pub x_label: String,
    /// Scale of the x axis.
    pub x_axis: XAxis,
    /// Range of the y axis.
    pub y_axis: YAxis,
    /// The lines, one legend entry each.
    pub series: Vec<Series>,
}

/// Round tick values covering `[lo, hi]`: steps of 1, 2 or 5 times a power of ten.
fn nice_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|s| span / s <= 6.0).unwrap_or(10.0 * mag);
    let first = (lo / step).ceil();
    let last = (hi / step).floor();
    if !(first.is_finite() && last.is_finite()) || last - first > 20.0 {
        return vec![lo, hi];
    }
    (first as i64..=last as i64).map(|i| i as f64 * step).collect()
}

/// A tick label: integers without decimals, else up to 4 significant digits.
fn tick_label(v: f64) -> String {
    if v == v.round() && v.abs() < 1e9 {
        format!("{}", v as i64)
    } else if v.abs() >= 1e-3 && v.abs() < 1e6 {
        let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 8) as usize;
        let s = format!("{v:.digits$}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.2e}")
    }
}

/// The range of finite values, widened when empty or a single value.
fn extent(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) =
        values.filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if lo > hi {
        (0.0, 1.0)
    } else if lo == hi {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo - pad, hi + pad)
    } else {
        (lo, hi)
    }
}

/// The chart as an SVG document.
pub fn line_chart_svg(chart: &Chart) -> String {
    let (w, h) = (720.0, 420.0);
    let (left, right, top, bottom) = (60.0, 170.0, 30.0, 50.0);
    let (pw, ph) = (w - left - right, h - top - bottom);
    let finite = |&(x, y): &(f64, f64)| x.is_finite() && y.is_finite() && (chart.x_axis != XAxis::Log2 || x >= 1.0);
    let all_points = || chart.series.iter().flat_map(|s| s.points.iter().copied().filter(finite));
    let band_edges = || {
        chart
            .series
            .iter()
            .flat_map(|s| s.band.iter().flatten())
            .flat_map(|&(x, lo, hi)| [(x, lo), (x, hi)])
            .filter(finite)
    };
    let (x_lo, x_hi) = match chart.x_axis {
        XAxis::Log2 => (0.0, all_points().map(|p| p.0.log2()).fold(0.0, f64::max).max(1.0)),
        XAxis::Linear => extent(all_points().map(|p| p.0)),
    };
    let (y_lo, y_hi) = match chart.y_axis {
        YAxis::Percent => (0.0, 1.0),
        YAxis::Auto => {
            let (lo, hi) = extent(all_points().chain(band_edges()).map(|p| p.1));
            let pad = (hi - lo) * 0.05;
            (lo - pad, hi + pad)
        }
    };
    let x = |v: f64| {
        let t = if chart.x_axis == XAxis::Log2 { v.log2() } else { v };
        left + pw * (t - x_lo) / (x_hi - x_lo)
    };
    let y = |v: f64| {
        let v = if chart.y_axis == YAxis::Percent { v.clamp(0.0, 1.0) } else { v };
        top + ph * (1.0 - (v - y_lo) / (y_hi - y_lo))
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="18" text-anchor="middle" font-size="14">{}</text>"#,
        left + pw / 2.0,
        esc(&chart.title)
    );
    let y_ticks: Vec<(f64, String)> = match chart.y_axis {
        YAxis::Percent => (0..=5).map(|i| (i as f64 / 5.0, format!("{}%", i * 20))).collect(),
        YAxis::Auto => nice_ticks(y_lo, y_hi).into_iter().map(|v| (v, tick_label(v))).collect(),
    };
    for (v, label) in y_ticks {
        let yy = y(v);
        let _ = writeln!(s, r##"<line x1="{left}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#ddd"/>"##, left + pw);
        let _ = writeln!(s, r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{label}</text>"#, left - 6.0, yy + 4.0);
    }
    let x_ticks: Vec<f64> = match chart.x_axis {
        XAxis::Log2 => {
            let max = all_points().map(|p| p.0).fold(1.0, f64::max);
            std::iter::successors(Some(1.0), |k| Some(k * 2.0)).take_while(|&k| k <= max).collect()
        }
        XAxis::Linear => nice_ticks(x_lo, x_hi),
    };
    for v in x_ticks {
        let xx = x(v);
        let _ = writeln!(s, r##"<line x1="{xx:.1}" y1="{top}" x2="{xx:.1}" y2="{:.1}" stroke="#eee"/>"##, top + ph);
        let _ = writeln!(
            s,
            r#"<text x="{xx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            top + ph + 16.0,
            tick_label(v)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
        left + pw / 2.0,
        h - 10.0,
        esc(&chart.x_label)
    );
    let _ = writeln!(s, r##"<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>"##);
    // Bands first, so that every line is drawn over every band.
    for (i, series) in chart.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let band: Vec<(f64, f64, f64)> =
            series.band.iter().flatten().copied().filter(|&(x, lo, hi)| finite(&(x, lo)) && finite(&(x, hi))).collect();
        if band.len() > 1 {
            let upper = band.iter().map(|&(bx, _, hi)| format!("{:.1},{:.1}", x(bx), y(hi)));
            let lower = band.iter().rev().map(|&(bx, lo, _)| format!("{:.1},{:.1}", x(bx), y(lo)));
            let pts: Vec<String> = upper.chain(lower).collect();
            let _ = writeln!(
                s,
                r#"<polygon fill="{color}" fill-opacity="0.18" stroke="none" points="{}"/>"#,
                pts.join(" ")
            );
        }
    }
    for (i, series) in chart.series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let kept: Vec<(usize, (f64, f64))> =
            series.points.iter().copied().enumerate().filter(|(_, p)| finite(p)).collect();
        let pts: Vec<String> = kept.iter().map(|(_, (px, py))| format!("{:.1},{:.1}", x(*px), y(*py))).collect();
        if pts.len() > 1 {
            let _ =
                writeln!(s, r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#, pts.join(" "));
        }
        if let Some(titles) = &series.point_titles {
            for (j, (px, py)) in &kept {
                let title = titles.get(*j).map(String::as_str).unwrap_or("");
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"><title>{}</title></circle>"#,
                    x(*px),
                    y(*py),
                    esc(title)
                );
            }
        }
        let ly = top + 10.0 + 18.0 * i as f64;
        let lx = left + pw + 14.0;
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{color}" stroke-width="2"/>"#,
            lx + 18.0
        );
        let _ = writeln!(s, r#"<text x="{}" y="{}">{}</text>"#, lx + 24.0, ly + 4.0, esc(&series.name));
    }
    s.push_str("</svg>\n");
    s
}

/// Pass@k against k (log2 axis), one line per suite, a dot with its value at each k.
pub fn passk_svg(suites: &[(String, SuiteMetrics)]) -> String {
    let series = suites
        .iter()
        .map(|(name, m)| Series {
            name: name.clone(),
            points: m.pass_at.iter().map(|(k, v)| (*k as f64, *v)).collect(),
            point_titles: Some(m.pass_at.iter().map(|(k, v)| format!("{name} pass@{k} = {:.1}%", 100.0 * v)).collect()),
            band: None,
        })
        .collect();
    line_chart_svg(&Chart {
        title: "Pass@k by suite".into(),
        x_label: "k (samples)".into(),
        x_axis: XAxis::Log2,
        y_axis: YAxis::Percent,
        series,
    })
}

/// One suite's Pass@k curve: (suite, [(k, value)]).
pub type SuiteCurve = (String, Vec<(usize, f64)>);

/// One run's curves: (run label, curve per suite).
pub type RunCurves = (String, Vec<SuiteCurve>);

/// Pass@k against k of several runs overlaid: one line per run and suite, named `<run> <suite>`.
pub fn passk_overlay_svg(runs: &[RunCurves]) -> String {
    let mut series = Vec::new();
    for (run, per_suite) in runs {
        for (suite, points) in per_suite {
            series.push(Series {
                name: format!("{run} {suite}"),
                points: points.iter().map(|(k, v)| (*k as f64, *v)).collect(),
                point_titles: Some(
                    points.iter().map(|(k, v)| format!("{run} {suite} pass@{k} = {:.1}%", 100.0 * v)).collect(),
                ),
                band: None,
            });
        }
    }
    line_chart_svg(&Chart {
        title: "Pass@k by suite, runs overlaid".into(),
        x_label: "k (samples)".into(),
        x_axis: XAxis::Log2,
        y_axis: YAxis::Percent,
        series,
    })
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

    #[test]
    fn linear_charts_scale_to_the_data_and_skip_non_finite_points() {
        let chart = Chart {
            title: "loss & co".into(),
            x_label: "step".into(),
            x_axis: XAxis::Linear,
            y_axis: YAxis::Auto,
            series: vec![
                Series::line("a", vec![(0.0, 1.0), (10.0, 3.0), (20.0, f64::NAN), (30.0, 2.0)]),
                Series::line("b", vec![(5.0, -1.0)]),
            ],
        };
        let svg = line_chart_svg(&chart);
        assert_eq!(svg.matches("<polyline").count(), 1, "a single point draws no line");
        assert_eq!(svg.matches("<circle").count(), 0);
        assert!(svg.contains("loss &amp; co") && !svg.contains("NaN"));
        let line = svg.lines().find(|l| l.starts_with("<polyline")).unwrap_or_default();
        assert_eq!(line.matches(',').count(), 3, "{line}");
        // x from 0 to 30 fills the plot: the first point at the left edge, the last at the right.
        assert!(line.contains("points=\"60.0,") && line.contains(" 550.0,"), "{line}");
        for tick in [">0<", ">10<", ">20<", ">30<"] {
            assert!(svg.contains(tick), "x tick {tick}");
        }
    }

    #[test]
    fn bands_are_drawn_under_the_lines_and_widen_the_y_axis() {
        let band = vec![(0.0, -5.0, 2.0), (1.0, 0.0, 3.0), (2.0, f64::NAN, 1.0), (3.0, 1.0, 9.0)];
        let chart = Chart {
            title: "acc".into(),
            x_label: "step".into(),
            x_axis: XAxis::Linear,
            y_axis: YAxis::Auto,
            series: vec![
                Series::with_band("grpo", vec![(0.0, 1.0), (1.0, 2.0), (3.0, 4.0)], band),
                Series::line("cfpo", vec![(0.0, 0.5), (3.0, 0.5)]),
            ],
        };
        let svg = line_chart_svg(&chart);
        assert_eq!(svg.matches("<polygon").count(), 1, "only the series with a band");
        let polygon = svg.find("<polygon").unwrap_or(usize::MAX);
        assert!(polygon < svg.find("<polyline").unwrap_or(0), "bands first, lines over them");
        let line = svg.lines().find(|l| l.starts_with("<polygon")).unwrap_or_default();
        assert_eq!(line.matches(',').count(), 6, "three finite band points, upper and lower edge: {line}");
        // The band's -5 and 9 are inside the plot: the y axis covers them, not only the lines.
        assert!(svg.contains(">-5<") && svg.contains(">5<"), "y ticks cover the band");
    }

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(nice_ticks(0.0, 30.0), vec![0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0]);
        assert_eq!(nice_ticks(0.0, 100.0), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(nice_ticks(0.13, 0.91), vec![0.2, 0.4, 0.6000000000000001, 0.8]);
        assert_eq!(tick_label(0.6000000000000001), "0.6");
        assert_eq!(tick_label(1500.0), "1500");
        assert_eq!(tick_label(0.00012), "1.20e-4");
        assert_eq!(tick_label(0.125), "0.125");
    }
}
