//! An action server node drives towards each goal, one step per tick,
//! publishing feedback; a client sends two goals at once, follows one to
//! success and cancels the other.

use std::time::Duration;

use horus_actions::{ActionClient, ActionError, ActionServer, GoalStatus};

horus::message! {
    /// Drive this far, in metres.
    pub struct Drive: "example/Drive", version 1 { pub metres: f64 }
}
horus::message! {
    /// Distance covered (feedback, and the result).
    pub struct Covered: "example/Covered", version 1 { pub metres: f64 }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ns = format!("example-actions-{}", std::process::id());
    let mut server = ActionServer::<Drive, Covered, Covered>::new_in("drive", &ns)?;
    server.set_result_retention(Duration::from_secs(5));
    let mut client = ActionClient::<Drive, Covered, Covered>::open_in("drive", &ns)?;

    // The node: its tick accepts goals, answers cancels, steps 0.5 m per goal.
    let node = std::thread::spawn(move || {
        let mut covered = std::collections::HashMap::new();
        let mut idle = 0;
        while idle < 200 {
            if let Some(new) = server.next_goal() {
                let target = new.goal().metres;
                if target <= 0.0 {
                    server.reject(new);
                    continue;
                }
                let id = server.accept(new);
                server.execute(id).expect("accepted goal");
                covered.insert(id, (target, 0.0));
            }
            for id in server.take_cancel_requests() {
                let (_, m) = covered.remove(&id).expect("known goal");
                server
                    .canceled(id, &Covered { metres: m })
                    .expect("canceling goal");
            }
            let mut done = Vec::new();
            for (id, (target, m)) in covered.iter_mut() {
                *m = f64::min(*m + 0.5, *target);
                server
                    .publish_feedback(*id, &Covered { metres: *m })
                    .expect("active goal");
                if *m >= *target {
                    server
                        .succeed(*id, &Covered { metres: *m })
                        .expect("active goal");
                    done.push(*id);
                }
            }
            for id in &done {
                covered.remove(id);
            }
            idle = if covered.is_empty() { idle + 1 } else { 0 };
            std::thread::sleep(Duration::from_millis(2));
        }
    });

    let timeout = Duration::from_secs(5);
    let dock = client.send_goal(&Drive { metres: 2.0 }, timeout)?;
    let far = client.send_goal(&Drive { metres: 1000.0 }, timeout)?;
    println!(
        "two goals in flight, distinct ids: {}",
        dock.id() != far.id()
    );
    match client.send_goal(&Drive { metres: -1.0 }, timeout) {
        Err(e) => println!(
            "backwards: rejected = {}",
            matches!(e, ActionError::Rejected(_))
        ),
        Ok(_) => println!("backwards accepted?"),
    }

    let (status, result) = dock.result(timeout)?;
    println!("dock: {status:?} after {} m", result.metres);
    let feedback: Vec<f64> = std::iter::from_fn(|| dock.feedback())
        .map(|f| f.metres)
        .collect();
    println!("dock feedback: {feedback:?}");

    println!("cancel far: {:?}", far.cancel(timeout)?);
    let (status, result) = far.result(timeout)?;
    println!("far: {status:?}, stopped early: {}", result.metres < 1000.0);
    assert_eq!(status, GoalStatus::Canceled);
    drop((dock, far, client));
    node.join().expect("node thread");
    Ok(())
}
