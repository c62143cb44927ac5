//! ROS-typed action and service roles of `horus-py-peer` for
//! `python/tests/test_ros_actions_rust.py`: the generated `tf2_msgs/action/LookupTransform`
//! (`RosActionServer<A>` / `RosActionClient<A>`) and `std_srvs/srv/SetBool` (`RosSrv<S>`).
//!
//! ```text
//! horus-py-peer ros-action-serve NAME SECONDS   serve LookupTransform: print {"goal": target_frame} per goal;
//!                                               target "hold" runs until canceled, others succeed with
//!                                               header.frame_id = target, child_frame_id = source,
//!                                               error_string = "found " + fixed_frame
//! horus-py-peer ros-action-call NAME            send {target "map", source "base_link"}: print
//!                                               {"status": S, "frame": F, "child": C, "error": E};
//!                                               then {target "hold"}, cancel: {"cancel": S, "final": S}
//! horus-py-peer ros-srv-serve NAME COUNT        answer COUNT SetBool requests: success = data,
//!                                               message = "rust " + on/off
//! horus-py-peer ros-srv-call NAME               call SetBool(data = true): print {"success": B, "message": M}
//! ```

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use horus::ros::RosSrv;
use horus_actions::{GoalStatus, RosActionClient, RosActionServer};
use horus_ros_msgs::std_srvs::srv::{SetBool, SetBool_Request, SetBool_Response};
use horus_ros_msgs::tf2_msgs::action::{
    LookupTransform, LookupTransform_Goal, LookupTransform_Result,
};

use super::say;

const T: Duration = Duration::from_secs(10);

fn json(s: &str) -> String {
    format!("{s:?}")
}

fn status(s: GoalStatus) -> String {
    json(&format!("{s:?}").to_lowercase())
}

pub(crate) fn serve(name: &str, seconds: u64) -> Result<()> {
    let mut s = RosActionServer::<LookupTransform>::new(name)?;
    say("ready");
    let end = Instant::now() + Duration::from_secs(seconds);
    while Instant::now() < end {
        if let Some(g) = s.next_goal() {
            let goal = g.goal().clone();
            say(&format!("{{\"goal\": {}}}", json(&goal.target_frame)));
            let id = s.accept(g);
            s.execute(id)?;
            if goal.target_frame != "hold" {
                let mut r = LookupTransform_Result::default();
                r.transform.header.frame_id = goal.target_frame;
                r.transform.child_frame_id = goal.source_frame;
                r.error.error_string = format!("found {}", goal.fixed_frame);
                s.succeed(id, &r)?;
            }
        }
        for id in s.take_cancel_requests() {
            let mut r = LookupTransform_Result::default();
            r.error.error_string = "canceled".into();
            s.canceled(id, &r)?;
        }
        std::thread::sleep(Duration::from_micros(300));
    }
    Ok(())
}

pub(crate) fn call(name: &str) -> Result<()> {
    let mut c = RosActionClient::<LookupTransform>::open(name)?;
    say("ready");
    let goal = LookupTransform_Goal {
        target_frame: "map".into(),
        source_frame: "base_link".into(),
        fixed_frame: "odom".into(),
        ..Default::default()
    };
    let (s, r) = c.send_goal(&goal, T)?.result(T)?;
    say(&format!(
        "{{\"status\": {}, \"frame\": {}, \"child\": {}, \"error\": {}}}",
        status(s),
        json(&r.transform.header.frame_id),
        json(&r.transform.child_frame_id),
        json(&r.error.error_string)
    ));
    let hold = LookupTransform_Goal {
        target_frame: "hold".into(),
        ..Default::default()
    };
    let g = c.send_goal(&hold, T)?;
    let cancel = g.cancel(T)?;
    let (fin, r) = g.result(T)?;
    say(&format!(
        "{{\"cancel\": {}, \"final\": {}, \"error\": {}}}",
        status(cancel),
        status(fin),
        json(&r.error.error_string)
    ));
    Ok(())
}

pub(crate) fn srv_serve(name: &str, count: u64) -> Result<()> {
    let svc = RosSrv::<SetBool>::open(name)?;
    let mut server = svc.server()?;
    say("ready");
    let mut answered = 0;
    let end = Instant::now() + Duration::from_secs(60);
    while answered < count {
        if Instant::now() > end {
            bail!("only {answered} requests in 60 s");
        }
        let Some(req) = server.recv_timeout(Duration::from_millis(50)) else {
            continue;
        };
        let data = req.decode()?.data;
        let resp = SetBool_Response {
            success: data,
            message: format!("rust {}", if data { "on" } else { "off" }),
        };
        req.reply_ros(&resp)?;
        answered += 1;
    }
    Ok(())
}

pub(crate) fn srv_call(name: &str) -> Result<()> {
    let svc = RosSrv::<SetBool>::open(name)?;
    let mut client = svc.client()?;
    say("ready");
    let resp = client
        .call_ros(&SetBool_Request { data: true }, T)?
        .decode()?;
    say(&format!(
        "{{\"success\": {}, \"message\": {}}}",
        resp.success,
        json(&resp.message)
    ));
    Ok(())
}
