//! `build --profile`: where a build's time and memory went, level by
//! level, from the rows of its summary: wall seconds, positions per
//! second and the process's resident peak, one panel each.
//!
//! Each panel's data points carry `data-series` (`seconds`, `rate` or
//! `peak-rss`), `data-level` and `data-value` in the panel's unit (seconds,
//! positions per second, MiB), and `data-reused="true"` on levels the build
//! found present and did not solve. A level has a point in a panel when its
//! summary row has that number: no rate for a reused level or one too quick
//! to time, no resident peak where the OS does not tell it.

use anyhow::Result;
use plotters::prelude::*;

use super::{level_axes, level_span, palette, render, Area, Points};

/// What one level of a build cost, as its summary row says.
#[derive(Clone, Copy, Debug)]
pub struct LevelCost {
    /// Stones on the board.
    pub level: u32,
    /// Wall time spent solving and writing (0 when reused).
    pub seconds: f64,
    /// Positions solved per second, when the level was solved and timed.
    pub rate: Option<f64>,
    /// The process's resident peak after the level, in bytes.
    pub peak_rss_bytes: Option<u64>,
    /// The level's file was present and valid, so it was not rebuilt.
    pub reused: bool,
}

/// One panel: what it shows and how to get it from a level.
struct Panel {
    series: &'static str,
    caption: &'static str,
    unit: &'static str,
    value: fn(&LevelCost) -> Option<f64>,
    color: RGBColor,
}

const PANELS: [Panel; 3] = [
    Panel {
        series: "seconds",
        caption: "wall time per level",
        unit: "seconds",
        value: |c| Some(c.seconds),
        color: palette::LOST,
    },
    Panel {
        series: "rate",
        caption: "solving speed",
        unit: "positions per second",
        value: |c| c.rate,
        color: palette::WON,
    },
    Panel {
        series: "peak-rss",
        caption: "resident memory peak",
        unit: "MiB",
        value: |c| c.peak_rss_bytes.map(|b| b as f64 / (1u64 << 20) as f64),
        color: palette::EXACT,
    },
];

/// Width of the chart and height of one panel, in pixels.
const WIDTH: u32 = 900;
const PANEL_HEIGHT: u32 = 260;

/// Height of the chart's title.
const TITLE: u32 = 40;

/// The SVG chart of a build's `costs`, titled `title`.
pub fn chart(title: &str, costs: &[LevelCost]) -> Result<String> {
    let height = TITLE + PANEL_HEIGHT * PANELS.len() as u32;
    render((WIDTH, height), |root, points| {
        let body = root.titled(title, ("sans-serif", 18).into_font().color(&palette::INK))?;
        for (area, panel) in body.split_evenly((PANELS.len(), 1)).iter().zip(&PANELS) {
            draw_panel(area, panel, costs, points)?;
        }
        Ok(())
    })
}

fn draw_panel(
    area: &Area<'_>,
    panel: &Panel,
    costs: &[LevelCost],
    points: &mut Points,
) -> Result<()> {
    let (first, last) = level_span(costs.iter().map(|c| c.level));
    let values: Vec<(&LevelCost, f64)> = costs
        .iter()
        .filter_map(|c| Some((c, (panel.value)(c)?)))
        .collect();
    let top = values.iter().map(|&(_, v)| v).fold(0.0, f64::max);
    let mut chart = ChartBuilder::on(area)
        .caption(
            panel.caption,
            ("sans-serif", 15).into_font().color(&palette::INK),
        )
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(80)
        .build_cartesian_2d((first..last).into_segmented(), 0.0..axis_top(top))?;
    level_axes(&mut chart, panel.unit, &axis_number)?;
    chart.draw_series(LineSeries::new(
        values
            .iter()
            .map(|&(c, v)| (SegmentValue::CenterOf(c.level), v)),
        panel.color.stroke_width(2),
    ))?;
    for &(cost, value) in &values {
        let at = chart.backend_coord(&(SegmentValue::CenterOf(cost.level), value));
        let mut data = vec![
            ("series", panel.series.to_string()),
            ("level", cost.level.to_string()),
            ("value", value.to_string()),
        ];
        if cost.reused {
            data.push(("reused", "true".to_string()));
        }
        let reused = if cost.reused { " (reused)" } else { "" };
        let tip = format!("level {}{reused}: {value:.2} {}", cost.level, panel.unit);
        points.add(at, &panel.color, &data, &tip);
    }
    Ok(())
}

/// The top of a panel's axis: a little above its largest value, and not 0.
fn axis_top(largest: f64) -> f64 {
    if largest > 0.0 {
        largest * 1.1
    } else {
        1.0
    }
}

/// A number on a panel's axis, short: `0.25`, `2.5`, `40`, `120k`, `3.5M`.
fn axis_number(v: &f64) -> String {
    match v.abs() {
        a if a >= 1e6 => format!("{:.1}M", v / 1e6),
        a if a >= 1e4 => format!("{:.0}k", v / 1e3),
        a if a >= 10.0 || a == 0.0 => format!("{v:.0}"),
        a if a >= 1.0 => format!("{v:.1}"),
        _ => format!("{v:.2}"),
    }
}
