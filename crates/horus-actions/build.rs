//! Generates the test action package (`tests/horus_action_test`) into
//! `$OUT_DIR/test_actions.rs`, only `include!`d by the tests (as a user's crate would).

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    if let Err(e) = horus_idl_gen::Builder::new()
        .package_dir(
            "horus_action_test",
            manifest.join("tests/horus_action_test"),
        )
        .with_standard_packages_from("horus_ros_msgs")
        .runtime_crate("::horus_ros_msgs::horus_cdr")
        .out_file(out.join("test_actions.rs"))
        .generate()
    {
        panic!("generating the test action package failed: {e}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
