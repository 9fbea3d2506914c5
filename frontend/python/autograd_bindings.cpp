// Python bindings of autograd (runtime/autograd/autograd.h): Tensor.grad, grad_fn, hooks,
// backward, torch.autograd.grad and the nodes of torch.autograd.Function.
#include <fmt/format.h>

#include "frontend/python/convert.h"
#include "runtime/autograd/autograd.h"
#include "runtime/autograd/functions.h"
#include "runtime/autograd/views.h"
#include "runtime/error.h"
#include "runtime/grad_mode.h"
#include "runtime/ops.h"

namespace ampjit::python {

namespace {

// A Python object held by C++ autograd state (hooks, Function nodes), which may be released or
// called where the GIL is not held: both take it.
class PyRef {
 public:
  explicit PyRef(bp::object o) : p_(o.ptr()) { Py_XINCREF(p_); }
  PyRef(const PyRef& o) : p_(o.p_) {
    PyGILState_STATE g = PyGILState_Ensure();
    Py_XINCREF(p_);
    PyGILState_Release(g);
  }
  PyRef& operator=(const PyRef&) = delete;
  ~PyRef() {
    if (!p_ || !Py_IsInitialized()) return;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_DECREF(p_);
    PyGILState_Release(g);
  }
  bp::object get() const { return bp::object(bp::handle<>(bp::borrowed(p_))); }

 private:
  PyObject* p_;
};

class GIL {
 public:
  GIL() : g_(PyGILState_Ensure()) {}
  ~GIL() { PyGILState_Release(g_); }

 private:
  PyGILState_STATE g_;
};

// Turns a Python exception raised inside a callback into a C++ exception the engine unwinds
// with; the Python error stays set, so the binding that started backward re-raises it as is.
struct PythonError : std::exception {
  const char* what() const noexcept override { return "Python exception in autograd callback"; }
};

// ---- grad_fn objects ------------------------------------------------------------------------

struct NodeObject {
  std::shared_ptr<autograd::Node> node;
};

bp::object node_object(const std::shared_ptr<autograd::Node>& n) {
  if (!n) return bp::object();
  return bp::object(NodeObject{n});
}

std::string node_name(const NodeObject& n) {
  return n.node->name();
}

std::string node_repr(const NodeObject& n) {
  std::string name = n.node->name();
  if (auto pos = name.rfind("::"); pos != std::string::npos) name = name.substr(pos + 2);
  return fmt::format("<{} object at {}>", name, static_cast<const void*>(n.node.get()));
}

bp::tuple next_functions(const NodeObject& n) {
  bp::list out;
  for (const autograd::Edge& e : n.node->next_edges)
    out.append(bp::make_tuple(node_object(e.fn), e.input_nr));
  return bp::tuple(out);
}

bool node_eq(const NodeObject& a, bp::object b) {
  bp::extract<const NodeObject&> other(b);
  return other.check() && other().node == a.node;
}

size_t node_hash(const NodeObject& n) {
  return std::hash<const void*>()(n.node.get());
}

// AccumulateGrad.variable: the leaf it accumulates into.
bp::object node_variable(const NodeObject& n) {
  auto* acc = dynamic_cast<autograd::AccumulateGrad*>(n.node.get());
  if (!acc) throw Error(fmt::format("'{}' object has no attribute 'variable'", n.node->name()));
  return wrap(acc->variable());
}

bp::object property(bp::object get, bp::object set = bp::object()) {
  return bp::object(bp::handle<>(PyObject_CallFunctionObjArgs(
      reinterpret_cast<PyObject*>(&PyProperty_Type), get.ptr(), set.ptr(), nullptr)));
}

// ---- Tensor properties ----------------------------------------------------------------------

bp::object t_grad(const Tensor& t) {
  Tensor g = autograd::grad(t);
  return g.defined() ? wrap(g) : bp::object();
}

void t_set_grad(const Tensor& t, bp::object g) {
  if (g.is_none()) return autograd::set_grad(t, Tensor());
  Tensor* gt = as_tensor(g.ptr());
  if (!gt)
    throw TypeError(
        fmt::format("assigned grad expected to be a Tensor or None but got grad of type {}",
                    Py_TYPE(g.ptr())->tp_name));
  autograd::set_grad(t, *gt);
}

bp::object t_grad_fn(const Tensor& t) {
  return node_object(autograd::grad_fn(t));
}

// torch's is_leaf: no grad_fn (a view's grad_fn may come from its base's history first).
bool t_is_leaf(const Tensor& t) {
  return autograd::grad_fn(t) == nullptr;
}

// Tensor._is_view() and Tensor._base: views made by view ops (Note [Views and in-place changes]).
bool t_is_view(const Tensor& t) {
  return autograd::is_tracked_view(t);
}
bool t_is_inference(const Tensor& t) {
  return t.impl()->is_inference;
}
bp::object t_base(const Tensor& t) {
  Tensor b = autograd::view_base(t);
  return b.defined() ? wrap(b) : bp::object();
}

uint32_t t_version(const Tensor& t) {
  return autograd::version(t);
}

uint32_t t_output_nr(const Tensor& t) {
  return autograd::output_nr(t);
}

bool t_retains_grad(const Tensor& t) {
  return autograd::retains_grad(t);
}

void t_retain_grad(const Tensor& t) {
  autograd::retain_grad(t);
}

// .data: the same data without autograd history.
bp::object t_data(const Tensor& t) {
  Tensor a = Tensor::make_view(t, t.sizes(), t.strides(), t.storage_offset());
  a.impl()->is_view = t.is_view();
  return wrap(a);
}

// t.data = other: t takes other's data (storage, shape, dtype); its autograd state stays.
void t_set_data(Tensor& t, const Tensor& other) {
  TensorImpl& i = *t.impl();
  const TensorImpl& o = *other.impl();
  i.storage = o.storage;
  i.sizes = o.sizes;
  i.strides = o.strides;
  i.offset = o.offset;
  i.dtype = o.dtype;
  i.device = o.device;
  i.refresh();
}

bp::object t_detach_(bp::object self) {
  Tensor& t = bp::extract<Tensor&>(self)();
  AMPJIT_CHECK(!autograd::is_tracked_view(t),
               "Can't detach views in-place. Use detach() instead. If you are using "
               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as "
               "True, gradients are views of DDP buckets, and hence detach_() cannot be called on "
               "these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
               "function in torch/optim/optimizer.py as the solution.");
  if (autograd::AutogradMeta* m = autograd::meta(t)) {
    m->grad_fn.reset();
    m->output_nr = 0;
  }
  t.impl()->requires_grad = false;
  t.impl()->is_leaf = true;
  return self;
}

// ---- hooks ----------------------------------------------------------------------------------

struct HandleObject {
  autograd::HookHandle handle;
  void remove() { handle.remove(); }
};

HandleObject t_register_hook(const Tensor& t, bp::object fn) {
  PyRef ref(fn);
  autograd::TensorHook hook = [ref](const Tensor& g) -> Tensor {
    GIL gil;
    PyObject* r = PyObject_CallOneArg(ref.get().ptr(), wrap(g).ptr());
    if (!r) throw PythonError();
    bp::object result{bp::handle<>(r)};
    if (result.is_none()) return Tensor();
    Tensor* rt = as_tensor(r);
    if (!rt)
      throw TypeError(fmt::format("hook returned an object of type {}; expected a Tensor or None",
                                  Py_TYPE(r)->tp_name));
    return *rt;
  };
  return HandleObject{autograd::register_hook(t, std::move(hook))};
}

// ---- backward, grad ---------------------------------------------------------------------------

std::vector<Tensor> tensors_of(bp::object seq, bool allow_none) {
  std::vector<Tensor> out;
  if (seq.is_none()) return out;
  const Py_ssize_t n = bp::len(seq);
  for (Py_ssize_t i = 0; i < n; ++i) {
    bp::object o = seq[i];
    if (o.is_none() && allow_none) {
      out.emplace_back();
      continue;
    }
    Tensor* t = as_tensor(o.ptr());
    if (!t) throw TypeError(fmt::format("expected a Tensor, got {}", Py_TYPE(o.ptr())->tp_name));
    out.push_back(*t);
  }
  return out;
}

std::optional<bool> opt_bool(bp::object o) {
  if (o.is_none()) return std::nullopt;
  return bp::extract<bool>(o)();
}

// Runs `f`, turning a PythonError (an exception a callback raised) back into that exception.
template <typename F>
auto reraising(F&& f) {
  try {
    return f();
  } catch (const PythonError&) {
    bp::throw_error_already_set();
    throw;
  }
}

void py_backward(bp::object tensors, bp::object grads, bp::object retain_graph, bool create_graph,
                 bp::object inputs) {
  std::vector<Tensor> ts = tensors_of(tensors, false), gs = tensors_of(grads, true),
                      ins = tensors_of(inputs, false);
  reraising([&] {
    autograd::backward(ts, gs, opt_bool(retain_graph), create_graph, ins);
    return 0;
  });
}

bp::tuple py_grad(bp::object outputs, bp::object inputs, bp::object grads, bp::object retain_graph,
                  bool create_graph, bool allow_unused) {
  std::vector<Tensor> os = tensors_of(outputs, false), gs = tensors_of(grads, true),
                      ins = tensors_of(inputs, false);
  std::vector<Tensor> r = reraising([&] {
    return autograd::grad(os, gs, ins, opt_bool(retain_graph), create_graph, allow_unused);
  });
  bp::list out;
  for (const Tensor& t : r) out.append(t.defined() ? wrap(t) : bp::object());
  return bp::tuple(out);
}

// torch.autograd.Function.apply's recording: `backward(grads) -> grads` (a Python callable taking
// the list of output gradients, None where none arrived, and returning one gradient or None per
// input that requires grad), `release()` when the graph is freed.
bp::list py_record_function(const std::string& name, bp::object backward, bp::object release,
                            bp::object inputs, bp::object outputs, bp::object dirty,
                            bp::object non_differentiable) {
  PyRef bwd(backward), rel(release);
  auto node = std::make_shared<autograd::FunctionNode>(
      name,
      [bwd](std::vector<Tensor>&& grads) -> std::vector<Tensor> {
        GIL gil;
        bp::list gl;
        for (const Tensor& g : grads) gl.append(g.defined() ? wrap(g) : bp::object());
        PyObject* r = PyObject_CallOneArg(bwd.get().ptr(), gl.ptr());
        if (!r) throw PythonError();
        bp::object result{bp::handle<>(r)};
        return tensors_of(result, true);
      },
      [rel]() {
        GIL gil;
        PyObject* r = PyObject_CallNoArgs(rel.get().ptr());
        if (!r) {
          PyErr_Clear();
          return;
        }
        Py_DECREF(r);
      });
  std::vector<Tensor> outs =
      autograd::record_function(node, tensors_of(inputs, true), tensors_of(outputs, true),
                                tensors_of(dirty, false), tensors_of(non_differentiable, false));
  bp::list out;
  for (const Tensor& t : outs) out.append(t.defined() ? wrap(t) : bp::object());
  return out;
}

// ampjit.optim's fused step (Note [Fused optimizer steps] in kernels/cpu/optim_ops.cpp): a
// script-only op, which the generic call does not reach.
void py_adam_step(const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                  const Tensor& exp_avg_sq, bp::object max_exp_avg_sq, double lr, double beta1,
                  double beta2, double eps, double weight_decay, double step, bool amsgrad,
                  bool maximize, bool decoupled) {
  IValue max_sq;
  if (!max_exp_avg_sq.is_none()) max_sq = IValue(bp::extract<const Tensor&>(max_exp_avg_sq)());
  ops::adam_step(param, grad, exp_avg, exp_avg_sq, max_sq, lr, beta1, beta2, eps, weight_decay,
                 step, amsgrad, maximize, decoupled);
}

void py_sgd_step(const Tensor& param, const Tensor& grad, bp::object momentum_buffer, double lr,
                 double momentum, double dampening, double weight_decay, bool nesterov,
                 bool maximize, bool first) {
  IValue buf;
  if (!momentum_buffer.is_none()) buf = IValue(bp::extract<const Tensor&>(momentum_buffer)());
  ops::sgd_step(param, grad, buf, lr, momentum, dampening, weight_decay, nesterov, maximize, first);
}

}  // namespace

void bind_autograd() {
  bp::class_<NodeObject>("_Node", bp::no_init)
      .def("name", node_name)
      .add_property("variable", node_variable)
      .add_property("next_functions", next_functions)
      .def("__repr__", node_repr)
      .def("__eq__", node_eq)
      .def("__hash__", node_hash);
  bp::class_<HandleObject>("_RemovableHandle", bp::no_init).def("remove", &HandleObject::remove);
  bp::object tensor = bp::scope().attr("Tensor");
  bp::setattr(tensor, "grad", property(bp::make_function(t_grad), bp::make_function(t_set_grad)));
  bp::setattr(tensor, "grad_fn", property(bp::make_function(t_grad_fn)));
  bp::setattr(tensor, "_version", property(bp::make_function(t_version)));
  bp::setattr(tensor, "is_leaf", property(bp::make_function(t_is_leaf)));
  bp::setattr(tensor, "_base", property(bp::make_function(t_base)));
  bp::setattr(tensor, "_is_view", bp::make_function(t_is_view));
  bp::setattr(tensor, "is_inference", bp::make_function(t_is_inference));
  bp::setattr(tensor, "output_nr", property(bp::make_function(t_output_nr)));
  bp::setattr(tensor, "retains_grad", property(bp::make_function(t_retains_grad)));
  bp::setattr(tensor, "data", property(bp::make_function(t_data), bp::make_function(t_set_data)));
  bp::setattr(tensor, "retain_grad", bp::make_function(t_retain_grad));
  bp::setattr(tensor, "detach_", bp::make_function(t_detach_));
  bp::setattr(tensor, "_register_hook", bp::make_function(t_register_hook));
  bp::def("_backward", py_backward);
  bp::def("_grad", py_grad);
  bp::def("_record_function", py_record_function);
  bp::def("_adam_step", py_adam_step);
  bp::def("_sgd_step", py_sgd_step);
}

}  // namespace ampjit::python
