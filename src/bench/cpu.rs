//! cpu benchmark.
