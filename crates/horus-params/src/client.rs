//! The other side: list, describe, get and set a node's parameters from
//! any process (what the CLI uses).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use horus::msgs::prelude::Zeroable;
use horus::{CallError, Client, Service, ServiceError};

use crate::decl::{Range, NAME_CAPACITY};
use crate::error::ParamError;
use crate::server::service_name;
use crate::value::{ParamKind, ParamValue};
use crate::wire::*;

/// Why a remote parameter operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ParamClientError {
    /// The node's parameter service could not be opened.
    #[error(transparent)]
    Open(#[from] ServiceError),
    /// The call failed (no server: the node is not running; timeout; the node died …).
    #[error(transparent)]
    Call(#[from] CallError),
    /// The node rejected the operation; its value is unchanged.
    #[error(transparent)]
    Rejected(#[from] ParamError),
    /// The node could not decode the request, or its answer could not be decoded.
    #[error("malformed parameter message: {0}")]
    Malformed(String),
}

/// A parameter's declaration as the node reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamInfo {
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: ParamKind,
    /// Default value.
    pub default: ParamValue,
    /// Description.
    pub description: String,
    /// Range, if declared.
    pub range: Option<Range>,
}

/// A client of one node's parameter service.
///
/// Every call has a timeout (1 s unless [`ParamClient::set_timeout`]); a
/// node that is not running is [`CallError::NoServer`] at once.
pub struct ParamClient {
    client: Client<ParamRequest, ParamResponse>,
    _service: Service<ParamRequest, ParamResponse>,
    timeout: Duration,
    /// See [`ParamClient::stop_when`].
    stop: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for ParamClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParamClient")
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Most parameters [`ParamClient::list`] reads (bounds a hostile count).
pub const MAX_LIST: u32 = 4096;

impl ParamClient {
    /// Opens the parameter service of `node`.
    /// The namespace is `HORUS_NAMESPACE` (or horus's default), as for topics.
    pub fn open(node: &str) -> Result<Self, ParamClientError> {
        Self::from_service(Service::open(&service_name(node))?)
    }

    /// Like [`ParamClient::open`], in namespace `namespace` (for tools
    /// that take a `--namespace`).
    pub fn open_in(node: &str, namespace: &str) -> Result<Self, ParamClientError> {
        Self::from_service(
            Service::builder(&service_name(node))
                .namespace(namespace)
                .open()?,
        )
    }

    fn from_service(
        service: Service<ParamRequest, ParamResponse>,
    ) -> Result<Self, ParamClientError> {
        let client = service.client()?;
        Ok(ParamClient {
            client,
            _service: service,
            timeout: Duration::from_secs(1),
            stop: None,
        })
    }

    /// Sets the timeout of every later call.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// Ends every call that waits while `stop` is set (within a few milliseconds of
    /// another thread setting it) with [`CallError::Stopped`]; the call is withdrawn.
    /// For a binding whose `close()` from another thread must end a call in progress.
    pub fn stop_when(&mut self, stop: Arc<AtomicBool>) {
        self.stop = Some(stop);
    }

    /// Every declaration, in the node's declaration order.
    pub fn list(&mut self) -> Result<Vec<ParamInfo>, ParamClientError> {
        let mut out = Vec::new();
        let mut index = 0;
        loop {
            let mut req = ParamRequest::zeroed();
            req.op = OP_DESCRIBE_INDEX;
            req.index = index;
            let resp = self.call(&req)?;
            if resp.status == STATUS_NOT_FOUND || index >= resp.count.min(MAX_LIST) {
                return Ok(out);
            }
            check(&resp, None)?;
            out.push(info(&resp)?);
            index += 1;
        }
    }

    /// The declaration of `name`.
    pub fn describe(&mut self, name: &str) -> Result<ParamInfo, ParamClientError> {
        let resp = self.named(OP_DESCRIBE, name)?;
        check(&resp, None)?;
        info(&resp)
    }

    /// The current value of `name`.
    pub fn get(&mut self, name: &str) -> Result<ParamValue, ParamClientError> {
        let resp = self.named(OP_GET, name)?;
        check(&resp, None)?;
        get_value(resp.kind, resp.value_len, &resp.value).map_err(ParamClientError::Malformed)
    }

    /// Sets `name` to `value`; returns the value the node now holds. Wrong
    /// type, out of range, unknown name → [`ParamClientError::Rejected`]
    /// and the node's value is unchanged.
    pub fn set(&mut self, name: &str, value: &ParamValue) -> Result<ParamValue, ParamClientError> {
        crate::codec::check_encoded_len(name, value)?;
        let mut req = request(OP_SET, name)?;
        req.kind = u32::from(value.kind().code());
        req.value_len = put_value(&mut req.value, value);
        let resp = self.call(&req)?;
        check(&resp, Some(value.kind()))?;
        get_value(resp.kind, resp.value_len, &resp.value).map_err(ParamClientError::Malformed)
    }

    fn named(&mut self, op: u32, name: &str) -> Result<ParamResponse, ParamClientError> {
        let req = request(op, name)?;
        self.call(&req)
    }

    fn call(&mut self, req: &ParamRequest) -> Result<ParamResponse, ParamClientError> {
        let stop = self.stop.as_deref();
        // Acquire: pairs with the Release store of whoever sets it.
        let stopped = || stop.is_some_and(|s| s.load(Ordering::Acquire));
        Ok(*self.client.call_or_stop(req, self.timeout, stopped)?)
    }
}

fn request(op: u32, name: &str) -> Result<ParamRequest, ParamClientError> {
    if name.len() > NAME_CAPACITY || name.contains('\0') {
        return Err(ParamError::NotFound {
            name: name.to_owned(),
        }
        .into());
    }
    let mut req = ParamRequest::zeroed();
    req.op = op;
    put_str(&mut req.name, name);
    Ok(req)
}

fn text(buf: &[u8]) -> String {
    get_str(buf).unwrap_or("<not UTF-8>").to_owned()
}

/// Turns a non-OK status into the typed error the node reported.
fn check(resp: &ParamResponse, sent: Option<ParamKind>) -> Result<(), ParamClientError> {
    let name = text(&resp.name);
    let err = match resp.status {
        STATUS_OK => return Ok(()),
        STATUS_NOT_FOUND => ParamError::NotFound { name },
        STATUS_WRONG_TYPE => ParamError::WrongType {
            name,
            expected: kind(resp.kind)?,
            got: sent.unwrap_or(ParamKind::Bool),
        },
        STATUS_OUT_OF_RANGE => {
            let parts = get_value(resp.kind, resp.value_len, &resp.value)
                .map_err(ParamClientError::Malformed)?;
            match parts {
                ParamValue::StrArray(p) if p.len() == 3 => ParamError::OutOfRange {
                    name,
                    value: p[0].clone(),
                    min: p[1].clone(),
                    max: p[2].clone(),
                },
                _ => return Err(ParamClientError::Malformed("out-of-range detail".into())),
            }
        }
        STATUS_TOO_LARGE => ParamError::TooLarge {
            name,
            len: resp.count as usize,
            max: crate::VALUE_CAPACITY,
        },
        _ => return Err(ParamClientError::Malformed(text(&resp.message))),
    };
    Err(err.into())
}

fn kind(code: u32) -> Result<ParamKind, ParamClientError> {
    u8::try_from(code)
        .ok()
        .and_then(ParamKind::from_code)
        .ok_or_else(|| ParamClientError::Malformed(format!("unknown kind code {code}")))
}

fn info(resp: &ParamResponse) -> Result<ParamInfo, ParamClientError> {
    let default =
        get_value(resp.kind, resp.value_len, &resp.value).map_err(ParamClientError::Malformed)?;
    let range = match resp.range_kind {
        RANGE_I64 => Some(Range::I64 {
            min: resp.range_min as i64,
            max: resp.range_max as i64,
        }),
        RANGE_F64 => Some(Range::F64 {
            min: f64::from_bits(resp.range_min),
            max: f64::from_bits(resp.range_max),
        }),
        _ => None,
    };
    Ok(ParamInfo {
        name: text(&resp.name),
        kind: default.kind(),
        default,
        description: text(&resp.description),
        range,
    })
}
