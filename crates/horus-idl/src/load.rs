//! Loading packages of interface files from directories laid out as ROS 2 installs
//! them: `<package>/msg/*.msg`, `<package>/srv/*.srv`, `<package>/action/*.action`.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::ast::InterfaceKind;
use crate::interface_set::{AddError, InterfaceSet};
use crate::limits::{MAX_FILES_PER_PACKAGE, MAX_FILE_BYTES};
use crate::parse_error::{ParseError, ParseErrorKind};

/// The packages that ship with horus, vendored from ROS 2 (kilted) with their licenses.
pub const STANDARD_PACKAGES: &[&str] = &[
    "action_msgs",
    "builtin_interfaces",
    "diagnostic_msgs",
    "geometry_msgs",
    "nav_msgs",
    "sensor_msgs",
    "service_msgs",
    "shape_msgs",
    "std_msgs",
    "std_srvs",
    "tf2_msgs",
    "trajectory_msgs",
    "unique_identifier_msgs",
    "visualization_msgs",
];

/// The directory holding the standard packages (one sub-directory per package).
pub fn standard_interfaces_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/interfaces"))
}

/// Why a package directory could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// Reading a directory or file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// A package directory has more interface files than [`MAX_FILES_PER_PACKAGE`].
    #[error("{}: more than {limit} interface files", path.display())]
    TooManyFiles {
        /// The package directory.
        path: PathBuf,
        /// The limit.
        limit: usize,
    },
    /// A file name that is not UTF-8.
    #[error("{}: file name is not UTF-8", path.display())]
    BadFileName {
        /// The path.
        path: PathBuf,
    },
    /// A file is malformed or defines an interface twice.
    #[error(transparent)]
    Add(#[from] AddError),
}

impl InterfaceSet {
    /// The standard packages ([`STANDARD_PACKAGES`]) from [`standard_interfaces_dir`].
    pub fn standard() -> Result<Self, LoadError> {
        let mut set = Self::new();
        for package in STANDARD_PACKAGES {
            set.add_package_dir(package, &standard_interfaces_dir().join(package))?;
        }
        Ok(set)
    }

    /// Adds every `msg/*.msg`, `srv/*.srv` and `action/*.action` file under `dir` as
    /// interfaces of `package` (other files, such as `.json` or `.idl`, are ignored).
    /// Returns how many interfaces were added.
    pub fn add_package_dir(&mut self, package: &str, dir: &Path) -> Result<usize, LoadError> {
        if let Err(source) = fs::metadata(dir) {
            return Err(LoadError::Io {
                path: dir.to_path_buf(),
                source,
            });
        }
        let mut files = Vec::new();
        for kind in [
            InterfaceKind::Message,
            InterfaceKind::Service,
            InterfaceKind::Action,
        ] {
            let sub = dir.join(kind.namespace());
            let entries = match fs::read_dir(&sub) {
                Ok(e) => e,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => return Err(LoadError::Io { path: sub, source }),
            };
            for entry in entries {
                let path = entry
                    .map_err(|source| LoadError::Io {
                        path: sub.clone(),
                        source,
                    })?
                    .path();
                if path.extension().and_then(|e| e.to_str()) != Some(kind.namespace()) {
                    continue;
                }
                if files.len() >= MAX_FILES_PER_PACKAGE {
                    return Err(LoadError::TooManyFiles {
                        path: dir.to_path_buf(),
                        limit: MAX_FILES_PER_PACKAGE,
                    });
                }
                files.push((kind, path));
            }
        }
        files.sort();
        for (kind, path) in &files {
            let name = path
                .file_stem()
                .and_then(|s| s.to_str())
                .ok_or_else(|| LoadError::BadFileName { path: path.clone() })?;
            let source = read_bounded(path)?;
            let file = path.display().to_string();
            let source = source.map_err(|size| {
                AddError::Parse(ParseError {
                    file: file.clone(),
                    line: 0,
                    column: 0,
                    kind: ParseErrorKind::FileTooLarge {
                        size,
                        limit: MAX_FILE_BYTES,
                    },
                })
            })?;
            self.add_source(&file, package, name, *kind, &source)?;
        }
        Ok(files.len())
    }
}

/// Reads at most [`MAX_FILE_BYTES`] + 1 bytes: `Err(size read)` when the file is larger.
fn read_bounded(path: &Path) -> Result<Result<Vec<u8>, usize>, LoadError> {
    let io = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = fs::File::open(path).map_err(io)?;
    let mut buf = Vec::new();
    file.take(MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(io)?;
    if buf.len() > MAX_FILE_BYTES {
        return Ok(Err(buf.len()));
    }
    Ok(Ok(buf))
}
