//! The node's parameter registry: declarations, current values, change
//! tracking (a changed-flag per parameter and optional callbacks).

use crate::decl::ParamDecl;
use crate::error::ParamError;
use crate::value::ParamValue;

/// A change callback: parameter name and its new value.
type Callback = Box<dyn FnMut(&str, &ParamValue) + Send>;

pub(crate) struct Entry {
    pub(crate) decl: ParamDecl,
    pub(crate) value: ParamValue,
    changed: bool,
}

/// A node's parameters. Every set is validated against the declaration
/// (type, range, size); a rejected set leaves the value unchanged.
///
/// ```
/// use horus_params::{ParamDecl, ParamError, Parameters, Range};
/// let mut params = Parameters::new();
/// params.declare(ParamDecl::new("max_speed", 1.5).range(Range::F64 { min: 0.0, max: 3.0 }))?;
/// params.set("max_speed", 2.0.into())?;
/// assert_eq!(params.take_changed(), vec!["max_speed".to_string()]);
/// assert!(matches!(params.set("max_speed", 9.0.into()), Err(ParamError::OutOfRange { .. })));
/// assert_eq!(params.get("max_speed")?.as_f64(), Some(2.0));
/// # Ok::<(), ParamError>(())
/// ```
#[derive(Default)]
pub struct Parameters {
    entries: Vec<Entry>,
    callbacks: Vec<Callback>,
}

impl std::fmt::Debug for Parameters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.entries.iter().map(|e| (&e.decl.name, &e.value)))
            .finish()
    }
}

impl Parameters {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Declares a parameter; its value starts at its default.
    /// `InvalidDeclaration` for a duplicate name or an invalid declaration.
    pub fn declare(&mut self, decl: ParamDecl) -> Result<(), ParamError> {
        decl.validate()?;
        if self.find(&decl.name).is_some() {
            return Err(ParamError::InvalidDeclaration {
                name: decl.name,
                reason: "declared twice".into(),
            });
        }
        self.entries.push(Entry {
            value: decl.default.clone(),
            decl,
            changed: false,
        });
        Ok(())
    }

    /// The current value of `name`.
    pub fn get(&self, name: &str) -> Result<&ParamValue, ParamError> {
        self.entry(name).map(|e| &e.value)
    }

    /// The declaration of `name`.
    pub fn describe(&self, name: &str) -> Result<&ParamDecl, ParamError> {
        self.entry(name).map(|e| &e.decl)
    }

    /// Every declaration, in declaration order.
    pub fn decls(&self) -> impl Iterator<Item = &ParamDecl> {
        self.entries.iter().map(|e| &e.decl)
    }

    /// Every name, in declaration order.
    pub fn names(&self) -> Vec<String> {
        self.entries.iter().map(|e| e.decl.name.clone()).collect()
    }

    /// Number of declared parameters.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Sets `name` to `value` after checking type, range and size; marks it
    /// changed and runs the callbacks. On error nothing changes.
    pub fn set(&mut self, name: &str, value: ParamValue) -> Result<(), ParamError> {
        let i = self.find(name).ok_or_else(|| not_found(name))?;
        let entry = &mut self.entries[i];
        entry.decl.check(&value)?;
        crate::codec::check_encoded_len(name, &value)?;
        entry.value = value;
        entry.changed = true;
        for cb in &mut self.callbacks {
            cb(&entry.decl.name, &entry.value);
        }
        Ok(())
    }

    /// Registers a callback run after every successful set (from the
    /// thread that sets: the node's own, when it serves in its tick).
    pub fn on_change(&mut self, callback: impl FnMut(&str, &ParamValue) + Send + 'static) {
        self.callbacks.push(Box::new(callback));
    }

    /// Names set since the last call, in declaration order; clears the flags.
    pub fn take_changed(&mut self) -> Vec<String> {
        self.entries
            .iter_mut()
            .filter_map(|e| std::mem::take(&mut e.changed).then(|| e.decl.name.clone()))
            .collect()
    }

    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    fn find(&self, name: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.decl.name == name)
    }

    fn entry(&self, name: &str) -> Result<&Entry, ParamError> {
        self.find(name)
            .map(|i| &self.entries[i])
            .ok_or_else(|| not_found(name))
    }
}

fn not_found(name: &str) -> ParamError {
    ParamError::NotFound {
        name: name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decl::Range;
    use crate::value::ParamKind;
    use std::sync::{Arc, Mutex};

    fn params() -> Parameters {
        let mut p = Parameters::new();
        p.declare(ParamDecl::new("enabled", true)).unwrap();
        p.declare(ParamDecl::new("rate", 50_i64).range(Range::I64 { min: 1, max: 1000 }))
            .unwrap();
        p.declare(ParamDecl::new("gain", 0.5).range(Range::F64 { min: 0.0, max: 1.0 }))
            .unwrap();
        p.declare(ParamDecl::new("frame", "base_link")).unwrap();
        p.declare(ParamDecl::new("limits", vec![1.0, 2.0]).range(Range::F64 {
            min: 0.0,
            max: 10.0,
        }))
        .unwrap();
        p.declare(ParamDecl::new("joints", vec!["a".to_string()]))
            .unwrap();
        p
    }

    #[test]
    fn set_valid_values_and_see_the_change() {
        let mut p = params();
        p.set("rate", 200.into()).unwrap();
        p.set("limits", vec![0.0, 10.0].into()).unwrap();
        assert_eq!(p.get("rate").unwrap(), &ParamValue::I64(200));
        assert_eq!(p.take_changed(), vec!["rate", "limits"]);
        assert!(p.take_changed().is_empty());
    }

    #[test]
    fn wrong_type_is_typed_error_and_value_unchanged() {
        let mut p = params();
        let err = p.set("rate", 2.0.into()).unwrap_err();
        assert_eq!(
            err,
            ParamError::WrongType {
                name: "rate".into(),
                expected: ParamKind::I64,
                got: ParamKind::F64
            }
        );
        assert!(matches!(
            p.set("limits", vec![1_i64].into()),
            Err(ParamError::WrongType { .. })
        ));
        assert!(matches!(
            p.set("enabled", "yes".into()),
            Err(ParamError::WrongType { .. })
        ));
        assert_eq!(p.get("rate").unwrap(), &ParamValue::I64(50));
        assert_eq!(
            p.get("limits").unwrap(),
            &ParamValue::F64Array(vec![1.0, 2.0])
        );
        assert!(p.take_changed().is_empty());
    }

    #[test]
    fn out_of_range_is_typed_error_and_value_unchanged() {
        let mut p = params();
        assert!(matches!(
            p.set("rate", 0.into()),
            Err(ParamError::OutOfRange { .. })
        ));
        assert!(matches!(
            p.set("gain", f64::NAN.into()),
            Err(ParamError::OutOfRange { .. })
        ));
        // One element out of range rejects the whole array.
        let err = p.set("limits", vec![1.0, 11.0].into()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "parameter `limits`: 11.0 is outside [0.0, 10.0]"
        );
        assert_eq!(p.get("gain").unwrap(), &ParamValue::F64(0.5));
        assert_eq!(
            p.get("limits").unwrap(),
            &ParamValue::F64Array(vec![1.0, 2.0])
        );
        assert!(p.take_changed().is_empty());
    }

    #[test]
    fn unknown_name_and_too_large_value() {
        let mut p = params();
        assert!(matches!(
            p.set("nope", true.into()),
            Err(ParamError::NotFound { .. })
        ));
        let big = vec!["x".repeat(100); 20];
        assert!(matches!(
            p.set("joints", big.into()),
            Err(ParamError::TooLarge { .. })
        ));
        assert_eq!(
            p.get("joints").unwrap(),
            &ParamValue::StrArray(vec!["a".into()])
        );
    }

    #[test]
    fn invalid_declarations_are_rejected() {
        let mut p = params();
        let dup = p.declare(ParamDecl::new("rate", 1_i64));
        assert!(matches!(dup, Err(ParamError::InvalidDeclaration { .. })));
        let bad_default =
            p.declare(ParamDecl::new("x", 5_i64).range(Range::I64 { min: 0, max: 1 }));
        assert!(matches!(
            bad_default,
            Err(ParamError::InvalidDeclaration { .. })
        ));
        let bad_range =
            p.declare(ParamDecl::new("y", 5_i64).range(Range::F64 { min: 0.0, max: 9.0 }));
        assert!(matches!(
            bad_range,
            Err(ParamError::InvalidDeclaration { .. })
        ));
        assert!(p.declare(ParamDecl::new("", 1_i64)).is_err());
        assert_eq!(p.len(), 6);
    }

    #[test]
    fn callbacks_run_on_successful_sets_only() {
        let mut p = params();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        p.on_change(move |name, value| s.lock().unwrap().push(format!("{name}={value}")));
        p.set("gain", 0.25.into()).unwrap();
        let _ = p.set("gain", 2.0.into());
        assert_eq!(*seen.lock().unwrap(), vec!["gain=0.25".to_string()]);
    }
}
