//! The scorecard across systems, as files for `--out`: a Markdown table
//! (`scorecard.md`: every case against every system, the counts, and what
//! did not pass with its measured value and bound) and a chart of the
//! counts (`scorecard.svg`, `scorecard.png`), as failoverbench publishes.

use super::report::{SemanticsJson, SemanticsReport};
use super::timing::Profile;
use super::verdict::Verdict;
use cb_report::escape::markdown_cell;
use cb_report::plot::{
    caption_style, label_style, render_image, tick_style, Drawing, ImageFormat, INK, MARGIN,
    X_LABEL_AREA,
};
use cb_report::{Exporter, ReportError};
use plotters::coord::Shift;
use plotters::prelude::*;

/// File name of the Markdown scorecard.
pub const MARKDOWN_FILE: &str = "scorecard.md";
/// File name of the chart (SVG; the PNG has the same stem).
pub const CHART_FILE: &str = "scorecard.svg";

/// Width of the system-name area of the chart, pixels.
const NAME_AREA: u32 = 160;

/// The colour of each verdict in the chart.
fn colour(verdict: Verdict) -> RGBColor {
    match verdict {
        Verdict::Pass => RGBColor(0x2c, 0xa0, 0x2c),
        Verdict::Partial => RGBColor(0xe6, 0xb4, 0x22),
        Verdict::Safe => RGBColor(0x1f, 0x77, 0xb4),
        Verdict::Fail => RGBColor(0xd6, 0x27, 0x28),
        Verdict::Inconclusive => RGBColor(0x99, 0x99, 0x99),
    }
}

/// Every file `--out` gets: the JSON, the Markdown scorecard and the chart
/// in both formats.
pub fn exporters() -> Vec<Box<dyn Exporter<SemanticsReport>>> {
    vec![
        Box::new(SemanticsJson),
        Box::new(Markdown),
        Box::new(Chart(ImageFormat::Svg)),
        Box::new(Chart(ImageFormat::Png)),
    ]
}

/// `scorecard.md`.
#[derive(Debug, Clone, Copy)]
pub struct Markdown;

impl Exporter<SemanticsReport> for Markdown {
    fn file_name(&self) -> &'static str {
        MARKDOWN_FILE
    }
    fn render(&self, data: &SemanticsReport) -> Result<Vec<u8>, ReportError> {
        Ok(markdown(data).into_bytes())
    }
}

/// Escapes a table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The Markdown scorecard.
pub fn markdown(report: &SemanticsReport) -> String {
    let mut out = String::from("# Failover semantics scorecard\n\n");
    out.push_str(&format!(
        "{} · {} profile · model `{}` · {} · both-fail bounds: {} attempts per upstream, {} s to give up\n\n",
        report.tool,
        match report.profile {
            Profile::Full => "full",
            Profile::Fast => "fast",
        },
        report.model,
        if report.stream { "`--stream`" } else { "plain requests (streaming cases stream)" },
        report.max_attempts_per_upstream,
        report.max_give_up_ms as f64 / 1000.0
    ));
    out.push_str(&format!(
        "Streams are read as `{}`: {}.\n\n",
        report.client, report.client_rule
    ));
    out.push_str("| system | pass | partial | safe | fail | inconclusive | honest model | honest usage | honest routing | wall time |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for s in &report.systems {
        let c = &s.scorecard;
        let h = &s.honesty;
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} s |\n",
            cell(&s.system),
            c.pass,
            c.partial,
            c.safe,
            c.fail,
            c.inconclusive,
            h.model.cell(),
            h.usage.cell(),
            h.routing.cell(),
            s.wall_ms / 1000.0
        ));
    }
    out.push_str(HONESTY_KEY);
    out.push_str(&load_section(report));
    out.push_str("\n| case | what the upstreams do |");
    for s in &report.systems {
        out.push_str(&format!(" {} |", cell(&s.system)));
    }
    out.push_str("\n|---|---|");
    out.push_str(&"---|".repeat(report.systems.len()));
    out.push('\n');
    let Some(first) = report.systems.first() else {
        return out;
    };
    for (k, case) in first.cases.iter().enumerate() {
        let name = if case.scored {
            format!("`{}`", case.case)
        } else {
            format!("`{}` (not scored)", case.case)
        };
        out.push_str(&format!("| {name} | {} |", cell(&case.upstream)));
        for s in &report.systems {
            let verdict = s.cases.get(k).map_or("-", |c| c.verdict.as_str());
            out.push_str(&format!(" {verdict} |"));
        }
        out.push('\n');
    }
    let mut findings = Vec::new();
    for s in &report.systems {
        for c in &s.cases {
            if c.verdict != Verdict::Pass {
                findings.push(format!(
                    "- **{} `{}`** ({}): {}",
                    s.system,
                    c.case,
                    c.verdict.as_str(),
                    cell(&c.reason)
                ));
            }
            if let (Some(h), Verdict::Pass) = (&c.health, c.verdict) {
                findings.push(format!(
                    "- **{} `{}`**: {}",
                    s.system,
                    c.case,
                    cell(&h.summary())
                ));
            }
        }
    }
    if !findings.is_empty() {
        out.push_str("\n## What did not pass, measured against its bound\n\n");
        out.push_str(&findings.join("\n"));
        out.push('\n');
    }
    out.push_str(&claims_section(report));
    out.push_str(
        "\nVerdicts: `pass` the ideal outcome, every check clean; `partial` the ideal outcome, an advisory check failed; \
         `safe` not answered but a bounded clean error, every required check clean; `fail` a required check failed, \
         a hang, or a truncated answer presented as complete; `inconclusive` the case could not be exercised.\n",
    );
    out
}

/// The load phase's figures, one row a system; empty when it did not run.
fn load_section(report: &SemanticsReport) -> String {
    let rows: Vec<String> = report
        .systems
        .iter()
        .filter_map(|s| {
            let l = s.load.as_ref()?;
            Some(format!(
                "| {} | {} | {}/{} | {} | {} | {} | {} | {} | {} | {} | {} |",
                markdown_cell(&s.system),
                l.concurrency,
                l.answered,
                l.concurrency,
                if l.unreached > 0 {
                    format!("{} (+{} could not connect)", l.cut_at_bound, l.unreached)
                } else {
                    l.cut_at_bound.to_string()
                },
                l.attempts_cell(),
                l.p99_cell(),
                l.max_cell(),
                l.retries,
                l.sync_cell(),
                crate::load::LoadFigures::seconds_cell(l.worst_ms),
                crate::load::LoadFigures::seconds_cell(l.p99_ms)
            ))
        })
        .collect();
    let Some(first) = report.systems.iter().find_map(|s| s.load.as_ref()) else {
        return String::new();
    };
    format!(
        "\n## Retries under load\n\nC requests at once while {}. Attempts are the upstreams' (primary and fallback) per client request, mean and type-7 p99 with 95 % intervals (Student's t; order statistics, `n/a` where the sample cannot bound the end). Synchronisation: the largest share of retries in any 100 ms window over the same share for retries spread uniformly over one Retry-After (about x1: spread as full jitter over the stated wait; all at once: up to x{:.0}). *Cut*: requests with neither an answer nor an error at the {:.1} s bound, counted beside: the attempts and times are those of the requests that ended.\n\n| system | C | answered | cut | attempts per request | p99 | max | retries | synchronisation | worst time to a definitive answer | p99 |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n{}\n",
        first
            .fault
            .describe(std::time::Duration::from_millis(first.retry_after_ms)),
        first.retry_after_ms as f64 / crate::load::SYNC_WINDOW_MS,
        first.bound_ms as f64 / 1000.0,
        rows.join("\n")
    )
}

/// What the honesty columns count.
const HONESTY_KEY: &str = "\nHonest columns: cases whose claims agree with the upstreams' attempt log, of the cases where the claim could be judged (`n/a`: never). *model*: the `model` of an answer the fallback gave names the model it answered as (every chunk of a stream); *usage*: its `usage` is what the answering upstream billed, what every attempt billed, or the bill of the answer as received (the client's prompt, the tokens of the text it got); *routing*: the routing headers the system sent (target index, fallbacks attempted, fallback used, served model or base URL) agree with the attempts that had arrived when they were written. They sit beside the verdicts and never change them.\n";

/// The claims that disagreed with the attempt log, and the tokens left out
/// of `usage`; empty when there are none.
fn claims_section(report: &SemanticsReport) -> String {
    let mut lines = Vec::new();
    for s in &report.systems {
        for c in &s.cases {
            for check in c.honesty.checks.iter().filter(|k| !k.honest) {
                lines.push(format!(
                    "- **{} `{}`** {}: {}",
                    markdown_cell(&s.system),
                    c.case,
                    check.claim.as_str(),
                    markdown_cell(&check.value)
                ));
            }
        }
        if s.honesty.unreported_tokens > 0 {
            lines.push(format!(
                "- **{}**: {} tokens the attempts billed beyond what the answers' `usage` reports",
                markdown_cell(&s.system),
                s.honesty.unreported_tokens
            ));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\n## What the systems said that the attempt log contradicts\n\n{}\n",
        lines.join("\n")
    )
}

/// `scorecard.svg` and `scorecard.png`.
#[derive(Debug, Clone, Copy)]
pub struct Chart(pub ImageFormat);

impl Exporter<SemanticsReport> for Chart {
    fn file_name(&self) -> &'static str {
        match self.0 {
            ImageFormat::Svg => CHART_FILE,
            ImageFormat::Png => "scorecard.png",
        }
    }
    fn render(&self, data: &SemanticsReport) -> Result<Vec<u8>, ReportError> {
        let file = self.file_name();
        render_image(&ChartOf(data), self.0)
            .map_err(|message| ReportError::Render { file, message })
    }
}

struct ChartOf<'a>(&'a SemanticsReport);

impl Drawing for ChartOf<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        draw(root, self.0).map_err(|e| e.to_string())
    }
}

/// One stacked bar per system: its scored cases by verdict.
fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    report: &SemanticsReport,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let names: Vec<&str> = report.systems.iter().map(|s| s.system.as_str()).collect();
    let total = report
        .systems
        .iter()
        .map(|s| {
            Verdict::ALL
                .iter()
                .map(|v| s.scorecard.count(*v))
                .sum::<u32>()
        })
        .max()
        .unwrap_or(0)
        .max(1);
    let n = names.len().max(1) as f64;
    let mut chart = ChartBuilder::on(root)
        .caption("Failover semantics: verdicts per system", caption_style())
        .margin(MARGIN)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(NAME_AREA)
        .build_cartesian_2d(0f64..f64::from(total), -0.5f64..n - 0.5)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .x_desc("scored cases")
        // Counts are whole: a tick between two integers gets no label.
        .x_label_formatter(&|x| {
            if (x - x.round()).abs() < 1e-9 {
                format!("{x:.0}")
            } else {
                String::new()
            }
        })
        .y_labels(names.len().max(1))
        .y_label_formatter(&|y| {
            let k = y.round();
            if (y - k).abs() < 0.01 && k >= 0.0 {
                names
                    .get(k as usize)
                    .map_or_else(String::new, |s| (*s).to_string())
            } else {
                String::new()
            }
        })
        .label_style(tick_style())
        .axis_desc_style(label_style())
        .draw()?;
    for verdict in Verdict::ALL {
        let bars: Vec<Rectangle<(f64, f64)>> = report
            .systems
            .iter()
            .enumerate()
            .filter_map(|(k, s)| {
                let before: u32 = Verdict::ALL
                    .iter()
                    .take_while(|v| **v != verdict)
                    .map(|v| s.scorecard.count(*v))
                    .sum();
                let width = s.scorecard.count(verdict);
                (width > 0).then(|| {
                    let y = k as f64;
                    Rectangle::new(
                        [
                            (f64::from(before), y - 0.35),
                            (f64::from(before + width), y + 0.35),
                        ],
                        colour(verdict).filled(),
                    )
                })
            })
            .collect();
        chart
            .draw_series(bars)?
            .label(verdict.as_str())
            .legend(move |(x, y)| {
                Rectangle::new([(x, y - 6), (x + 14, y + 6)], colour(verdict).filled())
            });
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(INK)
        .label_font(label_style())
        .draw()
}

#[cfg(test)]
mod tests {
    use super::super::report::tests::fixture;
    use super::*;

    #[test]
    fn the_markdown_has_every_case_system_and_failure() {
        let text = markdown(&fixture());
        assert!(text.starts_with("# Failover semantics scorecard"), "{text}");
        assert!(
            text.contains("| gw | 1 | 0 | 0 | 1 | 0 | 1/2 | n/a | n/a | 1.2 s |"),
            "{text}"
        );
        // The fixture's dishonest claim, and the tokens left out of usage.
        assert!(
            text.contains("- **gw `401`** model: the answer names fb"),
            "{text}"
        );
        assert!(
            text.contains("6 tokens the attempts billed beyond"),
            "{text}"
        );
        assert!(text.contains("## Retries under load"), "{text}");
        assert!(text.contains("| gw | 2 | 2/2 |"), "{text}");
        assert!(text.contains("| `503` | answers 503 | pass |"), "{text}");
        assert!(text.contains("| `401` | answers 503 | fail |"), "{text}");
        assert!(
            text.contains("- **gw `401`** (fail): no_failover"),
            "{text}"
        );
    }

    #[test]
    fn the_chart_renders_in_both_formats_with_its_labels() {
        let report = fixture();
        let svg = String::from_utf8(Chart(ImageFormat::Svg).render(&report).unwrap()).unwrap();
        for label in ["gw", "pass", "fail", "scored cases"] {
            assert!(svg.contains(label), "{label}");
        }
        // Case counts are whole numbers: "1", never "1.0" or "0.5".
        let texts: Vec<&str> = svg
            .split("</text>")
            .filter_map(|t| t.rsplit('>').next())
            .map(str::trim)
            .collect();
        assert!(texts.contains(&"1"), "{texts:?}");
        assert!(
            !texts.iter().any(|t| t.ends_with(".0") || t.ends_with(".5")),
            "{texts:?}"
        );
        let png = Chart(ImageFormat::Png).render(&report).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let names: Vec<&str> = exporters().iter().map(|e| e.file_name()).collect();
        assert_eq!(
            names,
            [
                "semantics.json",
                "scorecard.md",
                "scorecard.svg",
                "scorecard.png"
            ]
        );
    }
}
