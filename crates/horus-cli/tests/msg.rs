//! `horus msg list/show/hash`, run as the built binary: the standard types compiled in,
//! users' packages from `--package-dir`, and typed failures with their exit codes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use horus_idl::{standard_interfaces_dir, InterfaceSet};

/// Runs `horus` with `args`; returns exit code, stdout, stderr.
fn horus(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_horus"))
        .args(args)
        // Nothing of the source tree is needed: run from elsewhere.
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn ok(args: &[&str]) -> String {
    let (code, stdout, stderr) = horus(args);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    stdout
}

/// A package directory of the test's own, removed when dropped.
struct Package(PathBuf);

impl Package {
    fn new(tag: &str, files: &[(&str, &str)]) -> Self {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("horus-msg-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        Self(dir)
    }

    fn arg(&self, name: &str) -> String {
        format!("{name}={}", self.0.display())
    }
}

impl Drop for Package {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn vendored(path: &str) -> String {
    std::fs::read_to_string(standard_interfaces_dir().join(path)).unwrap()
}

#[test]
fn list_shows_every_standard_interface() {
    let out = ok(&["msg", "list"]);
    let listed: Vec<&str> = out.lines().collect();
    let set = InterfaceSet::standard().unwrap();
    let expected: Vec<String> = set.interfaces().map(|(n, _)| n.to_string()).collect();
    assert_eq!(listed, expected);
    assert!(listed.contains(&"sensor_msgs/msg/Imu"));
    assert!(listed.contains(&"std_srvs/srv/SetBool"));
    assert!(listed.contains(&"tf2_msgs/action/LookupTransform"));

    let one = ok(&["msg", "list", "std_srvs"]);
    assert_eq!(
        one,
        "std_srvs/srv/Empty\nstd_srvs/srv/SetBool\nstd_srvs/srv/Trigger\n"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(&["--json", "msg", "list"])).unwrap();
    assert_eq!(json["types"].as_array().unwrap().len(), expected.len());
}

#[test]
fn list_of_an_unknown_package_fails() {
    let (code, _, stderr) = horus(&["msg", "list", "no_such_msgs"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("no package 'no_such_msgs'"), "{stderr}");
}

#[test]
fn show_prints_the_file_as_written() {
    for (arg, path) in [
        ("std_msgs/msg/Header", "std_msgs/msg/Header.msg"),
        ("std_msgs/Header", "std_msgs/msg/Header.msg"),
        ("std_srvs/srv/SetBool", "std_srvs/srv/SetBool.srv"),
        ("std_srvs/SetBool", "std_srvs/srv/SetBool.srv"),
        (
            "tf2_msgs/action/LookupTransform",
            "tf2_msgs/action/LookupTransform.action",
        ),
    ] {
        assert_eq!(ok(&["msg", "show", arg]), vendored(path), "{arg}");
    }
    // A structure of a service: its section of the file.
    assert_eq!(
        ok(&["msg", "show", "std_srvs/srv/SetBool_Request"]),
        "bool data # e.g. for hardware enabling / disabling\n"
    );
}

#[test]
fn show_all_expands_nested_types_as_ros2_interface_show_does() {
    let out = ok(&["msg", "show", "geometry_msgs/msg/PoseStamped", "--all"]);
    let expected = "# A Pose with reference coordinate frame and timestamp\n\
                    \n\
                    std_msgs/Header header\n\
                    \tbuiltin_interfaces/Time stamp\n\
                    \t\tint32 sec\n\
                    \t\tuint32 nanosec\n\
                    \tstring frame_id\n\
                    Pose pose\n\
                    \tPoint position\n\
                    \t\tfloat64 x\n\
                    \t\tfloat64 y\n\
                    \t\tfloat64 z\n\
                    \tQuaternion orientation\n\
                    \t\tfloat64 x 0\n\
                    \t\tfloat64 y 0\n\
                    \t\tfloat64 z 0\n\
                    \t\tfloat64 w 1\n";
    assert_eq!(out, expected);
    // A service: both sections, nested types under each.
    let out = ok(&["msg", "show", "std_srvs/srv/Trigger", "--all"]);
    assert!(out.starts_with("---\nbool success"), "{out}");
}

#[test]
fn show_hash_and_hash_give_the_rihs01_of_ros2() {
    // ROS 2's own hash of std_msgs/msg/Header (from its generated .json).
    let header = "RIHS01_f49fb3ae2cf070f793645ff749683ac6b06203e41c891e17701b1cb597ce6a01";
    assert_eq!(
        ok(&["msg", "hash", "std_msgs/msg/Header"]),
        format!("{header}\n")
    );
    assert_eq!(
        ok(&["msg", "show", "std_msgs/Header", "--hash"]),
        format!("{header}\n")
    );
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["--json", "msg", "hash", "std_msgs/Header"])).unwrap();
    assert_eq!(json["type"], "std_msgs/msg/Header");
    assert_eq!(json["hash"], header);
    // Services and actions have hashes too.
    let resolved = InterfaceSet::standard().unwrap().resolve().unwrap();
    for t in ["std_srvs/srv/SetBool", "tf2_msgs/action/LookupTransform"] {
        let expected = resolved.type_hash(t).unwrap().to_string();
        assert_eq!(ok(&["msg", "hash", t]), format!("{expected}\n"));
    }
}

#[test]
fn show_definition_prints_the_complete_ros2msg_definition() {
    let resolved = InterfaceSet::standard().unwrap().resolve().unwrap();
    let expected = resolved.ros2msg_definition("sensor_msgs/msg/Imu").unwrap();
    let out = ok(&["msg", "show", "sensor_msgs/Imu", "--definition"]);
    assert_eq!(out, format!("{expected}\n"));
    // A service is not a message: its structures are.
    let (code, _, stderr) = horus(&["msg", "show", "std_srvs/srv/SetBool", "--definition"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("not a message type"), "{stderr}");
}

#[test]
fn unknown_type_fails_with_a_hint() {
    for args in [
        &["msg", "show", "nope_msgs/msg/Nope"][..],
        &["msg", "hash", "std_msgs/Nope"],
        &["msg", "show", "not a type"],
        &["msg", "show", "std_msgs/srv/Header"],
    ] {
        let (code, _, stderr) = horus(args);
        assert_eq!(code, 1, "{args:?}");
        assert!(stderr.contains("unknown type"), "{stderr}");
    }
    let (code, stdout, _) = horus(&["--json", "msg", "show", "nope/Nope"]);
    assert_eq!(code, 1);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(json["error"].as_str().unwrap().contains("unknown type"));
}

#[test]
fn user_package_from_package_dir_is_listed_shown_and_hashed() {
    let text = "# A reading.\nstd_msgs/Header header\nPoint2 where # [m]\nfloat32 value\n";
    let pkg = Package::new(
        "user",
        &[
            ("msg/Reading.msg", text),
            ("msg/Point2.msg", "float64 x\nfloat64 y\n"),
            ("srv/Ask.srv", "Reading r\n---\nbool ok\n"),
        ],
    );
    let arg = pkg.arg("my_msgs");
    let out = ok(&["msg", "list", "my_msgs", "--package-dir", &arg]);
    assert_eq!(
        out,
        "my_msgs/msg/Point2\nmy_msgs/msg/Reading\nmy_msgs/srv/Ask\n"
    );
    assert_eq!(
        ok(&["msg", "show", "my_msgs/Reading", "--package-dir", &arg]),
        text
    );
    let all = ok(&[
        "msg",
        "show",
        "my_msgs/Reading",
        "--all",
        "--package-dir",
        &arg,
    ]);
    assert!(
        all.contains("Point2 where # [m]\n\tfloat64 x\n\tfloat64 y\n"),
        "{all}"
    );
    let mut set = InterfaceSet::standard().unwrap();
    set.add_package_dir("my_msgs", &pkg.0).unwrap();
    let resolved = set.resolve().unwrap();
    let hash = resolved.type_hash("my_msgs/msg/Reading").unwrap();
    assert_eq!(
        ok(&["msg", "hash", "my_msgs/msg/Reading", "--package-dir", &arg]),
        format!("{hash}\n")
    );
}

#[test]
fn broken_user_package_fails_naming_file_and_line() {
    let pkg = Package::new("broken", &[("msg/Bad.msg", "int32 x\nint33 y\n")]);
    let arg = pkg.arg("bad_msgs");
    let (code, _, stderr) = horus(&["msg", "list", "--package-dir", &arg]);
    assert_eq!(code, 1);
    assert!(stderr.contains("Bad.msg:2:1"), "{stderr}");
    let missing = Package::new("missing", &[("msg/Uses.msg", "other_msgs/Nope n\n")]);
    let arg = missing.arg("uses_msgs");
    let (code, _, stderr) = horus(&["msg", "list", "--package-dir", &arg]);
    assert_eq!(code, 1);
    assert!(stderr.contains("other_msgs/msg/Nope"), "{stderr}");
    // The same package name as a standard package.
    let dup = Package::new("dup", &[("msg/Header.msg", "int8 x\n")]);
    let (code, _, stderr) = horus(&["msg", "list", "--package-dir", &dup.arg("std_msgs")]);
    assert_eq!(code, 1);
    assert!(stderr.contains("already defined"), "{stderr}");
}

#[test]
fn malformed_package_dir_argument_is_a_usage_error() {
    for bad in ["no_equals", "Bad-Name=/tmp", "ok_name="] {
        let (code, _, stderr) = horus(&["msg", "list", "--package-dir", bad]);
        assert_eq!(code, 2, "{bad}: {stderr}");
    }
    let (code, _, stderr) = horus(&[
        "msg",
        "list",
        "--package-dir",
        "x_msgs=/nonexistent/horus-msg-test",
    ]);
    assert_eq!(code, 1);
    assert!(stderr.contains("/nonexistent/horus-msg-test"), "{stderr}");
}

#[test]
fn show_all_of_an_exponentially_nested_package_is_cut() {
    // T0 uses T1 twice, T1 uses T2 twice, …: 2^24 lines expanded in full.
    let mut files: Vec<(String, String)> = Vec::new();
    for i in 0..24 {
        files.push((format!("msg/T{i}.msg"), format!("T{0} a\nT{0} b\n", i + 1)));
    }
    files.push(("msg/T24.msg".into(), "int8 x\n".into()));
    let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (&**a, &**b)).collect();
    let pkg = Package::new("deep", &refs);
    let out = ok(&[
        "msg",
        "show",
        "deep_msgs/T0",
        "--all",
        "--package-dir",
        &pkg.arg("deep_msgs"),
    ]);
    assert_eq!(out.lines().count(), 100_001);
    assert!(out.ends_with("... (cut at 100000 lines)\n"));
}

#[test]
fn run_without_the_source_tree_reads_no_interface_file() {
    // The standard set is compiled in: the binary never opens the vendored directory.
    let dir: &Path = standard_interfaces_dir();
    let (code, _, stderr) = horus(&["msg", "list"]);
    assert_eq!(code, 0, "{stderr}");
    let strace = Command::new("strace")
        .args(["-f", "-e", "trace=open,openat", "-o", "/dev/stdout"])
        .arg(env!("CARGO_BIN_EXE_horus"))
        .args(["msg", "show", "sensor_msgs/Imu", "--all"])
        .output();
    let Ok(strace) = strace else {
        eprintln!("strace not available: checked the run only");
        return;
    };
    let trace = String::from_utf8_lossy(&strace.stdout);
    if !trace.contains("openat") {
        eprintln!("strace traced nothing here: checked the run only");
        return;
    }
    assert!(
        !trace.contains(&*dir.to_string_lossy()),
        "opened the source tree:\n{trace}"
    );
}

fn gen_package() -> Package {
    Package::new(
        "gen",
        &[
            (
                "msg/Reading.msg",
                "std_msgs/Header header\nfloat32[] values\n",
            ),
            ("srv/Ask.srv", "Reading r\n---\nbool ok\n"),
        ],
    )
}

#[test]
fn gen_writes_what_horus_idl_gen_generates_for_the_package() {
    let pkg = gen_package();
    let out = pkg.0.join("generated.rs");
    let arg = pkg.arg("gen_msgs");
    let printed = ok(&[
        "msg",
        "gen",
        "--package-dir",
        &arg,
        "--out",
        &out.to_string_lossy(),
        "--extern-standard",
        "horus_ros_msgs",
    ]);
    assert!(printed.contains("packages gen_msgs"), "{printed}");
    let mut set = InterfaceSet::standard().unwrap();
    set.add_package_dir("gen_msgs", &pkg.0).unwrap();
    let resolved = set.resolve().unwrap();
    let options =
        horus_idl_gen::GenOptions::default().with_standard_packages_from("horus_ros_msgs");
    let expected = horus_idl_gen::generate_rust(&resolved, &["gen_msgs"], &options).unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), expected);
    // `-` prints it.
    assert_eq!(
        ok(&[
            "msg",
            "gen",
            "--package-dir",
            &arg,
            "--out",
            "-",
            "--extern-standard",
            "horus_ros_msgs"
        ]),
        expected
    );
}

#[test]
fn gen_without_extern_standard_includes_the_standard_packages_used_and_compiles() {
    let pkg = gen_package();
    let out = pkg.0.join("generated.rs");
    let printed = ok(&[
        "msg",
        "gen",
        "--package-dir",
        &pkg.arg("gen_msgs"),
        "--out",
        &out.to_string_lossy(),
    ]);
    // Header uses builtin_interfaces; the service's event uses service_msgs.
    assert!(
        printed.contains("packages gen_msgs, builtin_interfaces, service_msgs, std_msgs"),
        "{printed}"
    );
    // The file compiles against horus-cdr alone (a crate of its own, offline).
    let krate = pkg.0.join("check");
    std::fs::create_dir_all(krate.join("src")).unwrap();
    let cdr = Path::new(env!("CARGO_MANIFEST_DIR")).join("../horus-cdr");
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            "[package]\nname = \"gencheck\"\nversion = \"0.0.0\"\nedition = \"2021\"\n[workspace]\n\
             [dependencies]\nhorus-cdr = {{ path = {:?} }}\n",
            cdr.to_string_lossy()
        ),
    )
    .unwrap();
    std::fs::write(
        krate.join("src/main.rs"),
        format!(
            "include!({:?});\nfn main() {{ let r = gen_msgs::msg::Reading::default(); \
             assert!(r.values.is_empty()); }}\n",
            out.to_string_lossy()
        ),
    )
    .unwrap();
    let check = Command::new(env!("CARGO"))
        .args(["check", "--offline", "--quiet"])
        .current_dir(&krate)
        .env("CARGO_TARGET_DIR", krate.join("target"))
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn gen_without_a_package_or_with_an_unwritable_out_fails() {
    let (code, _, stderr) = horus(&["msg", "gen", "--out", "/tmp/x.rs"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("no package to generate"), "{stderr}");
    let pkg = gen_package();
    let (code, _, stderr) = horus(&[
        "msg",
        "gen",
        "--package-dir",
        &pkg.arg("gen_msgs"),
        "--out",
        "/nonexistent-dir/x.rs",
    ]);
    assert_eq!(code, 1);
    assert!(stderr.contains("/nonexistent-dir"), "{stderr}");
}
