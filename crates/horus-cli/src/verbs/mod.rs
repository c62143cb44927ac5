//! The verbs of `horus`, one module each.

mod bag;
#[cfg(feature = "bridge")]
mod bridge;
#[cfg(any(feature = "bridge", feature = "ros2"))]
mod bridge_status;
mod clean;
mod doctor;
mod foxglove;
mod launch;
mod log;
mod monitor;
mod msg;
pub(crate) mod node;
mod param;
mod play;
mod record;
#[cfg(feature = "ros2")]
mod ros2;
mod ros2_side;
mod service;
pub(crate) mod tf;
pub(crate) mod topic;

use crate::output::Output;
use clap::Subcommand;
use std::process::ExitCode;

/// Every verb `horus` knows.
#[derive(Debug, Subcommand)]
pub(crate) enum Verb {
    /// Topics: list, info, echo, hz, bw, pub (decoded from each topic's own description).
    Topic(topic::TopicCmd),
    /// Remove stale shared memory left by dead processes.
    Clean(clean::Clean),
    /// What is in /dev/shm (live or stale), other namespaces, limits; exit 1 if something is wrong.
    Doctor(doctor::Doctor),
    /// Start a system of processes from a launch file; stop it in order on Ctrl-C.
    Launch(launch::Launch),
    /// Nodes of the running schedulers: rates, jitter, execution times, misses.
    Node(node::NodeCmd),
    /// Services of a namespace: types, servers, clients, counters.
    Service(service::ServiceCmd),
    /// A running node's parameters: list, get, set, dump, load.
    Param(param::ParamCmd),
    /// Record topics to MCAP (CDR + ros2msg: Foxglove and mcap read it; rosbags with --no-logs).
    Record(record::Record),
    /// Publish a recording with its original timing.
    Play(play::Play),
    /// Recordings: info.
    Bag(bag::BagCmd),
    /// Log records of every process (also dead ones): tail, follow, filter.
    Log(log::Log),
    /// Live terminal view of every topic and node (rates, latency, losses, jitter, misses).
    Monitor(monitor::Monitor),
    /// ROS 2 interface types: list, show (like `ros2 interface show`), hash (RIHS01).
    Msg(msg::MsgCmd),
    /// Transforms on tf / tf_static: the frame tree (`frames`), one transform live (`echo`).
    Tf(tf::TfCmd),
    /// Foxglove WebSocket server: every topic live in Foxglove (ws://127.0.0.1:8765).
    Foxglove(foxglove::Foxglove),
    /// This host's bridge to other hosts (Zenoh): topics and services cross transparently.
    #[cfg(feature = "bridge")]
    Bridge(Box<bridge::BridgeArgs>),
    /// This host's bridge to ROS 2 (DDS): ROS 2-typed topics cross both ways.
    #[cfg(feature = "ros2")]
    Ros2(ros2::Ros2Args),
}

/// Runs one verb.
pub(crate) fn run(verb: Verb, out: &Output) -> anyhow::Result<ExitCode> {
    match verb {
        Verb::Topic(args) => topic::run(args, out),
        Verb::Clean(args) => clean::run(args, out),
        Verb::Doctor(args) => doctor::run(args, out),
        Verb::Launch(args) => launch::run(args, out),
        Verb::Node(args) => node::run(args, out),
        Verb::Service(args) => service::run(args, out),
        Verb::Param(args) => param::run(args, out),
        Verb::Record(args) => record::run(args, out),
        Verb::Play(args) => play::run(args, out),
        Verb::Bag(args) => bag::run(args, out),
        Verb::Log(args) => log::run(args, out),
        Verb::Monitor(args) => monitor::run(args, out),
        Verb::Msg(args) => msg::run(args, out),
        Verb::Tf(args) => tf::run(args, out),
        Verb::Foxglove(args) => foxglove::run(args, out),
        #[cfg(feature = "bridge")]
        Verb::Bridge(args) => bridge::run(*args, out),
        #[cfg(feature = "ros2")]
        Verb::Ros2(args) => ros2::run(args, out),
    }
}
