#include "converter/io/torch_pickle.h"

#include <cstring>
#include <memory>
#include <utility>

#include "converter/base/error.h"

namespace edgeattn {
namespace convert {
namespace {

// Bounds on what a state dict needs, so a hostile pickle cannot make the
// parser grow without limit (each opcode creates at most one value anyway).
constexpr size_t kMaxStack = 1 << 16;
constexpr size_t kMaxMemo = 1 << 20;
constexpr size_t kMaxDims = 16;
constexpr int kMaxNesting = 32;  // containers in containers (a checkpoint nests 3 or 4)

struct Value;
using Ref = std::shared_ptr<Value>;

struct Value {
  enum Kind { kNone, kBool, kInt, kStr, kTuple, kList, kDict, kGlobal, kStorage, kTensor, kMark, kFloat };
  Kind kind = kNone;
  int64_t i = 0;
  std::string s;              // string; global "module.name"
  std::vector<Ref> items;     // tuple, list; dict as key, value, key, value...
  TorchTensorRef tensor;      // storage (key, dtype, numel) or tensor
};

const char* kind_name(Value::Kind k) {
  static const char* const kNames[] = {"None", "bool", "int", "str", "tuple", "list",
                                       "dict", "global", "storage", "tensor", "mark", "float"};
  return kNames[k];
}

struct StorageType {
  const char* name;
  TorchDType dtype;
};
const StorageType kStorageTypes[] = {
    {"torch.FloatStorage", TorchDType::kF32},  {"torch.DoubleStorage", TorchDType::kF64},
    {"torch.HalfStorage", TorchDType::kF16},   {"torch.BFloat16Storage", TorchDType::kBF16},
    {"torch.LongStorage", TorchDType::kI64},   {"torch.IntStorage", TorchDType::kI32},
    {"torch.ShortStorage", TorchDType::kI16},  {"torch.CharStorage", TorchDType::kI8},
    {"torch.ByteStorage", TorchDType::kU8},    {"torch.BoolStorage", TorchDType::kBool},
};
const char* const kCallables[] = {"collections.OrderedDict", "torch._utils._rebuild_tensor_v2",
                                  "torch._utils._rebuild_parameter"};

class Unpickler {
 public:
  Unpickler(const uint8_t* data, size_t size, const std::string& where)
      : p_(data), n_(size), where_(where) {}
  ~Unpickler() {
    for (const Ref& c : containers_) c->items.clear();
  }
  Unpickler(const Unpickler&) = delete;
  Unpickler& operator=(const Unpickler&) = delete;

  std::map<std::string, TorchTensorRef> Run() {
    while (true) {
      if (pos_ >= n_) Fail("truncated pickle (no STOP opcode)");
      op_at_ = pos_;
      const uint8_t op = p_[pos_++];
      if (op == '.') break;  // STOP
      Step(op);
    }
    const Ref root = Pop();
    if (root->kind != Value::kDict) Fail("the pickle holds a ", kind_name(root->kind), ", not a state dict");
    std::map<std::string, TorchTensorRef> out;
    Collect(root, "", 0, &out);
    return out;
  }

 private:
  template <typename... Args>
  [[noreturn]] void Fail(Args&&... args) {
    fail(where_, ": byte ", op_at_, ": ", std::forward<Args>(args)...);
  }

  // Every tensor under `v` by its dotted path: a state dict's own names at
  // the top, and a training checkpoint's nested ones (Torch-KWT's
  // {"epoch": 3, "model_state_dict": {...}, "optimizer_state_dict": {...}}
  // gives "model_state_dict.<name>"; list items and integer keys by their
  // number). Values that are no tensor (epochs, rates, flags) hold none.
  void Collect(const Ref& v, const std::string& path, int depth, std::map<std::string, TorchTensorRef>* out) {
    if (depth > kMaxNesting) Fail("containers nested deeper than ", kMaxNesting, " at '", path, "'");
    const std::string dot = path.empty() ? "" : path + ".";
    if (v->kind == Value::kTensor) {
      if (!out->emplace(path, v->tensor).second) Fail("two tensors named '", path, "'");
    } else if (v->kind == Value::kDict) {
      for (size_t k = 0; k + 1 < v->items.size(); k += 2) {
        const Ref& key = v->items[k];
        if (key->kind != Value::kStr && key->kind != Value::kInt) {
          Fail("a state dict key is a ", kind_name(key->kind), ", not a string");
        }
        Collect(v->items[k + 1], dot + (key->kind == Value::kStr ? key->s : std::to_string(key->i)), depth + 1, out);
      }
    } else if (v->kind == Value::kList || v->kind == Value::kTuple) {
      for (size_t k = 0; k < v->items.size(); ++k) Collect(v->items[k], dot + std::to_string(k), depth + 1, out);
    }
  }

  const uint8_t* Take(size_t k) {
    if (n_ - pos_ < k) Fail("truncated pickle");
    const uint8_t* q = p_ + pos_;
    pos_ += k;
    return q;
  }
  uint64_t ReadLE(size_t k) {
    const uint8_t* q = Take(k);
    uint64_t v = 0;
    for (size_t b = 0; b < k; ++b) v |= static_cast<uint64_t>(q[b]) << (8 * b);
    return v;
  }
  std::string ReadLine() {  // GLOBAL's "module\n" / "name\n"
    const size_t start = pos_;
    while (pos_ < n_ && p_[pos_] != '\n') ++pos_;
    if (pos_ >= n_) Fail("truncated pickle");
    return std::string(reinterpret_cast<const char*>(p_ + start), pos_++ - start);
  }

  void Push(Ref v) {
    if (stack_.size() >= kMaxStack) Fail("pickle stack deeper than ", kMaxStack);
    stack_.push_back(std::move(v));
  }
  Ref Pop() {
    if (stack_.empty() || stack_.back()->kind == Value::kMark) Fail("pickle stack underflow");
    Ref v = std::move(stack_.back());
    stack_.pop_back();
    return v;
  }
  Ref& Top() {
    if (stack_.empty() || stack_.back()->kind == Value::kMark) Fail("pickle stack underflow");
    return stack_.back();
  }
  // The values above the topmost MARK (which is removed).
  std::vector<Ref> PopToMark() {
    size_t m = stack_.size();
    while (m > 0 && stack_[m - 1]->kind != Value::kMark) --m;
    if (m == 0) Fail("pickle has no MARK for this opcode");
    std::vector<Ref> items(stack_.begin() + static_cast<ptrdiff_t>(m), stack_.end());
    stack_.resize(m - 1);
    return items;
  }
  // Every container is remembered: a hostile pickle can make one hold
  // itself (through the memo), a cycle of shared_ptrs that would never be
  // freed; the destructor empties them all, which breaks every cycle.
  Ref Make(Value::Kind kind) {
    Ref v = std::make_shared<Value>();
    v->kind = kind;
    if (kind == Value::kTuple || kind == Value::kList || kind == Value::kDict) containers_.push_back(v);
    return v;
  }
  Ref Int(int64_t i) {
    Ref v = Make(Value::kInt);
    v->i = i;
    return v;
  }
  Ref Str(std::string s) {
    Ref v = Make(Value::kStr);
    v->s = std::move(s);
    return v;
  }
  Ref Tuple(std::vector<Ref> items) {
    Ref v = Make(Value::kTuple);
    v->items = std::move(items);
    return v;
  }
  Ref Global(const std::string& module, const std::string& name) {
    const std::string full = module + "." + name;
    for (const StorageType& t : kStorageTypes) {
      if (full == t.name) return GlobalRef(full);
    }
    for (const char* c : kCallables) {
      if (full == c) return GlobalRef(full);
    }
    Fail("refuses global '", full,
         "' (a state dict of tensors needs only collections.OrderedDict, torch._utils._rebuild_tensor_v2 "
         "and the torch.*Storage types; nothing in the file is executed)");
  }
  Ref GlobalRef(const std::string& full) {
    Ref v = Make(Value::kGlobal);
    v->s = full;
    return v;
  }
  void Memo(size_t index) {
    if (index >= kMaxMemo) Fail("memo index ", index, " too large");
    if (memo_.size() <= index) memo_.resize(index + 1);
    memo_[index] = Top();
  }
  Ref Recall(size_t index) {
    if (index >= memo_.size() || memo_[index] == nullptr) Fail("memo index ", index, " was never stored");
    return memo_[index];
  }
  int64_t AsInt(const Ref& v, const char* what) {
    if (v->kind != Value::kInt) Fail(what, " is a ", kind_name(v->kind), ", expected an int");
    return v->i;
  }
  std::vector<uint64_t> AsDims(const Ref& v, const char* what) {
    if (v->kind != Value::kTuple) Fail(what, " is a ", kind_name(v->kind), ", expected a tuple");
    if (v->items.size() > kMaxDims) Fail(what, " has ", v->items.size(), " dimensions");
    std::vector<uint64_t> d;
    for (const Ref& e : v->items) {
      const int64_t x = AsInt(e, what);
      if (x < 0 || x > (int64_t{1} << 40)) Fail(what, " has a dimension of ", x);
      d.push_back(static_cast<uint64_t>(x));
    }
    return d;
  }

  // ('storage', <StorageType>, key, location, numel)
  Ref PersistentLoad(const Ref& pid) {
    if (pid->kind != Value::kTuple || pid->items.size() != 5 || pid->items[0]->kind != Value::kStr ||
        pid->items[0]->s != "storage") {
      Fail("persistent id is not ('storage', type, key, location, numel)");
    }
    const Ref& type = pid->items[1];
    const Ref& key = pid->items[2];
    if (type->kind != Value::kGlobal || key->kind != Value::kStr) {
      Fail("persistent id is not ('storage', type, key, location, numel)");
    }
    Ref v = Make(Value::kStorage);
    bool known = false;
    for (const StorageType& t : kStorageTypes) {
      if (type->s == t.name) {
        v->tensor.dtype = t.dtype;
        known = true;
      }
    }
    if (!known) Fail("'", type->s, "' is not a storage type");
    const int64_t numel = AsInt(pid->items[4], "storage size");
    if (numel < 0) Fail("storage size ", numel);
    v->tensor.storage_key = key->s;
    v->tensor.storage_numel = static_cast<uint64_t>(numel);
    return v;
  }

  Ref Reduce(const Ref& callable, const Ref& args) {
    if (callable->kind != Value::kGlobal) Fail("REDUCE on a ", kind_name(callable->kind));
    if (args->kind != Value::kTuple) Fail("REDUCE arguments are a ", kind_name(args->kind));
    const std::vector<Ref>& a = args->items;
    if (callable->s == "collections.OrderedDict") {
      if (!a.empty()) Fail("OrderedDict with arguments");
      return Make(Value::kDict);
    }
    if (callable->s == "torch._utils._rebuild_tensor_v2") {
      // (storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
      if (a.size() < 4 || a[0]->kind != Value::kStorage) Fail("_rebuild_tensor_v2 without a storage");
      Ref t = Make(Value::kTensor);
      t->tensor = a[0]->tensor;
      const int64_t offset = AsInt(a[1], "storage offset");
      if (offset < 0) Fail("storage offset ", offset);
      t->tensor.offset = static_cast<uint64_t>(offset);
      t->tensor.size = AsDims(a[2], "tensor size");
      t->tensor.stride = AsDims(a[3], "tensor stride");
      if (t->tensor.size.size() != t->tensor.stride.size()) Fail("tensor size and stride differ in rank");
      return t;
    }
    if (callable->s == "torch._utils._rebuild_parameter") {  // (tensor, requires_grad, hooks)
      if (a.empty() || a[0]->kind != Value::kTensor) Fail("_rebuild_parameter without a tensor");
      return a[0];
    }
    Fail("'", callable->s, "' cannot be called");  // a storage type
  }

  void SetItems(Ref& dict, const std::vector<Ref>& kv) {
    if (dict->kind != Value::kDict) Fail("SETITEM(S) on a ", kind_name(dict->kind));
    if (kv.size() % 2 != 0) Fail("SETITEMS with an odd number of values");
    for (const Ref& v : kv) dict->items.push_back(v);
  }

  void Step(uint8_t op) {
    switch (op) {
      case 0x80:  // PROTO
        if (ReadLE(1) > 5) Fail("pickle protocol above 5");
        break;
      case 0x95: ReadLE(8); break;  // FRAME (length only)
      case '(': Push(Make(Value::kMark)); break;
      case 'N': Push(Make(Value::kNone)); break;
      case 0x88: case 0x89: {  // NEWTRUE, NEWFALSE
        Ref v = Make(Value::kBool);
        v->i = op == 0x88;
        Push(v);
        break;
      }
      case 'G': {  // BINFLOAT: a checkpoint's accuracy or learning rate (no tensor; its value is not kept)
        Take(8);
        Push(Make(Value::kFloat));
        break;
      }
      case 'J': Push(Int(static_cast<int32_t>(ReadLE(4)))); break;  // BININT
      case 'K': Push(Int(static_cast<int64_t>(ReadLE(1)))); break;  // BININT1
      case 'M': Push(Int(static_cast<int64_t>(ReadLE(2)))); break;  // BININT2
      case 0x8a: {  // LONG1: little-endian two's complement of n bytes
        const size_t k = static_cast<size_t>(ReadLE(1));
        if (k > 8) Fail("integer of ", k, " bytes");
        uint64_t v = k > 0 ? ReadLE(k) : 0;
        if (k > 0 && k < 8 && (v >> (8 * k - 1)) != 0) v |= ~uint64_t{0} << (8 * k);  // sign-extend
        Push(Int(static_cast<int64_t>(v)));
        break;
      }
      case 'X': case 0x8c: case 0x8d: {  // BINUNICODE, SHORT_BINUNICODE, BINUNICODE8
        const uint64_t len = ReadLE(op == 'X' ? 4 : op == 0x8c ? 1 : 8);
        if (len > n_ - pos_) Fail("truncated pickle");
        const uint8_t* q = Take(static_cast<size_t>(len));
        Push(Str(std::string(reinterpret_cast<const char*>(q), static_cast<size_t>(len))));
        break;
      }
      case 'c': {  // GLOBAL "module\nname\n"
        const std::string module = ReadLine();
        const std::string name = ReadLine();
        Push(Global(module, name));
        break;
      }
      case 0x93: {  // STACK_GLOBAL
        const Ref name = Pop();
        const Ref module = Pop();
        if (name->kind != Value::kStr || module->kind != Value::kStr) Fail("STACK_GLOBAL without strings");
        Push(Global(module->s, name->s));
        break;
      }
      case 'q': Memo(static_cast<size_t>(ReadLE(1))); break;  // BINPUT
      case 'r': Memo(static_cast<size_t>(ReadLE(4))); break;  // LONG_BINPUT
      case 0x94: Memo(memo_.size()); break;                     // MEMOIZE
      case 'h': Push(Recall(static_cast<size_t>(ReadLE(1)))); break;  // BINGET
      case 'j': Push(Recall(static_cast<size_t>(ReadLE(4)))); break;  // LONG_BINGET
      case ')': Push(Make(Value::kTuple)); break;  // EMPTY_TUPLE
      case ']': Push(Make(Value::kList)); break;   // EMPTY_LIST
      case '}': Push(Make(Value::kDict)); break;   // EMPTY_DICT
      case 't': Push(Tuple(PopToMark())); break;   // TUPLE
      case 0x85: case 0x86: case 0x87: {           // TUPLE1..3
        std::vector<Ref> items(static_cast<size_t>(op - 0x84));
        for (size_t k = items.size(); k-- > 0;) items[k] = Pop();
        Push(Tuple(std::move(items)));
        break;
      }
      case 'a': {  // APPEND
        const Ref v = Pop();
        Ref& list = Top();
        if (list->kind != Value::kList) Fail("APPEND on a ", kind_name(list->kind));
        list->items.push_back(v);
        break;
      }
      case 'e': {  // APPENDS
        std::vector<Ref> items = PopToMark();
        Ref& list = Top();
        if (list->kind != Value::kList) Fail("APPENDS on a ", kind_name(list->kind));
        for (Ref& v : items) list->items.push_back(std::move(v));
        break;
      }
      case 's': {  // SETITEM
        const Ref v = Pop();
        const Ref k = Pop();
        SetItems(Top(), {k, v});
        break;
      }
      case 'u': {  // SETITEMS
        const std::vector<Ref> kv = PopToMark();
        SetItems(Top(), kv);
        break;
      }
      case 'Q': Push(PersistentLoad(Pop())); break;  // BINPERSID
      case 'R': {  // REDUCE
        const Ref args = Pop();
        const Ref callable = Pop();
        Push(Reduce(callable, args));
        break;
      }
      case 'b': {  // BUILD: an OrderedDict's state (its _metadata) is ignored
        Pop();
        if (Top()->kind != Value::kDict) Fail("BUILD on a ", kind_name(Top()->kind));
        break;
      }
      default:
        Fail("unsupported pickle opcode 0x", "0123456789abcdef"[op >> 4], "0123456789abcdef"[op & 15],
             " (a state dict of tensors does not need it; nothing in the file is executed)");
    }
  }

  const uint8_t* p_;
  size_t n_;
  const std::string& where_;
  size_t pos_ = 0, op_at_ = 0;
  std::vector<Ref> stack_, memo_;
  std::vector<Ref> containers_;  // see Make
};

}  // namespace

size_t torch_dtype_bytes(TorchDType t) {
  switch (t) {
    case TorchDType::kF64: case TorchDType::kI64: return 8;
    case TorchDType::kF32: case TorchDType::kI32: return 4;
    case TorchDType::kF16: case TorchDType::kBF16: case TorchDType::kI16: return 2;
    default: return 1;
  }
}

const char* torch_dtype_name(TorchDType t) {
  static const char* const kNames[] = {"float32", "float64", "float16", "bfloat16", "int64",
                                       "int32",   "int16",   "int8",    "uint8",    "bool"};
  return kNames[static_cast<int>(t)];
}

std::map<std::string, TorchTensorRef> parse_torch_state_dict(const uint8_t* data, size_t size,
                                                             const std::string& where) {
  return Unpickler(data, size, where).Run();
}

}  // namespace convert
}  // namespace edgeattn
