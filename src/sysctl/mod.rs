//! TCP/network sysctls: the tuning set, validation, normalised comparison and persistence.
