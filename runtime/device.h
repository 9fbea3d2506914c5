// Devices: a type (cpu, cuda) and an index.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace ampjit {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr int kNumDeviceTypes = 2;

inline const char* device_type_name(DeviceType t) {
  return t == DeviceType::CPU ? "cpu" : "cuda";
}

struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;  // -1: the current device of that type

  constexpr Device() = default;
  constexpr Device(DeviceType t, int idx = -1) : type(t), index(static_cast<int8_t>(idx)) {}
  // Parses "cpu", "cuda", "cuda:1"; throws ValueError on anything else.
  static Device parse(std::string_view s);

  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool operator==(const Device& o) const {
    return type == o.type && (index == o.index || (type == DeviceType::CPU));
  }
  std::string str() const;
};

}  // namespace ampjit
