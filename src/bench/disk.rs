//! disk benchmark.
