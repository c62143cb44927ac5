//! The result of resolution: every structure, service and action, with their
//! type descriptions and RIHS01 hashes.

use std::collections::{BTreeMap, BTreeSet};

use crate::description::{
    individual_description, nested_field, IndividualTypeDescription, TypeDescription,
};
use crate::hash::{type_hash, TypeHash};
use crate::resolved::{ActionDef, ServiceDef, StructDef};
use crate::type_name::TypeName;

/// Resolved interfaces (from [`crate::InterfaceSet::resolve`]).
#[derive(Debug, Clone)]
pub struct Resolved {
    structs: BTreeMap<TypeName, StructDef>,
    services: BTreeMap<TypeName, ServiceDef>,
    actions: BTreeMap<TypeName, ActionDef>,
    /// Individual descriptions of every type: structures, services (also an action's
    /// `_SendGoal` / `_GetResult`) and actions, by full name.
    individual: BTreeMap<String, IndividualTypeDescription>,
    /// The `.msg` text of each structure that has one (a message's file, a section of a
    /// `.srv` or `.action` file), for [`Resolved::ros2msg_definition`].
    pub(crate) texts: BTreeMap<TypeName, String>,
}

fn service_description(s: &ServiceDef) -> IndividualTypeDescription {
    IndividualTypeDescription {
        type_name: s.name.to_string(),
        fields: vec![
            nested_field("request_message", s.request.to_string()),
            nested_field("response_message", s.response.to_string()),
            nested_field("event_message", s.event.to_string()),
        ],
    }
}

fn action_description(a: &ActionDef) -> IndividualTypeDescription {
    IndividualTypeDescription {
        type_name: a.name.to_string(),
        fields: vec![
            nested_field("goal", a.goal.to_string()),
            nested_field("result", a.result.to_string()),
            nested_field("feedback", a.feedback.to_string()),
            nested_field("send_goal_service", a.send_goal.name.to_string()),
            nested_field("get_result_service", a.get_result.name.to_string()),
            nested_field("feedback_message", a.feedback_message.to_string()),
        ],
    }
}

impl Resolved {
    pub(crate) fn new(
        structs: BTreeMap<TypeName, StructDef>,
        services: BTreeMap<TypeName, ServiceDef>,
        actions: BTreeMap<TypeName, ActionDef>,
    ) -> Self {
        let mut individual = BTreeMap::new();
        let mut add = |d: IndividualTypeDescription| {
            individual.insert(d.type_name.clone(), d);
        };
        structs
            .values()
            .map(individual_description)
            .for_each(&mut add);
        services
            .values()
            .map(service_description)
            .for_each(&mut add);
        for a in actions.values() {
            add(action_description(a));
            add(service_description(&a.send_goal));
            add(service_description(&a.get_result));
        }
        Self {
            structs,
            services,
            actions,
            individual,
            texts: BTreeMap::new(),
        }
    }

    /// Every structure: messages and the types implied by services and actions.
    pub fn structs(&self) -> impl Iterator<Item = &StructDef> {
        self.structs.values()
    }

    /// The structure of that name.
    pub fn get_struct(&self, name: &TypeName) -> Option<&StructDef> {
        self.structs.get(name)
    }

    /// Every service defined by a `.srv` file (an action's services are in [`ActionDef`]).
    pub fn services(&self) -> impl Iterator<Item = &ServiceDef> {
        self.services.values()
    }

    /// Every action.
    pub fn actions(&self) -> impl Iterator<Item = &ActionDef> {
        self.actions.values()
    }

    /// The names of every type that has a description and a hash, sorted.
    pub fn type_names(&self) -> impl Iterator<Item = &str> {
        self.individual.keys().map(String::as_str)
    }

    /// The description of one type alone (`pkg/msg/Name`, `pkg/srv/Name`,
    /// `pkg/srv/Name_Event`, `pkg/action/Name_SendGoal`, …).
    pub fn individual_description(&self, type_name: &str) -> Option<&IndividualTypeDescription> {
        self.individual.get(type_name)
    }

    /// The full description of a type: itself and every type it refers to, sorted by name.
    pub fn type_description(&self, type_name: &str) -> Option<TypeDescription> {
        let top = self.individual.get(type_name)?;
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        let mut queue: Vec<&str> = top
            .fields
            .iter()
            .map(|f| f.field_type.nested_type_name.as_str())
            .filter(|n| !n.is_empty())
            .collect();
        while let Some(name) = queue.pop() {
            if !seen.insert(name) {
                continue;
            }
            let d = self.individual.get(name).expect("references were resolved");
            queue.extend(
                d.fields
                    .iter()
                    .map(|f| f.field_type.nested_type_name.as_str())
                    .filter(|n| !n.is_empty()),
            );
        }
        Some(TypeDescription {
            type_description: top.clone(),
            referenced_type_descriptions: seen
                .into_iter()
                .map(|n| self.individual[n].clone())
                .collect(),
        })
    }

    /// The RIHS01 hash of a type.
    pub fn type_hash(&self, type_name: &str) -> Option<TypeHash> {
        self.type_description(type_name).map(|d| type_hash(&d))
    }
}
