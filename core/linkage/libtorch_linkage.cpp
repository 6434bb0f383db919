#include "libtorch_linkage.hpp"

#include <elf.h>
#include <fcntl.h>
#include <glob.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <vector>

namespace acccheck::core {

namespace {

namespace fs = std::filesystem;

bool is_libtorch_cpu(const std::string& name) {
  return fs::path(name).filename().string().rfind("libtorch_cpu.so", 0) == 0;
}

// What the dynamic linker reads of one object: its DT_NEEDED names and search paths.
struct DynamicInfo {
  std::vector<std::string> needed;
  std::vector<std::string> rpath, runpath;
  bool has_runpath = false;
};

class File {
 public:
  explicit File(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  bool read(void* out, std::size_t n, std::uint64_t offset) const {
    return fd_ >= 0 && ::pread(fd_, out, n, static_cast<off_t>(offset)) == static_cast<ssize_t>(n);
  }

 private:
  int fd_;
};

std::vector<std::string> split_paths(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i)
    if (i == list.size() || list[i] == ':' || list[i] == ';') {
      if (i > start) out.push_back(list.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

// Reads a 64-bit ELF object's dynamic section (the only kind a LibTorch comes as); nothing for
// anything else. Offsets come from the file and are checked against what was read.
std::optional<DynamicInfo> read_dynamic(const std::string& path) {
  File f(path);
  Elf64_Ehdr eh{};
  if (!f.read(&eh, sizeof eh, 0) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 512)
    return std::nullopt;
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  if (!f.read(ph.data(), ph.size() * sizeof(Elf64_Phdr), eh.e_phoff)) return std::nullopt;
  const Elf64_Phdr* dynamic = nullptr;
  for (const auto& p : ph)
    if (p.p_type == PT_DYNAMIC) dynamic = &p;
  if (!dynamic || dynamic->p_filesz > (1u << 20)) return DynamicInfo{};  // static: needs nothing
  std::vector<Elf64_Dyn> dyn(dynamic->p_filesz / sizeof(Elf64_Dyn));
  if (!f.read(dyn.data(), dyn.size() * sizeof(Elf64_Dyn), dynamic->p_offset)) return std::nullopt;
  std::uint64_t strtab = 0, strsz = 0;
  std::vector<std::uint64_t> needed;
  std::optional<std::uint64_t> rpath, runpath;
  for (const auto& d : dyn) {
    if (d.d_tag == DT_NULL) break;
    switch (d.d_tag) {
      case DT_STRTAB: strtab = d.d_un.d_ptr; break;
      case DT_STRSZ: strsz = d.d_un.d_val; break;
      case DT_NEEDED: needed.push_back(d.d_un.d_val); break;
      case DT_RPATH: rpath = d.d_un.d_val; break;
      case DT_RUNPATH: runpath = d.d_un.d_val; break;
      default: break;
    }
  }
  if (strsz == 0 || strsz > (16u << 20)) return DynamicInfo{};
  // The string table's address → its place in the file, through the segment that maps it.
  std::optional<std::uint64_t> at;
  for (const auto& p : ph)
    if (p.p_type == PT_LOAD && strtab >= p.p_vaddr && strtab + strsz <= p.p_vaddr + p.p_filesz)
      at = p.p_offset + (strtab - p.p_vaddr);
  if (!at) return std::nullopt;
  std::string strings(strsz, '\0');
  if (!f.read(strings.data(), strsz, *at)) return std::nullopt;
  auto string_at = [&](std::uint64_t off) -> std::string {
    if (off >= strings.size()) return "";
    return std::string(strings.c_str() + off);
  };
  DynamicInfo info;
  for (auto off : needed) info.needed.push_back(string_at(off));
  if (rpath) info.rpath = split_paths(string_at(*rpath));
  if (runpath) {
    info.runpath = split_paths(string_at(*runpath));
    info.has_runpath = true;
  }
  return info;
}

std::string expand_origin(std::string dir, const std::string& origin) {
  for (const char* token : {"${ORIGIN}", "$ORIGIN"})
    for (std::size_t p; (p = dir.find(token)) != std::string::npos;) dir.replace(p, std::strlen(token), origin);
  return dir;
}

// The directories /etc/ld.so.cache is built from (ld.so.conf and what it includes), then the
// default ones: where a name no RPATH, LD_LIBRARY_PATH or RUNPATH names is found.
void read_ld_so_conf(const std::string& file, std::vector<std::string>& out, int depth) {
  if (depth > 8) return;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find('#'));
    auto b = line.find_first_not_of(" \t"), e = line.find_last_not_of(" \t\r");
    if (b == std::string::npos) continue;
    line = line.substr(b, e - b + 1);
    if (line.rfind("include", 0) == 0 && line.size() > 7 && (line[7] == ' ' || line[7] == '\t')) {
      std::string pattern = line.substr(line.find_first_not_of(" \t", 7));
      if (pattern[0] != '/') pattern = fs::path(file).parent_path().string() + "/" + pattern;
      glob_t g{};
      if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
        for (std::size_t i = 0; i < g.gl_pathc; ++i) read_ld_so_conf(g.gl_pathv[i], out, depth + 1);
      ::globfree(&g);
    } else if (line[0] == '/') {
      out.push_back(line);
    }
  }
}

const std::vector<std::string>& system_dirs() {
  static const std::vector<std::string> dirs = [] {
    std::vector<std::string> d;
    read_ld_so_conf("/etc/ld.so.conf", d, 0);
#if defined(__x86_64__)
    const char* triplet = "x86_64-linux-gnu";
#elif defined(__aarch64__)
    const char* triplet = "aarch64-linux-gnu";
#else
    const char* triplet = nullptr;
#endif
    if (triplet) {
      d.push_back(std::string("/lib/") + triplet);
      d.push_back(std::string("/usr/lib/") + triplet);
    }
    for (const char* x : {"/lib64", "/usr/lib64", "/lib", "/usr/lib"}) d.push_back(x);
    return d;
  }();
  return dirs;
}

struct Node {
  std::string path;
  std::vector<std::string> inherited_rpath;  // the loaders' DT_RPATH (used while there is no RUNPATH)
};

// Where the dynamic linker finds `name` for a file with `info` (its own RPATH chain or RUNPATH, then,
// unless `own_paths_only`, LD_LIBRARY_PATH and the system directories).
std::optional<std::string> search(const std::string& name, const std::vector<std::string>& rpath_chain,
                                  const DynamicInfo* info, const std::string& origin, bool own_paths_only = false) {
  std::vector<std::string> dirs;
  if (!info || !info->has_runpath) {
    for (const auto& d : rpath_chain) dirs.push_back(d);
  }
  if (const char* llp = std::getenv("LD_LIBRARY_PATH"); llp && !own_paths_only)
    for (const auto& d : split_paths(llp)) dirs.push_back(d);
  if (info && info->has_runpath)
    for (const auto& d : info->runpath) dirs.push_back(expand_origin(d, origin));
  if (!own_paths_only)
    for (const auto& d : system_dirs()) dirs.push_back(d);
  for (const auto& d : dirs) {
    std::error_code ec;
    fs::path candidate = fs::path(d) / name;
    if (fs::is_regular_file(candidate, ec) && read_dynamic(candidate.string())) return candidate.string();
  }
  return std::nullopt;
}

std::string canonical_or_self(const std::string& p) {
  std::error_code ec;
  auto c = fs::canonical(p, ec);
  return ec ? p : c.string();
}

std::optional<ForeignLibTorch> if_foreign(const std::string& library, const std::string& ours, const std::string& near) {
  std::string canonical = canonical_or_self(library);
  if (canonical == ours) return std::nullopt;
  return ForeignLibTorch{canonical, libtorch_version(canonical, near)};
}

}  // namespace

std::optional<ForeignLibTorch> foreign_libtorch(const std::string& file, const std::string& ours,
                                                const std::set<std::string>& loaded) {
  std::string start = file;
  if (file.find('/') == std::string::npos) {
    if (loaded.count(file) && !is_libtorch_cpu(file)) return std::nullopt;
    auto found = search(file, {}, nullptr, "");
    if (!found) return std::nullopt;
    start = *found;
  }
  if (is_libtorch_cpu(start)) return if_foreign(start, ours, file);
  std::deque<Node> todo{{start, {}}};
  std::set<std::string> seen;
  while (!todo.empty() && seen.size() < 256) {
    Node node = std::move(todo.front());
    todo.pop_front();
    if (!seen.insert(canonical_or_self(node.path)).second) continue;
    auto info = read_dynamic(node.path);
    if (!info) continue;
    const std::string origin = fs::path(node.path).parent_path().string();
    std::vector<std::string> chain = node.inherited_rpath;
    for (const auto& d : info->rpath) chain.push_back(expand_origin(d, origin));
    for (const auto& name : info->needed) {
      const bool torch = is_libtorch_cpu(name);
      // What is loaded is reused, not searched for; a libtorch_cpu is looked up as this file asks.
      if (!torch && loaded.count(name)) continue;
      std::optional<std::string> found;
      if (name.find('/') != std::string::npos) found = name;
      // A libtorch_cpu loaded under this name is reused unless the file's own RPATH / RUNPATH leads
      // to another one (a library of another torch, built for it). A PyPI extension's RPATH names
      // its build machine's folders: it relies on torch being loaded, and a libtorch_cpu found in
      // the system folders (Debian's libtorch-dev) is not what it gets.
      else found = search(name, chain, &*info, origin, /*own_paths_only=*/torch && loaded.count(name));
      if (!found) continue;
      if (torch) {
        if (auto foreign = if_foreign(*found, ours, file)) return foreign;
        continue;  // ours: its own dependencies are acccheck's
      }
      if (loaded.count(*found) || loaded.count(canonical_or_self(*found))) continue;
      todo.push_back({*found, info->has_runpath ? std::vector<std::string>{} : chain});
    }
  }
  return std::nullopt;
}

std::string libtorch_version(const std::string& library, const std::string& near) {
  std::vector<fs::path> candidates{fs::path(library).parent_path().parent_path() / "version.py"};
  // Only the torch package's own version.py: an extension's folder has its own (torchvision's).
  if (!near.empty() && near.find('/') != std::string::npos) {
    const fs::path dir = fs::path(near).parent_path();
    for (const fs::path& d : {dir, dir.parent_path()})
      if (d.filename() == "torch") candidates.push_back(d / "version.py");
  }
  for (const auto& c : candidates) {
    std::ifstream in(c);
    for (std::string line; std::getline(in, line);)
      if (line.rfind("__version__", 0) == 0) {
        auto q = line.find_first_of("'\"");
        auto e = q == std::string::npos ? q : line.find(line[q], q + 1);
        if (e != std::string::npos) return line.substr(q + 1, e - q - 1);
      }
  }
  const std::string base = fs::path(library).filename().string();
  const std::string prefix = "libtorch_cpu.so.";
  if (base.rfind(prefix, 0) == 0 && base.size() > prefix.size()) return base.substr(prefix.size());
  return "";
}

std::string foreign_libtorch_message(const ForeignLibTorch& theirs, const std::string& our_version,
                                     const std::string& our_library) {
  std::string uses = theirs.version.empty() ? theirs.library : theirs.version + " (" + theirs.library + ")";
  return "acccheck dump: the program uses LibTorch " + uses + ", acccheck was built against LibTorch " + our_version +
         " (" + our_library + "): not dumped (rebuild acccheck against the program's LibTorch)";
}

}  // namespace acccheck::core
