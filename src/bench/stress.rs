//! stress benchmark.
