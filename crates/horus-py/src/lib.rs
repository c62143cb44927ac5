//! `horus._horus`: the native module of the Python package `horus`.
//!
//! One declarative module lists the whole Python surface; the pure-Python
//! package (`python/horus`) wraps it. Messages cross the boundary as raw
//! bytes or zero-copy buffers, and the package builds its message classes
//! from the schema tables exported here ([`registry`]), so the Rust
//! `message!` definitions are the only description of every message.
//!
//! The crate also builds `horus-py-peer`, the Rust endpoint of the
//! cross-language tests.

mod action_errors;
mod buffer;
mod dyn_service;
mod dynamic;
mod endpoint;
mod errors;
mod param_errors;
mod param_value;
mod py_action;
mod py_action_core;
mod py_inspect;
mod py_log;
mod py_params;
mod py_ros_action;
mod py_ros_service;
mod py_sched;
mod py_service;
mod py_tensor_buffer;
mod py_tensor_pool;
mod py_tensor_view;
mod py_tf_broadcaster;
mod py_tf_buffer;
mod py_tf_errors;
mod py_topic;
mod registry;
mod ros;
mod rust_nodes;
mod seconds;
mod service_in_flight;
mod tensor_ref_bytes;

/// The native module. Private: import `horus` instead.
#[pyo3::pymodule]
mod _horus {
    use pyo3::prelude::*;

    #[pymodule_export]
    use crate::py_action::{ActionClient, ActionServer, GoalHandle, NewGoal};
    #[pymodule_export]
    use crate::py_inspect::{list_topics, topic_description};
    #[pymodule_export]
    use crate::py_log::{log_record, log_segment_name, log_shutdown};
    #[pymodule_export]
    use crate::py_params::{ParamClient, ParamServer, Parameters};
    #[pymodule_export]
    use crate::py_ros_action::{RosActionClient, RosActionServer, RosGoalHandle, RosNewGoal};
    #[pymodule_export]
    use crate::py_ros_service::{RosServiceClient, RosServiceRequest, RosServiceServer};
    #[pymodule_export]
    use crate::py_sched::{Scheduler, TickInfo};
    #[pymodule_export]
    use crate::py_service::{Client, PendingCall, Request, Server, Service};
    #[pymodule_export]
    use crate::py_tensor_buffer::TensorBuffer;
    #[pymodule_export]
    use crate::py_tensor_pool::{attach_view, release_attached, RawTensorPool};
    #[pymodule_export]
    use crate::py_tensor_view::TensorView;
    #[pymodule_export]
    use crate::py_tf_broadcaster::TfBroadcaster;
    #[pymodule_export]
    use crate::py_tf_buffer::TfBuffer;
    #[pymodule_export]
    use crate::py_topic::{
        Loan, Publisher, PublisherStats, Sample, Subscriber, SubscriberStats, Topic, TopicStats,
    };
    #[pymodule_export]
    use crate::registry::{FieldInfo, SchemaInfo};
    #[pymodule_export]
    use crate::ros::{
        LoanedArray, RosLoan, RosPublisher, RosSample, RosSubscriber, RosTopic, RosTypes,
    };
    #[pymodule_export]
    use crate::rust_nodes::RustNode;

    /// Imports `horus._errors`, where every exception this module raises is
    /// declared: a package without it fails here, at import, never later
    /// when an error is raised.
    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.py().import("horus._errors")?;
        Ok(())
    }

    /// Schema and field table of every message type, nested types first.
    #[pyfunction]
    fn message_schemas() -> Vec<crate::registry::SchemaInfo> {
        crate::registry::all_schemas()
    }

    /// Named constants of the message types: (type name, constant, value).
    #[pyfunction]
    fn message_constants() -> Vec<(&'static str, &'static str, u64)> {
        crate::registry::constants()
    }

    /// Known image encodings: (code, name, bytes per pixel).
    #[pyfunction]
    fn image_encodings() -> Vec<(u32, &'static str, usize)> {
        crate::registry::image_encodings()
    }

    /// Schema names of the message types services can carry (fixed-size
    /// messages: any two of them make a request/response pair).
    #[pyfunction]
    fn service_schemas() -> Vec<&'static str> {
        crate::dyn_service::service_schemas()
    }

    /// The namespace topics and pools use by default (HORUS_NAMESPACE, else
    /// per user), read now.
    #[pyfunction]
    fn default_namespace() -> String {
        horus_shm::name::namespace()
    }

    /// Version of the native module.
    #[allow(non_upper_case_globals)]
    #[pymodule_export]
    const __version__: &str = env!("CARGO_PKG_VERSION");
}
