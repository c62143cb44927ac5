//! Test hosts for horus: "two hosts on one machine" as two Linux network
//! namespaces joined by a veth pair, for the multi-host tests and the
//! `multi_host` benchmark.
//!
//! * [`available`] says whether this machine can host them (root, `ip`, and a
//!   throwaway namespace can be created and deleted) and, if not, precisely why:
//!   tests print the reason and skip.
//! * [`TwoHosts::create`] makes a pair; [`TwoHosts::host`] gives each [`Host`]:
//!   its namespace name, its address, a [`std::process::Command`] that runs inside
//!   it, a thread that runs inside it ([`Host::run_in`]), and impairments of its
//!   outgoing traffic ([`Host::impair_drop`], [`Host::limit_rate`],
//!   [`Host::clear_impairments`]). Dropping the pair deletes both namespaces.
//! * [`enter_current_thread`] moves a freshly started child process into a host.
//!
//! Only addresses inside the two namespaces (`10.231.X.0/24` on the link, and each
//! namespace's own loopback) are configured: nothing created here can reach the
//! machine's real network.
//!
//! ```no_run
//! use horus_netns::{available, Side, TwoHosts};
//!
//! if let Err(why) = available() {
//!     eprintln!("skipped: {why}");
//!     return Ok(());
//! }
//! let hosts = TwoHosts::create("demo")?;
//! let status = hosts.host(Side::B).command("true").status()?;
//! assert!(status.success());
//! println!("A is {}", hosts.host(Side::A).addr());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod cmd;
mod enter;
mod error;
mod hosts;
mod impair;
mod names;

pub use enter::{enter_current_thread, run_in};
pub use error::{NetnsError, Unavailable};
pub use hosts::{Host, Side, TwoHosts};

/// Whether two test hosts can be created here: the process is root, `ip` runs,
/// and a throwaway namespace can be created and deleted. The error says which of
/// these failed and how.
pub fn available() -> Result<(), Unavailable> {
    check_tools().map_err(|e| match e {
        NetnsError::Unavailable(u) => u,
        other => Unavailable::Missing {
            command: "ip",
            package: "iproute2",
            reason: other.to_string(),
        },
    })?;
    let name = format!("{}-probe", names::fresh_base().1);
    cmd::run("ip", &["netns", "add", &name]).map_err(|e| Unavailable::Refused {
        step: "created",
        reason: e.to_string(),
    })?;
    cmd::run("ip", &["netns", "delete", &name]).map_err(|e| Unavailable::Refused {
        step: "deleted",
        reason: e.to_string(),
    })?;
    Ok(())
}

/// Root and `ip`: what every operation needs.
pub(crate) fn check_tools() -> Result<(), NetnsError> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let uid = unsafe { libc::geteuid() };
    if uid != 0 {
        return Err(Unavailable::NotRoot { uid }.into());
    }
    cmd::run("ip", &["-V"])
        .map(drop)
        .map_err(|e| hosts::missing(e, "ip", "iproute2"))
}

/// Names of the namespaces this crate's naming scheme owns that exist now (any
/// process's), for tests that check nothing was left behind.
pub fn our_namespaces() -> Vec<String> {
    names::list()
        .into_iter()
        .filter(|n| names::owner_pid(n).is_some())
        .collect()
}
