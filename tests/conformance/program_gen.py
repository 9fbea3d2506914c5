"""A seeded generator of small random autocast programs, emitted as Python source text, for the
differential property test of issue 6 (test_property.py).

    prog = generate(seed)            # a Program: .source, .entry ("main"), .make_args(), .config
    mod = prog.load(reference=True)  # the source written to a file and imported (real source, so
                                     # jit.script reads it through linecache like any user file)

A program is a module: helpers `h0`, `h1`, ... and `def main(x, w, flag: bool)`, all tensors 4x4,
all tensor arguments float32. Statements are drawn from:
  - ops of every CPU autocast policy class: lower_precision_fp (mm, matmul/@, F.linear, addmm,
    bmm, baddbmm, conv2d), fp32 (mse_loss, l1_loss, prod), promote (stack; and cat, addcmul,
    where, atan2 under the torch-2 profile plus the overrides below), fp32_set_opt_dtype
    (softmax/log_softmax/cumsum/sum, with and without an explicit dtype=) and fp32_append_dtype
    (norm) through per-op overrides, since no CPU profile has those two classes, and plain
    pointwise ops (add, mul, relu, gelu, tanh, sigmoid, exp, log, scalars) and explicit casts;
  - `with torch.autocast("cpu", ...)` and `with torch.cpu.amp.autocast(...)` regions, nested,
    with enabled= True / False / the runtime `flag` / `not flag`, dtype= omitted / bfloat16 /
    float16, cache_enabled=False sometimes, `with ... as acN:` and re-entering acN later (in the
    torch-2 profile: torch 1.13's `as` binds None);
  - `if flag:` branches, and `if torch.is_autocast_cpu_enabled():` inside regions;
  - calls to helpers that are plain Python (scripted recursively with main), pre-scripted
    (`torch.jit.script`), or pre-traced (`torch.jit.trace`, tensor-only float32 arguments), each
    possibly decorated with `@torch.autocast("cpu", ...)` / `@torch.cpu.amp.autocast(...)`;
  - `for` loops over a loop-carried value, in a region or not, with `if flag: break|continue`;
  - a `return` inside a region at the end of main, or early under `if flag:`.
Plain and pre-scripted helpers may take `flag: bool` too.

The module reads two globals the loader sets before running it: EAGER_REFERENCE (True: the
pre-scripted and pre-traced helpers stay plain Python, so the module is the pure eager reference)
and SEMANTICS (the autocast_semantics= passed to those helpers' script/trace; None: the
process-wide setting).

Programs are well formed for eager execution under every eager autocast state: a dtype-strict op
(mm, linear, conv, ...) gets operands of one dtype (`.float()`, or `.to(torch.bfloat16)` on all of
them) unless the generator knows autocast is enabled there (a constant-enabled region, an autocast
decorator, or the true branch of is_autocast_cpu_enabled()), where autocast casts them itself. The
one thing it does not foresee, a promote op meeting float16 and bfloat16 under one region (which
eager autocast rejects, as PyTorch's does), is handled by generate_valid: it draws the seed again
until eager runs the program. `torch.is_autocast_cpu_enabled()` is only asked inside a region, where
its answer does not depend on the caller's state (a trace records the branch it took), and no
program reads `t.dtype` (a trace records it as a constant, as torch's does).

Nested re-entry of one autocast instance (`with ac:` inside `with ... as ac:`) is not generated:
eager autocast (ampjit's and PyTorch's) keeps the state to restore on the instance, so the inner
__enter__ overwrites the outer's and the state leaks past the outer region; re-entry happens after
the instance's region is left.

Known bugs: what hits an open ampjit bug (each has an xfail regression test in test_property.py)
is left out unless `generate(..., known_bugs=True)`: op templates tagged with the bug in `bug`, and
now torch.autocast("cpu") without dtype= in the profile where CPU autocast takes float16 (those
regions get dtype=torch.bfloat16; see _Gen.region).
"""
import dataclasses
import importlib.util
import itertools
import linecache
import os
import random
import sys
import tempfile

# ---- Autocast configurations ------------------------------------------------------------------------

# fp32_set_opt_dtype / fp32_append_dtype exist on CPU in no profile (PyTorch has them on CUDA only),
# and promote has only stack/cat/index_copy: the torch-2 configuration overrides a few CPU ops to the
# CUDA list's policies, so every class is exercised by eager autocast on CPU.
_OVERRIDES = (
    ("aten::softmax", "fp32_set_opt_dtype"),
    ("aten::log_softmax", "fp32_set_opt_dtype"),
    ("aten::cumsum", "fp32_set_opt_dtype"),
    ("aten::sum", "fp32_set_opt_dtype"),
    ("aten::norm", "fp32_append_dtype"),
    ("aten::addcmul", "promote"),
    ("aten::where", "promote"),
    ("aten::atan2", "promote"),
    ("aten::layer_norm", "fp32"),
    ("aten::gelu", "fp32"),
)


@dataclasses.dataclass(frozen=True)
class Config:
    """The eager autocast configuration a program runs under: a policy profile plus per-op overrides.
    `cpu_float16`: whether CPU autocast accepts float16 in that profile (torch-1.13 warns when the
    region is made and raises when it is entered, as PyTorch 1.13 does: no program or call state
    has one there)."""
    name: str
    profile: str
    overrides: tuple
    cpu_float16: bool

    def apply(self):
        """A context manager that switches to this configuration and restores the previous one."""
        return _ConfigGuard(self)


class _ConfigGuard:
    def __init__(self, config):
        self.config = config

    def __enter__(self):
        import ampjit
        self.prev = ampjit.amp.get_autocast_profile()
        ampjit.amp.set_autocast_profile(self.config.profile)
        for op, policy in self.config.overrides:
            ampjit.amp.set_op_policy("cpu", op, policy)
        return self.config

    def __exit__(self, *exc):
        import ampjit
        for op, _ in self.config.overrides:  # (an override of these ops made before is lost too)
            ampjit.amp.reset_op_policy("cpu", op)
        ampjit.amp.set_autocast_profile(self.prev)
        return False


CONFIGS = (
    Config("torch-1.13", "torch-1.13", (), False),
    Config("torch-2+overrides", "torch-2", _OVERRIDES, True),
)

# ---- Op templates ------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Op:
    """One expression template: `{0}`, `{1}`, ... are operand expressions (4x4 tensors)."""
    text: str
    arity: int
    policy: str          # the policy class it exercises (documentation and coverage counting)
    strict: bool = False  # needs operands of one dtype when autocast does not cast them
    weight: float = 1.0
    bug: str = ""         # an open ampjit bug this template hits (left out unless known_bugs)


OPS = (
    # lower_precision_fp
    Op("torch.mm({0}, {1})", 2, "lower_precision_fp", strict=True, weight=3),
    Op("torch.matmul({0}, {1})", 2, "lower_precision_fp", strict=True),
    Op("{0} @ {1}", 2, "lower_precision_fp", strict=True),
    Op("F.linear({0}, {1})", 2, "lower_precision_fp", strict=True, weight=2),
    Op("torch.addmm({2}, {0}, {1})", 3, "lower_precision_fp", strict=True),
    Op("torch.bmm({0}.unsqueeze(0), {1}.unsqueeze(0)).squeeze(0)", 2, "lower_precision_fp", strict=True),
    Op("torch.baddbmm({2}.unsqueeze(0), {0}.unsqueeze(0), {1}.unsqueeze(0)).squeeze(0)", 3,
       "lower_precision_fp", strict=True, weight=0.5),
    Op("torch.conv2d({0}.reshape(1, 1, 4, 4), {1}.reshape(4, 1, 2, 2), stride=2).reshape(4, 4)", 2,
       "lower_precision_fp", strict=True, weight=0.5),
    Op("F.conv2d({0}.reshape(1, 1, 4, 4), {1}.reshape(4, 1, 2, 2), stride=2).reshape(4, 4)", 2,
       "lower_precision_fp", strict=True, weight=0.5),
    # fp32 (both profiles)
    Op('F.mse_loss({0}, {1}, reduction="none")', 2, "fp32"),
    Op('F.l1_loss({0}, {1}, reduction="none")', 2, "fp32"),
    Op("torch.prod({0}, 1, keepdim=True) * {1}", 2, "fp32", weight=0.5),
    Op("F.layer_norm({0}, [4])", 1, "fp32 (override)", weight=0.5),
    Op("F.gelu({0})", 1, "fp32 (override)", weight=0.5),
    # promote
    Op("torch.stack([{0}, {1}]).sum(0)", 2, "promote"),
    Op("torch.stack([{0}, {1}, {2}])[1]", 3, "promote", weight=0.5),
    Op("torch.cat([{0}, {1}], 1)[:, 2:6]", 2, "promote (torch-2)"),
    Op("torch.addcmul({0}, {1}, {2}, value=0.5)", 3, "promote (override)"),
    Op("torch.where({0} > 0, {1}, {2})", 3, "promote (override)"),
    Op("torch.atan2({0}, {1})", 2, "promote (override)", weight=0.5),
    # fp32_set_opt_dtype (overrides), with and without an explicit dtype
    Op("torch.softmax({0}, 1)", 1, "fp32_set_opt_dtype (override)"),
    Op("F.softmax({0}, dim=1)", 1, "fp32_set_opt_dtype (override)", weight=0.5),
    Op("torch.softmax({0}, 1, dtype=torch.float32)", 1, "fp32_set_opt_dtype (override)", weight=0.5),
    Op("torch.softmax({0}, 1, dtype=torch.bfloat16)", 1, "fp32_set_opt_dtype (override)", weight=0.5),
    Op("torch.log_softmax({0}, 0)", 1, "fp32_set_opt_dtype (override)", weight=0.5),
    Op("torch.cumsum({0}, 1)", 1, "fp32_set_opt_dtype (override)", weight=0.5),
    Op("torch.sum({0}, 1, keepdim=True) + {1}", 2, "fp32_set_opt_dtype (override)", weight=0.5),
    # fp32_append_dtype (override)
    Op("torch.norm({0}, 2, 1, True) * {1}", 2, "fp32_append_dtype (override)"),
    # no policy: pointwise, scalars, explicit casts
    Op("{0} + {1}", 2, "none"),
    Op("{0} * {1}", 2, "none"),
    Op("torch.relu({0}) - {1}", 2, "none"),
    Op("torch.tanh({0})", 1, "none"),
    Op("torch.sigmoid({0}) * 2.0", 1, "none", weight=0.5),
    Op("torch.exp(torch.tanh({0}))", 1, "none", weight=0.5),
    Op("torch.log(torch.abs({0}) + 1.0)", 1, "none", weight=0.5),
    Op("{0} * 0.5 + 1.0", 1, "none", weight=0.5),
    Op("{0}.float()", 1, "cast", weight=0.5),
    Op("{0}.to(torch.bfloat16)", 1, "cast", weight=0.5),
    Op("{0}.half()", 1, "cast", weight=0.25),
    # `.to(t.dtype)` is not here: a trace reads t.dtype as a constant (as torch's does), so it
    # cannot follow a dtype that autocast changes at call time; type_as is an op it records.
    Op("{1}.type_as({0})", 2, "cast", weight=0.25),
)

# Casts that make every operand of a strict op one dtype, whatever autocast did before.
_STRICT_CASTS = (".float()", ".float()", ".float()", ".to(torch.bfloat16)")

# ---- Programs ---------------------------------------------------------------------------------------

_ARG_SHAPE = (4, 4)


@dataclasses.dataclass
class Program:
    seed: int
    source: str
    config: Config
    entry: str = "main"
    features: frozenset = frozenset()  # what the program uses: "decorator", "runtime_enabled", "as", ...
    policies: frozenset = frozenset()  # the policy classes of the ops it contains
    attempt: int = 0                   # which draw of the seed (generate_valid)
    _path: str = None
    _loads: itertools.count = dataclasses.field(default_factory=itertools.count)

    def make_args(self):
        """(x, w): fresh float32 4x4 tensors, the same values on every call."""
        import ampjit
        ampjit.manual_seed(self.seed)
        return ampjit.randn(*_ARG_SHAPE), ampjit.randn(*_ARG_SHAPE)

    def path(self):
        """The file the source is written to (once, in a temporary directory)."""
        if self._path is None:
            d = tempfile.mkdtemp(prefix="ampjit_prop_")
            self._path = os.path.join(d, "prog_{}_{}.py".format(self.seed, self.attempt))
            with open(self._path, "w") as f:
                f.write(self.source)
        return self._path

    def load(self, reference, semantics=None):
        """Imports a fresh copy of the program as a module. reference=True: the pure eager program
        (helpers stay Python); else pre-scripted/pre-traced helpers are compiled at import with
        autocast_semantics=`semantics` (None: the process-wide setting)."""
        name = "ampjit_prop_{}_{}_{}".format(self.seed, self.attempt, next(self._loads))
        spec = importlib.util.spec_from_file_location(name, self.path())
        mod = importlib.util.module_from_spec(spec)
        mod.EAGER_REFERENCE = reference
        mod.SEMANTICS = semantics
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        finally:
            del sys.modules[name]
        return mod

    def cleanup(self):
        if self._path is not None:
            linecache.cache.pop(self._path, None)
            try:
                os.remove(self._path)
                os.rmdir(os.path.dirname(self._path))
            except OSError:
                pass
            self._path = None


@dataclasses.dataclass
class _Ctx:
    """What the generator knows at one point of a function body."""
    vars: list             # tensor variables visible here
    enabled: str           # CPU autocast here: "yes", "no" or "unknown" (depends on the caller)
    in_region: bool        # inside a region of this function (is_autocast_cpu_enabled() is constant)
    has_flag: bool         # `flag` is a parameter (main, some helpers)
    helpers: list          # (name, kind, takes_flag) of callable helpers
    instances: list        # (name, enabled_expr_known_yes) of autocast objects bound by `as`
    open_instances: tuple  # instances whose `with` is open here (never re-entered while open)
    depth: int

    def child(self, **kw):
        c = dataclasses.replace(self, vars=list(self.vars), instances=list(self.instances))
        for k, v in kw.items():
            setattr(c, k, v)
        return c


class _Gen:
    def __init__(self, seed, config, known_bugs):
        self.rng = random.Random(seed)
        self.config = config
        self.known_bugs = known_bugs
        self.ops = [op for op in OPS if known_bugs or not op.bug]
        self.weights = [op.weight for op in self.ops]
        self.names = itertools.count()
        self.ac_names = itertools.count()
        self.loop_names = itertools.count()
        self.features = set()
        self.policies = set()
        self.in_main = False
        self.early_return = False

    def new_var(self):
        return "v{}".format(next(self.names))

    # -- expressions --

    def operand(self, ctx):
        # Prefer recent values, so that programs are chains rather than fans from the arguments.
        vs = ctx.vars
        if len(vs) > 2 and self.rng.random() < 0.7:
            return self.rng.choice(vs[-3:])
        return self.rng.choice(vs)

    def op_expr(self, ctx, first=None):
        """A random op on operands from ctx (the first one `first` when given)."""
        op = self.rng.choices(self.ops, self.weights)[0]
        self.policies.add(op.policy)
        args = [self.operand(ctx) for _ in range(op.arity)]
        if first is not None:
            args[0] = first
        if op.policy == "cast":
            args = [self.cast(a, "") for a in args]
        elif op.strict and ctx.enabled != "yes":
            cast = self.rng.choice(_STRICT_CASTS)
            args = [self.cast(a, cast) for a in args]
        return op.text.format(*args)

    def cast(self, expr, cast):
        # (A cast that is a no-op while tracing returns its input: test_trace_noop_cast_alias.)
        return expr + cast

    def dtype_kw(self):
        r = self.rng.random()
        if r < 0.35:
            return None
        if r < 0.75 or not self.config.cpu_float16:
            # torch 1.13 refuses a float16 CPU region when it is entered (RuntimeError, after the
            # constructor's warning): a profile without CPU float16 gets none
            return "torch.bfloat16"
        return "torch.float16"

    def region(self, ctx, allow_runtime):
        """(with-item text, enabled-knowledge inside the region)."""
        r = self.rng.random()
        if allow_runtime and ctx.has_flag and r < 0.25:
            enabled = self.rng.choice(["flag", "not flag"])
            self.features.add("runtime_enabled")
        else:
            enabled = "True" if self.rng.random() < 0.7 else "False"
        dtype = self.dtype_kw()
        cache = self.rng.random() < 0.15
        cpu_amp = self.rng.random() < 0.3
        if dtype is None and not cpu_amp and self.config.cpu_float16 and not self.known_bugs:
            # torch.autocast("cpu") takes the dtype current at construction, float16 under a float16
            # caller or region; a trace records the one current when tracing, and script reads it
            # when entering (test_bug_trace_autocast_default_dtype,
            # test_bug_script_autocast_default_dtype_at_construction). torch.cpu.amp.autocast's
            # default is bfloat16 whatever the caller's.
            dtype = "torch.bfloat16"
        if cpu_amp:
            self.features.add("cpu_amp_autocast")
        kws = []
        if cpu_amp:
            if enabled != "True" or self.rng.random() < 0.3:
                kws.append("enabled={}".format(enabled))
            if dtype is not None:
                kws.append("dtype={}".format(dtype))
            if cache:
                kws.append("cache_enabled=False")
            text = "torch.cpu.amp.autocast({})".format(", ".join(kws))
        else:
            kws.append('"cpu"')
            if dtype is not None:
                kws.append("dtype={}".format(dtype))
            if enabled != "True" or self.rng.random() < 0.3:
                kws.append("enabled={}".format(enabled))
            if cache:
                kws.append("cache_enabled=False")
            text = "torch.autocast({})".format(", ".join(kws))
        if dtype == "torch.float16":
            self.features.add("float16_region")
        return text, self._knowledge(enabled, dtype)

    def _knowledge(self, enabled, dtype):
        if enabled == "False":
            return "no"
        if enabled != "True":
            return "unknown"
        # A float16 CPU region is disabled (with a warning) by a profile without CPU float16.
        if dtype == "torch.float16" and not self.config.cpu_float16:
            return "no"
        return "yes"

    # -- statements --

    def block(self, ctx, n):
        """n statements (lines without the block's indentation) in `ctx`, which they update."""
        lines = []
        for _ in range(n):
            lines += self.statement(ctx)
        return lines

    def statement(self, ctx):
        choices = [("op", 5.0)]
        if ctx.depth < 3:
            choices.append(("with", 1.6))
            if ctx.has_flag:
                choices.append(("if_flag", 0.6))
            if ctx.in_region:
                choices.append(("if_enabled", 0.8))
        if ctx.helpers:
            choices.append(("call", 1.5))
        reenter = [i for i in ctx.instances if i[0] not in ctx.open_instances]
        if reenter and ctx.depth < 3:
            choices.append(("reenter", 1.0))
        if ctx.depth < 3:
            choices.append(("loop", 0.5))
        if self.in_main and ctx.depth == 1 and not self.early_return:
            choices.append(("early_return", 0.3))
        kind = self.rng.choices([c[0] for c in choices], [c[1] for c in choices])[0]
        return getattr(self, "st_" + kind)(ctx)

    def st_op(self, ctx):
        v = self.new_var()
        line = "{} = {}".format(v, self.op_expr(ctx))
        ctx.vars.append(v)
        return [line]

    def st_call(self, ctx):
        name, kind, takes_flag = self.rng.choice(ctx.helpers)
        args = [self.operand(ctx), self.operand(ctx)]
        if kind == "traced":
            # A trace is valid for inputs like its example inputs (float32).
            args = [self.cast(a, ".float()") for a in args]
        if takes_flag:
            args.append(self.rng.choice(["flag", "not flag"] if ctx.has_flag else ["True", "False"]))
        v = self.new_var()
        ctx.vars.append(v)
        self.features.add("call_" + kind)
        return ["{} = {}({})".format(v, name, ", ".join(args))]

    def _body(self, ctx, n):
        body = self.block(ctx, n)
        return ["    " + line for line in body]

    def st_with(self, ctx):
        text, knowledge = self.region(ctx, allow_runtime=True)
        inner = ctx.child(enabled=knowledge, in_region=True, depth=ctx.depth + 1)
        header = "with {}".format(text)
        bound = None
        if self.rng.random() < 0.25:
            bound = "ac{}".format(next(self.ac_names))
            header += " as {}".format(bound)
            self.features.add("as")
            if self.config.cpu_float16:  # torch-1.13's `with ... as ac` binds None: never re-entered
                inner.instances.append((bound, knowledge))
                inner.open_instances = inner.open_instances + (bound,)
        lines = [header + ":"] + self._body(inner, self.rng.randint(1, 3))
        # Python's `with` does not scope: what the region defines is visible after it.
        ctx.vars[:] = inner.vars
        ctx.instances[:] = [i for i in inner.instances]
        return lines

    def st_reenter(self, ctx):
        name, knowledge = self.rng.choice([i for i in ctx.instances if i[0] not in ctx.open_instances])
        inner = ctx.child(enabled=knowledge, in_region=True, depth=ctx.depth + 1,
                          open_instances=ctx.open_instances + (name,))
        self.features.add("reenter")
        lines = ["with {}:".format(name)] + self._body(inner, self.rng.randint(1, 2))
        ctx.vars[:] = inner.vars
        ctx.instances[:] = inner.instances
        return lines

    def _branches(self, ctx, cond, then_enabled, else_enabled):
        """if/else that both assign one new variable; what else they define stays inside."""
        v = self.new_var()
        lines = ["if {}:".format(cond)]
        for i, (enabled, n) in enumerate(((then_enabled, self.rng.randint(0, 2)),
                                          (else_enabled, self.rng.randint(0, 1)))):
            if i:
                lines.append("else:")
            inner = ctx.child(enabled=enabled, depth=ctx.depth + 1)
            body = self.block(inner, n)
            body.append("{} = {}".format(v, self.op_expr(inner)))
            lines += ["    " + line for line in body]
        ctx.vars.append(v)
        return lines

    def st_loop(self, ctx):
        """A loop-carried value updated 1-3 times, in a region or not, maybe leaving the loop (and
        the region) early with break / continue. What the body defines stays inside."""
        v = self.new_var()
        lines = ["{} = {}".format(v, self.op_expr(ctx))]
        ctx.vars.append(v)
        lines.append("for i{} in range({}):".format(next(self.loop_names), self.rng.randint(1, 3)))
        self.features.add("loop")
        inner = ctx.child(depth=ctx.depth + 1)
        region = None
        if self.rng.random() < 0.6:
            region, knowledge = self.region(ctx, allow_runtime=True)
            inner = inner.child(enabled=knowledge, in_region=True, depth=inner.depth + 1)
        body = self.block(inner, self.rng.randint(0, 1))
        body.append("{} = {}".format(v, self.op_expr(inner, first=v)))
        if ctx.has_flag and self.rng.random() < 0.5:
            jump = self.rng.choice(["break", "continue"])
            self.features.add("loop_" + jump)
            starts = [i for i, line in enumerate(body) if not line[:1].isspace() and not line.startswith("else")]
            at = self.rng.choice(starts + [len(body)])  # between statements
            body[at:at] = ["if {}:".format(self.rng.choice(["flag", "not flag"])), "    " + jump]
        if region is not None:
            body = ["with {}:".format(region)] + ["    " + line for line in body]
        return lines + ["    " + line for line in body]

    def st_early_return(self, ctx):
        """`if flag:` return from inside a region (main only; main then returns one tensor)."""
        self.early_return = True
        self.features.add("early_return")
        region, knowledge = self.region(ctx, allow_runtime=True)
        inner = ctx.child(enabled=knowledge, in_region=True, depth=ctx.depth + 2)
        body = self.block(inner, self.rng.randint(0, 2))
        body.append("return {}".format(self.op_expr(inner)))
        return (["if {}:".format(self.rng.choice(["flag", "not flag"])), "    with {}:".format(region)]
                + ["        " + line for line in body])

    def st_if_flag(self, ctx):
        self.features.add("if_flag")
        return self._branches(ctx, self.rng.choice(["flag", "not flag"]), ctx.enabled, ctx.enabled)

    def st_if_enabled(self, ctx):
        self.features.add("is_autocast_enabled")
        return self._branches(ctx, "torch.is_autocast_cpu_enabled()", "yes", "no")

    # -- functions --

    def helper(self, index, helpers):
        kind = self.rng.choice(["plain", "plain", "scripted", "traced"])
        name = "h{}".format(index)
        deco = None
        enabled = "unknown"
        if self.rng.random() < 0.4:
            text, enabled = self.region(_Ctx([], "unknown", False, False, [], [], (), 0), allow_runtime=False)
            deco = "@" + text
            self.features.add("decorator")
            self.features.add("decorator_" + kind)
        # Plain and scripted helpers may take the runtime flag too (a trace takes tensors only).
        takes_flag = kind != "traced" and self.rng.random() < 0.35
        if takes_flag:
            self.features.add("helper_flag")
        ctx = _Ctx(["a", "b"], enabled, deco is not None, takes_flag, list(helpers), [], (), 1)
        body = self.block(ctx, self.rng.randint(1, 4))
        fname = name if kind == "plain" else "_" + name
        lines = []
        if deco:
            lines.append(deco)
        lines.append("def {}(a, b{}):".format(fname, ", flag: bool" if takes_flag else ""))
        lines += ["    " + line for line in body]
        lines.append("    return {}".format(ctx.vars[-1]))
        lines.append("")
        if kind == "scripted":
            lines += ["if EAGER_REFERENCE:",
                      "    {} = {}".format(name, fname),
                      "else:",
                      "    {} = torch.jit.script({}, autocast_semantics=SEMANTICS)".format(name, fname),
                      ""]
        elif kind == "traced":
            lines += ["if EAGER_REFERENCE:",
                      "    {} = {}".format(name, fname),
                      "else:",
                      "    {} = torch.jit.trace({}, (torch.ones(4, 4), torch.ones(4, 4)), check_trace=False,".format(
                          name, fname),
                      "                         autocast_semantics=SEMANTICS)",
                      ""]
        return lines, (name, kind, takes_flag)

    def main(self, helpers):
        self.in_main = True
        ctx = _Ctx(["x", "w"], "unknown", False, True, helpers, [], (), 1)
        body = self.block(ctx, self.rng.randint(3, 7))
        ret_vars = [ctx.vars[-1]]
        if self.rng.random() < 0.3 and not self.early_return:
            other = self.rng.choice(ctx.vars[2:] or ctx.vars)
            if other != ret_vars[0]:
                ret_vars.append(other)
        lines = ["def main(x, w, flag: bool):"] + ["    " + line for line in body]
        if self.rng.random() < 0.2:
            # Return from inside a region: leaving the function must leave the region.
            text, knowledge = self.region(ctx, allow_runtime=True)
            inner = ctx.child(enabled=knowledge, in_region=True, depth=ctx.depth + 1)
            tail = self.block(inner, self.rng.randint(1, 2))
            lines.append("    with {}:".format(text))
            lines += ["        " + line for line in tail]
            lines.append("        return {}".format(", ".join([inner.vars[-1]] + ret_vars[1:])))
            self.features.add("return_in_region")
        else:
            lines.append("    return {}".format(", ".join(ret_vars)))
        return lines


_HEADER = '''\
# ampjit property-test program (tests/conformance/program_gen.py), seed={seed}, attempt={attempt}, config={config}
import ampjit as torch
import ampjit.nn.functional as F

EAGER_REFERENCE = globals().get("EAGER_REFERENCE", True)  # the loader sets both before running
SEMANTICS = globals().get("SEMANTICS", None)

'''


def generate(seed, config=None, known_bugs=False, attempt=0):
    """The program of (`seed`, `attempt`) (deterministic). config: a Config, else drawn from CONFIGS
    by seed. See generate_valid for `attempt`."""
    rng = random.Random(seed * 7919 + 17)
    if config is None:
        config = CONFIGS[rng.randrange(len(CONFIGS))]
    g = _Gen(seed * 1000 + attempt, config, known_bugs)
    lines = []
    helpers = []
    for i in range(g.rng.randint(0, 3)):
        h_lines, h = g.helper(i, helpers)
        lines += h_lines + [""]
        helpers.append(h)
    lines += g.main(helpers)
    source = _HEADER.format(seed=seed, attempt=attempt, config=config.name) + "\n".join(lines) + "\n"
    return Program(seed=seed, source=source, config=config, features=frozenset(g.features),
                   policies=frozenset(g.policies), attempt=attempt)


# What eager autocast itself rejects in a well-typed program, as PyTorch does: a promote op that
# meets float16 and bfloat16 under one region (at::autocast::prioritize). The generator does not
# track dtypes through autocast, so it draws again (the next attempt) when eager says this.
EAGER_REJECTS = ("Unexpected floating ScalarType in at::autocast::prioritize",)

CALL_STATE_DTYPES = (None, "bfloat16", "float16")  # off, autocast("cpu"), autocast("cpu", dtype=float16)


def eager_rejection(prog):
    """The message when eager execution of `prog` raises one of EAGER_REJECTS: importing it, calling
    each helper on float32 ones outside autocast (what a pre-traced helper is traced on) and main
    under every call state (CALL_STATE_DTYPES) and flag; None when it runs. Other errors propagate
    (a generator bug)."""
    import warnings
    import ampjit
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a float16 decorator's at import, in torch-1.13
        mod = prog.load(reference=True)
    calls = [(None, getattr(mod, name), (ampjit.ones(4, 4), ampjit.ones(4, 4)))
             for name in sorted(vars(mod)) if name[:1] == "h" and name[1:].isdigit()
             and "_" + name in vars(mod) and "trace(_" + name in prog.source]
    x, w = prog.make_args()
    calls += [(dt, mod.main, (x, w, flag)) for dt in CALL_STATE_DTYPES for flag in (True, False)
              if dt != "float16" or prog.config.cpu_float16]
    for dt, fn, args in calls:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if dt is None:
                    fn(*args)
                else:
                    with ampjit.autocast("cpu", dtype=getattr(ampjit, dt)):
                        fn(*args)
        except RuntimeError as e:
            if any(m in str(e) for m in EAGER_REJECTS):
                return str(e)
            raise
    return None


def generate_valid(seed, config=None, known_bugs=False, max_attempts=50):
    """generate(seed, attempt=k) for the first k whose program eager accepts (eager_rejection)."""
    for attempt in range(max_attempts):
        prog = generate(seed, config, known_bugs, attempt)
        with prog.config.apply():
            rejected = eager_rejection(prog)
        if rejected is None:
            return prog
        prog.cleanup()
    raise RuntimeError("program_gen: no program eager accepts for seed {} in {} attempts".format(seed, max_attempts))
