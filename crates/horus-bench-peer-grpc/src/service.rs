//! The gRPC service of the benchmark, written by hand instead of generated (no
//! `protoc` on the build machine): one unary method `/horus.bench.Rpc/Call`
//! taking and returning a protobuf message with one `bytes` field, encoded by
//! prost's derive, served by tonic's HTTP/2 server.
//!
//! What `tonic-build` would generate is the same two layers: a
//! [`tonic::server::UnaryService`] for the method ([`Answer`]) and a tower
//! `Service` over HTTP requests that routes the method's path to
//! [`tonic::server::Grpc::unary`] ([`Routes`]).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tonic::body::Body;
use tonic::{Request, Response, Status};
use tonic_prost::ProstCodec;

use horus_bench_core::payload::{self, Touch};
#[cfg(doc)]
use horus_bench_core::rpc::END;

/// The method's path.
pub const PATH: &str = "/horus.bench.Rpc/Call";
/// Largest message either side encodes or decodes (tonic's default decode limit
/// is 4 MiB).
pub const MAX_MESSAGE: usize = 8 << 20;
/// HTTP/2 stream and connection windows: a 1 MiB call never waits for a window
/// update.
pub const WINDOW: u32 = 8 << 20;

/// The request and the response: the payload as one protobuf `bytes` field.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Payload {
    /// The payload.
    #[prost(bytes = "vec", tag = "1")]
    pub data: Vec<u8>,
}

/// Answers a call: reads the request, writes the response of the same size and
/// sequence number (the [`END`] call too: the server stops when its parent says so,
/// not on that call, whose response may still be on its way).
#[derive(Clone, Debug)]
pub struct Answer {
    /// Payload bytes.
    pub size: usize,
    /// How much of the payload is read and written.
    pub touch: Touch,
}

impl Answer {
    fn answer(&self, request: &Payload) -> Result<Payload, Status> {
        if request.data.len() != self.size {
            return Err(Status::invalid_argument(format!(
                "request of {} B",
                request.data.len()
            )));
        }
        let seq = payload::read(&request.data, self.touch)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let mut data = vec![0u8; self.size];
        payload::write(&mut data, seq, self.touch);
        Ok(Payload { data })
    }
}

impl tower::Service<Request<Payload>> for Answer {
    type Response = Response<Payload>;
    type Error = Status;
    type Future = std::future::Ready<Result<Response<Payload>, Status>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Status>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Payload>) -> Self::Future {
        std::future::ready(self.answer(request.get_ref()).map(Response::new))
    }
}

/// The HTTP/2 service: the one method, `UNIMPLEMENTED` for any other path.
#[derive(Clone, Debug)]
pub struct Routes(pub Answer);

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl tower::Service<http::Request<Body>> for Routes {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<http::Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let answer = self.0.clone();
        Box::pin(async move {
            if request.uri().path() != PATH {
                return Ok(Status::unimplemented(request.uri().path().to_owned()).into_http());
            }
            let mut grpc = tonic::server::Grpc::new(ProstCodec::<Payload, Payload>::default())
                .max_decoding_message_size(MAX_MESSAGE)
                .max_encoding_message_size(MAX_MESSAGE);
            Ok(grpc.unary(answer, request).await)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_with_the_same_sequence_number_and_size() {
        let a = Answer {
            size: 64,
            touch: Touch::Full,
        };
        let mut data = vec![0u8; 64];
        payload::write(&mut data, 7, Touch::Full);
        let r = a.answer(&Payload { data }).unwrap();
        payload::check(&r.data, 7, Touch::Full).unwrap();
        assert!(a.answer(&Payload { data: vec![0; 8] }).is_err());
    }

    #[test]
    fn payload_round_trips_through_protobuf() {
        use prost::Message;
        let p = Payload {
            data: vec![1, 2, 3],
        };
        let bytes = p.encode_to_vec();
        assert_eq!(Payload::decode(&bytes[..]).unwrap(), p);
    }
}
