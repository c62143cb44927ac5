//! The services and topics one action is built from.

use horus::{Service, Topic};

use crate::error::OpenError;
use crate::wire::{ActionRequest, ActionResponse, FeedbackMsg, Payload, StatusMsg};

/// Depth of the feedback and status topics.
const TOPIC_DEPTH: u32 = 64;

type Svc = Service<ActionRequest, ActionResponse>;

/// An action's three services and two topics.
pub(crate) struct Endpoints {
    pub(crate) send_goal: Svc,
    pub(crate) cancel: Svc,
    pub(crate) get_result: Svc,
    pub(crate) feedback: Topic<FeedbackMsg>,
    pub(crate) status: Topic<StatusMsg>,
}

impl Endpoints {
    pub(crate) fn open(name: &str, ns: Option<&str>) -> Result<Self, OpenError> {
        let svc = |suffix: &str| {
            let b = Service::builder(&format!("{name}/{suffix}"));
            match ns {
                Some(ns) => b.namespace(ns).open(),
                None => b.open(),
            }
        };
        let send_goal = svc("send_goal")?;
        let cancel = svc("cancel")?;
        let get_result = svc("get_result")?;
        let feedback = {
            let b = Topic::builder(&format!("{name}/feedback")).depth(TOPIC_DEPTH);
            match ns {
                Some(ns) => b.namespace(ns).open()?,
                None => b.open()?,
            }
        };
        let status = {
            let b = Topic::builder(&format!("{name}/status")).depth(TOPIC_DEPTH);
            match ns {
                Some(ns) => b.namespace(ns).open()?,
                None => b.open()?,
            }
        };
        Ok(Endpoints {
            send_goal,
            cancel,
            get_result,
            feedback,
            status,
        })
    }
}

/// Checks that the goal, feedback and result types fit a payload.
pub(crate) fn check_types<G: Payload, F: Payload, R: Payload>(
    specs: &(G::Spec, F::Spec, R::Spec),
) -> Result<(), OpenError> {
    G::check(&specs.0).map_err(OpenError::TooLarge)?;
    F::check(&specs.1).map_err(OpenError::TooLarge)?;
    R::check(&specs.2).map_err(OpenError::TooLarge)?;
    Ok(())
}
