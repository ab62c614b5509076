//! The SVG charts of `info --plot` and `build --profile`, read back as XML:
//! one data point per level, holding the numbers `info --json` and the
//! build's summary give, placed on the chart where those numbers go.
//!
//! The data points are the chart's circles with `data-*` attributes
//! (`src/plot/mod.rs`): plotters writes no such attribute, so they are
//! found without depending on how plotters draws anything else.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value as Json;
use tempfile::TempDir;

use crate::cli::{fails, json_lines, ok};

/// A data point: its `data-*` attributes (without the prefix) and where it
/// is drawn.
#[derive(Debug)]
struct Point {
    data: BTreeMap<String, String>,
    cx: f64,
    cy: f64,
}

impl Point {
    fn number(&self, name: &str) -> f64 {
        self.data[name]
            .parse()
            .unwrap_or_else(|e| panic!("data-{name} of {self:?}: {e}"))
    }

    fn level(&self) -> u64 {
        self.data["level"].parse().unwrap()
    }
}

/// Parses the SVG file as XML and returns its data points and its texts.
fn read_chart(path: &Path) -> (Vec<Point>, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    let points = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .filter(|n| n.attributes().any(|a| a.name().starts_with("data-")))
        .map(|n| Point {
            data: n
                .attributes()
                .filter_map(|a| {
                    Some((
                        a.name().strip_prefix("data-")?.to_string(),
                        a.value().to_string(),
                    ))
                })
                .collect(),
            cx: n.attribute("cx").unwrap().parse().unwrap(),
            cy: n.attribute("cy").unwrap().parse().unwrap(),
        })
        .collect();
    let texts = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(|t| t.trim().to_string())
        .collect();
    (points, texts)
}

/// Insists that `points` (ascending by level) are drawn left to right and
/// at a height that is one linear, rising function of `value`: within a
/// pixel of the line through the lowest and the highest.
fn assert_placed(points: &[&Point], value: impl Fn(&Point) -> f64) {
    assert!(
        points.windows(2).all(|w| w[0].cx < w[1].cx),
        "left to right: {points:?}"
    );
    let low = points
        .iter()
        .min_by(|a, b| value(a).total_cmp(&value(b)))
        .unwrap();
    let high = points
        .iter()
        .max_by(|a, b| value(a).total_cmp(&value(b)))
        .unwrap();
    if value(high) == value(low) {
        assert!(
            points.iter().all(|p| (p.cy - low.cy).abs() <= 1.0),
            "{points:?}"
        );
        return;
    }
    let slope = (high.cy - low.cy) / (value(high) - value(low));
    assert!(slope < 0.0, "higher values are drawn higher: {points:?}");
    for p in points {
        let expected = low.cy + slope * (value(p) - value(low));
        assert!(
            (p.cy - expected).abs() <= 1.0,
            "{p:?} off its line (expected y {expected})"
        );
    }
}

/// Positions won, drawn and lost for the mover and the mean value, from
/// `info --json`'s histogram of an even level.
fn shares_of(info: &Json) -> [f64; 4] {
    let positions = info["positions"].as_u64().unwrap();
    let (mut won, mut drawn, mut lost, mut total) = (0u64, 0u64, 0u64, 0i64);
    for (value, count) in info["histogram"].as_object().unwrap() {
        let (v, c): (i64, u64) = (value.parse().unwrap(), count.as_u64().unwrap());
        match v.signum() {
            1 => won += c,
            0 => drawn += c,
            _ => lost += c,
        }
        total += v * c as i64;
    }
    let share = |n: u64| n as f64 / positions as f64;
    [
        share(won),
        share(drawn),
        share(lost),
        total as f64 / positions as f64,
    ]
}

#[test]
fn info_plot_has_a_point_per_level_with_the_info_numbers() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().to_str().unwrap();
    ok(&["build", "--stones", "8", "--dir", path]);
    ok(&[
        "build", "--cycles", "forced", "--stones", "5", "--dir", path,
    ]);
    let chart = dir.path().join("levels.svg");
    let out = ok(&["info", "--dir", path, "--plot", chart.to_str().unwrap()]);
    assert!(out.contains("chart of the levels: "), "{out}");
    let infos = json_lines(&ok(&["info", "--dir", path, "--json"]));
    let (points, texts) = read_chart(&chart);

    let even: Vec<&Point> = points
        .iter()
        .filter(|p| p.data.contains_key("mean"))
        .collect();
    let forced: Vec<&Point> = points
        .iter()
        .filter(|p| p.data.contains_key("exact-share"))
        .collect();
    assert_eq!(even.len() + forced.len(), points.len(), "{points:?}");
    let even_infos: Vec<&Json> = infos.iter().filter(|i| i["cycles"] == "even").collect();
    let forced_infos: Vec<&Json> = infos.iter().filter(|i| i["cycles"] == "forced").collect();
    assert_eq!((even.len(), forced.len()), (9, 6), "one point per level");
    assert_eq!((even_infos.len(), forced_infos.len()), (9, 6));

    for (point, info) in even.iter().zip(&even_infos) {
        assert_eq!(point.level(), info["level"].as_u64().unwrap(), "{point:?}");
        assert_eq!(point.data["positions"], info["positions"].to_string());
        let [won, drawn, lost, mean] = shares_of(info);
        let shown = ["won", "drawn", "lost", "mean"].map(|name| point.number(name));
        assert_eq!(shown, [won, drawn, lost, mean], "level {}", point.level());
    }
    for (point, info) in forced.iter().zip(&forced_infos) {
        assert_eq!(point.level(), info["level"].as_u64().unwrap(), "{point:?}");
        assert_eq!(point.data["exact"], info["exact"].to_string());
        assert_eq!(
            point.number("exact-share"),
            info["exact_share"].as_f64().unwrap()
        );
    }
    assert_placed(&even, |p| p.number("mean"));
    assert_placed(&forced, |p| p.number("exact-share"));

    for title in [
        "oware with 6 pits per side, even-split values",
        "oware with 6 pits per side, forced bounds",
    ] {
        assert!(
            texts.iter().any(|t| t.starts_with(title)),
            "no title {title:?} in {texts:?}"
        );
    }
    assert!(
        texts.iter().any(|t| t == "won (left axis)"),
        "legend: {texts:?}"
    );
}

/// The summary rows a build printed, by level: its fields.
fn summary_rows(out: &str) -> BTreeMap<u64, Vec<String>> {
    out.lines()
        .filter_map(|line| {
            let fields: Vec<String> = line.split_whitespace().map(str::to_string).collect();
            let level = fields.first()?.parse().ok()?;
            Some((level, fields))
        })
        .collect()
}

#[test]
fn build_profile_has_a_point_per_level_with_the_summary_numbers() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().to_str().unwrap();
    let chart = dir.path().join("profile.svg");
    let chart_path = chart.to_str().unwrap();
    let out = ok(&[
        "build",
        "--stones",
        "9",
        "--dir",
        path,
        "--profile",
        chart_path,
    ]);
    assert!(
        out.ends_with(&format!("build profile: {chart_path}\n")),
        "{out}"
    );
    let rows = summary_rows(&out);
    assert_eq!(rows.len(), 10, "{out}");
    let (points, texts) = read_chart(&chart);
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("build of oware with 6 pits per side")),
        "title: {texts:?}"
    );
    let series = |name: &str| -> Vec<&Point> {
        points.iter().filter(|p| p.data["series"] == name).collect()
    };
    let (seconds, rates, peaks) = (series("seconds"), series("rate"), series("peak-rss"));
    assert_eq!(seconds.len() + rates.len() + peaks.len(), points.len());
    assert_eq!(seconds.len(), rows.len(), "a wall time per level");
    for point in &seconds {
        let row = &rows[&point.level()];
        assert_eq!(format!("{:.2}", point.number("value")), row[2], "{row:?}");
    }
    // A rate where the row has one; none where it says `-` (too quick).
    let timed: Vec<u64> = rows
        .iter()
        .filter(|(_, r)| r[3] != "-")
        .map(|(&n, _)| n)
        .collect();
    assert_eq!(rates.iter().map(|p| p.level()).collect::<Vec<_>>(), timed);
    for point in &rates {
        assert_eq!(
            format!("{:.0}", point.number("value")),
            rows[&point.level()][3]
        );
    }
    if cfg!(target_os = "linux") {
        assert_eq!(peaks.len(), rows.len(), "a resident peak per level");
        for point in &peaks {
            let row = &rows[&point.level()];
            assert_eq!(format!("{:.0}", point.number("value")), row[9], "{row:?}");
        }
        assert_placed(&peaks, |p| p.number("value"));
    }
    assert_placed(&seconds, |p| p.number("value"));

    // A second run reuses every level: no rate, and every point says so.
    let again = ok(&[
        "build",
        "--stones",
        "9",
        "--dir",
        path,
        "--profile",
        chart_path,
    ]);
    assert_eq!(again.matches("reused").count(), 10, "{again}");
    let (points, _) = read_chart(&chart);
    assert!(points
        .iter()
        .all(|p| p.data.get("reused").is_some_and(|r| r == "true")));
    assert!(
        points.iter().all(|p| p.data["series"] != "rate"),
        "{points:?}"
    );
}

#[test]
fn charts_refuse_what_they_cannot_write() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().to_str().unwrap();
    let png = dir.path().join("levels.png");
    let lost = dir.path().join("no-such-dir/levels.svg");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();

    // Checked before the build starts: nothing is built.
    let err = fails(&[
        "build",
        "--stones",
        "3",
        "--dir",
        path,
        "--profile",
        png.to_str().unwrap(),
    ]);
    assert!(err.contains("SVG only"), "{err}");
    let err = fails(&[
        "build",
        "--stones",
        "3",
        "--dir",
        path,
        "--profile",
        lost.to_str().unwrap(),
    ]);
    assert!(err.contains("no directory"), "{err}");
    assert!(
        !dir.path().join("oware-6").exists(),
        "built before the check"
    );

    let err = fails(&[
        "info",
        "--dir",
        empty.to_str().unwrap(),
        "--plot",
        "levels.svg",
    ]);
    assert!(err.contains("no tables in"), "{err}");
    ok(&["build", "--stones", "3", "--dir", path]);
    let err = fails(&["info", "--dir", path, "--plot", png.to_str().unwrap()]);
    assert!(err.contains("SVG only"), "{err}");
    let err = fails(&["info", "--dir", path, "--plot", lost.to_str().unwrap()]);
    assert!(err.contains("no directory"), "{err}");
    // A directory where the file should go: the write itself fails.
    let taken = dir.path().join("taken.svg");
    std::fs::create_dir(&taken).unwrap();
    let err = fails(&["info", "--dir", path, "--plot", taken.to_str().unwrap()]);
    assert!(err.contains("cannot write the chart"), "{err}");
    assert!(!png.exists() && !lost.exists());
}
