//! `trace!` … `error!`: `info!("fmt {} {}", a, b; key = v, key2 = w)`, optionally
//! starting with `target: "name",`. The format string is checked at compile time like
//! `format!`'s (through a `format_args!` that never runs); the arguments are stored raw.
//! Inline captures (`"{x}"`) are not supported: pass `x` as an argument.

/// Logs at a given [`Level`](crate::Level): `log!(Level::Info, "x {}", 1)`.
#[macro_export]
macro_rules! log {
    ($lvl:expr, target: $target:expr, $fmt:literal $(, $arg:expr)* $(,)? $(; $($k:ident = $v:expr),* $(,)?)?) => {{
        static __META: $crate::Meta = $crate::Meta {
            level: $lvl,
            target: $target,
            file: file!(),
            line: line!(),
            format: $fmt,
            fields: &[$($(stringify!($k)),*)?],
            nargs: 0 $(+ { let _ = stringify!($arg); 1 })*,
            flags: 0,
        };
        static __SITE: $crate::CallSite = $crate::CallSite::new(&__META);
        if false {
            // Compile-time check of the format string against the arguments; never runs.
            let _ = format_args!($fmt $(, $arg)*);
        }
        $crate::__private::__write(
            &__SITE,
            $crate::__values!($($arg,)* $($($v,)*)?),
        );
    }};
    ($lvl:expr, $fmt:literal $(, $arg:expr)* $(,)? $(; $($k:ident = $v:expr),* $(,)?)?) => {
        $crate::log!($lvl, target: module_path!(), $fmt $(, $arg)* $(; $($k = $v),*)?)
    };
}

/// Logs at TRACE level.
#[macro_export]
macro_rules! trace {
    ($($t:tt)*) => { $crate::log!($crate::Level::Trace, $($t)*) };
}

/// Logs at DEBUG level.
#[macro_export]
macro_rules! debug {
    ($($t:tt)*) => { $crate::log!($crate::Level::Debug, $($t)*) };
}

/// Logs at INFO level.
#[macro_export]
macro_rules! info {
    ($($t:tt)*) => { $crate::log!($crate::Level::Info, $($t)*) };
}

/// Logs at WARN level.
#[macro_export]
macro_rules! warn {
    ($($t:tt)*) => { $crate::log!($crate::Level::Warn, $($t)*) };
}

/// Logs at ERROR level.
#[macro_export]
macro_rules! error {
    ($($t:tt)*) => { $crate::log!($crate::Level::Error, $($t)*) };
}

/// `(&a, (&b, ()))`: a record's values as a nested tuple (static dispatch).
#[doc(hidden)]
#[macro_export]
macro_rules! __values {
    () => { () };
    ($head:expr, $($rest:expr,)*) => { (&$head, $crate::__values!($($rest,)*)) };
}
