//! Helpers shared by the integration tests: reading ROS 2's `.json` type descriptions.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use horus_idl::TypeDescription;

/// One ROS 2 `.json` file: the full description and the hashes it lists.
pub(crate) struct OracleJson {
    pub(crate) path: PathBuf,
    pub(crate) description: TypeDescription,
    pub(crate) hashes: Vec<(String, String)>,
}

/// Every `.json` under `<root>/<package>/{msg,srv,action}/`, sorted by path.
pub(crate) fn oracle_jsons(root: &Path) -> Vec<OracleJson> {
    let mut paths = Vec::new();
    for package in std::fs::read_dir(root).unwrap() {
        let package = package.unwrap().path();
        for kind in ["msg", "srv", "action"] {
            let Ok(entries) = std::fs::read_dir(package.join(kind)) else {
                continue;
            };
            for e in entries {
                let p = e.unwrap().path();
                if p.extension().and_then(|e| e.to_str()) == Some("json") {
                    paths.push(p);
                }
            }
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            let description: TypeDescription =
                serde_json::from_value(v["type_description_msg"].clone()).unwrap();
            let hashes = v["type_hashes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| {
                    (
                        h["type_name"].as_str().unwrap().to_string(),
                        h["hash_string"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            OracleJson {
                path,
                description,
                hashes,
            }
        })
        .collect()
}
