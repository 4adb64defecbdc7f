//! Page-aligned I/O buffers: what O_DIRECT needs (disk), and what iperf3's
//! mmap'ed stream buffer is (network), so copies to and from the kernel start
//! on a page boundary.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;

/// Alignment of every buffer: a page, which satisfies any device's O_DIRECT rule.
pub(crate) const ALIGN: usize = 4096;

/// A buffer aligned to [`ALIGN`] (on the heap, or mapped for block I/O).
pub(crate) struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    owner: Owner,
}

/// Where the memory came from, so that `Drop` gives it back the same way.
enum Owner {
    Heap(Layout),
    /// An anonymous mapping of this many bytes (huge-page aligned).
    Mapped(usize),
}

/// A transparent huge page on x86-64 and arm64 with 4 KiB base pages.
const HUGE_PAGE: usize = 2 << 20;

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
        Ok(Self {
            ptr,
            len: layout.size(),
            owner: Owner::Heap(layout),
        })
    }

    /// A buffer for block I/O of large blocks: huge-page aligned and marked for
    /// transparent huge pages, so that it is physically contiguous. The kernel hands
    /// a device one segment per contiguous run: in 4 KiB pages a 1 MiB I/O is 256
    /// segments, more than a virtio disk (254) or a loop device (128) takes per
    /// request, and every such I/O is split in two. Buffers under 1 MiB, and systems
    /// where the mapping fails, get `new`'s; where huge pages are off
    /// (`transparent_hugepage=never`) the buffer works the same, in small pages.
    pub(crate) fn for_block_io(len: usize) -> std::io::Result<Self> {
        if len < HUGE_PAGE / 2 {
            return Self::new(len);
        }
        let body = len.next_multiple_of(HUGE_PAGE);
        let map_len = body + HUGE_PAGE;
        // SAFETY: a fresh private anonymous mapping; no existing memory is touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Self::new(len);
        }
        let base = p as usize;
        let start = base.next_multiple_of(HUGE_PAGE);
        let (head, tail) = (start - base, map_len - (start - base) - body);
        // SAFETY: both ranges lie inside the mapping made above and outside
        // [start, start + body), which is kept; munmap of a zero length is skipped.
        unsafe {
            if head > 0 {
                libc::munmap(p, head);
            }
            if tail > 0 {
                libc::munmap((start + body) as *mut libc::c_void, tail);
            }
            // Best effort: without THP the buffer is plain small pages.
            libc::madvise(start as *mut libc::c_void, body, libc::MADV_HUGEPAGE);
        }
        let ptr = NonNull::new(start as *mut u8)
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
        Ok(Self {
            ptr,
            len,
            owner: Owner::Mapped(body),
        })
    }

    pub(crate) fn len(&self) -> usize {
        self.len
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
        match self.owner {
            // SAFETY: allocated in `new` with this very layout.
            Owner::Heap(layout) => unsafe { dealloc(self.ptr.as_ptr(), layout) },
            // SAFETY: mapped in `for_block_io` with this very length; nothing else maps it.
            Owner::Mapped(body) => unsafe {
                libc::munmap(self.ptr.as_ptr().cast(), body);
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_io_buffers_are_huge_page_aligned_zeroed_and_writable() {
        for len in [1 << 20, 8 << 20, (3 << 20) + 4096] {
            let mut b = AlignedBuf::for_block_io(len).unwrap();
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as usize % HUGE_PAGE, 0, "len {len}");
            assert!(b.as_slice().iter().all(|&x| x == 0), "len {len}");
            b.fill_random(7);
            assert!(b.as_slice()[len - 8..].iter().any(|&x| x != 0));
        }
    }

    #[test]
    fn small_block_io_buffers_are_plain_page_aligned_ones() {
        let b = AlignedBuf::for_block_io(128 << 10).unwrap();
        assert_eq!(b.len(), 128 << 10);
        assert_eq!(b.as_ptr() as usize % ALIGN, 0);
        assert!(matches!(b.owner, Owner::Heap(_)));
    }
}
