// A preload library that registers one global RecordFunction callback for operator calls and does
// nothing in it: the floor of any dump built on RecordFunction (what LibTorch itself then does for
// every dispatcher call, nested ones and those of autograd's nodes included). dump_bench.sh runs
// the example program with it as the mode "rf-noop" beside the tool's own modes.
#include <ATen/record_function.h>

namespace {

__attribute__((constructor)) void register_noop_callback() {
  at::addGlobalCallback(at::RecordFunctionCallback(
                            [](const at::RecordFunction&) -> std::unique_ptr<at::ObserverContext> { return nullptr; })
                            .scopes({at::RecordScope::FUNCTION}));
}

}  // namespace
