//! What the horus child processes do (chosen by `HR2_SVC_ROLE`, arguments in
//! `HR2_SVC_ARGS`). Each prints `ready` once it is set up and ends when its stdin closes.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use horus::description::ServiceDescription;
use horus::msgs::{MessageDescription, Ros2Type};
use horus::RawServer;
use horus_ros2::{Bridge, BridgeConfig};
use horus_ros_msgs::horus_cdr::{decode_message, encode_message, RosMessage};
use horus_ros_msgs::std_srvs::srv::{SetBool_Request, SetBool_Response};

/// Runs `role`.
pub fn run(role: &str) {
    let args: Vec<String> = std::env::var("HR2_SVC_ARGS")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    match role {
        "bridge" => bridge(),
        "horus_server" => horus_server(&args[0], &args[1]),
        "late_reader_client" => late_reader_client(&args[0]),
        other => panic!("unknown role {other}"),
    }
}

/// A flag set when stdin closes (the parent's signal to finish).
fn stdin_closed() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let s = Arc::clone(&stop);
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        s.store(true, Ordering::Relaxed);
    });
    stop
}

fn ready() {
    println!("ready");
    let _ = std::io::stdout().flush();
}

fn bridge() {
    let ns = horus::namespace();
    let mut config = BridgeConfig::from_env(&ns).expect("config");
    config.localhost_only = true;
    config.scan_interval = Duration::from_millis(50);
    let mut bridge = Bridge::start(config).expect("bridge starts");
    let stop = stdin_closed();
    ready();
    bridge.run(|_| !stop.load(Ordering::Relaxed));
}

/// The description of SetBool as a ROS-typed horus service.
pub fn set_bool() -> ServiceDescription {
    let d = |name, hash, def| MessageDescription::ros2(Ros2Type::new(name, hash, def)).unwrap();
    ServiceDescription {
        request: d(
            SetBool_Request::TYPE_NAME,
            SetBool_Request::TYPE_HASH,
            SetBool_Request::DEFINITION,
        ),
        response: d(
            SetBool_Response::TYPE_NAME,
            SetBool_Response::TYPE_HASH,
            SetBool_Response::DEFINITION,
        ),
    }
}

/// `[0 0 0 0]` + wire bytes: a ROS-typed record.
pub fn record(wire: &[u8]) -> Vec<u8> {
    let mut v = vec![0; 4];
    v.extend_from_slice(wire);
    v
}

fn horus_server(name: &str, mode: &str) {
    let ns = horus::namespace();
    let mut server = RawServer::create(&ns, name, &set_bool()).expect("server");
    let stop = stdin_closed();
    ready();
    while !stop.load(Ordering::Relaxed) {
        let Some(request) = server.recv_timeout(Duration::from_millis(50)) else {
            continue;
        };
        let req: SetBool_Request = decode_message(&request.bytes()[4..]).expect("SetBool request");
        if mode == "hang" {
            println!("got");
            let _ = std::io::stdout().flush();
            loop {
                std::thread::sleep(Duration::from_secs(1));
            }
        }
        let resp = SetBool_Response {
            success: !req.data,
            message: "horus".into(),
        };
        request
            .reply(&record(&encode_message(&resp).unwrap()))
            .expect("reply");
    }
}

/// A bare DDS client of SetBool service `name` (RustDDS, localhost only) whose reply reader
/// is created late: stdin `call` writes a request (data = true, no related sample identity:
/// the reply names the request writer) once the request writer matched the bridge's
/// reader, prints `sent`; `listen` then creates the reply reader and prints `reply HEX`
/// for the first reply, or `reply none` after 30 s. The reader is best effort, as a volatile
/// Fast DDS reader it gets nothing written before it matched (a reliable RustDDS reader
/// would ask the writer for its history).
fn late_reader_client(name: &str) {
    use horus_ros2::raw::{PassThrough, WireCdr};
    use rustdds::policy::{Durability, History, Reliability};
    use rustdds::{DataWriterStatus, QosPolicyBuilder, StatusEvented, TopicKind};

    let mut config = BridgeConfig::from_env(&horus::namespace()).expect("config");
    config.localhost_only = true;
    let dds = horus_ros2::Dds::start(&config).expect("DDS");
    let qos = |reliable: bool| {
        QosPolicyBuilder::new()
            .reliability(if reliable {
                Reliability::Reliable {
                    max_blocking_time: rustdds::Duration::from_millis(100),
                }
            } else {
                Reliability::BestEffort
            })
            .durability(Durability::Volatile)
            .history(History::KeepLast { depth: 8 })
            .build()
    };
    let topic = |kind: &str, ty: &str| {
        dds.participant()
            .create_topic(
                format!(
                    "{kind}/{name}{}",
                    if kind == "rq" { "Request" } else { "Reply" }
                ),
                format!("std_srvs::srv::dds_::{ty}_"),
                &qos(true),
                TopicKind::NoKey,
            )
            .expect("topic")
    };
    let writer = dds
        .publisher()
        .create_datawriter_no_key::<WireCdr, PassThrough>(
            &topic("rq", "SetBool_Request"),
            Some(qos(true)),
        )
        .expect("request writer");
    ready();
    let mut lines = std::io::stdin().lines();
    while let Some(Ok(line)) = lines.next() {
        match line.trim() {
            "call" => {
                let deadline = std::time::Instant::now() + Duration::from_secs(60);
                let mut matched = false;
                while !matched && std::time::Instant::now() < deadline {
                    while let Some(st) = writer.try_recv_status() {
                        if let DataWriterStatus::PublicationMatched { current, .. } = st {
                            matched = current.count() > 0;
                        }
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                assert!(matched, "the bridge's request reader never matched");
                let req = encode_message(&SetBool_Request { data: true }).unwrap();
                writer
                    .write(WireCdr(bytes::Bytes::from(req)), None)
                    .expect("request");
                println!("sent");
            }
            "listen" => {
                let mut reader = dds
                    .subscriber()
                    .create_datareader_no_key::<WireCdr, PassThrough>(
                        &topic("rr", "SetBool_Response"),
                        Some(qos(false)),
                    )
                    .expect("reply reader");
                let deadline = std::time::Instant::now() + Duration::from_secs(30);
                let mut got = None;
                while got.is_none() && std::time::Instant::now() < deadline {
                    if let Ok(Some(s)) = reader.take_next_sample() {
                        got = Some(s.value().0.to_vec());
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                match got {
                    Some(b) => println!(
                        "reply {}",
                        b.iter().map(|x| format!("{x:02x}")).collect::<String>()
                    ),
                    None => println!("reply none"),
                }
            }
            _ => {}
        }
        let _ = std::io::stdout().flush();
    }
}
