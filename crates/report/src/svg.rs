//! Charts as inline SVG text, for pages that must open offline: a stacked
//! horizontal bar chart of counts (an integer axis) and a line chart on a
//! logarithmic axis (latencies, which span milliseconds to seconds). Both
//! put the legend beside the plot area, never over the data, and a chart
//! with nothing to draw says why in its place. Written by hand: a few
//! elements each, and the text stays searchable in the page.

use crate::html::escape;
use std::fmt::Write as _;

/// Width of every chart, in SVG units.
pub const WIDTH: f64 = 760.0;
/// Room left of the plot area, for the bars' labels and the y ticks.
const LEFT: f64 = 120.0;
/// Room right of the plot area, for the legend.
const RIGHT: f64 = 170.0;
/// Room above the plot area, for the title.
const TOP: f64 = 36.0;
/// Room below it, for the x ticks and the axis label.
const BOTTOM: f64 = 52.0;
/// Height of one bar and the gap after it.
const BAR: f64 = 22.0;
const BAR_GAP: f64 = 10.0;
/// Height of a line chart's plot area.
const PLOT_HEIGHT: f64 = 260.0;
/// Height of a chart that says why it is empty.
const EMPTY_HEIGHT: f64 = 120.0;
/// Text colour and grid colour.
const INK: &str = "#222";
const GRID: &str = "#ddd";

/// One part of a bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    /// Its name in the legend (`pass`, `fail`).
    pub name: String,
    /// Its count.
    pub value: u64,
    /// Its fill colour (`#4caf50`).
    pub colour: String,
}

/// One bar: a label and its segments, left to right.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    /// The label left of the bar (a system's name).
    pub label: String,
    /// Its parts.
    pub segments: Vec<Segment>,
}

/// One line of a line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Its name in the legend.
    pub name: String,
    /// Its colour.
    pub colour: String,
    /// Dashed (a second statistic of the same system).
    pub dashed: bool,
    /// Its points, (x, y), in x order.
    pub points: Vec<(f64, f64)>,
}

/// Ticks of an integer axis from 0: a step of 1, 2 or 5 times a power of
/// ten, so that at most 8 steps reach `max` or just past it (so every tick
/// is a whole number).
pub fn integer_ticks(max: u64) -> Vec<u64> {
    let max = max.max(1);
    let mut step = 1u64;
    'search: loop {
        for factor in [1, 2, 5] {
            let s = step * factor;
            if max.div_ceil(s) <= 8 {
                step = s;
                break 'search;
            }
        }
        step *= 10;
    }
    let top = max.div_ceil(step) * step;
    (0..=top / step).map(|i| i * step).collect()
}

/// Ticks of a logarithmic axis covering `lo..=hi` (both > 0): every power
/// of ten from the one at or below `lo` to the one at or above `hi`, with
/// 2 and 5 between them when the axis spans three decades or fewer.
pub fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let lo = lo.max(f64::MIN_POSITIVE);
    let first = lo.log10().floor() as i32;
    let last = (hi.max(lo).log10().ceil() as i32).max(first + 1);
    let fine = last - first <= 3;
    let mut ticks = Vec::new();
    for decade in first..=last {
        let base = 10f64.powi(decade);
        ticks.push(base);
        if fine && decade < last {
            ticks.push(2.0 * base);
            ticks.push(5.0 * base);
        }
    }
    ticks
}

/// A tick label: whole numbers with thousands separators, fractions as
/// they are.
fn tick_label(value: f64) -> String {
    if value >= 1.0 && value.fract() == 0.0 {
        let digits = format!("{value:.0}");
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    } else {
        format!("{value}")
    }
}

fn open(height: f64, title: &str, out: &mut String) {
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" width=\"{WIDTH}\" height=\"{height}\" role=\"img\" aria-label=\"{t}\" font-family=\"sans-serif\" font-size=\"12\">\
         <rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\
         <text x=\"{x}\" y=\"22\" font-size=\"15\" font-weight=\"bold\" fill=\"{INK}\">{t}</text>",
        t = escape(title),
        x = 8.0,
    );
}

/// A chart with nothing to draw: its title, and `reason` where the data
/// would be.
pub fn empty_chart(title: &str, reason: &str) -> String {
    let mut out = String::new();
    open(EMPTY_HEIGHT, title, &mut out);
    let _ = write!(
        out,
        "<rect x=\"8\" y=\"{TOP}\" width=\"{w}\" height=\"{h}\" fill=\"none\" stroke=\"{GRID}\"/>\
         <text class=\"empty\" x=\"{cx}\" y=\"{cy}\" text-anchor=\"middle\" fill=\"#555\">{r}</text></svg>",
        w = WIDTH - 16.0,
        h = EMPTY_HEIGHT - TOP - 12.0,
        cx = WIDTH / 2.0,
        cy = TOP + (EMPTY_HEIGHT - TOP) / 2.0,
        r = escape(reason),
    );
    out
}

/// The legend, right of the plot area: a swatch and a name per entry.
fn legend(entries: &[(String, String, bool)], top: f64, out: &mut String) {
    let x = WIDTH - RIGHT + 16.0;
    for (i, (name, colour, dashed)) in entries.iter().enumerate() {
        let y = top + 16.0 * i as f64;
        let dash = if *dashed {
            " stroke-dasharray=\"4 3\""
        } else {
            ""
        };
        let _ = write!(
            out,
            "<g class=\"legend\"><line x1=\"{x}\" y1=\"{y}\" x2=\"{x2}\" y2=\"{y}\" stroke=\"{c}\" stroke-width=\"8\"{dash}/>\
             <text x=\"{tx}\" y=\"{ty}\" fill=\"{INK}\">{n}</text></g>",
            x2 = x + 18.0,
            c = escape(colour),
            tx = x + 24.0,
            ty = y + 4.0,
            n = escape(name),
        );
    }
}

/// Horizontal stacked bars of counts on an integer axis from 0; the
/// legend names every segment name that has a count. With no count at all
/// it is [`empty_chart`] with `empty_reason`.
pub fn stacked_bars(title: &str, axis_label: &str, bars: &[Bar], empty_reason: &str) -> String {
    let total = |b: &Bar| b.segments.iter().map(|s| s.value).sum::<u64>();
    let max = bars.iter().map(total).max().unwrap_or(0);
    if max == 0 {
        return empty_chart(title, empty_reason);
    }
    let ticks = integer_ticks(max);
    let top_tick = *ticks.last().unwrap_or(&1) as f64;
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = bars.len() as f64 * (BAR + BAR_GAP);
    let height = TOP + plot_h + BOTTOM;
    let x_of = |v: f64| LEFT + plot_w * v / top_tick;
    let mut out = String::new();
    open(height, title, &mut out);
    for t in &ticks {
        let x = x_of(*t as f64);
        let _ = write!(
            out,
            "<line x1=\"{x}\" y1=\"{TOP}\" x2=\"{x}\" y2=\"{y2}\" stroke=\"{GRID}\"/>\
             <text class=\"tick\" x=\"{x}\" y=\"{ty}\" text-anchor=\"middle\" fill=\"{INK}\">{t}</text>",
            y2 = TOP + plot_h,
            ty = TOP + plot_h + 16.0,
        );
    }
    let _ = write!(
        out,
        "<text x=\"{x}\" y=\"{y}\" text-anchor=\"middle\" fill=\"{INK}\">{l}</text>",
        x = LEFT + plot_w / 2.0,
        y = height - 10.0,
        l = escape(axis_label),
    );
    let mut names: Vec<(String, String, bool)> = Vec::new();
    for (i, bar) in bars.iter().enumerate() {
        let y = TOP + BAR_GAP / 2.0 + i as f64 * (BAR + BAR_GAP);
        let _ = write!(
            out,
            "<text x=\"{x}\" y=\"{ty}\" text-anchor=\"end\" fill=\"{INK}\">{l}</text>",
            x = LEFT - 8.0,
            ty = y + BAR / 2.0 + 4.0,
            l = escape(&bar.label),
        );
        let mut at = 0u64;
        for s in bar.segments.iter().filter(|s| s.value > 0) {
            let (x0, x1) = (x_of(at as f64), x_of((at + s.value) as f64));
            let _ = write!(
                out,
                "<rect x=\"{x0}\" y=\"{y}\" width=\"{w}\" height=\"{BAR}\" fill=\"{c}\"><title>{l}: {n} {v}</title></rect>",
                w = x1 - x0,
                c = escape(&s.colour),
                l = escape(&bar.label),
                n = escape(&s.name),
                v = s.value,
            );
            if x1 - x0 >= 18.0 {
                let _ = write!(
                    out,
                    "<text x=\"{x}\" y=\"{ty}\" text-anchor=\"middle\" fill=\"#000\">{v}</text>",
                    x = (x0 + x1) / 2.0,
                    ty = y + BAR / 2.0 + 4.0,
                    v = s.value,
                );
            }
            at += s.value;
            if !names.iter().any(|(n, _, _)| n == &s.name) {
                names.push((s.name.clone(), s.colour.clone(), false));
            }
        }
    }
    legend(&names, TOP + 8.0, &mut out);
    out.push_str("</svg>");
    out
}

/// Lines on a logarithmic y axis (x is linear: conversation length, say).
/// Points with y ≤ 0 cannot be placed on a log axis: they are left out and
/// the chart says how many. With no point to draw it is [`empty_chart`]
/// with `empty_reason`.
pub fn log_lines(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    empty_reason: &str,
) -> String {
    let drawable = |p: &&(f64, f64)| p.1 > 0.0 && p.1.is_finite() && p.0.is_finite();
    let points: Vec<(f64, f64)> = series
        .iter()
        .flat_map(|s| s.points.iter().filter(drawable).copied())
        .collect();
    let dropped = series.iter().map(|s| s.points.len()).sum::<usize>() - points.len();
    if points.is_empty() {
        return empty_chart(title, empty_reason);
    }
    let (x_lo, x_hi) = points.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
        (lo.min(p.0), hi.max(p.0))
    });
    let (y_lo, y_hi) = points.iter().fold((f64::MAX, f64::MIN), |(lo, hi), p| {
        (lo.min(p.1), hi.max(p.1))
    });
    let (x_lo, x_hi) = if x_hi > x_lo {
        (x_lo, x_hi)
    } else {
        (x_lo - 1.0, x_hi + 1.0)
    };
    let ticks = log_ticks(y_lo, y_hi);
    let (t_lo, t_hi) = (ticks[0].log10(), ticks[ticks.len() - 1].log10());
    let plot_w = WIDTH - LEFT - RIGHT;
    let height = TOP + PLOT_HEIGHT + BOTTOM;
    let x_of = |x: f64| LEFT + plot_w * (x - x_lo) / (x_hi - x_lo);
    let y_of = |y: f64| TOP + PLOT_HEIGHT * (1.0 - (y.log10() - t_lo) / (t_hi - t_lo));
    let mut out = String::new();
    open(height, title, &mut out);
    for t in &ticks {
        let y = y_of(*t);
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" y1=\"{y}\" x2=\"{x2}\" y2=\"{y}\" stroke=\"{GRID}\"/>\
             <text class=\"tick\" x=\"{tx}\" y=\"{ty}\" text-anchor=\"end\" fill=\"{INK}\">{l}</text>",
            x2 = LEFT + plot_w,
            tx = LEFT - 6.0,
            ty = y + 4.0,
            l = tick_label(*t),
        );
    }
    let whole = x_lo.fract() == 0.0 && x_hi.fract() == 0.0 && x_hi - x_lo <= 40.0;
    let x_ticks: Vec<f64> = if whole {
        (x_lo as i64..=x_hi as i64).map(|v| v as f64).collect()
    } else {
        (0..=4)
            .map(|i| x_lo + (x_hi - x_lo) * i as f64 / 4.0)
            .collect()
    };
    for t in &x_ticks {
        let _ = write!(
            out,
            "<text class=\"tick\" x=\"{x}\" y=\"{y}\" text-anchor=\"middle\" fill=\"{INK}\">{l}</text>",
            x = x_of(*t),
            y = TOP + PLOT_HEIGHT + 16.0,
            l = if whole { format!("{t}") } else { format!("{t:.1}") },
        );
    }
    let _ = write!(
        out,
        "<rect x=\"{LEFT}\" y=\"{TOP}\" width=\"{plot_w}\" height=\"{PLOT_HEIGHT}\" fill=\"none\" stroke=\"#999\"/>\
         <text x=\"{x}\" y=\"{y}\" text-anchor=\"middle\" fill=\"{INK}\">{xl}</text>\
         <text x=\"14\" y=\"{cy}\" text-anchor=\"middle\" fill=\"{INK}\" transform=\"rotate(-90 14 {cy})\">{yl}</text>",
        x = LEFT + plot_w / 2.0,
        y = height - 10.0,
        cy = TOP + PLOT_HEIGHT / 2.0,
        xl = escape(x_label),
        yl = escape(&format!("{y_label} (log scale)")),
    );
    let mut names = Vec::new();
    for s in series {
        let pts: Vec<String> = s
            .points
            .iter()
            .filter(drawable)
            .map(|&(x, y)| format!("{:.1},{:.1}", x_of(x), y_of(y)))
            .collect();
        if pts.is_empty() {
            continue;
        }
        let dash = if s.dashed {
            " stroke-dasharray=\"6 4\""
        } else {
            ""
        };
        let _ = write!(
            out,
            "<polyline class=\"series\" points=\"{p}\" fill=\"none\" stroke=\"{c}\" stroke-width=\"2\"{dash}><title>{n}</title></polyline>",
            p = pts.join(" "),
            c = escape(&s.colour),
            n = escape(&s.name),
        );
        for p in &pts {
            let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
            let _ = write!(
                out,
                "<circle cx=\"{x}\" cy=\"{y}\" r=\"2.5\" fill=\"{c}\"/>",
                c = escape(&s.colour)
            );
        }
        names.push((s.name.clone(), s.colour.clone(), s.dashed));
    }
    legend(&names, TOP + 8.0, &mut out);
    if dropped > 0 {
        let _ = write!(
            out,
            "<text x=\"{LEFT}\" y=\"{y}\" fill=\"#555\">{dropped} point(s) at 0 ms or below are not drawn on the log axis</text>",
            y = height - 26.0,
        );
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
#[path = "svg_tests.rs"]
mod tests;
