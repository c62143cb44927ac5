//! Reading a launch file and its includes into a [`Plan`]: parse (serde reports unknown
//! keys and wrong types with their position), substitute, resolve paths, apply defaults.
//! Checks that span the whole system (duplicate names, `after:` targets, cycles) are in
//! `validate.rs`.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use crate::locate::{child, locate_nearest, Step};
use crate::model::{RawFile, RawInclude, Scalar};
use crate::spec::{LoadError, Origin, Plan, ProcessSpec};
use crate::subst::{substitute, Scope};

/// Deepest chain of includes (the top-level file is depth 1).
pub const MAX_INCLUDE_DEPTH: usize = 32;

/// Most files read for one launch, counting a file each time it is included: a file that
/// includes the next one twice, 30 levels deep, is 2^30 loads (a few hundred bytes of YAML
/// expanding forever); systems of a few dozen files are the norm.
pub const MAX_FILES_LOADED: usize = 1000;

/// Most bytes all substitutions of one launch may produce (16 MiB; each one is at most
/// [`MAX_SUBSTITUTED`]).
pub const MAX_SUBSTITUTED_TOTAL: usize = 16 << 20;

/// Most processes one launch may declare, includes expanded.
pub const MAX_PROCESSES: usize = 4096;

/// Defaults of what neither the file nor the command line sets.
pub(crate) const DEFAULT_STOP_GRACE: Duration = Duration::from_secs(5);
pub(crate) const DEFAULT_AFTER_TOPIC_TIMEOUT: Duration = Duration::from_secs(30);

/// Loads `path` with the command line's `NAME:=VALUE` arguments; `stop_grace` is the
/// command line's default grace (processes and files that set one keep theirs).
pub fn load(
    path: &Path,
    args: &BTreeMap<String, String>,
    stop_grace: Option<Duration>,
) -> Result<Plan, LoadError> {
    let mut loader = Loader {
        processes: Vec::new(),
        stack: Vec::new(),
        loaded: 0,
        substituted: Rc::new(Cell::new(0)),
    };
    let inherited = Inherited {
        namespace: None,
        env: Vec::new(),
        stop_grace: stop_grace.unwrap_or(DEFAULT_STOP_GRACE),
        after_topic_timeout: DEFAULT_AFTER_TOPIC_TIMEOUT,
    };
    let given = Given {
        args: args.clone(),
        from: None,
        namespace: None,
    };
    loader.file(path, given, &inherited)?;
    let plan = Plan {
        file: path.to_owned(),
        processes: loader.processes,
    };
    crate::validate::check(&plan)?;
    Ok(plan)
}

/// The command line's `NAME:=VALUE` arguments as a map for [`load`] (a later value for a
/// name replaces an earlier one).
pub fn parse_values(args: &[String]) -> Result<BTreeMap<String, String>, LoadError> {
    let mut values = BTreeMap::new();
    for a in args {
        let Some((name, value)) = a.split_once(":=") else {
            return Err(LoadError::Plain(format!(
                "argument {a:?}: expected NAME:=VALUE"
            )));
        };
        values.insert(name.to_owned(), value.to_owned());
    }
    Ok(values)
}

/// What a file passes down to the files it includes.
#[derive(Clone)]
pub(super) struct Inherited {
    pub(super) namespace: Option<String>,
    pub(super) env: Vec<(String, String)>,
    pub(super) stop_grace: Duration,
    pub(super) after_topic_timeout: Duration,
}

/// What the includer gives a file.
struct Given {
    args: BTreeMap<String, String>,
    /// Where they are given (`None`: on the command line).
    from: Option<Origin>,
    /// `namespace:` of the include entry.
    namespace: Option<String>,
}

struct Loader {
    processes: Vec<ProcessSpec>,
    /// Files being loaded (include cycle detection).
    stack: Vec<PathBuf>,
    /// Files read so far, each include counted ([`MAX_FILES_LOADED`]).
    loaded: usize,
    /// Bytes produced by substitutions so far ([`MAX_SUBSTITUTED_TOTAL`]).
    substituted: Rc<Cell<usize>>,
}

/// One file being read: its text (to locate nodes), directory and substitution scope.
pub(super) struct Source<'a> {
    file: &'a Path,
    text: &'a str,
    dir: PathBuf,
    args: BTreeMap<String, String>,
    /// The launch's substitution total so far.
    substituted: Rc<Cell<usize>>,
}

impl Source<'_> {
    pub(super) fn origin(&self, path: &[Step]) -> Origin {
        let (line, column) = locate_nearest(self.text, path);
        Origin {
            file: self.file.to_owned(),
            line,
            column,
        }
    }

    pub(super) fn error(&self, path: &[Step], message: impl Into<String>) -> LoadError {
        LoadError::At {
            origin: self.origin(path),
            message: message.into(),
        }
    }

    /// `s` with its substitutions done; an error points at `path`.
    pub(super) fn sub(&self, s: &str, path: &[Step]) -> Result<String, LoadError> {
        let scope = Scope {
            args: &self.args,
            dir: &self.dir,
        };
        let out = substitute(s, &scope).map_err(|m| self.error(path, m))?;
        let total = self.substituted.get().saturating_add(out.len());
        if total > MAX_SUBSTITUTED_TOTAL {
            return Err(self.error(
                path,
                format!("substitutions produce more than {MAX_SUBSTITUTED_TOTAL} bytes in all"),
            ));
        }
        self.substituted.set(total);
        Ok(out)
    }

    /// A number of seconds as a duration; an error points at `path`.
    pub(super) fn seconds(
        &self,
        v: Option<f64>,
        path: &[Step],
    ) -> Result<Option<Duration>, LoadError> {
        v.map(|s| {
            Duration::try_from_secs_f64(s)
                .map_err(|_| self.error(path, format!("{s} is not a number of seconds ≥ 0")))
        })
        .transpose()
    }

    /// A path relative to this file's directory.
    pub(super) fn relative(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        if p.is_absolute() {
            p.to_owned()
        } else {
            self.dir.join(p)
        }
    }
}

pub(super) fn key(k: &str) -> Step {
    Step::Key(k.to_owned())
}

impl Loader {
    fn file(&mut self, path: &Path, given: Given, up: &Inherited) -> Result<(), LoadError> {
        self.loaded += 1;
        let text = horus_params::yaml_bound::read_file(path).map_err(|e| {
            LoadError::Plain(format!("cannot read launch file {}: {e}", path.display()))
        })?;
        horus_params::yaml_bound::check_nodes(&text).map_err(|e| match e {
            horus_params::yaml_bound::YamlBoundError::TooManyNodes { line, column } => {
                LoadError::At {
                    origin: Origin {
                        file: path.to_owned(),
                        line,
                        column,
                    },
                    message: format!(
                        "the file expands to more than {} YAML nodes with its aliases replayed \
                         (an alias bomb?)",
                        horus_params::yaml_bound::MAX_YAML_NODES
                    ),
                }
            }
            e => LoadError::Plain(format!("{}: {e}", path.display())),
        })?;
        let raw: RawFile = if text.trim().is_empty() {
            RawFile::default()
        } else {
            serde_yaml::from_str(&text).map_err(|e| yaml_error(path, &e))?
        };
        let canonical = path.canonicalize().unwrap_or_else(|_| path.to_owned());
        self.stack.push(canonical);
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
            _ => PathBuf::from("."),
        };
        let mut src = Source {
            file: path,
            text: &text,
            dir,
            args: BTreeMap::new(),
            substituted: Rc::clone(&self.substituted),
        };
        src.args = arguments(&src, &raw.args, &given)?;

        // What this file's processes (and its includes) start from.
        let mut here = up.clone();
        if let Some(ns) = &raw.namespace {
            here.namespace = Some(namespace(&src, ns, &[key("namespace")])?);
        }
        if let Some(ns) = &given.namespace {
            here.namespace = Some(ns.clone());
        }
        for (k, v) in &raw.env {
            let value = src.sub(&v.0, &[key("env"), key(k)])?;
            crate::process::set(&mut here.env, k, value);
        }
        if let Some(d) = src.seconds(raw.stop_grace, &[key("stop_grace")])? {
            here.stop_grace = d;
        }
        if let Some(d) = src.seconds(raw.after_topic_timeout, &[key("after_topic_timeout")])? {
            here.after_topic_timeout = d;
        }

        for (k, inc) in raw.include.iter().enumerate() {
            self.include(&src, inc, &[key("include"), Step::Index(k)], &here)?;
        }
        for (i, p) in raw.processes.iter().enumerate() {
            let at = [key("processes"), Step::Index(i)];
            if self.processes.len() >= MAX_PROCESSES {
                return Err(src.error(
                    &at,
                    format!(
                        "more than {MAX_PROCESSES} processes in one launch (includes expanded)"
                    ),
                ));
            }
            let spec = crate::process::process(&src, p, &at, &here)?;
            self.processes.push(spec);
        }
        self.stack.pop();
        Ok(())
    }

    fn include(
        &mut self,
        src: &Source<'_>,
        inc: &RawInclude,
        at: &[Step],
        here: &Inherited,
    ) -> Result<(), LoadError> {
        let file_at = child(at, key("file"));
        let file = src.relative(&src.sub(&inc.file, &file_at)?);
        if !file.is_file() {
            return Err(src.error(
                &file_at,
                format!("included file not found: {}", file.display()),
            ));
        }
        let canonical = file.canonicalize().unwrap_or_else(|_| file.clone());
        if self.stack.contains(&canonical) {
            return Err(src.error(
                &file_at,
                format!("include cycle: {} is already being loaded", file.display()),
            ));
        }
        if self.stack.len() >= MAX_INCLUDE_DEPTH {
            return Err(src.error(
                &file_at,
                format!(
                    "includes nest deeper than {MAX_INCLUDE_DEPTH} files (including {})",
                    file.display()
                ),
            ));
        }
        if self.loaded >= MAX_FILES_LOADED {
            return Err(src.error(
                &file_at,
                format!(
                    "more than {MAX_FILES_LOADED} files loaded in all (a file counts each time it \
                     is included; including {})",
                    file.display()
                ),
            ));
        }
        let mut args = BTreeMap::new();
        for (name, v) in &inc.args {
            let value = src.sub(&v.0, &child(&child(at, key("args")), key(name)))?;
            args.insert(name.clone(), value);
        }
        let namespace = match &inc.namespace {
            Some(ns) => Some(namespace(src, ns, &child(at, key("namespace")))?),
            None => None,
        };
        let given = Given {
            args,
            from: Some(src.origin(at)),
            namespace,
        };
        self.file(&file, given, here)
    }
}

/// The file's argument values: given ones (each must be declared), else defaults.
fn arguments(
    src: &Source<'_>,
    declared: &BTreeMap<String, Option<Scalar>>,
    given: &Given,
) -> Result<BTreeMap<String, String>, LoadError> {
    for name in given.args.keys() {
        if !declared.contains_key(name) {
            let names: Vec<&str> = declared.keys().map(String::as_str).collect();
            let message = format!(
                "argument `{name}` is not declared in {} (declared: {})",
                src.file.display(),
                if names.is_empty() {
                    "none".into()
                } else {
                    names.join(", ")
                }
            );
            return Err(match &given.from {
                Some(origin) => LoadError::At {
                    origin: origin.clone(),
                    message,
                },
                None => LoadError::Plain(message),
            });
        }
    }
    let mut values = BTreeMap::new();
    for (name, default) in declared {
        let value = match (given.args.get(name), default) {
            (Some(v), _) => v.clone(),
            // Defaults may use $(env ...) and $(dirname), not other arguments.
            (None, Some(d)) => {
                let scope = Scope {
                    args: &BTreeMap::new(),
                    dir: &src.dir,
                };
                substitute(&d.0, &scope).map_err(|m| src.error(&[key("args"), key(name)], m))?
            }
            (None, None) => {
                let by = match &given.from {
                    Some(o) => format!("by the include at {o}"),
                    None => format!("on the command line ({name}:=VALUE)"),
                };
                return Err(src.error(
                    &[key("args"), key(name)],
                    format!("argument `{name}` has no default and was not given {by}"),
                ));
            }
        };
        values.insert(name.clone(), value);
    }
    Ok(values)
}

/// A substituted, valid namespace.
pub(super) fn namespace(src: &Source<'_>, ns: &str, at: &[Step]) -> Result<String, LoadError> {
    let ns = src.sub(ns, at)?;
    horus_shm::name::validate_namespace(&ns)
        .map_err(|e| src.error(at, format!("namespace: {e}")))?;
    Ok(ns)
}

/// A serde_yaml error as `file:line:column: message`.
fn yaml_error(file: &Path, e: &serde_yaml::Error) -> LoadError {
    let text = e.to_string();
    // serde_yaml appends " at line L column C"; the position goes in front instead.
    let message = match text.rfind(" at line ") {
        Some(i) => text[..i].to_owned(),
        None => text.clone(),
    };
    match e.location() {
        Some(l) => LoadError::At {
            origin: Origin {
                file: file.to_owned(),
                line: l.line(),
                column: l.column(),
            },
            message,
        },
        None => LoadError::Plain(format!("{}: {message}", file.display())),
    }
}
