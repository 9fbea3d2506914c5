// oneDNN behind onednn.h: one engine, one stream per thread, a cache of primitives, and the
// float32 staging of float16/bfloat16 data. The only file that includes oneDNN's headers.
#include "kernels/cpu/onednn.h"

#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <bit>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/caches.h"
#include "runtime/error.h"
#include "runtime/half.h"
#include "runtime/reduced_float.h"
#include "runtime/strided_loop.h"
#include "runtime/tensor.h"

namespace ampjit::cpu::onednn {
namespace {

using dnnl::memory;
using dt = memory::data_type;

// oneDNN's own kernels follow ampjit's dispatch level (Note [CPU dispatch]): its max ISA is set
// once, before the engine (and so any primitive) exists.
dnnl::cpu_isa dnnl_isa_for(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx2:
      return dnnl::cpu_isa::avx2;
    case CpuIsa::kAvx512:
      return dnnl::cpu_isa::avx512_core;
    case CpuIsa::kAvx512Bf16:
      return dnnl::cpu_isa::avx512_core_bf16;
    case CpuIsa::kAmx:
      break;
  }
  return dnnl::cpu_isa::all;
}

dnnl::engine& cpu_engine() {
  static dnnl::engine e = [] {
    if (configured_cpu_isa() < detected_cpu_isa())
      dnnl::set_max_cpu_isa(dnnl_isa_for(configured_cpu_isa()));
    return dnnl::engine(dnnl::engine::kind::cpu, 0);
  }();
  return e;
}

dt dnnl_type(ScalarType t) {
  AMPJIT_CHECK(t == ScalarType::Float32 || t == ScalarType::BFloat16,
               "oneDNN: no primitive for dtype {} here (Note [Native bf16 gemm])", dtype_name(t));
  return t == ScalarType::BFloat16 ? dt::bf16 : dt::f32;
}
// Streams are not thread-safe; a CPU stream is only a handle, so each thread keeps its own.
dnnl::stream& cpu_stream() {
  thread_local dnnl::stream s(cpu_engine());
  return s;
}

[[noreturn]] void rethrow(const dnnl::error& e, const char* op, const char* what) {
  throw Error(fmt::format("{}: oneDNN could not run the {} ({}, status {})", op, what, e.what(),
                          static_cast<int>(e.status)));
}

// Note [oneDNN primitive cache]
// Creating a primitive JIT-compiles code (tens to hundreds of microseconds), so primitives are
// kept in a small LRU keyed by everything they were created from: the op kind, sizes, strides and
// attributes (alpha, beta, bias), packed as raw int64s. Creation happens outside the lock (two
// threads may race to create the same one; the loser's copy is dropped). Entries are shared_ptrs,
// so an entry evicted while another thread executes it stays alive until that thread is done.
// Primitives run with a user-provided scratchpad (below), which makes concurrent execution of one
// cached primitive from several threads safe.
class CacheKey {
 public:
  void add(int64_t v) { bytes_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void add(float f) { add(static_cast<int64_t>(std::bit_cast<uint32_t>(f))); }
  const std::string& str() const { return bytes_; }

 private:
  std::string bytes_;
};

// A process-wide LRU cache of primitives (Note [Long-lived caches] in runtime/caches.h): registered
// under `name` when first used, emptied by ampjit.cpu.empty_cache().
template <typename Entry>
class PrimitiveCache {
 public:
  PrimitiveCache(const char* name, size_t capacity) : capacity_(capacity) {
    register_cache({name,
                    fmt::format("at most {} primitives, least recently used evicted", capacity),
                    [this] { return size(); }, [this] { clear(); }});
  }

  size_t size() {
    std::lock_guard<std::mutex> lock(mu_);
    return lru_.size();
  }
  void clear() {
    std::list<Item> old;
    {
      std::lock_guard<std::mutex> lock(mu_);
      map_.clear();
      old.swap(lru_);
    }  // entries in use elsewhere stay alive through their shared_ptr
  }

  // Returns the entry for key, first filling a new one with make(Entry&) when there is none.
  template <typename Make>
  std::shared_ptr<const Entry> get(const CacheKey& key, Make&& make) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = map_.find(key.str()); it != map_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second);
        return it->second->second;
      }
    }
    auto fresh = std::make_shared<Entry>();
    make(*fresh);
    std::shared_ptr<const Entry> made = std::move(fresh);
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = map_.find(key.str()); it != map_.end()) return it->second->second;
    lru_.emplace_front(key.str(), made);
    map_.emplace(key.str(), lru_.begin());
    if (lru_.size() > capacity_) {
      map_.erase(lru_.back().first);
      lru_.pop_back();
    }
    return made;
  }

 private:
  using Item = std::pair<std::string, std::shared_ptr<const Entry>>;
  size_t capacity_;
  std::mutex mu_;
  std::list<Item> lru_;
  std::unordered_map<std::string, typename std::list<Item>::iterator> map_;
};

constexpr size_t kCacheCapacity = 256;

// The calling thread's scratchpad buffer, at least `bytes` long (primitives run in user
// scratchpad mode).
void* scratchpad_buffer(size_t bytes) {
  thread_local std::vector<char> buf;
  if (buf.size() < bytes) buf.resize(bytes);
  return bytes ? buf.data() : nullptr;
}
memory scratchpad(const memory::desc& d) {
  return memory(d, cpu_engine(), scratchpad_buffer(d.get_size()));
}

dnnl::primitive_attr base_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// --- matmul -------------------------------------------------------------------------------

// The memory objects one execution binds. Creating a dnnl::memory costs ~0.7 us (four per call
// would be several percent of a 256^3 gemm), while pointing an existing one at new data is a
// store, so each entry keeps a pool of them: an execution takes a set, sets the data handles and
// gives it back. One set per concurrently executing thread, in practice one.
struct MatmulMemory {
  memory a, b, c, bias, scratch;
};

struct MatmulEntry {
  dnnl::matmul prim;
  memory::desc a, b, c, bias, scratch;
  // With a pre-packed B: B's own layout and the reorder into the primitive's (`b`).
  memory::desc user_b;
  std::optional<dnnl::reorder> b_in;
  mutable std::mutex pool_mu;
  mutable std::vector<std::unique_ptr<MatmulMemory>> pool;

  std::unique_ptr<MatmulMemory> take() const {
    {
      std::lock_guard<std::mutex> lock(pool_mu);
      if (!pool.empty()) {
        auto m = std::move(pool.back());
        pool.pop_back();
        return m;
      }
    }
    auto& eng = cpu_engine();
    return std::make_unique<MatmulMemory>(
        MatmulMemory{memory(a, eng, nullptr), memory(b, eng, nullptr), memory(c, eng, nullptr),
                     bias ? memory(bias, eng, nullptr) : memory(), memory(scratch, eng, nullptr)});
  }
  void give_back(std::unique_ptr<MatmulMemory> m) const {
    std::lock_guard<std::mutex> lock(pool_mu);
    pool.push_back(std::move(m));
  }
};

// One operand of a (batched) matmul. A broadcast operand (batch stride 0) gets batch dim 1,
// which oneDNN broadcasts with its fast kernels (a 0 stride would select the reference kernel).
memory::desc matrix_desc(dt type, bool batched, int64_t batch, int64_t rows, int64_t cols,
                         int64_t bs, int64_t rs, int64_t cs) {
  if (!batched) return memory::desc({rows, cols}, type, {rs, cs});
  const int64_t nb = bs == 0 ? 1 : batch;
  const int64_t bstride = bs == 0 ? std::max(rows * rs, cols * cs) : bs;
  return memory::desc({nb, rows, cols}, type, {bstride, rs, cs});
}

bool packs_b(const MatmulArgs& p) {
  return p.batch == 1 && p.b_storage && p.b_storage->frozen();
}

void make_matmul(MatmulEntry& e, const MatmulArgs& p) {
  const bool batched = p.batch > 1;
  const dt type = dnnl_type(p.type);
  e.a = matrix_desc(type, batched, p.batch, p.m, p.k, p.a_bs, p.a_rs, p.a_cs);
  e.b = matrix_desc(type, batched, p.batch, p.k, p.n, p.b_bs, p.b_rs, p.b_cs);
  if (packs_b(p)) {
    e.user_b = e.b;
    e.b = memory::desc({p.k, p.n}, type, memory::format_tag::any);
  }
  e.c = matrix_desc(type, batched, p.batch, p.m, p.n, p.c_bs, p.c_rs, 1);
  if (p.bias) {
    e.bias = batched ? memory::desc({1, 1, p.n}, type, {p.n, p.n, 1})
                     : memory::desc({1, p.n}, type, {p.n, 1});
  }
  dnnl::primitive_attr attr = base_attr();
  if (p.alpha != 1.f) attr.set_output_scales(0, {p.alpha});
  if (p.beta != 0.f) {
    dnnl::post_ops po;
    po.append_sum(p.beta);
    attr.set_post_ops(po);
  }
  const dnnl::matmul::desc d =
      p.bias ? dnnl::matmul::desc(e.a, e.b, e.bias, e.c) : dnnl::matmul::desc(e.a, e.b, e.c);
  const dnnl::matmul::primitive_desc pd(d, attr, cpu_engine());
  e.scratch = pd.scratchpad_desc();
  e.prim = dnnl::matmul(pd);
  if (packs_b(p)) {
    e.b = pd.weights_desc();
    if (e.b != e.user_b)
      e.b_in =
          dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), e.user_b, cpu_engine(), e.b));
  }
}

// --- convolution --------------------------------------------------------------------------

struct ConvEntry {
  dnnl::primitive prim;
  memory::desc user_src, user_weight, user_dst, bias;
  memory::desc src, weight, dst, scratch;  // the layouts the primitive chose
  std::optional<dnnl::reorder> src_in, weight_in, dst_out;
};

memory::dims dims_of(const int64_t* v, int n) {
  return memory::dims(v, v + n);
}

// Plain (torch) layout strides for dims.
memory::dims dense_strides(const memory::dims& d) {
  memory::dims s(d.size(), 1);
  for (size_t i = d.size() - 1; i-- > 0;) s[i] = s[i + 1] * d[i + 1];
  return s;
}

// A convolution's shapes as oneDNN takes them, and torch's layouts of its tensors.
struct ConvGeometry {
  memory::dims src_d, dst_d, w_d, strides, dil, pad_l, pad_r;
  memory::desc user_src, user_dst, user_weight, bias;
  dt type;
  memory::desc any(const memory::dims& d) const {
    return memory::desc(d, type, memory::format_tag::any);
  }
};

ConvGeometry conv_geometry(const ConvArgs& p) {
  ConvGeometry c;
  const int ns = p.nsp;
  c.src_d = {p.n, p.ic};
  c.dst_d = {p.n, p.oc};
  for (int i = 0; i < ns; ++i) {
    c.src_d.push_back(p.in[i]);
    c.dst_d.push_back(p.out[i]);
  }
  const int64_t g = p.groups;
  const int64_t ksize = [&] {
    int64_t s = 1;
    for (int i = 0; i < ns; ++i) s *= p.kernel[i];
    return s;
  }();
  // oneDNN weights are [G,] O, I, K... where O is the primitive's output channels. torch stores
  // convolution weights as OC x IC/G x K (exactly goihw) and transposed ones as IC x OC/G x K,
  // described here by strides.
  memory::dims w_s;
  const int64_t ocg = p.oc / g, icg = p.ic / g;
  if (g > 1) c.w_d.push_back(g);
  c.w_d.push_back(ocg);
  c.w_d.push_back(icg);
  for (int i = 0; i < ns; ++i) c.w_d.push_back(p.kernel[i]);
  if (!p.transposed && p.weight_channels_last) {  // [OC, IC/G, KH, KW] stored OC, KH, KW, IC/G
    const int64_t so = icg * ksize;
    if (g > 1) w_s.push_back(ocg * so);
    for (int64_t v : {so, int64_t{1}, p.kernel[1] * icg, icg}) w_s.push_back(v);
  } else if (!p.transposed) {
    w_s = dense_strides(c.w_d);
  } else {
    if (g > 1) w_s.push_back(icg * ocg * ksize);
    w_s.push_back(ksize);
    w_s.push_back(ocg * ksize);
    const memory::dims ks = dense_strides(dims_of(p.kernel, ns));
    for (int i = 0; i < ns; ++i) w_s.push_back(ks[i]);
  }
  c.type = dnnl_type(p.type);
  const auto tag = p.channels_last ? memory::format_tag::nhwc : memory::format_tag::undef;
  c.user_src = p.channels_last ? memory::desc(c.src_d, c.type, tag)
                               : memory::desc(c.src_d, c.type, dense_strides(c.src_d));
  c.user_dst = p.channels_last ? memory::desc(c.dst_d, c.type, tag)
                               : memory::desc(c.dst_d, c.type, dense_strides(c.dst_d));
  c.user_weight = memory::desc(c.w_d, c.type, w_s);
  c.bias = memory::desc({p.oc}, c.type, memory::format_tag::x);
  for (int i = 0; i < ns; ++i) {
    c.strides.push_back(p.stride[i]);
    c.dil.push_back(p.dilation[i] - 1);  // oneDNN counts the gaps
    c.pad_l.push_back(p.padding[i]);
    c.pad_r.push_back(p.padding[i] - p.output_padding[i]);
  }
  return c;
}

void make_conv(ConvEntry& e, const ConvArgs& p) {
  const ConvGeometry c = conv_geometry(p);
  const memory::dims &strides = c.strides, &dil = c.dil, &pad_l = c.pad_l, &pad_r = c.pad_r;
  e.user_src = c.user_src;
  e.user_dst = c.user_dst;
  e.user_weight = c.user_weight;
  if (p.bias) e.bias = c.bias;
  const memory::desc src_any = c.any(c.src_d), dst_any = c.any(c.dst_d), w_any = c.any(c.w_d);
  const memory::desc no_bias;
  dnnl::primitive_attr attr = base_attr();
  if (p.relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(ops);
  }
  auto finish = [&](const auto& pd) {
    e.src = pd.src_desc();
    e.weight = pd.weights_desc();
    e.dst = pd.dst_desc();
    e.scratch = pd.scratchpad_desc();
  };
  if (!p.transposed) {
    const dnnl::convolution_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_any, w_any,
        p.bias ? e.bias : no_bias, dst_any, strides, dil, pad_l, pad_r);
    const dnnl::convolution_forward::primitive_desc pd(d, attr, cpu_engine());
    finish(pd);
    e.prim = dnnl::convolution_forward(pd);
  } else {
    const dnnl::deconvolution_forward::desc d(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src_any, w_any,
        p.bias ? e.bias : no_bias, dst_any, strides, dil, pad_l, pad_r);
    const dnnl::deconvolution_forward::primitive_desc pd(d, attr, cpu_engine());
    finish(pd);
    e.prim = dnnl::deconvolution_forward(pd);
  }
  auto& eng = cpu_engine();
  if (e.src != e.user_src)
    e.src_in = dnnl::reorder(dnnl::reorder::primitive_desc(eng, e.user_src, eng, e.src));
  if (e.weight != e.user_weight)
    e.weight_in = dnnl::reorder(dnnl::reorder::primitive_desc(eng, e.user_weight, eng, e.weight));
  if (e.dst != e.user_dst)
    e.dst_out = dnnl::reorder(dnnl::reorder::primitive_desc(eng, e.dst, eng, e.user_dst));
}

// Note [Convolution backward primitives]
// Plain backward of a float32 (or native bfloat16) convolution runs oneDNN's backward primitives,
// as torch's CPU backward does: convolution_backward_data for the input's gradient and
// convolution_backward_weights for the weight's and the bias's (one pass), each created with the
// forward's training descriptor as its hint and cached like the forward. Each primitive picks its
// own blocked layouts; the output's gradient is reordered into them once and shared when both
// pick the same one, and the results are reordered back into torch's layouts. Double backward,
// float64 and the other devices keep the formula of Note [Convolution backward] (derivatives.cpp),
// whose transposed and grouped forward convolutions compute the same sums.
struct ConvBackwardEntry {
  ConvGeometry geo;
  memory::desc user_diff_weight;  // dense OC x IC/G x K...
  std::optional<dnnl::convolution_backward_data> data;
  memory::desc data_diff_dst, data_weight, data_diff_src, data_scratch;
  std::optional<dnnl::reorder> data_dd_in, data_w_in, data_ds_out;
  std::optional<dnnl::convolution_backward_weights> weights;
  memory::desc w_src, w_diff_dst, w_diff_weight, w_scratch;
  std::optional<dnnl::reorder> w_src_in, w_dd_in, w_dw_out;
  bool share_diff_dst = false;  // both primitives read the output's gradient in one layout
};

// A reorder from `from` to `to`, or none when they are the same layout.
std::optional<dnnl::reorder> reorder_between(const memory::desc& from, const memory::desc& to) {
  if (from == to) return std::nullopt;
  auto& eng = cpu_engine();
  return dnnl::reorder(dnnl::reorder::primitive_desc(eng, from, eng, to));
}

void make_conv_backward(ConvBackwardEntry& e, const ConvBackwardArgs& a) {
  const ConvArgs& p = a.fwd;
  e.geo = conv_geometry(p);
  const ConvGeometry& c = e.geo;
  e.user_diff_weight = memory::desc(c.w_d, c.type, dense_strides(c.w_d));
  const memory::desc src_any = c.any(c.src_d), dst_any = c.any(c.dst_d), w_any = c.any(c.w_d);
  const memory::desc bias = a.diff_bias ? c.bias : memory::desc();
  const dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_training,
                                           dnnl::algorithm::convolution_direct, src_any, w_any,
                                           bias, dst_any, c.strides, c.dil, c.pad_l, c.pad_r);
  const dnnl::primitive_attr attr = base_attr();
  const dnnl::convolution_forward::primitive_desc hint(fd, attr, cpu_engine());
  if (a.diff_src) {
    const dnnl::convolution_backward_data::desc d(dnnl::algorithm::convolution_direct, src_any,
                                                  w_any, dst_any, c.strides, c.dil, c.pad_l,
                                                  c.pad_r);
    const dnnl::convolution_backward_data::primitive_desc pd(d, attr, cpu_engine(), hint);
    e.data_diff_dst = pd.diff_dst_desc();
    e.data_weight = pd.weights_desc();
    e.data_diff_src = pd.diff_src_desc();
    e.data_scratch = pd.scratchpad_desc();
    e.data = dnnl::convolution_backward_data(pd);
    e.data_dd_in = reorder_between(c.user_dst, e.data_diff_dst);
    e.data_w_in = reorder_between(c.user_weight, e.data_weight);
    e.data_ds_out = reorder_between(e.data_diff_src, c.user_src);
  }
  if (a.diff_weight || a.diff_bias) {
    const dnnl::convolution_backward_weights::desc d =
        a.diff_bias ? dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct,
                                                               src_any, w_any, bias, dst_any,
                                                               c.strides, c.dil, c.pad_l, c.pad_r)
                    : dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct,
                                                               src_any, w_any, dst_any, c.strides,
                                                               c.dil, c.pad_l, c.pad_r);
    const dnnl::convolution_backward_weights::primitive_desc pd(d, attr, cpu_engine(), hint);
    e.w_src = pd.src_desc();
    e.w_diff_dst = pd.diff_dst_desc();
    e.w_diff_weight = pd.diff_weights_desc();
    e.w_scratch = pd.scratchpad_desc();
    e.weights = dnnl::convolution_backward_weights(pd);
    e.w_src_in = reorder_between(c.user_src, e.w_src);
    e.share_diff_dst = a.diff_src && e.w_diff_dst == e.data_diff_dst;
    if (!e.share_diff_dst) e.w_dd_in = reorder_between(c.user_dst, e.w_diff_dst);
    e.w_dw_out = reorder_between(e.w_diff_weight, e.user_diff_weight);
  }
}

}  // namespace

void convolution_backward(const ConvBackwardArgs& a, const char* op) {
  static PrimitiveCache<ConvBackwardEntry> cache("onednn conv backward", kCacheCapacity);
  const ConvArgs& p = a.fwd;
  CacheKey key;
  for (int64_t v : {static_cast<int64_t>(p.type), int64_t{p.nsp}, p.n, p.ic, p.oc, p.groups,
                    int64_t{omp_get_max_threads()}, int64_t{p.channels_last},
                    int64_t{p.weight_channels_last}, int64_t{a.diff_src != nullptr},
                    int64_t{a.diff_weight != nullptr}, int64_t{a.diff_bias != nullptr}})
    key.add(v);
  for (int i = 0; i < p.nsp; ++i)
    for (int64_t v : {p.in[i], p.out[i], p.kernel[i], p.stride[i], p.padding[i], p.dilation[i]})
      key.add(v);
  try {
    auto e = cache.get(key, [&](ConvBackwardEntry& e) { make_conv_backward(e, a); });
    const ConvGeometry& c = e->geo;
    auto& eng = cpu_engine();
    auto& s = cpu_stream();
    // An operand in the layout its primitive wants: the user's memory, or its reorder into a
    // buffer from ampjit's allocator (Note [Large CPU buffers]).
    std::vector<Ref<Storage>> bufs;
    auto staged = [&](const memory::desc& d) {
      bufs.push_back(Storage::allocate(d.get_size()));
      return memory(d, eng, bufs.back()->data());
    };
    auto in = [&](const std::optional<dnnl::reorder>& r, const memory::desc& want,
                  const memory::desc& user, const void* data) {
      memory m(user, eng, const_cast<void*>(data));
      if (!r) return m;
      memory to = staged(want);
      r->execute(s, m, to);
      return to;
    };
    memory dd;
    if (e->data) {
      dd = in(e->data_dd_in, e->data_diff_dst, c.user_dst, a.diff_dst);
      const memory w = in(e->data_w_in, e->data_weight, c.user_weight, p.weight);
      memory user_ds(c.user_src, eng, a.diff_src);
      memory ds = e->data_ds_out ? staged(e->data_diff_src) : user_ds;
      e->data->execute(s, {{DNNL_ARG_DIFF_DST, dd},
                           {DNNL_ARG_WEIGHTS, w},
                           {DNNL_ARG_DIFF_SRC, ds},
                           {DNNL_ARG_SCRATCHPAD, scratchpad(e->data_scratch)}});
      if (e->data_ds_out) e->data_ds_out->execute(s, ds, user_ds);
    }
    if (e->weights) {
      const memory src = in(e->w_src_in, e->w_src, c.user_src, p.src);
      if (!e->share_diff_dst) dd = in(e->w_dd_in, e->w_diff_dst, c.user_dst, a.diff_dst);
      // without a weight gradient wanted (a bias one only), the primitive still writes one
      memory user_dw = a.diff_weight ? memory(e->user_diff_weight, eng, a.diff_weight)
                                     : staged(e->user_diff_weight);
      memory dw = e->w_dw_out ? staged(e->w_diff_weight) : user_dw;
      std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src},
                                              {DNNL_ARG_DIFF_DST, dd},
                                              {DNNL_ARG_DIFF_WEIGHTS, dw},
                                              {DNNL_ARG_SCRATCHPAD, scratchpad(e->w_scratch)}};
      if (a.diff_bias) args.emplace(DNNL_ARG_DIFF_BIAS, memory(c.bias, eng, a.diff_bias));
      e->weights->execute(s, args);
      if (e->w_dw_out && a.diff_weight) e->w_dw_out->execute(s, dw, user_dw);
    }
    s.wait();
  } catch (const dnnl::error& err) {
    rethrow(err, op, "convolution backward");
  }
}

namespace {

// --- float32 staging ----------------------------------------------------------------------

bool is_bf16(ScalarType t) {
  AMPJIT_CHECK(t == ScalarType::BFloat16 || t == ScalarType::Float16,
               "float32 staging: unexpected dtype {}", dtype_name(t));
  return t == ScalarType::BFloat16;
}

struct ThreadScratch {
  Scratch::Buffer buf;
  int64_t capacity = 0;
  bool busy = false;
};
thread_local ThreadScratch t_scratch;
// The largest buffer a thread keeps between calls (64 MiB: a 2048^3 gemm's three operands).
constexpr int64_t kMaxKeptScratch = int64_t{16} << 20;

}  // namespace

bool normalize_gemm_layout(int64_t rows, int64_t cols, int64_t& rs, int64_t& cs) {
  if (rows == 1 && cols == 1) {
    rs = cs = 1;
    return true;
  }
  if (rows == 1) {  // only cs matters
    if (cs == 1)
      rs = cols;
    else
      rs = 1;  // column-major with leading dimension cs >= 1 = rows
    return cs >= 1;
  }
  if (cols == 1) {  // only rs matters
    if (rs == 1)
      cs = rows;
    else
      cs = 1;
    return rs >= 1;
  }
  return (cs == 1 && rs >= cols) || (rs == 1 && cs >= rows);
}

// Note [Pre-packed weights]
// oneDNN's fast convolutions run on a blocked weight layout (Acdb48a and the like), and its
// matmuls copy B into one, so torch's layout was reordered on every call: in efficientnet_b0 the
// weight reorders took longer than the convolutions. A frozen weight (Note [Frozen storage] in
// runtime/tensor.h) is reordered once per primitive and kept with its storage, under the
// primitive's key and the weight's offset; every later call, on any thread, passes the packed
// bytes straight to the primitive (convolutions; unbatched matmuls, so linear layers). The weights
// of an unfrozen module may change between calls (an optimizer step, load_state_dict), so they are
// reordered every call, as torch does.
struct PackedWeight {
  Ref<Storage> bytes;
};

// The bytes at `data` (inside the frozen storage `ws`, in layout `from`) reordered by `r` into
// layout `to`, made on the first call for (`key`, offset) and kept with ws.
const void* packed_once(const Storage& ws, const void* data, const CacheKey& key,
                        const memory::desc& from, const memory::desc& to, const dnnl::reorder& r) {
  const int64_t offset = static_cast<const char*>(data) - static_cast<const char*>(ws.data());
  std::string wkey = key.str();
  wkey.append(reinterpret_cast<const char*>(&offset), sizeof offset);
  if (auto found = ws.find_derived(wkey))
    return static_cast<const PackedWeight*>(found.get())->bytes->data();
  auto packed = std::make_shared<PackedWeight>();
  packed->bytes = Storage::allocate(to.get_size());
  auto& eng = cpu_engine();
  memory src(from, eng, const_cast<void*>(data));
  memory dst(to, eng, packed->bytes->data());
  r.execute(cpu_stream(), src, dst);
  cpu_stream().wait();
  return static_cast<const PackedWeight*>(ws.add_derived(wkey, std::move(packed)).get())
      ->bytes->data();
}

const void* packed_b(const MatmulEntry& e, const CacheKey& key, const MatmulArgs& p) {
  return packed_once(*p.b_storage, p.b, key, e.user_b, e.b, *e.b_in);
}

void matmul(const MatmulArgs& p, const char* op) {
  static PrimitiveCache<MatmulEntry> cache("onednn matmul", kCacheCapacity);
  CacheKey key;
  // The thread count too: oneDNN fixes a primitive's threading when it creates it, so one made
  // under torch.set_num_threads(1) would stay single-threaded after set_num_threads(2).
  for (int64_t v : {static_cast<int64_t>(p.type), p.batch, p.m, p.n, p.k, p.a_bs, p.a_rs, p.a_cs,
                    p.b_bs, p.b_rs, p.b_cs, p.c_bs, p.c_rs, int64_t{p.bias != nullptr},
                    int64_t{omp_get_max_threads()}, int64_t{packs_b(p)}})
    key.add(v);
  key.add(p.alpha);
  key.add(p.beta);
  try {
    auto e = cache.get(key, [&](MatmulEntry& e) { make_matmul(e, p); });
    std::unique_ptr<MatmulMemory> m = e->take();
    m->a.set_data_handle(const_cast<void*>(p.a));
    m->b.set_data_handle(const_cast<void*>(e->b_in ? packed_b(*e, key, p) : p.b));
    m->c.set_data_handle(p.c);
    m->scratch.set_data_handle(scratchpad_buffer(e->scratch.get_size()));
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, m->a},
                                            {DNNL_ARG_WEIGHTS, m->b},
                                            {DNNL_ARG_DST, m->c},
                                            {DNNL_ARG_SCRATCHPAD, m->scratch}};
    if (p.bias) {
      m->bias.set_data_handle(const_cast<void*>(p.bias));
      args.emplace(DNNL_ARG_BIAS, m->bias);
    }
    e->prim.execute(cpu_stream(), args);
    cpu_stream().wait();
    e->give_back(std::move(m));
  } catch (const dnnl::error& err) {
    rethrow(err, op, "matmul");
  }
}

void convolution(const ConvArgs& p, const char* op) {
  static PrimitiveCache<ConvEntry> cache("onednn conv", kCacheCapacity);
  CacheKey key;
  for (int64_t v :
       {static_cast<int64_t>(p.type), int64_t{p.nsp}, int64_t{p.transposed}, p.n, p.ic, p.oc,
        p.groups, int64_t{p.bias != nullptr}, int64_t{omp_get_max_threads()},  // as in matmul()
        int64_t{p.channels_last}, int64_t{p.weight_channels_last}, int64_t{p.relu}})
    key.add(v);
  for (int i = 0; i < p.nsp; ++i) {
    for (int64_t v : {p.in[i], p.out[i], p.kernel[i], p.stride[i], p.padding[i], p.dilation[i],
                      p.output_padding[i]})
      key.add(v);
  }
  try {
    auto e = cache.get(key, [&](ConvEntry& e) { make_conv(e, p); });
    auto& eng = cpu_engine();
    auto& s = cpu_stream();
    memory src(e->user_src, eng, const_cast<void*>(p.src));
    memory weight(e->user_weight, eng, const_cast<void*>(p.weight));
    memory dst(e->user_dst, eng, p.dst);
    // Staged operands take their bytes from ampjit's allocator (Note [Large CPU buffers]), which
    // keeps them for the next call; oneDNN's own would fault fresh pages in every time.
    Ref<Storage> src_buf, weight_buf, dst_buf;
    auto staged = [&](const memory::desc& d, Ref<Storage>& buf) {
      buf = Storage::allocate(d.get_size());
      return memory(d, eng, buf->data());
    };
    if (e->src_in) {
      memory in = staged(e->src, src_buf);
      e->src_in->execute(s, src, in);
      src = in;
    }
    if (e->weight_in) {
      if (p.weight_storage && p.weight_storage->frozen()) {
        weight = memory(e->weight, eng,
                        const_cast<void*>(packed_once(*p.weight_storage, p.weight, key,
                                                      e->user_weight, e->weight, *e->weight_in)));
      } else {
        memory in = staged(e->weight, weight_buf);
        e->weight_in->execute(s, weight, in);
        weight = in;
      }
    }
    memory out = e->dst_out ? staged(e->dst, dst_buf) : dst;
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, src},
        {DNNL_ARG_WEIGHTS, weight},
        {DNNL_ARG_DST, out},
        {DNNL_ARG_SCRATCHPAD, scratchpad(e->scratch)},
    };
    if (p.bias) args.emplace(DNNL_ARG_BIAS, memory(e->bias, eng, const_cast<void*>(p.bias)));
    e->prim.execute(s, args);
    if (e->dst_out) e->dst_out->execute(s, out, dst);
    s.wait();
  } catch (const dnnl::error& err) {
    rethrow(err, op, p.transposed ? "transposed convolution" : "convolution");
  }
}

void widen_to_float(const void* src, ScalarType type, float* dst, int64_t n) {
  const bool bf16 = is_bf16(type);
  const auto* s = static_cast<const uint16_t*>(src);
  parallel_for(n, kParallelGrain,
               [&](int64_t b, int64_t e) { widen_reduced(s + b, dst + b, e - b, bf16); });
}

void widen_rows_to_float(const void* src, ScalarType type, float* dst, int64_t nbatch,
                         int64_t batch_stride, int64_t nrows, int64_t row_stride, int64_t len) {
  const bool bf16 = is_bf16(type);
  const auto* s = static_cast<const uint16_t*>(src);
  const int64_t total = nbatch * nrows;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(len, 1));
  parallel_for(total, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const uint16_t* row = s + (r / nrows) * batch_stride + (r % nrows) * row_stride;
      widen_reduced(row, dst + r * len, len, bf16);
    }
  });
}

void round_from_float(const float* src, void* dst, ScalarType type, int64_t n) {
  const bool bf16 = is_bf16(type);
  auto* d = static_cast<uint16_t*>(dst);
  parallel_for(n, kParallelGrain,
               [&](int64_t b, int64_t e) { round_to_reduced(src + b, d + b, e - b, bf16); });
}

constexpr std::align_val_t kScratchAlign{64};

void Scratch::AlignedDelete::operator()(float* p) const {
  ::operator delete(p, kScratchAlign);
}

Scratch::Buffer Scratch::allocate(int64_t n) {
  return Buffer(
      static_cast<float*>(::operator new(static_cast<size_t>(n) * sizeof(float), kScratchAlign)));
}

Scratch::Scratch(int64_t n) {
  n = std::max<int64_t>(n, 1);
  if (n <= kMaxKeptScratch && !t_scratch.busy) {
    if (t_scratch.capacity < n) {
      t_scratch.buf.reset();
      t_scratch.buf = allocate(n);
      t_scratch.capacity = n;
    }
    t_scratch.busy = true;
    borrowed_ = true;
    data_ = t_scratch.buf.get();
  } else {
    own_ = allocate(n);
    data_ = own_.get();
  }
}

Scratch::~Scratch() {
  if (borrowed_) t_scratch.busy = false;
}

}  // namespace ampjit::cpu::onednn
