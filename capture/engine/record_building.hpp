// The writer thread's half of a capture: a flat record (captured_record.hpp) → the SDK's
// ApiRecord, in msprobe's element encoding (dump-format.md §2.4): tensors as specs, Python-typed
// scalars, dtype / layout / memory format / device by name, lists as arrays; in tensor mode each
// tensor spec also gets its file name under dump_tensor_data (msprobe's names: <entry>.input.0.pt,
// <entry>.kwargs.<name>.pt, <entry>.output.1.2.pt, ...).
//
// The writer encodes each record straight into dump.json's text (append_entry_json): building the
// ApiRecord and its Json tree first, then the text, had been most of the writer thread's time (it
// allocated every key and value), and the writer's pace is what a program dumping every step of a
// small model waits for. build_api_record is the same encoding as a tree, for whoever needs the
// model (and the tests, which hold the two to the same bytes).
#pragma once

#include <string>
#include <vector>

#include <acccheck/record.hpp>

#include "engine/captured_record.hpp"

namespace acccheck::capture {

ApiRecord build_api_record(const CapturedRecord& c, bool tensor_names);

// Appends `"<entry>": {...}` exactly as the SDK's dump.json writer lays out build_api_record(c)
// (json.dump indent=1, at the depth of the "data" members). With `tensor_names`, each tensor's
// data_name is written and also put in *names at its ordinal (the order the tensors were encoded
// in: CapturedRecord::tensors' and pending_statistics' ordinals).
void append_entry_json(const CapturedRecord& c, bool tensor_names, std::string& out,
                       std::vector<std::string>* names = nullptr);

}  // namespace acccheck::capture
