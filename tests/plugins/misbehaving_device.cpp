// Device plugins that take their process down while loading (a vendor runtime on a bad driver):
// MISBEHAVE_CRASH raises SIGSEGV, MISBEHAVE_HANG never returns. `acccheck plugins` must survive.
#include <csignal>
#include <thread>

#include <acccheck/device_probe.hpp>

namespace {
struct Misbehave {
  Misbehave() {
#if defined(MISBEHAVE_CRASH)
    std::raise(SIGSEGV);
#else
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
#endif
  }
} misbehave;
}  // namespace
