//! Generates the standard packages into `$OUT_DIR/ros_msgs.rs`, and two test packages
//! (only `include!`d by the tests, as a user's crate would) into `$OUT_DIR/test_msgs.rs`:
//! they nest standard types, which they find in this crate (`horus_ros_msgs`).

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    if let Err(e) = horus_idl_gen::Builder::new()
        .generate_standard_packages()
        .out_file(out.join("ros_msgs.rs"))
        .generate()
    {
        panic!("generating the standard ROS 2 types failed: {e}");
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let gen_test = manifest.join("tests/horus_gen_test");
    let idl_test = manifest.join("../horus-idl/tests/fixtures/horus_idl_test");
    if !gen_test.is_dir() || !idl_test.is_dir() {
        // Outside the workspace (a packaged crate): no tests to build.
        println!("cargo:rerun-if-changed=build.rs");
        return;
    }
    if let Err(e) = horus_idl_gen::Builder::new()
        .package_dir("horus_gen_test", gen_test)
        .package_dir("horus_idl_test", idl_test)
        .with_standard_packages_from("horus_ros_msgs")
        .out_file(out.join("test_msgs.rs"))
        .generate()
    {
        panic!("generating the test packages failed: {e}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
