//! SVG charts of what the tables hold and what a build cost: `info --plot`
//! ([`levels`]) and `build --profile` ([`profile`]).
//!
//! plotters draws each chart (axes, bars, lines, legend) with its SVG
//! backend, which writes text as SVG text and so needs no font file and no
//! system library. Its elements carry no attributes of their own, so the
//! data points are written here as SVG circles with `data-*` attributes
//! (and a tooltip), placed by the chart's own coordinates: a script, a test
//! or a reader's browser gets the numbers behind the picture from the
//! picture. plotters never writes a `data-*` attribute, so those circles
//! are exactly the data points.

pub mod levels;
pub mod profile;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use mancala_core::Cycles;
use plotters::coord::ranged1d::SegmentedCoord;
use plotters::coord::types::{RangedCoordf64, RangedCoordu32};
use plotters::coord::Shift;
use plotters::prelude::*;

/// The drawing area of a whole chart file.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Where a chart goes: a path ending in `.svg` whose directory exists,
/// checked before the work whose chart it is (a build may take hours).
pub struct SvgPath(PathBuf);

impl SvgPath {
    /// Checks `path`: its extension (SVG is the only format; a bitmap would
    /// need a font bundled and an image encoder compiled in) and its
    /// directory.
    pub fn new(path: &Path) -> Result<SvgPath> {
        let svg = path
            .extension()
            .is_some_and(|x| x.eq_ignore_ascii_case("svg"));
        if !svg {
            bail!(
                "{}: charts are written as SVG only; give a file name ending in .svg",
                path.display()
            );
        }
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        if !dir.is_dir() {
            bail!(
                "{}: cannot write the chart: no directory {}",
                path.display(),
                dir.display()
            );
        }
        Ok(SvgPath(path.to_path_buf()))
    }

    /// Writes `svg` to the file.
    pub fn write(&self, svg: &str) -> Result<()> {
        std::fs::write(&self.0, svg)
            .with_context(|| format!("{}: cannot write the chart", self.0.display()))
    }

    /// The path, as given.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

/// The data points of a chart, as SVG elements added after plotters'.
#[derive(Default)]
struct Points {
    svg: String,
}

impl Points {
    /// A point at `at` (backend pixels) filled with `color`, carrying
    /// `data` as `data-*` attributes (name without the prefix, value) and
    /// `tip` as its tooltip.
    fn add(&mut self, at: (i32, i32), color: &RGBColor, data: &[(&str, String)], tip: &str) {
        let RGBColor(r, g, b) = color;
        let _ = write!(
            self.svg,
            r##"<circle cx="{}" cy="{}" r="4" fill="#{r:02x}{g:02x}{b:02x}" stroke="white" stroke-width="1""##,
            at.0, at.1
        );
        for (name, value) in data {
            let _ = write!(self.svg, r#" data-{name}="{}""#, escape(value));
        }
        let _ = writeln!(self.svg, "><title>{}</title></circle>", escape(tip));
    }

    /// Adds the points to the end of `svg`, a document plotters finished.
    fn append_to(self, svg: &mut String) -> Result<()> {
        let Some(end) = svg.rfind("</svg>") else {
            bail!("the chart's SVG has no end tag");
        };
        svg.insert_str(
            end,
            &format!("<g class=\"data-points\">\n{}</g>\n", self.svg),
        );
        Ok(())
    }
}

/// Text made safe for an SVG attribute or element.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A chart of `size` pixels drawn by `draw` on a white area, with the data
/// points it adds.
fn render(
    size: (u32, u32),
    draw: impl FnOnce(&Area<'_>, &mut Points) -> Result<()>,
) -> Result<String> {
    let mut svg = String::new();
    let mut points = Points::default();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root, &mut points)?;
        root.present()?;
    }
    points.append_to(&mut svg)?;
    Ok(svg)
}

/// The colours the charts share: the web board's palette.
mod palette {
    use plotters::style::RGBColor;

    pub const WON: RGBColor = RGBColor(0x3a, 0x9d, 0x5d);
    pub const DRAWN: RGBColor = RGBColor(0xc9, 0xbf, 0xa8);
    pub const LOST: RGBColor = RGBColor(0xc0, 0x39, 0x2b);
    pub const INK: RGBColor = RGBColor(0x2b, 0x21, 0x18);
    pub const EXACT: RGBColor = RGBColor(0x2e, 0x6f, 0xa8);
}

/// A share (0..=1) as an axis label.
fn percent(share: &f64) -> String {
    format!("{:.0}%", 100.0 * share)
}

/// The first and last of `levels`, ascending (0, 0 for none).
fn level_span(mut levels: impl Iterator<Item = u32>) -> (u32, u32) {
    let first = levels.next().unwrap_or(0);
    (first, levels.last().unwrap_or(first))
}

/// A level's label on an x axis of levels.
fn level_label(value: &SegmentValue<u32>) -> String {
    match value {
        SegmentValue::Exact(n) | SegmentValue::CenterOf(n) => n.to_string(),
        SegmentValue::Last => String::new(),
    }
}

/// A chart whose x axis is the levels and whose y axis is a number.
type LevelChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<SegmentedCoord<RangedCoordu32>, RangedCoordf64>>;

/// Draws the axes every level chart shares: levels along the bottom, no
/// grid lines, and the y axis described by `y_desc` with labels by
/// `y_label`.
fn level_axes(
    chart: &mut LevelChart<'_, '_>,
    y_desc: &str,
    y_label: &dyn Fn(&f64) -> String,
) -> Result<()> {
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .x_desc("stones on the board (level)")
        .x_label_formatter(&level_label)
        .y_desc(y_desc)
        .y_label_formatter(y_label)
        .draw()?;
    Ok(())
}

/// The kind of table, as a chart's title names it.
pub fn kind_name(cycles: Cycles) -> &'static str {
    match cycles {
        Cycles::Even => "even-split values",
        Cycles::Forced => "forced bounds",
    }
}
