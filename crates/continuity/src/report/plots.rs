//! The report's charts as files: each chart is drawn once (in
//! `charts.rs`) and exported as SVG and PNG:
//!
//! - `cpr_by_fault`: CPR per system and fault mode with Wilson interval bars;
//! - `clo`: the empirical CDF of the CLO differences;
//! - `clo_by_length`: median and P95 of CLO per conversation length;
//! - `latency_by_length`: median and P95 event-turn latency per conversation
//!   length and system.

use super::charts::draw;
use super::ReportData;
use cb_report::plot::{render_image, Drawing, ImageFormat};
use cb_report::{Exporter, ReportError};
use plotters::coord::Shift;
use plotters::prelude::*;

/// File name of the CPR chart (SVG; the PNG has the same stem).
pub const CPR_BY_FAULT_FILE: &str = "cpr_by_fault.svg";
/// File name of the CLO chart.
pub const CLO_FILE: &str = "clo.svg";
/// File name of the CLO-by-length chart.
pub const CLO_BY_LENGTH_FILE: &str = "clo_by_length.svg";
/// File name of the latency chart.
pub const LATENCY_BY_LENGTH_FILE: &str = "latency_by_length.svg";

/// A chart of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chart {
    /// CPR per system and fault mode, with Wilson intervals.
    CprByFault,
    /// Empirical CDF of the CLO differences.
    Clo,
    /// Median and P95 of CLO per conversation length.
    CloByLength,
    /// Final-turn latency by conversation length.
    LatencyByLength,
}

impl Chart {
    /// Every chart, in file order.
    pub const ALL: [Chart; 4] = [
        Chart::CprByFault,
        Chart::Clo,
        Chart::CloByLength,
        Chart::LatencyByLength,
    ];
}

/// One chart in one format.
#[derive(Debug, Clone, Copy)]
pub struct PlotExporter {
    /// Which chart.
    pub chart: Chart,
    /// Which format.
    pub format: ImageFormat,
}

/// Every chart in SVG and PNG.
pub fn exporters() -> Vec<Box<dyn Exporter<ReportData>>> {
    Chart::ALL
        .into_iter()
        .flat_map(|chart| {
            ImageFormat::ALL.into_iter().map(move |format| {
                Box::new(PlotExporter { chart, format }) as Box<dyn Exporter<ReportData>>
            })
        })
        .collect()
}

impl Exporter<ReportData> for PlotExporter {
    fn file_name(&self) -> &'static str {
        match (self.chart, self.format) {
            (Chart::CprByFault, ImageFormat::Svg) => CPR_BY_FAULT_FILE,
            (Chart::CprByFault, ImageFormat::Png) => "cpr_by_fault.png",
            (Chart::Clo, ImageFormat::Svg) => CLO_FILE,
            (Chart::Clo, ImageFormat::Png) => "clo.png",
            (Chart::CloByLength, ImageFormat::Svg) => CLO_BY_LENGTH_FILE,
            (Chart::CloByLength, ImageFormat::Png) => "clo_by_length.png",
            (Chart::LatencyByLength, ImageFormat::Svg) => LATENCY_BY_LENGTH_FILE,
            (Chart::LatencyByLength, ImageFormat::Png) => "latency_by_length.png",
        }
    }

    fn render(&self, data: &ReportData) -> Result<Vec<u8>, ReportError> {
        let file = self.file_name();
        render_image(&ChartOf(self.chart, data), self.format)
            .map_err(|message| ReportError::Render { file, message })
    }
}

/// A chart with the data it draws.
struct ChartOf<'a>(Chart, &'a ReportData);

impl Drawing for ChartOf<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        draw(self.0, root, self.1)
    }
}

#[cfg(test)]
mod tests {
    use super::super::fixture::report_data;
    use super::*;
    use cb_report::plot::CHART_SIZE;

    fn render(chart: Chart, format: ImageFormat, data: &ReportData) -> Vec<u8> {
        PlotExporter { chart, format }.render(data).unwrap()
    }

    #[test]
    fn svgs_contain_their_labels() {
        let data = report_data();
        let cpr = String::from_utf8(render(Chart::CprByFault, ImageFormat::Svg, &data)).unwrap();
        for label in [
            "TIMEOUT",
            "API_ERROR",
            "RATE_LIMIT",
            "all",
            "history",
            "stateless",
            "CPR (%)",
            "99.2",
        ] {
            assert!(cpr.contains(label), "{label} missing in cpr_by_fault.svg");
        }
        let clo = String::from_utf8(render(Chart::Clo, ImageFormat::Svg, &data)).unwrap();
        assert!(clo.contains("history minus stateless (n = 149)"), "{clo}");
        assert!(clo.contains("median"));
        let latency =
            String::from_utf8(render(Chart::LatencyByLength, ImageFormat::Svg, &data)).unwrap();
        assert!(latency.contains("conversation length (turns)"));
        assert!(latency.contains("11"));
    }

    #[test]
    fn pngs_are_pngs_of_the_chart_size_and_not_blank() {
        let data = report_data();
        for chart in Chart::ALL {
            let bytes = render(chart, ImageFormat::Png, &data);
            let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
            let mut reader = decoder.read_info().unwrap();
            let mut pixels = vec![0; reader.output_buffer_size()];
            let info = reader.next_frame(&mut pixels).unwrap();
            assert_eq!((info.width, info.height), CHART_SIZE);
            let coloured = pixels
                .chunks(3)
                .filter(|p| p[0] != p[1] || p[1] != p[2])
                .count();
            assert!(
                coloured > 500,
                "{chart:?} has only {coloured} coloured pixels"
            );
        }
    }

    #[test]
    fn charts_without_data_say_so_instead_of_failing() {
        let mut data = report_data();
        data.events.clear();
        let clo = String::from_utf8(render(Chart::Clo, ImageFormat::Svg, &data)).unwrap();
        assert!(clo
            .contains("no (run, conversation) was a failover event answered 2xx by both systems"));
        let latency =
            String::from_utf8(render(Chart::LatencyByLength, ImageFormat::Svg, &data)).unwrap();
        assert!(latency.contains("no failover event"));
        data.summary.systems.clear();
        let cpr = String::from_utf8(render(Chart::CprByFault, ImageFormat::Svg, &data)).unwrap();
        assert!(cpr.contains("no system"));
        render(Chart::CprByFault, ImageFormat::Png, &data);
    }

    #[test]
    fn a_cpr_chart_without_a_measured_event_says_so() {
        let mut data = report_data();
        let drawn = String::from_utf8(render(Chart::CprByFault, ImageFormat::Svg, &data)).unwrap();
        assert!(
            !drawn.contains("no failover event"),
            "measured CPR drawn as empty"
        );
        for system in &mut data.summary.systems {
            system.cpr.rate = None;
            system.cpr.wilson = None;
        }
        let cpr = String::from_utf8(render(Chart::CprByFault, ImageFormat::Svg, &data)).unwrap();
        assert!(cpr.contains("no failover event in this report"));
    }

    #[test]
    fn rendering_is_deterministic() {
        let data = report_data();
        assert_eq!(
            render(Chart::CprByFault, ImageFormat::Png, &data),
            render(Chart::CprByFault, ImageFormat::Png, &data)
        );
    }
}
