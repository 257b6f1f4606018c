# Random ONNX graphs for the compiler's property test (property.py).
#
# make_case(seed, index, size_class) builds one valid graph from its own
# numpy RandomState (seed, index): the same graphs every run, and any one
# of them can be rebuilt alone.  A graph is a chain, sometimes with
# branches that merge again (a small DAG), of Conv (groups, depthwise,
# strides, pads, dilations, with and without bias), MatMul and Gemm,
# elementwise Add/Mul (with broadcast constants or another branch),
# Relu/Sigmoid, MaxPool/AveragePool/GlobalAveragePool, Concat,
# Reshape/Transpose, Pad, Softmax, ReduceSum/Mean/Max over trailing axes,
# CumSum and TopK along the last axis, Gather at run-time indices (of the running tensor or of a constant
# table), in fp32 or fp16.
#
# Sizes: each size class draws the elements of the graph's first tensor
# log-uniformly from its range; the ops keep the tensors near that size.
# The largest class is larger than the whole default target (DEVICE_BYTES).
# Weights stay small at every size (channels and inner dimensions are
# bounded), so even graphs of several GB are small files that the
# compiler must refuse quickly.
import math

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, shape_inference

# The default target of ipu-compile (ipu2: compiler/cli/options.h).
TILES = 1472
TILE_MEM = 624 * 1024
DEVICE_BYTES = TILES * TILE_MEM

# name: (smallest, largest) elements of the first tensor
SIZE_CLASSES = {
    "tiny": (2, 64),
    "small": (64, 16 * 1024),
    "medium": (16 * 1024, 1024 * 1024),
    "large": (1024 * 1024, 4 * 1024 * 1024),
    "device": (DEVICE_BYTES // 16, DEVICE_BYTES // 3),
    "huge": (DEVICE_BYTES // 2, DEVICE_BYTES * 4),
}
OPSET = 13
# weights stay small at every size (MatMul/Gemm outputs are narrowed,
# broadcast constants lose dims): elements
MAX_WEIGHT = 1 << 20


def _log_uniform(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def _split(rng, total, rank, caps):
    """A shape of `rank` dims whose product is near `total`: the capped dims
    are drawn first, dim 0 (uncapped) takes what is left."""
    dims = [1] * rank
    left = max(1, total)
    for i in range(rank - 1, 0, -1):
        share = math.exp(math.log(left) / (i + 1) * rng.uniform(0.5, 1.5))
        dims[i] = max(1, min(int(round(share)), caps[i], left))
        left = max(1, left // dims[i])
    dims[0] = left
    return dims


class Graph:
    """A graph under construction, with the shapes the generator expects."""

    def __init__(self, rng, prec):
        self.rng = rng
        self.prec = prec
        self.nodes, self.inits, self.inputs = [], [], []
        self.shape = {}
        self.n = 0
        self.ops = []           # one word per node, for the report
        self.max_reduce = 1     # longest reduction (tolerance)
        self.working = 0        # largest per-op minimal working set, bytes

    def name(self, p):
        self.n += 1
        return f"{p}{self.n}"

    @property
    def esize(self):
        return 2 if self.prec == "fp16" else 4

    def input(self, shape):
        nm = self.name("x")
        self.shape[nm] = list(shape)
        self.inputs.append(nm)
        return nm

    def const(self, arr):
        nm = self.name("w")
        arr = np.asarray(arr, dtype=np.float64)
        self.shape[nm] = list(arr.shape)
        self.inits.append((nm, arr))
        return nm

    def int_const(self, vals):
        nm = self.name("s")
        self.inits.append((nm, np.asarray(vals, dtype=np.int64)))
        self.shape[nm] = [len(vals)]
        return nm

    def node(self, op, ins, shape, **attrs):
        out = self.name(op.lower()[:4])
        self.nodes.append(helper.make_node(op, ins, [out], name=f"{op}_{self.n}", **attrs))
        self.shape[out] = list(shape)
        self.ops.append(op)
        return out

    def reduce(self, length, working_elems):
        self.max_reduce = max(self.max_reduce, int(length))
        self.working = max(self.working, int(working_elems) * self.esize)

    def total_bytes(self):
        """Every tensor of the graph at once (no reuse), bytes."""
        n = sum(int(np.prod(s)) for nm, s in self.shape.items()
                if not nm.startswith("s"))
        return n * self.esize

    def model(self, out, elem):
        """The ModelProto with tensors of element type elem (FLOAT/FLOAT16)."""
        np_dt = np.float16 if elem == TensorProto.FLOAT16 else np.float32
        inits = []
        for nm, a in self.inits:
            inits.append(numpy_helper.from_array(
                a if a.dtype == np.int64 else a.astype(np_dt), nm))
        g = helper.make_graph(
            self.nodes, "property",
            [helper.make_tensor_value_info(i, elem, self.shape[i]) for i in self.inputs],
            [helper.make_tensor_value_info(out, elem, self.shape[out])], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="property")
        m.ir_version = 8
        return m


# -- the ops: each takes (g, x) and returns the new tensor -----------------

def _weights(g, shape, fan_in):
    return g.rng.standard_normal(shape) / math.sqrt(max(1, fan_in))


def op_conv(g, x, keep_channels=None, same=False):
    rng = g.rng
    n, c, h, w = g.shape[x]
    groups = [1]
    if c > 1:
        groups.append(c)
    groups += [k for k in (2, 4) if c % k == 0 and k < c]
    grp = int(rng.choice(groups))
    if keep_channels is not None:
        cout = keep_channels
        if cout % grp:
            grp = 1
    elif grp == c and c > 1:
        cout = c * int(rng.choice([1, 1, 2]))
    else:
        cout = max(1, int(round(c * rng.choice([0.5, 1, 1, 2]))))
        cout = min(512, max(grp, cout - cout % grp))
    ks, st, dl, pads = [], [], [], [0, 0, 0, 0]
    for ax, size in enumerate((h, w)):
        k = int(rng.choice([1, 1, 3, 3, 5])) if not same else int(rng.choice([1, 3]))
        d = int(rng.choice([1, 1, 2])) if k > 1 and not same else 1
        s = int(rng.choice([1, 1, 2])) if not same else 1
        if same:
            pb = pe = (k - 1) // 2
        else:
            pb, pe = int(rng.randint(0, k)), int(rng.randint(0, k))
        while (k - 1) * d + 1 > size + pb + pe and k > 1:
            k -= 2 if k > 2 else 1
            pb, pe = min(pb, k - 1), min(pe, k - 1)
        if (k - 1) * d + 1 > size + pb + pe:
            d = 1
        ks.append(k)
        st.append(s)
        dl.append(d)
        pads[ax], pads[ax + 2] = pb, pe
    oh = (h + pads[0] + pads[2] - (ks[0] - 1) * dl[0] - 1) // st[0] + 1
    ow = (w + pads[1] + pads[3] - (ks[1] - 1) * dl[1] - 1) // st[1] + 1
    fan = c // grp * ks[0] * ks[1]
    ins = [x, g.const(_weights(g, (cout, c // grp, ks[0], ks[1]), fan))]
    if rng.rand() < 0.6:
        ins.append(g.const(rng.standard_normal(cout) * 0.1))
    g.reduce(fan, fan * 2 + ks[0] * w)
    return g.node("Conv", ins, [n, cout, oh, ow], kernel_shape=ks, strides=st,
                  pads=pads, dilations=dl, group=grp)


def op_pool(g, x):
    rng = g.rng
    n, c, h, w = g.shape[x]
    op = str(rng.choice(["MaxPool", "AveragePool"]))
    ks, st, pads = [], [], [0, 0, 0, 0]
    for ax, size in enumerate((h, w)):
        k = int(min(size, rng.choice([1, 2, 3])))
        s = int(rng.choice([1, 2, 2]))
        pb = int(rng.randint(0, k)) if k > 1 and rng.rand() < 0.4 else 0
        pe = int(rng.randint(0, k)) if k > 1 and rng.rand() < 0.4 else 0
        ks.append(k)
        st.append(s)
        pads[ax], pads[ax + 2] = pb, pe
    oh = (h + pads[0] + pads[2] - ks[0]) // st[0] + 1
    ow = (w + pads[1] + pads[3] - ks[1]) // st[1] + 1
    attrs = dict(kernel_shape=ks, strides=st, pads=pads)
    if op == "AveragePool":
        attrs["count_include_pad"] = int(rng.rand() < 0.5)
    g.reduce(ks[0] * ks[1], ks[0] * w)
    return g.node(op, [x], [n, c, oh, ow], **attrs)


def op_global_pool(g, x):
    n, c, h, w = g.shape[x]
    g.reduce(h * w, 1)
    return g.node("GlobalAveragePool", [x], [n, c, 1, 1])


def _broadcast_shape(rng, shape):
    """A shape that broadcasts to `shape` (ONNX multidirectional rules)."""
    r = len(shape)
    kind = rng.randint(0, 4)
    if kind == 0:
        return list(shape)
    if kind == 1:
        return [1]
    b = [d if rng.rand() < 0.5 else 1 for d in shape]
    drop = rng.randint(0, r)   # leading dims may be left out
    return b[drop:] if drop < r else [1]


def op_binary_const(g, x):
    rng = g.rng
    op = str(rng.choice(["Add", "Mul"]))
    bs = _broadcast_shape(rng, g.shape[x])
    while np.prod(bs) > MAX_WEIGHT:
        big = [i for i, d in enumerate(bs) if d > 1]
        bs[big[rng.randint(len(big))]] = 1
    v = rng.standard_normal(bs) * 0.5
    if op == "Mul":
        v = v + np.sign(v) * 0.5   # keep magnitudes O(1)
    c = g.const(v)
    ins = [x, c] if rng.rand() < 0.7 else [c, x]
    return g.node(op, ins, g.shape[x])


def op_unary(g, x):
    return g.node(str(g.rng.choice(["Relu", "Sigmoid"])), [x], g.shape[x])


def op_branch_merge(g, x):
    """x -> two branches -> Add/Mul/Concat: a small DAG."""
    rng = g.rng
    shape = g.shape[x]
    a = op_unary(g, x)
    if len(shape) == 4 and rng.rand() < 0.6:
        b = op_conv(g, x, keep_channels=shape[1] if rng.rand() < 0.5 else None, same=True)
    else:
        b = op_binary_const(g, x) if rng.rand() < 0.5 else x
    sa, sb = g.shape[a], g.shape[b]
    if sa == sb and rng.rand() < 0.6:
        return g.node(str(rng.choice(["Add", "Mul"])), [a, b], sa)
    axes = [i for i in range(len(sa)) if all(sa[j] == sb[j] for j in range(len(sa)) if j != i)]
    ax = int(rng.choice(axes))
    out = list(sa)
    out[ax] = sa[ax] + sb[ax]
    return g.node("Concat", [a, b], out, axis=ax - len(sa) if rng.rand() < 0.3 else ax)


def op_transpose(g, x):
    shape = g.shape[x]
    perm = [int(p) for p in g.rng.permutation(len(shape))]
    return g.node("Transpose", [x], [shape[p] for p in perm], perm=perm)


def op_reshape(g, x):
    rng = g.rng
    shape = list(g.shape[x])
    r = len(shape)
    if r > 2 and rng.rand() < 0.6:
        i = rng.randint(0, r - 1)   # merge dims i, i+1
        new = shape[:i] + [shape[i] * shape[i + 1]] + shape[i + 2:]
    else:
        i = rng.randint(0, r)       # split dim i in two
        d = shape[i]
        f = [k for k in range(2, min(d, 64) + 1) if d % k == 0]
        if not f or r >= 4:
            new = [int(np.prod(shape[:-1])), shape[-1]] if r > 2 else [shape[0] * shape[1]]
            if len(new) == 1:
                new = [1] + new
        else:
            k = int(rng.choice(f))
            new = shape[:i] + [k, d // k] + shape[i + 1:]
    spec = list(new)
    if rng.rand() < 0.3:
        spec[rng.randint(0, len(spec))] = -1
    return g.node("Reshape", [x, g.int_const(spec)], new)


def op_softmax(g, x):
    shape = g.shape[x]
    ax = int(g.rng.randint(-len(shape), len(shape)))
    g.reduce(shape[ax], 2)   # long rows are reduced in chunks: no row need fit a tile
    return g.node("Softmax", [x], shape, axis=ax)


def op_matmul(g, x):
    rng = g.rng
    shape = g.shape[x]
    k = shape[-1]
    if k > MAX_WEIGHT // 4:
        return op_unary(g, x)
    if len(shape) == 2 and rng.rand() < 0.5:
        m = max(1, min(2048, MAX_WEIGHT // k, int(round(k * rng.choice([0.25, 0.5, 1, 2])))))
        tb = int(rng.rand() < 0.5)
        w = g.const(_weights(g, (m, k) if tb else (k, m), k))
        ins = [x, w]
        if rng.rand() < 0.7:
            ins.append(g.const(rng.standard_normal(
                [m] if rng.rand() < 0.7 else [1, m]) * 0.1))
        alpha = float(rng.choice([1.0, 1.0, 0.5]))
        g.reduce(k, k * 2)
        return g.node("Gemm", ins, [shape[0], m], transB=tb, alpha=alpha)
    if len(shape) >= 3 and rng.rand() < 0.3 and shape[-2] <= 512:
        # activation x activation: x @ x^T over the last two dims, x scaled
        # by 1/sqrt(K) first (x x^T's diagonal grows with K: past float16's
        # 65504 the reference cannot be an fp16 graph's)
        x = g.node("Mul", [x, g.const(np.full([1], 1 / math.sqrt(k)))], shape)
        perm = list(range(len(shape) - 2)) + [len(shape) - 1, len(shape) - 2]
        t = g.node("Transpose", [x], [shape[p] for p in perm], perm=perm)
        g.reduce(k, k * 2)
        return g.node("MatMul", [x, t], shape[:-1] + [shape[-2]])
    m = max(1, min(2048, MAX_WEIGHT // k, int(round(k * rng.choice([0.25, 0.5, 1, 2])))))
    g.reduce(k, k * 2)
    return g.node("MatMul", [x, g.const(_weights(g, (k, m), k))], shape[:-1] + [m])


def op_reduce(g, x):
    """ReduceSum/Mean/Max over the trailing axes (keepdims): rows of any
    length, those longer than a tile reduced in chunks."""
    rng = g.rng
    shape = g.shape[x]
    a = int(rng.randint(len(shape)))
    op = str(rng.choice(["ReduceSum", "ReduceMean", "ReduceMax"]))
    axes = list(range(a, len(shape)))
    out = shape[:a] + [1] * (len(shape) - a)
    L = int(np.prod(shape[a:]))
    g.reduce(L, 2)
    if op == "ReduceSum":   # opset 13: axes are an input
        return g.node(op, [x, g.int_const(axes)], out, keepdims=1)
    return g.node(op, [x], out, axes=axes, keepdims=1)


def op_cumsum(g, x):
    """CumSum along the last axis (exclusive, reverse drawn): rows longer
    than a tile are summed in chunks."""
    rng = g.rng
    shape = g.shape[x]
    g.reduce(shape[-1], 2)
    axis = g.name("s")          # CumSum's axis is a scalar
    g.inits.append((axis, np.asarray(len(shape) - 1, dtype=np.int64)))
    g.shape[axis] = []
    return g.node("CumSum", [x, axis], shape, exclusive=int(rng.rand() < 0.3),
                  reverse=int(rng.rand() < 0.3))


def op_topk(g, x):
    """TopK along the last axis (largest or smallest), its values going
    on: rows longer than a tile are ranked in chunks."""
    rng = g.rng
    shape = g.shape[x]
    k = int(min(shape[-1], rng.choice([1, 5, 16])))
    out = shape[:-1] + [k]
    vals, idx = g.name("topv"), g.name("topi")
    g.nodes.append(helper.make_node("TopK", [x, g.int_const([k])], [vals, idx], name=f"TopK_{g.n}",
                                    axis=-1, largest=int(rng.rand() < 0.7)))
    g.shape[vals] = out
    g.shape[idx] = out
    g.ops.append("TopK")
    return vals


def op_pad(g, x):
    """Pad of H and W (constant, edge or reflect; cropping in constant
    mode): a channel larger than a tile is padded axis by axis."""
    rng = g.rng
    n, c, hh, ww = g.shape[x]
    mode = str(rng.choice(["constant", "edge", "reflect"]))
    pads = [0, 0, 0, 0, 0, 0, 0, 0]
    for ax, size in ((2, hh), (3, ww)):
        for end in (0, 4):
            p = int(rng.randint(0, 4))
            if mode == "reflect":
                p = min(p, size - 1)
            elif mode == "constant" and size > 4 and rng.rand() < 0.2:
                p = -1
            pads[ax + end] = p
    out = [n, c, hh + pads[2] + pads[6], ww + pads[3] + pads[7]]
    if min(out) < 1:
        return op_unary(g, x)
    ins = [x, g.int_const(pads)]
    if mode == "constant":
        ins.append(g.const(np.full([], float(rng.choice([0.0, 0.5, -1.0])))))
    return g.node("Pad", ins, out, mode=mode)


def _runtime_indices(g, d):
    """Up to 2d int64 indices in [0, d), known only at run time: ArgMax
    over rows of d elements of the graph's input (the same values in both
    precisions, so both pick the same first maximum).  None when the
    input has fewer than d elements."""
    rng = g.rng
    src = g.inputs[0]
    n0 = int(np.prod(g.shape[src]))
    r = min(max(1, int(round(d * rng.choice([0.25, 0.5, 1, 2])))), n0 // d if d else 0)
    if r < 1:
        return None
    flat = g.node("Reshape", [src, g.int_const([-1])], [n0])
    if r * d < n0:
        flat = g.node("Slice", [flat, g.int_const([0]), g.int_const([r * d]), g.int_const([0])],
                      [r * d])
    rows = g.node("Reshape", [flat, g.int_const([r, d])], [r, d])
    return g.node("ArgMax", [rows], [r], axis=1, keepdims=0)


def op_gather(g, x):
    """Gather at run-time indices: from the running tensor along any axis
    (run-time data), or an embedding lookup in a constant table [d x
    inner].  Large outputs, tables and axes are split over tiles."""
    rng = g.rng
    shape = g.shape[x]
    if rng.rand() < 0.6:
        a = int(rng.randint(len(shape)))
        idx = _runtime_indices(g, shape[a])
        if idx is None:
            return op_unary(g, x)
        out = shape[:a] + g.shape[idx] + shape[a + 1:]
        return g.node("Gather", [x, idx], out, axis=a if rng.rand() < 0.7 else a - len(shape))
    d = max(2, min(shape[-1], MAX_WEIGHT // 2))
    inner = max(1, min(MAX_WEIGHT // d, int(rng.choice([1, 16, 64, 256, 1024]))))
    idx = _runtime_indices(g, d)
    if idx is None:
        return op_unary(g, x)
    table = g.const(rng.standard_normal((d, inner)))
    return g.node("Gather", [table, idx], g.shape[idx] + [inner], axis=0)


# what may follow a tensor of each rank, with weights
OPS4 = [(op_conv, 5), (op_pool, 2), (op_global_pool, 0.5), (op_binary_const, 2), (op_unary, 2),
        (op_branch_merge, 2), (op_transpose, 0.7), (op_reshape, 0.7), (op_softmax, 0.7),
        (op_gather, 0.7), (op_reduce, 0.5), (op_pad, 0.5), (op_cumsum, 0.3), (op_topk, 0.3)]
OPSN = [(op_matmul, 4), (op_binary_const, 2), (op_unary, 2), (op_branch_merge, 1.5),
        (op_transpose, 0.7), (op_reshape, 0.7), (op_softmax, 1), (op_gather, 0.7),
        (op_reduce, 0.5), (op_cumsum, 0.3), (op_topk, 0.3)]


def _pick(rng, table):
    w = np.array([p for _, p in table], dtype=np.float64)
    return table[rng.choice(len(table), p=w / w.sum())][0]


def make_case(seed, index, size_class, prec=None):
    """One random graph: a dict with the Graph, its output and a label."""
    rng = np.random.RandomState([seed, index])
    prec = prec or str(rng.choice(["fp32", "fp16"]))
    g = Graph(rng, prec)
    lo, hi = SIZE_CLASSES[size_class]
    total = _log_uniform(rng, lo, hi)
    if rng.rand() < 0.6 and total >= 4:
        # an image: channels and batch stay small, the rest spatial
        c = min(_log_uniform(rng, 1, 256), max(1, total // 4))
        n = int(rng.choice([1, 1, 1, 2])) if total // c >= 8 else 1
        hw = max(1, total // (c * n))
        h = max(1, int(round(math.sqrt(hw) * math.exp(rng.uniform(-0.5, 0.5)))))
        w = max(1, hw // h)
        x = g.input([n, c, h, w])
        table = OPS4
    else:
        rank = int(rng.choice([2, 2, 3]))
        caps = [1 << 40] * rank
        caps[-1] = 4096         # the inner (reduction) dim
        shape = _split(rng, total, rank, caps)
        if rank == 3 and shape[0] > 16:
            shape = [16, shape[0] * shape[1] // 16, shape[2]]
        x = g.input(shape)
        table = OPSN
    nops = int(rng.randint(1, 6))
    for _ in range(nops):
        if len(g.shape[x]) == 4:
            f = _pick(rng, OPS4)
        else:
            f = _pick(rng, OPSN)
        x = f(g, x)
        if f is op_global_pool and rng.rand() < 0.7:
            n_, c_ = g.shape[x][:2]
            x = g.node("Reshape", [x, g.int_const([n_, c_])], [n_, c_])
    return {"graph": g, "output": x, "size_class": size_class, "prec": prec,
            "first_elems": total}


def build_models(case):
    """(model as given to ipu-compile, fp32 reference model)."""
    g = case["graph"]
    out = case["output"]
    ref = g.model(out, TensorProto.FLOAT)
    if case["prec"] == "fp16":
        # the reference sees the values fp16 holds (rounded once here)
        for nm, a in g.inits:
            if a.dtype != np.int64:
                a[...] = a.astype(np.float16).astype(np.float64)
        ref = g.model(out, TensorProto.FLOAT)
        dut = g.model(out, TensorProto.FLOAT16)
    else:
        dut = ref
    return dut, ref


def check(case, model):
    """The generator's shapes against ONNX's own inference (a generator bug
    must not pass for a compiler bug)."""
    checker.check_model(model)
    inf = shape_inference.infer_shapes(model, strict_mode=True)
    g = case["graph"]
    for v in list(inf.graph.value_info) + list(inf.graph.output):
        got = [d.dim_value for d in v.type.tensor_type.shape.dim]
        if got != g.shape[v.name]:
            raise AssertionError(f"generator: {v.name} is {got} by ONNX, {g.shape[v.name]} here")
