// Output files are written to a temporary file in the destination folder and renamed into place
// on commit(), so a crash or an error never leaves a half-written output under the final name.
// A destination that is a symbolic link is refused (never followed).
#pragma once

#include <string>
#include <string_view>

namespace acccheck {

class AtomicOutputFile {
 public:
  // Throws std::runtime_error "<path>: <reason>" (symlink, missing folder, not writable).
  explicit AtomicOutputFile(std::string path, unsigned mode = 0640);
  ~AtomicOutputFile();  // not committed → the temporary file is removed
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  void write(std::string_view bytes);
  void flush();  // push buffered bytes to the temporary file
  void commit(); // prepare() then publish()
  // Outputs that belong together (a result file and its details file) appear together or not at
  // all: prepare() every file (flush, fsync, close: where a full disk shows up), then publish()
  // every file (rename into place). A failure before the first publish leaves no new file.
  void prepare();
  void publish();
  const std::string& path() const { return path_; }

 private:
  std::string path_, temp_path_;
  int fd_ = -1;
  std::string buffer_;
  bool committed_ = false;
  int slot_ = -1;  // in the signal handler's list of temporaries
};

// SIGINT, SIGTERM and SIGHUP remove the temporary files of every AtomicOutputFile still open, then
// the signal takes its default action (installed with the first AtomicOutputFile).

// Throws "<path>: refusing to write through a symbolic link" when path is a symlink.
void refuse_symlink_destination(const std::string& path);

// Whether a folder given for outputs is a symbolic link, trailing slashes ignored: "linkdir/" names
// the link's target to the kernel (lstat follows it), so a check of "linkdir/" as given would pass.
bool is_symlinked_folder(const std::string& path);

}  // namespace acccheck
