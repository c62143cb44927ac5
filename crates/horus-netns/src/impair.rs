//! Impairments of one host's outgoing traffic on the link: random packet loss
//! (an nftables table in its namespace) and a bandwidth cap (a `tc tbf` qdisc on
//! its veth end). Neither touches its loopback. There is no delay: this machine's
//! kernel has no `netem`.

use crate::error::NetnsError;
use crate::hosts::{missing, Host};

/// The nftables table this crate owns in each namespace.
const TABLE: &str = "inet horus_impair";

impl Host {
    /// Drops `percent` % of the packets this host sends on the link, at random
    /// (`numgen random mod 100 < percent drop` in an output chain); 0 removes the
    /// rule. Replaces any earlier drop rule. Needs `nft` (else [`crate::Unavailable`]).
    pub fn impair_drop(&self, percent: u32) -> Result<(), NetnsError> {
        if percent > 100 {
            return Err(NetnsError::BadImpairment(format!(
                "drop of {percent} % (0 to 100)"
            )));
        }
        // `add` then `delete` empties the table whether or not it existed.
        let mut script = format!("add table {TABLE}\ndelete table {TABLE}\n");
        if percent > 0 {
            // nft's `mod 100 <` takes 0..=99; 100 % is an unconditional drop.
            let chance = if percent < 100 {
                format!("numgen random mod 100 < {percent} ")
            } else {
                String::new()
            };
            script.push_str(&format!(
                "table {TABLE} {{\n  chain output {{\n    type filter hook output priority 0; \
                 policy accept;\n    oifname \"{}\" {chance}drop\n  }}\n}}\n",
                self.interface()
            ));
        }
        // `ip netns exec` runs whatever it is given, so a missing `nft` would only show
        // as its exit status: ask for nft directly first.
        crate::cmd::run("nft", &["--version"]).map_err(|e| missing(e, "nft", "nftables"))?;
        self.exec(&["nft", "-f", "-"], Some(&script)).map(drop)
    }

    /// Caps this host's sending rate on the link at `mbit` Mbit/s with a token
    /// bucket (`tc qdisc replace … root tbf`): burst of 10 ms at that rate but at
    /// least 64 KiB (a GSO packet fits), queue bounded at 50 ms.
    pub fn limit_rate(&self, mbit: u32) -> Result<(), NetnsError> {
        if mbit == 0 {
            return Err(NetnsError::BadImpairment("a rate of 0 Mbit/s".to_owned()));
        }
        let burst = (u64::from(mbit) * 1_000_000 / 8 / 100).max(64 * 1024);
        let (rate, burst) = (format!("{mbit}mbit"), burst.to_string());
        self.tc(&[
            "qdisc",
            "replace",
            "dev",
            self.interface(),
            "root",
            "tbf",
            "rate",
            &rate,
            "burst",
            &burst,
            "latency",
            "50ms",
        ])
        .map(drop)
    }

    /// Removes the drop rule and the rate cap, if any.
    pub fn clear_impairments(&self) -> Result<(), NetnsError> {
        match self.impair_drop(0) {
            // Without nft there is no drop rule to remove.
            Err(NetnsError::Unavailable(_)) | Ok(()) => {}
            Err(e) => return Err(e),
        }
        let qdiscs = self.tc(&["qdisc", "show", "dev", self.interface()])?;
        if qdiscs.contains("tbf") {
            self.tc(&["qdisc", "del", "dev", self.interface(), "root"])?;
        }
        Ok(())
    }

    /// The qdiscs of this host's veth end, as `tc qdisc show` prints them.
    pub fn qdiscs(&self) -> Result<String, NetnsError> {
        self.tc(&["qdisc", "show", "dev", self.interface()])
    }

    fn tc(&self, args: &[&str]) -> Result<String, NetnsError> {
        let mut full = vec!["-n", self.name()];
        full.extend_from_slice(args);
        crate::cmd::run("tc", &full).map_err(|e| missing(e, "tc", "iproute2"))
    }
}
