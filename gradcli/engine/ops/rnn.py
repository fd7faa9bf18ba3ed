"""The recurrent layers' ops (torch's _VF.rnn_tanh, rnn_relu, gru, lstm and their cells) as PyTorch's CPU
kernels build them, plus the row only they record: the in-place transpose_ of a batch-first result
(TransposeBackward1).

On the CPU, PyTorch composes RNN, GRU and every float64 LSTM out of ordinary ops (aten/src/ATen/native/
RNN.cpp): the input projection for all steps at once, then per step one linear of the hidden state, an add,
unsafe_chunk, sigmoid/tanh and the gate products. The same ops in the same order here give the same grad_fn
chains and the same float rounding. A float32 LSTM without projections goes to oneDNN instead: one
`mkldnn_rnn_layer` per layer and direction, a node with three outputs (output, h_n, c_n) whose backward
runs the whole sequence back in one call (LstmLayerNode).
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import dtypes, elementary
from gradcli.engine.autograd import FREED, Node, OutputGrads, OutputSlot, RunOp, edge
from gradcli.engine.ops import arith, elementwise, indexing, linalg, nn, reduce, shape
from gradcli.engine import signatures
from gradcli.engine.recording import Op, apply, wrap_dim
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor


# fmt: off
TRANSPOSE_   = Op("TransposeBackward1",   None, ("dim0", "dim1"),
                  (lambda F, g, dim0, dim1: F.transpose(g, dim0, dim1),),
                  jvp=lambda F, ts, xs, result, dim0, dim1: transpose_(ts[0], dim0, dim1))
# fmt: on


unsafe_chunk = shape.unsafe_chunk        # (its pieces are no views: UnsafeSplitBackward0, ops/shape.py)


def transpose_(a: Tensor, dim0: int, dim1: int) -> Tensor:
    """The in-place transpose PyTorch applies to its own fresh batch-first RNN result: a node of its own."""
    x = a._a
    return apply(TRANSPOSE_, np.swapaxes(x, dim0, dim1), (a,), (dim0, dim1))


# ------------------------------------------------------------------------------------------- cells

class Params:
    """One layer and direction's weights (CellParams): w_ih, w_hh, the biases (None without), w_hr (None
    without projections)."""

    __slots__ = ("w_ih", "w_hh", "b_ih", "b_hh", "w_hr")

    def __init__(self, w_ih, w_hh, b_ih=None, b_hh=None, w_hr=None):
        self.w_ih, self.w_hh, self.b_ih, self.b_hh, self.w_hr = w_ih, w_hh, b_ih, b_hh, w_hr


def _simple_cell(nonlinearity):
    def cell(x, h, p: Params, precomputed: bool):
        hh = nn.linear(h, p.w_hh, p.b_hh)
        return nonlinearity(arith.add(hh, x if precomputed else nn.linear(x, p.w_ih, p.b_ih)))
    return cell


def lstm_cell_step(x, hidden, p: Params, precomputed: bool):
    """LSTMCell's step: the gates' sum, chunked, through sigmoid/tanh; cy = f * cx + i * g, hy = o * tanh(cy)."""
    hx, cx = hidden
    hh = nn.linear(hx, p.w_hh, p.b_hh)
    gates = arith.add(hh, x if precomputed else nn.linear(x, p.w_ih, p.b_ih))
    i, f, g, o = unsafe_chunk(gates, 4, 1)
    i, f, g, o = elementwise.sigmoid(i), elementwise.sigmoid(f), elementwise.tanh(g), elementwise.sigmoid(o)
    fc = arith.mul(f, cx)
    cy = arith.add(fc, arith.mul(i, g))
    hy = arith.mul(o, elementwise.tanh(cy))
    if p.w_hr is not None:
        hy = linalg.matmul(hy, shape.t(p.w_hr))
    return hy, cy


def gru_cell_step(x, h, p: Params, precomputed: bool):
    """GRUCell's step: r = σ(hr + ir), z = σ(hz + iz), n = tanh(in + hn * r), h' = (h - n) * z + n."""
    ig = unsafe_chunk(x if precomputed else nn.linear(x, p.w_ih, p.b_ih), 3, 1)
    hg = unsafe_chunk(nn.linear(h, p.w_hh, p.b_hh), 3, 1)
    reset = elementwise.sigmoid(arith.add(hg[0], ig[0]))
    update = elementwise.sigmoid(arith.add(hg[1], ig[1]))
    new = elementwise.tanh(arith.add(ig[2], arith.mul(hg[2], reset)))
    return arith.add(arith.mul(arith.sub(h, new), update), new)


CELLS = {"RNN_TANH": _simple_cell(elementwise.tanh), "RNN_RELU": _simple_cell(elementwise.relu),
         "GRU": gru_cell_step, "LSTM": lstm_cell_step}


def cell(mode: str, input: Tensor, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """rnn_tanh_cell, rnn_relu_cell, gru_cell, lstm_cell (hx a pair for LSTM), with PyTorch's checks."""
    gates = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    hidden_size = w_hh._a.shape[1]
    hiddens = hx if mode == "LSTM" else (hx,)

    def check_weights():
        for name, w in (("weight_ih", w_ih), ("weight_hh", w_hh)):
            if w._a.shape[0] != gates * hidden_size:
                raise RuntimeError(f"{name} first dim must be {gates} * hidden_size = {gates * hidden_size}, "
                                   f"but got {w._a.shape[0]}")

    def check_input():
        if input._a.shape[1] != w_ih._a.shape[1]:
            raise RuntimeError(f"input has inconsistent input_size: got {input._a.shape[1]} expected "
                               f"{w_ih._a.shape[1]}")

    def check_hidden():
        for label, h in enumerate(hiddens):
            if input._a.shape[0] != h._a.shape[0]:
                raise RuntimeError(f"Input batch size {input._a.shape[0]} doesn't match hidden{label} batch size "
                                   f"{h._a.shape[0]}")
            if h._a.shape[1] != hidden_size:
                raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {h._a.shape[1]}, expected "
                                   f"{hidden_size}")

    # each cell checks in its own order (RNN.cpp)
    order = {"LSTM": (check_input, check_weights, check_hidden), "GRU": (check_input, check_hidden, check_weights)}
    for check in order.get(mode, (check_weights, check_input, check_hidden)):
        check()
    return CELLS[mode](input, hx, Params(w_ih, w_hh, b_ih, b_hh), False)


def _cell_function(mode: str, name: str):
    """torch.rnn_tanh_cell, rnn_relu_cell, gru_cell and lstm_cell: `cell` with PyTorch's argument checks."""
    def function(*args, **kwargs):
        message = signatures.check(f"torch.{name}", args, kwargs)
        if message is not None:
            raise TypeError(message)
        _, v = signatures.bound(f"torch.{name}", args, kwargs)
        hx = v["hx"]
        if mode == "LSTM":
            if len(hx) != 2:
                raise RuntimeError("lstm_cell expects two hidden states")
            hx = tuple(hx)
        wrap_dim(1, v["input"]._a.ndim)         # (the cells read the input's size(1) first)
        return cell(mode, v["input"], hx, v["w_ih"], v["w_hh"], v["b_ih"], v["b_hh"])
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.{name}: one step of the {mode} cell, as the nn cell module takes it."
    return function


rnn_tanh_cell = _cell_function("RNN_TANH", "rnn_tanh_cell")
rnn_relu_cell = _cell_function("RNN_RELU", "rnn_relu_cell")
gru_cell = _cell_function("GRU", "gru_cell")
lstm_cell = _cell_function("LSTM", "lstm_cell")


# ------------------------------------------------------------------------------------------ layers

def _full_layer(step, steps: list, hidden, p: Params):
    """FullLayer on pre-computed inputs: the outputs of each step and the last hidden state."""
    outputs = []
    for x in steps:
        hidden = step(x, hidden, p, True)
        outputs.append(hidden[0] if hidden.__class__ is tuple else hidden)
    return outputs, hidden


def _layer(step, input: Tensor, hidden, params: list):
    """FullLayer / FullBidirectionalLayer on the CPU: the input projection for every step at once."""
    fw = params[0]
    outputs, fw_hidden = _full_layer(step, arith.unbind0(nn.linear(input, fw.w_ih, fw.b_ih)), hidden[0], fw)
    if not outputs:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    fw_output = shape.stack(outputs, 0)
    if len(params) == 1:
        return fw_output, [fw_hidden]
    rev = params[1]
    steps = arith.unbind0(nn.linear(input, rev.w_ih, rev.b_ih))
    outputs, rev_hidden = _full_layer(step, steps[::-1], hidden[1], rev)
    rev_output = shape.stack(outputs[::-1], 0)
    return shape.cat([fw_output, rev_output], fw_output._a.ndim - 1), [fw_hidden, rev_hidden]


def _slice_hidden(hidden, start: int, end: int):
    """hidden_slice: rows start:end of a hidden state (both of LSTM's pair), by narrow (SliceBackward0)."""
    if hidden.__class__ is tuple:
        return tuple(shape.narrow(h, 0, start, end - start) for h in hidden)
    return shape.narrow(hidden, 0, start, end - start)


def _join_hidden(hiddens: list):
    """hidden_concat: the pieces of a hidden state joined by cat (one CatBackward0, even for one piece)."""
    if hiddens[0].__class__ is tuple:
        return tuple(shape.cat([h[k] for h in hiddens], 0) for k in range(2))
    return shape.cat(hiddens, 0)


def _packed_forward(step, data: Tensor, sizes: list, hidden, p: Params):
    """PackedLayer: step through the packed rows; when the batch shrinks, the finished sequences' rows of the
    hidden state are set aside; the final state is those pieces joined, the longest sequences first."""
    projected = nn.linear(data, p.w_ih, p.b_ih)
    outputs, finished = [], []
    offset, last = 0, sizes[0]
    for size in sizes:
        x = shape.narrow(projected, 0, offset, size)
        offset += size
        if last > size:
            finished.append(_slice_hidden(hidden, size, last))
            hidden = _slice_hidden(hidden, 0, size)
        last = size
        hidden = step(x, hidden, p, True)
        outputs.append(hidden[0] if hidden.__class__ is tuple else hidden)
    finished.append(hidden)
    return shape.cat(outputs, 0), _join_hidden(finished[::-1])


def _packed_backward(step, data: Tensor, sizes: list, start, p: Params):
    """ReversedPackedLayer: from the last packed step back to the first, the hidden state growing by the rows
    of the initial state of each sequence that starts running."""
    projected = nn.linear(data, p.w_ih, p.b_ih)
    outputs = []
    offset, last = data._a.shape[0], sizes[-1]
    hidden = _slice_hidden(start, 0, sizes[-1])
    for size in sizes[::-1]:
        if size > last:
            hidden = _join_hidden([hidden, _slice_hidden(start, last, size)])
        x = shape.narrow(projected, 0, offset - size, size)
        offset -= size
        last = size
        hidden = step(x, hidden, p, True)
        outputs.append(hidden[0] if hidden.__class__ is tuple else hidden)
    return shape.cat(outputs[::-1], 0), hidden


def _packed_layer(sizes: list):
    """PackedLayer / PackedBidirectionalLayer over packed data with these batch sizes."""
    def layer(step, data: Tensor, hidden, params: list):
        fw_output, fw_hidden = _packed_forward(step, data, sizes, hidden[0], params[0])
        if len(params) == 1:
            return fw_output, [fw_hidden]
        rev_output, rev_hidden = _packed_backward(step, data, sizes, hidden[1], params[1])
        return shape.cat([fw_output, rev_output], -1), [fw_hidden, rev_hidden]
    return layer


def _layer_stack(mode, input, hiddens: list, params: list, num_layers, dropout, train, bidirectional, layer=_layer):
    """apply_layer_stack: the layers in turn, dropout between them when training."""
    step = CELLS[mode]
    per = 2 if bidirectional else 1
    final = []
    for index in range(num_layers):
        input, last = layer(step, input, hiddens[index * per:(index + 1) * per],
                            params[index * per:(index + 1) * per])
        final.extend(last)
        if dropout != 0 and train and index < num_layers - 1:
            input = nn.torch_dropout(input, dropout, True)
    return input, final


def rnn(mode: str, input: Tensor, hx: Tensor, params: list, num_layers: int, dropout: float, train: bool,
        bidirectional: bool, batch_first: bool):
    """_VF.rnn_tanh / rnn_relu / gru: (output, h_n)."""
    if batch_first:
        input = shape.transpose(input, 0, 1)
    output, final = _layer_stack(mode, input, list(arith.unbind0(hx)), params, num_layers, dropout, train,
                                 bidirectional)
    h_n = shape.stack(final, 0)
    if batch_first:
        output = transpose_(output, 0, 1)
    return output, h_n


def lstm(input: Tensor, hx: Tensor, cx: Tensor, params: list, num_layers: int, dropout: float, train: bool,
         bidirectional: bool, batch_first: bool):
    """_VF.lstm: (output, h_n, c_n); oneDNN's layers for float32 without projections (on the CPU: a meta input
    takes the default implementation, as PyTorch's meta device has no oneDNN)."""
    x = input._a
    if x.dtype == np.float32 and x.size and x.__class__ is np.ndarray:
        if params[0].w_hr is not None:
            STATE.warn_once("lstm-projections", "UserWarning", "LSTM with projections is not supported with oneDNN. "
                            "Using default implementation. (Triggered internally at "
                            "/__w/pytorch/pytorch/aten/src/ATen/native/RNN.cpp:1512.)")
        else:
            _onednn_states(hx, cx)
            return _mkldnn_lstm(input, hx, cx, params, num_layers, dropout, train, bidirectional, batch_first)
    if batch_first:
        input = shape.transpose(input, 0, 1)
    hiddens = list(zip(arith.unbind0(hx), arith.unbind0(cx)))
    output, final = _layer_stack("LSTM", input, hiddens, params, num_layers, dropout, train, bidirectional)
    h_n = shape.stack([h for h, _ in final], 0)
    c_n = shape.stack([c for _, c in final], 0)
    if batch_first:
        output = shape.transpose(output, 0, 1)
    return output, h_n, c_n


def _sizes(batch_sizes: Tensor) -> list:
    return [int(v) for v in batch_sizes._a.reshape(-1)]


def rnn_packed(mode: str, data: Tensor, batch_sizes: Tensor, hx: Tensor, params: list, num_layers: int,
               dropout: float, train: bool, bidirectional: bool):
    """_VF.rnn_tanh / rnn_relu / gru on packed data: (output data, h_n). Never oneDNN's path."""
    output, final = _layer_stack(mode, data, list(arith.unbind0(hx)), params, num_layers, dropout, train,
                                 bidirectional, _packed_layer(_sizes(batch_sizes)))
    return output, shape.stack(final, 0)


def lstm_packed(data: Tensor, batch_sizes: Tensor, hx: Tensor, cx: Tensor, params: list, num_layers: int,
                dropout: float, train: bool, bidirectional: bool):
    """_VF.lstm on packed data: (output data, h_n, c_n), through the LSTM cell for every dtype (PyTorch's
    packed LSTM does not take oneDNN's layer)."""
    hiddens = list(zip(arith.unbind0(hx), arith.unbind0(cx)))
    output, final = _layer_stack("LSTM", data, hiddens, params, num_layers, dropout, train, bidirectional,
                                 _packed_layer(_sizes(batch_sizes)))
    return output, shape.stack([h for h, _ in final], 0), shape.stack([c for _, c in final], 0)


# ------------------------------------------------------------------------------ oneDNN's LSTM layer

MKLDNN_LAYER = RunOp("MkldnnRnnLayerBackward0")


# the dtypes oneDNN's LSTM takes; its float32 layers take float32 states only
_ONEDNN_DTYPES = ("float32", "bfloat16", "float16")
_NO_PRIMITIVE = ("could not create a primitive descriptor for the LSTM forward propagation primitive. Run workload "
                 "with environment variable ONEDNN_VERBOSE=all to get additional diagnostic information.")


def _onednn_states(hx: Tensor, cx: Tensor) -> None:
    """oneDNN's refusals of initial states whose dtype is not the float32 input's (PyTorch does not convert them):
    a dtype it has no type for at all, then one it has but the float32 layer does not take."""
    names = [dtypes.of_array(t._a).name for t in (hx, cx)]
    if any(name not in _ONEDNN_DTYPES for name in names):
        raise RuntimeError("get_mkldnn_dtype: unsupported data type")
    if any(name != "float32" for name in names):
        raise RuntimeError(_NO_PRIMITIVE)


def _mkldnn_lstm(input, hx, cx, params, num_layers, dropout, train, bidirectional, batch_first):
    """mkldnn_rnn: one layer op per layer and direction; the outputs of a bidirectional layer concatenated."""
    if batch_first:
        input = shape.transpose(input, 0, 1)
    input = shape.contiguous(input)
    per = 2 if bidirectional else 1
    hy, cy = [None] * (num_layers * per), [None] * (num_layers * per)
    for layer in range(num_layers):
        outputs = []
        for direction in range(per):
            index = layer * per + direction
            p = params[index]
            b_ih = p.b_ih if p.b_ih is not None else Tensor(np.zeros(p.w_ih._a.shape, np.float32))
            b_hh = p.b_hh if p.b_hh is not None else Tensor(np.zeros(p.w_hh._a.shape, np.float32))
            out, hy[index], cy[index] = lstm_layer(input, p.w_ih, p.w_hh, b_ih, b_hh, _select(hx, index),
                                                   _select(cx, index), direction > 0, p.b_ih is not None)
            outputs.append(out)
        input = outputs[0] if per == 1 else shape.cat(outputs, -1)
        if dropout != 0 and train and layer < num_layers - 1:
            input = nn.torch_dropout(input, dropout, True)
    output = input
    if batch_first:
        output = shape.transpose(output, 0, 1)
    return output, shape.stack(hy, 0), shape.stack(cy, 0)


def _select(t: Tensor, index: int) -> Tensor:
    """hx[index]: SelectBackward0 when h0 requires grad."""
    return indexing.getitem(t, index)


def lstm_layer(input, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse: bool, has_biases: bool):
    """mkldnn_rnn_layer: one direction of one LSTM layer over the whole sequence (seq, batch, features):
    (output, h_n, c_n), three outputs of one node. The input projection and the bias are added for all
    steps at once, as oneDNN does; a step is then a handful of numpy calls writing into preallocated
    arrays (sigmoid as 1 / (1 + exp(-x)), as gradcli's sigmoid)."""
    if STATE.fw_level is not None and any(_has_tangent(t) for t in (input, w_ih, w_hh, b_ih, b_hh, hx, cx)):
        raise NotImplementedError("Trying to use forward AD with mkldnn_rnn_layer that does not support it because "
                                  "it has not been implemented yet.\nPlease file an issue to PyTorch at "
                                  "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml "
                                  "so that we can prioritize its implementation or submit a PR adding the "
                                  "implementation to derivatives.yaml")
    x, wi, wh, h, c = input._a, w_ih._a, w_hh._a, hx._a, cx._a
    steps, batch, _ = x.shape
    hidden = wh.shape[1]
    xw = (x.reshape(steps * batch, -1) @ wi.T).reshape(steps, batch, 4 * hidden)
    if has_biases:
        xw += b_ih._a + b_hh._a
    gates = np.empty((steps, batch, 4 * hidden), np.float32)     # i, f, g, o after their activations
    cells = np.empty((steps, batch, hidden), np.float32)
    tanh_cells = np.empty((steps, batch, hidden), np.float32)
    out = np.empty((steps, batch, hidden), np.float32)
    cell_gate = np.empty((batch, hidden), np.float32)
    whT = wh.T
    one = np.float32(1)
    i_, f_, g_, o_ = (slice(k * hidden, (k + 1) * hidden) for k in range(4))
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        a = gates[t]
        np.matmul(h, whT, out=a)
        a += xw[t]
        elementary.tanh(a[:, g_], out=cell_gate)
        np.negative(a, out=a)
        elementary.exp(a, out=a)
        a += one
        np.divide(one, a, out=a)
        a[:, g_] = cell_gate
        c = np.multiply(a[:, f_], c, out=cells[t])
        c += a[:, i_] * cell_gate
        h = np.multiply(a[:, o_], elementary.tanh(c, out=tanh_cells[t]), out=out[t])
    results = [Tensor(out), Tensor(h.copy()), Tensor(c.copy())]
    inputs = (input, w_ih, w_hh, b_ih, b_hh, hx, cx)
    if not _needs_grad(inputs):
        return tuple(results)
    checks = tuple((t, t._version, t._version[0], t._a.shape, dtypes.of_array(t._a).message, None) for t in inputs)
    node = LstmLayerNode(tuple([t.grad_fn or edge(t) if t.requires_grad else None for t in inputs]),
                         (inputs, gates, cells, tanh_cells, out, reverse, has_biases), checks)
    for k, r in enumerate(results):
        r.grad_fn = OutputSlot(node, k, 3)
        r.requires_grad = True
    return tuple(results)


def _has_tangent(t: Tensor) -> bool:
    from gradcli.engine import forward
    return forward.tangent_of(t) is not None


def _needs_grad(inputs) -> bool:
    if not STATE.recording:
        return False
    for t in inputs:
        if t.requires_grad:
            return True
    return False


class LstmLayerNode(Node):
    """mkldnn_rnn_layer's node: its backward takes the gradients of all three outputs at once and runs
    the sequence back: oneDNN's kernel in a plain backward (numpy here), PyTorch's differentiable
    decomposition (recorded ops) under create_graph."""

    __slots__ = ()

    def __init__(self, inputs, saved, checks):
        super().__init__(MKLDNN_LAYER, inputs, saved, checks)

    def run(self, g, F, free):
        grads = g.grads if g.__class__ is OutputGrads else [g, None, None]
        saved = self.saved
        if free:
            self.saved = FREED
            self.checks = None
        if F.tensors:
            result = _layer_backward_tensors(grads, *saved)
        else:
            result = _layer_backward_arrays(grads, *saved)
        return [r if child is not None else None for r, child in zip(result, self.inputs)]


def _shifted(first: np.ndarray, seq: np.ndarray, reverse: bool) -> np.ndarray:
    """Each step's previous state: `first` then the sequence's states, in the direction of the run."""
    prev = np.empty_like(seq)
    if reverse:
        prev[-1] = first
        prev[:-1] = seq[1:]
    else:
        prev[0] = first
        prev[1:] = seq[:-1]
    return prev


def _layer_backward_arrays(grads, inputs, gates, cells, tanh_cells, out, reverse, has_biases):
    """Backpropagation through time on arrays: the gradients of input, w_ih, w_hh, b_ih, b_hh, hx, cx.
    Every factor that does not depend on the incoming gradients is computed for all steps first; the loop
    is then the recurrence alone, and the weight gradients are one matmul each over all steps."""
    input, w_ih, w_hh, b_ih, b_hh, hx, cx = (t._a for t in inputs)
    steps, batch, hidden = out.shape
    g_out, g_hy, g_cy = (None if x is None else (x._a if x.__class__ is Tensor else x) for x in grads)
    dh = np.zeros((batch, hidden), np.float32) if g_hy is None else g_hy.astype(np.float32, copy=True)
    dc = np.zeros((batch, hidden), np.float32) if g_cy is None else g_cy.astype(np.float32, copy=True)
    four = gates.reshape(steps, batch, 4, hidden)
    i, f, g, o = four[:, :, 0], four[:, :, 1], four[:, :, 2], four[:, :, 3]
    c_prev = _shifted(cx, cells, reverse)
    to_cell = o * (1 - tanh_cells * tanh_cells)        # d c / d h through h = o * tanh(c)
    factors = np.empty((steps, batch, 3, hidden), np.float32)
    factors[:, :, 0] = g * i * (1 - i)
    factors[:, :, 1] = c_prev * f * (1 - f)
    factors[:, :, 2] = i * (1 - g * g)
    to_out = tanh_cells * o * (1 - o)
    da = np.empty((steps, batch, 4, hidden), np.float32)
    flat = da.reshape(steps, batch, 4 * hidden)
    for t in (range(steps) if reverse else range(steps - 1, -1, -1)):
        if g_out is not None:
            dh = dh + g_out[t]
        dc += dh * to_cell[t]
        np.multiply(dc[:, None, :], factors[t], out=da[t, :, :3])
        np.multiply(dh, to_out[t], out=da[t, :, 3])
        dc *= f[t]
        dh = flat[t] @ w_hh
    flat = flat.reshape(steps * batch, 4 * hidden)
    h_prev = _shifted(hx, out, reverse).reshape(steps * batch, hidden)
    d_input = (flat @ w_ih).reshape(input.shape)
    d_b = flat.sum(0)
    return [d_input, flat.T @ input.reshape(steps * batch, -1), flat.T @ h_prev, d_b, d_b.copy(), dh, dc]


def _layer_backward_tensors(grads, inputs, gates, cells, tanh_cells, out, reverse, has_biases):
    """mkldnn_rnn_layer_differentiable_backward: the forward recomputed and run back with recorded ops,
    so the gradients can be differentiated again."""
    input, w_ih, w_hh, b_ih, b_hh, hx, cx = inputs
    if not has_biases:
        b_ih = b_hh = None
    steps = input._a.shape[0]
    g_out, g_hy, g_cy = grads
    if g_out is None:
        g_out = Tensor(np.zeros(out.shape, np.float32))
    if g_hy is None:
        g_hy = Tensor(np.zeros(hx._a.shape, np.float32))
    if g_cy is None:
        g_cy = Tensor(np.zeros(cx._a.shape, np.float32))
    acts, states = [None] * steps, [(hx, cx)]
    h, c = hx, cx
    for seq in range(1, steps + 1):
        t = steps - seq if reverse else seq - 1
        gate = arith.add(nn.linear(input[t], w_ih, b_ih), nn.linear(h, w_hh, b_hh))
        i, f, g, o = unsafe_chunk(gate, 4, 1)
        i, f, g, o = elementwise.sigmoid(i), elementwise.sigmoid(f), elementwise.tanh(g), elementwise.sigmoid(o)
        acts[t] = (i, f, g, o)
        c = arith.add(arith.mul(f, c), arith.mul(i, g))
        h = arith.mul(o, elementwise.tanh(c))
        states.append((h, c))
    d_input = [None] * steps
    d_wih = d_whh = d_b = None
    grad_hy, grad_cy = g_hy, g_cy
    for seq in range(steps - 1, -1, -1):
        t = steps - seq - 1 if reverse else seq
        i, f, g, o = acts[t]
        _, cy = states[seq + 1]
        h_prev, c_prev = states[seq]
        new_grad_hy = g_out[t] + grad_hy
        tc = elementwise.tanh(cy)
        d1 = grad_cy + new_grad_hy * o * (1 - tc * elementwise.tanh(cy))
        dgp, dip, dprev_c, dfp = d1 * i, d1 * g, d1 * f, d1 * c_prev
        dop = new_grad_hy * elementwise.tanh(cy)
        da = shape.cat([dip * i * (1 - i), dfp * f * (1 - f), dgp * (1 - g * g), dop * o * (1 - o)], 1)
        db = reduce.reduce_sum(da, 0)
        d_input[t] = shape.unsqueeze(linalg.matmul(da, w_ih), 0)
        dprev_h = linalg.matmul(da, w_hh)
        dwx = linalg.matmul(shape.transpose(da, 0, 1), input[t])
        dwh = linalg.matmul(shape.transpose(da, 0, 1), h_prev)
        if d_b is None:
            d_b, d_wih, d_whh = db, dwx, dwh
        else:
            d_b, d_wih, d_whh = d_b + db, d_wih + dwx, d_whh + dwh
        grad_hy, grad_cy = dprev_h, dprev_c
    return [shape.cat(d_input, 0), d_wih, d_whh, d_b, d_b, grad_hy, grad_cy]
