//! The processes of the two-host tests: the test binary run again inside a network namespace
//! with `HZ_ROLE` naming what it is. Each prints one JSON line of results on stdout when done.

use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

use horus::msgs::{CmdVel, PointCloud};
use horus::{CallError, Overflow, Service, Topic};
use serde_json::json;

horus::message! {
    /// Two numbers to add.
    pub struct AddRequest: "test/BridgeAddRequest", version 1 {
        /// First term.
        pub a: i64,
        /// Second term.
        pub b: i64,
    }
}
horus::message! {
    /// Their sum.
    pub struct AddResponse: "test/BridgeAddResponse", version 1 {
        /// a + b.
        pub sum: i64,
    }
}
horus::message! {
    /// Another type, for schema mismatches.
    pub struct OtherVel: "test/OtherVel", version 1 {
        /// Something else.
        pub x: f64,
    }
}

/// 1 MiB of points.
pub const CLOUD_TAIL: usize = 1 << 20;
/// How long any wait in a child lasts at most.
const LONG: Duration = Duration::from_secs(60);

pub fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_default()
}

fn env_u64(name: &str, default: u64) -> u64 {
    env(name).parse().unwrap_or(default)
}

/// Says the child is ready. libtest has printed `test child_entry ... ` without a newline
/// before the test body runs: start a line of our own.
pub fn ready() {
    println!("\nready");
    let _ = std::io::stdout().flush();
}

/// Blocks until the parent says `word` on our stdin.
fn wait_for_line(word: &str) {
    let mut line = String::new();
    let stdin = std::io::stdin();
    let mut lock = stdin.lock();
    while lock.read_line(&mut line).is_ok_and(|n| n > 0) {
        if line.trim() == word {
            return;
        }
        line.clear();
    }
}

/// Blocks until the parent closes our stdin (or kills us).
pub fn wait_for_stdin_close() {
    let mut line = String::new();
    let stdin = std::io::stdin();
    let mut lock = stdin.lock();
    while lock.read_line(&mut line).is_ok_and(|n| n > 0) {
        line.clear();
    }
}

/// `base/cmd_vel`, or the topic HZ_TOPIC names; `Block` with HZ_BLOCK_MS (default 30 s).
pub fn cmdvel_topic() -> Topic<CmdVel> {
    let name = std::env::var("HZ_TOPIC").unwrap_or_else(|_| "base/cmd_vel".into());
    Topic::<CmdVel>::builder(&name)
        .depth(64)
        .overflow(Overflow::Block {
            timeout: Duration::from_millis(env_u64("HZ_BLOCK_MS", 30_000)),
        })
        .open()
        .expect("cmd_vel topic")
}

pub fn cloud_topic() -> Topic<PointCloud> {
    Topic::<PointCloud>::builder("lidar/points")
        .depth(8)
        .overflow(Overflow::Block {
            timeout: Duration::from_secs(30),
        })
        .max_tail_bytes(CLOUD_TAIL)
        .open()
        .expect("cloud topic")
}

/// Runs the role named by `HZ_ROLE`.
pub fn run(role: &str) {
    match role {
        "bridge" => bridge(),
        "pub_cmdvel" => pub_cmdvel(),
        "sub_cmdvel" => sub_cmdvel(),
        "pub_cloud" => pub_cloud(),
        "sub_cloud" => sub_cloud(),
        "sub_other" => sub_other(),
        "hog" => hog(),
        "server" => server(),
        "pair_server" => pair_server(),
        "client" => client(),
        "garbage" => garbage(),
        "raw_peer" => super::intruder::raw_peer(),
        "sub_cmdvel_for" => sub_cmdvel_for(),
        "evil_caller" => evil_caller(),
        "evil_offers" => evil_offers(),
        "forger" => forger(),
        "stalled_reader" => stalled_reader(),
        "pub_blob" => pub_blob(),
        "pub_latched" => pub_latched(),
        "sub_latched" => sub_latched(),
        "pub_latched_on_cue" => pub_latched_on_cue(),
        "pub_latched_many" => pub_latched_many(),
        "sub_latched_until" => sub_latched_until(),
        other => panic!("unknown role {other}"),
    }
}

fn bridge() {
    let mut cfg = horus_zenoh::BridgeConfig::new(&horus::namespace());
    cfg.host = env("HZ_HOST");
    cfg.listen = vec![env("HZ_LISTEN")];
    let connect = env("HZ_CONNECT");
    cfg.connect = if connect.is_empty() {
        Vec::new()
    } else {
        vec![connect]
    };
    cfg.multicast = env("HZ_MULTICAST") == "1";
    let auth = env("HZ_AUTH_YAML");
    if !auth.is_empty() {
        cfg.apply_yaml(&auth).expect("auth settings");
    }
    let yaml = env("HZ_CONFIG");
    if !yaml.is_empty() {
        cfg.apply_yaml(&yaml).expect("HZ_CONFIG applies");
    }
    assert!(
        horus_zenoh::tune_allocator_for_bridge(),
        "glibc takes the settings"
    );
    let b = horus_zenoh::Bridge::start(cfg).expect("bridge starts");
    ready();
    wait_for_stdin_close();
    b.stop();
}

/// Publishes HZ_COUNT messages at HZ_RATE per second once a subscriber is there.
fn pub_cmdvel() {
    let t = cmdvel_topic();
    let mut p = t.publisher().unwrap();
    ready();
    let n = env_u64("HZ_COUNT", 1000);
    let deadline = Instant::now() + LONG;
    while n > 0 && p.subscribers() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let period = Duration::from_secs_f64(1.0 / env_u64("HZ_RATE", 1000) as f64);
    let start = Instant::now();
    let mut refused = 0u64;
    let mut max_wait = Duration::ZERO;
    for seq in 0..n {
        let due = start + period * seq as u32;
        if let Some(d) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
        let t = Instant::now();
        if p.send(CmdVel::new(seq, 1.0, 0.5)).is_err() {
            refused += 1;
        }
        max_wait = max_wait.max(t.elapsed());
    }
    let s = p.stats();
    println!(
        "\n{}",
        json!({"sent": s.sent, "undelivered": s.undelivered, "refused": refused,
               "timed_out": s.timed_out, "max_wait_us": max_wait.as_micros() as u64,
               "elapsed_ms": start.elapsed().as_millis() as u64})
    );
    wait_for_stdin_close();
}

/// Receives until HZ_COUNT messages or HZ_LAST (a sequence number) arrive; reports gaps.
fn sub_cmdvel() {
    let t = cmdvel_topic();
    let mut s = t.subscriber().unwrap();
    ready();
    let n = env_u64("HZ_COUNT", 1000);
    let mut got = 0u64;
    let mut next = 0u64;
    let mut missing = 0u64;
    let mut disorder = 0u64;
    let deadline = Instant::now() + LONG;
    while got < n && Instant::now() < deadline {
        if let Ok(m) = s.recv_timeout(Duration::from_millis(200)) {
            let seq = m.stamp_ns;
            if seq < next {
                disorder += 1;
            } else {
                missing += seq - next;
                next = seq + 1;
            }
            got += 1;
            if seq + 1 >= n {
                break;
            }
        }
    }
    let st = s.stats();
    println!(
        "\n{}",
        json!({"received": got, "missing": missing, "out_of_order": disorder,
               "last": next, "overrun": st.overrun})
    );
}

fn pub_cloud() {
    let t = cloud_topic();
    let mut p = t.publisher().unwrap();
    ready();
    let deadline = Instant::now() + LONG;
    while p.subscribers() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let n = env_u64("HZ_COUNT", 30);
    let mut tail = vec![0u8; CLOUD_TAIL];
    let mut refused = 0u64;
    for seq in 0..n {
        tail[..8].copy_from_slice(&seq.to_le_bytes());
        let last = tail.len() - 8;
        tail[last..].copy_from_slice(&(!seq).to_le_bytes());
        if p.send_with_tail(&PointCloud::new((CLOUD_TAIL / 16) as u32, false), &tail)
            .is_err()
        {
            refused += 1;
        }
        std::thread::sleep(Duration::from_millis(env_u64("HZ_PERIOD_MS", 33)));
    }
    let s = p.stats();
    println!(
        "\n{}",
        json!({"sent": s.sent, "undelivered": s.undelivered, "refused": refused})
    );
    wait_for_stdin_close();
}

fn sub_cloud() {
    let t = cloud_topic();
    let mut s = t.subscriber().unwrap();
    ready();
    let n = env_u64("HZ_COUNT", 30);
    let (mut got, mut next, mut missing, mut corrupt) = (0u64, 0u64, 0u64, 0u64);
    let deadline = Instant::now() + LONG;
    while got < n && Instant::now() < deadline {
        if let Ok(m) = s.recv_timeout(Duration::from_millis(200)) {
            let tail = m.tail();
            if tail.len() != CLOUD_TAIL {
                corrupt += 1;
                continue;
            }
            let seq = u64::from_le_bytes(tail[..8].try_into().unwrap());
            let check = u64::from_le_bytes(tail[CLOUD_TAIL - 8..].try_into().unwrap());
            if check != !seq {
                corrupt += 1;
            }
            missing += seq.saturating_sub(next);
            next = seq + 1;
            got += 1;
            if next == n {
                // The last one: whatever did not come before it was lost.
                break;
            }
        }
    }
    println!(
        "\n{}",
        json!({"received": got, "missing": missing, "corrupt": corrupt, "last": next})
    );
}

/// Subscribes to the CmdVel topic and never reads: once its ring is full a `Block` publisher
/// waits for it. Stays until killed (or stdin closes).
fn hog() {
    let t = cmdvel_topic();
    let _s = t.subscriber().unwrap();
    ready();
    wait_for_stdin_close();
}

/// Subscribes to `base/cmd_vel` with another type and reports what arrived.
fn sub_other() {
    let t = Topic::<OtherVel>::builder("base/cmd_vel").open().unwrap();
    let mut s = t.subscriber().unwrap();
    ready();
    let mut got = 0u64;
    let until = Instant::now() + Duration::from_millis(env_u64("HZ_MS", 3000));
    while Instant::now() < until {
        if s.recv_timeout(Duration::from_millis(100)).is_ok() {
            got += 1;
        }
    }
    println!("\n{}", json!({ "received": got }));
}

/// Serves `math/add`; with HZ_DIE=1 exits (without answering) on the first request.
/// HZ_SERVICE, or `math/add`.
fn service_name() -> String {
    std::env::var("HZ_SERVICE").unwrap_or_else(|_| "math/add".into())
}

fn server() {
    let svc = Service::<AddRequest, AddResponse>::open(&service_name()).unwrap();
    let mut srv = svc.server().unwrap();
    ready();
    let die = env("HZ_DIE") == "1";
    loop {
        if let Some(req) = srv.recv_timeout(Duration::from_millis(100)) {
            if die {
                std::process::exit(9);
            }
            let sum = req.a + req.b;
            let _ = req.reply(&AddResponse { sum });
        }
    }
}

/// Calls `math/add` HZ_CALLS times (waiting up to 10 s for a server to appear first, unless
/// HZ_NOWAIT=1) and reports each outcome.
fn client() {
    let svc = Service::<AddRequest, AddResponse>::open(&service_name()).unwrap();
    let mut c = svc.client().unwrap();
    ready();
    if env("HZ_NOWAIT") != "1" {
        let deadline = Instant::now() + Duration::from_secs(10);
        while c.servers() == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let calls = env_u64("HZ_CALLS", 1);
    let mut outcomes = Vec::new();
    for i in 0..calls {
        let i = i as i64;
        let o = match c.call(&AddRequest { a: i, b: 1000 }, Duration::from_secs(5)) {
            Ok(r) if r.sum == i + 1000 => "ok".to_owned(),
            Ok(r) => format!("wrong {}", r.sum),
            Err(CallError::NoServer(_)) => "no_server".into(),
            Err(CallError::ServerDied { .. }) => "server_died".into(),
            Err(CallError::Timeout(_)) => "timeout".into(),
            Err(e) => format!("other {e}"),
        };
        outcomes.push(o);
    }
    println!("\n{}", json!({ "outcomes": outcomes }));
}

/// A hostile peer: a raw Zenoh session that puts, on the data key B's bridge listens to, a
/// message while it does not offer the topic (refused: unknown sender), then offers it and
/// (once told `go` on stdin) puts bytes that are not a message, a message of another type,
/// and a message of the right type but the wrong size.
fn garbage() {
    use zenoh::Wait;
    let session = raw_session();
    let publisher = session
        .declare_publisher("horus/d/evil/base/cmd_vel")
        .wait()
        .unwrap();
    let deadline = Instant::now() + LONG;
    while !publisher.matching_status().wait().unwrap().matching() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let (id, layout) = env_schema();
    let body = vec![0u8; std::mem::size_of::<CmdVel>()];
    publisher.put(wire(id, layout, 0, &body)).wait().unwrap();
    let _host = evil_host_token(&session);
    let _offer = token(
        &session,
        format!("horus/o/evil/{}/base/cmd_vel", schema_chunk(id, layout)),
    );
    ready();
    wait_for_line("go");
    let schema = |id: u64, layout: u64, body: &[u8]| {
        let mut b = vec![0u8; horus_zenoh::HEADER_LEN + body.len()];
        horus_zenoh::WireHeader {
            epoch: 1,
            schema_id: id,
            layout_hash: layout,
            seq: 0,
            origin_place: 0,
            origin_seq: 0,
        }
        .write(&mut b);
        b[horus_zenoh::HEADER_LEN..].copy_from_slice(body);
        b
    };
    let (id, layout) = (
        env("HZ_SCHEMA_ID").parse::<u64>().unwrap(),
        env("HZ_LAYOUT").parse::<u64>().unwrap(),
    );
    publisher.put(b"not a message".to_vec()).wait().unwrap();
    publisher
        .put(schema(id ^ 1, layout, &[0; 16]))
        .wait()
        .unwrap();
    publisher.put(schema(id, layout, &[0; 3])).wait().unwrap();
    println!("\n{}", json!({ "put": 3 }));
    wait_for_stdin_close();
    std::process::exit(0);
}

/// Serves `math/add` two calls at a time: takes one, waits (bounded) for a second while still
/// holding the first, then answers both. Calls forwarded one at a time never complete a pair.
fn pair_server() {
    let svc = Service::<AddRequest, AddResponse>::open("math/add").unwrap();
    let mut srv = svc.server().unwrap();
    ready();
    loop {
        let Some(first) = srv.recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        let second = srv.recv_timeout(Duration::from_secs(10));
        for req in std::iter::once(first).chain(second) {
            let sum = req.a + req.b;
            let _ = req.reply(&AddResponse { sum });
        }
    }
}

/// Receives the CmdVel topic for HZ_MS and reports how many arrived.
fn sub_cmdvel_for() {
    let t = cmdvel_topic();
    let mut s = t.subscriber().unwrap();
    ready();
    let mut got = 0u64;
    let until = Instant::now() + Duration::from_millis(env_u64("HZ_MS", 3000));
    while Instant::now() < until {
        if s.recv_timeout(Duration::from_millis(50)).is_ok() {
            got += 1;
        }
    }
    println!("\n{}", json!({ "received": got }));
}

/// A raw Zenoh peer (no bridge) connecting to HZ_CONNECT: what a hostile host runs.
fn raw_session() -> zenoh::Session {
    use zenoh::Wait;
    let mut config = zenoh::Config::default();
    for (k, v) in [
        ("mode", "\"peer\"".to_owned()),
        ("scouting/multicast/enabled", "false".to_owned()),
        ("scouting/gossip/enabled", "false".to_owned()),
        ("listen/endpoints", "[]".to_owned()),
        ("connect/endpoints", format!("[\"{}\"]", env("HZ_CONNECT"))),
        ("transport/shared_memory/enabled", "false".to_owned()),
    ] {
        config.insert_json5(k, &v).unwrap();
    }
    zenoh::open(config).wait().unwrap()
}

/// Declares `key` as a liveliness token (kept for the session's life).
fn token(session: &zenoh::Session, key: String) -> zenoh::liveliness::LivelinessToken {
    use zenoh::Wait;
    session.liveliness().declare_token(key).wait().unwrap()
}

/// The hostile host's name: HZ_EVIL, or `evil`.
fn evil_name() -> String {
    std::env::var("HZ_EVIL").unwrap_or_else(|_| "evil".into())
}

/// The token saying a bridge runs on the hostile host (so bridges count refusals under its
/// name).
fn evil_host_token(session: &zenoh::Session) -> zenoh::liveliness::LivelinessToken {
    token(
        session,
        format!("horus/h/{}/{}/bridge", evil_name(), schema_chunk(0, 0)),
    )
}

fn schema_chunk(id: u64, layout: u64) -> String {
    format!("{id:016x}-{layout:016x}")
}

fn env_schema() -> (u64, u64) {
    (
        env("HZ_SCHEMA_ID").parse().unwrap(),
        env("HZ_LAYOUT").parse().unwrap(),
    )
}

fn wire(id: u64, layout: u64, seq: u64, body: &[u8]) -> Vec<u8> {
    let mut b = vec![0u8; horus_zenoh::HEADER_LEN + body.len()];
    horus_zenoh::WireHeader {
        epoch: 1,
        schema_id: id,
        layout_hash: layout,
        seq,
        origin_place: 0,
        origin_seq: seq,
    }
    .write(&mut b);
    b[horus_zenoh::HEADER_LEN..].copy_from_slice(body);
    b
}

/// Calls HZ_KEY (a bridge's call key) directly, as host `evil`, with an AddRequest; reports
/// what came back: `ok`, `err <text>` or `none`.
fn evil_caller() {
    use zenoh::Wait;
    let session = raw_session();
    let _host = evil_host_token(&session);
    ready();
    // Give the bridge time to see the host token (bounded; the outcome is what is checked).
    std::thread::sleep(Duration::from_millis(500));
    let (id, layout) = env_schema();
    let mut body = Vec::new();
    body.extend_from_slice(&1i64.to_le_bytes());
    body.extend_from_slice(&2i64.to_le_bytes());
    let replies = session
        .get(env("HZ_KEY"))
        .payload(wire(id, layout, 0, &body))
        .attachment(b"evil".to_vec())
        .timeout(Duration::from_secs(5))
        .wait()
        .unwrap();
    let outcome = match replies.recv() {
        Ok(r) => match r.into_result() {
            Ok(_) => "ok".to_owned(),
            Err(e) => format!("err {}", String::from_utf8_lossy(&e.payload().to_bytes())),
        },
        Err(_) => "none".to_owned(),
    };
    println!("\n{}", json!({ "outcome": outcome }));
    wait_for_stdin_close();
    std::process::exit(0);
}

/// Offers HZ_OFFERS services `flood/<n>` (or the services HZ_OFFER names, comma-separated)
/// as host HZ_EVIL (default `evil`). Their descriptions: with HZ_DESCRIBE=answer a valid one
/// (math/add's), with `hang` none ever (each query is held until it times out at the asking
/// bridge). Calls are never answered.
fn evil_offers() {
    use zenoh::Wait;
    let session = raw_session();
    let _host = evil_host_token(&session);
    let svc = Service::<AddRequest, AddResponse>::open("math/add").unwrap();
    let client = horus::RawClient::open(&horus::namespace(), "math/add").unwrap();
    let description = serde_json::to_vec(client.description()).unwrap();
    let hang = env("HZ_DESCRIBE") == "hang";
    let held = std::sync::Mutex::new(Vec::new());
    let _describe = session
        .declare_queryable(format!("horus/sd/{}/**", evil_name()))
        .callback(move |q| {
            if hang {
                held.lock().unwrap().push(q);
            } else {
                let _ = q.reply(q.key_expr().clone(), description.clone()).wait();
            }
        })
        .wait()
        .unwrap();
    let n = env_u64("HZ_OFFERS", 100);
    // The offers' types are math/add's: the stand-ins' local services match them.
    let (id, layout) = super::service_schema(&horus::namespace(), "math/add");
    let names: Vec<String> = match std::env::var("HZ_OFFER") {
        Ok(list) => list.split(',').map(str::to_owned).collect(),
        Err(_) => (0..n).map(|i| format!("flood/{i}")).collect(),
    };
    let offers: Vec<_> = names
        .iter()
        .map(|name| {
            let schema = schema_chunk(id, layout);
            token(
                &session,
                format!("horus/so/{}/{schema}/{name}", evil_name()),
            )
        })
        .collect();
    ready();
    wait_for_stdin_close();
    drop((offers, svc));
    std::process::exit(0);
}

/// Poses as host `evil` publishing `base/cmd_vel` (its offer token, the schema HZ_SCHEMA_ID /
/// HZ_LAYOUT) and puts messages with the sequence numbers HZ_SEQS (comma-separated).
fn forger() {
    use zenoh::Wait;
    let session = raw_session();
    let _host = evil_host_token(&session);
    let (id, layout) = env_schema();
    let _offer = token(
        &session,
        format!("horus/o/evil/{}/base/cmd_vel", schema_chunk(id, layout)),
    );
    let publisher = session
        .declare_publisher("horus/d/evil/base/cmd_vel")
        .wait()
        .unwrap();
    let deadline = Instant::now() + LONG;
    while !publisher.matching_status().wait().unwrap().matching() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    ready();
    wait_for_line("go");
    let body = vec![0u8; std::mem::size_of::<CmdVel>()];
    let seqs: Vec<u64> = env("HZ_SEQS")
        .split(',')
        .map(|s| s.parse().unwrap())
        .collect();
    for &seq in &seqs {
        publisher.put(wire(id, layout, seq, &body)).wait().unwrap();
    }
    println!("\n{}", json!({ "put": seqs.len() }));
    wait_for_stdin_close();
    std::process::exit(0);
}

/// Wants HZ_TOPIC as host `evil` (its want token and a subscriber), then stops reading: the
/// subscriber's callback never returns after the first message, which freezes this peer's
/// receiving side (a hung process, seen from the network). Reports how many it got.
fn stalled_reader() {
    use zenoh::Wait;
    let session = raw_session();
    let _host = evil_host_token(&session);
    let (id, layout) = env_schema();
    let topic = env("HZ_TOPIC");
    let _want = token(
        &session,
        format!("horus/w/evil/{}/{topic}", schema_chunk(id, layout)),
    );
    let got = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let g = std::sync::Arc::clone(&got);
    let _sub = session
        .declare_subscriber(format!("horus/d/*/{topic}"))
        .callback(move |_| {
            g.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            loop {
                std::thread::sleep(Duration::from_secs(3600));
            }
        })
        .wait()
        .unwrap();
    ready();
    wait_for_stdin_close();
    println!(
        "\n{}",
        json!({ "received": got.load(std::sync::atomic::Ordering::Relaxed) })
    );
    std::process::exit(0);
}

/// Publishes HZ_COUNT PointClouds with an HZ_TAIL-byte tail on HZ_TOPIC at HZ_RATE per second,
/// `Block` with HZ_BLOCK_MS, once a subscriber is there; reports the longest a send waited and
/// how many timed out.
fn pub_blob() {
    let tail_len = env_u64("HZ_TAIL", 64 << 10) as usize;
    let t = Topic::<PointCloud>::builder(&env("HZ_TOPIC"))
        .depth(8)
        .overflow(Overflow::Block {
            timeout: Duration::from_millis(env_u64("HZ_BLOCK_MS", 500)),
        })
        .max_tail_bytes(tail_len)
        .open()
        .expect("blob topic");
    let mut p = t.publisher().unwrap();
    ready();
    let deadline = Instant::now() + LONG;
    while p.subscribers() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let n = env_u64("HZ_COUNT", 2000);
    let period = Duration::from_secs_f64(1.0 / env_u64("HZ_RATE", 1000) as f64);
    let tail = vec![7u8; tail_len];
    let msg = PointCloud::new((tail_len / 16) as u32, false);
    let (mut refused, mut max_wait, mut over_half) = (0u64, Duration::ZERO, 0u64);
    let block = Duration::from_millis(env_u64("HZ_BLOCK_MS", 500));
    let start = Instant::now();
    for seq in 0..n {
        let due = start + period * seq as u32;
        if let Some(d) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
        let t0 = Instant::now();
        if p.send_with_tail(&msg, &tail).is_err() {
            refused += 1;
        }
        let waited = t0.elapsed();
        max_wait = max_wait.max(waited);
        if waited >= block / 2 {
            over_half += 1;
        }
    }
    let s = p.stats();
    println!(
        "\n{}",
        json!({"sent": s.sent, "refused": refused, "timed_out": s.timed_out,
               "max_wait_us": max_wait.as_micros() as u64, "waits_over_half_timeout": over_half,
               "elapsed_ms": start.elapsed().as_millis() as u64})
    );
    wait_for_stdin_close();
}

/// The latched topic of the latched tests: CmdVel, 8 deep, keeps the last 3 (the last
/// `HZ_LATCHED` when set; opened without a durability when that is 0).
fn latched_topic() -> Topic<CmdVel> {
    let builder = Topic::<CmdVel>::builder("map/static").depth(8);
    match env_u64("HZ_LATCHED", 3) {
        0 => builder,
        n => builder.durability(horus::Durability::TransientLocal {
            depth: u32::try_from(n).unwrap(),
        }),
    }
    .open()
    .expect("latched topic")
}

/// Publishes stamps 0..HZ_COUNT (default 5) at once, then one message per line read from
/// stdin (its stamp), until stdin closes.
fn pub_latched_on_cue() {
    let t = latched_topic();
    let mut p = t.publisher().unwrap();
    for k in 0..env_u64("HZ_COUNT", 5) {
        p.send(CmdVel::new(k, 0.0, 0.0)).unwrap();
    }
    ready();
    for line in std::io::stdin().lock().lines() {
        let Ok(k) = line.unwrap_or_default().trim().parse::<u64>() else {
            continue;
        };
        p.send(CmdVel::new(k, 0.0, 0.0)).unwrap();
    }
}

/// Opens HZ_TOPICS (default 4) latched topics `map/part/<i>` (CmdVel, 8 deep, keeps the last
/// 3), publishes stamp i on each, then waits for stdin to close.
fn pub_latched_many() {
    let n = env_u64("HZ_TOPICS", 4);
    let mut keep = Vec::new();
    for i in 0..n {
        let t = Topic::<CmdVel>::builder(&format!("map/part/{i}"))
            .depth(8)
            .durability(horus::Durability::TransientLocal { depth: 3 })
            .open()
            .expect("latched part");
        let mut p = t.publisher().unwrap();
        p.send(CmdVel::new(i, 0.0, 0.0)).unwrap();
        keep.push((t, p));
    }
    ready();
    wait_for_stdin_close();
}

/// Subscribes (`latched_topic`), prints `got N` for each stamp N received, and on a `late`
/// line from stdin (or its end) opens a second subscriber, takes what it has at once (its
/// latched history) and reports both lists and the topic's durability.
fn sub_latched_until() {
    let t = latched_topic();
    let mut s = t.subscriber().unwrap();
    ready();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut got = Vec::new();
    let deadline = Instant::now() + LONG;
    while Instant::now() < deadline {
        if let Ok(m) = s.recv_timeout(Duration::from_millis(20)) {
            got.push(m.stamp_ns);
            println!("got {}", m.stamp_ns);
            let _ = std::io::stdout().flush();
        }
        match rx.try_recv() {
            Ok(l) if l.trim() == "late" => break,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => break,
            _ => {}
        }
    }
    while let Some(m) = s.try_recv() {
        got.push(m.stamp_ns);
    }
    let mut late = t.subscriber().unwrap();
    let mut second = Vec::new();
    while let Some(m) = late.try_recv() {
        second.push(m.stamp_ns);
    }
    let view = horus::inspect::TopicView::open(&horus::namespace(), "map/static").unwrap();
    println!(
        "\n{}",
        json!({"got": got, "late": second, "durability": view.durability().to_string()})
    );
    let _ = rx.recv();
}

/// Publishes stamps 0..5 before anyone subscribes (the last 3 are latched), then, once a
/// subscriber is there (the bridge, for the other host), 5 and 6 live.
fn pub_latched() {
    let t = latched_topic();
    let mut p = t.publisher().unwrap();
    for k in 0..5 {
        p.send(CmdVel::new(k, 0.0, 0.0)).unwrap();
    }
    ready();
    let deadline = Instant::now() + LONG;
    while p.subscribers() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    for k in 5..7 {
        p.send(CmdVel::new(k, 0.0, 0.0)).unwrap();
    }
    println!("\n{}", json!({"sent": 7}));
    wait_for_stdin_close();
}

/// Receives until stamp 6; then a second subscriber joins this host's topic and takes what
/// it gets at once (its latched history). Reports both lists and the topic's durability.
fn sub_latched() {
    let t = latched_topic();
    let mut s = t.subscriber().unwrap();
    ready();
    let deadline = Instant::now() + LONG;
    let mut first = Vec::new();
    while first.last() != Some(&6) && Instant::now() < deadline {
        if let Ok(m) = s.recv_timeout(Duration::from_millis(100)) {
            first.push(m.stamp_ns);
        }
    }
    let mut late = t.subscriber().unwrap();
    let mut second = Vec::new();
    while let Some(m) = late.try_recv() {
        second.push(m.stamp_ns);
    }
    let view = horus::inspect::TopicView::open(&horus::namespace(), "map/static").unwrap();
    println!(
        "\n{}",
        json!({"first": first, "second": second, "durability": view.durability().to_string()})
    );
    wait_for_stdin_close();
}
