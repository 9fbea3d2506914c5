# --format dot: one digraph per stage; nodes are records with their attributes and typed outputs,
# blocks are clusters, edges carry the value names.
# ARGS: --format dot --passes dce
import torch


def f(x, flag: bool):
    if flag:
        y = x.relu()
    else:
        y = x.sigmoid()
    return y + 1

# CHECK: // f: as built
# CHECK-NEXT: digraph "f: as built" {
# CHECK: node [shape=record
# CHECK: n0 [label="{graph inputs|{<o0> %x : Tensor|<o1> %flag : bool}}"];
# CHECK: subgraph cluster_0 {
# CHECK-NEXT: label="block0 of prim::If"; style=dashed;
# CHECK: [label="{aten::relu|{<o0> %{{.*}} : Tensor}}", tooltip="{{.*}}dot_format.py:9:13"];
# CHECK: subgraph cluster_1 {
# CHECK-NEXT: label="block1 of prim::If"; style=dashed;
# CHECK: aten::sigmoid
# CHECK: [label="{prim::Constant|value=1|{<o0> %{{[0-9]+}} : int}}"
# CHECK: [label="{return}"];
# CHECK: n0:o1 -> {{n[0-9]+}} [label="%flag"];
# CHECK: [style=dotted, arrowhead=none];
# CHECK: // after dce
# CHECK-NEXT: digraph "f: after dce" {
