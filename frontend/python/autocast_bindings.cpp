// Python bindings of the eager autocast state and policy profiles (runtime/autocast). The
// context managers and decorators themselves are Python (ampjit/amp/autocast_mode.py).
#include "frontend/python/convert.h"
#include "runtime/autocast/autocast_state.h"
#include "runtime/autocast/policy_profiles.h"

namespace ampjit::python {

namespace {

DeviceType device_type_of(const std::string& s) {
  if (s == "cpu") return DeviceType::CPU;
  if (s == "cuda") return DeviceType::CUDA;
  throw Error(fmt::format(
      "User specified an unsupported autocast device_type '{}'; ampjit supports 'cpu' and 'cuda'",
      s));
}

bool is_enabled(const std::string& d) {
  return is_autocast_enabled(device_type_of(d));
}
void set_enabled(const std::string& d, bool e) {
  set_autocast_enabled(device_type_of(d), e);
}
bp::object get_dtype(const std::string& d) {
  return dtype_object(get_autocast_dtype(device_type_of(d)));
}
void set_dtype(const std::string& d, bp::object dt) {
  set_autocast_dtype(device_type_of(d), to_ivalue(dt.ptr()).to_scalar_type());
}
bp::object default_dtype(const std::string& d) {
  return dtype_object(default_autocast_dtype(device_type_of(d)));
}
void set_policy(const std::string& d, const std::string& op, const std::string& policy) {
  set_op_policy(device_type_of(d), op, policy);
}
void reset_policy(const std::string& d, const std::string& op) {
  reset_op_policy(device_type_of(d), op);
}
std::string policy_of(const std::string& d, const std::string& op) {
  return autocast_policy_name(get_op_policy(device_type_of(d), op));
}
bp::list profile_names() {
  bp::list l;
  for (const auto& n : autocast_profile_names()) l.append(n);
  return l;
}
void set_profile(const std::string& n) {
  set_autocast_profile(n);
}
int cache_size() {
  return static_cast<int>(autocast_cache_size());
}

}  // namespace

void bind_autocast() {
  bp::def("_autocast_is_enabled", is_enabled);
  bp::def("_autocast_set_enabled", set_enabled);
  bp::def("_autocast_get_dtype", get_dtype);
  bp::def("_autocast_set_dtype", set_dtype);
  bp::def("_autocast_default_dtype", default_dtype);
  bp::def("_autocast_increment_nesting", autocast_increment_nesting);
  bp::def("_autocast_decrement_nesting", autocast_decrement_nesting);
  bp::def("_autocast_is_cache_enabled", is_autocast_cache_enabled);
  bp::def("_autocast_set_cache_enabled", set_autocast_cache_enabled);
  bp::def("_autocast_clear_cache", clear_autocast_cache);
  bp::def("_autocast_cache_size", cache_size);
  bp::def("_autocast_profile_names", profile_names);
  bp::def("_autocast_get_profile", get_autocast_profile);
  bp::def("_autocast_set_profile", set_profile);
  bp::def("_autocast_set_op_policy", set_policy);
  bp::def("_autocast_reset_op_policy", reset_policy);
  bp::def("_autocast_reset_op_policies", reset_op_policies);
  bp::def("_autocast_get_op_policy", policy_of);
}

}  // namespace ampjit::python
