#include "engine/capture_mode.hpp"

#include <dlfcn.h>
#include <pthread.h>

#include <cerrno>
#include <mutex>
#include <new>
#include <stdexcept>
#include <vector>

namespace acccheck::capture {

void install_capture_fallback(c10::KernelFunction fallback) {
  static std::mutex mutex;
  static bool installed = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (installed) return;
  auto& dispatcher = c10::Dispatcher::singleton();
  if (dispatcher.hasBackendFallbackForDispatchKey(kCaptureKey))
    throw std::runtime_error(std::string("another library already registered a dispatcher fallback on ") +
                             c10::toString(kCaptureKey) + ", the key acccheck dump captures calls with");
  // Never deregistered: calls may be inside the fallback on other threads until the process ends.
  new c10::RegistrationHandleRAII(dispatcher.registerFallback(kCaptureKey, std::move(fallback), "acccheck dump"));
  installed = true;
}

std::size_t make_operators_transparent(const std::function<bool(const c10::OperatorName&)>& transparent) {
  static std::mutex mutex;
  static auto* registered = new std::vector<c10::RegistrationHandleRAII>;  // never destroyed at exit
  std::lock_guard<std::mutex> lock(mutex);
  registered->clear();  // deregisters the previous configuration's
  auto& dispatcher = c10::Dispatcher::singleton();
  for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
    if (!transparent(name)) continue;
    registered->push_back(dispatcher.registerImpl(name, kCaptureKey, c10::KernelFunction::makeFallthrough(), {},
                                                  nullptr, "acccheck dump: outside every category"));
  }
  return registered->size();
}

void capture_calls_on_this_thread(bool on) { c10::impl::tls_set_dispatch_key_included(kCaptureKey, on); }

namespace {
thread_local bool t_paused = false;
}  // namespace

void pause_calls_on_this_thread() {
  c10::impl::tls_set_dispatch_key_excluded(kCaptureKey, true);
  t_paused = true;
}

void resume_calls_on_this_thread() {
  if (!t_paused) return;
  c10::impl::tls_set_dispatch_key_excluded(kCaptureKey, false);
  t_paused = false;
}

bool calls_paused_on_this_thread() { return t_paused; }

}  // namespace acccheck::capture

// ---- threads inherit their creator's capture setting ---------------------------------------------
// A thread the program starts (a C++ data loader's std::thread, a Python threading.Thread) has an
// empty thread-local dispatch-key set. pthread_create is interposed (this definition comes before
// libc's: the preload library through LD_PRELOAD, the SDK library as the program's own dependency)
// so a thread created by a thread whose calls are captured — and not from inside a captured call
// or the tool's own work, where the key is excluded — has its calls captured too. Threads LibTorch
// starts inside an operator (the OpenMP pool, at its first parallel region) therefore do not, so
// the operators some kernels run on them stay nested calls rather than entries. Everything else is
// passed to libc's pthread_create untouched.
namespace {

using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

CreateFn libc_pthread_create() {
  static CreateFn real = reinterpret_cast<CreateFn>(::dlsym(RTLD_NEXT, "pthread_create"));
  return real;
}

struct ThreadStart {
  void* (*routine)(void*);
  void* arg;
  bool paused;  // created during its creator's pause: starts paused
};

void* start_captured_thread(void* raw) {
  ThreadStart start = *static_cast<ThreadStart*>(raw);
  delete static_cast<ThreadStart*>(raw);
  acccheck::capture::capture_calls_on_this_thread(true);
  if (start.paused) acccheck::capture::pause_calls_on_this_thread();
  return start.routine(start.arg);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                                                    void* (*routine)(void*), void* arg) {
  CreateFn real = libc_pthread_create();
  if (!real) return EAGAIN;
  // During a pause the creator may be inside an operator or not (no call reaches the fallback to
  // tell): the thread starts paused, and captures only once it ends a pause of its own.
  const bool paused = acccheck::capture::calls_paused_on_this_thread();
  if (!acccheck::capture::this_thread_captures() && !paused) return real(thread, attr, routine, arg);
  auto* start = new (std::nothrow) ThreadStart{routine, arg, paused};
  if (!start) return EAGAIN;
  int rc = real(thread, attr, start_captured_thread, start);
  if (rc != 0) delete start;
  return rc;
}
