//! Why generation failed.

use std::path::PathBuf;

/// Generating Rust types failed. Parse errors carry the file, line and column where the
/// problem is (from [`horus_idl::ParseError`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GenError {
    /// A package directory could not be read, or one of its files is malformed.
    #[error(transparent)]
    Load(#[from] horus_idl::LoadError),
    /// A type refers to an unknown type, or contains itself.
    #[error(transparent)]
    Resolve(#[from] horus_idl::ResolveError),
    /// A package asked for has no interfaces in the set.
    #[error("package '{0}' has no interfaces")]
    UnknownPackage(String),
    /// A package is both generated and mapped to another crate.
    #[error("package '{0}' is both generated here and mapped to an external crate")]
    PackageTwice(String),
    /// A generated type uses a type of a package that is neither generated nor mapped to a
    /// crate (see [`GenOptions::extern_packages`](crate::GenOptions::extern_packages)).
    #[error(
        "{user} uses {used}, whose package '{package}' is neither generated nor mapped to a crate"
    )]
    UnmappedPackage {
        /// The generated type.
        user: String,
        /// The type it uses.
        used: String,
        /// That type's package.
        package: String,
    },
    /// A name that cannot be a Rust item (`Self`, a package called `self`, …) or two
    /// generated items of the same name in one module (a message `Foo` and a message
    /// `FooView` both want `FooView`).
    #[error("{0}")]
    NameClash(String),
    /// Writing the output failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// No output file was given and `OUT_DIR` is not set (not running in a build script).
    #[error("no output file given and OUT_DIR is not set (not in a build script)")]
    NoOutDir,
}
