//! iceoryx2 request/response between two processes.
//!
//! One `request_response::<[u8], [u8]>` service per session; the client loans a
//! request slice of exactly the payload size, writes it in place and sends it
//! (a `PendingResponse`); the server busy-polls `receive()`, reads the request in
//! place, loans a response slice, writes it in place and sends it; the client
//! busy-polls the oldest `PendingResponse::receive()` and reads the response in
//! place. iceoryx2 has no blocking wait on a pending response other than its
//! event services (a second mechanism), so this is its busy-poll row.

use std::collections::VecDeque;

use anyhow::{ensure, Context};
use iceoryx2::pending_response::PendingResponse;
use iceoryx2::port::client::Client;
use iceoryx2::prelude::*;

use crate::pubsub::{node, quiet_logs};
use horus_bench_core::affinity::{pin_current_thread, run_on_cpu};
use horus_bench_core::child::{signal_ready, ChildProcess};
use horus_bench_core::harness::{spin_until, unique_id};
use horus_bench_core::payload::{self, Touch};
use horus_bench_core::rpc::driver::measure_all;
use horus_bench_core::rpc::{self, Caller, Measured, ServeArgs, Spec, System, STRESS_WINDOW};

/// Calls in flight the service allows per client (iceoryx2's default is 4).
const MAX_ACTIVE: usize = 2 * STRESS_WINDOW;

/// The exact settings, for the method text.
pub const SETTINGS: &str = "ipc::Service, default Config, SignalHandlingMode::Disabled; \
    request_response::<[u8], [u8]>: max_clients 1, max_servers 1, max_nodes 2, \
    max_active_requests_per_client 16 (default 4), max_response_buffer_size 16, safe overflow off \
    for requests and responses; client and server: initial_max_slice_len = payload size, \
    AllocationStrategy::Static, BackpressureStrategy::RetryUntilDelivered; requests and responses \
    loaned and written in place; both sides busy-poll receive()";

type Port = iceoryx2::service::port_factory::request_response::PortFactory<
    ipc::Service,
    [u8],
    (),
    [u8],
    (),
>;
type Pending = PendingResponse<ipc::Service, [u8], (), [u8], ()>;

fn service(node: &Node<ipc::Service>, name: &str) -> anyhow::Result<Port> {
    node.service_builder(&ServiceName::new(name)?)
        .request_response::<[u8], [u8]>()
        .max_clients(1)
        .max_servers(1)
        .max_nodes(2)
        .max_active_requests_per_client(MAX_ACTIVE)
        .max_response_buffer_size(MAX_ACTIVE)
        .enable_safe_overflow_for_requests(false)
        .enable_safe_overflow_for_responses(false)
        .open_or_create()
        .with_context(|| format!("opening iceoryx2 request/response service {name}"))
}

struct IceCaller<'c> {
    client: Client<ipc::Service, [u8], (), [u8], ()>,
    flight: VecDeque<Pending>,
    size: usize,
    touch: Touch,
    child: &'c mut ChildProcess,
}

impl Caller for IceCaller<'_> {
    fn start(&mut self, seq: u64) -> anyhow::Result<()> {
        let request = self.client.loan_slice_uninit(self.size)?;
        // SAFETY: the chunk lies in a shared-memory segment the OS zero-filled when
        // it was mapped, and both processes only ever store plain bytes into it, so
        // every byte is initialised although the API types it `MaybeUninit<u8>`;
        // `u8` has no invalid bit patterns. The message is then written over it.
        let mut request = unsafe { request.assume_init() };
        payload::write(request.payload_mut(), seq, self.touch);
        self.flight.push_back(request.send()?);
        Ok(())
    }

    fn finish(&mut self, seq: u64) -> anyhow::Result<()> {
        let pending = self.flight.pop_front().context("no call in flight")?;
        let response = spin_until(|| Ok(pending.receive()?), || self.child.check_alive())?;
        payload::check(response.payload(), seq, self.touch)
    }
}

/// One session at `spec.size`: the client on `cpus[0]`, the server process on
/// `cpus[1]`.
pub fn run(spec: &Spec, cpus: Option<[usize; 2]>) -> anyhow::Result<Measured> {
    run_on_cpu(cpus.map(|c| c[0]), || {
        quiet_logs();
        let name = format!("{}/rpc", unique_id());
        let node = node()?;
        let port = service(&node, &name)?;
        let client = port
            .client_builder()
            .initial_max_slice_len(spec.size)
            .allocation_strategy(AllocationStrategy::Static)
            .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
            .create()
            .context("creating iceoryx2 client")?;
        let mut child = ServeArgs::new(System::Iceoryx2, name, spec, cpus).spawn()?;
        let mut caller = IceCaller {
            client,
            flight: VecDeque::new(),
            size: spec.size,
            touch: spec.touch,
            child: &mut child,
        };
        let measured = measure_all(&mut caller, spec)?;
        drop(caller);
        rpc::release(child)?;
        Ok(measured)
    })
}

/// Server child of [`run`].
pub fn serve(a: &ServeArgs) -> anyhow::Result<()> {
    if let Some(cpu) = a.cpu {
        pin_current_thread(cpu).with_context(|| format!("pinning server to CPU {cpu}"))?;
    }
    quiet_logs();
    let node = node()?;
    let port = service(&node, &a.id)?;
    let server = port
        .server_builder()
        .initial_max_slice_len(a.size)
        .allocation_strategy(AllocationStrategy::Static)
        .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
        .create()
        .context("creating iceoryx2 server")?;
    signal_ready()?;
    loop {
        let request = spin_until(|| Ok(server.receive()?), || Ok(()))?;
        let body = request.payload();
        ensure!(body.len() == a.size, "request of {} B", body.len());
        let seq = payload::read(body, a.touch)?;
        let response = request.loan_slice_uninit(a.size)?;
        // SAFETY: as for the request in `IceCaller::start`: zero-filled shared
        // memory only ever holding plain bytes, overwritten below.
        let mut response = unsafe { response.assume_init() };
        payload::write(response.payload_mut(), seq, a.touch);
        response.send()?;
        drop(request);
        if seq == rpc::END {
            return rpc::await_release();
        }
    }
}

/// iceoryx2 request/response as an [`Rpc`](horus_bench_core::rpc::Rpc) peer.
#[derive(Debug, Clone, Copy)]
pub struct Iceoryx2Rpc;

impl horus_bench_core::peer::Peer for Iceoryx2Rpc {
    fn name(&self) -> &'static str {
        System::Iceoryx2.name()
    }

    fn settings(&self) -> String {
        SETTINGS.to_owned()
    }
}

impl rpc::Rpc for Iceoryx2Rpc {
    fn run(&self, spec: &Spec, cpus: Option<[usize; 2]>) -> anyhow::Result<Measured> {
        run(spec, cpus)
    }

    fn serve(&self, args: &ServeArgs) -> anyhow::Result<()> {
        serve(args)
    }
}
