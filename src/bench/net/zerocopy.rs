//! iperf3's `-Z`: a TCP sender's block lives in a file (a memfd here, an
//! unlinked temporary file in iperf3) and goes to the socket with
//! sendfile(2), so the kernel takes the pages without a copy from user space.

use std::io::{self, Write};
use std::net::TcpStream;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// One block, in a memory-backed file.
pub(crate) struct FileBlock {
    file: std::fs::File,
    len: usize,
}

impl FileBlock {
    /// A file holding `block` (its bytes, so the payload is the same as
    /// without -Z).
    pub(crate) fn new(block: &[u8]) -> io::Result<FileBlock> {
        // SAFETY: a NUL-terminated name; memfd_create returns a new descriptor or -1.
        let fd = unsafe { libc::memfd_create(c"hlctl-zerocopy".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and is owned by nothing else.
        let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        file.write_all(block)?;
        Ok(FileBlock {
            file,
            len: block.len(),
        })
    }

    /// Send the block (from its start) to `s` with one sendfile call: the
    /// bytes the kernel took, as a write returns them.
    pub(crate) fn send(&self, s: &TcpStream) -> io::Result<usize> {
        let mut offset: libc::off_t = 0;
        // SAFETY: both descriptors are live; `offset` is a valid in/out pointer.
        let n =
            unsafe { libc::sendfile(s.as_raw_fd(), self.file.as_raw_fd(), &mut offset, self.len) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn sendfile_delivers_the_blocks_bytes() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (mut rx, _) = l.accept().unwrap();
        let block: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        let f = FileBlock::new(&block).unwrap();
        let mut sent = 0;
        while sent < block.len() {
            sent += f.send(&tx).unwrap();
        }
        assert_eq!(sent, block.len());
        drop(tx);
        let mut got = Vec::new();
        rx.read_to_end(&mut got).unwrap();
        assert_eq!(got, block);
    }
}
