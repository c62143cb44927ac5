//! A publisher and a subscriber of one topic, in two threads (the same works across
//! processes): a `Block` topic, three commands, the counters of both ends. The README shows
//! this file; run it with `cargo run -p horus --example pubsub`.

use horus::prelude::*;
use std::time::Duration;

fn main() -> Result<(), TopicError> {
    // Endpoints meet by topic name: same thread, other threads or other processes alike.
    let timeout = Duration::from_millis(100);
    let topic = Topic::<CmdVel>::builder("base/cmd_vel")
        .depth(8)
        .overflow(Overflow::Block { timeout })
        .open()?;
    let mut subscriber = topic.subscriber()?;
    let mut publisher = topic.publisher()?;

    let driver = std::thread::spawn(move || {
        for i in 1..=3 {
            // On failure the message comes back inside the error.
            if let Err(err) = publisher.send(CmdVel::new(i, 0.5 * i as f32, 0.1)) {
                eprintln!("not sent: {err}");
            }
        }
        publisher.stats()
    });

    for _ in 0..3 {
        // A zero-copy read guard; `recv` sleeps on a futex while nothing arrives.
        let cmd = subscriber.recv();
        println!(
            "stamp={} linear={} angular={}",
            cmd.stamp_ns, cmd.linear, cmd.angular
        );
    }
    let sent = driver.join().expect("publisher thread");
    let got = subscriber.stats();
    println!(
        "publisher:  sent={} rejected={} timed_out={}",
        sent.sent, sent.rejected, sent.timed_out
    );
    println!(
        "subscriber: received={} overrun={}",
        got.received, got.overrun
    );
    Ok(())
}
