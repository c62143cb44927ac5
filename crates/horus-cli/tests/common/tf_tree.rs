//! A tf tree broadcast by the test process, for the tests of `horus tf` and the monitor's tf view.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use horus_tf::{
    stamp_now, time_of_ns, transform_stamped, StaticTransformBroadcaster, TransformBroadcaster,
};

const IDENTITY: [f64; 4] = [0.0, 0.0, 0.0, 1.0];

/// A tf tree broadcast by this process: `map → odom` and `base_link → laser` latched on
/// `tf_static`, `odom → base_link` on `tf` every 10 ms until [`stop_sending`](Self::stop_sending)
/// (its broadcaster stays open: the frame stops being updated, the topic stays).
pub struct TfTree {
    _statics: StaticTransformBroadcaster,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<TransformBroadcaster>>,
    dynamic: Option<TransformBroadcaster>,
}

impl TfTree {
    pub fn start(ns: &str) -> TfTree {
        let mut statics = StaticTransformBroadcaster::open(Some(ns)).unwrap();
        statics
            .send_all(&[
                transform_stamped("map", "odom", time_of_ns(0), [0.0; 3], IDENTITY),
                transform_stamped(
                    "base_link",
                    "laser",
                    time_of_ns(0),
                    [0.1, 0.0, 0.2],
                    IDENTITY,
                ),
            ])
            .unwrap();
        let mut tf = TransformBroadcaster::open(Some(ns)).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let s = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                let t =
                    transform_stamped("odom", "base_link", stamp_now(), [1.0, 2.0, 0.0], IDENTITY);
                tf.send(&t).unwrap();
                std::thread::sleep(Duration::from_millis(10));
            }
            tf
        });
        TfTree {
            _statics: statics,
            stop,
            thread: Some(thread),
            dynamic: None,
        }
    }

    /// Stops broadcasting `odom → base_link`, keeping its broadcaster.
    pub fn stop_sending(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            self.dynamic = Some(t.join().unwrap());
        }
    }
}

impl Drop for TfTree {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
