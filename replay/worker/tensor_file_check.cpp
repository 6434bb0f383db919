#include "tensor_file_check.hpp"

#include "io/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <memory>
#include <unordered_map>

namespace acccheck::replay {

namespace {

std::uint32_t le32(const std::vector<char>& b, std::size_t at) {
  return static_cast<std::uint32_t>(static_cast<unsigned char>(b[at])) |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 1])) << 8 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 2])) << 16 |
         static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + 3])) << 24;
}
std::uint16_t le16(const std::vector<char>& b, std::size_t at) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(b[at]) | static_cast<unsigned char>(b[at + 1]) << 8);
}
std::uint64_t le64(const std::vector<char>& b, std::size_t at) {
  return static_cast<std::uint64_t>(le32(b, at)) | static_cast<std::uint64_t>(le32(b, at + 4)) << 32;
}

// ---- the zip container -------------------------------------------------------------------------

struct ZipRecord {
  std::uint64_t offset = 0, size = 0;
};

// The archive's records by name. LibTorch names them relative to the archive folder, which is the
// first central-directory entry's folder (PyTorchStreamReader): `<archive>/data.pkl`, `<archive>/data/<key>`.
struct ZipIndex {
  std::string archive;
  std::map<std::string, ZipRecord> records;

  const ZipRecord* find(const std::string& relative) const {
    auto it = records.find(archive + "/" + relative);
    return it == records.end() ? nullptr : &it->second;
  }
};

// The structure of the zip container a .pt file is (torch.save writes zip64 records), checked
// before LibTorch reads it: LibTorch 1.13's zip reader (miniz) reads out of bounds on some
// malformed directories, and allocates a record by its declared uncompressed size (4 GB, then a
// read past the buffer). Returns why the bytes are not a well-formed zip, or "".
std::string zip_problem(const std::vector<char>& b, ZipIndex& index) {
  const std::uint64_t n = b.size();
  if (n < 22) return "too short for a zip archive";
  std::size_t eocd = std::string::npos;
  for (std::size_t i = static_cast<std::size_t>(n - 22) + 1; i-- > (n > 65557 ? n - 65557 : 0);)
    if (le32(b, i) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd == std::string::npos) return "no zip end-of-central-directory record";
  std::uint64_t entries = le16(b, eocd + 10), cd_size = le32(b, eocd + 12), cd_offset = le32(b, eocd + 16);
  std::uint64_t cd_limit = eocd;
  if (eocd >= 20 && le32(b, eocd - 20) == 0x07064b50) {  // zip64 locator → zip64 end record
    const std::uint64_t z = le64(b, eocd - 20 + 8);
    if (z + 56 > eocd - 20 || le32(b, static_cast<std::size_t>(z)) != 0x06064b50) return "broken zip64 end record";
    entries = le64(b, static_cast<std::size_t>(z) + 32);
    cd_size = le64(b, static_cast<std::size_t>(z) + 40);
    cd_offset = le64(b, static_cast<std::size_t>(z) + 48);
    cd_limit = z;
  }
  if (cd_offset > cd_limit || cd_size > cd_limit - cd_offset) return "central directory outside the file";
  if (entries > cd_size / 46) return "more entries than the central directory can hold";
  std::uint64_t at = cd_offset;
  const std::uint64_t cd_end = cd_offset + cd_size;
  for (std::uint64_t e = 0; e < entries; ++e) {
    const std::string which = "entry " + std::to_string(e);
    if (at + 46 > cd_end || le32(b, static_cast<std::size_t>(at)) != 0x02014b50) return "central directory " + which + " is malformed";
    const std::size_t h = static_cast<std::size_t>(at);
    std::uint64_t compressed = le32(b, h + 20), uncompressed = le32(b, h + 24), local = le32(b, h + 42);
    const std::uint16_t name_len = le16(b, h + 28), extra_len = le16(b, h + 30), comment_len = le16(b, h + 32);
    if (at + 46 + name_len + extra_len + comment_len > cd_end) return "central directory " + which + " overruns it";
    // zip64 extra field (id 1): the 64-bit values of the fields set to 0xffffffff, in order.
    for (std::uint64_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) {
      const std::uint16_t id = le16(b, static_cast<std::size_t>(x)), len = le16(b, static_cast<std::size_t>(x) + 2);
      if (x + 4 + len > at + 46 + name_len + extra_len) return which + " has a broken extra field";
      if (id == 1) {
        std::uint64_t p = x + 4, end = x + 4 + len;
        auto take = [&](std::uint64_t& field) {
          if (field != 0xffffffffu) return true;
          if (p + 8 > end) return false;
          field = le64(b, static_cast<std::size_t>(p));
          p += 8;
          return true;
        };
        if (!take(uncompressed) || !take(compressed) || !take(local)) return which + " has a broken zip64 field";
      }
      x += 4 + len;
    }
    // torch.save stores its records uncompressed; LibTorch allocates by the declared size.
    if (le16(b, h + 10) != 0) return which + " is compressed (torch.save stores its records)";
    if (uncompressed != compressed)
      return which + " declares " + std::to_string(uncompressed) + " bytes but stores " + std::to_string(compressed);
    if (local > cd_offset || cd_offset - local < 30 || le32(b, static_cast<std::size_t>(local)) != 0x04034b50)
      return which + " points outside the file";
    const std::uint64_t data = local + 30 + le16(b, static_cast<std::size_t>(local) + 26) + le16(b, static_cast<std::size_t>(local) + 28);
    if (data > cd_offset || compressed > cd_offset - data) return which + "'s data lies outside the file";
    std::string name(b.data() + h + 46, name_len);
    if (e == 0) {
      const std::size_t slash = name.find('/');
      if (slash == std::string::npos) return "the first record '" + name + "' is not inside an archive folder";
      index.archive = name.substr(0, slash);
    }
    if (!index.records.emplace(name, ZipRecord{data, compressed}).second) return "two records named '" + name + "'";
    at += 46u + name_len + extra_len + comment_len;
  }
  return "";
}

// ---- the pickle ----------------------------------------------------------------------------------
// LibTorch's unpickler runs a pickle's opcodes on a stack of values and checks little of what it
// pops (1.13: a bad free inside pickle_load on a pickle whose opcodes do not fit its stack), so
// the program is run here first on a model of that stack: what kind of value each slot holds,
// the marks, the memo. Only what torch.save (and LibTorch's pickle_save) write for one tensor is
// accepted: protocol 2, the opcodes below, the globals torch._utils._rebuild_tensor_v2,
// collections.OrderedDict and torch.<Type>Storage, the arguments they are called with, and a
// metadata dict of string keys and bool values.

enum class Kind { none, boolean, integer, floating, string, tuple, dict, storage_type, rebuild_tensor, rebuild_tensor_v3,
                  dtype, ordered_dict, storage, tensor };

struct Value;
using ValuePtr = std::shared_ptr<const Value>;
struct Value {
  Kind kind = Kind::none;
  std::int64_t integer = 0;     // integer; storage_type, dtype: bytes per element; storage: bytes
  std::int64_t item_size = 0;   // storage: bytes per element (1 for an untyped storage)
  std::string text;             // string: its bytes, when short (the only strings read are short);
                                // storage: its record; dtype: its name
  bool long_text = false;
  std::vector<ValuePtr> items;  // tuple
  int depth = 0;                // tuple: how deeply tuples nest in it
};

std::shared_ptr<Value> make(Kind k, std::int64_t integer = 0) {
  auto v = std::make_shared<Value>();
  v->kind = k;
  v->integer = integer;
  return v;
}

// Tuples nest two deep in a tensor's pickle (the arguments, holding the sizes); deeper ones are
// refused so that no value's destruction recurses without bound.
constexpr int kMaxTupleDepth = 4;
constexpr std::size_t kMaxKeptString = 256;
// A tensor's elements: sizes whose product passes this are not a tensor anyone dumped.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 48;

std::int64_t storage_item_size(const std::string& cls) {
  static const std::map<std::string, std::int64_t> sizes = {
      {"DoubleStorage", 8}, {"FloatStorage", 4}, {"HalfStorage", 2}, {"BFloat16Storage", 2},
      {"LongStorage", 8},   {"IntStorage", 4},   {"ShortStorage", 2}, {"CharStorage", 1},
      {"ByteStorage", 1},   {"BoolStorage", 1},  {"ComplexFloatStorage", 8}, {"ComplexDoubleStorage", 16}};
  auto it = sizes.find(cls);
  return it == sizes.end() ? 0 : it->second;
}

// The dtypes torch 2.x saves through _rebuild_tensor_v3 (GLOBAL 'torch <name>'): no typed storage
// class holds them.
std::int64_t untyped_dtype_item_size(const std::string& name) {
  static const std::map<std::string, std::int64_t> sizes = {
      {"uint16", 2}, {"uint32", 4}, {"uint64", 8}, {"float8_e4m3fn", 1}, {"float8_e5m2", 1},
      {"float8_e4m3fnuz", 1}, {"float8_e5m2fnuz", 1}, {"float8_e8m0fnu", 1}, {"complex32", 4}};
  auto it = sizes.find(name);
  return it == sizes.end() ? 0 : it->second;
}

bool is_integer_tuple(const Value& v) {
  if (v.kind != Kind::tuple) return false;
  for (const auto& i : v.items)
    if (i->kind != Kind::integer) return false;
  return true;
}

bool is_short_string(const Value& v) { return v.kind == Kind::string && !v.long_text; }

// A device string LibTorch's at::Device parses: "cpu", "cuda:0".
bool plausible_location(const std::string& s) {
  if (s.empty() || s.size() > 32) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ':' || c == '_')) return false;
  return true;
}

class PickleCheck {
 public:
  PickleCheck(const std::vector<char>& bytes, const ZipRecord& pickle, const ZipIndex& zip, TensorFileLayout& layout)
      : p_(reinterpret_cast<const unsigned char*>(bytes.data()) + pickle.offset), n_(pickle.size),
        file_size_(bytes.size()), zip_(zip), layout_(layout) {}

  std::string run() {
    if (n_ < 2 || p_[0] != 0x80) return "the pickle does not begin with PROTO";
    if (p_[1] != 2) return "pickle protocol " + std::to_string(p_[1]) + " (LibTorch reads protocol 2)";
    i_ = 2;
    while (i_ < n_) {
      const unsigned char op = p_[i_++];
      op_at_ = i_ - 1;
      if (op == '.') return stop();
      std::string why = step(op);
      if (!why.empty()) return why + where();
    }
    return "no STOP opcode";
  }

 private:
  const unsigned char* p_;
  std::uint64_t n_, i_ = 0;
  std::uint64_t file_size_;
  const ZipIndex& zip_;
  TensorFileLayout& layout_;
  std::uint64_t op_at_ = 0;  // the offset of the opcode being run, for the error (built only then)
  std::vector<ValuePtr> stack_;
  std::vector<std::size_t> marks_;
  std::unordered_map<std::uint64_t, ValuePtr> memo_;

  std::string where() const { return " at byte " + std::to_string(op_at_) + " of the pickle"; }
  bool need(std::uint64_t k) const { return k <= n_ - i_; }
  std::uint64_t uint_le(std::uint64_t k) {
    std::uint64_t v = 0;
    for (std::uint64_t j = 0; j < k; ++j) v |= static_cast<std::uint64_t>(p_[i_ + j]) << (8 * j);
    i_ += k;
    return v;
  }
  bool line(std::string& out) {  // a newline-terminated argument
    const std::uint64_t start = i_;
    while (i_ < n_ && p_[i_] != '\n') ++i_;
    if (i_ == n_) return false;
    out.assign(reinterpret_cast<const char*>(p_ + start), static_cast<std::size_t>(i_ - start));
    ++i_;
    return true;
  }
  // Values above the innermost mark: what an opcode other than TUPLE may take.
  std::size_t free_values() const { return stack_.size() - (marks_.empty() ? 0 : marks_.back()); }

  std::string push(ValuePtr v) {
    stack_.push_back(std::move(v));
    return "";
  }

  std::string step(unsigned char op) {
    switch (op) {
      case 'N': return push(make(Kind::none));
      case 0x88: return push(make(Kind::boolean, 1));
      case 0x89: return push(make(Kind::boolean, 0));
      case ')': return push(make(Kind::tuple));
      case '}': return push(make(Kind::dict));
      case '(':
        marks_.push_back(stack_.size());
        return "";
      case 'K': case 'M': case 'J': {
        const std::uint64_t k = op == 'K' ? 1 : op == 'M' ? 2 : 4;
        if (!need(k)) return "truncated integer";
        std::uint64_t v = uint_le(k);
        return push(make(Kind::integer, op == 'J' ? static_cast<std::int32_t>(v) : static_cast<std::int64_t>(v)));
      }
      case 0x8a: {  // LONG1
        if (!need(1)) return "truncated integer";
        const std::uint64_t k = p_[i_++];
        if (k != 8) return "an integer of " + std::to_string(k) + " bytes (LibTorch reads 8-byte ones only)";
        if (!need(8)) return "truncated integer";
        return push(make(Kind::integer, static_cast<std::int64_t>(uint_le(8))));
      }
      case 'G':
        if (!need(8)) return "truncated float";
        i_ += 8;
        return push(make(Kind::floating));
      case 'X': {  // BINUNICODE
        if (!need(4)) return "truncated length";
        const std::uint64_t k = uint_le(4);
        if (!need(k)) return "a string of " + std::to_string(k) + " bytes in a " + std::to_string(n_) + "-byte pickle";
        auto v = std::make_shared<Value>();
        v->kind = Kind::string;
        if (k <= kMaxKeptString) v->text.assign(reinterpret_cast<const char*>(p_ + i_), static_cast<std::size_t>(k));
        else v->long_text = true;
        i_ += k;
        return push(std::move(v));
      }
      case 'q': case 'r': {  // BINPUT, LONG_BINPUT
        const std::uint64_t k = op == 'q' ? 1 : 4;
        if (!need(k)) return "truncated memo index";
        const std::uint64_t id = uint_le(k);
        // LibTorch's memo is a vector grown to the index: an index is bounded by the file's size.
        if (id > file_size_) return "a memo index of " + std::to_string(id) + " in a " + std::to_string(file_size_) + "-byte file";
        if (stack_.empty()) return "BINPUT on an empty stack";
        memo_[id] = stack_.back();
        return "";
      }
      case 'h': case 'j': {  // BINGET, LONG_BINGET
        const std::uint64_t k = op == 'h' ? 1 : 4;
        if (!need(k)) return "truncated memo index";
        const std::uint64_t id = uint_le(k);
        auto it = memo_.find(id);
        if (it == memo_.end()) return "memo index " + std::to_string(id) + " read before it was written";
        return push(it->second);
      }
      case 't': {  // TUPLE: everything above the innermost mark
        if (marks_.empty()) return "TUPLE without a MARK";
        const std::size_t start = marks_.back();
        marks_.pop_back();
        return make_tuple(stack_.size() - start);
      }
      case 0x85: case 0x86: case 0x87: {  // TUPLE1..3
        const std::size_t k = static_cast<std::size_t>(op - 0x84);
        if (free_values() < k) return "TUPLE" + std::to_string(k) + " on " + std::to_string(free_values()) + " values";
        return make_tuple(k);
      }
      case 'u': return set_items();
      case 's': return set_item();
      case 'c': return global();
      case 'Q': return persistent_id();
      case 'R': return reduce();
      default: {
        static const char* hex = "0123456789abcdef";
        return std::string("opcode 0x") + hex[op >> 4] + hex[op & 15] + " (not one torch.save writes for a tensor)";
      }
    }
  }

  std::string make_tuple(std::size_t k) {
    auto t = std::make_shared<Value>();
    t->kind = Kind::tuple;
    t->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(k), stack_.end());
    stack_.resize(stack_.size() - k);
    for (const auto& v : t->items) t->depth = std::max(t->depth, v->kind == Kind::tuple ? v->depth + 1 : 1);
    if (t->depth > kMaxTupleDepth) return "tuples nested more than " + std::to_string(kMaxTupleDepth) + " deep";
    return push(std::move(t));
  }

  // A tensor's metadata (LibTorch 2.x and torch 2.x write its math bits, e.g. {'conj': True}, as
  // _rebuild_tensor_v2's seventh argument): string keys and bool values set into a dict.
  static bool metadata_pair(const Value& key, const Value& value) {
    return is_short_string(key) && value.kind == Kind::boolean;
  }
  // What a dict of anything else is: most often a file of several tensors (torch.save of a dict).
  static std::string not_metadata(const char* op, const Value& value) {
    if (value.kind == Kind::tensor) return std::string(op) + " of a tensor into a dict (a file of several tensors, not one)";
    return std::string(op) + " of other than string keys and bool values";
  }

  std::string set_items() {  // SETITEMS: the pairs above the innermost mark, into the dict below it
    if (marks_.empty()) return "SETITEMS without a MARK";
    const std::size_t start = marks_.back();
    if (start == 0 || stack_[start - 1]->kind != Kind::dict) return "SETITEMS without a dict below its MARK";
    if ((stack_.size() - start) % 2 != 0) return "SETITEMS on an odd number of values";
    for (std::size_t k = start; k < stack_.size(); k += 2)
      if (!metadata_pair(*stack_[k], *stack_[k + 1])) return not_metadata("SETITEMS", *stack_[k + 1]);
    marks_.pop_back();
    stack_.resize(start);
    return "";
  }

  std::string set_item() {  // SETITEM: dict, key, value → dict
    if (free_values() < 3) return "SETITEM on " + std::to_string(free_values()) + " values";
    const std::size_t n = stack_.size();
    if (stack_[n - 3]->kind != Kind::dict) return "SETITEM without a dict below its key and value";
    if (!metadata_pair(*stack_[n - 2], *stack_[n - 1])) return not_metadata("SETITEM", *stack_[n - 1]);
    stack_.resize(n - 2);
    return "";
  }

  std::string global() {
    std::string module, name;
    if (!line(module) || !line(name)) return "unterminated GLOBAL";
    if (module == "torch._utils" && name == "_rebuild_tensor_v2") return push(make(Kind::rebuild_tensor));
    if (module == "torch._utils" && name == "_rebuild_tensor_v3") return push(make(Kind::rebuild_tensor_v3));
    if (module == "collections" && name == "OrderedDict") return push(make(Kind::ordered_dict));
    if (module == "torch.storage" && name == "UntypedStorage") return push(make(Kind::storage_type, 1));
    if (module == "torch") {
      if (std::int64_t size = storage_item_size(name)) return push(make(Kind::storage_type, size));
      if (std::int64_t size = untyped_dtype_item_size(name)) {
        auto dtype = make(Kind::dtype, size);
        dtype->text = name;
        return push(std::move(dtype));
      }
    }
    return "global " + module.substr(0, 64) + "." + name.substr(0, 64) + " (not one torch.save writes for a tensor)";
  }

  // BINPERSID of ('storage', torch.<Type>Storage, key, location, numel): the storage's bytes are
  // the record <archive>/data/<key>, which must hold numel elements (LibTorch reads the record as
  // it is and sizes the storage by numel).
  std::string persistent_id() {
    if (free_values() < 1) return "BINPERSID on an empty stack";
    const Value& id = *stack_.back();
    if (id.kind != Kind::tuple || id.items.size() != 5 || !is_short_string(*id.items[0]) || id.items[0]->text != "storage" ||
        id.items[1]->kind != Kind::storage_type || !is_short_string(*id.items[2]) || !is_short_string(*id.items[3]) ||
        id.items[4]->kind != Kind::integer)
      return "a persistent id other than ('storage', type, key, location, size)";
    if (!plausible_location(id.items[3]->text)) return "storage location '" + id.items[3]->text.substr(0, 32) + "'";
    const std::int64_t item = id.items[1]->integer, numel = id.items[4]->integer;
    std::int64_t bytes = 0;
    if (numel < 0 || __builtin_mul_overflow(numel, item, &bytes)) return "a storage of " + std::to_string(numel) + " elements";
    if (numel > 0) {
      const std::string record = "data/" + id.items[2]->text;
      const ZipRecord* r = zip_.find(record);
      if (!r) return "no record " + zip_.archive + "/" + record + " for the storage";
      if (r->size < static_cast<std::uint64_t>(bytes))
        return "a storage of " + std::to_string(bytes) + " bytes in a record of " + std::to_string(r->size);
    }
    auto storage = make(Kind::storage, bytes);
    storage->item_size = item;
    storage->text = zip_.archive + "/data/" + id.items[2]->text;
    stack_.back() = std::move(storage);
    return "";
  }

  std::string reduce() {
    if (free_values() < 2) return "REDUCE on " + std::to_string(free_values()) + " values";
    const Value& callable = *stack_[stack_.size() - 2];
    const Value& args = *stack_.back();
    if (args.kind != Kind::tuple) return "REDUCE without an argument tuple";
    ValuePtr result;
    if (callable.kind == Kind::ordered_dict) {
      if (!args.items.empty()) return "OrderedDict called with arguments";
      result = make(Kind::dict);
    } else if (callable.kind == Kind::rebuild_tensor) {
      std::string why = rebuilt_tensor_problem(args, false);
      if (!why.empty()) return why;
      result = make(Kind::tensor);
    } else if (callable.kind == Kind::rebuild_tensor_v3) {
      std::string why = rebuilt_tensor_problem(args, true);
      if (!why.empty()) return why;
      note_layout(args);
      result = make(Kind::tensor);
    } else {
      return "REDUCE of a value that is not a function torch.save calls";
    }
    stack_.resize(stack_.size() - 2);
    return push(std::move(result));
  }

  // _rebuild_tensor_v2(storage, offset, sizes, strides, requires_grad, hooks[, metadata]) and
  // _rebuild_tensor_v3(untyped storage, offset, sizes, strides, requires_grad, hooks, dtype[,
  // metadata]): the view must lie inside the storage (LibTorch sets sizes and strides without
  // looking; acccheck's own reader of v3 files relies on this too).
  static std::string rebuilt_tensor_problem(const Value& args, bool v3) {
    const auto& a = args.items;
    const char* fn = v3 ? "_rebuild_tensor_v3" : "_rebuild_tensor_v2";
    const std::size_t n = v3 ? 7 : 6;
    if (a.size() != n && a.size() != n + 1) return std::string(fn) + " called with " + std::to_string(a.size()) + " arguments";
    if (a[0]->kind != Kind::storage || a[1]->kind != Kind::integer || !is_integer_tuple(*a[2]) || !is_integer_tuple(*a[3]) ||
        a[4]->kind != Kind::boolean || a[5]->kind != Kind::dict || (v3 && a[6]->kind != Kind::dtype) ||
        (a.size() == n + 1 && a[n]->kind != Kind::dict))
      return std::string(fn) + " called with arguments other than (storage, offset, sizes, strides, requires_grad, hooks" +
             (v3 ? ", dtype)" : ")");
    if (v3 && a[0]->item_size != 1) return "_rebuild_tensor_v3 of a typed storage";
    // The element size: the storage's own, or for an untyped (byte) storage the dtype's.
    const std::int64_t item_size = v3 ? a[6]->integer : a[0]->item_size;
    const auto& sizes = a[2]->items;
    const auto& strides = a[3]->items;
    if (sizes.size() != strides.size()) return "a tensor with " + std::to_string(sizes.size()) + " sizes and " + std::to_string(strides.size()) + " strides";
    const std::int64_t offset = a[1]->integer;
    if (offset < 0) return "a negative storage offset";
    std::int64_t elements = 1, last = offset;  // the view's element count and its last element's index
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      const std::int64_t size = sizes[d]->integer, stride = strides[d]->integer;
      if (size < 0 || stride < 0) return "a negative size or stride";
      if (__builtin_mul_overflow(elements, size, &elements) || elements > kMaxElements)
        return "a tensor of more than 2^48 elements";
      std::int64_t reach = 0;
      if (size > 0 && (__builtin_mul_overflow(size - 1, stride, &reach) || __builtin_add_overflow(last, reach, &last)))
        return "a view beyond any storage";
    }
    if (elements == 0) return "";
    std::int64_t end = 0;
    if (__builtin_add_overflow(last, 1, &end) || __builtin_mul_overflow(end, item_size, &end) || end > a[0]->integer)
      return "a view of the storage's elements up to index " + std::to_string(last) + " in a storage of " +
             std::to_string(a[0]->integer) + " bytes";
    return "";
  }

  // What acccheck's own reader needs of a v3 tensor (already checked: inside its storage).
  void note_layout(const Value& args) {
    const auto& a = args.items;
    layout_.untyped = true;
    layout_.record = a[0]->text;
    if (const ZipRecord* r = zip_.find(a[0]->text.substr(zip_.archive.size() + 1))) layout_.record_offset = r->offset;
    layout_.dtype = a[6]->text;
    layout_.item_size = a[6]->integer;
    layout_.storage_offset = a[1]->integer;
    layout_.sizes.clear();
    layout_.strides.clear();
    for (const auto& v : a[2]->items) layout_.sizes.push_back(v->integer);
    for (const auto& v : a[3]->items) layout_.strides.push_back(v->integer);
  }

  std::string stop() {
    if (!marks_.empty()) return "STOP with a MARK open" + where();
    if (stack_.size() != 1 || stack_.back()->kind != Kind::tensor)
      return "the pickle ends with " + std::to_string(stack_.size()) + " values, not one tensor";
    return "";
  }
};

}  // namespace

std::string tensor_file_problem(const std::vector<char>& bytes, TensorFileLayout& layout) {
  layout = TensorFileLayout{};
  ZipIndex zip;
  std::string why = zip_problem(bytes, zip);
  if (!why.empty()) return why;
  const ZipRecord* pickle = zip.find("data.pkl");
  if (!pickle) return "no " + zip.archive + "/data.pkl record";
  return PickleCheck(bytes, *pickle, zip, layout).run();
}

std::string tensor_file_problem(const std::vector<char>& bytes) {
  TensorFileLayout layout;
  return tensor_file_problem(bytes, layout);
}

std::uint64_t dtype_item_size(const std::string& d) {
  static const std::map<std::string, std::uint64_t> sizes = {
      {"torch.float16", 2}, {"torch.half", 2},     {"torch.bfloat16", 2},   {"torch.float32", 4},   {"torch.float", 4},
      {"torch.float64", 8}, {"torch.double", 8},   {"torch.int64", 8},      {"torch.long", 8},      {"torch.int32", 4},
      {"torch.int", 4},     {"torch.int16", 2},    {"torch.short", 2},      {"torch.int8", 1},      {"torch.uint8", 1},
      {"torch.bool", 1},    {"torch.uint16", 2},   {"torch.uint32", 4},     {"torch.uint64", 8},    {"torch.complex64", 8},
      {"torch.complex128", 16}, {"torch.complex32", 4}, {"torch.float8_e4m3fn", 1}, {"torch.float8_e5m2", 1},
      {"torch.float8_e4m3fnuz", 1}, {"torch.float8_e5m2fnuz", 1}};
  auto it = sizes.find(d);
  return it == sizes.end() ? 8 : it->second;
}

std::uint64_t tensor_bytes(const std::vector<std::int64_t>& shape, const std::string& torch_dtype) {
  std::uint64_t elements = 1;
  for (auto d : shape) elements *= static_cast<std::uint64_t>(std::max<std::int64_t>(d, 0));
  return elements * dtype_item_size(torch_dtype);
}

std::vector<char> read_real_data_file(const std::string& folder, const std::string& data_name,
                                      std::uint64_t expected_bytes, bool allow_outside) {
  namespace fs = std::filesystem;
  const std::string path = (fs::path(folder) / data_name).string();
  if (data_name.find('\0') != std::string::npos)
    throw std::runtime_error(folder + ": field 'data_name' holds a NUL byte (a file name never does)");
  if (path.size() < 3 || path.compare(path.size() - 3, 3, ".pt") != 0)
    throw std::runtime_error(path + ": real data must be a .pt file");
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec)))
    throw std::runtime_error(path + ": tensor file missing (named by field 'data_name')");
  const fs::path real = fs::canonical(path, ec);
  if (ec) throw std::runtime_error(path + ": " + ec.message());
  if (!allow_outside) {
    const fs::path root = fs::canonical(folder, ec);
    const auto rel = ec ? fs::path() : real.lexically_relative(root);
    if (ec || rel.empty() || rel.native().rfind("..", 0) == 0)
      throw std::runtime_error(path + ": outside the dump's folder " + folder +
                               " (run_ut --allow-outside-dump reads it anyway)");
  }
  struct stat st {};
  if (::stat(real.c_str(), &st) != 0) throw std::runtime_error(path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw std::runtime_error(path + ": not a regular file (a FIFO, a device or a folder); not read");
  const std::uint64_t bound = 4 * expected_bytes + (std::uint64_t{64} << 20);
  auto too_large = [&](std::uint64_t size) {
    return std::runtime_error(path + ": " + std::to_string(size) + " bytes for a tensor of " + std::to_string(expected_bytes) +
                              " bytes (its shape and dtype in the dump); refused before reading");
  };
  if (static_cast<std::uint64_t>(st.st_size) > bound) throw too_large(static_cast<std::uint64_t>(st.st_size));
  // Read from what was opened (the file could be replaced between the checks and the read):
  // O_NONBLOCK keeps a FIFO put there meanwhile from blocking the open; fstat checks it again.
  core::RegularFile file(real.string(), O_NOFOLLOW);
  if (!file.ok() && file.error() != 0) throw std::runtime_error(path + ": cannot open: " + std::strerror(file.error()));
  if (!file.ok() || file.size() > bound) throw std::runtime_error(path + ": changed while it was checked; not read");
  return file.read_bytes(file.size());
}

}  // namespace acccheck::replay
