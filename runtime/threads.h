// The number of threads ampjit's CPU kernels split their work over (torch.set_num_threads).
#pragma once

namespace ampjit {

// Sets the count max_threads() returns (runtime/strided_loop.h) for every kernel, and the OpenMP
// count of the calling thread, which oneDNN's primitives read. n >= 1.
void set_max_threads(int n);

}  // namespace ampjit
