// The writer thread's half of a capture: a flat record (captured_record.hpp) → the SDK's
// ApiRecord, in msprobe's element encoding (dump-format.md §2.4): tensors as specs, Python-typed
// scalars, dtype / layout / memory format / device by name, lists as arrays; in tensor mode each
// tensor spec also gets its file name under dump_tensor_data (msprobe's names: <entry>.input.0.pt,
// <entry>.kwargs.<name>.pt, <entry>.output.1.2.pt, ...).
#pragma once

#include <acccheck/record.hpp>

#include "engine/captured_record.hpp"

namespace acccheck::capture {

ApiRecord build_api_record(const CapturedRecord& c, bool tensor_names);

}  // namespace acccheck::capture
