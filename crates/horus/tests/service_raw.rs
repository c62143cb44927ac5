//! A client that learns a service's types at run time (`RawClient`) calls typed servers.

use std::time::Duration;

use horus::msgs::{MessageDescription, PointCloud};
use horus::{CallError, Message, RawClient, Service, ServiceError};

horus::message! {
    /// Two numbers to add.
    pub struct AddRequest: "test/AddRequest", version 1 {
        /// First term.
        pub a: i64,
        /// Second term.
        pub b: i64,
    }
}
horus::message! {
    /// Their sum.
    pub struct AddResponse: "test/AddResponse", version 1 {
        /// a + b.
        pub sum: i64,
    }
}

fn ns(tag: &str) -> String {
    format!("svc-raw-{}-{tag}", std::process::id())
}

#[test]
fn a_raw_client_calls_a_typed_server_with_bytes() {
    let ns = ns("add");
    let service = Service::<AddRequest, AddResponse>::builder("math/add")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut server = service.server().unwrap();
    let worker = std::thread::spawn(move || {
        for _ in 0..2 {
            let r = server.recv();
            let sum = r.a + r.b;
            r.reply(&AddResponse { sum }).unwrap();
        }
    });
    let mut client = RawClient::open(&ns, "math/add").unwrap();
    assert_eq!(
        client.description().request,
        MessageDescription::of::<AddRequest>()
    );
    assert_eq!(
        client.description().response.root().name,
        AddResponse::SCHEMA.name()
    );
    for (a, b) in [(2i64, 3i64), (-7, 100)] {
        let req = AddRequest { a, b };
        let resp = client
            .call(bytemuck::bytes_of(&req), Duration::from_secs(10))
            .unwrap();
        let resp: AddResponse = bytemuck::pod_read_unaligned(&resp);
        assert_eq!(resp.sum, a + b);
    }
    worker.join().unwrap();
    assert_eq!(client.stats().responses, 2);
    // Wrong size: refused before anything is sent.
    assert!(matches!(
        client.call(&[0u8; 3], Duration::from_secs(1)),
        Err(CallError::TooLarge { .. })
    ));
}

#[test]
fn no_server_is_immediate_and_an_unknown_service_is_an_error() {
    let ns = ns("none");
    assert!(matches!(
        RawClient::open(&ns, "nope"),
        Err(ServiceError::Invalid { .. })
    ));
    let service = Service::<AddRequest, AddResponse>::builder("lonely")
        .namespace(&ns)
        .open()
        .unwrap();
    let mut client = RawClient::open(&ns, "lonely").unwrap();
    let req = AddRequest { a: 1, b: 1 };
    assert!(matches!(
        client.call(bytemuck::bytes_of(&req), Duration::from_secs(5)),
        Err(CallError::NoServer(_))
    ));
    drop(service);
}

#[test]
fn large_responses_travel_in_chunks_and_are_copied_out() {
    let ns = ns("cloud");
    let service = Service::<AddRequest, PointCloud>::builder("scan")
        .namespace(&ns)
        .max_response_tail(4096)
        .open()
        .unwrap();
    let mut server = service.server().unwrap();
    let worker = std::thread::spawn(move || {
        let r = server.recv();
        let n = r.a as usize;
        r.reply_with(n, |cloud, tail| {
            *cloud = bytemuck::Zeroable::zeroed();
            cloud.stamp_ns = 5;
            tail.fill(7);
        })
        .unwrap();
    });
    let mut client = RawClient::open(&ns, "scan").unwrap();
    let req = AddRequest { a: 160, b: 0 };
    let resp = client
        .call(bytemuck::bytes_of(&req), Duration::from_secs(10))
        .unwrap();
    worker.join().unwrap();
    let size = std::mem::size_of::<PointCloud>();
    let fixed: PointCloud = bytemuck::pod_read_unaligned(&resp[..size]);
    assert_eq!(fixed.stamp_ns, 5);
    assert_eq!(resp.len(), size.next_multiple_of(8) + 160);
    assert!(resp[resp.len() - 160..].iter().all(|&b| b == 7));
}
