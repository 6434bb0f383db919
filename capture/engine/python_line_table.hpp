// CPython's location table (a code object's co_linetable, the format of 3.11 and later, described in
// CPython's InternalDocs/locations.md) turned into instruction-offset → line, the answer
// PyCode_Addr2Line gives. Why we read it ourselves: PyCode_Addr2Line walks the table from its start
// on every call (1–2 µs for the module machinery's long functions), on the training thread, with
// the GIL; a first dumped step meets ~85 call sites for the first time (bench/RESULTS.md). The
// capture copies the table once per code object and the writer thread decodes it here. Pure
// C++: no Python, no torch.
#pragma once

#include <cstddef>
#include <string_view>
#include <utility>
#include <vector>

namespace acccheck::capture {

// Whether a CPython version (PY_VERSION_HEX, Py_Version) writes the table this decoder reads:
// 3.11 to 3.14 (3.10 and older wrote another format; later versions are not assumed to keep it).
bool python_line_table_readable(unsigned long py_version_hex);

class PythonLineTable {
 public:
  PythonLineTable() = default;
  // `table`: co_linetable's bytes; `first_line`: co_firstlineno. A truncated or malformed table
  // ends where it stops making sense: offsets past it have no line (-1).
  PythonLineTable(std::string_view table, int first_line);

  // The line of the instruction at byte offset `offset` (PyFrame_GetLasti's unit): -1 where the
  // table gives none (an entry without location, an offset past the table), `first_line` for a
  // negative offset (a frame that has not started), as PyCode_Addr2Line answers.
  int line_at(int offset) const;

 private:
  int first_line_ = 0;
  std::vector<std::pair<int, int>> ranges_;  // (end offset, exclusive; line), contiguous from 0
};

}  // namespace acccheck::capture
