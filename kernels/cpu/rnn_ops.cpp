// aten::lstm and aten::gru: multi-layer, optionally bidirectional recurrent layers, written with
// other ops for every device (kComposite), as torch 1.13's RNN.cpp writes them
// (CompositeImplicitAutograd): the input projection of a whole layer is one linear, each step adds
// the hidden projection and applies the cell. Inner ops go through the dispatcher, so under
// autocast the linears run in the lower precision and the cell state keeps its float32, exactly as
// torch's composite does (the hidden state's dtype follows type promotion step by step); autograd
// records them too, views included, so the layers are differentiable without a derivative of
// their own.
#include "runtime/boxing.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"

namespace ampjit {
namespace {

struct CellParams {
  Tensor w_ih, w_hh, b_ih, b_hh;  // biases undefined without has_biases
};

std::optional<Tensor> opt(const Tensor& t) {
  return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
}

// The weights of each layer and direction, in torch's order (w_ih, w_hh[, b_ih, b_hh]) per
// layer, the reverse direction after the forward one.
std::vector<CellParams> gather_params(const std::vector<Tensor>& params, bool has_biases,
                                      int64_t num_layers, bool bidirectional, const char* op) {
  const size_t per = has_biases ? 4 : 2;
  const size_t cells = static_cast<size_t>(num_layers) * (bidirectional ? 2 : 1);
  AMPJIT_CHECK(params.size() == cells * per,
               "{}: expected {} parameter tensors ({} layers{}, {} each), got {} (projections, "
               "proj_size > 0, are not supported)",
               op, cells * per, num_layers, bidirectional ? ", both directions" : "", per,
               params.size());
  std::vector<CellParams> out;
  for (size_t c = 0; c < cells; ++c) {
    CellParams p;
    p.w_ih = params[c * per];
    p.w_hh = params[c * per + 1];
    if (has_biases) {
      p.b_ih = params[c * per + 2];
      p.b_hh = params[c * per + 3];
    }
    out.push_back(std::move(p));
  }
  return out;
}

// One direction of one layer over the sequence `x` (seq, batch, features): the outputs stacked,
// and the final state (h, c; c undefined for a GRU).
template <bool Lstm>
std::tuple<Tensor, Tensor, Tensor> run_direction(const Tensor& x, Tensor h, Tensor c,
                                                 const CellParams& p, bool reverse) {
  const Tensor projected = ops::linear(x, p.w_ih, opt(p.b_ih));
  const int64_t steps = x.size(0);
  std::vector<Tensor> outputs(static_cast<size_t>(steps));
  for (int64_t k = 0; k < steps; ++k) {
    const int64_t t = reverse ? steps - 1 - k : k;
    const Tensor in = ops::select(projected, 0, t);
    const Tensor hidden = ops::linear(h, p.w_hh, opt(p.b_hh));
    if constexpr (Lstm) {
      const std::vector<Tensor> g = ops::chunk(ops::add(hidden, in), 4, 1).value().to_tensor_list();
      const Tensor ingate = ops::sigmoid(g[0]), forgetgate = ops::sigmoid(g[1]);
      const Tensor cellgate = ops::tanh(g[2]), outgate = ops::sigmoid(g[3]);
      c = ops::add(ops::mul(forgetgate, c), ops::mul(ingate, cellgate));
      h = ops::mul(outgate, ops::tanh(c));
    } else {
      const std::vector<Tensor> gi = ops::chunk(in, 3, 1).value().to_tensor_list();
      const std::vector<Tensor> gh = ops::chunk(hidden, 3, 1).value().to_tensor_list();
      const Tensor reset = ops::sigmoid(ops::add(gh[0], gi[0]));
      const Tensor update = ops::sigmoid(ops::add(gh[1], gi[1]));
      const Tensor candidate = ops::tanh(ops::add(gi[2], ops::mul(gh[2], reset)));
      h = ops::add(ops::mul(ops::sub(h, candidate), update), candidate);
    }
    outputs[static_cast<size_t>(t)] = h;
  }
  return {ops::stack(outputs, 0), h, c};
}

template <bool Lstm>
std::tuple<Tensor, Tensor, Tensor> rnn(const Tensor& input, const Tensor& h0, const Tensor& c0,
                                       const std::vector<Tensor>& params, bool has_biases,
                                       int64_t num_layers, double dropout, bool train,
                                       bool bidirectional, bool batch_first) {
  const char* op = Lstm ? "lstm" : "gru";
  AMPJIT_CHECK(input.dim() == 3, "{}: expected a 3-D input (batched), got {}-D", op, input.dim());
  AMPJIT_CHECK(num_layers >= 1, "{}: num_layers must be at least 1", op);
  const std::vector<CellParams> cells =
      gather_params(params, has_biases, num_layers, bidirectional, op);
  const int64_t dirs = bidirectional ? 2 : 1;
  AMPJIT_CHECK(h0.dim() == 3 && h0.size(0) == num_layers * dirs,
               "{}: expected hidden state of {} layers and directions, got {}", op,
               num_layers * dirs, h0.shape_str());
  Tensor x = batch_first ? ops::transpose(input, 0, 1).tensor() : input;
  std::vector<Tensor> hs, cs;
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t i = layer * dirs + d;
      auto [out, h, c] = run_direction<Lstm>(x, ops::select(h0, 0, i),
                                             Lstm ? ops::select(c0, 0, i).tensor() : Tensor(),
                                             cells[static_cast<size_t>(i)], d == 1);
      outs.push_back(out);
      hs.push_back(h);
      if (Lstm) cs.push_back(c);
    }
    x = dirs == 1 ? outs[0] : ops::cat(outs, 2).tensor();
    if (dropout > 0 && train && layer + 1 < num_layers) x = ops::dropout(x, dropout, train);
  }
  if (batch_first) x = ops::transpose(x, 0, 1);
  return {x, ops::stack(hs, 0), Lstm ? ops::stack(cs, 0).tensor() : Tensor()};
}

std::tuple<Tensor, Tensor, Tensor> lstm_k(const Tensor& input, std::vector<Tensor> hx,
                                          std::vector<Tensor> params, bool has_biases,
                                          int64_t num_layers, double dropout, bool train,
                                          bool bidirectional, bool batch_first) {
  AMPJIT_CHECK(hx.size() == 2, "lstm expects two hidden states");
  return rnn<true>(input, hx[0], hx[1], params, has_biases, num_layers, dropout, train,
                   bidirectional, batch_first);
}

std::tuple<Tensor, Tensor> gru_k(const Tensor& input, const Tensor& hx, std::vector<Tensor> params,
                                 bool has_biases, int64_t num_layers, double dropout, bool train,
                                 bool bidirectional, bool batch_first) {
  auto [out, h, c] = rnn<false>(input, hx, Tensor(), params, has_biases, num_layers, dropout, train,
                                bidirectional, batch_first);
  return {out, h};
}

}  // namespace
}  // namespace ampjit

AMPJIT_KERNEL(lstm, lstm_k)
AMPJIT_KERNEL(gru, gru_k)
