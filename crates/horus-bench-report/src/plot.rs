//! PNG line charts for `docs/benchmarks.md`, drawn with `plotters`' bitmap backend.
//!
//! Text is rendered by `ab_glyph` from a TrueType file read at run time (no
//! fontconfig, no network): `HORUS_BENCH_FONT` if set, else DejaVu Sans from
//! Debian's `fonts-dejavu-core` (`make setup` installs it). Both axes are
//! logarithmic: payload sizes and subscriber/topic counts grow geometrically, and
//! latencies span several decades.

use std::path::Path;
use std::sync::OnceLock;

use anyhow::{anyhow, Context};
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;

/// Where the font is looked for, in order (after `HORUS_BENCH_FONT`).
pub const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

/// The font family name the charts use.
const FAMILY: &str = "sans-serif";

/// Loads and registers the font once per process; fails with the paths tried.
pub fn init_font() -> anyhow::Result<()> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        let candidates: Vec<String> = std::env::var("HORUS_BENCH_FONT")
            .into_iter()
            .chain(FONT_PATHS.iter().map(|s| (*s).to_owned()))
            .collect();
        let (path, bytes) = candidates
            .iter()
            .find_map(|p| std::fs::read(p).ok().map(|b| (p, b)))
            .ok_or_else(|| {
                format!(
                    "no TrueType font found (tried {}); install fonts-dejavu-core or set \
                     HORUS_BENCH_FONT",
                    candidates.join(", ")
                )
            })?;
        // The registry keeps `&'static` font data for the life of the process.
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        plotters::style::register_font(FAMILY, FontStyle::Normal, bytes)
            .map_err(|_| format!("{path} is not a usable TrueType font"))
    })
    .clone()
    .map_err(|e| anyhow!(e))
}

/// One line of a chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// `(x, y)` points, x ascending.
    pub points: Vec<(f64, f64)>,
}

/// What a chart shows.
#[derive(Debug, Clone)]
pub struct Chart<'a> {
    /// Title above the plot.
    pub title: &'a str,
    /// X axis label.
    pub x_label: &'a str,
    /// Y axis label.
    pub y_label: &'a str,
    /// How X values are printed on the axis.
    pub x_format: fn(f64) -> String,
    /// How Y values are printed on the axis.
    pub y_format: fn(f64) -> String,
}

/// A stable colour per series index.
fn colour(i: usize) -> RGBColor {
    const C: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    C[i % C.len()]
}

fn plot_err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("drawing the chart: {e:?}")
}

/// Draws `series` on log-log axes into a 1000×620 PNG at `path`.
pub fn log_log(path: &Path, chart: &Chart<'_>, series: &[Series]) -> anyhow::Result<()> {
    init_font()?;
    let points = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    anyhow::ensure!(
        x0 > 0.0 && y0 > 0.0 && x0 <= x1,
        "no positive points to plot"
    );
    // A little air around the data; one decade at least on Y.
    let (x0, x1) = (x0 / 1.2, x1 * 1.2);
    let (y0, y1) = (y0 / 1.5, (y1 * 1.5).max(y0 * 10.0));
    draw(
        path,
        chart,
        series,
        // X (sizes, counts) grows in powers of two: label it that way.
        (x0..x1).log_scale().base(2.0),
        (y0..y1).log_scale(),
    )
    .with_context(|| format!("writing {}", path.display()))
}

fn draw<X, Y>(path: &Path, chart: &Chart<'_>, series: &[Series], x: X, y: Y) -> anyhow::Result<()>
where
    X: AsRangedCoord<Value = f64>,
    Y: AsRangedCoord<Value = f64>,
    X::CoordDescType: ValueFormatter<f64>,
    Y::CoordDescType: ValueFormatter<f64>,
{
    let root = BitMapBackend::new(path, (1000, 620)).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let mut c = ChartBuilder::on(&root)
        .caption(chart.title, (FAMILY, 24))
        .margin(16)
        .x_label_area_size(56)
        .y_label_area_size(86)
        .build_cartesian_2d(x, y)
        .map_err(plot_err)?;
    let (xf, yf) = (chart.x_format, chart.y_format);
    c.configure_mesh()
        .x_labels(12)
        .x_desc(chart.x_label)
        .y_desc(chart.y_label)
        .x_label_formatter(&|v| xf(*v))
        .y_label_formatter(&|v| yf(*v))
        .label_style((FAMILY, 15))
        .axis_desc_style((FAMILY, 17))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()
        .map_err(plot_err)?;
    for (i, s) in series.iter().enumerate() {
        let col = colour(i);
        c.draw_series(LineSeries::new(s.points.clone(), col.stroke_width(2)))
            .map_err(plot_err)?
            .label(s.name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], col.stroke_width(3)));
        c.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, col.filled())))
            .map_err(plot_err)?;
    }
    c.configure_series_labels()
        .label_font((FAMILY, 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(plot_err)?;
    root.present().map_err(plot_err)?;
    Ok(())
}

/// `16 B`, `4 KiB`, `1 MiB` for byte axes.
pub fn bytes_label(v: f64) -> String {
    match v {
        v if v >= 1024.0 * 1024.0 => format!("{:.0} MiB", v / (1024.0 * 1024.0)),
        v if v >= 1024.0 => format!("{:.0} KiB", v / 1024.0),
        v => format!("{v:.0} B"),
    }
}

/// `250 ns`, `12 µs`, `3.1 ms` for nanosecond axes.
pub fn ns_label(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{:.1} ms", v / 1e6),
        v if v >= 1e3 => format!("{:.0} µs", v / 1e3),
        v => format!("{v:.0} ns"),
    }
}

/// Plain counts.
pub fn count_label(v: f64) -> String {
    format!("{v:.0}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_a_png_when_a_font_exists() {
        if init_font().is_err() {
            return; // no font on this machine: the report binary says so itself
        }
        let path = std::env::temp_dir().join(format!("horus-plot-{}.png", std::process::id()));
        let series = [Series {
            name: "horus".into(),
            points: vec![(16.0, 300.0), (1024.0, 500.0), (1048576.0, 200_000.0)],
        }];
        let chart = Chart {
            title: "test",
            x_label: "payload",
            y_label: "RTT",
            x_format: bytes_label,
            y_format: ns_label,
        };
        log_log(&path, &chart, &series).unwrap();
        let png = std::fs::read(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        assert_eq!(&png[1..4], b"PNG");
    }

    #[test]
    fn labels() {
        assert_eq!(bytes_label(65536.0), "64 KiB");
        assert_eq!(ns_label(2500.0), "2 µs");
    }
}
