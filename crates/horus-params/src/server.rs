//! The node side of the parameter service: answers list/describe/get/set
//! requests against the node's [`Parameters`], polled from the node's tick.

use horus::msgs::prelude::Zeroable;
use horus::{Server, Service, ServiceError};

use crate::decl::{ParamDecl, Range};
use crate::error::ParamError;
use crate::registry::Parameters;
use crate::wire::*;

/// Most requests answered by one [`ParamServer::serve_pending`] call, so a
/// flood of requests cannot stall the node's tick.
pub const MAX_PER_SERVE: usize = 64;

/// Name of node `node`'s parameter service: `<node>/params`.
pub fn service_name(node: &str) -> String {
    format!("{node}/params")
}

/// Serves a node's parameters on the service `<node>/params`.
///
/// Call [`ParamServer::serve_pending`] from the node's tick: changes apply
/// between ticks, on the node's thread, and the node sees them through
/// [`Parameters::take_changed`] or its [`Parameters::on_change`] callbacks.
pub struct ParamServer {
    server: Server<ParamRequest, ParamResponse>,
    _service: Service<ParamRequest, ParamResponse>,
    served: u64,
    unanswered: u64,
}

impl std::fmt::Debug for ParamServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParamServer")
            .field("served", &self.served)
            .field("unanswered", &self.unanswered)
            .finish()
    }
}

impl ParamServer {
    /// Opens (or creates) the parameter service of `node` and serves it.
    /// The namespace is `HORUS_NAMESPACE` (or horus's default), as for topics.
    pub fn new(node: &str) -> Result<Self, ServiceError> {
        Self::from_service(Service::open(&service_name(node))?)
    }

    /// Like [`ParamServer::new`], in namespace `namespace`.
    pub fn new_in(node: &str, namespace: &str) -> Result<Self, ServiceError> {
        Self::from_service(
            Service::builder(&service_name(node))
                .namespace(namespace)
                .open()?,
        )
    }

    fn from_service(service: Service<ParamRequest, ParamResponse>) -> Result<Self, ServiceError> {
        let server = service.server()?;
        Ok(ParamServer {
            server,
            _service: service,
            served: 0,
            unanswered: 0,
        })
    }

    /// Whether requests are waiting (for an event-driven node's readiness).
    pub fn has_pending(&self) -> bool {
        self.server.has_pending()
    }

    /// Answers the requests waiting now (at most [`MAX_PER_SERVE`]); returns
    /// how many were answered. Never blocks.
    pub fn serve_pending(&mut self, params: &mut Parameters) -> usize {
        let mut n = 0;
        while n < MAX_PER_SERVE {
            let Some(request) = self.server.try_recv() else {
                break;
            };
            let response = handle(params, &request);
            // A client that left or died is counted by the service; nothing
            // else to do here.
            match request.reply(&response) {
                Ok(()) => self.served += 1,
                Err(_) => self.unanswered += 1,
            }
            n += 1;
        }
        n
    }

    /// Requests answered so far, and requests whose client was gone.
    pub fn counts(&self) -> (u64, u64) {
        (self.served, self.unanswered)
    }
}

fn handle(params: &mut Parameters, req: &ParamRequest) -> ParamResponse {
    let mut resp = ParamResponse::zeroed();
    let name = match get_str(&req.name) {
        Some(n) => n,
        None => return malformed(resp, "name is not UTF-8"),
    };
    match req.op {
        OP_DESCRIBE_INDEX => {
            resp.count = params.len() as u32;
            match params.decls().nth(req.index as usize) {
                Some(d) => describe(&mut resp, d),
                None => resp.status = STATUS_NOT_FOUND,
            }
        }
        OP_DESCRIBE => match params.describe(name) {
            Ok(d) => describe(&mut resp, d),
            Err(e) => error(&mut resp, &e),
        },
        OP_GET => match params.get(name) {
            Ok(v) => {
                resp.kind = u32::from(v.kind().code());
                resp.value_len = put_value(&mut resp.value, v);
                put_str(&mut resp.name, name);
            }
            Err(e) => error(&mut resp, &e),
        },
        OP_SET => {
            let value = match get_value(req.kind, req.value_len, &req.value) {
                Ok(v) => v,
                Err(why) => return malformed(resp, &why),
            };
            match params.set(name, value) {
                Ok(()) => {
                    // The value just stored: set succeeded, so get does too.
                    if let Ok(v) = params.get(name) {
                        resp.kind = u32::from(v.kind().code());
                        resp.value_len = put_value(&mut resp.value, v);
                    }
                    put_str(&mut resp.name, name);
                }
                Err(e) => error(&mut resp, &e),
            }
        }
        op => return malformed(resp, &format!("unknown op {op}")),
    }
    resp
}

fn malformed(mut resp: ParamResponse, why: &str) -> ParamResponse {
    resp.status = STATUS_MALFORMED;
    put_str(&mut resp.message, why);
    resp
}

fn describe(resp: &mut ParamResponse, d: &ParamDecl) {
    put_str(&mut resp.name, d.name());
    put_str(&mut resp.description, d.description_text());
    resp.kind = u32::from(d.kind().code());
    resp.value_len = put_value(&mut resp.value, d.default_value());
    match d.range_bounds() {
        None => resp.range_kind = RANGE_NONE,
        Some(Range::I64 { min, max }) => {
            resp.range_kind = RANGE_I64;
            resp.range_min = min as u64;
            resp.range_max = max as u64;
        }
        Some(Range::F64 { min, max }) => {
            resp.range_kind = RANGE_F64;
            resp.range_min = min.to_bits();
            resp.range_max = max.to_bits();
        }
    }
}

fn error(resp: &mut ParamResponse, e: &ParamError) {
    put_str(&mut resp.message, &e.to_string());
    match e {
        ParamError::NotFound { name } => {
            resp.status = STATUS_NOT_FOUND;
            put_str(&mut resp.name, name);
        }
        ParamError::WrongType { name, expected, .. } => {
            resp.status = STATUS_WRONG_TYPE;
            resp.kind = u32::from(expected.code());
            put_str(&mut resp.name, name);
        }
        ParamError::OutOfRange {
            name,
            value,
            min,
            max,
        } => {
            resp.status = STATUS_OUT_OF_RANGE;
            put_str(&mut resp.name, name);
            let parts =
                crate::ParamValue::StrArray(vec![truncate(value), truncate(min), truncate(max)]);
            resp.kind = u32::from(parts.kind().code());
            resp.value_len = put_value(&mut resp.value, &parts);
        }
        ParamError::TooLarge { name, len, .. } => {
            resp.status = STATUS_TOO_LARGE;
            resp.count = u32::try_from(*len).unwrap_or(u32::MAX);
            put_str(&mut resp.name, name);
        }
        ParamError::InvalidDeclaration { .. } => resp.status = STATUS_MALFORMED,
    }
}

/// Numbers printed as text are short; cap them anyway so the encoding fits.
fn truncate(s: &str) -> String {
    s.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::ParamValue;

    fn params() -> Parameters {
        let mut p = Parameters::new();
        p.declare(ParamDecl::new("rate", 5_i64).range(Range::I64 { min: 0, max: 9 }))
            .unwrap();
        p
    }

    fn set_request(kind: u32, len: u32, bytes: &[u8]) -> ParamRequest {
        let mut req = ParamRequest::zeroed();
        req.op = OP_SET;
        put_str(&mut req.name, "rate");
        req.kind = kind;
        req.value_len = len;
        req.value[..bytes.len()].copy_from_slice(bytes);
        req
    }

    /// Requests come from another process: every malformed field is a
    /// `STATUS_MALFORMED` answer, never a panic, and the value is unchanged.
    #[test]
    fn hostile_requests_are_malformed_answers_and_change_nothing() {
        let mut p = params();
        let cases = [
            set_request(0, 8, &7_i64.to_le_bytes()),   // unknown kind
            set_request(300, 8, &7_i64.to_le_bytes()), // kind beyond u8
            set_request(2, 4, &7_i64.to_le_bytes()),   // truncated i64
            set_request(2, 9, &7_i64.to_le_bytes()),   // trailing byte
            set_request(2, u32::MAX, &[]),             // length beyond the field
            set_request(8, 2, &[0xff, 0xff]),          // 65535 strings, no bytes
        ];
        for req in &cases {
            let resp = handle(&mut p, req);
            assert_eq!(
                resp.status,
                STATUS_MALFORMED,
                "{:?}",
                get_str(&resp.message)
            );
        }
        let mut bad_op = set_request(2, 8, &7_i64.to_le_bytes());
        bad_op.op = 99;
        assert_eq!(handle(&mut p, &bad_op).status, STATUS_MALFORMED);
        let mut bad_name = set_request(2, 8, &7_i64.to_le_bytes());
        bad_name.name[0] = 0xff;
        assert_eq!(handle(&mut p, &bad_name).status, STATUS_MALFORMED);
        let mut past_end = ParamRequest::zeroed();
        past_end.op = OP_DESCRIBE_INDEX;
        past_end.index = u32::MAX;
        assert_eq!(handle(&mut p, &past_end).status, STATUS_NOT_FOUND);
        assert_eq!(p.get("rate").unwrap(), &ParamValue::I64(5));
        assert!(p.take_changed().is_empty());
        // The same request, well formed, is applied.
        let ok = handle(&mut p, &set_request(2, 8, &7_i64.to_le_bytes()));
        assert_eq!(ok.status, STATUS_OK);
        assert_eq!(p.get("rate").unwrap(), &ParamValue::I64(7));
    }
}
