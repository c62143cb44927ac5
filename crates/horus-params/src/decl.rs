//! Parameter declarations: name, kind, default, description, optional range.

use crate::error::ParamError;
use crate::value::{ParamKind, ParamValue};

/// Longest parameter name, in bytes (the service's name field).
pub const NAME_CAPACITY: usize = 64;
/// Longest description, in bytes (the service's description field).
pub const DESCRIPTION_CAPACITY: usize = 192;

/// An inclusive range for a numeric parameter (applies to every element of an array).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Range {
    /// For `I64` and `I64Array`.
    I64 {
        /// Smallest allowed value.
        min: i64,
        /// Largest allowed value.
        max: i64,
    },
    /// For `F64` and `F64Array`. NaN is never in range.
    F64 {
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
}

impl Range {
    /// Whether this range may constrain a parameter of `kind`.
    pub fn fits(&self, kind: ParamKind) -> bool {
        match self {
            Range::I64 { .. } => matches!(kind, ParamKind::I64 | ParamKind::I64Array),
            Range::F64 { .. } => matches!(kind, ParamKind::F64 | ParamKind::F64Array),
        }
    }

    /// Checks `value` (of a kind this range fits) against the range.
    pub(crate) fn check(&self, name: &str, value: &ParamValue) -> Result<(), ParamError> {
        let out = |v: String, min: String, max: String| ParamError::OutOfRange {
            name: name.to_owned(),
            value: v,
            min,
            max,
        };
        match (*self, value) {
            (Range::I64 { min, max }, ParamValue::I64(v)) => check_i(*v, min, max, out),
            (Range::I64 { min, max }, ParamValue::I64Array(vs)) => {
                vs.iter().try_for_each(|v| check_i(*v, min, max, out))
            }
            (Range::F64 { min, max }, ParamValue::F64(v)) => check_f(*v, min, max, out),
            (Range::F64 { min, max }, ParamValue::F64Array(vs)) => {
                vs.iter().try_for_each(|v| check_f(*v, min, max, out))
            }
            _ => Ok(()),
        }
    }
}

fn check_i(
    v: i64,
    min: i64,
    max: i64,
    out: impl Fn(String, String, String) -> ParamError,
) -> Result<(), ParamError> {
    if (min..=max).contains(&v) {
        Ok(())
    } else {
        Err(out(v.to_string(), min.to_string(), max.to_string()))
    }
}

fn check_f(
    v: f64,
    min: f64,
    max: f64,
    out: impl Fn(String, String, String) -> ParamError,
) -> Result<(), ParamError> {
    // `contains` is false for NaN, so NaN is rejected.
    if (min..=max).contains(&v) {
        Ok(())
    } else {
        Err(out(
            format!("{v:?}"),
            format!("{min:?}"),
            format!("{max:?}"),
        ))
    }
}

/// A parameter declaration. Build with [`ParamDecl::new`] and the setters.
///
/// ```
/// use horus_params::{ParamDecl, Range};
/// let d = ParamDecl::new("max_speed", 1.5)
///     .description("top speed, m/s")
///     .range(Range::F64 { min: 0.0, max: 3.0 });
/// assert_eq!(d.name(), "max_speed");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ParamDecl {
    pub(crate) name: String,
    pub(crate) default: ParamValue,
    pub(crate) description: String,
    pub(crate) range: Option<Range>,
}

impl ParamDecl {
    /// A parameter named `name` whose kind is the default's kind.
    pub fn new(name: &str, default: impl Into<ParamValue>) -> Self {
        ParamDecl {
            name: name.to_owned(),
            default: default.into(),
            description: String::new(),
            range: None,
        }
    }

    /// Sets the human-readable description.
    pub fn description(mut self, text: &str) -> Self {
        self.description = text.to_owned();
        self
    }

    /// Sets an inclusive range (numeric kinds only; checked when declared).
    pub fn range(mut self, range: Range) -> Self {
        self.range = Some(range);
        self
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The kind (the default's kind).
    pub fn kind(&self) -> ParamKind {
        self.default.kind()
    }

    /// The default value.
    pub fn default_value(&self) -> &ParamValue {
        &self.default
    }

    /// The description.
    pub fn description_text(&self) -> &str {
        &self.description
    }

    /// The range, if any.
    pub fn range_bounds(&self) -> Option<Range> {
        self.range
    }

    /// Checks that `value` has this parameter's kind and is in range.
    pub fn check(&self, value: &ParamValue) -> Result<(), ParamError> {
        if value.kind() != self.kind() {
            return Err(ParamError::WrongType {
                name: self.name.clone(),
                expected: self.kind(),
                got: value.kind(),
            });
        }
        match &self.range {
            Some(r) => r.check(&self.name, value),
            None => Ok(()),
        }
    }

    /// Checks the declaration itself.
    pub(crate) fn validate(&self) -> Result<(), ParamError> {
        let bad = |reason: &str| ParamError::InvalidDeclaration {
            name: self.name.clone(),
            reason: reason.to_owned(),
        };
        if self.name.is_empty() || self.name.len() > NAME_CAPACITY {
            return Err(bad("name must be 1 to 64 bytes"));
        }
        if self.name.contains('\0') {
            return Err(bad("name contains a NUL byte"));
        }
        if self.description.len() > DESCRIPTION_CAPACITY || self.description.contains('\0') {
            return Err(bad("description longer than 192 bytes or contains NUL"));
        }
        if let Some(r) = &self.range {
            if !r.fits(self.kind()) {
                return Err(bad("range does not match the parameter's kind"));
            }
        }
        self.check(&self.default)
            .map_err(|e| bad(&format!("default rejected: {e}")))?;
        crate::codec::check_encoded_len(&self.name, &self.default)
    }
}
