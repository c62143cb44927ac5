//! Asking other hosts' bridges for descriptions (a service's types, a latched topic's type and
//! QoS), off the bridge's loop: each request is a Zenoh query answered in Zenoh's callback (at
//! most `max_in_flight` at once, each given up after [`DESCRIBE_TIMEOUT`]), the reply's size
//! checked before it is read and its content parsed by the describer's parser (untrusted
//! input). The loop collects the outcomes.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use zenoh::query::Reply;
use zenoh::{Session, Wait};

/// How long the other host's bridge has to send a description.
const DESCRIBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Which description: the service or topic, and the host asked.
pub(crate) type DescribeId = (String, String);

/// Parses a reply's bytes (already checked against the byte limit).
pub(crate) type Parse<T> = fn(&[u8]) -> Result<T, String>;

/// See the module's documentation.
pub(crate) struct Describer<T> {
    state: Arc<Mutex<Describing<T>>>,
    max_in_flight: usize,
    max_bytes: usize,
    parse: Parse<T>,
}

impl<T> Clone for Describer<T> {
    fn clone(&self) -> Self {
        Describer {
            state: Arc::clone(&self.state),
            max_in_flight: self.max_in_flight,
            max_bytes: self.max_bytes,
            parse: self.parse,
        }
    }
}

struct Describing<T> {
    in_flight: HashSet<DescribeId>,
    done: HashMap<DescribeId, Result<T, String>>,
}

impl<T: Send + 'static> Describer<T> {
    pub(crate) fn new(max_in_flight: usize, max_bytes: usize, parse: Parse<T>) -> Describer<T> {
        Describer {
            state: Arc::new(Mutex::new(Describing {
                in_flight: HashSet::new(),
                done: HashMap::new(),
            })),
            max_in_flight,
            max_bytes,
            parse,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Describing<T>> {
        // Plain data: usable after a panic elsewhere.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The outcome for `id`, if its query has ended; otherwise asks `key` for it (unless
    /// it is being asked already, or `max_in_flight` queries are) and returns `None`.
    pub(crate) fn poll(
        &self,
        session: &Session,
        id: &DescribeId,
        key: &str,
    ) -> Option<Result<T, String>> {
        let mut st = self.lock();
        if let Some(r) = st.done.remove(id) {
            return Some(r);
        }
        if st.in_flight.contains(id) || st.in_flight.len() >= self.max_in_flight {
            return None;
        }
        st.in_flight.insert(id.clone());
        drop(st);
        let guard = DescribeGuard {
            id: id.clone(),
            describer: self.clone(),
            outcome: Mutex::new(None),
        };
        let (max, parse) = (self.max_bytes, self.parse);
        let asked = session
            .get(key)
            .timeout(DESCRIBE_TIMEOUT)
            .callback(move |reply| guard.answer(reply, max, parse))
            .wait();
        if let Err(e) = asked {
            // The callback (and its guard) are gone: the outcome is in already; keep the
            // more precise one.
            self.lock()
                .done
                .insert(id.clone(), Err(format!("zenoh get {key}: {e}")));
        }
        None
    }

    /// Forgets outcomes nobody will collect (services or topics no longer offered).
    pub(crate) fn retain(&self, wanted: impl Fn(&DescribeId) -> bool) {
        self.lock().done.retain(|id, _| wanted(id));
    }
}

/// One description query: the first reply decides; if the query ends without one, the drop
/// records that.
struct DescribeGuard<T: Send + 'static> {
    id: DescribeId,
    describer: Describer<T>,
    outcome: Mutex<Option<Result<T, String>>>,
}

impl<T: Send + 'static> DescribeGuard<T> {
    fn answer(&self, reply: Reply, max_bytes: usize, parse: Parse<T>) {
        let mut o = self.outcome.lock().unwrap_or_else(|e| e.into_inner());
        if o.is_none() {
            *o = Some(read_description(reply, max_bytes, parse));
        }
    }
}

impl<T: Send + 'static> Drop for DescribeGuard<T> {
    fn drop(&mut self) {
        let outcome = self
            .outcome
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .unwrap_or_else(|| Err(format!("no description from {}", self.id.1)));
        let mut st = self.describer.lock();
        st.in_flight.remove(&self.id);
        st.done.insert(self.id.clone(), outcome);
    }
}

/// A description reply, checked: its size first, then the parser.
fn read_description<T>(reply: Reply, max_bytes: usize, parse: Parse<T>) -> Result<T, String> {
    let sample = reply
        .into_result()
        .map_err(|e| format!("description refused: {:?}", e.payload().to_bytes()))?;
    let len = sample.payload().len();
    if len > max_bytes {
        return Err(format!(
            "description of {len} bytes: more than limits.max_description_bytes ({max_bytes})"
        ));
    }
    parse(&sample.payload().to_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service_in::parse_service_description;
    use horus::description::ServiceDescription;
    use std::time::Instant;

    /// A session of its own, reaching nothing else.
    fn lone_session() -> Session {
        let mut config = zenoh::Config::default();
        for (k, v) in [
            ("mode", "\"peer\""),
            ("listen/endpoints", "[]"),
            ("connect/endpoints", "[]"),
            ("scouting/multicast/enabled", "false"),
        ] {
            config.insert_json5(k, v).unwrap();
        }
        zenoh::open(config).wait().unwrap()
    }

    /// Polls until the outcome for `id` is in (bounded).
    fn outcome(
        d: &Describer<ServiceDescription>,
        s: &Session,
        id: &DescribeId,
        key: &str,
    ) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(r) = d.poll(s, id, key) {
                return r.map(|_| ());
            }
            assert!(Instant::now() < deadline, "no outcome for {id:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn describes_in_flight_are_bounded_and_oversized_replies_refused() {
        let s = lone_session();
        // Descriptions that never come: each query is held.
        let held = Arc::new(Mutex::new(Vec::new()));
        let h = Arc::clone(&held);
        let _hang = s
            .declare_queryable("t/sd/slow/**")
            .callback(move |q| h.lock().unwrap().push(q))
            .wait()
            .unwrap();
        let d = Describer::new(2, 1024, parse_service_description);
        for i in 0..10 {
            let id = (format!("svc/{i}"), "slow".to_owned());
            assert!(d.poll(&s, &id, &format!("t/sd/slow/svc/{i}")).is_none());
        }
        // Queries reach the queryable from Zenoh's threads: wait (bounded) for two.
        let deadline = Instant::now() + Duration::from_secs(10);
        while held.lock().unwrap().len() < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(held.lock().unwrap().len(), 2, "at most 2 asked at once");
        assert_eq!(d.lock().in_flight.len(), 2);
        // Answered (the held queries end without a reply): room for the next.
        held.lock().unwrap().clear();
        let first = ("svc/0".to_owned(), "slow".to_owned());
        let err = outcome(&d, &s, &first, "t/sd/slow/svc/0").unwrap_err();
        assert!(err.contains("no description"), "{err}");

        // A reply larger than the limit is refused before it is parsed.
        let _big = s
            .declare_queryable("t/sd/big/**")
            .callback(|q| {
                let _ = q.reply(q.key_expr().clone(), vec![b' '; 4096]).wait();
            })
            .wait()
            .unwrap();
        let id = ("svc/x".to_owned(), "big".to_owned());
        let err = outcome(&d, &s, &id, "t/sd/big/svc/x").unwrap_err();
        assert!(err.contains("max_description_bytes"), "{err}");
        // And garbage that fits is a typed refusal too.
        let _junk = s
            .declare_queryable("t/sd/junk/**")
            .callback(|q| {
                let _ = q
                    .reply(q.key_expr().clone(), b"{\"no\": 1}".to_vec())
                    .wait();
            })
            .wait()
            .unwrap();
        let id = ("svc/y".to_owned(), "junk".to_owned());
        let err = outcome(&d, &s, &id, "t/sd/junk/svc/y").unwrap_err();
        assert!(err.contains("not valid JSON"), "{err}");
    }

    #[test]
    fn a_latched_topic_shape_over_64_kib_is_refused_before_it_is_parsed() {
        let max = crate::limits::Limits::default().max_description_bytes;
        let mut shape = b"{\"depth\":8,\"overflow\":\"Reject\",\"max_publishers\":2,\
            \"max_subscribers\":4,\"inline_bytes\":64,\"chunk_bytes\":0,\
            \"chunks_per_publisher\":0,\"latched\":1}\n"
            .to_vec();
        shape.extend(
            serde_json::to_vec(&horus_msgs::MessageDescription::of::<horus::msgs::CmdVel>())
                .unwrap(),
        );
        // Padded with JSON whitespace to one byte over: the parser alone would take it.
        shape.resize(max + 1, b' ');
        assert!(crate::topic_shape::parse(&shape).is_ok());
        let s = lone_session();
        let _big = s
            .declare_queryable("t/td/big/**")
            .callback(move |q| {
                let _ = q.reply(q.key_expr().clone(), shape.clone()).wait();
            })
            .wait()
            .unwrap();
        let d = Describer::new(1, max, crate::topic_shape::parse);
        let id = ("map/x".to_owned(), "big".to_owned());
        let deadline = Instant::now() + Duration::from_secs(10);
        let err = loop {
            if let Some(r) = d.poll(&s, &id, "t/td/big/map/x") {
                break r.expect_err("refused");
            }
            assert!(Instant::now() < deadline, "no outcome");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(err.contains("max_description_bytes"), "{err}");
    }
}
