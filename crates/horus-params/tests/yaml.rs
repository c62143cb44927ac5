//! YAML load/dump: round trip, and every kind of bad file is a typed error
//! with line and column, applying nothing.

use horus_params::{ParamDecl, ParamValue, Parameters, Range, YamlError};

fn params() -> Parameters {
    let mut p = Parameters::new();
    p.declare(ParamDecl::new("enabled", true).description("drive enabled"))
        .unwrap();
    p.declare(
        ParamDecl::new("rate", 50_i64)
            .description("loop rate, Hz")
            .range(Range::I64 { min: 1, max: 1000 }),
    )
    .unwrap();
    p.declare(
        ParamDecl::new("gain", 0.5)
            .description("controller gain")
            .range(Range::F64 { min: 0.0, max: 1.0 }),
    )
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

#[test]
fn dump_then_load_round_trips_every_kind() {
    let mut a = params();
    a.set("enabled", false.into()).unwrap();
    a.set("rate", 200.into()).unwrap();
    a.set("gain", 1.0.into()).unwrap();
    a.set("frame", "odom: \"x\"".into()).unwrap();
    a.set("flags", vec![false].into()).unwrap();
    a.set("ids", Vec::<i64>::new().into()).unwrap();
    a.set("limits", vec![-0.5, 3.0].into()).unwrap();
    a.set("joints", vec!["true".to_string(), "12".into()].into())
        .unwrap();
    let text = a.dump_yaml();
    let mut b = params();
    let loaded = b.load_yaml_str(&text).unwrap();
    assert_eq!(loaded.len(), 8);
    assert_eq!(snapshot(&a), snapshot(&b), "{text}");
    assert_eq!(b.take_changed().len(), 8);
}

#[test]
fn file_round_trip_and_partial_file() {
    let dir = std::env::temp_dir().join(format!("horus-params-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("p.yaml");
    let mut a = params();
    a.set("rate", 7.into()).unwrap();
    a.dump_yaml_file(&path).unwrap();
    let mut b = params();
    b.load_yaml_file(&path).unwrap();
    assert_eq!(b.get("rate").unwrap(), &ParamValue::I64(7));
    std::fs::remove_dir_all(&dir).unwrap();

    // Keys absent keep their values; an integer is accepted for an f64.
    let mut c = params();
    c.load_yaml_str("gain: 1\n").unwrap();
    assert_eq!(c.get("gain").unwrap(), &ParamValue::F64(1.0));
    assert_eq!(c.take_changed(), vec!["gain"]);
    assert!(c.load_yaml_str("").unwrap().is_empty());
}

fn load_err(text: &str) -> (usize, usize, String) {
    let mut p = params();
    let before = snapshot(&p);
    let err = p.load_yaml_str(text).unwrap_err();
    assert_eq!(snapshot(&p), before, "a bad file changed values");
    assert!(p.take_changed().is_empty());
    match err {
        YamlError::At {
            line,
            column,
            message,
        } => (line, column, message),
        other => panic!("no position: {other}"),
    }
}

#[test]
fn syntax_error_has_line_and_column() {
    let (line, column, msg) = load_err("rate: 5\nframe: \"base\n");
    assert_eq!(line, 3, "{msg}");
    assert!(column >= 1, "{msg}");
    let (line, column, msg) = load_err("rate: 5\ngain: 0.5\n- 3\n");
    assert_eq!((line, column), (3, 1), "{msg}");
}

#[test]
fn unknown_parameter_points_at_its_key() {
    let (line, column, msg) = load_err("rate: 5\n  \nspeed: 3\n");
    assert_eq!((line, column), (3, 8), "{msg}");
    assert_eq!(msg, "speed: unknown parameter `speed`");
}

#[test]
fn wrong_type_points_at_the_value() {
    let (line, column, msg) = load_err("rate: 5\ngain:   fast\n");
    assert_eq!((line, column), (2, 9), "{msg}");
    assert_eq!(msg, "gain: parameter `gain` is f64, got a string");
    let (line, column, msg) = load_err("enabled: [true]\n");
    assert_eq!((line, column), (1, 10), "{msg}");
    let (line, _, msg) = load_err("rate: 1\nrate: 2\n");
    assert_eq!(line, 2, "{msg}");
    assert_eq!(msg, "rate: parameter `rate` given twice");
}

#[test]
fn out_of_range_points_at_the_value_or_element() {
    let (line, column, msg) = load_err("enabled: false\nrate: 5000\n");
    assert_eq!((line, column), (2, 7), "{msg}");
    assert_eq!(msg, "rate: parameter `rate`: 5000 is outside [1, 1000]");
    let (line, column, msg) = load_err("ids:\n  - 3\n  - 10\n");
    assert_eq!((line, column), (3, 5), "{msg}");
    let (line, column, msg) = load_err("ids: [1, x]\n");
    assert_eq!((line, column), (1, 10), "{msg}");
    assert_eq!(msg, "ids[1]: parameter `ids` is i64, got a string");
}

#[test]
fn a_document_that_is_not_a_mapping_is_an_error() {
    let (line, column, _) = load_err("- rate\n- 5\n");
    assert_eq!((line, column), (1, 1));
}

#[test]
fn a_missing_file_is_an_io_error() {
    let mut p = params();
    let err = p
        .load_yaml_file("/nonexistent/horus-params.yaml")
        .unwrap_err();
    assert!(matches!(err, YamlError::Io { .. }), "{err}");
}

#[test]
fn param_yaml_alias_bomb_is_refused_and_applies_nothing() {
    // `ids` holds 10 000 aliases of a 10 000-element list: 10^8 nodes from 80 KB, which
    // serde_yaml's own alias limit lets through.
    let mut p = params();
    let before = snapshot(&p);
    let big = vec!["1"; 10_000].join(", ");
    let refs = vec!["*big"; 10_000].join(", ");
    let text = format!("joints: &big [{big}]\nids: [{refs}]\n");
    let e = p.load_yaml_str(&text).unwrap_err();
    assert!(matches!(e, YamlError::Bound(_)), "{e}");
    assert!(e.to_string().contains("nodes"), "{e}");
    assert_eq!(snapshot(&p), before);
}

#[test]
fn param_file_larger_than_the_limit_is_not_read() {
    let path = std::env::temp_dir().join(format!("horus-params-big-{}.yaml", std::process::id()));
    let mut text = "rate: 10\n".to_string();
    text.push_str(
        &"# padding\n".repeat(horus_params::yaml_bound::MAX_YAML_BYTES as usize / 10 + 1),
    );
    std::fs::write(&path, text).unwrap();
    let mut p = params();
    let e = p.load_yaml_file(&path).unwrap_err();
    assert!(matches!(e, YamlError::Bound(_)), "{e}");
    assert!(e.to_string().contains("larger than"), "{e}");
    assert_eq!(p.get("rate").unwrap(), &ParamValue::I64(50));
    std::fs::remove_file(&path).unwrap();
}
