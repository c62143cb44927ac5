//! A local copy of a node's declarations and values, so that files are checked (and dumped)
//! with horus-params' own YAML code, exactly as the node would load them.

use horus_params::{ParamClient, ParamClientError, ParamDecl, ParamInfo, ParamValue, Parameters};

/// The node's declarations, current values, and a registry built from both.
pub(super) struct Mirror {
    pub(super) infos: Vec<ParamInfo>,
    pub(super) values: Vec<ParamValue>,
    pub(super) params: Parameters,
}

/// Reads every declaration and current value of the node behind `client`.
pub(super) fn read(client: &mut ParamClient) -> Result<Mirror, ParamClientError> {
    let infos = client.list()?;
    let values = infos
        .iter()
        .map(|i| client.get(&i.name))
        .collect::<Result<Vec<_>, _>>()?;
    let mut params = Parameters::new();
    for (info, value) in infos.iter().zip(&values) {
        let mut decl =
            ParamDecl::new(&info.name, info.default.clone()).description(&info.description);
        if let Some(r) = info.range {
            decl = decl.range(r);
        }
        // The node accepted these declarations and values; a failure means its answers were
        // inconsistent.
        params
            .declare(decl)
            .and_then(|()| params.set(&info.name, value.clone()))
            .map_err(|e| ParamClientError::Malformed(format!("the node's declarations: {e}")))?;
    }
    Ok(Mirror {
        infos,
        values,
        params,
    })
}
