//! Persisting a setting through the manager that owns it, and undoing that.
