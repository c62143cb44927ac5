//! The message description a topic's segment carries, as JSON: written by the segment's
//! creator, read back by tools as untrusted input.
//!
//! The format is the serde form of [`MessageDescription`](horus_msgs::MessageDescription)
//! (documented in docs/cli.md), so any language with a JSON parser can decode a topic. A
//! topic of a ROS 2 type ([`Ros<M>`](crate::ros::Ros)) describes only its 8-byte frame and
//! carries a `ros2` section (type name, RIHS01 hash, `ros2msg` definition) from which tools
//! decode its CDR bytes; descriptions of fixed-layout types have no such key.

use horus_msgs::{DescriptionError, Message, MessageDescription, Ros2Type, SchemaId};
use std::sync::Arc;

/// Longest description JSON any reader parses (1 MiB): checked before the JSON parser runs,
/// so a peer cannot make a reader allocate or parse without bound. A segment holds at most
/// 64 KiB of description; this bounds what arrives from elsewhere (another host, a file).
pub const MAX_DESCRIPTION_JSON: usize = 1 << 20;

/// Why a segment's description could not be used.
#[derive(Debug, thiserror::Error)]
pub enum DescriptionReadError {
    /// The segment carries no description (made by a tool that wrote none).
    #[error("the segment carries no description")]
    Missing,
    /// Longer than [`MAX_DESCRIPTION_JSON`]: not parsed.
    #[error("the description is {len} bytes, more than the {max} allowed")]
    TooLong {
        /// Its length, bytes.
        len: usize,
        /// [`MAX_DESCRIPTION_JSON`].
        max: usize,
    },
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

    /// The description of a service of ROS 2 types `request` and `response` (their
    /// definitions parsed: [`MessageDescription::ros2`]).
    pub fn ros2(
        request: Ros2Type,
        response: Ros2Type,
    ) -> Result<ServiceDescription, ServiceDescriptionError> {
        Ok(ServiceDescription {
            request: MessageDescription::ros2(request).map_err(ServiceDescriptionError::Request)?,
            response: MessageDescription::ros2(response)
                .map_err(ServiceDescriptionError::Response)?,
        })
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

/// Parses untrusted description JSON of type `D`: bounded length first, then serde (whose
/// nesting is bounded by serde_json's recursion limit).
fn parse<D: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<D, DescriptionReadError> {
    if bytes.is_empty() {
        return Err(DescriptionReadError::Missing);
    }
    if bytes.len() > MAX_DESCRIPTION_JSON {
        return Err(DescriptionReadError::TooLong {
            len: bytes.len(),
            max: MAX_DESCRIPTION_JSON,
        });
    }
    serde_json::from_slice(bytes).map_err(|e| DescriptionReadError::Json(e.to_string()))
}

/// Parses and validates message description JSON from an untrusted source (a file, another
/// host): at most [`MAX_DESCRIPTION_JSON`] bytes, then
/// [`MessageDescription::validate`].
pub fn parse_message(bytes: &[u8]) -> Result<MessageDescription, DescriptionReadError> {
    let d: MessageDescription = parse(bytes)?;
    d.validate()?;
    Ok(d)
}

/// Parses and validates service description JSON from an untrusted source (e.g. a remote
/// bridge): at most [`MAX_DESCRIPTION_JSON`] bytes, then [`ServiceDescription::validate`]
/// (its error says which of the two types is inconsistent).
pub fn parse_service(bytes: &[u8]) -> Result<ServiceDescription, ServiceParseError> {
    let d: ServiceDescription = parse(bytes).map_err(ServiceParseError::Read)?;
    d.validate().map_err(ServiceParseError::Invalid)?;
    Ok(d)
}

/// Why service description JSON was refused ([`parse_service`]).
#[derive(Debug, thiserror::Error)]
pub enum ServiceParseError {
    /// Missing, too long or not JSON of a service description.
    #[error(transparent)]
    Read(DescriptionReadError),
    /// One of its two types is inconsistent.
    #[error("invalid description: {0}")]
    Invalid(ServiceDescriptionError),
}

/// Parses and validates a service description against the schemas of the service's table.
pub fn decode_service(
    bytes: &[u8],
    request: &SchemaRecord,
    response: &SchemaRecord,
) -> Result<ServiceDescription, DescriptionReadError> {
    let d: ServiceDescription = parse(bytes)?;
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
    let d: MessageDescription = parse(bytes)?;
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
