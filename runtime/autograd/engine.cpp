// The backward engine (see autograd.h, Note [Autograd]).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "runtime/autograd/autograd.h"
#include "runtime/autograd/functions.h"
#include "runtime/error.h"
#include "runtime/grad_mode.h"
#include "runtime/ops.h"

namespace ampjit::autograd {

namespace {

// AMPJIT_AUTOGRAD_PROFILE=1: the time backward spends in each kind of node, summed over the
// process and printed to stderr at exit, slowest first (a developer's tool for the training
// benchmark; read once).
class Profile {
 public:
  void add(const std::string& name, std::chrono::steady_clock::duration d) {
    std::lock_guard<std::mutex> lock(mu_);
    Entry& e = by_name_[name];
    e.total += d;
    e.calls += 1;
  }
  ~Profile() {
    std::vector<std::pair<std::string, Entry>> rows(by_name_.begin(), by_name_.end());
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.second.total > b.second.total; });
    std::fprintf(stderr, "autograd profile: node, calls, total ms\n");
    for (const auto& [name, e] : rows)
      std::fprintf(stderr, "  %-32s %8lld %10.2f\n", name.c_str(), static_cast<long long>(e.calls),
                   std::chrono::duration<double, std::milli>(e.total).count());
  }

 private:
  struct Entry {
    std::chrono::steady_clock::duration total{};
    int64_t calls = 0;
  };
  std::mutex mu_;
  std::unordered_map<std::string, Entry> by_name_;
};

Profile* profile() {
  static Profile* p = std::getenv("AMPJIT_AUTOGRAD_PROFILE") ? new Profile() : nullptr;
  static const bool registered = p && std::atexit([] { delete p; }) == 0;
  (void)registered;
  return p;
}

bool same_sizes(IntArrayRef a, IntArrayRef b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// Whether `from` broadcasts to `to` (torch's is_expandable_to).
bool expandable_to(IntArrayRef from, IntArrayRef to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    const int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

}  // namespace

// Sums `g` over the dimensions it was broadcast along, to `sizes` (torch's at::sum_to).
Tensor sum_to(const Tensor& g, IntArrayRef sizes) {
  if (same_sizes(g.sizes(), sizes)) return g;
  const int64_t lead = g.dim() - static_cast<int64_t>(sizes.size());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < lead; ++i) dims.push_back(i);
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] == 1 && g.sizes()[lead + i] != 1) dims.push_back(lead + static_cast<int64_t>(i));
  Tensor r = g;
  if (!dims.empty()) r = ops::sum_dim_IntList(g, dims, true);
  if (lead > 0 || !same_sizes(r.sizes(), sizes))
    r = ops::view(r, std::vector<int64_t>(sizes.begin(), sizes.end()));
  return r;
}

namespace {

// torch's validate_outputs: the gradient of a tensor has its shape (broadcasts summed back), its
// dtype and its device.
Tensor validate(const Node& fn, uint32_t nr, Tensor g) {
  if (!g.defined()) return g;
  const TensorMeta& m = fn.out_meta.at(nr);
  if (!same_sizes(g.sizes(), m.sizes)) {
    AMPJIT_CHECK(expandable_to(m.sizes, g.sizes()),
                 "Function {} returned an invalid gradient at index {} - got [{}] but expected "
                 "shape compatible with [{}]",
                 fn.name(), nr, fmt::join(g.sizes(), ", "), fmt::join(m.sizes, ", "));
    g = sum_to(g, m.sizes);
  }
  if (g.dtype() != m.dtype) g = ops::to_dtype(g, m.dtype);
  AMPJIT_CHECK(
      g.device() == m.device,
      "Function {} returned an invalid gradient at index {} - expected device {} but got {}",
      fn.name(), nr, m.device.str(), g.device().str());
  return g;
}

void accumulate_into(Tensor& slot, Tensor g) {
  if (!slot.defined())
    slot = std::move(g);
  else
    slot = ops::add(slot, g);
}

struct Capture {
  Node* fn;
  uint32_t nr;
  size_t index;
};

class GraphTask {
 public:
  GraphTask(bool keep_graph, bool create_graph, bool accumulate)
      : keep_graph_(keep_graph), create_graph_(create_graph), accumulate_(accumulate) {}

  // Runs backward from the root edges with their gradients. With `captures`, only what leads to
  // them runs, and the gradients arriving there are returned instead of accumulated.
  std::vector<Tensor> run(const std::vector<Edge>& roots, std::vector<Tensor> root_grads,
                          const std::vector<Edge>& captures) {
    std::vector<Tensor> captured(captures.size());
    count_dependencies(roots);
    if (!captures.empty() || !accumulate_) mark_needed(roots, captures);
    for (size_t i = 0; i < captures.size(); ++i)
      capture_at_[captures[i].fn.get()].push_back(
          Capture{captures[i].fn.get(), captures[i].input_nr, i});

    AutoGradMode mode(create_graph_);
    for (size_t i = 0; i < roots.size(); ++i) {
      if (!roots[i].valid()) continue;
      deliver(roots[i], std::move(root_grads[i]));
    }
    for (const Edge& e : roots)
      if (e.valid() && --deps_[e.fn.get()] == 0) push_ready(e.fn);
    while (!ready_.empty()) {
      std::shared_ptr<Node> fn = ready_.top().fn;
      ready_.pop();
      execute(fn, captured);
    }
    return captured;
  }

 private:
  struct Ready {
    std::shared_ptr<Node> fn;
    bool operator<(const Ready& o) const { return fn->sequence_nr < o.fn->sequence_nr; }
  };

  void count_dependencies(const std::vector<Edge>& roots) {
    std::vector<Node*> stack;
    for (const Edge& e : roots) {
      if (!e.valid()) continue;
      deps_[e.fn.get()] += 1;
      if (seen_.insert(e.fn.get()).second) stack.push_back(e.fn.get());
    }
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      for (const Edge& e : n->next_edges) {
        if (!e.valid()) continue;
        deps_[e.fn.get()] += 1;
        if (seen_.insert(e.fn.get()).second) stack.push_back(e.fn.get());
      }
    }
  }

  // A node runs when a capture is reachable from it (or, for backward(inputs=...), it is one of
  // the inputs' accumulators).
  void mark_needed(const std::vector<Edge>& roots, const std::vector<Edge>& captures) {
    std::unordered_set<Node*> targets;
    for (const Edge& c : captures) targets.insert(c.fn.get());
    std::unordered_map<Node*, bool> memo;
    // Iterative post-order over the graph.
    std::vector<std::pair<Node*, size_t>> stack;
    for (const Edge& r : roots) {
      if (!r.valid() || memo.count(r.fn.get())) continue;
      stack.emplace_back(r.fn.get(), 0);
      memo[r.fn.get()] = false;
      while (!stack.empty()) {
        auto& [n, i] = stack.back();
        if (i < n->next_edges.size()) {
          Node* c = n->next_edges[i++].fn.get();
          if (c && !memo.count(c)) {
            memo[c] = false;
            stack.emplace_back(c, 0);
          }
          continue;
        }
        bool need = targets.count(n) > 0 && dynamic_cast<AccumulateGrad*>(n) != nullptr;
        for (const Edge& e : n->next_edges)
          if (e.valid() && (memo[e.fn.get()] || targets.count(e.fn.get()))) need = true;
        memo[n] = need;
        stack.pop_back();
      }
    }
    for (auto& [n, need] : memo)
      if (need) needed_.insert(n);
    restrict_ = true;
  }

  void deliver(const Edge& e, Tensor g) {
    if (!g.defined()) return;
    std::vector<Tensor>& buf = buffers_[e.fn.get()];
    if (buf.empty()) buf.resize(e.fn->num_outputs());
    accumulate_into(buf.at(e.input_nr), validate(*e.fn, e.input_nr, std::move(g)));
  }

  void push_ready(const std::shared_ptr<Node>& fn) { ready_.push(Ready{fn}); }

  void run_hooks(Node& fn, std::vector<Tensor>& grads) {
    std::vector<HookEntry> hooks;
    {
      std::lock_guard<std::mutex> lock(fn.hooks_mutex);
      hooks = fn.pre_hooks;
    }
    if (auto* acc = dynamic_cast<AccumulateGrad*>(&fn)) {
      if (AutogradMeta* m = meta(acc->variable())) {
        std::lock_guard<std::mutex> lock(m->mutex);
        hooks.insert(hooks.end(), m->hooks.begin(), m->hooks.end());
      }
    }
    for (const HookEntry& h : hooks) {
      Tensor& g = grads.at(h.output_nr);
      if (!g.defined()) continue;
      Tensor r = h.fn(g);
      if (r.defined()) g = validate(fn, h.output_nr, r);
    }
  }

  void execute(const std::shared_ptr<Node>& fn, std::vector<Tensor>& captured) {
    std::vector<Tensor> grads = std::move(buffers_[fn.get()]);
    buffers_.erase(fn.get());
    grads.resize(fn->num_outputs());
    run_hooks(*fn, grads);
    if (auto it = capture_at_.find(fn.get()); it != capture_at_.end())
      for (const Capture& c : it->second) captured[c.index] = grads.at(c.nr);
    const bool is_acc = dynamic_cast<AccumulateGrad*>(fn.get()) != nullptr;
    if ((is_acc && !accumulate_) || (restrict_ && !needed_.count(fn.get()))) return release(*fn);
    bool any = false;
    for (const Tensor& g : grads) any = any || g.defined();
    std::vector<Tensor> outs;
    if (any) {
      if (Profile* prof = profile()) {
        const auto t0 = std::chrono::steady_clock::now();
        outs = fn->apply(std::move(grads));
        prof->add(fn->name(), std::chrono::steady_clock::now() - t0);
      } else {
        outs = fn->apply(std::move(grads));
      }
    }
    release(*fn);
    if (!is_acc && any && outs.size() != fn->next_edges.size())
      throw Error(
          fmt::format("function {} returned an incorrect number of gradients (expected "
                      "{}, got {})",
                      fn->name(), fn->next_edges.size(), outs.size()));
    for (size_t i = 0; i < fn->next_edges.size(); ++i) {
      const Edge& e = fn->next_edges[i];
      if (!e.valid()) continue;
      if (any && outs[i].defined()) deliver(e, std::move(outs[i]));
      if (--deps_[e.fn.get()] == 0) push_ready(e.fn);
    }
  }

  void release(Node& fn) {
    if (!keep_graph_) fn.release_saved();
  }

  bool keep_graph_, create_graph_, accumulate_;
  bool restrict_ = false;
  std::unordered_map<Node*, int> deps_;
  std::unordered_set<Node*> seen_;
  std::unordered_set<Node*> needed_;
  std::unordered_map<Node*, std::vector<Tensor>> buffers_;
  std::unordered_map<Node*, std::vector<Capture>> capture_at_;
  std::priority_queue<Ready> ready_;
};

// The roots and their gradients: ones for scalars when none is given.
void make_roots(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
                std::vector<Edge>& roots, std::vector<Tensor>& grads) {
  AMPJIT_CHECK(grad_tensors.empty() || grad_tensors.size() == tensors.size(),
               "got {} tensors and {} gradients", tensors.size(), grad_tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    AMPJIT_CHECK(t.requires_grad(),
                 "element {} of tensors does not require grad and does not have a grad_fn", i);
    Tensor g = grad_tensors.empty() ? Tensor() : grad_tensors[i];
    if (!g.defined()) {
      AMPJIT_CHECK(t.numel() == 1, "grad can be implicitly created only for scalar outputs");
      g = ops::ones_like(t);
    } else {
      AMPJIT_CHECK(same_sizes(g.sizes(), t.sizes()),
                   "Mismatch in shape: grad_output[{}] has a shape of torch.Size([{}]) and "
                   "output[{}] has a shape of torch.Size([{}]).",
                   i, fmt::join(g.sizes(), ", "), i, fmt::join(t.sizes(), ", "));
    }
    roots.push_back(gradient_edge(t));
    grads.push_back(std::move(g));
  }
}

}  // namespace

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph,
              const std::vector<Tensor>& inputs) {
  std::vector<Edge> roots;
  std::vector<Tensor> grads;
  make_roots(tensors, grad_tensors, roots, grads);
  const bool keep = retain_graph.value_or(create_graph);
  if (inputs.empty()) {
    GraphTask(keep, create_graph, true).run(roots, std::move(grads), {});
    return;
  }
  // backward(inputs=...): only these accumulate (non-leaf inputs through their captured grads).
  std::vector<Edge> captures;
  for (const Tensor& in : inputs) {
    AMPJIT_CHECK(in.requires_grad(), "One of the differentiated Tensors does not require grad");
    captures.push_back(gradient_edge(in));
  }
  std::vector<Tensor> got =
      GraphTask(keep, create_graph, true).run(roots, std::move(grads), captures);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].is_leaf() || !got[i].defined()) continue;
    AutogradMeta& m = ensure_meta(inputs[i]);
    m.grad = m.grad.defined() ? ops::add(m.grad, got[i]) : got[i];
  }
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs,
                         const std::vector<Tensor>& grad_outputs, const std::vector<Tensor>& inputs,
                         std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  std::vector<Edge> roots;
  std::vector<Tensor> grads;
  make_roots(outputs, grad_outputs, roots, grads);
  std::vector<Edge> captures;
  for (const Tensor& in : inputs) {
    AMPJIT_CHECK(in.requires_grad(), "One of the differentiated Tensors does not require grad");
    captures.push_back(gradient_edge(in));
  }
  const bool keep = retain_graph.value_or(create_graph);
  std::vector<Tensor> got =
      GraphTask(keep, create_graph, false).run(roots, std::move(grads), captures);
  for (size_t i = 0; i < got.size(); ++i)
    AMPJIT_CHECK(got[i].defined() || allow_unused,
                 "One of the differentiated Tensors appears to not have been used in the graph. "
                 "Set allow_unused=True if this is the desired behavior.");
  return got;
}

}  // namespace ampjit::autograd
