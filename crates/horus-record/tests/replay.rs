//! Deterministic re-execution: a controller run on a simulated clock is recorded (inputs and
//! outputs); re-run twice against the recorded inputs, it produces the same outputs, byte
//! for byte, each time and as recorded.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use horus::msgs::CmdVel;
use horus::sched::prelude::*;
use horus::Topic;
use horus_record::replay::RecordedInputs;
use horus_record::{RecordingReader, RecordingWriter, WriterOptions};

const INPUT: &str = "in/odom";
const OUTPUT: &str = "out/cmd";
const RUN: Duration = Duration::from_millis(1000);
/// Wall-clock epoch of the original run's simulated time zero (any value).
const EPOCH_NS: u64 = 1_700_000_000_000_000_000;

fn ns(tag: &str) -> String {
    format!("record-replay-{tag}-{}", std::process::id())
}

fn scheduler(ns: &str) -> Scheduler {
    Scheduler::new()
        .deterministic(true)
        .publish_stats(false)
        .handle_signals(false)
        .namespace(ns)
        .tick_rate(1000_u64.hz())
}

fn open(ns: &str, name: &str) -> Topic<CmdVel> {
    Topic::<CmdVel>::builder(name)
        .namespace(ns)
        .depth(256)
        .open()
        .unwrap()
}

/// The node under test: at 100 Hz, integrates every input received and publishes a command
/// stamped with the scheduler's (simulated) time.
fn add_controller(s: &mut Scheduler, ns: &str) {
    let mut sub = open(ns, INPUT).subscriber().unwrap();
    let mut publ = open(ns, OUTPUT).publisher().unwrap();
    let (mut sum, mut n) = (0.0f32, 0u32);
    s.add(
        node_fn("controller", move |ctx| {
            while let Some(m) = sub.try_recv() {
                sum = 0.9 * sum + m.linear * m.angular;
                n += 1;
            }
            let _ = publ.send(CmdVel::new(ctx.now().as_nanos() as u64, sum, n as f32));
            Ok(())
        }),
        NodeConfig::new().rate(100_u64.hz()).order(1),
    )
    .unwrap();
}

/// Collects every output message's bytes.
fn add_capture(s: &mut Scheduler, ns: &str) -> Arc<Mutex<Vec<Vec<u8>>>> {
    let got = Arc::new(Mutex::new(Vec::new()));
    let out = got.clone();
    let mut sub = open(ns, OUTPUT).subscriber().unwrap();
    s.add(
        node_fn("capture", move |_| {
            while let Some(m) = sub.try_recv() {
                out.lock().unwrap().push(bytemuck::bytes_of(&*m).to_vec());
            }
            Ok(())
        }),
        NodeConfig::new().rate(1000_u64.hz()).order(2),
    )
    .unwrap();
    got
}

/// The original run: a sensor publishing at irregular times, the controller, and a recorder
/// node writing inputs and outputs with the simulated time as log time.
fn original_run(ns: &str, file: &Path) -> Vec<Vec<u8>> {
    let mut s = scheduler(ns);
    let mut sensor = open(ns, INPUT).publisher().unwrap();
    let mut k = 0u64;
    s.add(
        node_fn("sensor", move |ctx| {
            // Readings at 7 ms steps plus a 0–2 ms wobble: not on the controller's grid.
            let due = Duration::from_millis(k * 7 + k % 3);
            if ctx.now() >= due {
                let _ = sensor.send(CmdVel::new(k, 0.1 * k as f32, 1.0 + (k % 5) as f32));
                k += 1;
            }
            Ok(())
        }),
        NodeConfig::new().rate(1000_u64.hz()).order(0),
    )
    .unwrap();
    add_controller(&mut s, ns);
    let inputs = open(ns, INPUT);
    let outputs = open(ns, OUTPUT);
    let mut w = RecordingWriter::create(file, WriterOptions::default()).unwrap();
    let qos = horus::inspect::TopicView::open(ns, INPUT).unwrap().qos();
    let d = horus::msgs::MessageDescription::of::<CmdVel>();
    let (ci, co) = (
        w.add_channel(INPUT, &d, &qos).unwrap(),
        w.add_channel(OUTPUT, &d, &qos).unwrap(),
    );
    let writer = Arc::new(Mutex::new(Some(w)));
    let tap = writer.clone();
    let (mut si, mut so) = (inputs.subscriber().unwrap(), outputs.subscriber().unwrap());
    s.add(
        node_fn("recorder", move |ctx| {
            let t = EPOCH_NS + ctx.now().as_nanos() as u64;
            let mut guard = tap.lock().unwrap();
            let w = guard.as_mut().unwrap();
            while let Some(m) = si.try_recv() {
                w.write(ci, t, bytemuck::bytes_of(&*m)).unwrap();
            }
            while let Some(m) = so.try_recv() {
                w.write(co, t, bytemuck::bytes_of(&*m)).unwrap();
            }
            Ok(())
        }),
        NodeConfig::new().rate(1000_u64.hz()).order(3),
    )
    .unwrap();
    s.run_for(RUN).unwrap();
    s.shutdown();
    drop(s);
    writer.lock().unwrap().take().unwrap().finish().unwrap();
    // The recorded outputs.
    let mut r = RecordingReader::open(file).unwrap();
    let mut outs = Vec::new();
    let mut b = Vec::new();
    while let Some(m) = r.next_message().unwrap() {
        if r.channel(m.channel).unwrap().topic == OUTPUT {
            r.horus_bytes(&m, &mut b).unwrap().unwrap();
            outs.push(b.clone());
        }
    }
    outs
}

/// The controller alone, fed from the recording.
fn re_execute(ns: &str, file: &Path) -> Vec<Vec<u8>> {
    let inputs = RecordedInputs::load(file, &[INPUT]).unwrap();
    let mut s = scheduler(ns);
    s.add(
        inputs.into_node(ns).unwrap(),
        NodeConfig::new().rate(1000_u64.hz()).order(0),
    )
    .unwrap();
    add_controller(&mut s, ns);
    let got = add_capture(&mut s, ns);
    s.run_for(RUN).unwrap();
    s.shutdown();
    let v = got.lock().unwrap().clone();
    v
}

fn leftover(ns: &str) -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(ns))
        .collect()
}

#[test]
fn re_running_the_controller_on_recorded_inputs_reproduces_its_outputs() {
    let dir = std::env::temp_dir().join(format!("horus-record-replay-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("original.mcap");
    let recorded = original_run(&ns("orig"), &file);
    assert!(recorded.len() >= 100, "{} outputs", recorded.len());
    let first = re_execute(&ns("a"), &file);
    let second = re_execute(&ns("b"), &file);
    assert_eq!(first, second, "two re-executions differ");
    assert_eq!(
        first, recorded,
        "re-execution differs from the recorded outputs"
    );
    for tag in ["orig", "a", "b"] {
        assert!(leftover(&ns(tag)).is_empty(), "{:?}", leftover(&ns(tag)));
    }
    std::fs::remove_dir_all(dir).unwrap();
}
