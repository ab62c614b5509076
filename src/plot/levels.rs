//! `info --plot`: one panel per table set, levels along the bottom. Even
//! tables show the shares of positions won, drawn and lost for the mover
//! stacked as bars, and the mean value as a line on the right axis; forced
//! tables show the share of positions whose bounds meet (their histogram
//! mixes bounds with gaps, so it gives no won/drawn/lost).
//!
//! Each level has one data point (`data-level`) with the numbers it stands
//! for: `data-positions`, and `data-won`, `data-drawn`, `data-lost`,
//! `data-mean` (even) or `data-exact`, `data-exact-share` (forced).

use anyhow::Result;
use mancala_core::Cycles;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{kind_name, level_axes, level_span, palette, percent, render, Area, Points};
use crate::levels::{LevelSummary, TableSet};

/// Width of the chart and height of one table set's panel, in pixels.
const WIDTH: u32 = 900;
const PANEL_HEIGHT: u32 = 420;

/// Height of a panel's heading: its title and legend.
const HEADING: u32 = 64;

/// The SVG chart of `sets`, one panel each, in order.
pub fn chart(sets: &[TableSet]) -> Result<String> {
    let height = PANEL_HEIGHT * sets.len().max(1) as u32;
    render((WIDTH, height), |root, points| {
        for (area, set) in root.split_evenly((sets.len(), 1)).iter().zip(sets) {
            let (heading, body) = area.split_vertically(HEADING);
            match set.cycles {
                Cycles::Even => {
                    draw_heading(
                        &heading,
                        &title(set, "positions by value for the mover"),
                        EVEN_KEY,
                    )?;
                    even_panel(&body, &set.levels, points)?;
                }
                Cycles::Forced => {
                    draw_heading(
                        &heading,
                        &title(set, "positions whose bounds meet"),
                        FORCED_KEY,
                    )?;
                    forced_panel(&body, &set.levels, points)?;
                }
            }
        }
        Ok(())
    })
}

/// A panel's title: the rule set, the kind of table and what is drawn.
fn title(set: &TableSet, what: &str) -> String {
    format!("{}, {}: {what}", set.rules, kind_name(set.cycles))
}

/// How a legend entry is drawn: a filled square (bars) or a line with a
/// dot (a series of points).
#[derive(Clone, Copy)]
enum Key {
    Bar(RGBColor),
    Line(RGBColor),
}

const EVEN_KEY: &[(&str, Key)] = &[
    ("won (left axis)", Key::Bar(palette::WON)),
    ("drawn", Key::Bar(palette::DRAWN)),
    ("lost", Key::Bar(palette::LOST)),
    ("mean value, stones (right axis)", Key::Line(palette::INK)),
];

const FORCED_KEY: &[(&str, Key)] = &[("bounds meet", Key::Bar(palette::EXACT))];

/// The title and, in one row under it, the legend: outside the plot, so
/// that it never hides a bar.
fn draw_heading(area: &Area<'_>, title: &str, key: &[(&str, Key)]) -> Result<()> {
    area.draw(&Text::new(
        title,
        (16, 10),
        ("sans-serif", 17).into_font().color(&palette::INK),
    ))?;
    let mut x = 24;
    for &(label, shape) in key {
        let y = 44;
        match shape {
            Key::Bar(color) => area.draw(&Rectangle::new(
                [(x, y - 6), (x + 12, y + 6)],
                color.filled(),
            ))?,
            Key::Line(color) => {
                area.draw(&PathElement::new(
                    vec![(x - 4, y), (x + 16, y)],
                    color.stroke_width(2),
                ))?;
                area.draw(&Circle::new((x + 6, y), 4, color.filled()))?;
            }
        }
        let style = ("sans-serif", 14)
            .into_font()
            .color(&palette::INK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        area.draw(&Text::new(label, (x + 22, y), style))?;
        x += 44 + 7 * label.len() as i32;
    }
    Ok(())
}

/// A range that holds 0 and every one of `values`, with a little room.
fn value_range(values: impl Iterator<Item = f64>) -> std::ops::Range<f64> {
    let (low, high) = values.fold((0.0f64, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let room = ((high - low) * 0.1).max(0.5);
    (low - room)..(high + room)
}

/// A bar of a level from `bottom` to `top` (shares).
fn bar(level: u32, bottom: f64, top: f64, color: RGBColor) -> Rectangle<(SegmentValue<u32>, f64)> {
    let mut rect = Rectangle::new(
        [
            (SegmentValue::Exact(level), bottom),
            (SegmentValue::Exact(level + 1), top),
        ],
        color.filled(),
    );
    rect.set_margin(0, 0, 3, 3);
    rect
}

fn even_panel(area: &Area<'_>, levels: &[LevelSummary], points: &mut Points) -> Result<()> {
    let (first, last) = level_span(levels.iter().map(|l| l.level));
    let means: Vec<(u32, f64)> = levels
        .iter()
        .filter_map(|l| Some((l.level, l.mean_value()?)))
        .collect();
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .right_y_label_area_size(60)
        .build_cartesian_2d((first..last).into_segmented(), 0.0..1.0)?
        .set_secondary_coord(
            (first..last).into_segmented(),
            value_range(means.iter().map(|&(_, m)| m)),
        );
    level_axes(&mut chart, "share of the level's positions", &percent)?;
    chart
        .configure_secondary_axes()
        .y_desc("mean value for the mover (stones)")
        .draw()?;
    for level in levels {
        let Some(s) = level.shares() else { continue };
        let n = level.level;
        chart.draw_series([
            bar(n, 0.0, s.won, palette::WON),
            bar(n, s.won, s.won + s.drawn, palette::DRAWN),
            bar(n, s.won + s.drawn, 1.0, palette::LOST),
        ])?;
    }
    chart.draw_secondary_series(LineSeries::new(
        means.iter().map(|&(n, m)| (SegmentValue::CenterOf(n), m)),
        palette::INK.stroke_width(2),
    ))?;
    for level in levels {
        let (Some(s), Some(mean)) = (level.shares(), level.mean_value()) else {
            continue;
        };
        let at = chart
            .borrow_secondary()
            .backend_coord(&(SegmentValue::CenterOf(level.level), mean));
        let data = [
            ("level", level.level.to_string()),
            ("positions", level.positions.to_string()),
            ("won", s.won.to_string()),
            ("drawn", s.drawn.to_string()),
            ("lost", s.lost.to_string()),
            ("mean", mean.to_string()),
        ];
        let tip = format!(
            "level {}: {} positions, won {:.1}%, drawn {:.1}%, lost {:.1}%, mean value {mean:+.2}",
            level.level,
            level.positions,
            100.0 * s.won,
            100.0 * s.drawn,
            100.0 * s.lost
        );
        points.add(at, &palette::INK, &data, &tip);
    }
    Ok(())
}

fn forced_panel(area: &Area<'_>, levels: &[LevelSummary], points: &mut Points) -> Result<()> {
    let (first, last) = level_span(levels.iter().map(|l| l.level));
    let mut chart = ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((first..last).into_segmented(), 0.0..1.0)?;
    level_axes(&mut chart, "share of the level's positions", &percent)?;
    let shares: Vec<(&LevelSummary, u64, f64)> = levels
        .iter()
        .filter_map(|l| Some((l, l.exact?, l.exact_share()?)))
        .collect();
    chart.draw_series(
        shares
            .iter()
            .map(|&(l, _, share)| bar(l.level, 0.0, share, palette::EXACT)),
    )?;
    for &(level, exact, share) in &shares {
        let at = chart.backend_coord(&(SegmentValue::CenterOf(level.level), share));
        let data = [
            ("level", level.level.to_string()),
            ("positions", level.positions.to_string()),
            ("exact", exact.to_string()),
            ("exact-share", share.to_string()),
        ];
        let tip = format!(
            "level {}: bounds meet on {exact} of {} positions ({:.2}%)",
            level.level,
            level.positions,
            100.0 * share
        );
        points.add(at, &palette::INK, &data, &tip);
    }
    Ok(())
}
