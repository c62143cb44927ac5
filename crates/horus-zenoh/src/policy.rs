//! What other hosts may do here, per direction: which local topics may leave this host,
//! which topics other hosts may publish into, which local services other hosts may call, and
//! for which services another host may stand in as the server. Each direction is an
//! allow/deny [`Filter`]; a name is refused when the filter does not allow it.
//!
//! Defaults (what a robot owner wants without writing a policy): topics leave and come in
//! (what the bridge is for); services are callable and stood in for, except parameter
//! services (`<node>/params`, horus-params: list, get *and set*) and action goal and cancel
//! services (`<action>/send_goal`, `<action>/cancel`, horus-actions): another host may
//! neither change a node's parameters or start or cancel an action here, nor pose as this
//! host's parameter or action server. A direction given in the configuration replaces that
//! direction's defaults entirely.

use crate::filter::{Filter, PatternError};

/// Services neither callable from other hosts nor stood in for, unless a policy says so.
pub const PROTECTED_SERVICES: [&str; 3] = ["**/params", "**/send_goal", "**/cancel"];

/// The four directions.
#[derive(Clone, Debug)]
pub struct Policy {
    /// Local topics whose messages may leave this host.
    pub leave: Filter,
    /// Topics other hosts may publish into here.
    pub enter: Filter,
    /// Local services other hosts may call.
    pub call: Filter,
    /// Services another host may serve here through this bridge (stand in for).
    pub stand_in: Filter,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            leave: Filter::default(),
            enter: Filter::default(),
            call: protected(),
            stand_in: protected(),
        }
    }
}

/// Everything but [`PROTECTED_SERVICES`].
fn protected() -> Filter {
    let deny: Vec<String> = PROTECTED_SERVICES.iter().map(|s| s.to_string()).collect();
    Filter::new(&[], &deny).unwrap_or_default()
}

/// One direction as the configuration file gives it.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleFile {
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
}

/// The `policy:` section of the configuration file.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyFile {
    leave: Option<RuleFile>,
    enter: Option<RuleFile>,
    call: Option<RuleFile>,
    stand_in: Option<RuleFile>,
}

impl Policy {
    /// Applies a file's section: each direction given replaces that direction.
    pub(crate) fn apply(&mut self, f: PolicyFile) -> Result<(), PatternError> {
        for (rule, slot) in [
            (f.leave, &mut self.leave),
            (f.enter, &mut self.enter),
            (f.call, &mut self.call),
            (f.stand_in, &mut self.stand_in),
        ] {
            if let Some(r) = rule {
                *slot = Filter::new(&r.allow, &r.deny)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_protect_parameter_and_action_goal_services_only() {
        let p = Policy::default();
        assert!(p.leave.allows("lidar/points") && p.enter.allows("base/cmd_vel"));
        for protected in ["planner/params", "arm/move/send_goal", "arm/move/cancel"] {
            assert!(!p.call.allows(protected), "{protected} callable");
            assert!(!p.stand_in.allows(protected), "{protected} stood in for");
        }
        assert!(p.call.allows("math/add") && p.call.allows("arm/move/get_result"));
        assert!(p.stand_in.allows("math/add"));
    }
}
