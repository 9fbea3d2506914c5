# --format json: one document with the function, the passes and each stage's graph (inputs,
# outputs, nodes with kind, op, inputs, typed outputs, attributes, blocks and source location).
# ARGS: --format json --passes all --eager-autocast cpu=bfloat16
import torch


def f(x, w):
    y = torch.mm(x, w)
    return y + 1

# CHECK: {
# CHECK-NEXT: "function": "f",
# CHECK-NEXT: "file": "{{.*}}json_format.py",
# CHECK-NEXT: "passes": ["inline", "constprop", "autocast", "cse", "dce"],
# CHECK-NEXT: "semantics": "torchscript",
# CHECK-NEXT: "eager_autocast": "cpu=bfloat16",
# CHECK-NEXT: "stages": [
# CHECK: "stage": "as built",
# CHECK-NEXT: "graph": {
# CHECK-NEXT: "inputs": [
# CHECK-NEXT: {"name": "%x", "type": "Tensor"},
# CHECK-NEXT: {"name": "%w", "type": "Tensor"}
# CHECK: "kind": "aten::mm",
# CHECK-NEXT: "op": "aten::mm",
# CHECK-NEXT: "inputs": ["%x", "%w"],
# CHECK-NEXT: "outputs": [
# CHECK-NEXT: {"name": "%y", "type": "Tensor"}
# CHECK: "source": {"file": "{{.*}}json_format.py", "line": 8, "col": 9}
# CHECK: "kind": "prim::Constant",
# CHECK: "attributes": {"value": 1}
# CHECK: "stage": "after inline, constprop, autocast, cse, dce (eager autocast cpu=bfloat16)",
# CHECK: "kind": "aten::_autocast_to_reduced_precision",
# CHECK: "kind": "aten::mm",
