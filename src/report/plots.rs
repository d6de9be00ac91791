//! The report's charts as files: each chart is drawn once (in
//! `charts.rs`) and exported as SVG and PNG:
//!
//! - `cpr_by_fault`: CPR per system and fault mode with Wilson interval bars;
//! - `clo`: the empirical CDF of the CLO differences;
//! - `latency_by_length`: median and P95 final-turn latency per conversation
//!   length and system.
//!
//! Text is drawn with an embedded DejaVu Sans (assets/), registered once, so
//! no system font or fontconfig is needed.

use super::charts::{draw, FONT};
use super::exporter::{Exporter, ReportData, ReportError};
use plotters::prelude::*;
use std::sync::OnceLock;

/// File name of the CPR chart (SVG; the PNG has the same stem).
pub const CPR_BY_FAULT_FILE: &str = "cpr_by_fault.svg";
/// File name of the CLO chart.
pub const CLO_FILE: &str = "clo.svg";
/// File name of the latency chart.
pub const LATENCY_BY_LENGTH_FILE: &str = "latency_by_length.svg";

/// Width and height of every chart, pixels.
pub const CHART_SIZE: (u32, u32) = (960, 560);
/// The embedded font.
const FONT_BYTES: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// Registers the embedded font once per process.
fn ensure_font() -> Result<(), String> {
    static REGISTERED: OnceLock<Result<(), String>> = OnceLock::new();
    REGISTERED
        .get_or_init(|| {
            plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES)
                .map_err(|_| "the embedded DejaVu Sans font is not a valid font".to_string())
        })
        .clone()
}

/// A chart of the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chart {
    /// CPR per system and fault mode, with Wilson intervals.
    CprByFault,
    /// Empirical CDF of the CLO differences.
    Clo,
    /// Final-turn latency by conversation length.
    LatencyByLength,
}

/// An image format a chart is exported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// Scalable vector graphics.
    Svg,
    /// Portable network graphics (RGB, 8 bits).
    Png,
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
pub fn exporters() -> Vec<Box<dyn Exporter>> {
    [Chart::CprByFault, Chart::Clo, Chart::LatencyByLength]
        .into_iter()
        .flat_map(|chart| {
            [ImageFormat::Svg, ImageFormat::Png]
                .into_iter()
                .map(move |format| Box::new(PlotExporter { chart, format }) as Box<dyn Exporter>)
        })
        .collect()
}

impl Exporter for PlotExporter {
    fn file_name(&self) -> &'static str {
        match (self.chart, self.format) {
            (Chart::CprByFault, ImageFormat::Svg) => CPR_BY_FAULT_FILE,
            (Chart::CprByFault, ImageFormat::Png) => "cpr_by_fault.png",
            (Chart::Clo, ImageFormat::Svg) => CLO_FILE,
            (Chart::Clo, ImageFormat::Png) => "clo.png",
            (Chart::LatencyByLength, ImageFormat::Svg) => LATENCY_BY_LENGTH_FILE,
            (Chart::LatencyByLength, ImageFormat::Png) => "latency_by_length.png",
        }
    }

    fn render(&self, data: &ReportData) -> Result<Vec<u8>, ReportError> {
        let file = self.file_name();
        let render_error = |message: String| ReportError::Render { file, message };
        ensure_font().map_err(render_error)?;
        match self.format {
            ImageFormat::Svg => {
                let mut svg = String::new();
                {
                    let root = SVGBackend::with_string(&mut svg, CHART_SIZE).into_drawing_area();
                    draw(self.chart, &root, data).map_err(render_error)?;
                    root.present().map_err(|e| render_error(e.to_string()))?;
                }
                Ok(svg.into_bytes())
            }
            ImageFormat::Png => {
                let (width, height) = CHART_SIZE;
                let mut pixels = vec![0u8; width as usize * height as usize * 3];
                {
                    let root =
                        BitMapBackend::with_buffer(&mut pixels, CHART_SIZE).into_drawing_area();
                    draw(self.chart, &root, data).map_err(render_error)?;
                    root.present().map_err(|e| render_error(e.to_string()))?;
                }
                encode_png(&pixels, CHART_SIZE).map_err(render_error)
            }
        }
    }
}

/// RGB pixels to PNG bytes.
fn encode_png(pixels: &[u8], (width, height): (u32, u32)) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let mut encoder = png::Encoder::new(&mut bytes, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(pixels).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::report_data;

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
        for chart in [Chart::CprByFault, Chart::Clo, Chart::LatencyByLength] {
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
        assert!(clo.contains("no (run, conversation) answered 2xx by both systems"));
        let latency =
            String::from_utf8(render(Chart::LatencyByLength, ImageFormat::Svg, &data)).unwrap();
        assert!(latency.contains("no failover event"));
        data.summary.systems.clear();
        let cpr = String::from_utf8(render(Chart::CprByFault, ImageFormat::Svg, &data)).unwrap();
        assert!(cpr.contains("no system"));
        render(Chart::CprByFault, ImageFormat::Png, &data);
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
