// The restricted unpickler (Note [Restricted unpickler] in unpickler.h).
#include "serialization/unpickler.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "runtime/error.h"

namespace ampjit::serialization {

namespace {

// The globals the unpickler knows.
enum class Global {
  kNone,
  kRebuildTensor,
  kRebuildParameter,
  kOrderedDict,
  kStorageType,  // with its dtype
  kDtype,        // a value, not a callable
  kDevice,
  kSize,
  kBuildList,       // torch.jit._pickle.build_*list: the list itself
  kRestoreTypeTag,  // torch.jit._pickle.restore_type_tag: the value itself
  kClass,           // a __torch__ class (with hooks)
};

struct Item {
  IValue value;
  Global global = Global::kNone;
  ScalarType dtype = ScalarType::Float32;  // kStorageType, kDtype
  std::string name;                        // kClass: the qualified name; else for errors
};

std::optional<ScalarType> storage_dtype(std::string_view name) {
  static const std::pair<const char*, ScalarType> table[] = {
      {"DoubleStorage", ScalarType::Float64}, {"FloatStorage", ScalarType::Float32},
      {"HalfStorage", ScalarType::Float16},   {"BFloat16Storage", ScalarType::BFloat16},
      {"LongStorage", ScalarType::Int64},     {"IntStorage", ScalarType::Int32},
      {"ShortStorage", ScalarType::Int16},    {"CharStorage", ScalarType::Int8},
      {"ByteStorage", ScalarType::UInt8},     {"BoolStorage", ScalarType::Bool},
  };
  for (const auto& [n, t] : table)
    if (name == n) return t;
  return std::nullopt;
}

std::optional<ScalarType> torch_dtype(std::string_view name) {
  static const std::pair<const char*, const char*> aliases[] = {
      {"float", "float32"}, {"double", "float64"}, {"half", "float16"},
      {"long", "int64"},    {"int", "int32"},      {"short", "int16"}};
  for (const auto& [a, n] : aliases)
    if (name == a) name = n;
  static const char* names[] = {"float64", "float32", "float16", "bfloat16", "int64",
                                "int32",   "int16",   "int8",    "uint8",    "bool"};
  for (const char* n : names)
    if (name == n) return parse_dtype(n);
  return std::nullopt;
}

class Unpickler {
 public:
  Unpickler(std::string_view bytes, const UnpickleHooks& hooks, std::string_view what)
      : in_(bytes), hooks_(hooks), what_(what) {}

  IValue run() {
    for (;;) {
      at_ = pos_;
      const uint8_t op = byte();
      switch (op) {
        case 0x80: {  // PROTO
          const uint8_t v = byte();
          check(v >= 2 && v <= 5, fmt::format("pickle protocol {} is not one ampjit reads", v));
          break;
        }
        case 0x95:  // FRAME: the framing of protocol 4; the opcodes follow as usual
          (void)take(8);
          break;
        case '.': {  // STOP
          check(stack_.size() == 1 && marks_.empty(), "the pickle ends with a malformed stack");
          check(stack_.back().global == Global::kNone, "the pickle's result is a bare global");
          return std::move(stack_.back().value);
        }
        case '(':
          marks_.push_back(stack_.size());
          break;
        case ')':
          push(IValue::tuple({}));
          break;
        case ']':
          push(fresh_container(IValue::list({})));
          break;
        case '}':
          push(fresh_container(IValue(Ref<DictObj>::make())));
          break;
        case 't':
          push(make_tuple(pop_mark()));
          break;
        case 0x85:
        case 0x86:
        case 0x87: {  // TUPLE1..3
          const size_t n = op - 0x84u;
          check(stack_.size() >= base() + n, "a tuple opcode finds too few values");
          std::vector<Item> items(std::make_move_iterator(stack_.end() - n),
                                  std::make_move_iterator(stack_.end()));
          stack_.resize(stack_.size() - n);
          push(make_tuple(std::move(items)));
          break;
        }
        case 'q':
          put(byte());
          break;
        case 'r':
          put(u32());
          break;
        case 0x94:  // MEMOIZE
          put(memo_.size());
          break;
        case 'h':
          get(byte());
          break;
        case 'j':
          get(u32());
          break;
        case 'X':
          push(IValue(string(u32())));
          break;
        case 0x8c:  // SHORT_BINUNICODE
          push(IValue(string(byte())));
          break;
        case 0x8d:  // BINUNICODE8
          push(IValue(string(u64())));
          break;
        case 'J': {
          const uint32_t v = u32();
          push(IValue(static_cast<int64_t>(static_cast<int32_t>(v))));
          break;
        }
        case 'K':
          push(IValue(static_cast<int64_t>(byte())));
          break;
        case 'M': {
          const uint8_t lo = byte(), hi = byte();
          push(IValue(static_cast<int64_t>(lo | (hi << 8))));
          break;
        }
        case 0x8a:  // LONG1
          push(IValue(long1()));
          break;
        case 'G': {
          uint64_t bits = 0;
          for (int i = 0; i < 8; ++i) bits = (bits << 8) | byte();
          push(IValue(std::bit_cast<double>(bits)));
          break;
        }
        case 'N':
          push(IValue());
          break;
        case 0x88:
          push(IValue(true));
          break;
        case 0x89:
          push(IValue(false));
          break;
        case 'a': {
          Item v = pop();
          append(top("APPEND"), std::move(v));
          break;
        }
        case 'e': {
          std::vector<Item> items = pop_mark();
          Item& list = top("APPENDS");
          for (Item& v : items) append(list, std::move(v));
          break;
        }
        case 's': {
          Item v = pop();
          Item k = pop();
          setitem(top("SETITEM"), std::move(k), std::move(v));
          break;
        }
        case 'u': {
          std::vector<Item> items = pop_mark();
          check(items.size() % 2 == 0, "SETITEMS finds an odd number of values");
          Item& dict = top("SETITEMS");
          for (size_t i = 0; i < items.size(); i += 2)
            setitem(dict, std::move(items[i]), std::move(items[i + 1]));
          break;
        }
        case 'c': {
          const std::string module = line(), name = line();
          push_global(module, name);
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          Item name = pop(), module = pop();
          check(name.value.is_string() && module.value.is_string(),
                "STACK_GLOBAL expects two strings");
          push_global(module.value.to_string_ref(), name.value.to_string_ref());
          break;
        }
        case 'R': {
          Item args = pop();
          Item fn = pop();
          push(reduce(fn, args));
          break;
        }
        case 0x81: {  // NEWOBJ
          Item args = pop();
          Item cls = pop();
          push(newobj(cls, args));
          break;
        }
        case 'b': {
          Item state = pop();
          build(top("BUILD"), std::move(state));
          break;
        }
        case 'Q': {
          Item pid = pop();
          push(persistent(pid));
          break;
        }
        default:
          fail(fmt::format("the pickle opcode 0x{:02x} is not one ampjit reads", op));
      }
    }
  }

 private:
  // --- input ---
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(fmt::format("{}: {} (at byte {})", what_, why, at_));
  }
  void check(bool ok, std::string_view why) const {
    if (!ok) [[unlikely]]
      fail(std::string(why));
  }
  std::string_view take(uint64_t n) {
    check(n <= in_.size() - pos_, "the pickle is truncated");
    const std::string_view s = in_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }
  uint8_t byte() { return static_cast<uint8_t>(take(1)[0]); }
  uint64_t le(int n) {
    const std::string_view s = take(static_cast<uint64_t>(n));
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(s[static_cast<size_t>(i)]);
    return v;
  }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  uint64_t u64() { return le(8); }
  int64_t long1() {
    const uint8_t n = byte();
    check(n <= 8, "an integer wider than 64 bits");
    if (n == 0) return 0;
    uint64_t v = le(n);
    if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
    return static_cast<int64_t>(v);
  }
  std::string string(uint64_t n) { return std::string(take(n)); }
  std::string line() {
    const size_t end = in_.find('\n', pos_);
    check(end != std::string_view::npos && end - pos_ <= 4096, "a GLOBAL name is not terminated");
    std::string s(in_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }

  // --- stack ---
  size_t base() const { return marks_.empty() ? 0 : marks_.back(); }
  void push(Item it) { stack_.push_back(std::move(it)); }
  void push(IValue v) { stack_.push_back(Item{std::move(v)}); }
  Item pop() {
    check(stack_.size() > base(), "the pickle pops an empty stack");
    Item it = std::move(stack_.back());
    stack_.pop_back();
    return it;
  }
  Item& top(const char* op) {
    check(stack_.size() > base(), fmt::format("{} finds an empty stack", op));
    return stack_.back();
  }
  std::vector<Item> pop_mark() {
    check(!marks_.empty(), "the pickle pops a mark it never set");
    const size_t m = marks_.back();
    marks_.pop_back();
    std::vector<Item> items(std::make_move_iterator(stack_.begin() + static_cast<ptrdiff_t>(m)),
                            std::make_move_iterator(stack_.end()));
    stack_.resize(m);
    return items;
  }

  // --- memo ---
  // The memo is a map, as Python's: its size grows with the puts the input makes (each costs at
  // least two bytes), not with the largest index it names, and MEMOIZE's next index is its size.
  void put(uint64_t i) {
    check(!stack_.empty(), "the pickle memoizes an empty stack");
    check(i <= in_.size(), "a memo index larger than the pickle");
    memo_.insert_or_assign(i, stack_.back());
  }
  void get(uint64_t i) {
    auto it = memo_.find(i);
    check(it != memo_.end(),
          fmt::format("the pickle reads the memo entry {}, which it never wrote", i));
    push(it->second);
  }

  // --- containers: depth and sealing (Note [Restricted unpickler]) ---
  struct Shape {
    int depth = 1;
    bool sealed = false;
  };
  static const void* key(const IValue& v) {
    switch (v.tag()) {
      case IValue::Tag::List:
        return v.list_obj();
      case IValue::Tag::Dict:
        return v.dict_obj();
      case IValue::Tag::Tuple:
        return &v.tuple_elems();  // the vector inside the TupleObj: one address per tuple
      case IValue::Tag::Object:
        return v.object();
      default:
        return nullptr;
    }
  }
  int depth(const IValue& v) const {
    const void* k = key(v);
    if (!k) return 0;
    auto it = shapes_.find(k);
    return it == shapes_.end() ? 1 : it->second.depth;
  }
  IValue fresh_container(IValue v) {
    shapes_[key(v)] = Shape{};
    return v;
  }
  // `v` goes inside `container`: the container must still be open, and stays within the depth.
  void contain(const IValue& container, const IValue& v) {
    Shape& c = shapes_[key(container)];
    check(!c.sealed, "the pickle changes a container after putting it in another one");
    check(key(v) != key(container), "the pickle puts a container inside itself");
    c.depth = std::max(c.depth, depth(v) + 1);
    check(c.depth <= kMaxNesting, fmt::format("containers nest more than {} deep", kMaxNesting));
    if (const void* k = key(v)) shapes_[k].sealed = true;
  }
  Item make_tuple(std::vector<Item> items) {
    std::vector<IValue> elems;
    elems.reserve(items.size());
    int d = 1;
    std::optional<ScalarType> storage_type;
    for (Item& it : items) {
      if (it.global == Global::kStorageType) {  // a persistent storage reference's type
        storage_type = it.dtype;
        elems.emplace_back();
        continue;
      }
      value_of(it, "a tuple element");
      d = std::max(d, depth(it.value) + 1);
      if (const void* k = key(it.value)) shapes_[k].sealed = true;
      elems.push_back(std::move(it.value));
    }
    check(d <= kMaxNesting, fmt::format("containers nest more than {} deep", kMaxNesting));
    IValue t = IValue::tuple(std::move(elems));
    shapes_[key(t)] = Shape{d, true};
    if (storage_type) storage_types_[key(t)] = *storage_type;
    return Item{std::move(t)};
  }
  // A plain value (not a global) where one is needed.
  void value_of(const Item& it, std::string_view where) const {
    check(it.global == Global::kNone || it.global == Global::kDtype,
          fmt::format("{} is the global '{}', not a value", where, it.name));
  }
  void append(Item& list, Item v) {
    check(list.global == Global::kNone && list.value.is_list(), "APPEND to something not a list");
    value_of(v, "an appended value");
    contain(list.value, v.value);
    list.value.list_obj()->elems.push_back(std::move(v.value));
  }
  void setitem(Item& dict, Item k, Item v) {
    check(dict.global == Global::kNone && dict.value.is_dict(), "SETITEM on something not a dict");
    value_of(k, "a dict key");
    value_of(v, "a dict value");
    check(DictObj::valid_key(k.value),
          fmt::format("a dict key of type {} is not one ampjit's dicts take", k.value.tag_name()));
    contain(dict.value, v.value);
    dict.value.dict_obj()->set(std::move(k.value), std::move(v.value));
  }

  // --- globals ---
  void push_global(const std::string& module, const std::string& name) {
    Item it;
    it.name = module + "." + name;
    if (module == "torch._utils" && name == "_rebuild_tensor_v2") {
      it.global = Global::kRebuildTensor;
    } else if (module == "torch._utils" && name == "_rebuild_parameter") {
      it.global = Global::kRebuildParameter;
    } else if (module == "collections" && name == "OrderedDict") {
      it.global = Global::kOrderedDict;
    } else if (module == "torch" && name == "device") {
      it.global = Global::kDevice;
    } else if (module == "torch" && name == "Size") {
      it.global = Global::kSize;
    } else if (module == "torch" && storage_dtype(name)) {
      it.global = Global::kStorageType;
      it.dtype = *storage_dtype(name);
    } else if (module == "torch" && torch_dtype(name)) {
      it.global = Global::kDtype;
      it.dtype = *torch_dtype(name);
      it.value = IValue(it.dtype);
    } else if (module == "torch.jit._pickle" &&
               (name == "build_intlist" || name == "build_floatlist" || name == "build_boollist" ||
                name == "build_tensorlist" || name == "build_doublelist")) {
      it.global = Global::kBuildList;
    } else if (module == "torch.jit._pickle" && name == "restore_type_tag") {
      it.global = Global::kRestoreTypeTag;
    } else if ((module == "__torch__" || module.starts_with("__torch__.")) && hooks_.new_object &&
               hooks_.set_state) {
      it.global = Global::kClass;
    } else {
      fail(fmt::format(
          "the pickle names the global '{}', which ampjit does not load: only tensors, storages, "
          "dtypes, devices, Sizes, OrderedDicts and TorchScript's own types are read, and nothing "
          "a pickle names is imported or run",
          it.name));
    }
    push(std::move(it));
  }

  const std::vector<IValue>& args_of(const Item& args, const Item& fn, size_t lo, size_t hi) {
    check(args.global == Global::kNone && args.value.is_tuple(),
          fmt::format("'{}' is called with arguments that are not a tuple", fn.name));
    const auto& a = args.value.tuple_elems();
    check(a.size() >= lo && a.size() <= hi,
          fmt::format("'{}' is called with {} arguments", fn.name, a.size()));
    return a;
  }
  std::vector<int64_t> ints(const IValue& v, std::string_view what) {
    check(v.is_tuple() || v.is_list(), fmt::format("{} is not a tuple of ints", what));
    const auto& e = v.is_tuple() ? v.tuple_elems() : v.list_elems();
    std::vector<int64_t> out;
    for (const IValue& x : e) {
      check(x.is_int(), fmt::format("{} is not a tuple of ints", what));
      out.push_back(x.to_int());
    }
    return out;
  }

  Item reduce(const Item& fn, const Item& args) {
    switch (fn.global) {
      case Global::kRebuildTensor: {
        const auto& a = args_of(args, fn, 4, 7);
        check(a[0].is_tensor(), "a tensor's storage is not a saved storage");
        check(a[1].is_int(), "a tensor's storage offset is not an int");
        Tensor t = check_view(a[0].to_tensor(), a[1].to_int(), ints(a[2], "a tensor's size"),
                              ints(a[3], "a tensor's stride"), what_);
        if (a.size() > 4) {
          check(a[4].is_bool(), "a tensor's requires_grad is not a bool");
          t.impl()->requires_grad = a[4].to_bool();
        }
        return Item{IValue(t)};
      }
      case Global::kRebuildParameter: {
        const auto& a = args_of(args, fn, 2, 3);
        check(a[0].is_tensor() && a[1].is_bool(), "a parameter is not (tensor, requires_grad)");
        Tensor t = a[0].to_tensor();
        t.impl()->requires_grad = a[1].to_bool();
        return Item{IValue(t)};
      }
      case Global::kOrderedDict:
        args_of(args, fn, 0, 0);
        return Item{fresh_container(IValue(Ref<DictObj>::make()))};
      case Global::kDevice: {
        const auto& a = args_of(args, fn, 1, 2);
        check(a[0].is_string(), "torch.device is called without a device string");
        std::string spec = a[0].to_string_ref();
        if (a.size() == 2) {
          check(a[1].is_int(), "torch.device's index is not an int");
          spec += ":" + std::to_string(a[1].to_int());
        }
        return Item{IValue(Device::parse(spec))};
      }
      case Global::kSize: {
        const auto& a = args_of(args, fn, 0, 1);
        std::vector<IValue> dims;
        if (!a.empty())
          for (int64_t d : ints(a[0], "a Size")) dims.emplace_back(d);
        return Item{IValue::tuple(std::move(dims))};
      }
      case Global::kBuildList:
      case Global::kRestoreTypeTag: {
        const auto& a = args_of(args, fn, 1, 2);
        return Item{a[0]};
      }
      default:
        fail(fmt::format("'{}' cannot be called", fn.name.empty() ? "a value" : fn.name));
    }
  }

  Item newobj(const Item& cls, const Item& args) {
    if (cls.global == Global::kOrderedDict) return reduce(cls, args);
    check(cls.global == Global::kClass,
          fmt::format("NEWOBJ of '{}', which is not a class ampjit builds",
                      cls.name.empty() ? "a value" : cls.name));
    args_of(args, cls, 0, 0);
    IValue obj = hooks_.new_object(cls.name);
    check(obj.is_object(), fmt::format("the class '{}' gave no object", cls.name));
    shapes_[key(obj)] = Shape{};
    return Item{std::move(obj)};
  }

  void build(Item& target, Item state) {
    value_of(state, "an object's state");
    if (target.global == Global::kNone && target.value.is_dict()) {
      // An OrderedDict's attributes (a state_dict's `_metadata`): ampjit's dicts have none.
      check(state.value.is_dict(), "the state of a dict is not a dict");
      return;
    }
    check(target.global == Global::kNone && target.value.is_object(),
          fmt::format("BUILD sets the state of '{}', which ampjit refuses",
                      target.name.empty() ? target.value.tag_name() : target.name));
    contain(target.value, state.value);
    hooks_.set_state(target.value, state.value);
  }

  Item persistent(const Item& pid) {
    check(pid.global == Global::kNone && pid.value.is_tuple(),
          "a persistent reference is not a tuple");
    const auto& t = pid.value.tuple_elems();
    check(t.size() == 5 && t[0].is_string() && t[0].to_string_ref() == "storage",
          "a persistent reference is not a storage reference");
    check(t[2].is_string() && t[3].is_string() && t[4].is_int() && t[4].to_int() >= 0,
          "a malformed storage reference");
    auto st = storage_types_.find(key(pid.value));  // recorded by make_tuple
    check(st != storage_types_.end(), "a storage reference without a torch.<Type>Storage");
    check(static_cast<bool>(hooks_.storage), "the pickle references a storage, and none is given");
    Tensor s =
        hooks_.storage(st->second, t[2].to_string_ref(), t[3].to_string_ref(), t[4].to_int());
    check(s.defined() && s.dim() == 1 && s.numel() == t[4].to_int() && s.dtype() == st->second,
          "the storage hook gave a tensor that does not match the reference");
    return Item{IValue(s)};
  }

  std::string_view in_;
  size_t pos_ = 0, at_ = 0;
  const UnpickleHooks& hooks_;
  std::string_view what_;
  std::vector<Item> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, Item> memo_;
  std::unordered_map<const void*, Shape> shapes_;
  // The torch.<Type>Storage global a tuple held (a persistent storage reference), by tuple.
  std::unordered_map<const void*, ScalarType> storage_types_;
};

}  // namespace

Tensor check_view(const Tensor& storage, int64_t offset, const std::vector<int64_t>& sizes,
                  const std::vector<int64_t>& strides, std::string_view what) {
  AMPJIT_CHECK(storage.dim() == 1, "{}: a tensor's storage is not a storage", what);
  AMPJIT_CHECK(sizes.size() == strides.size(), "{}: a saved tensor has {} sizes but {} strides",
               what, sizes.size(), strides.size());
  AMPJIT_CHECK(offset >= 0, "{}: a saved tensor has the negative storage offset {}", what, offset);
  const int64_t numel = storage.numel();
  bool empty = false;
  __int128 last = offset;  // the farthest element the view reaches
  for (size_t d = 0; d < sizes.size(); ++d) {
    AMPJIT_CHECK(sizes[d] >= 0 && strides[d] >= 0,
                 "{}: a saved tensor has the size {} and stride {} in dim {}", what, sizes[d],
                 strides[d], d);
    empty |= sizes[d] == 0;
    if (sizes[d] > 0) last += static_cast<__int128>(sizes[d] - 1) * strides[d];
  }
  AMPJIT_CHECK(empty ? offset <= numel : last < numel,
               "{}: a saved tensor of sizes [{}] and strides [{}] at offset {} reaches past its "
               "storage of {} elements",
               what, fmt::join(sizes, ", "), fmt::join(strides, ", "), offset, numel);
  return Tensor::make_view(storage, sizes, strides, offset);
}

IValue unpickle(std::string_view bytes, const UnpickleHooks& hooks, std::string_view what) {
  Unpickler u(bytes, hooks, what);
  return u.run();
}

}  // namespace ampjit::serialization
