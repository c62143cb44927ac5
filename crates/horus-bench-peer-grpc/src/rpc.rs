//! gRPC (tonic) unary calls between two processes, over TCP loopback or a
//! Unix-domain socket ([`Transport`]).
//!
//! Settings, following gRPC's performance guide for latency: one channel (one
//! HTTP/2 connection) reused for every call; TCP_NODELAY on both ends (tonic's
//! default, set explicitly); HTTP/2 stream and connection windows of 8 MiB so a
//! 1 MiB call never waits on flow control; each side runs a current-thread tokio
//! runtime on its own (pinned) thread, so no call is handed between threads.
//! Calls in flight are concurrent HTTP/2 streams on that connection (each a task
//! on the client's runtime). The service is in [`crate::service`].

use std::collections::VecDeque;

use anyhow::{anyhow, Context};
use serde::{Deserialize, Serialize};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;
use tonic::transport::{Channel, Endpoint, Server};
use tonic_prost::ProstCodec;

use crate::service::{Answer, Payload, Routes, MAX_MESSAGE, PATH, WINDOW};
use horus_bench_core::affinity::{pin_current_thread, run_on_cpu};
use horus_bench_core::child::{signal_ready, ChildProcess};
use horus_bench_core::harness::free_port;
use horus_bench_core::harness::{unique_id, STALL_TIMEOUT};
use horus_bench_core::payload::{self, Touch};
use horus_bench_core::rpc::driver::measure_all;
use horus_bench_core::rpc::{self, Caller, Measured, ServeArgs, Spec, System};

/// The exact settings, for the method text.
pub const SETTINGS: &str = "tonic 0.14 unary calls, prost messages (one bytes field), \
    hand-written service (no codegen); one channel reused for all calls; TCP_NODELAY on both \
    ends; HTTP/2 stream and connection windows 8 MiB; max message 8 MiB; client and server \
    each on a current-thread tokio runtime (server process pinned whole when pinned); calls in \
    flight = concurrent HTTP/2 streams on the one connection";

/// How the HTTP/2 connection is carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Transport {
    /// TCP on 127.0.0.1.
    Tcp,
    /// A Unix-domain stream socket.
    Uds,
}

fn runtime() -> anyhow::Result<Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("building a tokio runtime")
}

type Call = JoinHandle<Result<Vec<u8>, tonic::Status>>;

struct GrpcCaller<'c> {
    rt: Runtime,
    grpc: tonic::client::Grpc<Channel>,
    flight: VecDeque<Call>,
    size: usize,
    touch: Touch,
    child: &'c mut ChildProcess,
}

impl Caller for GrpcCaller<'_> {
    fn start(&mut self, seq: u64) -> anyhow::Result<()> {
        let mut data = vec![0u8; self.size];
        payload::write(&mut data, seq, self.touch);
        let mut grpc = self.grpc.clone();
        let call = self.rt.spawn(async move {
            grpc.ready()
                .await
                .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
            let path = http::uri::PathAndQuery::from_static(PATH);
            let codec = ProstCodec::<Payload, Payload>::default();
            let response = grpc
                .unary(tonic::Request::new(Payload { data }), path, codec)
                .await?;
            Ok(response.into_inner().data)
        });
        self.flight.push_back(call);
        Ok(())
    }

    fn finish(&mut self, seq: u64) -> anyhow::Result<()> {
        let call = self.flight.pop_front().context("no call in flight")?;
        // The timer is made inside the runtime (it needs the runtime's clock).
        let data = match self
            .rt
            .block_on(async { tokio::time::timeout(STALL_TIMEOUT, call).await })
        {
            Ok(joined) => joined.context("gRPC call task")??,
            Err(_) => {
                self.child.check_alive()?;
                anyhow::bail!("no gRPC response within {STALL_TIMEOUT:?}")
            }
        };
        payload::check(&data, seq, self.touch)
    }
}

/// Where the server listens: `tcp <addr>` or `uds <path>`.
fn address(transport: Transport) -> anyhow::Result<String> {
    Ok(match transport {
        Transport::Tcp => format!("tcp 127.0.0.1:{}", free_port()?),
        Transport::Uds => {
            let path = std::env::temp_dir().join(format!("{}.grpc.sock", unique_id()));
            format!("uds {}", path.display())
        }
    })
}

async fn connect(address: &str) -> anyhow::Result<Channel> {
    let (kind, at) = address.split_once(' ').context("address <kind> <where>")?;
    let endpoint = match kind {
        "tcp" => Endpoint::from_shared(format!("http://{at}"))?,
        // The URI is required but unused: the connector dials the socket.
        _ => Endpoint::from_static("http://localhost"),
    }
    .tcp_nodelay(true)
    .initial_stream_window_size(WINDOW)
    .initial_connection_window_size(WINDOW);
    Ok(match kind {
        "tcp" => endpoint.connect().await?,
        _ => {
            let path = at.to_owned();
            let dial = tower::service_fn(move |_: http::Uri| {
                let path = path.clone();
                async move {
                    let stream = tokio::net::UnixStream::connect(path).await?;
                    Ok::<_, std::io::Error>(hyper_util::rt::TokioIo::new(stream))
                }
            });
            endpoint.connect_with_connector(dial).await?
        }
    })
}

/// One session at `spec.size`: the client on `cpus[0]`, the server process on
/// `cpus[1]`.
pub fn run(
    spec: &Spec,
    transport: Transport,
    cpus: Option<[usize; 2]>,
) -> anyhow::Result<Measured> {
    let address = address(transport)?;
    let result = run_on_cpu(cpus.map(|c| c[0]), || {
        session(spec, transport, cpus, &address)
    });
    // The socket file goes whether the session worked or not.
    if let Some(path) = address.strip_prefix("uds ") {
        let _ = std::fs::remove_file(path);
    }
    result
}

fn session(
    spec: &Spec,
    transport: Transport,
    cpus: Option<[usize; 2]>,
    address: &str,
) -> anyhow::Result<Measured> {
    let system = match transport {
        Transport::Tcp => System::GrpcTcp,
        Transport::Uds => System::GrpcUds,
    };
    let mut child = ServeArgs::new(system, address.to_owned(), spec, cpus).spawn()?;
    let rt = runtime()?;
    let channel = rt
        .block_on(connect(address))
        .with_context(|| format!("connecting to the gRPC server at {address}"))?;
    let grpc = tonic::client::Grpc::new(channel)
        .max_decoding_message_size(MAX_MESSAGE)
        .max_encoding_message_size(MAX_MESSAGE);
    let mut caller = GrpcCaller {
        rt,
        grpc,
        flight: VecDeque::new(),
        size: spec.size,
        touch: spec.touch,
        child: &mut child,
    };
    let measured = measure_all(&mut caller, spec);
    // Dropping the runtime closes the connection: the server's graceful
    // shutdown then completes.
    drop(caller);
    let measured = measured?;
    rpc::release(child)?;
    Ok(measured)
}

/// Server child of [`run`]: `a.id` is the address.
pub fn serve(a: &ServeArgs) -> anyhow::Result<()> {
    if let Some(cpu) = a.cpu {
        pin_current_thread(cpu).with_context(|| format!("pinning server to CPU {cpu}"))?;
    }
    let routes = Routes(Answer {
        size: a.size,
        touch: a.touch,
    });
    let server = Server::builder()
        .tcp_nodelay(true)
        .initial_stream_window_size(WINDOW)
        .initial_connection_window_size(WINDOW);
    let (kind, at) = a.id.split_once(' ').context("address <kind> <where>")?;
    let rt = runtime()?;
    // Stop when the parent says so (`release`, after the client has its END answer and has
    // closed the connection). Stopping on the END call itself raced that answer: its 1 MiB
    // response was sometimes cut off ("broken pipe") by the shutdown.
    let release = rt.spawn_blocking(rpc::await_release);
    let (released_tx, mut released) = tokio::sync::oneshot::channel();
    let shutdown = async move {
        let r = release
            .await
            .unwrap_or_else(|e| Err(anyhow!("waiting for the parent: {e}")));
        let _ = released_tx.send(r);
    };
    rt.block_on(async {
        match kind {
            "tcp" => {
                let addr = at.parse().context("server address")?;
                let incoming = tonic::transport::server::TcpIncoming::bind(addr)
                    .map_err(|e| anyhow!("binding {at}: {e}"))?
                    .with_nodelay(Some(true));
                signal_ready()?;
                server
                    .serve_with_incoming_shutdown(routes, incoming, shutdown)
                    .await?;
            }
            _ => {
                let listener =
                    tokio::net::UnixListener::bind(at).with_context(|| format!("binding {at}"))?;
                let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
                signal_ready()?;
                server
                    .serve_with_incoming_shutdown(routes, incoming, shutdown)
                    .await?;
            }
        }
        anyhow::Ok(())
    })?;
    released
        .try_recv()
        .unwrap_or_else(|_| Err(anyhow!("the server stopped before its parent released it")))
}

/// gRPC (tonic unary calls) as an [`Rpc`](horus_bench_core::rpc::Rpc) peer, over TCP loopback or a
/// Unix socket.
#[derive(Debug, Clone, Copy)]
pub struct Grpc {
    /// How the HTTP/2 connection is carried.
    pub transport: Transport,
}

impl horus_bench_core::peer::Peer for Grpc {
    fn name(&self) -> &'static str {
        match self.transport {
            Transport::Tcp => System::GrpcTcp.name(),
            Transport::Uds => System::GrpcUds.name(),
        }
    }

    fn settings(&self) -> String {
        SETTINGS.to_owned()
    }
}

impl rpc::Rpc for Grpc {
    fn run(&self, spec: &Spec, cpus: Option<[usize; 2]>) -> anyhow::Result<Measured> {
        run(spec, self.transport, cpus)
    }

    fn serve(&self, args: &ServeArgs) -> anyhow::Result<()> {
        serve(args)
    }
}
