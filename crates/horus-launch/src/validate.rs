//! Checks across the whole system once every file is loaded: names are unique, every
//! `after:` names a process, and `after:` has no cycle (the processes of a cycle would
//! wait for each other for ever).

use std::collections::HashMap;

use crate::spec::{LoadError, Plan};

pub(crate) fn check(plan: &Plan) -> Result<(), LoadError> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (i, p) in plan.processes.iter().enumerate() {
        if let Some(&first) = index.get(p.name.as_str()) {
            return Err(LoadError::At {
                origin: p.name_origin.clone(),
                message: format!(
                    "duplicate process name `{}` (first defined at {})",
                    p.name, plan.processes[first].name_origin
                ),
            });
        }
        index.insert(&p.name, i);
    }
    for p in &plan.processes {
        for (dep, origin) in &p.after {
            if !index.contains_key(dep.as_str()) {
                return Err(LoadError::At {
                    origin: origin.clone(),
                    message: format!("`after: {dep}`: no process is named `{dep}`"),
                });
            }
        }
    }
    // Depth-first search; a node met again while on the current path closes a cycle.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    let n = plan.processes.len();
    let mut mark = vec![Mark::New; n];
    for start in 0..n {
        if mark[start] != Mark::New {
            continue;
        }
        // Explicit stack of (process, next dependency to visit).
        let mut stack = vec![(start, 0usize)];
        mark[start] = Mark::OnPath;
        while let Some(&mut (i, ref mut next)) = stack.last_mut() {
            let deps = &plan.processes[i].after;
            if *next == deps.len() {
                mark[i] = Mark::Done;
                stack.pop();
                continue;
            }
            let (dep, origin) = &deps[*next];
            *next += 1;
            let j = index[dep.as_str()];
            match mark[j] {
                Mark::Done => {}
                Mark::New => {
                    mark[j] = Mark::OnPath;
                    stack.push((j, 0));
                }
                Mark::OnPath => {
                    let from = stack.iter().position(|&(k, _)| k == j).unwrap_or(0);
                    let mut cycle: Vec<&str> = stack[from..]
                        .iter()
                        .map(|&(k, _)| plan.processes[k].name.as_str())
                        .collect();
                    cycle.push(&plan.processes[j].name);
                    return Err(LoadError::At {
                        origin: origin.clone(),
                        message: format!(
                            "cycle in `after:`: {} (these processes would wait for each other for ever)",
                            cycle.join(" → ")
                        ),
                    });
                }
            }
        }
    }
    Ok(())
}
