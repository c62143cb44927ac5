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
//! direction's defaults, except that in `call` and `stand_in` the protected services stay
//! refused unless one of its allow patterns matches them (`call: {deny: ['arm/**']}` keeps
//! them protected; `call: {allow: ['**']}` opens them).

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
    Filter::default()
        .protecting(&PROTECTED_SERVICES)
        .expect("PROTECTED_SERVICES are constant, valid patterns")
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
    /// Applies a file's section: each direction given replaces that direction; in the
    /// service directions [`PROTECTED_SERVICES`] stay refused unless an allow pattern
    /// matches them.
    pub(crate) fn apply(&mut self, f: PolicyFile) -> Result<(), PatternError> {
        for (rule, slot, protect) in [
            (f.leave, &mut self.leave, &[][..]),
            (f.enter, &mut self.enter, &[][..]),
            (f.call, &mut self.call, &PROTECTED_SERVICES[..]),
            (f.stand_in, &mut self.stand_in, &PROTECTED_SERVICES[..]),
        ] {
            if let Some(r) = rule {
                *slot = Filter::new(&r.allow, &r.deny)?.protecting(protect)?;
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

    fn with(yaml: &str) -> Policy {
        let mut p = Policy::default();
        p.apply(serde_yaml::from_str(yaml).unwrap()).unwrap();
        p
    }

    #[test]
    fn custom_call_deny_keeps_parameter_and_action_protection() {
        // (Before: a direction given in the file replaced its defaults entirely, so a deny
        // of something else opened every node's parameters and every action to other hosts.)
        let p = with("call: {deny: ['arm/**']}\nstand_in: {deny: ['arm/**']}\n");
        for protected in ["planner/params", "nav/go/send_goal", "nav/go/cancel"] {
            assert!(!p.call.allows(protected), "{protected} callable");
            assert!(!p.stand_in.allows(protected), "{protected} stood in for");
        }
        assert!(!p.call.allows("arm/move") && p.call.allows("math/add"));
        // An allow pattern that matches them opens them, explicitly.
        let p = with("call: {allow: ['**'], deny: ['**/send_goal', '**/cancel']}\n");
        assert!(p.call.allows("planner/params") && !p.call.allows("nav/go/send_goal"));
        let p = with("call: {allow: ['planner/**']}\n");
        assert!(p.call.allows("planner/params") && !p.call.allows("math/add"));
        assert!(!p.stand_in.allows("planner/params"), "stand_in untouched");
        // Topics have no protected names.
        assert!(with("enter: {deny: ['a/**']}\n").enter.allows("x/params"));
    }
}
