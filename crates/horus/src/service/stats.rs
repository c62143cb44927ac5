//! Service counters. Each client and server keeps its counters in the
//! service table, so both ends (and tools) read every one of them.

use super::table::{Table, CLIENT_COUNTERS, SERVER_COUNTERS};

/// Counters of one client. Every call sent ends in `responses`,
/// `server_died`, `timed_out`, `cancelled`, `unanswered`, `failed` or
/// `no_server` (a server killed before taking it); `busy` and `no_server`
/// also count calls refused before sending. (A pending call dropped after
/// its response arrived counts in both `responses` and `cancelled`.)
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientStats {
    /// Requests sent.
    pub calls: u64,
    /// Responses received for calls still waiting for them.
    pub responses: u64,
    /// Calls refused because no server was running.
    pub no_server: u64,
    /// Calls whose server died holding the request.
    pub server_died: u64,
    /// Calls refused because the request queue was full.
    pub busy: u64,
    /// Calls that timed out.
    pub timed_out: u64,
    /// Pending calls dropped before their result was taken.
    pub cancelled: u64,
    /// Responses discarded because their call had timed out or been
    /// cancelled.
    pub late: u64,
    /// Requests a server dropped unanswered.
    pub unanswered: u64,
    /// Requests whose server failed to send its response.
    pub failed: u64,
    /// Response records rejected as corrupt.
    pub malformed: u64,
}

impl ClientStats {
    pub(crate) fn from_counters(c: [u64; CLIENT_COUNTERS]) -> ClientStats {
        ClientStats {
            calls: c[0],
            responses: c[1],
            no_server: c[2],
            server_died: c[3],
            busy: c[4],
            timed_out: c[5],
            cancelled: c[6],
            late: c[7],
            unanswered: c[8],
            failed: c[9],
            malformed: c[10],
        }
    }
}

/// Counters of one server.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServerStats {
    /// Requests taken (claimed) by this server.
    pub received: u64,
    /// Responses sent.
    pub replied: u64,
    /// Requests dropped unanswered (the client was told).
    pub unanswered: u64,
    /// Responses dropped because their client had left or died, and
    /// requests of departed clients skipped.
    pub client_gone: u64,
    /// Request records rejected as corrupt.
    pub malformed: u64,
    /// Replies that failed (too large, no chunk; the client was told).
    pub reply_failed: u64,
}

impl ServerStats {
    pub(crate) fn from_counters(c: [u64; SERVER_COUNTERS]) -> ServerStats {
        ServerStats {
            received: c[0],
            replied: c[1],
            unanswered: c[2],
            client_gone: c[3],
            malformed: c[4],
            reply_failed: c[5],
        }
    }
}

/// One active endpoint's counters and process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointStats<S> {
    /// Place index in the service.
    pub place: usize,
    /// Owning process id.
    pub pid: u32,
    /// Its counters.
    pub stats: S,
}

/// Counters of every active client and server of a service, in every
/// process (like [`TopicStats`](crate::TopicStats) for topics).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServiceStats {
    /// Active clients.
    pub clients: Vec<EndpointStats<ClientStats>>,
    /// Active servers.
    pub servers: Vec<EndpointStats<ServerStats>>,
}

impl ServiceStats {
    pub(crate) fn read(table: &Table) -> ServiceStats {
        let c = table.config();
        let clients = table.client_places();
        let servers = table.server_places();
        ServiceStats {
            clients: (0..c.max_clients as usize)
                .filter(|&k| clients & (1 << k) != 0)
                .filter_map(|k| {
                    Some(EndpointStats {
                        place: k,
                        pid: table.client_owner(k)?.pid,
                        stats: ClientStats::from_counters(table.client_counters(k)),
                    })
                })
                .collect(),
            servers: (0..c.max_servers as usize)
                .filter(|&s| servers & (1 << s) != 0)
                .filter_map(|s| {
                    Some(EndpointStats {
                        place: s,
                        pid: table.server_owner(s)?.0.pid,
                        stats: ServerStats::from_counters(table.server_counters(s)),
                    })
                })
                .collect(),
        }
    }

    /// Sum of every active client's counters.
    pub fn clients_total(&self) -> ClientStats {
        let mut t = ClientStats::default();
        for c in &self.clients {
            let s = &c.stats;
            t.calls += s.calls;
            t.responses += s.responses;
            t.no_server += s.no_server;
            t.server_died += s.server_died;
            t.busy += s.busy;
            t.timed_out += s.timed_out;
            t.cancelled += s.cancelled;
            t.late += s.late;
            t.unanswered += s.unanswered;
            t.failed += s.failed;
            t.malformed += s.malformed;
        }
        t
    }

    /// Sum of every active server's counters.
    pub fn servers_total(&self) -> ServerStats {
        let mut t = ServerStats::default();
        for c in &self.servers {
            let s = &c.stats;
            t.received += s.received;
            t.replied += s.replied;
            t.unanswered += s.unanswered;
            t.client_gone += s.client_gone;
            t.malformed += s.malformed;
            t.reply_failed += s.reply_failed;
        }
        t
    }
}
