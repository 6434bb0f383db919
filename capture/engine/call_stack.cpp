#include "engine/call_stack.hpp"

#include <dlfcn.h>

#include <boost/stacktrace.hpp>

#include <algorithm>
#include <sstream>

#include "engine/source_lines.hpp"

namespace acccheck::capture {

std::uint64_t RawStack::hash() const {
  std::uint64_t h = 1469598103934665603ull;
  for (void* f : frames) {
    h ^= reinterpret_cast<std::uintptr_t>(f);
    h *= 1099511628211ull;
  }
  for (const PythonFrame& f : python_frames()) {
    h ^= reinterpret_cast<std::uintptr_t>(f.code) + (static_cast<std::uint64_t>(static_cast<std::uint32_t>(f.offset)) << 32) +
         static_cast<std::uint32_t>(f.line);
    h *= 1099511628211ull;
  }
  return h;
}

namespace {

// libunwind's unw_backtrace, where the system has libunwind: it remembers how to step over each
// return address it met, so a stack it has seen before costs ~0.25 µs for 27 frames, where
// Boost.Stacktrace's walk (libgcc's _Unwind_Backtrace, which reads the unwind tables at every frame)
// costs ~5.3 µs (bench/RESULTS.md, eleventh session) — most of what stacks cost a small step. Loaded
// privately (RTLD_LOCAL) and only looked up, never linked: the library also defines _Unwind_* and
// backtrace, which linked into the engine would replace libgcc's and glibc's for the whole program
// (its C++ exceptions included).
using Backtrace = int (*)(void**, int);

Backtrace libunwind_backtrace() {
  static const Backtrace found = []() -> Backtrace {
    void* lib = ::dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    return lib ? reinterpret_cast<Backtrace>(::dlsym(lib, "unw_backtrace")) : nullptr;
  }();
  return found;
}

}  // namespace

void prepare_stack_capture() { (void)libunwind_backtrace(); }

const char* stack_walker() { return libunwind_backtrace() ? "libunwind" : "boost"; }

void capture_raw_stack(std::vector<void*>& frames, std::size_t max_frames) {
  if (Backtrace backtrace = libunwind_backtrace()) {
    // Its first address is in this function: left out, as safe_dump_to(1, ...) leaves it out.
    frames.resize(max_frames + 1);
    int n = backtrace(frames.data(), static_cast<int>(max_frames + 1));
    if (n > 0) {
      frames.erase(frames.begin());
      frames.resize(static_cast<std::size_t>(n - 1));
      return;
    }
  }
  frames.resize(max_frames);
  // safe_dump_to only walks the stack and copies addresses: no allocation, no symbol lookup.
  std::size_t n = boost::stacktrace::safe_dump_to(1, frames.data(), max_frames * sizeof(void*));
  frames.resize(n);
}

namespace {

// Shared objects whose frames are machinery, not the user's code.
bool machinery(const std::string& object) {
  std::string base = object.substr(object.find_last_of('/') + 1);
  static const char* prefixes[] = {"libtorch", "libc10", "libacccheck", "libc.so", "libc-", "ld-linux",
                                   "libstdc++", "libgcc_s", "libgomp", "libboost_stacktrace", "libpthread"};
  for (const char* p : prefixes)
    if (base.rfind(p, 0) == 0) return true;
  return false;
}

}  // namespace

std::vector<std::string> describe_stack(const RawStack& stack, bool full) {
  std::vector<std::string> lines;
  const PythonFrames& python = stack.python_frames();
  for (const PythonFrame& f : python) {
    const int line = f.line_number();
    lines.push_back("File " + f.code->file() + ", line " + std::to_string(line) + ", in " + f.code->name() + ", \n " +
                    source_lines().line(f.code->file(), static_cast<std::size_t>(std::max(line, 0))));
  }
  if (!python.empty()) return lines;
  for (void* addr : stack.frames) {
    Dl_info info{};
    if (!::dladdr(addr, &info) || !info.dli_fname) continue;
    std::string object = info.dli_fname;
    if (machinery(object)) continue;
    std::ostringstream os;
    if (!full) {
      os << "File " << object << "+0x" << std::hex
         << (reinterpret_cast<std::uintptr_t>(addr) - reinterpret_cast<std::uintptr_t>(info.dli_fbase))
         << ", line 0, in ??, \n ";
      lines.push_back(os.str());
      continue;
    }
    // The return address points after the call; look up the call instruction itself.
    boost::stacktrace::frame f(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(addr) - 1));
    std::string function = f.name();
    if (function == "_start" || function == "__libc_start_main") continue;  // below main()
    if (function.empty()) function = "??";
    std::string file = f.source_file();
    std::size_t line = f.source_line();
    if (file.empty()) {
      os << "File " << object << ", line 0, in " << function << ", \n ";
    } else {
      os << "File " << file << ", line " << line << ", in " << function << ", \n " << source_lines().line(file, line);
    }
    lines.push_back(os.str());
  }
  if (lines.empty()) lines.push_back("The call stack retrieval failed.");
  return lines;
}

}  // namespace acccheck::capture
