//! horus node parameters.
//!
//! Each node declares typed parameters ([`ParamDecl`]: bool, i64, f64,
//! string and arrays of those, with a default, a description and an
//! optional [`Range`]) in a [`Parameters`] registry. Sets are validated
//! (wrong type, out of range, too large → a typed [`ParamError`], value
//! unchanged); the node sees changes through [`Parameters::take_changed`]
//! in its tick or through [`Parameters::on_change`] callbacks. Values load
//! from and dump to YAML ([`Parameters::load_yaml_file`],
//! [`Parameters::dump_yaml`]; errors carry line and column).
//!
//! Other processes reach them through the node's parameter service
//! `<node>/params` (a horus [`Service`](horus::Service)): the node polls a
//! [`ParamServer`] in its tick, a [`ParamClient`] lists, describes, gets
//! and sets. The wire format is in [`wire`] and [`codec`].
//!
//! ```
//! use horus_params::{ParamClient, ParamDecl, ParamServer, Parameters, Range};
//! # std::env::set_var("HORUS_NAMESPACE", format!("doctest-params-{}", std::process::id()));
//!
//! let mut params = Parameters::new();
//! params.declare(
//!     ParamDecl::new("max_speed", 1.0)
//!         .description("top speed, m/s")
//!         .range(Range::F64 { min: 0.0, max: 2.0 }),
//! )?;
//! let mut server = ParamServer::new("base")?;
//!
//! let cli = std::thread::spawn(|| {
//!     let mut client = ParamClient::open("base").unwrap();
//!     client.set("max_speed", &1.5.into()).unwrap();
//!     client.set("max_speed", &5.0.into()).unwrap_err() // out of range
//! });
//! while !cli.is_finished() {
//!     server.serve_pending(&mut params); // in the node's tick
//! }
//! println!("{}", cli.join().unwrap());
//! assert_eq!(params.take_changed(), vec!["max_speed".to_string()]);
//! assert_eq!(params.get("max_speed")?.as_f64(), Some(1.5));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod client;
pub mod codec;
mod decl;
mod error;
mod registry;
mod server;
mod value;
pub mod wire;
mod yaml;
pub mod yaml_bound;

pub use client::{ParamClient, ParamClientError, ParamInfo, MAX_LIST};
pub use codec::{DecodeError, VALUE_CAPACITY};
pub use decl::{ParamDecl, Range, DESCRIPTION_CAPACITY, NAME_CAPACITY};
pub use error::{ParamError, YamlError};
pub use registry::Parameters;
pub use server::{service_name, ParamServer, MAX_PER_SERVE};
pub use value::{ParamKind, ParamValue};
