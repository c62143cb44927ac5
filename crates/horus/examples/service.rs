//! A service in two threads (the same works across processes): one call,
//! three calls in flight, a request dropped unanswered, and `NoServer` once
//! the server has gone. Run with `cargo run -p horus --example service`.

use std::time::Duration;

use horus::prelude::*;

horus::message! {
    /// Two numbers to add.
    pub struct AddRequest: "example/AddRequest", version 1 {
        /// First term.
        pub a: i64,
        /// Second term.
        pub b: i64,
    }
}

horus::message! {
    /// Their sum.
    pub struct AddResponse: "example/AddResponse", version 1 {
        /// a + b.
        pub sum: i64,
    }
}

fn main() -> Result<(), ServiceError> {
    // Clients and servers meet by service name; both types are checked.
    let service = Service::<AddRequest, AddResponse>::open("math/add")?;
    let mut server = service.server()?;
    let mut client = service.client()?;

    let worker = std::thread::spawn(move || {
        for _ in 0..5 {
            let request = server.recv();
            if request.a < 0 {
                // Dropped unanswered: the client is told, both ends count it.
                continue;
            }
            let sum = request.a + request.b;
            // `reply` consumes the request: each is answered exactly once.
            request.reply(&AddResponse { sum }).expect("client waiting");
        }
        server.stats()
    });

    // A call always has a timeout.
    let response = client
        .call(&AddRequest { a: 2, b: 3 }, Duration::from_secs(1))
        .expect("answered");
    println!("2 + 3 = {}", response.sum);

    // Several calls in flight.
    let pending: Vec<_> = (1..=3)
        .map(|i| client.call_async(&AddRequest { a: i, b: 10 * i }))
        .collect::<Result<_, _>>()
        .expect("sent");
    for p in pending {
        let response = p.wait(Duration::from_secs(1)).expect("answered");
        println!("async: {}", response.sum);
    }

    // Failures are typed: here `CallError::Unanswered`, then `NoServer`.
    if let Err(e) = client.call(&AddRequest { a: -1, b: 0 }, Duration::from_secs(1)) {
        println!("dropped request: {e}");
    }
    let served = worker.join().expect("server thread");
    if let Err(e) = client.call(&AddRequest { a: 1, b: 1 }, Duration::from_secs(1)) {
        println!("server gone: {e}");
    }

    let calls = client.stats();
    println!(
        "client: calls={} responses={} unanswered={} no_server={} timed_out={}",
        calls.calls, calls.responses, calls.unanswered, calls.no_server, calls.timed_out
    );
    println!(
        "server: received={} replied={} unanswered={}",
        served.received, served.replied, served.unanswered
    );
    Ok(())
}
