//! Message types shared by the action tests.

#![allow(dead_code, unreachable_pub)]

horus::message! {
    /// Count to `to`.
    pub struct Count: "test/Count", version 1 {
        /// Target.
        pub to: u64,
    }
}

horus::message! {
    /// Where the count is.
    pub struct At: "test/At", version 1 {
        /// Current value.
        pub n: u64,
    }
}

/// A unique namespace per test and process.
pub fn ns(test: &str) -> String {
    format!("test-actions-{test}-{}", std::process::id())
}
