//! A service's two ROS 2 types, and the checks a payload from the other side passes before
//! it is handed on: bounded by the payload's length in time and memory (horus-idl's CDR
//! decoder), as the topics' inbound check.

use horus_idl::cdr::CdrError;
use horus_idl::{Resolved, TypeName};
use horus_msgs::Ros2Type;

use super::names::response_type_of_request;

/// The ROS 2 type named `type_name` as horus knows it (the standard interface packages),
/// with its hash and definition; `None` for a type horus was not built with.
pub(crate) fn known_type(type_name: &str) -> Option<Ros2Type> {
    horus_ros_msgs::REGISTRY
        .iter()
        .find(|t| t.type_name == type_name)
        .map(|t| Ros2Type::new(t.type_name, t.type_hash, t.definition))
}

/// Request and response type of a service known to horus, from its request type's name.
pub(crate) fn known_service(request_type: &str) -> Option<(Ros2Type, Ros2Type)> {
    let response = response_type_of_request(request_type)?;
    Some((known_type(request_type)?, known_type(&response)?))
}

/// Request and response type of horus service `name` of `namespace` as its own description
/// gives them: the types its clients (or servers) were built with, user-defined ones
/// included. `None` when there is no such service, its table cannot be read, or it is not
/// ROS-typed. Joins the service as a client for the time of the read (no call is made).
pub(crate) fn horus_service(namespace: &str, name: &str) -> Option<(Ros2Type, Ros2Type)> {
    let client = horus::RawClient::open(namespace, name).ok()?;
    let d = client.description();
    Some((d.request.ros2.clone()?, d.response.ros2.clone()?))
}

/// The types the bridge serves ROS 2 service `name` with in horus, for ROS 2 servers whose
/// request type is `request_type`: the horus service's own description when one of that
/// request type exists (its clients' types: a user's own service and action types cross),
/// else the types horus was built with ([`known_service`]). `None`: neither knows it.
pub(crate) fn service_for_horus(
    namespace: &str,
    name: &str,
    request_type: &str,
) -> Option<(Ros2Type, Ros2Type)> {
    horus_service(namespace, name)
        .filter(|(req, _)| req.type_name == request_type)
        .or_else(|| known_service(request_type))
}

/// Checks one message's wire bytes (encapsulation header + CDR body) against a type.
pub(crate) struct Checker {
    resolved: Resolved,
    root: TypeName,
}

impl Checker {
    /// The checker of `ty`; `None` when its definition does not resolve (then only the
    /// encapsulation header is checked, by the pass-through adapter).
    pub(crate) fn of(ty: &Ros2Type) -> Option<Checker> {
        let (resolved, root) = horus_idl::resolve_ros2msg(&ty.type_name, &ty.definition).ok()?;
        Some(Checker { resolved, root })
    }

    /// Whether `wire` starts with a message of the type; its length if so.
    pub(crate) fn check(&self, wire: &[u8]) -> Result<usize, CdrError> {
        horus_idl::cdr::decode_prefix(&self.resolved, &self.root, wire).map(|(_, end)| end)
    }
}

/// The message `wire` holds, checked with `checker` when there is one; `None` when it is
/// not a message of the type. The message ends where its type says: RTPS pads a payload
/// to a multiple of 4 bytes, and horus carries the message alone (as the topics do).
pub(crate) fn message<'a>(checker: &Option<Checker>, wire: &'a [u8]) -> Option<&'a [u8]> {
    match checker {
        Some(c) => c.check(wire).ok().and_then(|end| wire.get(..end)),
        None => Some(wire),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_services_are_known_with_both_types() {
        let (req, resp) = known_service("std_srvs/srv/SetBool_Request").unwrap();
        assert_eq!(req.type_name, "std_srvs/srv/SetBool_Request");
        assert_eq!(resp.type_name, "std_srvs/srv/SetBool_Response");
        assert!(req.type_hash.starts_with("RIHS01_"));
        assert!(known_service("nope/srv/Nope_Request").is_none());
    }

    #[test]
    fn malformed_payloads_fail_the_check() {
        let (_, resp) = known_service("std_srvs/srv/SetBool_Request").unwrap();
        let c = Checker::of(&resp).unwrap();
        // success=true, message="ok"
        let good = [0, 1, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, b'o', b'k', 0];
        assert_eq!(c.check(&good).unwrap(), good.len());
        // RTPS padding after the message is not part of it.
        let mut padded = good.to_vec();
        padded.push(0);
        assert_eq!(message(&Some(c), &padded), Some(&good[..]));
        let c = Checker::of(&resp).unwrap();
        // A string length far beyond the payload: refused without allocating it.
        let huge = [0, 1, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, b'o'];
        assert!(c.check(&huge).is_err());
        // Truncated, and no header at all.
        assert!(c.check(&good[..9]).is_err());
        assert!(c.check(&[1, 0, 0, 0]).is_err());
        // Big-endian CDR.
        assert!(c
            .check(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, b'o', b'k', 0])
            .is_err());
    }
}
