//! The standard packages compiled into the library (see `build.rs`): an installed tool
//! has them without the source tree ([`InterfaceSet::standard_embedded`]).

use crate::ast::InterfaceKind;
use crate::interface_set::{AddError, InterfaceSet};
use crate::type_name::TypeName;

/// One vendored interface file, as compiled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StandardFile {
    /// Its package, e.g. `std_msgs`.
    pub package: &'static str,
    /// `.msg`, `.srv` or `.action`.
    pub kind: InterfaceKind,
    /// The interface name (the file stem), e.g. `Header`.
    pub name: &'static str,
    /// The file's text, exactly as vendored (comments included).
    pub text: &'static str,
}

impl StandardFile {
    /// Its ROS 2 type name, e.g. `std_msgs/msg/Header`.
    pub fn type_name(&self) -> TypeName {
        TypeName::new(self.package, self.kind, self.name)
    }

    /// The name it has in errors: `std_msgs/msg/Header.msg`.
    pub fn file_name(&self) -> String {
        let ns = self.kind.namespace();
        format!("{}/{ns}/{}.{ns}", self.package, self.name)
    }
}

static STANDARD_FILES: &[StandardFile] = include!(concat!(env!("OUT_DIR"), "/standard_files.rs"));

/// Every vendored interface file of the standard packages ([`crate::STANDARD_PACKAGES`]),
/// sorted by package, kind and name.
pub fn standard_files() -> &'static [StandardFile] {
    STANDARD_FILES
}

/// The vendored file defining `type_name` (`pkg/msg/Name`, `pkg/srv/Name`,
/// `pkg/action/Name`), if it is a standard interface.
pub fn standard_file(type_name: &TypeName) -> Option<&'static StandardFile> {
    STANDARD_FILES.iter().find(|f| {
        f.package == type_name.package && f.kind == type_name.namespace && f.name == type_name.name
    })
}

impl InterfaceSet {
    /// The standard packages from the files compiled into the library: the same set as
    /// [`InterfaceSet::standard`] (files are named `pkg/msg/Name.msg` in errors), for
    /// installed tools that have no source tree.
    pub fn standard_embedded() -> Result<Self, AddError> {
        let mut set = Self::new();
        for f in STANDARD_FILES {
            set.add_source(&f.file_name(), f.package, f.name, f.kind, f.text.as_bytes())?;
        }
        Ok(set)
    }
}
