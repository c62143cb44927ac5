//! Parameter files (`horus param load`, `Parameters::load_yaml_str`) on arbitrary text.
//!
//! A registry with one parameter of every kind (ranges included) loads the text: the
//! values set or a typed `YamlError`, in bounded time and memory (alias bombs are refused
//! by `horus_params::yaml_bound`), and a failed load applies nothing.
#![no_main]

use horus_params::{ParamDecl, ParamValue, Parameters, Range};
use libfuzzer_sys::fuzz_target;

fn params() -> Parameters {
    let mut p = Parameters::new();
    p.declare(ParamDecl::new("enabled", true)).unwrap();
    p.declare(ParamDecl::new("rate", 50_i64).range(Range::I64 { min: 1, max: 1000 }))
        .unwrap();
    p.declare(ParamDecl::new("gain", 0.5).range(Range::F64 { min: 0.0, max: 1.0 }))
        .unwrap();
    p.declare(ParamDecl::new("frame", "base_link")).unwrap();
    p.declare(ParamDecl::new("flags", vec![true, false]))
        .unwrap();
    p.declare(ParamDecl::new("ids", vec![1_i64, 2]).range(Range::I64 { min: 0, max: 9 }))
        .unwrap();
    p.declare(ParamDecl::new("limits", vec![1.0, 2.0])).unwrap();
    p.declare(ParamDecl::new(
        "joints",
        vec!["l".to_string(), "r".to_string()],
    ))
    .unwrap();
    p
}

fn snapshot(p: &Parameters) -> Vec<ParamValue> {
    p.decls()
        .map(|d| p.get(d.name()).unwrap().clone())
        .collect()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut p = params();
    let before = snapshot(&p);
    match p.load_yaml_str(text) {
        Ok(set) => {
            // The last value given for each name is the one set.
            let last: std::collections::HashMap<String, ParamValue> = set.into_iter().collect();
            for (name, value) in last {
                assert_eq!(p.get(&name).unwrap(), &value);
            }
        }
        Err(e) => {
            let _ = e.to_string();
            assert_eq!(snapshot(&p), before, "a failed load applied something");
        }
    }
});
