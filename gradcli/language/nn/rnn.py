"""The recurrent layers: RNN, LSTM, GRU and their cells RNNCell, LSTMCell, GRUCell, as torch.nn.modules.rnn
makes them: parameters named and ordered as PyTorch's (weight_ih_l0, ..., _reverse), drawn uniform(-1/√hidden,
1/√hidden) in that order, PyTorch's argument checks and messages, the repr of its extra_repr, and a forward
that hands the work to the engine's recurrent ops (gradcli.engine.ops.rnn), for padded tensors and for
PackedSequence inputs (torch.nn.utils.rnn) alike."""

from __future__ import annotations

import math
import weakref

from gradcli.engine import factories, init, parameter
from gradcli.engine.ops import rnn as rnn_ops
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor
from gradcli.language.nn.module import Module

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _type_name(value) -> str:
    return "Tensor" if value.__class__ is Tensor else type(value).__name__


def _reset(module) -> None:
    """Every parameter uniform(-1/√hidden, 1/√hidden), in registration order (PyTorch's reset_parameters)."""
    stdv = 1.0 / math.sqrt(module.hidden_size) if module.hidden_size > 0 else 0
    for weight in module.parameters():
        init.uniform_(weight, -stdv, stdv)


def _zeros(*shape, like: Tensor) -> Tensor:
    return factories.zeros(*shape, dtype=like.dtype, device=like.device)


class RNNBase(Module):
    """nn.RNNBase: what RNN, LSTM and GRU share."""

    __module__ = "torch.nn.modules.rnn"

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        if not isinstance(dropout, (int, float)) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            STATE.warn("UserWarning", "dropout option adds dropout after all but last recurrent layer, so non-zero "
                       "dropout expects num_layers greater than 1, but got "
                       f"dropout={dropout} and num_layers={num_layers}")
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {_type_name(bias)}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: {_type_name(batch_first)}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {_type_name(input_size)}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {_type_name(hidden_size)}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        names = []
        d = self.__dict__       # (PyTorch's weight lists, in its order: vars(module) shows them; _dict_refresh)
        d["_flat_weight_refs"], d["_flat_weights_names"], d["_all_weights"] = [], names, []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                suffix = "_reverse" if direction == 1 else ""
                made = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    made += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    made.append(("weight_hr", (proj_size, hidden_size)))
                group = []
                for name, shape in made:
                    full = f"{name}_l{layer}{suffix}"
                    setattr(self, full, parameter.make(factories.empty(shape, dtype=dtype, device=device)))     # one tuple
                    names.append(full)
                    group.append(full)
                d["_all_weights"].append(group)
        d["_flat_weights"] = weights = [getattr(self, name) for name in names]
        d["_flat_weight_refs"][:] = [weakref.ref(w) for w in weights]     # (to the first ones, as PyTorch's)
        self.reset_parameters()

    def _dict_refresh(self):
        """Before a script reads vars(module): the weights the names stand for now (PyTorch keeps that list up to
        date as parameters are set; gradcli reads the parameters by name, so only this view needs it)."""
        dict.__setitem__(self.__dict__, "_flat_weights", [getattr(self, name, None) for name in self._flat_weights_names])

    def reset_parameters(self):
        _reset(self)

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        per = len(self._flat_weights_names) // (self.num_layers * (2 if self.bidirectional else 1))
        weights = self._flat_weights
        return [weights[i:i + per] for i in range(0, len(weights), per)]

    def flatten_parameters(self):
        return None

    def _params(self) -> list:
        """The weights as the engine's per-layer, per-direction Params."""
        weights = self._flat_weights
        per = len(weights) // (self.num_layers * (2 if self.bidirectional else 1))
        out = []
        for i in range(0, len(weights), per):
            w = weights[i:i + per]
            if self.bias:
                out.append(rnn_ops.Params(w[0], w[1], w[2], w[3], w[4] if self.proj_size > 0 else None))
            else:
                out.append(rnn_ops.Params(w[0], w[1], None, None, w[2] if self.proj_size > 0 else None))
        return out

    # ---------------------------------------------------------------------------------- checks
    def check_input(self, input, batch_sizes=None):
        first = self._flat_weights[0]
        if input.dtype != first.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({first.dtype}). Convert "
                             f"input: input.to({first.dtype}), or convert model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes=None):
        mini_batch = _mini_batch(self, input, batch_sizes)
        directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation=None):
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---------------------------------------------------------------------------------- forward
    def _packed(self, packed, hx, lstm: bool):
        """The forward of a PackedSequence: h0 in the packed (sorted) order, the engine's packed layers, the
        output a PackedSequence and the final state back in the caller's order."""
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        max_batch = int(batch_sizes[0])
        directions = 2 if self.bidirectional else 1
        if hx is None:
            size = self.proj_size if lstm and self.proj_size > 0 else self.hidden_size
            hx = _zeros(self.num_layers * directions, max_batch, size, like=data)
            if lstm:
                hx = (hx, _zeros(self.num_layers * directions, max_batch, self.hidden_size, like=data))
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        if not lstm:                        # (PyTorch's LSTM leaves a packed input's checks to its kernels)
            self.check_forward_args(data, hx, batch_sizes)
        if lstm:
            output, h_n, c_n = rnn_ops.lstm_packed(data, batch_sizes, hx[0], hx[1], self._params(),
                                                   self.num_layers, self.dropout, self.training, self.bidirectional)
            hidden = (h_n, c_n)
        else:
            output, hidden = rnn_ops.rnn_packed(self.mode, data, batch_sizes, hx, self._params(), self.num_layers,
                                                self.dropout, self.training, self.bidirectional)
        result = type(packed)(output, batch_sizes, sorted_indices, unsorted_indices)
        return result, self.permute_hidden(hidden, unsorted_indices)

    def _one_hidden(self, input, hx, name: str):
        """RNN's and GRU's forward: the unbatched case, the zero h0, the checks, then the engine."""
        if _is_packed(input):
            return self._packed(input, hx, False)
        if input.dim() not in (2, 3):
            tail = " tensor instead" if name == "RNN" else " instead"
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail}")
        batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not batched:
            input = input.unsqueeze(batch_dim)
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
        if hx is None:
            directions = 2 if self.bidirectional else 1
            hx = _zeros(self.num_layers * directions, input.size(0) if self.batch_first else input.size(1),
                        self.hidden_size, like=input)
        self.check_forward_args(input, hx, None)
        output, hidden = rnn_ops.rnn(self.mode, input, hx, self._params(), self.num_layers, self.dropout,
                                     self.training, self.bidirectional, self.batch_first)
        if not batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, hidden


def _is_packed(value) -> bool:
    return type(value).__name__ == "PackedSequence"


def _mini_batch(module, input, batch_sizes) -> int:
    if batch_sizes is not None:
        return int(batch_sizes[0])
    return input.size(0) if module.batch_first else input.size(1)


class RNN(RNNBase):
    """nn.RNN: h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu), layer after layer."""

    __module__ = "torch.nn.modules.rnn"

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.__dict__["nonlinearity"] = args[3]
            args = args[:3] + args[4:]
        else:
            self.__dict__["nonlinearity"] = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._one_hidden(input, hx, "RNN")


class GRU(RNNBase):
    """nn.GRU: reset, update and new gates per step."""

    __module__ = "torch.nn.modules.rnn"

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._one_hidden(input, hx, "GRU")


class LSTM(RNNBase):
    """nn.LSTM: input, forget, cell and output gates per step; (output, (h_n, c_n))."""

    __module__ = "torch.nn.modules.rnn"

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes=None):
        mini_batch = _mini_batch(self, input, batch_sizes)
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation=None):
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input, hx=None):
        if _is_packed(input):
            return self._packed(input, hx, True)
        directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
        batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not batched:
            input = input.unsqueeze(batch_dim)
        batch = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            hx = (_zeros(self.num_layers * directions, batch, real_hidden, like=input),
                  _zeros(self.num_layers * directions, batch, self.hidden_size, like=input))
            self.check_forward_args(input, hx, None)
        else:
            if batched:
                if hx[0].dim() != 3 or hx[1].dim() != 3:
                    raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but got "
                                       f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            else:
                if hx[0].dim() != 2 or hx[1].dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D but got "
                                       f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            self.check_forward_args(input, hx, None)
        output, h_n, c_n = rnn_ops.lstm(input, hx[0], hx[1], self._params(), self.num_layers, self.dropout,
                                        self.training, self.bidirectional, self.batch_first)
        if not batched:
            output = output.squeeze(batch_dim)
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)


class RNNCellBase(Module):
    """nn.RNNCellBase: the weights of one step."""

    __module__ = "torch.nn.modules.rnn"

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = parameter.make(factories.empty((num_chunks * hidden_size, input_size), dtype=dtype, device=device))
        self.weight_hh = parameter.make(factories.empty((num_chunks * hidden_size, hidden_size), dtype=dtype, device=device))
        if bias:
            self.bias_ih = parameter.make(factories.empty(num_chunks * hidden_size, dtype=dtype, device=device))
            self.bias_hh = parameter.make(factories.empty(num_chunks * hidden_size, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = self.__dict__.get("nonlinearity")
        if nonlinearity is not None and nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def reset_parameters(self):
        _reset(self)

    def _step(self, mode, input, hx, name, hidden_word="hidden"):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected {hidden_word} to be 1D or 2D, got {hx.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = _zeros(input.size(0), self.hidden_size, like=input)
        elif not batched:
            hx = hx.unsqueeze(0)
        ret = rnn_ops.cell(mode, input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if batched else ret.squeeze(0)


class RNNCell(RNNCellBase):
    """nn.RNNCell: one step of nn.RNN."""

    __module__ = "torch.nn.modules.rnn"

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            if input.dim() in (1, 2) and (hx is None or hx.dim() in (1, 2)):
                raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._step("RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU", input, hx, "RNNCell")


class GRUCell(RNNCellBase):
    """nn.GRUCell: one step of nn.GRU."""

    __module__ = "torch.nn.modules.rnn"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        return self._step("GRU", input, hx, "GRUCell")


class LSTMCell(RNNCellBase):
    """nn.LSTMCell: one step of nn.LSTM; (h', c')."""

    __module__ = "torch.nn.modules.rnn"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = _zeros(input.size(0), self.hidden_size, like=input)
            hx = (zeros, zeros)
        elif not batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = rnn_ops.cell("LSTM", input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        if not batched:
            return h.squeeze(0), c.squeeze(0)
        return h, c
