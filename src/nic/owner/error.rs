//! Errors of finding and writing through a link's network manager: each
//! names the interface and the file, and keeps the errno where there is one.

#[derive(Debug, thiserror::Error)]
pub enum OwnerError {
    #[error("{iface}: {path}: {source}")]
    Io {
        iface: String,
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The manager's file says something hlctl will not edit around.
    #[error("{iface}: {path}: {message}; nothing changed")]
    Refused {
        iface: String,
        path: String,
        message: String,
    },
    /// The manager's own tool failed; the file was put back.
    #[error("{iface}: `{command}` failed ({status}): {output}; {path} was restored")]
    Tool {
        iface: String,
        command: String,
        status: String,
        output: String,
        path: String,
    },
    #[error("{iface}: NetworkManager: {message}")]
    NetworkManager { iface: String, message: String },
}

impl OwnerError {
    pub(crate) fn io(iface: &str, path: &std::path::Path, source: std::io::Error) -> Self {
        OwnerError::Io {
            iface: iface.to_string(),
            path: path.display().to_string(),
            source,
        }
    }

    /// The errno behind the error, when there is one.
    pub(crate) fn errno(&self) -> Option<i32> {
        match self {
            OwnerError::Io { source, .. } => source.raw_os_error(),
            _ => None,
        }
    }
}
