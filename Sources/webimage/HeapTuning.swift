import CWebImageCodecs

/// How the commands that decode images all day (`serve`, `prefetch`) ask glibc's allocator to keep
/// image-sized buffers.
enum HeapTuning {
    /// Keeps allocations below 64 MB in the heap and up to 256 MB free at its top.
    ///
    /// Decoded images and a PNG's inflated rows (hundreds of KB to tens of MB) are allocated and
    /// freed many times a second. Above glibc's mmap threshold each one is a fresh mapping, faulted
    /// in and zeroed page by page, and unmapped when freed: a sixth of a dataset run's CPU went to
    /// the kernel, and 45% of the page faults of a proxy serving 8 MB PNGs were its copy of their
    /// image data. Kept in the heap they are reused; memory freed at the heap's top is returned
    /// to the system above 256 MB, so the process keeps about what its busiest moment needed.
    static func keepImageBuffers() {
        _ = cwi_keep_large_allocations(64 << 20, 256 << 20)
    }
}
