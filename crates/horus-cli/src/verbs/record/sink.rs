//! The recorder's writer thread: CDR encoding, compression and file I/O happen here, so the
//! observing loop is never held up by a chunk being compressed or the disk being slow (a
//! stalled observer is what overruns rings).
//!
//! The writer thread runs at a lower priority (nice +10) than the observing loop.
//!
//! The observing loop hands over messages through an unbounded queue whose bytes in flight
//! are bounded by [`MAX_IN_FLIGHT`]: past that, messages are dropped and counted as missed,
//! like any other loss of the recorder, instead of exhausting memory.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use horus::inspect::QosInfo;
use horus::msgs::{MessageDescription, Ros2Type};
use horus::Durability;
use horus_record::{foxlog, ChannelId, RecordingTotals, RecordingWriter, WriteError};

/// Most message bytes queued for the writer thread.
pub(super) const MAX_IN_FLIGHT: u64 = 512 << 20;

enum Event {
    Channel {
        topic: String,
        description: Box<MessageDescription>,
        qos: QosInfo,
        durability: Durability,
    },
    /// A ROS-typed topic.
    Ros2Channel {
        topic: String,
        ty: Box<Ros2Type>,
        qos: QosInfo,
        durability: Durability,
    },
    /// The `/log` channel (`foxglove.Log` JSON).
    LogChannel,
    Message {
        channel: usize,
        log_time: u64,
        bytes: Vec<u8>,
    },
    Missed {
        channel: usize,
        n: u64,
    },
    /// Several of the above, handed over at once (one wake-up of the writer per pass of the
    /// observing loop, not one per message).
    Batch(Vec<Event>),
}

/// The observing loop's end of the writer thread.
pub(super) struct Sink {
    tx: Option<mpsc::Sender<Event>>,
    in_flight: Arc<AtomicU64>,
    channels: usize,
    /// Events of the current pass, sent by [`Sink::flush`].
    batch: Vec<Event>,
    thread: Option<JoinHandle<Result<RecordingTotals, WriteError>>>,
}

impl Sink {
    /// Starts the writer thread on `writer`.
    pub(super) fn start(mut writer: RecordingWriter) -> Sink {
        let (tx, rx) = mpsc::channel::<Event>();
        let in_flight = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&in_flight);
        let thread = std::thread::Builder::new()
            .name("horus-record-writer".into())
            .spawn(move || {
                lower_priority();
                let mut ids: Vec<ChannelId> = Vec::new();
                let mut refused = HashSet::new();
                loop {
                    match rx.recv_timeout(Duration::from_millis(100)) {
                        Ok(Event::Batch(events)) => {
                            for e in events {
                                apply(&mut writer, &mut ids, &mut refused, &counter, e)?;
                            }
                        }
                        Ok(e) => apply(&mut writer, &mut ids, &mut refused, &counter, e)?,
                        Err(mpsc::RecvTimeoutError::Timeout) => {}
                        Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    }
                    writer.tick()?;
                }
                writer.finish()
            })
            .expect("spawn the writer thread");
        Sink {
            tx: Some(tx),
            in_flight,
            channels: 0,
            batch: Vec::new(),
            thread: Some(thread),
        }
    }

    fn send(&mut self, e: Event) -> anyhow::Result<()> {
        let ok = self.tx.as_ref().is_some_and(|tx| tx.send(e).is_ok());
        if ok {
            Ok(())
        } else {
            // The writer thread stopped: its error says why.
            Err(self
                .join()
                .err()
                .unwrap_or_else(|| anyhow::anyhow!("the writer stopped")))
        }
    }

    /// Adds a channel; returns its index for [`Sink::message`].
    pub(super) fn channel(
        &mut self,
        topic: &str,
        description: &MessageDescription,
        qos: &QosInfo,
        durability: Durability,
    ) -> anyhow::Result<usize> {
        self.send(Event::Channel {
            topic: topic.to_owned(),
            description: Box::new(description.clone()),
            qos: *qos,
            durability,
        })?;
        self.channels += 1;
        Ok(self.channels - 1)
    }

    /// Adds a ROS-typed topic; returns its index for [`Sink::message`] (messages: the wire
    /// bytes).
    pub(super) fn ros2_channel(
        &mut self,
        topic: &str,
        ty: &Ros2Type,
        qos: &QosInfo,
        durability: Durability,
    ) -> anyhow::Result<usize> {
        self.send(Event::Ros2Channel {
            topic: topic.to_owned(),
            ty: Box::new(ty.clone()),
            qos: *qos,
            durability,
        })?;
        self.channels += 1;
        Ok(self.channels - 1)
    }

    /// Adds the `/log` channel (log records as `foxglove.Log` JSON); returns its index.
    pub(super) fn log_channel(&mut self) -> anyhow::Result<usize> {
        self.send(Event::LogChannel)?;
        self.channels += 1;
        Ok(self.channels - 1)
    }

    /// Queues a message; `false` when the queue is over its byte budget (the message is
    /// dropped: count it as missed).
    pub(super) fn message(
        &mut self,
        channel: usize,
        log_time: u64,
        bytes: Vec<u8>,
    ) -> anyhow::Result<bool> {
        let len = bytes.len() as u64;
        // Relaxed: a byte budget, not a synchronisation point.
        if self.in_flight.load(Ordering::Relaxed) + len > MAX_IN_FLIGHT {
            return Ok(false);
        }
        self.in_flight.fetch_add(len, Ordering::Relaxed);
        self.batch.push(Event::Message {
            channel,
            log_time,
            bytes,
        });
        Ok(true)
    }

    /// Counts `n` missed messages of `channel`.
    pub(super) fn missed(&mut self, channel: usize, n: u64) {
        self.batch.push(Event::Missed { channel, n });
    }

    /// Hands this pass's messages to the writer thread.
    pub(super) fn flush(&mut self) -> anyhow::Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.batch);
        self.send(Event::Batch(batch))
    }

    /// Lets the writer finish what is queued and close the file.
    pub(super) fn join(&mut self) -> anyhow::Result<RecordingTotals> {
        if !self.batch.is_empty() {
            if let Some(tx) = &self.tx {
                let _ = tx.send(Event::Batch(std::mem::take(&mut self.batch)));
            }
        }
        self.tx = None;
        match self.thread.take() {
            Some(t) => match t.join() {
                Ok(r) => Ok(r?),
                Err(_) => anyhow::bail!("the writer thread panicked"),
            },
            None => anyhow::bail!("the recording was already closed"),
        }
    }
}

/// One event, on the writer thread. `refused`: channels a message of which was refused
/// (said once each).
fn apply(
    writer: &mut RecordingWriter,
    ids: &mut Vec<ChannelId>,
    refused: &mut HashSet<usize>,
    in_flight: &AtomicU64,
    e: Event,
) -> Result<(), WriteError> {
    match e {
        Event::Channel {
            topic,
            description,
            qos,
            durability,
        } => ids.push(writer.add_channel_durable(&topic, &description, &qos, durability)?),
        Event::Ros2Channel {
            topic,
            ty,
            qos,
            durability,
        } => ids.push(writer.add_ros2_channel_durable(&topic, &ty, &qos, durability)?),
        Event::LogChannel => {
            let mut metadata = std::collections::BTreeMap::new();
            metadata.insert("horus.kind".to_owned(), "log".to_owned());
            ids.push(writer.add_raw_channel(foxlog::TOPIC, foxlog::raw_schema(), metadata)?)
        }
        Event::Message {
            channel,
            log_time,
            bytes,
        } => {
            // Relaxed: a byte budget, not a synchronisation point.
            in_flight.fetch_sub(bytes.len() as u64, Ordering::Relaxed);
            match writer.write(ids[channel], log_time, &bytes) {
                // One message its topic's type cannot hold (a publisher that broke the
                // protocol): counted as missed, said once per topic; the recording goes on.
                Err(WriteError::Encode { topic, source }) => {
                    writer.add_missed(ids[channel], 1);
                    if refused.insert(channel) {
                        eprintln!("horus record: {topic}: a message not recorded: {source} (counted as missed)");
                    }
                }
                r => r?,
            }
        }
        Event::Missed { channel, n } => writer.add_missed(ids[channel], n),
        Event::Batch(events) => {
            for e in events {
                apply(writer, ids, refused, in_flight, e)?;
            }
        }
    }
    Ok(())
}

/// Nice +10 for the calling thread: when a core is shared, the scheduler runs the observing
/// loop first (a late observer loses messages; a late writer only buffers). Best effort.
fn lower_priority() {
    // SAFETY: gettid has no preconditions; setpriority on our own thread id with a valid
    // `which` and niceness only changes this thread's scheduling weight.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}
