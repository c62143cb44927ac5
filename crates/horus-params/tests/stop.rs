//! `ParamClient::stop_when`: a call waiting while the flag is set ends, withdrawn.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use horus::CallError;
use horus_params::{ParamClient, ParamClientError, ParamServer, Parameters};

const LONG: Duration = Duration::from_secs(30);

#[test]
fn a_call_waiting_when_the_stop_flag_is_set_is_withdrawn_and_never_served() {
    let ns = format!("test-params-stop-{}", std::process::id());
    let mut server = ParamServer::new_in("arm", &ns).unwrap();
    let mut client = ParamClient::open_in("arm", &ns).unwrap();
    client.set_timeout(LONG);
    let stop = Arc::new(AtomicBool::new(false));
    client.stop_when(Arc::clone(&stop));
    let caller = std::thread::spawn(move || client.get("speed").map(|_| ()));
    let deadline = Instant::now() + LONG;
    while !server.has_pending() {
        assert!(Instant::now() < deadline, "the request never arrived");
        std::thread::yield_now();
    }
    stop.store(true, Ordering::Release);
    // Not seen, the call would end after LONG with `Timeout`.
    assert!(matches!(
        caller.join().unwrap(),
        Err(ParamClientError::Call(CallError::Stopped))
    ));
    assert_eq!(
        server.serve_pending(&mut Parameters::new()),
        0,
        "a withdrawn call was served"
    );
}
