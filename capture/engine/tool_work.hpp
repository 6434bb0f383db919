// The tool's own operators (statistics that need LibTorch, a copy in tensor mode) are not recorded:
// RecordFunction is off on the calling thread while they run. Switching is not free in LibTorch
// 1.13 (each switch rebuilds the thread's active callbacks), so where it is off already — inside an
// entry (whose nested calls are switched off before the tool looks at its arguments), inside an
// autograd node — nothing is switched, and code that may or may not call an operator switches
// only on the path that does.
#pragma once

#include <ATen/record_function.h>

namespace acccheck::capture {

class ToolWork {
 public:
  ToolWork() : was_on_(at::isRecordFunctionEnabled()) {
    if (was_on_) at::enableRecordFunction(false);
  }
  ~ToolWork() {
    if (was_on_) at::enableRecordFunction(true);
  }
  ToolWork(const ToolWork&) = delete;
  ToolWork& operator=(const ToolWork&) = delete;

 private:
  bool was_on_;
};

}  // namespace acccheck::capture
