//! The suite harness of `horus-bench-core` (common flags, progress and error
//! collection, the `--json` document) with horus's own child roles added to the
//! dispatch: every binary built on this crate can start horus's echo and sink sides,
//! the Unix socket's echo, and the topology and paced-traffic endpoints.

use std::process::ExitCode;

pub use horus_bench_core::suite::{list, method_common, number, Common, Doc, Run, COMMON_USAGE};

use crate::child::ChildArgs;
use crate::pubsub::{self, ChildRole};
use crate::{rate, topology};

/// The child roles of the topologies and of paced traffic.
const ENDPOINT_ROLES: &[ChildRole] = &[
    ChildRole {
        role: topology::PUB_ROLE,
        run: |args: ChildArgs| topology::child_main(topology::PUB_ROLE, args),
    },
    ChildRole {
        role: topology::SUB_ROLE,
        run: |args: ChildArgs| topology::child_main(topology::SUB_ROLE, args),
    },
    ChildRole {
        role: rate::PUB_ROLE,
        run: |args: ChildArgs| rate::child_main(rate::PUB_ROLE, args),
    },
    ChildRole {
        role: rate::SUB_ROLE,
        run: |args: ChildArgs| rate::child_main(rate::SUB_ROLE, args),
    },
];

/// `main` of a suite binary that measures horus alone: [`main_with`] and no peer.
pub fn main(run: fn(Vec<String>) -> anyhow::Result<ExitCode>) -> ExitCode {
    main_with(&[], run)
}

/// `main` of a suite binary: dispatches `--child <role>` to the role's entry point
/// (horus's own roles — topics, the Unix socket, the topologies, paced traffic — and
/// those of `peers`, the child roles of the peer crates this binary links), else runs
/// `run` and turns an error into exit 1 ([`horus_bench_core::suite::main_with`]).
pub fn main_with(
    peers: &[&[ChildRole]],
    run: fn(Vec<String>) -> anyhow::Result<ExitCode>,
) -> ExitCode {
    let mut roles = vec![pubsub::OWN_ROLES];
    roles.extend_from_slice(peers);
    roles.push(ENDPOINT_ROLES);
    horus_bench_core::suite::main_with(&roles, run)
}
