//! Charts as files: the embedded font, the shared sizes, colours and text
//! styles, and rendering one drawing to SVG or PNG. A suite's charts
//! implement [`Drawing`] once and get both formats.
//!
//! Text is drawn with an embedded DejaVu Sans (assets/), registered once, so
//! no system font or fontconfig is needed.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::sync::OnceLock;

/// Width and height of every chart, pixels.
pub const CHART_SIZE: (u32, u32) = (960, 560);
/// The embedded font.
const FONT_BYTES: &[u8] = include_bytes!("../../../assets/DejaVuSans.ttf");
/// Font family every text uses.
pub const FONT: &str = "sans-serif";
/// Caption size, pixels.
pub const CAPTION_SIZE: u32 = 24;
/// Axis description and legend size, pixels.
pub const LABEL_SIZE: u32 = 16;
/// Tick label size, pixels.
pub const TICK_SIZE: u32 = 14;
/// Margin around the plotting area, pixels.
pub const MARGIN: u32 = 16;
/// Space for the x axis labels, pixels.
pub const X_LABEL_AREA: u32 = 48;
/// Space for the y axis labels, pixels.
pub const Y_LABEL_AREA: u32 = 72;
/// One colour per system, in report order (cycled past the end).
const SYSTEM_COLOURS: [RGBColor; 6] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
];
/// Colour of interval bars and reference lines.
pub const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);

/// The colour of the `index`-th system.
pub fn system_colour(index: usize) -> RGBColor {
    SYSTEM_COLOURS[index % SYSTEM_COLOURS.len()]
}

/// Caption text.
pub fn caption_style() -> TextStyle<'static> {
    TextStyle::from((FONT, CAPTION_SIZE).into_font())
}

/// Axis descriptions and legends.
pub fn label_style() -> TextStyle<'static> {
    TextStyle::from((FONT, LABEL_SIZE).into_font())
}

/// Tick labels.
pub fn tick_style() -> TextStyle<'static> {
    TextStyle::from((FONT, TICK_SIZE).into_font())
}

/// What drawing on a plotters area returns.
pub type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Writes `message` in the middle of an otherwise empty chart.
///
/// # Errors
/// A backend error.
pub fn draw_empty<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    caption: &str,
    message: &str,
) -> DrawResult<DB> {
    let (width, height) = root.dim_in_pixel();
    let centre = width as i32 / 2;
    root.draw(&Text::new(
        caption.to_string(),
        (centre, MARGIN as i32),
        caption_style().pos(Pos::new(HPos::Center, VPos::Top)),
    ))?;
    root.draw(&Text::new(
        message.to_string(),
        (centre, height as i32 / 2),
        label_style().pos(Pos::new(HPos::Center, VPos::Center)),
    ))
}

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

/// An image format a chart is exported in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageFormat {
    /// Scalable vector graphics.
    Svg,
    /// Portable network graphics (RGB, 8 bits).
    Png,
}

impl ImageFormat {
    /// Both formats, SVG first.
    pub const ALL: [ImageFormat; 2] = [ImageFormat::Svg, ImageFormat::Png];
}

/// A chart that can draw itself on any plotters backend.
pub trait Drawing {
    /// Draws the chart on `root`, which is white and [`CHART_SIZE`].
    ///
    /// # Errors
    /// Why the chart could not be drawn.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String>;
}

/// Renders `drawing` as an image of [`CHART_SIZE`] in `format`.
///
/// # Errors
/// Why it could not be drawn or encoded.
pub fn render_image(drawing: &impl Drawing, format: ImageFormat) -> Result<Vec<u8>, String> {
    ensure_font()?;
    match format {
        ImageFormat::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, CHART_SIZE).into_drawing_area();
                root.fill(&WHITE).map_err(|e| e.to_string())?;
                drawing.draw(&root)?;
                root.present().map_err(|e| e.to_string())?;
            }
            Ok(svg.into_bytes())
        }
        ImageFormat::Png => {
            let (width, height) = CHART_SIZE;
            let mut pixels = vec![0u8; width as usize * height as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut pixels, CHART_SIZE).into_drawing_area();
                root.fill(&WHITE).map_err(|e| e.to_string())?;
                drawing.draw(&root)?;
                root.present().map_err(|e| e.to_string())?;
            }
            encode_png(&pixels, CHART_SIZE)
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
