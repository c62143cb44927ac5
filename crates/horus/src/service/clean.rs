//! Removing service tables whose every client and server is dead (the
//! service part of [`crate::clean::clean_stale`]).
//!
//! A table is closed exactly as its last endpoint would close it: the
//! places of dead processes are reclaimed (which also removes each dead
//! client's response channel), then, if no place is left, the membership
//! word is set to `CLOSING` and the name unlinked — so a process opening
//! the service at that moment sees the table closing and creates a fresh
//! one. A table with any live client or server is never touched beyond
//! reclaiming its dead places (what any joining endpoint does).

use std::path::{Path, PathBuf};

use horus_shm::{Channel, CleanError, SegmentFate, SegmentReport, Unopened};

use super::table::Table;

const SHM_DIR: &str = "/dev/shm";

/// Cleans every service table of `namespace`; reports each with its fate
/// (for a live table, `publishers` counts clients and `subscribers`
/// servers, as on the request channel), followed by the response channels
/// of dead clients its cleaning removed.
pub(crate) fn clean_tables(namespace: &str) -> Result<Vec<SegmentReport>, CleanError> {
    let prefix = horus_shm::segment_prefix(namespace, "sv")?;
    let resp_prefix = horus_shm::segment_prefix(namespace, "sr")?;
    let mut reports = Vec::new();
    for file in horus_shm::segment_files(&prefix)? {
        let path = PathBuf::from(SHM_DIR).join(&file);
        // A client's response channel is `sr.<service>~<token>`.
        let responses = format!("{resp_prefix}{}~", &file[prefix.len()..]);
        let before = response_channels(&responses);
        let fate = clean_table(&format!("/{file}"), &path, format!("/{responses}"));
        reports.push(SegmentReport { path, fate });
        // Reclaiming a dead client's place removed its response channel: report it.
        reports.extend(
            before
                .into_iter()
                .filter(|p| !p.exists())
                .map(|path| SegmentReport {
                    path,
                    fate: SegmentFate::Removed,
                }),
        );
    }
    Ok(reports)
}

/// The response channels in `/dev/shm` whose file names start with `prefix`.
fn response_channels(prefix: &str) -> Vec<PathBuf> {
    horus_shm::segment_files(prefix)
        .unwrap_or_default()
        .into_iter()
        .map(|f| PathBuf::from(SHM_DIR).join(f))
        .collect()
}

fn clean_table(shm_name: &str, path: &Path, responses: String) -> SegmentFate {
    match Table::open_now(shm_name) {
        Ok(table) => {
            let table = table.with_response_prefix(responses);
            if table.close_if_unused() {
                SegmentFate::Removed
            } else {
                SegmentFate::Live {
                    publishers: table.client_places().count_ones(),
                    subscribers: table.server_places().count_ones(),
                }
            }
        }
        Err(e) => Unopened::from(&e).verdict(path).settle(shm_name),
    }
}

/// Cleans the response channels (`sr`) of `namespace` left without a live
/// member. Unlike topics and request channels, a client creates its
/// response channel *before* subscribing to it and does not retry if the
/// channel is closed in between, so an empty response channel younger
/// than the grace period is kept: its client may be joining right now.
/// (An older empty one belonged to a client that died; a client's response
/// channel of a table that still exists is removed when the table reclaims
/// the client's place, see [`clean_tables`].)
pub(crate) fn clean_response_channels(namespace: &str) -> Result<Vec<SegmentReport>, CleanError> {
    horus_shm::sweep(namespace, "sr", clean_response)
}

fn clean_response(shm_name: &str, path: &Path) -> SegmentFate {
    match Channel::open_existing(shm_name, None) {
        Ok(chan) => {
            chan.reclaim_dead();
            let (publishers, subscribers) = chan.members();
            if publishers + subscribers == 0 && horus_shm::is_young(path) {
                SegmentFate::Initialising
            } else {
                horus_shm::close_unused_channel(&chan)
            }
        }
        Err(e) => Unopened::from(&e).verdict(path).settle(shm_name),
    }
}
