// glibc malloc's thresholds for a program under the dump, and the heap's headroom. Torch-free.
//
// glibc adapts two thresholds as a program runs: a freed mmap'ed block raises the mmap threshold to
// its size (up to 32 MiB) and the trim threshold to twice that. Whether a step then returns the top
// of the heap to the system (and faults it back in, page by page, in the next step) depends on
// where the step's large blocks happen to lie when they are freed — on every small allocation made
// in between. The dump's own allocations move them: torchvision's resnet18 went from 17 page faults
// a step to 1,800–4,300 under the dump (a 9 MiB weight gradient grown with brk in
// convolution_backward and trimmed when AccumulateGrad freed it, every step), ~1.2× of the step's
// time by itself. Setting up front the values glibc's own rule converges to for large tensors
// (mmap 32 MiB, trim 64 MiB) makes the step's cost independent of that layout.
#pragma once

#include <cstddef>
#include <cstdint>

namespace acccheck::capture {

// Whether the environment chooses either threshold itself (MALLOC_MMAP_THRESHOLD_,
// MALLOC_TRIM_THRESHOLD_, or glibc.malloc.mmap_threshold / trim_threshold in GLIBC_TUNABLES): the
// user's choice stands. Null pointers are unset variables.
bool allocator_thresholds_chosen_by_user(const char* mmap_env, const char* trim_env, const char* tunables);

// Sets the thresholds (mmap 32 MiB, trim 64 MiB) unless the environment chose them; true if set.
// Nothing outside glibc.
bool settle_allocator_thresholds();

// Room for the heap to grow into, faulted in ahead of time. A dumped step allocates more than the
// plain one (its post hooks, the records' spill-over, and the program's own tensors placed around
// them), so the first dumped steps of a process push the heap past the high-water mark the
// undumped steps had settled at: on Debian's LibTorch 1.13, 15–40 page faults a step in steps 5–7
// of the corpus's small transformers (~1.4 µs each on this project's VM, 2–3 % of the step), where
// the plain steps take none. With settle_allocator_thresholds()'s thresholds a block below the mmap
// threshold comes from the heap, and freed, stays in it (the top below the trim threshold): pages
// of it faulted in now cost the steps that grow into them nothing. Only with those thresholds — the
// caller's business: under others the block may be mapped and unmapped or the top trimmed, and the
// work wasted.

// Whole pages [begin, end).
struct PageRange {
  std::uintptr_t begin = 0, end = 0;
  std::size_t pages() const;
};

// A block of `bytes` allocated from the heap and freed at once, untouched: its whole pages, for
// populate_for_writing(). Empty outside glibc.
PageRange reserve_heap_headroom(std::size_t bytes);

// Pages made present and writable without being written (MADV_POPULATE_WRITE, Linux 5.14): safe
// from any thread while the program uses the memory. False where the kernel lacks it or the range
// is no longer mapped.
bool populate_for_writing(const PageRange& range);
// Whether this kernel has MADV_POPULATE_WRITE (a page of our own tried once, then remembered).
bool populate_for_writing_supported();

// The end of the heap (the program break, sbrk(0): glibc's cached value, no system call); 0
// outside glibc. It moves when the heap grows past its top chunk — past the headroom given.
std::uintptr_t heap_end();

// The kernels without it: a block of `bytes` from the heap, written once a page while it is ours,
// and freed — the same headroom, its faults taken on the calling thread. The pages faulted in.
std::size_t prepare_heap_headroom(std::size_t bytes);

}  // namespace acccheck::capture
