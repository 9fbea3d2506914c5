// Script's builtins: the scalar ops of the op table (runtime/ops/scalar.def, Python semantics) and
// the generic list/str/any handlers without op entries (script/builtins.cpp), run from graph text.
#include <gmock/gmock.h>

#include <cmath>
#include <limits>

#include "runtime/diagnostic.h"
#include "runtime/interpreter.h"
#include "runtime/ops.h"
#include "script/builtins.h"
#include "script/passes/constant_propagation.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using ::ampjit::testing::error_of;
using ::testing::HasSubstr;
using ::testing::Not;
using V = std::vector<int64_t>;

Stack run_text(const std::string& text, Stack inputs) {
  auto g = parse_graph(text);
  g->verify();
  Code code(*g);
  code.run(inputs);
  return inputs;
}

// One node `%r : RET = KIND(%a0, %a1, ...)` over graph inputs of the given types.
IValue run_node(const std::string& kind, const std::vector<std::string>& types, Stack inputs,
                const std::string& ret) {
  std::string params, args;
  for (size_t i = 0; i < types.size(); ++i) {
    params += fmt::format("{}%a{} : {}", i ? ", " : "", i, types[i]);
    args += fmt::format("{}%a{}", i ? ", " : "", i);
  }
  Stack out = run_text(
      fmt::format("graph({}):\n  %r : {} = {}({})\n  return (%r)\n", params, ret, kind, args),
      std::move(inputs));
  return out.at(0);
}

// One exact overload through the dispatcher.
IValue call(const char* overload, std::vector<IValue> args) {
  return call_op(overload, std::move(args)).value();
}

IValue ints(V v) {
  return IValue(v);
}
std::vector<int64_t> as_ints(const IValue& v) {
  return v.to_int_list();
}

// ---- Scalar ops ------------------------------------------------------------------------------

TEST(ScalarOps, AreScriptOnlyCompositesDeclaredIntBeforeFloatBeforeMixed) {
  for (const char* base : {"aten::add", "aten::sub", "aten::mul", "aten::div", "aten::floordiv",
                           "aten::remainder", "aten::pow", "aten::eq", "aten::lt"}) {
    std::vector<std::string> order;
    for (const OpEntry* op : find_overloads(base)) {
      if (!op->has(kScriptOnly)) continue;
      EXPECT_TRUE(op->has(kComposite)) << op->name;
      if (op->schema.overload != "str" && op->schema.overload != "bool")
        order.push_back(op->schema.overload);
    }
    EXPECT_EQ(order, (std::vector<std::string>{"int", "float", "int_float", "float_int"})) << base;
  }
  ASSERT_NE(find_op("prim::min.int"), nullptr);
  EXPECT_EQ(find_op("prim::min.int")->schema.ns, "prim");
  EXPECT_EQ(find_op("aten::pow.int")->schema.returns[0].type->kind(), TypeKind::Float);
  EXPECT_EQ(find_op("aten::add.Tensor")->flags & kScriptOnly, 0u);
}

TEST(ScalarOps, GraphTextResolvesTheScalarOverloads) {
  auto g = parse_graph(
      "graph(%i : int, %f : float, %s : str, %b : bool, %t : Tensor):\n"
      "  %1 : int = aten::add(%i, %i)\n"
      "  %2 : float = aten::add(%f, %f)\n"
      "  %3 : str = aten::add(%s, %s)\n"
      "  %4 : bool = aten::__not__(%b)\n"
      "  %5 : int = prim::min(%i, %i)\n"
      "  %6 : int = prim::dtype(%t)\n"
      "  %7 : int[] = aten::size(%t)\n"
      "  return (%1, %2, %3, %4, %5, %6, %7)\n");
  std::vector<std::string> names;
  for (const Node* n : g->block()->nodes())
    names.push_back(n->op() ? n->op()->name : n->kind().qualified());
  EXPECT_EQ(names, (std::vector<std::string>{"aten::add.int", "aten::add.float", "aten::add.str",
                                             "aten::__not__", "prim::min.int", "prim::dtype",
                                             "aten::size"}));
}

TEST(ScalarOps, ArithmeticFollowsPython) {
  EXPECT_EQ(call("aten::add.int", {2, 3}).to_int(), 5);
  EXPECT_EQ(call("aten::add.int_float", {2, 0.5}).to_double(), 2.5);
  EXPECT_EQ(call("aten::add.float_int", {0.5, 2}).to_double(), 2.5);
  EXPECT_EQ(call("aten::add.str", {"ab", "cd"}).to_string_ref(), "abcd");
  EXPECT_EQ(call("aten::sub.int", {2, 5}).to_int(), -3);
  EXPECT_EQ(call("aten::sub.float_int", {2.5, 5}).to_double(), -2.5);
  EXPECT_EQ(call("aten::mul.int", {-4, 5}).to_int(), -20);
  EXPECT_EQ(call("aten::mul.int_float", {3, 0.5}).to_double(), 1.5);
  // int overflow wraps like torch's int64
  EXPECT_EQ(call("aten::add.int", {std::numeric_limits<int64_t>::max(), 1}).to_int(),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(call("aten::mul.int", {int64_t{1} << 62, 4}).to_int(), 0);
  // `/` is always float
  EXPECT_EQ(call("aten::div.int", {7, 2}).to_double(), 3.5);
  EXPECT_TRUE(call("aten::div.int", {6, 3}).is_double());
  EXPECT_EQ(call("aten::div.float_int", {1.0, 4}).to_double(), 0.25);
  // // and % round toward -inf; the remainder takes the divisor's sign
  EXPECT_EQ(call("aten::floordiv.int", {7, 2}).to_int(), 3);
  EXPECT_EQ(call("aten::floordiv.int", {-7, 2}).to_int(), -4);
  EXPECT_EQ(call("aten::floordiv.int", {7, -2}).to_int(), -4);
  EXPECT_EQ(call("aten::floordiv.int", {-7, -2}).to_int(), 3);
  EXPECT_EQ(call("aten::floordiv.int", {std::numeric_limits<int64_t>::min(), -1}).to_int(),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(call("aten::remainder.int", {-7, 2}).to_int(), 1);
  EXPECT_EQ(call("aten::remainder.int", {7, -2}).to_int(), -1);
  EXPECT_EQ(call("aten::remainder.int", {-7, -2}).to_int(), -1);
  EXPECT_EQ(call("aten::remainder.int", {6, -3}).to_int(), 0);
  EXPECT_EQ(call("aten::floordiv.float", {-7.5, 2.0}).to_double(), -4.0);
  EXPECT_EQ(call("aten::floordiv.float_int", {-7.5, 2}).to_double(), -4.0);
  EXPECT_EQ(call("aten::floordiv.int_float", {7, -2.0}).to_double(), -4.0);
  EXPECT_EQ(call("aten::floordiv.float", {0.3, 0.1}).to_double(),
            2.0);  // as Python: 0.3 // 0.1 == 2.0
  EXPECT_EQ(call("aten::remainder.float", {-7.5, 2.0}).to_double(), 0.5);
  EXPECT_EQ(call("aten::remainder.float_int", {7.5, -2}).to_double(), -0.5);
  EXPECT_EQ(call("aten::remainder.int_float", {-7, 2.0}).to_double(), 1.0);
  EXPECT_TRUE(
      std::signbit(call("aten::remainder.float", {4.0, -2.0}).to_double()));  // -0.0, as Python
  // int ** int is a float, also for a negative exponent
  EXPECT_TRUE(call("aten::pow.int", {2, 3}).is_double());
  EXPECT_EQ(call("aten::pow.int", {2, 3}).to_double(), 8.0);
  EXPECT_EQ(call("aten::pow.int", {2, -2}).to_double(), 0.25);
  EXPECT_EQ(call("aten::pow.float_int", {0.5, 2}).to_double(), 0.25);
  EXPECT_EQ(call("aten::pow.int_float", {4, 0.5}).to_double(), 2.0);
  EXPECT_EQ(call("aten::neg.int", {5}).to_int(), -5);
  EXPECT_EQ(call("aten::neg.float", {2.5}).to_double(), -2.5);
  EXPECT_EQ(call("aten::abs.int", {-5}).to_int(), 5);
  EXPECT_EQ(call("aten::abs.float", {-2.5}).to_double(), 2.5);
}

TEST(ScalarOps, DivisionByZeroRaisesPythonsErrors) {
  EXPECT_EQ(error_of([] {
              call("aten::floordiv.int", {1, 0});
            }),
            "ZeroDivisionError: integer division or modulo by zero");
  EXPECT_EQ(error_of([] {
              call("aten::remainder.int", {1, 0});
            }),
            "ZeroDivisionError: integer division or modulo by zero");
  EXPECT_EQ(error_of([] {
              call("aten::div.float", {1.0, 0.0});
            }),
            "ZeroDivisionError: float division by zero");
  EXPECT_EQ(error_of([] {
              call("aten::div.int_float", {1, 0.0});
            }),
            "ZeroDivisionError: float division by zero");
  EXPECT_EQ(error_of([] {
              call("aten::div.float_int", {1.0, 0});
            }),
            "ZeroDivisionError: float division by zero");
  EXPECT_EQ(error_of([] { call("aten::div.int", {1, 0}); }), "ZeroDivisionError: division by zero");
  EXPECT_EQ(error_of([] {
              call("aten::floordiv.float", {1.0, 0.0});
            }),
            "ZeroDivisionError: float floor division by zero");
  EXPECT_EQ(error_of([] {
              call("aten::remainder.float_int", {1.0, 0});
            }),
            "ZeroDivisionError: float modulo");
  // From a graph the message carries the node's location.
  EXPECT_THAT(
      error_of([] {
        run_text(
            "graph(%a : int, %b : int):\n  %r : int = aten::floordiv(%a, %b) # f.py:3:7\n  return "
            "(%r)\n",
            {1, 0});
      }),
      ::testing::AllOf(HasSubstr("integer division or modulo by zero"), HasSubstr("f.py:3:7")));
}

TEST(ScalarOps, ComparisonOverloads) {
  EXPECT_TRUE(call("aten::eq.int", {3, 3}).to_bool());
  EXPECT_TRUE(call("aten::ne.float", {3.0, 3.5}).to_bool());
  EXPECT_TRUE(call("aten::lt.int_float", {3, 3.5}).to_bool());
  EXPECT_FALSE(call("aten::lt.float_int", {3.5, 3}).to_bool());
  EXPECT_TRUE(call("aten::le.int", {3, 3}).to_bool());
  EXPECT_TRUE(call("aten::gt.float_int", {3.5, 3}).to_bool());
  EXPECT_TRUE(call("aten::ge.int_float", {4, 3.5}).to_bool());
  EXPECT_TRUE(call("aten::eq.int_float", {3, 3.0}).to_bool());
  EXPECT_TRUE(call("aten::eq.str", {"ab", "ab"}).to_bool());
  EXPECT_TRUE(call("aten::ne.str", {"ab", "ac"}).to_bool());
  EXPECT_TRUE(call("aten::eq.bool", {true, true}).to_bool());
  EXPECT_TRUE(call("aten::ne.bool", {true, false}).to_bool());
  // int against float compares exactly, as Python: 2**53 + 1 != float(2**53)
  const int64_t big = (int64_t{1} << 53) + 1;
  EXPECT_FALSE(call("aten::eq.int_float", {big, 9007199254740992.0}).to_bool());
  EXPECT_TRUE(call("aten::gt.int_float", {big, 9007199254740992.0}).to_bool());
  EXPECT_TRUE(call("aten::lt.float_int", {9007199254740992.0, big}).to_bool());
  // nan compares unequal to everything
  const double nan = std::nan("");
  EXPECT_FALSE(call("aten::eq.float", {nan, nan}).to_bool());
  EXPECT_TRUE(call("aten::ne.int_float", {1, nan}).to_bool());
  EXPECT_FALSE(call("aten::le.float_int", {nan, 1}).to_bool());
}

TEST(ScalarOps, LogicAndBits) {
  EXPECT_FALSE(call("aten::__and__.bool", {true, false}).to_bool());
  EXPECT_TRUE(call("aten::__or__.bool", {true, false}).to_bool());
  EXPECT_FALSE(call("aten::__xor__.bool", {true, true}).to_bool());
  EXPECT_TRUE(call("aten::__not__", {false}).to_bool());
  EXPECT_EQ(call("aten::__and__.int", {12, 10}).to_int(), 8);
  EXPECT_EQ(call("aten::__or__.int", {12, 10}).to_int(), 14);
  EXPECT_EQ(call("aten::__xor__.int", {12, 10}).to_int(), 6);
  EXPECT_EQ(call("aten::__lshift__.int", {3, 2}).to_int(), 12);
  EXPECT_EQ(call("aten::__rshift__.int", {-7, 1}).to_int(), -4);  // toward -inf
  EXPECT_EQ(call("aten::__rshift__.int", {-7, 100}).to_int(), -1);
  EXPECT_EQ(call("aten::__invert__.int", {5}).to_int(), -6);
  EXPECT_EQ(error_of([] { call("aten::__lshift__.int", {1, -1}); }), "negative shift count");
}

TEST(ScalarOps, Conversions) {
  EXPECT_EQ(call("aten::Int.float", {-2.7}).to_int(), -2);  // truncates
  EXPECT_EQ(call("aten::Int.bool", {true}).to_int(), 1);
  EXPECT_EQ(call("aten::Int.str", {" -12 "}).to_int(), -12);
  EXPECT_EQ(call("aten::Int.str", {"1_000"}).to_int(), 1000);
  EXPECT_EQ(call("aten::Float.int", {3}).to_double(), 3.0);
  EXPECT_EQ(call("aten::Float.bool", {true}).to_double(), 1.0);
  EXPECT_EQ(call("aten::Float.str", {" 1.5e3"}).to_double(), 1500.0);
  EXPECT_TRUE(std::isinf(call("aten::Float.str", {"-inf"}).to_double()));
  EXPECT_FALSE(call("aten::Bool.int", {0}).to_bool());
  EXPECT_TRUE(call("aten::Bool.float", {0.5}).to_bool());
  // one-element tensors
  EXPECT_EQ(call("aten::Int.Tensor", {ops::full(V{1}, Scalar(3.9)).tensor()}).to_int(), 3);
  EXPECT_EQ(call("aten::Float.Tensor", {ops::full(V{}, Scalar(int64_t{4})).tensor()}).to_double(),
            4.0);
  EXPECT_TRUE(call("aten::Bool.Tensor", {ops::ones(V{1, 1}).tensor()}).to_bool());
  // errors, with Python's and torch's texts
  EXPECT_EQ(error_of([] { call("aten::Int.str", {"1.5"}); }),
            "invalid literal for int() with base 10: '1.5'");
  EXPECT_EQ(error_of([] { call("aten::Float.str", {"x"}); }),
            "could not convert string to float: 'x'");
  EXPECT_EQ(error_of([] { call("aten::Float.str", {"0x10"}); }),
            "could not convert string to float: '0x10'");
  EXPECT_EQ(error_of([] { call("aten::Int.float", {std::nan("")}); }),
            "cannot convert float NaN to integer");
  EXPECT_THAT(error_of([] { call("aten::Int.float", {INFINITY}); }),
              HasSubstr("cannot convert float infinity to integer"));
  EXPECT_EQ(error_of([] { call("aten::Int.Tensor", {ops::ones(V{2}).tensor()}); }),
            "a Tensor with 2 elements cannot be converted to Scalar");
  EXPECT_EQ(error_of([] { call("aten::Float.Tensor", {ops::ones(V{0}).tensor()}); }),
            "a Tensor with 0 elements cannot be converted to Scalar");
  EXPECT_EQ(error_of([] { call("aten::Bool.Tensor", {ops::ones(V{2}).tensor()}); }),
            "Boolean value of Tensor with more than one value is ambiguous");
  EXPECT_EQ(error_of([] { call("aten::Bool.Tensor", {ops::ones(V{0}).tensor()}); }),
            "Boolean value of Tensor with no values is ambiguous");
}

TEST(ScalarOps, MinMaxAndMath) {
  EXPECT_EQ(call("prim::min.int", {3, -2}).to_int(), -2);
  EXPECT_EQ(call("prim::max.int", {3, -2}).to_int(), 3);
  EXPECT_EQ(call("prim::min.float", {0.5, 1.5}).to_double(), 0.5);
  EXPECT_EQ(call("prim::max.float", {0.5, 1.5}).to_double(), 1.5);
  EXPECT_EQ(call("aten::sqrt.int", {16}).to_double(), 4.0);
  EXPECT_EQ(call("aten::sqrt.float", {2.25}).to_double(), 1.5);
  EXPECT_DOUBLE_EQ(call("aten::exp.float", {1.0}).to_double(), std::exp(1.0));
  EXPECT_DOUBLE_EQ(call("aten::exp.int", {2}).to_double(), std::exp(2.0));
  EXPECT_DOUBLE_EQ(call("aten::log.float", {2.0}).to_double(), std::log(2.0));
  EXPECT_DOUBLE_EQ(call("aten::log.int", {8}).to_double(), std::log(8.0));
  EXPECT_DOUBLE_EQ(call("aten::sin.float", {0.5}).to_double(), std::sin(0.5));
  EXPECT_DOUBLE_EQ(call("aten::cos.float", {0.5}).to_double(), std::cos(0.5));
  EXPECT_DOUBLE_EQ(call("aten::tanh.float", {0.5}).to_double(), std::tanh(0.5));
  EXPECT_EQ(call("aten::floor.float", {-1.5}).to_int(), -2);
  EXPECT_TRUE(call("aten::floor.float", {-1.5}).is_int());
  EXPECT_EQ(call("aten::ceil.float", {-1.5}).to_int(), -1);
  EXPECT_TRUE(call("aten::isnan.float", {std::nan("")}).to_bool());
  EXPECT_FALSE(call("aten::isnan.float", {1.0}).to_bool());
}

TEST(ScalarOps, TensorProperties) {
  Tensor t = Tensor::empty(V{3, 4}, ScalarType::Float16);
  EXPECT_EQ(as_ints(call("aten::size", {t})), (V{3, 4}));
  EXPECT_EQ(call("prim::dtype", {t}).to_int(), 5);  // torch.float16
  EXPECT_EQ(call("prim::dtype", {Tensor::empty(V{1}, ScalarType::Int64)}).to_int(), 4);
  EXPECT_EQ(call("prim::dtype", {Tensor::empty(V{1}, ScalarType::BFloat16)}).to_int(), 15);
  EXPECT_TRUE(call("prim::device", {t}).to_device().is_cpu());
  EXPECT_EQ(call("aten::len.Tensor", {t}).to_int(), 3);
  EXPECT_EQ(error_of([] { call("aten::len.Tensor", {ops::ones(V{}).tensor()}); }),
            "len() of a 0-d tensor");
}

TEST(ScalarOps, RangeLengthAndDerivedIndex) {
  EXPECT_EQ(call("aten::__range_length", {0, 10, 3}).to_int(), 4);
  EXPECT_EQ(call("aten::__range_length", {10, 0, -3}).to_int(), 4);
  EXPECT_EQ(call("aten::__range_length", {0, 10, 1}).to_int(), 10);
  EXPECT_EQ(call("aten::__range_length", {5, 5, 1}).to_int(), 0);
  EXPECT_EQ(call("aten::__range_length", {0, 10, -1}).to_int(), 0);
  EXPECT_EQ(error_of([] {
              call("aten::__range_length", {0, 10, 0});
            }),
            "range() arg 3 must not be zero");
  EXPECT_EQ(call("aten::__derive_index", {3, 10, -3}).to_int(), 1);
  // a Python range loop: for i in range(10, 0, -3): acc = acc * 100 + i
  Stack out = run_text(
      "graph(%lo : int, %hi : int, %step : int):\n"
      "  %t : bool = prim::Constant[value=1]()\n"
      "  %zero : int = prim::Constant[value=0]()\n"
      "  %hundred : int = prim::Constant[value=100]()\n"
      "  %n : int = aten::__range_length(%lo, %hi, %step)\n"
      "  %acc : int = prim::Loop(%n, %t, %zero)\n"
      "    block0(%k : int, %a : int):\n"
      "      %i : int = aten::__derive_index(%k, %lo, %step)\n"
      "      %m : int = aten::mul(%a, %hundred)\n"
      "      %s : int = aten::add(%m, %i)\n"
      "      -> (%t, %s)\n"
      "  return (%acc)\n",
      {10, 0, -3});
  EXPECT_EQ(out[0].to_int(), 10070401);
}

TEST(ScalarOps, ConstantPropagationFoldsThemButLeavesErrorsForRunTime) {
  auto g = parse_graph(
      "graph():\n"
      "  %2 : int = prim::Constant[value=2]()\n"
      "  %3 : int = prim::Constant[value=3]()\n"
      "  %0 : int = prim::Constant[value=0]()\n"
      "  %1 : int = prim::Constant[value=1]()\n"
      "  %s : int = aten::add(%2, %3)\n"
      "  %f : float = aten::div(%3, %2)\n"
      "  %q : int = aten::floordiv(%1, %0) # f.py:9:1\n"
      "  return (%s, %f, %q)\n");
  EXPECT_TRUE(constant_propagation(*g));
  g->verify();
  const std::string text = g->str();
  EXPECT_THAT(text, HasSubstr("int = prim::Constant[value=5]()"));
  EXPECT_THAT(text, HasSubstr("float = prim::Constant[value=1.5]()"));
  EXPECT_THAT(text, Not(HasSubstr("aten::add")));
  EXPECT_THAT(text, HasSubstr("aten::floordiv"));
  Stack s;
  EXPECT_THAT(
      error_of([&] { Code(*g).run(s); }),
      ::testing::AllOf(HasSubstr("integer division or modulo by zero"), HasSubstr("f.py:9:1")));
}

// ---- List, str and any builtins ------------------------------------------------------------

TEST(ListBuiltins, LenAndGetItemWithNegativeIndices) {
  EXPECT_EQ(run_node("aten::len", {"int[]"}, {ints({4, 5, 6})}, "int").to_int(), 3);
  EXPECT_EQ(run_node("aten::len", {"str"}, {"h\xc3\xa9llo"}, "int").to_int(), 5);  // code points
  EXPECT_EQ(run_node("aten::len", {"Tensor"}, {ops::ones(V{7, 2}).tensor()}, "int").to_int(),
            7);  // the op
  EXPECT_EQ(run_node("aten::__getitem__", {"int[]", "int"}, {ints({4, 5, 6}), 1}, "int").to_int(),
            5);
  EXPECT_EQ(run_node("aten::__getitem__", {"int[]", "int"}, {ints({4, 5, 6}), -1}, "int").to_int(),
            6);
  EXPECT_EQ(run_node("aten::__getitem__", {"int[]", "int"}, {ints({4, 5, 6}), -3}, "int").to_int(),
            4);
  EXPECT_EQ(run_node("aten::__getitem__", {"str", "int"}, {"abc", -1}, "str").to_string_ref(), "c");
  EXPECT_EQ(
      run_node("aten::__getitem__", {"str", "int"}, {"h\xc3\xa9llo", 1}, "str").to_string_ref(),
      "\xc3\xa9");
  EXPECT_EQ(error_of([] {
              run_node("aten::__getitem__", {"int[]", "int"}, {ints({4, 5, 6}), 3}, "int");
            }),
            "list index out of range");
  EXPECT_EQ(error_of([] {
              run_node("aten::__getitem__", {"int[]", "int"}, {ints({4, 5, 6}), -4}, "int");
            }),
            "list index out of range");
  EXPECT_EQ(error_of([] {
              run_node("aten::__getitem__", {"str", "int"}, {"abc", 3}, "str");
            }),
            "string index out of range");
  try {
    run_node("aten::__getitem__", {"int[]", "int"}, {ints({}), 0}, "int");
    ADD_FAILURE();
  } catch (const IndexError&) {
  }
}

TEST(ListBuiltins, MutationsChangeTheListEveryValueHolds) {
  // append returns the list it changed; the caller's list and a tuple holding it see the change.
  IValue l = ints({1, 2});
  Stack out = run_text(
      "graph(%l : int[], %x : int):\n"
      "  %t : (int[], int) = prim::TupleConstruct(%l, %x)\n"
      "  %m : int[] = aten::append(%l, %x)\n"
      "  %n : int = aten::len(%l)\n"
      "  %zero : int = prim::Constant[value=0]()\n"
      "  %inner : int[] = prim::TupleIndex(%t, %zero)\n"
      "  %k : int = aten::len(%inner)\n"
      "  return (%m, %n, %k)\n",
      {l, 7});
  EXPECT_EQ(as_ints(l), (V{1, 2, 7}));
  EXPECT_EQ(out[0].list_obj(), l.list_obj());
  EXPECT_EQ(out[1].to_int(), 3);
  EXPECT_EQ(out[2].to_int(), 3);

  IValue a = ints({1, 2, 3});
  run_node("aten::_set_item", {"int[]", "int", "int"}, {a, -1, 9}, "int[]");
  EXPECT_EQ(as_ints(a), (V{1, 2, 9}));
  EXPECT_EQ(run_node("aten::pop", {"int[]", "int"}, {a, -1}, "int").to_int(), 9);
  EXPECT_EQ(run_node("aten::pop", {"int[]", "int"}, {a, 0}, "int").to_int(), 1);
  EXPECT_EQ(as_ints(a), (V{2}));
  const char* insert =
      "graph(%l : int[], %i : int, %x : int):\n  = aten::insert(%l, %i, %x)\n  return ()\n";
  run_text(insert, {a, 0, 5});     // front
  run_text(insert, {a, 100, 6});   // clamped to the end
  run_text(insert, {a, -1, 7});    // before the last
  run_text(insert, {a, -100, 8});  // clamped to the front
  EXPECT_EQ(as_ints(a), (V{8, 5, 2, 7, 6}));
  run_text("graph(%l : int[], %m : int[]):\n  = aten::extend(%l, %m)\n  return ()\n",
           {a, a});  // x.extend(x)
  EXPECT_EQ(as_ints(a), (V{8, 5, 2, 7, 6, 8, 5, 2, 7, 6}));
  run_text("graph(%l : int[]):\n  = aten::reverse(%l)\n  return ()\n", {a});
  EXPECT_EQ(as_ints(a), (V{6, 7, 2, 5, 8, 6, 7, 2, 5, 8}));
  run_text("graph(%l : int[]):\n  = aten::clear(%l)\n  return ()\n", {a});
  EXPECT_TRUE(a.list_elems().empty());
  EXPECT_EQ(error_of([&] {
              run_node("aten::pop", {"int[]", "int"}, {a, -1}, "int");
            }),
            "pop from empty list");
  EXPECT_EQ(error_of([] {
              run_node("aten::pop", {"int[]", "int"}, {ints({1}), 3}, "int");
            }),
            "pop index out of range");
  EXPECT_EQ(error_of([] {
              run_node("aten::_set_item", {"int[]", "int", "int"}, {ints({1}), 1, 0}, "int[]");
            }),
            "list assignment index out of range");
}

TEST(ListBuiltins, SlicesWithStepsAndMissingBounds) {
  const char* text =
      "graph(%l : int[], %start : int?, %end : int?, %step : int):\n"
      "  %r : int[] = aten::slice(%l, %start, %end, %step)\n"
      "  return (%r)\n";
  auto slice = [&](IValue start, IValue end, int64_t step) {
    return as_ints(run_text(text, {ints({0, 1, 2, 3, 4, 5}), start, end, step})[0]);
  };
  const IValue none;
  EXPECT_EQ(slice(1, 4, 1), (V{1, 2, 3}));
  EXPECT_EQ(slice(none, none, 2), (V{0, 2, 4}));
  EXPECT_EQ(slice(none, none, -1), (V{5, 4, 3, 2, 1, 0}));
  EXPECT_EQ(slice(-2, none, 1), (V{4, 5}));
  EXPECT_EQ(slice(none, -2, 1), (V{0, 1, 2, 3}));
  EXPECT_EQ(slice(4, 1, -2), (V{4, 2}));
  EXPECT_EQ(slice(-100, 100, 3), (V{0, 3}));
  EXPECT_EQ(slice(100, none, -2), (V{5, 3, 1}));
  EXPECT_EQ(slice(3, 1, 1), V{});
  EXPECT_EQ(error_of([&] { slice(none, none, 0); }), "slice step cannot be zero");
  // a new list: the source is unchanged
  IValue src = ints({1, 2, 3});
  IValue copy = run_text(text, {src, none, none, 1})[0];
  EXPECT_NE(copy.list_obj(), src.list_obj());
  // strings slice by code point
  EXPECT_EQ(run_node("aten::slice", {"str", "int?", "int?", "int"},
                     {"h\xc3\xa9llo", none, none, -2}, "str")
                .to_string_ref(),
            "olh");
  // a tensor slice still runs the op
  auto g = parse_graph(
      "graph(%t : Tensor, %d : int, %s : int?, %e : int?, %step : int):\n"
      "  %r : Tensor = aten::slice(%t, %d, %s, %e, %step)\n  return (%r)\n");
  EXPECT_EQ(g->block()->nodes().front()->op()->name, "aten::slice.Tensor");
}

TEST(ListBuiltins, ConcatenationRepetitionCopyAndEquality) {
  IValue a = ints({1, 2});
  IValue sum = run_node("aten::add", {"int[]", "int[]"}, {a, ints({3})}, "int[]");
  EXPECT_EQ(as_ints(sum), (V{1, 2, 3}));
  EXPECT_NE(sum.list_obj(), a.list_obj());
  EXPECT_EQ(as_ints(run_node("aten::mul", {"int[]", "int"}, {a, 3}, "int[]")),
            (V{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(as_ints(run_node("aten::mul", {"int[]", "int"}, {a, -1}, "int[]")), V{});
  IValue copy = run_node("aten::list", {"int[]"}, {a}, "int[]");
  EXPECT_EQ(as_ints(copy), (V{1, 2}));
  EXPECT_NE(copy.list_obj(), a.list_obj());
  IValue chars = run_node("aten::list", {"str"}, {"ab"}, "str[]");
  EXPECT_EQ(python_str(chars), "['a', 'b']");
  EXPECT_TRUE(
      run_node("aten::eq", {"int[]", "int[]"}, {ints({1, 2}), ints({1, 2})}, "bool").to_bool());
  EXPECT_FALSE(
      run_node("aten::eq", {"int[]", "int[]"}, {ints({1, 2}), ints({1})}, "bool").to_bool());
  EXPECT_TRUE(
      run_node("aten::ne", {"int[]", "int[]"}, {ints({1, 2}), ints({2, 1})}, "bool").to_bool());
  EXPECT_TRUE(run_node("aten::eq", {"float[]", "float[]"},
                       {IValue(std::vector<double>{1.0}), IValue(std::vector<double>{1.0})}, "bool")
                  .to_bool());
  IValue strs = IValue::list({IValue("a"), IValue("b")});
  EXPECT_TRUE(run_node("aten::eq", {"str[]", "str[]"},
                       {strs, IValue::list({IValue("a"), IValue("b")})}, "bool")
                  .to_bool());
}

TEST(ListBuiltins, ContainsIsAndIsNot) {
  EXPECT_TRUE(
      run_node("aten::__contains__", {"int[]", "int"}, {ints({1, 2}), 2}, "bool").to_bool());
  EXPECT_FALSE(
      run_node("aten::__contains__", {"int[]", "int"}, {ints({1, 2}), 3}, "bool").to_bool());
  EXPECT_TRUE(run_node("aten::__contains__", {"float[]", "float"},
                       {IValue(std::vector<double>{0.5}), 0.5}, "bool")
                  .to_bool());
  EXPECT_TRUE(run_node("aten::__contains__", {"str[]", "str"},
                       {IValue::list({IValue("x"), IValue("yz")}), "yz"}, "bool")
                  .to_bool());
  EXPECT_TRUE(run_node("aten::__contains__", {"str", "str"}, {"hello", "ell"}, "bool").to_bool());
  EXPECT_FALSE(run_node("aten::__contains__", {"str", "str"}, {"hello", "le"}, "bool").to_bool());

  const char* is =
      "graph(%a : Any, %b : Any):\n  %r : bool = aten::__is__(%a, %b)\n  return (%r)\n";
  const char* isnot =
      "graph(%a : Any, %b : Any):\n  %r : bool = aten::__isnot__(%a, %b)\n  return (%r)\n";
  Tensor t = ops::ones(V{2});
  EXPECT_TRUE(run_text(is, {IValue(), IValue()})[0].to_bool());
  EXPECT_FALSE(run_text(is, {IValue(), t})[0].to_bool());
  EXPECT_TRUE(run_text(isnot, {t, IValue()})[0].to_bool());
  EXPECT_TRUE(run_text(is, {t, t})[0].to_bool());
  EXPECT_FALSE(run_text(is, {t, ops::ones(V{2}).tensor()})[0].to_bool());
  EXPECT_TRUE(run_text(is, {3, 3})[0].to_bool());
  EXPECT_TRUE(run_text(is, {true, true})[0].to_bool());
  IValue l = ints({1});
  EXPECT_TRUE(run_text(is, {l, l})[0].to_bool());
  EXPECT_FALSE(run_text(is, {l, ints({1})})[0].to_bool());
  EXPECT_FALSE(run_text(isnot, {l, l})[0].to_bool());
}

TEST(ListBuiltins, SumMinMax) {
  EXPECT_EQ(run_node("aten::sum", {"int[]"}, {ints({1, 2, 3})}, "int").to_int(), 6);
  EXPECT_EQ(run_node("aten::sum", {"int[]"}, {ints({})}, "int").to_int(), 0);
  IValue fsum =
      run_node("aten::sum", {"float[]"}, {IValue(std::vector<double>{0.5, 1.0})}, "float");
  EXPECT_TRUE(fsum.is_double());
  EXPECT_EQ(fsum.to_double(), 1.5);
  EXPECT_TRUE(
      run_node("aten::sum", {"float[]"}, {IValue(std::vector<double>{})}, "float").is_double());
  EXPECT_EQ(run_node("prim::min", {"int[]"}, {ints({3, -1, 2})}, "int").to_int(), -1);
  EXPECT_EQ(run_node("prim::max", {"int[]"}, {ints({3, -1, 2})}, "int").to_int(), 3);
  EXPECT_EQ(run_node("prim::max", {"float[]"}, {IValue(std::vector<double>{0.5, 2.5})}, "float")
                .to_double(),
            2.5);
  EXPECT_EQ(run_node("prim::min", {"str[]"}, {IValue::list({IValue("b"), IValue("a")})}, "str")
                .to_string_ref(),
            "a");
  EXPECT_EQ(error_of([] { run_node("prim::min", {"int[]"}, {ints({})}, "int"); }),
            "min() arg is an empty sequence");
  EXPECT_EQ(error_of([] { run_node("prim::max", {"int[]"}, {ints({})}, "int"); }),
            "max() arg is an empty sequence");
}

TEST(AnyBuiltins, StrFollowsPython) {
  auto str = [](IValue v, const char* type) {
    return run_node("aten::str", {type}, {std::move(v)}, "str").to_string_ref();
  };
  EXPECT_EQ(str(1.0, "float"), "1.0");
  EXPECT_EQ(str(0.1, "float"), "0.1");
  EXPECT_EQ(str(1e-05, "float"), "1e-05");
  EXPECT_EQ(str(0.0001, "float"), "0.0001");
  EXPECT_EQ(str(1e16, "float"), "1e+16");
  EXPECT_EQ(str(1e15, "float"), "1000000000000000.0");
  EXPECT_EQ(str(123456789012345678.0, "float"), "1.2345678901234568e+17");
  EXPECT_EQ(str(1.5e-7, "float"), "1.5e-07");
  EXPECT_EQ(str(-2.5, "float"), "-2.5");
  EXPECT_EQ(str(-0.0, "float"), "-0.0");
  EXPECT_EQ(str(1.0 / 3, "float"), "0.3333333333333333");
  EXPECT_EQ(str(INFINITY, "float"), "inf");
  EXPECT_EQ(str(std::nan(""), "float"), "nan");
  EXPECT_EQ(str(-42, "int"), "-42");
  EXPECT_EQ(str(true, "bool"), "True");
  EXPECT_EQ(str(IValue(), "NoneType"), "None");
  EXPECT_EQ(str("it's", "str"), "it's");
  EXPECT_EQ(str(ints({1, 2}), "int[]"), "[1, 2]");
  EXPECT_EQ(str(IValue(std::vector<double>{1.0, 0.5}), "float[]"), "[1.0, 0.5]");
  EXPECT_EQ(str(IValue::list({IValue("a"), IValue("it's")}), "str[]"), "['a', \"it's\"]");
  EXPECT_EQ(python_str(IValue::tuple({IValue(1)})), "(1,)");
  EXPECT_EQ(str(ops::ones(V{2}).tensor(), "Tensor"), "tensor([1., 1.])");
}

TEST(AnyBuiltins, Format) {
  const char* text =
      "graph(%f : str, %a : int, %b : float):\n  %r : str = aten::format(%f, %a, %b)\n  return "
      "(%r)\n";
  EXPECT_EQ(run_text(text, {"{} and {}!", 1, 0.5})[0].to_string_ref(), "1 and 0.5!");
  EXPECT_EQ(run_text(text, {"{{{}}}", 1, 0.5})[0].to_string_ref(), "{1}");
  EXPECT_EQ(run_text(text, {"only {}", 1, 0.5})[0].to_string_ref(),
            "only 1");  // extra args ignored, as Python
  EXPECT_EQ(error_of([&] {
              run_text(text, {"{} {} {}", 1, 0.5});
            }),
            "Replacement index 2 out of range for positional args tuple");
  EXPECT_THAT(error_of([&] {
                run_text(text, {"{0}", 1, 0.5});
              }),
              HasSubstr("only {} placeholders"));
}

TEST(AnyBuiltins, PrintWritesStrOfEachArgument) {
  ::testing::internal::CaptureStdout();
  run_text(
      "graph(%a : int, %b : float, %c : str, %l : int[]):\n"
      "  %n : NoneType = prim::Constant()\n"
      "  = prim::Print(%a, %b, %c, %l, %n)\n"
      "  = prim::Print()\n"
      "  return ()\n",
      {1, 2.0, "x y", ints({3})});
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "1 2.0 x y [3] None\n\n");
}

std::vector<std::string> g_warnings;
void record_warning(const Diagnostic& w) {
  g_warnings.push_back(fmt::format("{}: {}", warning_category_name(w.category), w.message));
}

TEST(AnyBuiltins, WarnCastsAndUninitialized) {
  const char* text =
      "graph(%m : str):\n"
      "  %two : int = prim::Constant[value=2]()\n"
      "  = aten::warn(%m, %two)\n"
      "  %u : int = prim::Uninitialized()\n"
      "  %c : int = prim::unchecked_cast(%two)\n"
      "  return (%u, %c)\n";
  // aten::warn is a UserWarning of the one warning channel (runtime/diagnostic.h).
  WarningHandler previous = set_warning_handler(&record_warning);
  Stack out = run_text(text, {"careful"});
  set_warning_handler(previous);
  EXPECT_EQ(g_warnings, std::vector<std::string>{"UserWarning: careful"});
  EXPECT_TRUE(out[0].is_none());
  EXPECT_EQ(out[1].to_int(), 2);
}

}  // namespace
}  // namespace ampjit
