//! The message description a topic's segment carries, as JSON: written by the segment's
//! creator, read back by tools as untrusted input.
//!
//! The format is the serde form of [`MessageDescription`](horus_msgs::MessageDescription)
//! (documented in docs/cli.md), so any language with a JSON parser can decode a topic.

use horus_msgs::{DescriptionError, Message, MessageDescription, SchemaId};
use std::sync::Arc;

/// Why a segment's description could not be used.
#[derive(Debug, thiserror::Error)]
pub enum DescriptionReadError {
    /// The segment carries no description (made by a tool that wrote none).
    #[error("the segment carries no description")]
    Missing,
    /// Not JSON of the expected shape.
    #[error("the description is not valid JSON: {0}")]
    Json(String),
    /// JSON, but inconsistent (see [`DescriptionError`]).
    #[error("the description is inconsistent: {0}")]
    Invalid(#[from] DescriptionError),
    /// Consistent, but not the type the segment's schema names.
    #[error("the description is of {described}, the segment's schema is {schema}")]
    SchemaMismatch {
        /// What the description's root says.
        described: String,
        /// What the header's schema says.
        schema: String,
    },
}

/// The JSON description of `T`, as written into segments.
pub(crate) fn encode<T: Message>() -> Arc<[u8]> {
    let d = MessageDescription::of::<T>();
    // A description of a compiled type always serialises: plain strings and integers.
    serde_json::to_vec(&d)
        .expect("a message description serialises")
        .into()
}

/// What a service's request channel carries: both types. Serialisable (serde) so that it
/// can travel, e.g. to another host's bridge; what arrives is untrusted: check it with
/// [`ServiceDescription::validate`].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ServiceDescription {
    /// The request type.
    pub request: MessageDescription,
    /// The response type.
    pub response: MessageDescription,
}

/// Why a service description is inconsistent: which of its two types, and why.
#[derive(Debug, thiserror::Error)]
pub enum ServiceDescriptionError {
    /// The request type's description is inconsistent.
    #[error("request type: {0}")]
    Request(DescriptionError),
    /// The response type's description is inconsistent.
    #[error("response type: {0}")]
    Response(DescriptionError),
}

impl ServiceDescription {
    /// The description of a service of `Req` and `Resp`.
    pub fn of<Req: Message, Resp: Message>() -> ServiceDescription {
        ServiceDescription {
            request: MessageDescription::of::<Req>(),
            response: MessageDescription::of::<Resp>(),
        }
    }

    /// Checks a description that may come from an untrusted peer: both types' descriptions
    /// (see [`MessageDescription::validate`]).
    pub fn validate(&self) -> Result<(), ServiceDescriptionError> {
        self.request
            .validate()
            .map_err(ServiceDescriptionError::Request)?;
        self.response
            .validate()
            .map_err(ServiceDescriptionError::Response)
    }
}

/// The JSON description of a service, as written into its request channel.
pub(crate) fn encode_service_description(d: &ServiceDescription) -> Arc<[u8]> {
    // Plain strings and integers: always serialises.
    serde_json::to_vec(d)
        .expect("a message description serialises")
        .into()
}

/// The JSON description of a service of `Req` and `Resp`.
pub(crate) fn encode_service<Req: Message, Resp: Message>() -> Arc<[u8]> {
    encode_service_description(&ServiceDescription::of::<Req, Resp>())
}

/// Parses and validates a service description against the schemas of the service's table.
pub fn decode_service(
    bytes: &[u8],
    request: &SchemaRecord,
    response: &SchemaRecord,
) -> Result<ServiceDescription, DescriptionReadError> {
    if bytes.is_empty() {
        return Err(DescriptionReadError::Missing);
    }
    let d: ServiceDescription =
        serde_json::from_slice(bytes).map_err(|e| DescriptionReadError::Json(e.to_string()))?;
    // `check` validates each type before comparing it with its schema.
    check(&d.request, request)?;
    check(&d.response, response)?;
    Ok(d)
}

/// Parses and validates a description read from a segment whose header names `schema`.
pub fn decode(
    bytes: &[u8],
    schema: &SchemaRecord,
) -> Result<MessageDescription, DescriptionReadError> {
    if bytes.is_empty() {
        return Err(DescriptionReadError::Missing);
    }
    let d: MessageDescription =
        serde_json::from_slice(bytes).map_err(|e| DescriptionReadError::Json(e.to_string()))?;
    check(&d, schema)?;
    Ok(d)
}

/// Validates `d` and checks that its root is the type `schema` names.
fn check(d: &MessageDescription, schema: &SchemaRecord) -> Result<(), DescriptionReadError> {
    d.validate()?;
    let root = d.root();
    if root.name != schema.name
        || root.version != schema.version
        || root.size as u64 != u64::from(schema.size)
        || root.layout_hash != schema.layout_hash
    {
        return Err(DescriptionReadError::SchemaMismatch {
            described: format!(
                "{} v{} ({} B, layout {:#018x})",
                root.name, root.version, root.size, root.layout_hash
            ),
            schema: schema.to_string(),
        });
    }
    Ok(())
}

/// A schema as stored in a segment header, decoded (see [`SchemaId`] for the compiled form).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaRecord {
    /// Schema name.
    pub name: String,
    /// Schema version.
    pub version: u32,
    /// Size of the fixed part, bytes.
    pub size: u32,
    /// Alignment, bytes.
    pub align: u32,
    /// Layout hash.
    pub layout_hash: u64,
}

impl SchemaRecord {
    /// Whether this is the record of `id`.
    pub fn is(&self, id: &SchemaId) -> bool {
        self.name == id.name()
            && self.version == id.version()
            && self.size == id.size()
            && self.align == id.align()
            && self.layout_hash == id.layout_hash()
    }
}

impl std::fmt::Display for SchemaRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} v{} ({} B, layout {:#018x})",
            self.name, self.version, self.size, self.layout_hash
        )
    }
}
