// torch.set_default_dtype / get_default_dtype: the floating dtype factories create when given no
// dtype (ones, zeros, rand, arange and full of floats, tensor([1.5])) and the dtype a Python float
// takes in type promotion (an int tensor times 1.5). Process-wide, as torch's; float32 unless set.
#pragma once
#include "runtime/dtype.h"

namespace ampjit {

ScalarType default_float_dtype();
// Sets it: float16, bfloat16, float32 or float64 (any other dtype is torch's TypeError).
void set_default_float_dtype(ScalarType t);

}  // namespace ampjit
