//! Recording horus topics to MCAP and reading them back.
