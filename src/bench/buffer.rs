//! Page-aligned I/O buffers: what O_DIRECT needs (disk), and what iperf3's
//! mmap'ed stream buffer is (network), so copies to and from the kernel start
//! on a page boundary.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

/// Alignment of every buffer: a page, which satisfies any device's O_DIRECT rule.
pub(crate) const ALIGN: usize = 4096;

/// A heap buffer aligned to [`ALIGN`].
pub(crate) struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the buffer is plain memory owned by this value; nothing else points into it.
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    pub(crate) fn new(len: usize) -> std::io::Result<Self> {
        let layout = Layout::from_size_align(len.max(1), ALIGN)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(ptr)
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
        Ok(Self { ptr, layout })
    }

    pub(crate) fn len(&self) -> usize {
        self.layout.size()
    }

    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for len bytes, initialised (zeroed) at allocation.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len()) }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and we hold the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len()) }
    }

    /// Fill with incompressible pseudo-random bytes (so compressing or deduplicating
    /// filesystems cannot shortcut the writes), like fio's default buffer contents.
    pub(crate) fn fill_random(&mut self, seed: u64) {
        let mut x = seed | 1;
        for chunk in self.as_mut_slice().chunks_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bytes = x.to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this very layout.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}
