//! Generates the test fixture package `tests/test_msgs` (ROS 2's test_msgs Fibonacci action)
//! into `$OUT_DIR/test_msgs.rs`, only `include!`d by the tests (as a user's crate would).

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    if let Err(e) = horus_idl_gen::Builder::new()
        .package_dir("test_msgs", manifest.join("tests/test_msgs"))
        .with_standard_packages_from("horus_ros_msgs")
        .runtime_crate("::horus_ros_msgs::horus_cdr")
        .out_file(out.join("test_msgs.rs"))
        .generate()
    {
        panic!("generating the test_msgs fixture failed: {e}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=tests/test_msgs");
}
