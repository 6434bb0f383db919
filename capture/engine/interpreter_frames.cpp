#include "engine/interpreter_frames.hpp"

#include <cstdint>
#include <cstring>

namespace acccheck::capture {

namespace {

using namespace cpython311;

template <typename T>
T field(const void* base, unsigned offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof value);
  return value;
}

// Addresses as integers: the instruction pointer is compared with, and measured from, the start of
// the code's instructions, which CPython may leave one unit before it.
std::intptr_t address(const void* p) { return static_cast<std::intptr_t>(reinterpret_cast<std::uintptr_t>(p)); }

// Bytes from the code's first instruction to the frame's last one (negative: none run yet).
std::intptr_t bytes_run(const void* frame, const void* code) {
  return address(field<const void*>(frame, kFramePrevInstr)) - (address(code) + kCodeAdaptive);
}

// _PyFrame_IsIncomplete: a frame (not a generator's) whose instruction pointer has not reached the
// code's first traceable instruction is still copying its cells and free variables; the C API
// never hands such a frame out.
bool incomplete(const void* frame) {
  if (field<char>(frame, kFrameOwner) == kOwnedByGenerator) return false;
  const void* code = interpreter_frame_code(frame);
  return bytes_run(frame, code) < static_cast<std::intptr_t>(field<int>(code, kCodeFirstTraceable)) * kCodeUnit;
}

const void* first_started(const void* frame) {
  while (frame && incomplete(frame)) frame = field<const void*>(frame, kFramePrevious);
  return frame;
}

}  // namespace

bool interpreter_frames_readable(unsigned long py_version_hex) { return (py_version_hex >> 16) == 0x030B; }

const void* innermost_interpreter_frame(const void* thread_state) {
  const void* cframe = field<const void*>(thread_state, kThreadStateCFrame);
  return cframe ? first_started(field<const void*>(cframe, kCFrameCurrent)) : nullptr;
}

const void* outer_interpreter_frame(const void* frame) {
  return first_started(field<const void*>(frame, kFramePrevious));
}

void* interpreter_frame_code(const void* frame) { return field<void*>(frame, kFrameCode); }

InterpreterCodeFields interpreter_code_fields(const void* code) {
  return InterpreterCodeFields{field<const void*>(code, kCodeFilename), field<const void*>(code, kCodeName),
                               field<const void*>(code, kCodeLineTable), field<int>(code, kCodeFirstLine)};
}

const void* python_object_type(const void* object) { return field<const void*>(object, kObjectType); }

bool compact_ascii_text(const void* str, std::string_view& text) {
  if ((field<unsigned char>(str, kStrState) & kStrStateMask) != kStrCompactAscii) return false;
  const auto length = field<std::int64_t>(str, kStrLength);
  if (length < 0) return false;
  text = std::string_view(static_cast<const char*>(str) + kStrAsciiData, static_cast<std::size_t>(length));
  return true;
}

std::string_view bytes_contents(const void* bytes) {
  const auto size = field<std::int64_t>(bytes, kBytesSize);
  return size < 0 ? std::string_view()
                  : std::string_view(static_cast<const char*>(bytes) + kBytesData, static_cast<std::size_t>(size));
}

int interpreter_frame_offset(const void* frame) {
  // _PyInterpreterFrame_LASTI in code units, then bytes, as PyFrame_GetLasti does.
  const std::intptr_t units = bytes_run(frame, interpreter_frame_code(frame)) / static_cast<std::intptr_t>(kCodeUnit);
  return units < 0 ? -1 : static_cast<int>(units * kCodeUnit);
}

}  // namespace acccheck::capture
