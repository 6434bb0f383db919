// interpreter_frames: CPython 3.11's frame records read by offset. Here the thread state, frames and
// code objects are built by hand at CPython 3.11's offsets; the e2e test PythonDump.
// InterpreterFramesAreTheFramesTheCApiGives checks the same walk against a real CPython's C API.
#include "engine/interpreter_frames.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

using namespace acccheck::capture;
namespace layout = acccheck::capture::cpython311;

namespace {

template <typename T>
void put(std::vector<unsigned char>& bytes, unsigned offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

// A code object: `first_traceable` code units of prologue, then the body.
struct Code {
  std::vector<unsigned char> bytes = std::vector<unsigned char>(layout::kCodeAdaptive + 64, 0);
  explicit Code(int first_traceable) { put(bytes, layout::kCodeFirstTraceable, first_traceable); }
  void* self() { return bytes.data(); }
  unsigned char* instruction(int unit) { return bytes.data() + layout::kCodeAdaptive + unit * static_cast<int>(layout::kCodeUnit); }
};

struct Frame {
  std::vector<unsigned char> bytes = std::vector<unsigned char>(80, 0);
  Frame(Code& code, int unit, const Frame* previous, char owner = 0) {
    put(bytes, layout::kFrameCode, code.self());
    put(bytes, layout::kFramePrevious, previous ? static_cast<const void*>(previous->bytes.data()) : nullptr);
    put(bytes, layout::kFramePrevInstr, code.instruction(unit));
    put(bytes, layout::kFrameOwner, owner);
  }
  const void* self() const { return bytes.data(); }
};

struct ThreadState {
  std::vector<unsigned char> cframe = std::vector<unsigned char>(24, 0);
  std::vector<unsigned char> bytes = std::vector<unsigned char>(layout::kThreadStateCFrame + 8, 0);
  explicit ThreadState(const Frame* current) {
    put(cframe, layout::kCFrameCurrent, current ? current->self() : nullptr);
    put(bytes, layout::kThreadStateCFrame, static_cast<void*>(cframe.data()));
  }
  const void* self() const { return bytes.data(); }
};

}  // namespace

TEST(InterpreterFrames, OnlyCPython311sLayoutIsRead) {
  EXPECT_TRUE(interpreter_frames_readable(0x030B00F0));  // 3.11.0
  EXPECT_TRUE(interpreter_frames_readable(0x030B02F0));  // Debian 12's 3.11.2
  EXPECT_TRUE(interpreter_frames_readable(0x030B07F0));
  EXPECT_FALSE(interpreter_frames_readable(0x030A0CF0));  // 3.10: frame objects, no interpreter frames
  EXPECT_FALSE(interpreter_frames_readable(0x030C00F0));  // 3.12 moved f_code and added shim frames
  EXPECT_FALSE(interpreter_frames_readable(0x030D00F0));
}

TEST(InterpreterFrames, WalksOutwardWithTheOffsetsTheCApiGives) {
  Code outer_code(0), inner_code(0);
  Frame outer(outer_code, 7, nullptr);
  Frame middle(inner_code, 0, &outer);
  Frame inner(inner_code, 12, &middle);
  ThreadState thread(&inner);
  const void* f = innermost_interpreter_frame(thread.self());
  ASSERT_EQ(f, inner.self());
  EXPECT_EQ(interpreter_frame_code(f), inner_code.self());
  EXPECT_EQ(interpreter_frame_offset(f), 24);  // 12 code units of 2 bytes
  f = outer_interpreter_frame(f);
  ASSERT_EQ(f, middle.self());
  EXPECT_EQ(interpreter_frame_offset(f), 0);
  f = outer_interpreter_frame(f);
  ASSERT_EQ(f, outer.self());
  EXPECT_EQ(interpreter_frame_code(f), outer_code.self());
  EXPECT_EQ(interpreter_frame_offset(f), 14);
  EXPECT_EQ(outer_interpreter_frame(f), nullptr);
}

TEST(InterpreterFrames, AFrameBeforeItsFirstInstructionHasOffsetMinusOne) {
  // prev_instr one unit before the code: nothing run yet. Only a generator's frame is handed out
  // in that state (any other is incomplete even without a prologue).
  Code code(0);
  Frame fresh(code, -1, nullptr, layout::kOwnedByGenerator);
  ThreadState thread(&fresh);
  ASSERT_EQ(innermost_interpreter_frame(thread.self()), fresh.self());
  EXPECT_EQ(interpreter_frame_offset(fresh.self()), -1);
  Frame not_generator(code, -1, nullptr);
  ThreadState other(&not_generator);
  EXPECT_EQ(innermost_interpreter_frame(other.self()), nullptr);
}

TEST(InterpreterFrames, FramesStillInTheirPrologueAreSkippedExceptAGenerators) {
  // A function with cells copies them (3 units) before its first traceable instruction: a frame
  // whose last instruction is before unit 3 is incomplete, wherever it is in the chain.
  Code with_cells(3), plain(0);
  Frame bottom(plain, 5, nullptr);
  Frame started(with_cells, 3, &bottom);           // at the first traceable instruction: complete
  Frame in_prologue(with_cells, 1, &started);      // incomplete: skipped
  Frame generator(with_cells, 1, &in_prologue, layout::kOwnedByGenerator);  // never incomplete
  Frame top_in_prologue(with_cells, 2, &generator);                         // incomplete: skipped
  ThreadState thread(&top_in_prologue);
  const void* f = innermost_interpreter_frame(thread.self());
  ASSERT_EQ(f, generator.self());
  EXPECT_EQ(interpreter_frame_offset(f), 2);
  f = outer_interpreter_frame(f);
  ASSERT_EQ(f, started.self());
  EXPECT_EQ(interpreter_frame_offset(f), 6);
  EXPECT_EQ(outer_interpreter_frame(f), bottom.self());
}

TEST(InterpreterFrames, AThreadWithoutFramesHasNone) {
  ThreadState no_frames(nullptr);
  EXPECT_EQ(innermost_interpreter_frame(no_frames.self()), nullptr);
  std::vector<unsigned char> no_cframe(layout::kThreadStateCFrame + 8, 0);  // cframe == NULL
  EXPECT_EQ(innermost_interpreter_frame(no_cframe.data()), nullptr);
  Code with_cells(3);
  Frame only_prologue(with_cells, 0, nullptr);
  ThreadState prologue_only(&only_prologue);
  EXPECT_EQ(innermost_interpreter_frame(prologue_only.self()), nullptr);
}

TEST(InterpreterFrames, ACodeObjectsFieldsAndTheirContentsAreReadInPlace) {
  Code code(0);
  std::vector<unsigned char> file(layout::kStrAsciiData + 16, 0), name(layout::kStrAsciiData + 8, 0),
      table(layout::kBytesData + 4, 0), type_tag(8, 0);
  put(code.bytes, layout::kCodeFilename, static_cast<const void*>(file.data()));
  put(code.bytes, layout::kCodeName, static_cast<const void*>(name.data()));
  put(code.bytes, layout::kCodeLineTable, static_cast<const void*>(table.data()));
  put(code.bytes, layout::kCodeFirstLine, 42);
  const InterpreterCodeFields fields = interpreter_code_fields(code.self());
  EXPECT_EQ(fields.filename, file.data());
  EXPECT_EQ(fields.name, name.data());
  EXPECT_EQ(fields.line_table, table.data());
  EXPECT_EQ(fields.first_line, 42);
  put(file, layout::kObjectType, static_cast<const void*>(type_tag.data()));
  EXPECT_EQ(python_object_type(file.data()), type_tag.data());

  // "/m/a.py": a compact ASCII str (state byte 0xE4, interned bits either way); not when any of
  // compact, ascii or ready is off, or the kind is not one byte a character.
  put(file, layout::kStrLength, std::int64_t{7});
  std::memcpy(file.data() + layout::kStrAsciiData, "/m/a.py", 7);
  std::string_view text;
  for (unsigned char state : {0xE4, 0xE5, 0xE7}) {
    put(file, layout::kStrState, state);
    ASSERT_TRUE(compact_ascii_text(file.data(), text)) << int(state);
    EXPECT_EQ(text, "/m/a.py");
  }
  for (unsigned char state : {0xA4, 0xC4, 0x64, 0xE8, 0xF0, 0x00}) {
    put(file, layout::kStrState, state);
    EXPECT_FALSE(compact_ascii_text(file.data(), text)) << int(state);
  }
  put(file, layout::kStrState, static_cast<unsigned char>(0xE4));
  put(file, layout::kStrLength, std::int64_t{-1});
  EXPECT_FALSE(compact_ascii_text(file.data(), text));

  put(table, layout::kBytesSize, std::int64_t{3});
  std::memcpy(table.data() + layout::kBytesData, "\x80\x01\x02", 3);
  EXPECT_EQ(bytes_contents(table.data()), std::string_view("\x80\x01\x02", 3));
  put(table, layout::kBytesSize, std::int64_t{-2});
  EXPECT_TRUE(bytes_contents(table.data()).empty());
}
