//! horus services between two processes.
//!
//! One `Service<T, T>` per session in a namespace unique to it: depth 16 (calls in
//! flight per client), one client and one server place, the request and response
//! tail limited to the payload size. Payloads of 64 B to 4 KiB are fixed-size
//! messages (up to 512 B they travel inside the ring slot with a 32-byte header;
//! 1,024, 1,480 and 2,048 B in a pool chunk that the receiver copies the body out
//! of and releases at once, `horus::COPY_OUT_MAX`; 4 KiB in a pool chunk read in
//! place); other sizes (64 KiB, 1 MiB) are the tail of [`Blob`], in a pool
//! chunk. Requests are written in place by `call_async_with` and responses by
//! `reply_with`.
//!
//! Waiting ([`Wait`]): busy-poll = the client spins on `PendingCall::try_result`,
//! the server on `Server::try_recv`; blocking = `PendingCall::wait` and
//! `Server::recv` (a short spin of 64 polls, then a futex sleep).

use std::collections::VecDeque;

use anyhow::Context;
use horus::{Message, PendingCall, Service};

use super::driver::measure_all;
use super::{Caller, Measured, ServeArgs, Spec, END};
use crate::affinity::{pin_current_thread, run_on_cpu};
use crate::child::{signal_ready, ChildProcess};
use crate::harness::{spin_until, unique_id, STALL_TIMEOUT};
use crate::horus_wire::{Blob, Bytes1024, Bytes1480, Bytes2048, Bytes64};
use crate::payload::{self, Touch};
use crate::pubsub::horus::Wait;

/// The exact settings, for the method text.
pub const SETTINGS: &str = "Service<T, T> in a per-session namespace, depth 16, 1 client and 1 \
    server place, tails limited to the payload; 64, 512, 1,024, 1,480, 2,048 and 4,096 B \
    fixed-size messages (≤ 512 B inline in the ring slot; 1,024–2,048 B in a pool chunk, the \
    body copied out by the receiver, which releases the chunk at once; 4,096 B in a pool chunk \
    read in place), other sizes (64 KiB, 1 MiB) the tail of a message in a pool chunk; requests \
    written in place (call_async_with), responses written in place (reply_with); busy-poll = \
    client spins on PendingCall::try_result, server on Server::try_recv; blocking = \
    PendingCall::wait and Server::recv (64 polls, then futex)";

horus::message! {
    /// A 512-byte payload travelling inline in the ring.
    pub struct Bytes512: "horus-bench/Bytes512", version 1 {
        /// The payload.
        pub data: [u8; 512],
    }
}

horus::message! {
    /// A 4-KiB payload travelling in a pool chunk.
    pub struct Bytes4096: "horus-bench/Bytes4096", version 1 {
        /// The payload.
        pub data: [u8; 4096],
    }
}

/// Calls `$f::<T>(args…)` with the message type of a `$size`-byte payload.
macro_rules! by_call_size {
    ($size:expr, $f:ident ( $($arg:expr),* )) => {{
        match $size {
            64 => $f::<Bytes64>($($arg),*),
            512 => $f::<Bytes512>($($arg),*),
            1024 => $f::<Bytes1024>($($arg),*),
            1480 => $f::<Bytes1480>($($arg),*),
            2048 => $f::<Bytes2048>($($arg),*),
            4096 => $f::<Bytes4096>($($arg),*),
            _ => $f::<Blob>($($arg),*),
        }
    }};
}

/// How a message type carries a call's payload.
pub trait Body: Message {
    /// Tail bytes of a `size`-byte payload.
    fn tail_len(_size: usize) -> usize {
        0
    }
    /// The payload of a received message.
    fn bytes<'a>(fixed: &'a Self, tail: &'a [u8]) -> &'a [u8];
    /// The writable payload of a message being written in place.
    fn bytes_mut<'a>(fixed: &'a mut Self, tail: &'a mut [u8], size: usize) -> &'a mut [u8];
}

macro_rules! impl_fixed_body {
    ($($name:ident),*) => {$(
        impl Body for $name {
            fn bytes<'a>(fixed: &'a Self, _tail: &'a [u8]) -> &'a [u8] {
                &fixed.data
            }
            fn bytes_mut<'a>(fixed: &'a mut Self, _tail: &'a mut [u8], _size: usize) -> &'a mut [u8] {
                &mut fixed.data
            }
        }
    )*};
}

impl_fixed_body!(Bytes64, Bytes512, Bytes1024, Bytes1480, Bytes2048, Bytes4096);

impl Body for Blob {
    fn tail_len(size: usize) -> usize {
        size
    }
    fn bytes<'a>(_fixed: &'a Self, tail: &'a [u8]) -> &'a [u8] {
        tail
    }
    fn bytes_mut<'a>(fixed: &'a mut Self, tail: &'a mut [u8], size: usize) -> &'a mut [u8] {
        fixed.len = size as u64;
        tail
    }
}

fn service<T: Body>(ns: &str, size: usize) -> anyhow::Result<Service<T, T>> {
    let tail = T::tail_len(size);
    Ok(Service::<T, T>::builder("rpc")
        .namespace(ns)
        .depth(16)
        .max_clients(1)
        .max_servers(1)
        .max_request_tail(tail)
        .max_response_tail(tail)
        .open()?)
}

struct HorusCaller<'c, T: Body> {
    client: horus::Client<T, T>,
    flight: VecDeque<PendingCall<T>>,
    size: usize,
    touch: Touch,
    wait: Wait,
    child: &'c mut ChildProcess,
}

impl<T: Body> Caller for HorusCaller<'_, T> {
    fn start(&mut self, seq: u64) -> anyhow::Result<()> {
        let (size, touch) = (self.size, self.touch);
        let call = self
            .client
            .call_async_with(T::tail_len(size), |r, tail| {
                payload::write(T::bytes_mut(r, tail, size), seq, touch)
            })
            .context("horus call_async_with")?;
        self.flight.push_back(call);
        Ok(())
    }

    fn finish(&mut self, seq: u64) -> anyhow::Result<()> {
        let mut call = self.flight.pop_front().context("no call in flight")?;
        let response = match self.wait {
            Wait::Poll => spin_until(|| Ok(call.try_result()), || self.child.check_alive())?,
            Wait::Futex => call.wait(STALL_TIMEOUT),
        }
        .context("horus call")?;
        payload::check(T::bytes(&response, response.tail()), seq, self.touch)
    }
}

/// One session at `spec.size`: the client on `cpus[0]`, the server process on
/// `cpus[1]`.
pub fn run(spec: &Spec, wait: Wait, cpus: Option<[usize; 2]>) -> anyhow::Result<Measured> {
    run_on_cpu(cpus.map(|c| c[0]), || {
        by_call_size!(spec.size, run_as(spec, wait, cpus))
    })
}

fn run_as<T: Body>(spec: &Spec, wait: Wait, cpus: Option<[usize; 2]>) -> anyhow::Result<Measured> {
    let ns = unique_id();
    let service = service::<T>(&ns, spec.size)?;
    let mut client = service.client()?;
    client.set_timeout(STALL_TIMEOUT);
    let system = match wait {
        Wait::Poll => super::System::Horus,
        Wait::Futex => super::System::HorusBlocking,
    };
    let mut child = ServeArgs::new(system, ns, spec, cpus).spawn()?;
    let mut caller = HorusCaller::<T> {
        client,
        flight: VecDeque::new(),
        size: spec.size,
        touch: spec.touch,
        wait,
        child: &mut child,
    };
    let measured = measure_all(&mut caller, spec)?;
    drop(caller);
    super::release(child)?;
    Ok(measured)
}

/// Server child of [`run`].
pub fn serve(a: &ServeArgs, wait: Wait) -> anyhow::Result<()> {
    if let Some(cpu) = a.cpu {
        pin_current_thread(cpu).with_context(|| format!("pinning server to CPU {cpu}"))?;
    }
    by_call_size!(a.size, serve_as(a, wait))
}

fn serve_as<T: Body>(a: &ServeArgs, wait: Wait) -> anyhow::Result<()> {
    let service = service::<T>(&a.id, a.size)?;
    let mut server = service.server()?;
    signal_ready()?;
    let (size, touch) = (a.size, a.touch);
    loop {
        let request = match wait {
            Wait::Poll => spin_until(|| Ok(server.try_recv()), || Ok(()))?,
            Wait::Futex => server
                .recv_timeout(STALL_TIMEOUT)
                .context("no request within the stall timeout")?,
        };
        let body = T::bytes(&request, request.tail());
        anyhow::ensure!(body.len() == size, "request of {} B", body.len());
        let seq = payload::read(body, touch)?;
        request
            .reply_with(T::tail_len(size), |r, tail| {
                payload::write(T::bytes_mut(r, tail, size), seq, touch)
            })
            .context("horus reply")?;
        if seq == END {
            return super::await_release();
        }
    }
}

/// horus services as an [`Rpc`](super::Rpc) peer, busy-polling or blocking.
#[derive(Debug, Clone, Copy)]
pub struct HorusRpc {
    /// How both sides wait.
    pub wait: Wait,
}

impl crate::peer::Peer for HorusRpc {
    fn name(&self) -> &'static str {
        match self.wait {
            Wait::Poll => super::System::Horus.name(),
            Wait::Futex => super::System::HorusBlocking.name(),
        }
    }

    fn settings(&self) -> String {
        SETTINGS.to_owned()
    }
}

impl super::Rpc for HorusRpc {
    fn run(&self, spec: &Spec, cpus: Option<[usize; 2]>) -> anyhow::Result<Measured> {
        run(spec, self.wait, cpus)
    }

    fn serve(&self, args: &ServeArgs) -> anyhow::Result<()> {
        serve(args, self.wait)
    }
}
