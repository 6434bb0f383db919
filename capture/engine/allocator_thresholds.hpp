// glibc malloc's thresholds for a program under the dump. Torch-free.
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

namespace acccheck::capture {

// Whether the environment chooses either threshold itself (MALLOC_MMAP_THRESHOLD_,
// MALLOC_TRIM_THRESHOLD_, or glibc.malloc.mmap_threshold / trim_threshold in GLIBC_TUNABLES): the
// user's choice stands. Null pointers are unset variables.
bool allocator_thresholds_chosen_by_user(const char* mmap_env, const char* trim_env, const char* tunables);

// Sets the thresholds (mmap 32 MiB, trim 64 MiB) unless the environment chose them; true if set.
// Nothing outside glibc.
bool settle_allocator_thresholds();

}  // namespace acccheck::capture
