// CUDA device discovery (safe on machines without a driver or GPU).
#pragma once

namespace ampjit::cuda {
int device_count();               // 0 when no driver or no device
const char* unavailable_reason(); // "" when a device is present
}  // namespace ampjit::cuda
