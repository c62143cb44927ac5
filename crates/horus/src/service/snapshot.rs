//! Read-only views of a namespace's services, for tools (`horus service
//! list`, `horus doctor`): found by scanning `/dev/shm` for service tables
//! (`horus.<namespace>.sv.<service>`), without knowing their types.
//!
//! Nothing is written: a snapshot maps the table and only loads from it
//! (dead endpoints are reported, not reclaimed), so taking one changes
//! nothing the service's clients and servers observe. The table is
//! untrusted input: it is validated on open (magic, version, capacities
//! against the file size), indices come from the validated configuration,
//! and schemas are decoded defensively.

use std::path::PathBuf;

use horus_shm::OpenError;

use super::stats::{ClientStats, EndpointStats, ServerStats, ServiceStats};
use super::table::Table;
use crate::schema_record;

/// Directory POSIX shared memory lives in.
const SHM_DIR: &str = "/dev/shm";

/// One live or dead endpoint of a service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointSnapshot<S> {
    /// Place index in the service.
    pub place: usize,
    /// Owning process id.
    pub pid: u32,
    /// Whether that process is still running (pid + start time). A dead
    /// endpoint keeps its place until a process of the service (or
    /// `horus clean`) reclaims it.
    pub alive: bool,
    /// Its counters.
    pub stats: S,
}

/// What a service's table says about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServiceSnapshot {
    /// Request type: schema name and version (`example/AddRequest v1`).
    pub request_type: String,
    /// Response type, as `request_type`.
    pub response_type: String,
    /// Request schema with size and layout hash.
    pub request_schema: String,
    /// Response schema with size and layout hash.
    pub response_schema: String,
    /// Calls in flight per client (the request queue depth).
    pub depth: u32,
    /// Client places.
    pub max_clients: u32,
    /// Server places.
    pub max_servers: u32,
    /// Active client places.
    pub clients: Vec<EndpointSnapshot<ClientStats>>,
    /// Active server places.
    pub servers: Vec<EndpointSnapshot<ServerStats>>,
}

impl ServiceSnapshot {
    /// The counters as [`ServiceStats`] (what [`Service::stats`](super::Service::stats)
    /// returns), for its totals.
    pub fn stats(&self) -> ServiceStats {
        fn plain<S: Clone>(v: &[EndpointSnapshot<S>]) -> Vec<EndpointStats<S>> {
            v.iter()
                .map(|e| EndpointStats {
                    place: e.place,
                    pid: e.pid,
                    stats: e.stats.clone(),
                })
                .collect()
        }
        ServiceStats {
            clients: plain(&self.clients),
            servers: plain(&self.servers),
        }
    }
}

/// One service table found in a namespace.
#[derive(Debug)]
pub struct ServiceListing {
    /// The service name (`math/add`).
    pub name: String,
    /// The table's file.
    pub path: PathBuf,
    /// Its contents, or why the table could not be read (being created,
    /// truncated, garbage, another layout version).
    pub snapshot: Result<ServiceSnapshot, OpenError>,
}

/// Why a namespace's services could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum ListServicesError {
    /// The namespace is not a valid name.
    #[error(transparent)]
    Name(#[from] horus_shm::NameError),
    /// `/dev/shm` could not be listed.
    #[error("cannot list {SHM_DIR}: {0}")]
    List(std::io::Error),
}

/// Every service of `namespace` (those with a table in `/dev/shm`), sorted
/// by name, each with a read-only snapshot of its table.
pub fn list_services(namespace: &str) -> Result<Vec<ServiceListing>, ListServicesError> {
    let prefix = horus_shm::segment_prefix(namespace, "sv")?;
    let mut files: Vec<String> = std::fs::read_dir(SHM_DIR)
        .map_err(ListServicesError::List)?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(&prefix) && n.len() > prefix.len())
        .collect();
    files.sort();
    Ok(files
        .into_iter()
        .map(|file| ServiceListing {
            // File names map `/` to `~` (and `~` is not allowed in names).
            name: file[prefix.len()..].replace('~', "/"),
            path: PathBuf::from(SHM_DIR).join(&file),
            snapshot: snapshot(&format!("/{file}")),
        })
        .collect())
}

/// A snapshot of the service table `shm_name` (a POSIX shm name).
fn snapshot(shm_name: &str) -> Result<ServiceSnapshot, OpenError> {
    let table = Table::open_now(shm_name)?;
    Ok(read(&table))
}

/// Schema name and version out of a stored schema's description.
fn type_of(description: &str) -> String {
    description
        .split(" (")
        .next()
        .unwrap_or(description)
        .to_owned()
}

pub(crate) fn read(table: &Table) -> ServiceSnapshot {
    let c = *table.config();
    let request_schema = schema_record::describe(&c.req_schema);
    let response_schema = schema_record::describe(&c.resp_schema);
    let clients = table.client_places();
    let servers = table.server_places();
    ServiceSnapshot {
        request_type: type_of(&request_schema),
        response_type: type_of(&response_schema),
        request_schema,
        response_schema,
        depth: c.depth,
        max_clients: c.max_clients,
        max_servers: c.max_servers,
        // Places come from the membership bits, bounded by the validated
        // capacities (client_places / server_places mask the rest).
        clients: (0..c.max_clients as usize)
            .filter(|&k| clients & (1 << k) != 0)
            .filter_map(|k| {
                let owner = table.client_owner(k)?;
                Some(EndpointSnapshot {
                    place: k,
                    pid: owner.pid,
                    alive: owner.is_alive(),
                    stats: ClientStats::from_counters(table.client_counters(k)),
                })
            })
            .collect(),
        servers: (0..c.max_servers as usize)
            .filter(|&s| servers & (1 << s) != 0)
            .filter_map(|s| {
                let (owner, _) = table.server_owner(s)?;
                Some(EndpointSnapshot {
                    place: s,
                    pid: owner.pid,
                    alive: owner.is_alive(),
                    stats: ServerStats::from_counters(table.server_counters(s)),
                })
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_is_the_description_up_to_the_details() {
        assert_eq!(
            type_of("example/Add v1 (16 B, layout 0x0000000000000001)"),
            "example/Add v1"
        );
        assert_eq!(type_of("<not a horus schema>"), "<not a horus schema>");
    }
}
