//! The `log` facade and `tracing` bridged into the ring, so library logs arrive too.
//! Their records are formatted by the library (and the fields collected) before they
//! reach us, which may allocate: the zero-allocation path is this crate's macros.

use std::fmt::Write as _;

use crate::logger::write_dynamic;
use crate::{Level, Value};

/// A [`log::Log`] that writes every `log` record into the ring:
/// `horus_log::LogBridge::install()`.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogBridge;

impl LogBridge {
    /// Installs the bridge as the `log` crate's logger (max level: trace; this crate's
    /// level filter applies). Fails if another `log` logger is installed.
    pub fn install() -> Result<(), log::SetLoggerError> {
        log::set_logger(&LogBridge)?;
        log::set_max_level(log::LevelFilter::Trace);
        Ok(())
    }
}

fn from_log(l: log::Level) -> Level {
    match l {
        log::Level::Trace => Level::Trace,
        log::Level::Debug => Level::Debug,
        log::Level::Info => Level::Info,
        log::Level::Warn => Level::Warn,
        log::Level::Error => Level::Error,
    }
}

impl log::Log for LogBridge {
    fn enabled(&self, m: &log::Metadata<'_>) -> bool {
        crate::logger::logger().is_some_and(|l| l.enabled(from_log(m.level())))
    }

    fn log(&self, r: &log::Record<'_>) {
        let level = from_log(r.level());
        let message = match r.args().as_str() {
            Some(s) => std::borrow::Cow::Borrowed(s),
            None => std::borrow::Cow::Owned(r.args().to_string()),
        };
        write_dynamic(
            level,
            r.target(),
            r.file().unwrap_or(""),
            r.line().unwrap_or(0),
            &message,
            &[],
        );
    }

    fn flush(&self) {}
}

/// A `tracing_subscriber` layer writing every event into the ring (spans are not
/// recorded): `tracing_subscriber::registry().with(horus_log::TracingLayer)`, or as the
/// only subscriber with `Registry::default().with(TracingLayer)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TracingLayer;

fn from_tracing(l: &tracing_core::Level) -> Level {
    match *l {
        tracing_core::Level::TRACE => Level::Trace,
        tracing_core::Level::DEBUG => Level::Debug,
        tracing_core::Level::INFO => Level::Info,
        tracing_core::Level::WARN => Level::Warn,
        _ => Level::Error,
    }
}

/// Collects an event's message and fields as text.
#[derive(Default)]
struct Fields {
    message: String,
    fields: Vec<(&'static str, String)>,
}

impl tracing_core::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing_core::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            self.fields.push((field.name(), format!("{value:?}")));
        }
    }

    fn record_str(&mut self, field: &tracing_core::Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            self.fields.push((field.name(), value.to_owned()));
        }
    }
}

impl<S: tracing_core::Subscriber> tracing_subscriber::Layer<S> for TracingLayer {
    fn enabled(
        &self,
        m: &tracing_core::Metadata<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        crate::logger::logger().is_some_and(|l| l.enabled(from_tracing(m.level())))
    }

    fn on_event(&self, e: &tracing_core::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let m = e.metadata();
        let mut f = Fields::default();
        e.record(&mut f);
        let fields: Vec<(&str, &dyn Value)> = f
            .fields
            .iter()
            .map(|(k, v)| (*k, v as &dyn Value))
            .collect();
        write_dynamic(
            from_tracing(m.level()),
            m.target(),
            m.file().unwrap_or(""),
            m.line().unwrap_or(0),
            &f.message,
            &fields,
        );
    }
}
