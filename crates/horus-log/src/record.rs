//! Decoded records and how they are printed: the reader formats, never the writer.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::callsite::{self, SiteInfo, DYNAMIC};
use crate::value::{self, Val};
use crate::view::{View, RECORD_HEAD};
use crate::Level;

/// One log record, decoded.
#[derive(Clone, Debug, PartialEq)]
pub struct LogRecord {
    /// Ring position (cells since the segment was created): orders one process's records.
    pub position: u64,
    /// Writing process.
    pub pid: u32,
    /// Its name (process name or the one given to the builder).
    pub process: String,
    /// Writing thread (kernel tid).
    pub tid: u32,
    /// Wall-clock time, Unix nanoseconds.
    pub unix_ns: u64,
    /// Severity.
    pub level: Level,
    /// Target (module path, or the `target:` given; a bridged record's own).
    pub target: String,
    /// Source file (may be empty).
    pub file: String,
    /// Source line (0 if unknown).
    pub line: u32,
    /// The message: the format string with its arguments.
    pub message: String,
    /// Structured key/value fields.
    pub fields: Vec<(String, Val)>,
}

/// Why a record could not be decoded (the reader skips and counts it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The record names a call site that is not in the table.
    #[error("unknown call site {0}")]
    UnknownSite(u32),
    /// A value's bytes are malformed or the count does not match.
    #[error("malformed values")]
    Values,
}

/// Call sites read so far from one segment (entries never change once published).
#[derive(Debug, Default)]
pub(crate) struct Sites(HashMap<u32, SiteInfo>);

impl Sites {
    fn get(&mut self, view: &View, id: u32) -> Option<&SiteInfo> {
        if id == 0 {
            return None;
        }
        if let std::collections::hash_map::Entry::Vacant(e) = self.0.entry(id) {
            // SAFETY: the view's site table is inside its live mapping.
            let info = unsafe { callsite::read_entry(view.sites, view.site_capacity, id - 1) }?;
            e.insert(info);
        }
        self.0.get(&id)
    }
}

/// Clock parameters of a segment, to turn stamps into Unix time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ClockParams {
    pub(crate) base: u64,
    pub(crate) unix_base: u64,
    pub(crate) period: f64,
}

/// Decodes a record's bytes (validated length) into a [`LogRecord`].
pub(crate) fn decode(
    view: &View,
    sites: &mut Sites,
    clock: ClockParams,
    bytes: &[u8],
    position: u64,
    (pid, process): (u32, &str),
    refused_specs: &mut u64,
) -> Result<LogRecord, DecodeError> {
    let u32_at =
        |o: usize| u32::from_ne_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
    debug_assert!(bytes.len() >= RECORD_HEAD);
    let id = u32_at(0);
    let mut t = [0u8; 8];
    t.copy_from_slice(&bytes[8..16]);
    let stamp = u64::from_ne_bytes(t);
    let tid = u32_at(16);
    let nvalues = u16::from_ne_bytes([bytes[20], bytes[21]]) as usize;
    let site = sites
        .get(view, id)
        .ok_or(DecodeError::UnknownSite(id))?
        .clone();
    // Bounded by the record's length: every value takes at least 2 bytes.
    let mut values = Vec::new();
    let mut at = RECORD_HEAD;
    while at < bytes.len() && values.len() < nvalues {
        let (v, used) = value::decode(&bytes[at..]).ok_or(DecodeError::Values)?;
        values.push(v);
        at += used;
    }
    if values.len() != nvalues {
        return Err(DecodeError::Values);
    }
    let unix_ns = crate::clock::to_unix_ns(stamp, clock.base, clock.unix_base, clock.period);
    let mut rec = LogRecord {
        position,
        pid,
        process: process.to_owned(),
        tid,
        unix_ns,
        level: site.level,
        target: site.target.clone(),
        file: site.file.clone(),
        line: site.line,
        message: String::new(),
        fields: Vec::new(),
    };
    if site.flags & DYNAMIC != 0 {
        let mut it = values.into_iter();
        let mut text = || match it.next() {
            Some(Val::Str(s)) => Ok(s),
            _ => Err(DecodeError::Values),
        };
        rec.target = text()?;
        rec.file = text()?;
        rec.message = text()?;
        rec.line = match it.next() {
            Some(Val::U64(l)) => l.min(u64::from(u32::MAX)) as u32,
            _ => return Err(DecodeError::Values),
        };
        while let Some(k) = it.next() {
            let (Val::Str(k), Some(v)) = (k, it.next()) else {
                return Err(DecodeError::Values);
            };
            rec.fields.push((k, v));
        }
        return Ok(rec);
    }
    let nargs = (site.nargs as usize).min(values.len());
    let (message, refused) = render_counted(&site.format, &values[..nargs]);
    rec.message = message;
    *refused_specs += u64::from(refused);
    for (k, v) in site.fields.iter().zip(values.into_iter().skip(nargs)) {
        rec.fields.push((k.clone(), v));
    }
    Ok(rec)
}

/// Largest precision a placeholder may ask for (`{:.N}`). A call site's format string is
/// read from shared memory (untrusted): beyond this the value is printed without the
/// precision and the placeholder is counted as refused. (The standard formatter panics
/// past `u16::MAX`; the bound also limits what one placeholder can expand to.)
pub const MAX_PRECISION: usize = 1024;

/// Renders a `format!`-style string with stored arguments: `{}`, `{:?}`, `{N}`, `{:.P}`,
/// `{{`/`}}`. Other specs print the value plainly; an argument that is missing prints as
/// the placeholder itself; a precision above [`MAX_PRECISION`] is not applied.
pub fn render(format: &str, args: &[Val]) -> String {
    render_counted(format, args).0
}

/// [`render`], also returning how many placeholders asked for a precision above
/// [`MAX_PRECISION`] (their values are printed without it).
pub fn render_counted(format: &str, args: &[Val]) -> (String, u32) {
    let mut refused = 0u32;
    let out = render_into(format, args, &mut refused);
    (out, refused)
}

fn render_into(format: &str, args: &[Val], refused: &mut u32) -> String {
    let mut out = String::with_capacity(format.len() + 16 * args.len());
    let mut next = 0usize;
    let mut rest = format;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if tail.starts_with("{{") || tail.starts_with("}}") {
            out.push_str(&tail[..1]);
            rest = &tail[2..];
            continue;
        }
        if let Some(after) = tail.strip_prefix('}') {
            out.push('}');
            rest = after;
            continue;
        }
        let Some(close) = tail.find('}') else {
            out.push_str(tail);
            return out;
        };
        let inner = &tail[1..close];
        let (pos, spec) = inner.split_once(':').unwrap_or((inner, ""));
        let index = if pos.is_empty() {
            next += 1;
            Some(next - 1)
        } else {
            pos.parse::<usize>().ok()
        };
        match index.and_then(|i| args.get(i)) {
            Some(v) => {
                if !fmt_spec(&mut out, v, spec) {
                    *refused = refused.saturating_add(1);
                }
            }
            None => out.push_str(&tail[..=close]),
        }
        rest = &tail[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Formats `v` per `spec`; false if the spec's precision was refused (above
/// [`MAX_PRECISION`], or digits too many for a number): the value is then printed plainly.
fn fmt_spec(out: &mut String, v: &Val, spec: &str) -> bool {
    let debug = spec.ends_with('?');
    let digits = spec
        .split_once('.')
        .map(|(_, p)| p.trim_end_matches('?'))
        .filter(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let precision = digits.and_then(|p| p.parse::<usize>().ok());
    if digits.is_some() && precision.is_none_or(|p| p > MAX_PRECISION) {
        let _ = write!(out, "{v}");
        return false;
    }
    let _ = match (v, precision) {
        (Val::F64(x), Some(p)) => write!(out, "{x:.p$}"),
        (Val::F32(x), Some(p)) => write!(out, "{x:.p$}"),
        (Val::Str(s), _) if debug => write!(out, "{s:?}"),
        (Val::Char(c), _) if debug => write!(out, "{c:?}"),
        (Val::F64(x), None) if debug => write!(out, "{x:?}"),
        (Val::F32(x), None) if debug => write!(out, "{x:?}"),
        _ => write!(out, "{v}"),
    };
    true
}

/// `YYYY-MM-DDTHH:MM:SS.uuuuuuZ` of Unix nanoseconds (UTC).
pub fn format_time(unix_ns: u64) -> String {
    let secs = unix_ns / 1_000_000_000;
    let micros = (unix_ns % 1_000_000_000) / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

impl LogRecord {
    /// `message k=v k2=v2` (string values quoted when they contain spaces).
    pub fn message_with_fields(&self) -> String {
        let mut s = self.message.clone();
        for (k, v) in &self.fields {
            match v {
                Val::Str(t) if t.contains(' ') || t.is_empty() => {
                    let _ = write!(s, " {k}={t:?}");
                }
                _ => {
                    let _ = write!(s, " {k}={v}");
                }
            }
        }
        s
    }

    /// The human line: `time LEVEL process[pid] target: message k=v`.
    pub fn human(&self) -> String {
        format!(
            "{} {:<5} {}[{}] {}: {}",
            format_time(self.unix_ns),
            self.level.name(),
            self.process,
            self.pid,
            self.target,
            self.message_with_fields()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_handles_specs_and_escapes() {
        let args = [Val::U64(7), Val::F64(1.23456), Val::Str("a b".into())];
        assert_eq!(
            render("x={} y={:.2} s={:?} {{}}", &args),
            "x=7 y=1.23 s=\"a b\" {}"
        );
        assert_eq!(render("{1} {0}", &args), "1.23456 7");
        assert_eq!(render("{} {} {} {}", &args), "7 1.23456 a b {}");
        assert_eq!(render("{name} }", &[]), "{name} }");
        assert_eq!(render("open {", &[]), "open {");
    }

    #[test]
    fn format_precision_above_u16_does_not_panic_reader() {
        // A call site's format string comes from shared memory: `{:.70000}` made the
        // reader's `{x:.p$}` panic (precision beyond u16::MAX) in every reader.
        let args = [Val::F64(1.5), Val::F32(2.5), Val::F64(3.0)];
        let (s, refused) =
            render_counted("a={:.70000} b={:.99999999999999999999999} c={:.2}", &args);
        assert_eq!(s, "a=1.5 b=2.5 c=3.00");
        assert_eq!(refused, 2);
        // At the bound it applies; just above, it is refused.
        let (s, refused) = render_counted(&format!("{{:.{MAX_PRECISION}}}"), &args);
        assert_eq!((s.len(), refused), (2 + MAX_PRECISION, 0));
        let (s, refused) = render_counted(&format!("{{:.{}?}}", MAX_PRECISION + 1), &args);
        assert_eq!((s.as_str(), refused), ("1.5", 1));
        assert_eq!(render("{:.65536}", &args), "1.5");
    }

    #[test]
    fn time_is_utc_iso() {
        assert_eq!(format_time(0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            format_time(1_795_370_542_487_252_185),
            "2026-11-22T18:02:22.487252Z"
        );
    }
}
