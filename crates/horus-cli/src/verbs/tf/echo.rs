//! `horus tf echo TARGET SOURCE`: the transform that maps SOURCE coordinates into TARGET,
//! printed at a steady rate with its stamp, age and how often it changes (tf2_ros's
//! `tf2_echo`). Lookups read the host's shared tf buffer; if no process on the host feeds
//! it yet, this one does while it runs.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use horus_tf::{now_ns, StampedTransform, TfListener, LATEST};
use serde_json::json;

use super::stamp_text;
use crate::output::Output;
use horus_launch::signals;

/// Arguments of `horus tf echo`.
#[derive(Debug, Args)]
pub(crate) struct Echo {
    /// The frame the transform maps into (e.g. `map`).
    target: String,
    /// The frame the transform maps from (e.g. `base_link`).
    source: String,
    /// Prints per second.
    #[arg(long, default_value_t = 1.0)]
    rate: f64,
    /// Stop after this many prints.
    #[arg(long, short = 'n')]
    count: Option<u64>,
    /// Fail if no transform can be looked up within this many seconds (default: wait).
    #[arg(long)]
    timeout: Option<f64>,
    /// Namespace (default: `HORUS_NAMESPACE`, else one per user).
    #[arg(long)]
    namespace: Option<String>,
}

/// How long a failed lookup goes unreported after start.
const GRACE: Duration = Duration::from_millis(500);
/// How often the lookup is repeated to see the transform change (its rate).
const POLL: Duration = Duration::from_millis(2);

pub(super) fn run(a: Echo, out: &Output) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        a.rate.is_finite() && a.rate > 0.0,
        "--rate must be a positive number of prints per second"
    );
    let period = Duration::from_secs_f64(1.0 / a.rate);
    let timeout = a
        .timeout
        .map(Duration::try_from_secs_f64)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--timeout: {e}"))?;
    let ns = a.namespace.clone().unwrap_or_else(horus::namespace);
    // Ctrl-C ends the loop: the listener then leaves the buffer and the topics cleanly.
    signals::install()?;
    let listener = TfListener::open(&ns)?;
    if let Some(e) = listener.fallback() {
        eprintln!("horus: the host's tf buffer is unavailable ({e}); using this process's own");
    }
    let start = Instant::now();
    let mut printed = 0u64;
    let mut next_print = start;
    // Distinct stamps seen since the last print: the transform's update rate.
    let (mut last_stamp, mut changes, mut since) = (None, 0u64, Instant::now());
    let mut ever = false;
    while signals::count() == 0 && a.count.is_none_or(|n| printed < n) {
        let result = listener.lookup_transform(&a.target, &a.source, LATEST);
        if let Ok(t) = &result {
            if last_stamp != Some(t.stamp_ns) {
                if last_stamp.is_some() {
                    changes += 1;
                }
                last_stamp = Some(t.stamp_ns);
            }
        }
        let now = Instant::now();
        // Right after start the listener may still be taking in what was broadcast: a
        // failed lookup is reported only after a short grace.
        let waiting = result.is_err() && !ever && start.elapsed() < GRACE;
        if now >= next_print && !waiting {
            next_print += period;
            match &result {
                Ok(t) => {
                    ever = true;
                    let window = now.duration_since(since).as_secs_f64();
                    let rate = (window > 0.0 && changes > 0).then(|| changes as f64 / window);
                    print_transform(out, &a, t, rate);
                    (changes, since) = (0, now);
                    printed += 1;
                }
                Err(e) => {
                    if let Some(t) = timeout.filter(|t| !ever && start.elapsed() >= *t) {
                        anyhow::bail!(
                            "no transform {} <- {} within {:.3} s: {e}",
                            a.target,
                            a.source,
                            t.as_secs_f64()
                        );
                    }
                    if out.is_json() {
                        out.json_line(&json!({ "target": a.target, "source": a.source,
                                               "error": e.to_string() }));
                    } else {
                        eprintln!("horus: {} <- {}: {e}", a.target, a.source);
                    }
                }
            }
        }
        std::thread::sleep(POLL);
    }
    Ok(ExitCode::SUCCESS)
}

/// Roll, pitch, yaw (degrees, extrinsic x-y-z as tf2's `getRPY`) of a unit quaternion.
fn rpy_degrees(q: &[f64; 4]) -> [f64; 3] {
    let [x, y, z, w] = *q;
    let roll = (2.0 * (w * x + y * z)).atan2(1.0 - 2.0 * (x * x + y * y));
    let pitch = (2.0 * (w * y - z * x)).clamp(-1.0, 1.0).asin();
    let yaw = (2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z));
    [roll.to_degrees(), pitch.to_degrees(), yaw.to_degrees()]
}

fn print_transform(out: &Output, a: &Echo, t: &StampedTransform, rate: Option<f64>) {
    let age = (now_ns() - t.stamp_ns) as f64 / 1e9;
    let (tr, q) = (&t.transform.translation, &t.transform.rotation);
    let rpy = rpy_degrees(q);
    if out.is_json() {
        out.json_line(&json!({
            "target": a.target,
            "source": a.source,
            "stamp_ns": t.stamp_ns,
            "age_s": age,
            "rate_hz": rate,
            "translation": tr,
            "rotation": q,
            "rpy_deg": rpy,
        }));
        return;
    }
    println!(
        "At time {} (age {age:.3} s, {})",
        stamp_text(t.stamp_ns),
        rate.map_or("not changing".to_owned(), |r| format!("{r:.1} Hz"))
    );
    println!("- Translation: [{:.3}, {:.3}, {:.3}]", tr[0], tr[1], tr[2]);
    println!(
        "- Rotation: in Quaternion [{:.3}, {:.3}, {:.3}, {:.3}]",
        q[0], q[1], q[2], q[3]
    );
    println!(
        "- Rotation: in RPY (degree) [{:.3}, {:.3}, {:.3}]",
        rpy[0], rpy[1], rpy[2]
    );
}

#[cfg(test)]
mod tests {
    use super::rpy_degrees;

    #[test]
    fn a_quarter_turn_about_z_is_a_yaw_of_90_degrees() {
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let rpy = rpy_degrees(&[0.0, 0.0, h, h]);
        assert!(rpy[0].abs() < 1e-9 && rpy[1].abs() < 1e-9, "{rpy:?}");
        assert!((rpy[2] - 90.0).abs() < 1e-9, "{rpy:?}");
    }
}
