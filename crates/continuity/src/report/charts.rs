//! How each chart of the report is drawn: one function per chart, generic
//! over the plotters backend, with sizes and colours as named constants.
//! `plots.rs` names the files; [`cb_report::plot`] owns the formats and the font.

use super::plot_data::{clo_deltas, ecdf, latency_by_length, LengthLatency};
use super::plots::Chart;
use super::ReportData;
use cb_report::plot::{
    caption_style, draw_empty, label_style, system_colour, tick_style, DrawResult, INK, MARGIN,
    X_LABEL_AREA, Y_LABEL_AREA,
};
use cb_stats::percentile_type7;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Colour of the median marker line on the CLO chart.
const MEDIAN_COLOUR: RGBColor = RGBColor(0x2c, 0xa0, 0x2c);
/// Colour of the P95 marker line on the CLO chart.
const P95_COLOUR: RGBColor = RGBColor(0xff, 0x7f, 0x0e);
/// Share of a category's width the bars of all systems take.
const GROUP_WIDTH: f64 = 0.8;
/// Top of the CPR axis, percent: the space above 100 holds the legend.
const CPR_AXIS_TOP: f64 = 132.0;
/// Latency axis top as a multiple of the largest value (room for the legend).
const LATENCY_HEADROOM: f64 = 1.3;
/// Light grid lines between two labelled ones.
const MAX_LIGHT_LINES: usize = 1;
/// Gap between the x axis and the category names, pixels.
const LABEL_GAP: i32 = 8;
/// Width of a system's line and markers on the latency chart, pixels.
const MARKER_SIZE: u32 = 5;

/// Draws `chart` on `root`.
pub(super) fn draw<DB: DrawingBackend>(
    chart: Chart,
    root: &DrawingArea<DB, Shift>,
    data: &ReportData,
) -> Result<(), String> {
    match chart {
        Chart::CprByFault => draw_cpr_by_fault(root, data),
        Chart::Clo => draw_clo(root, data),
        Chart::CloByLength => draw_clo_by_length(root, data),
        Chart::LatencyByLength => draw_latency_by_length(root, data),
    }
    .map_err(|e| e.to_string())
}

/// Grouped bars: one group per fault mode (and "all"), one bar per system,
/// with the pooled Wilson interval as an error bar.
fn draw_cpr_by_fault<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ReportData,
) -> DrawResult<DB> {
    let systems = &data.summary.systems;
    let mut categories: Vec<String> = Vec::new();
    for system in systems {
        for group in &system.cpr_by_fault {
            if !categories.contains(&group.key) {
                categories.push(group.key.clone());
            }
        }
    }
    categories.push("all".to_string());
    let caption = "CPR by fault mode (bars: pooled Wilson interval)";
    if systems.is_empty() {
        return draw_empty(root, caption, "no system in this report");
    }
    // A chart of empty axes reads as "CPR 0"; say that nothing was measured.
    if systems.iter().all(|s| s.cpr.rate.is_none()) {
        return draw_empty(root, caption, "no failover event in this report");
    }
    let n = categories.len() as f64;
    let mut chart = ChartBuilder::on(root)
        .caption(caption, caption_style())
        .margin(MARGIN)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(0.0..n, 0.0..CPR_AXIS_TOP)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_desc("fault mode at the primary")
        .y_desc("CPR (%)")
        .axis_desc_style(label_style())
        .label_style(tick_style())
        .max_light_lines(MAX_LIGHT_LINES)
        .y_label_formatter(&|y| {
            // The space above 100 % holds the legend, not values.
            if *y <= 100.0 {
                format!("{y:.0}")
            } else {
                String::new()
            }
        })
        .draw()?;
    // Category names under the centre of each group (plotters' own labels
    // sit on "nice" numbers, not on the groups).
    for (c, key) in categories.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(c as f64 + 0.5, 0.0));
        root.draw(&Text::new(
            key.clone(),
            (px, py + LABEL_GAP),
            tick_style().pos(Pos::new(HPos::Center, VPos::Top)),
        ))?;
    }
    let bar_width = GROUP_WIDTH / systems.len() as f64;
    for (s, system) in systems.iter().enumerate() {
        let colour = system_colour(s);
        // Only measured rates get a bar: a group without events has none.
        let rates: Vec<(f64, f64, cb_stats::Interval)> = categories
            .iter()
            .enumerate()
            .filter_map(|(c, key)| {
                let rate = if key == "all" {
                    Some(&system.cpr)
                } else {
                    system
                        .cpr_by_fault
                        .iter()
                        .find(|g| &g.key == key)
                        .map(|g| &g.rate)
                };
                let left = c as f64 + (1.0 - GROUP_WIDTH) / 2.0 + s as f64 * bar_width;
                let r = rate?;
                Some((left, r.rate?, r.wilson?))
            })
            .collect();
        chart
            .draw_series(rates.iter().map(|(left, r, _)| {
                Rectangle::new(
                    [(*left, 0.0), (left + bar_width * 0.9, r * 100.0)],
                    colour.filled(),
                )
            }))?
            .label(system.name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], colour.filled()));
        let cap = bar_width * 0.2;
        chart.draw_series(rates.iter().flat_map(|(left, _, w)| {
            let mid = left + bar_width * 0.45;
            let (lo, hi) = (w.lo * 100.0, w.hi * 100.0);
            [
                PathElement::new(vec![(mid, lo), (mid, hi)], INK.stroke_width(2)),
                PathElement::new(vec![(mid - cap, lo), (mid + cap, lo)], INK.stroke_width(2)),
                PathElement::new(vec![(mid - cap, hi), (mid + cap, hi)], INK.stroke_width(2)),
            ]
        }))?;
        chart.draw_series(rates.iter().map(|(left, r, w)| {
            Text::new(
                format!("{:.1}", r * 100.0),
                (left + bar_width * 0.1, w.hi * 100.0 + 5.0),
                tick_style(),
            )
        }))?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font(label_style())
        .background_style(WHITE.mix(0.85))
        .border_style(INK)
        .draw()
}

/// Empirical CDF of the CLO differences, computed from the events, with the
/// median and P95 marked.
fn draw_clo<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ReportData,
) -> DrawResult<DB> {
    let (treatment, baseline) = data
        .summary
        .clo
        .as_ref()
        .map(|c| (c.treatment.as_str(), c.baseline.as_str()))
        .unwrap_or(("history", "stateless"));
    let deltas = clo_deltas(&data.events, treatment, baseline);
    let caption = format!("CLO: event-turn latency, {treatment} minus {baseline}");
    if deltas.is_empty() {
        return draw_empty(
            root,
            &caption,
            "no (run, conversation) was a failover event answered 2xx by both systems",
        );
    }
    let points = ecdf(&deltas);
    let sorted: Vec<f64> = points.iter().map(|p| p.0).collect();
    let (min, max) = (sorted[0], sorted[sorted.len() - 1]);
    let pad = ((max - min) * 0.05).max(1.0);
    let mut chart = ChartBuilder::on(root)
        .caption(format!("{caption} (n = {})", deltas.len()), caption_style())
        .margin(MARGIN)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d((min - pad)..(max + pad), 0.0..1.0)?;
    chart
        .configure_mesh()
        .x_desc("difference in event-turn latency (ms)")
        .y_desc("fraction of pairs ≤ x")
        .axis_desc_style(label_style())
        .label_style(tick_style())
        .max_light_lines(MAX_LIGHT_LINES)
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| format!("{y:.1}"))
        .draw()?;
    let mut steps = Vec::with_capacity(points.len() * 2 + 1);
    steps.push((min - pad, 0.0));
    let mut previous = 0.0;
    for &(x, y) in &points {
        steps.push((x, previous));
        steps.push((x, y));
        previous = y;
    }
    steps.push((max + pad, 1.0));
    let curve = system_colour(0);
    chart
        .draw_series(LineSeries::new(steps, curve.stroke_width(2)))?
        .label("empirical CDF")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], curve.stroke_width(2)));
    for (name, p, colour) in [("median", 0.5, MEDIAN_COLOUR), ("P95", 0.95, P95_COLOUR)] {
        let value = percentile_type7(&sorted, p);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(value, 0.0), (value, 1.0)],
                colour.stroke_width(2),
            )))?
            .label(format!("{name} {}", cb_report::format::signed_ms(value)))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], colour.stroke_width(2))
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font(label_style())
        .background_style(WHITE.mix(0.85))
        .border_style(INK)
        .draw()
}

/// Median (circle, joined per system) and P95 (triangle) of event-turn
/// latency per conversation length, one colour per system.
fn draw_latency_by_length<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ReportData,
) -> DrawResult<DB> {
    let series: Vec<(usize, String, Vec<LengthLatency>)> = data
        .summary
        .systems
        .iter()
        .enumerate()
        .map(|(i, s)| (i, s.name.clone(), latency_by_length(&data.events, &s.name)))
        .filter(|(_, _, rows)| !rows.is_empty())
        .collect();
    draw_by_length(
        root,
        "Event-turn latency by conversation length (● median, ▲ P95)",
        "event-turn latency (ms)",
        "no failover event in this report",
        &series,
    )
}

/// Median and P95 of CLO per conversation length: the price of the history
/// as it grows.
fn draw_clo_by_length<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &ReportData,
) -> DrawResult<DB> {
    let rows: Vec<LengthLatency> = data
        .summary
        .clo
        .iter()
        .flat_map(|c| &c.by_length)
        .filter(|l| l.delta_ms.n > 0)
        .map(|l| LengthLatency {
            turns: l.turns,
            n: l.delta_ms.n as usize,
            median: l.delta_ms.median,
            p95: l.delta_ms.p95,
        })
        .collect();
    let name = data.summary.clo.as_ref().map_or_else(String::new, |c| {
        format!("{} minus {}", c.treatment, c.baseline)
    });
    let series = if rows.is_empty() {
        Vec::new()
    } else {
        vec![(0, name, rows)]
    };
    draw_by_length(
        root,
        "CLO by conversation length (● median, ▲ P95)",
        "latency difference (ms)",
        "no (run, conversation) answered 2xx by both reference systems",
        &series,
    )
}

/// Median (circle, joined per series) and P95 (triangle) per conversation
/// length, one colour per series (`series`: colour index, name, rows).
fn draw_by_length<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    caption: &str,
    y_desc: &str,
    empty: &str,
    series: &[(usize, String, Vec<LengthLatency>)],
) -> DrawResult<DB> {
    let lengths: Vec<u32> = {
        let mut all: Vec<u32> = series
            .iter()
            .flat_map(|(_, _, rows)| rows.iter().map(|r| r.turns))
            .collect();
        all.sort_unstable();
        all.dedup();
        all
    };
    let (Some(&first), Some(&last)) = (lengths.first(), lengths.last()) else {
        return draw_empty(root, caption, empty);
    };
    let values = || {
        series
            .iter()
            .flat_map(|(_, _, rows)| rows.iter().flat_map(|r| [r.p95, r.median]))
    };
    let y_max = values().fold(0.0_f64, f64::max) * LATENCY_HEADROOM;
    let y_min = values().fold(0.0_f64, f64::min) * LATENCY_HEADROOM;
    let mut chart = ChartBuilder::on(root)
        .caption(caption, caption_style())
        .margin(MARGIN)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(Y_LABEL_AREA)
        .build_cartesian_2d(
            f64::from(first) - 0.5..f64::from(last) + 0.5,
            y_min..y_max.max(y_min + 1.0),
        )?;
    chart
        .configure_mesh()
        .x_desc("conversation length (turns)")
        .y_desc(y_desc)
        .axis_desc_style(label_style())
        .label_style(tick_style())
        .max_light_lines(MAX_LIGHT_LINES)
        .x_labels(lengths.len() * 2 + 2)
        .x_label_formatter(&|x| {
            // Only whole lengths are labelled.
            if (x - x.round()).abs() < 1e-6 {
                format!("{x:.0}")
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|y| format!("{y:.0}"))
        .draw()?;
    let spread = 0.3 / series.len().max(1) as f64;
    for (s, (colour_index, name, rows)) in series.iter().enumerate() {
        let colour = system_colour(*colour_index);
        let offset = (s as f64 - (series.len() as f64 - 1.0) / 2.0) * spread;
        let x = |turns: u32| f64::from(turns) + offset;
        chart
            .draw_series(LineSeries::new(
                rows.iter().map(|r| (x(r.turns), r.median)),
                colour.stroke_width(2),
            ))?
            .label(name.clone())
            .legend(move |(px, py)| {
                PathElement::new(vec![(px, py), (px + 16, py)], colour.stroke_width(2))
            });
        chart.draw_series(rows.iter().map(|r| {
            PathElement::new(
                vec![(x(r.turns), r.median), (x(r.turns), r.p95)],
                colour.mix(0.6).stroke_width(1),
            )
        }))?;
        chart.draw_series(
            rows.iter()
                .map(|r| Circle::new((x(r.turns), r.median), MARKER_SIZE, colour.filled())),
        )?;
        chart.draw_series(
            rows.iter().map(|r| {
                TriangleMarker::new((x(r.turns), r.p95), MARKER_SIZE + 1, colour.filled())
            }),
        )?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font(label_style())
        .background_style(WHITE.mix(0.85))
        .border_style(INK)
        .draw()
}
