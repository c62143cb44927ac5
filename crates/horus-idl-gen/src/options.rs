//! What [`generate_rust`](crate::generate_rust) needs besides the types.

use std::collections::BTreeMap;

/// Options of [`generate_rust`](crate::generate_rust).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GenOptions {
    /// Packages generated elsewhere, by package name: the path of the module that holds
    /// them (`horus_ros_msgs` → `::horus_ros_msgs::std_msgs::msg::Header`). A bare crate
    /// name gets a leading `::`; `crate::…`, `self::…`, `super::…` and `::…` are used
    /// as given.
    pub extern_packages: BTreeMap<String, String>,
    /// Path of the run-time crate the generated code uses (default `::horus_cdr`).
    pub runtime_crate: String,
    /// Whether to emit `pub static REGISTRY: &[RosTypeInfo]` listing every generated
    /// message type (default true).
    pub registry: bool,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            extern_packages: BTreeMap::new(),
            runtime_crate: "::horus_cdr".into(),
            registry: true,
        }
    }
}

impl GenOptions {
    /// Maps every standard package ([`horus_idl::STANDARD_PACKAGES`]) to the crate or
    /// module at `path` (e.g. `horus_ros_msgs`).
    pub fn with_standard_packages_from(mut self, path: &str) -> Self {
        for package in horus_idl::STANDARD_PACKAGES {
            self = self.extern_package(package, path);
        }
        self
    }

    /// Maps `package` to the module path `path` (see [`GenOptions::extern_packages`]).
    pub fn extern_package(mut self, package: &str, path: &str) -> Self {
        self.extern_packages
            .insert(package.to_string(), path.to_string());
        self
    }
}

/// A module path as written in generated code.
pub(crate) fn absolute_path(path: &str) -> String {
    let path = path.trim_end_matches("::");
    let relative = ["crate", "self", "super"]
        .iter()
        .any(|p| path == *p || path.starts_with(&format!("{p}::")));
    if relative || path.starts_with("::") {
        path.to_string()
    } else {
        format!("::{path}")
    }
}
