"""torch.nn.utils.rnn: pad_sequence, pack_padded_sequence, pad_packed_sequence, pack_sequence and the
PackedSequence value, composed as PyTorch 2.13 composes them (its padding kernels are copies into slices of a
filled tensor: CopySlices nodes), plus the one row they record themselves, PackPaddedSequenceBackward0."""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget, dtypes, factories
from gradcli.engine.forward import no_tangent
from gradcli.engine.ops import shape, sorting
from gradcli.engine.recording import Op, apply
from gradcli.engine.tensor import Tensor


def _unpack_grad(F, g, input_sym_sizes, result1, batch_first, rows):
    """_pack_padded_sequence_backward: zeros of the input's shape, each packed row's gradient put back at its
    (time, batch) place (`rows`, worked out by the forward from the batch sizes `result1`)."""
    return F.scatter(g, input_sym_sizes, rows, "index")


# fmt: off
PACK_PADDED = Op("PackPaddedSequenceBackward0", None, ("input_sym_sizes", "result1", "batch_first", "rows"),
                 (_unpack_grad,), saves_tensors=True, versioned=("result1",), jvp=no_tangent("_pack_padded_sequence"))
# fmt: on


def _long_vector(t: Tensor, name: str) -> np.ndarray:
    """PyTorch's checkLongTensor."""
    a = t._a
    if a.ndim != 1 or a.dtype != np.int64:
        raise RuntimeError(f"'{name}' argument should be a 1D CPU int64 tensor, but got {a.ndim}D cpu "
                           f"{_scalar_type(a.dtype)} tensor")
    return a


def _scalar_type(dtype) -> str:
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}.get(np.dtype(dtype).name, str(dtype))


def pack_padded(input: Tensor, lengths: Tensor, batch_first: bool):
    """_VF._pack_padded_sequence: the rows of each time step's sequences still running, step after step, and
    how many there are at each step (batch_sizes)."""
    x = input._a
    if x.size == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if x.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(x.ndim, 1)}, "
                         f"{max(x.ndim, 1) - 1}], but got 1)")
    if batch_first:
        x = np.swapaxes(x, 0, 1)
    lens = _long_vector(lengths, "lengths")
    batch = x.shape[1]
    if lens.shape[0] != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lens.shape[0]} "
                           f"(batch_size={batch})")
    if lens[batch - 1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if np.any(lens[1:] > lens[:-1]):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
                           "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep "
                           "this requirement if you do not need ONNX exportability.")
    steps = int(lens[0])
    budget.check_tensor((steps,), 8)        # (a length past the padded input's is the script's to give)
    batch_sizes = np.empty(steps, dtype=np.int64)
    times, members = [], []
    prev = 0
    for i in range(batch):
        length = int(lens[batch - 1 - i])
        if length > prev:
            running = batch - i
            batch_sizes[prev:length] = running
            # the slice stops at the padded length, as PyTorch's does, when a length exceeds it
            for t in range(prev, min(length, x.shape[0])):
                times.extend([t] * running)
                members.extend(range(running))
            prev = length
    times_a, members_a = np.array(times, dtype=np.intp), np.array(members, dtype=np.intp)
    data = np.ascontiguousarray(x[times_a, members_a])
    rows = (members_a, times_a) if batch_first else (times_a, members_a)
    sizes = Tensor(batch_sizes)
    out = apply(PACK_PADDED, data, (input,), (tuple(input._a.shape), sizes, batch_first, rows))
    return out, sizes


def pad_packed(data: Tensor, batch_sizes: Tensor, batch_first: bool, padding_value, total_length: int):
    """_VF._pad_packed_sequence: a (time, batch, ...) tensor filled with padding_value, each run of steps with
    the same batch size copied into its corner (one CopySlices per run), transposed for batch_first; and
    the lengths."""
    sizes = _long_vector(batch_sizes.contiguous(), "batch_sizes")
    most = int(sizes[0])
    real_steps = sizes.shape[0]
    steps = real_steps
    if total_length > 0:
        if total_length < steps:
            raise RuntimeError(f"Expected total_length to be at least the length of the longest sequence in input, "
                               f"but got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    trailing = tuple(data._a.shape[1:])
    output = factories.full((steps, most) + trailing, padding_value, dtype=data.dtype)
    budget.check_tensor((most,), 8)
    lengths = np.empty(most, dtype=np.int64)
    write = most - 1
    offset, prev_size, prev_i = 0, most, 0
    for i in range(real_steps + 1):
        size = int(sizes[i]) if i != real_steps else 0
        if size != prev_size:
            count = prev_size * (i - prev_i)
            piece = data[offset:offset + count].view((i - prev_i, prev_size) + trailing)
            output[prev_i:i, :prev_size].copy_(piece)
            offset += count
            prev_i = i
        for _ in range(prev_size - size):
            lengths[write] = i
            write -= 1
        prev_size = size
    if batch_first:
        output = shape.transpose(output, 0, 1)
    return output, Tensor(lengths)


# ------------------------------------------------------------------------------------ the Python layer

class PackedSequence(tuple):
    """torch.nn.utils.rnn.PackedSequence: the named tuple (data, batch_sizes, sorted_indices, unsorted_indices)."""

    __module__ = "torch.nn.utils.rnn"
    _fields = ("data", "batch_sizes", "sorted_indices", "unsorted_indices")

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data[0], data[1]
        return tuple.__new__(cls, (data, batch_sizes, sorted_indices, unsorted_indices))

    data = property(lambda self: self[0])
    batch_sizes = property(lambda self: self[1])
    sorted_indices = property(lambda self: self[2])
    unsorted_indices = property(lambda self: self[3])

    def __repr__(self) -> str:
        return (f"PackedSequence(data={self[0]!r}, batch_sizes={self[1]!r}, sorted_indices={self[2]!r}, "
                f"unsorted_indices={self[3]!r})")

    __str__ = __repr__

    def to(self, *args, **kwargs):
        data = self[0].to(*args, **kwargs)
        if data is self[0]:
            return self
        return PackedSequence(data, self[1], self[2], self[3])

    def cpu(self, *args, **kwargs):
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=dtypes.float64)

    def float(self):
        return self.to(dtype=dtypes.float32)

    def half(self):
        return self.to(dtype=dtypes.float16)

    def long(self):
        return self.to(dtype=dtypes.int64)

    def int(self):
        return self.to(dtype=dtypes.int32)

    def short(self):
        return self.to(dtype=dtypes.int16)

    def char(self):
        return self.to(dtype=dtypes.int8)

    def byte(self):
        return self.to(dtype=dtypes.uint8)

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation):
    """The inverse of a permutation (None for None): empty_like(p).scatter_(0, p, arange(n))."""
    if permutation is None:
        return None
    output = factories.empty_like(permutation)
    output.scatter_(0, permutation, factories.arange(0, permutation.numel()))
    return output


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """A list of (length, *) tensors as one (longest, batch, *) tensor (batch first: (batch, longest, *)),
    each copied into its column of a tensor filled with padding_value, at its start or (padding_side='left')
    its end."""
    if isinstance(sequences, Tensor):
        sequences = tuple(sequences)
    else:
        try:
            sequences = tuple(sequences)
        except TypeError:
            raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of type: "
                               f"{_class_text(sequences)}") from None
    for i, seq in enumerate(sequences):
        if not isinstance(seq, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(seq).__name__}")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    first = sequences[0]._a.shape
    if not first:
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    longest = max(seq.size(0) for seq in sequences)
    dims = (len(sequences), longest) if batch_first else (longest, len(sequences))
    out = factories.full(dims + tuple(first[1:]), float(padding_value), dtype=sequences[0].dtype)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    for i, seq in enumerate(sequences):
        length = seq.size(0)
        start = longest - length if padding_side == "left" else 0
        if batch_first:
            out.select(0, i).narrow(0, start, length).copy_(seq)
        else:
            out.narrow(0, start, length).select(1, i).copy_(seq)
    return out


def _class_text(value) -> str:
    cls = type(value)
    module = cls.__module__
    return f"<class '{cls.__qualname__ if module == 'builtins' else module + '.' + cls.__qualname__}'>"


def _lengths_tensor(lengths) -> Tensor:
    if isinstance(lengths, Tensor):
        return lengths.to(dtype=dtypes.int64)
    return factories.tensor(lengths, dtype=dtypes.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """A padded batch as a PackedSequence; with enforce_sorted=False the batch is sorted by length first
    (longest first; sorted_indices records the order)."""
    lengths = _lengths_tensor(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = sorting.sort(lengths, descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    data, batch_sizes = pack_padded(input, lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """pack_padded_sequence undone: the padded batch (in the caller's order) and the lengths."""
    max_steps = sequence.batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_steps}")
        max_steps = total_length
    padded, lengths = pad_packed(sequence.data, sequence.batch_sizes, batch_first, padding_value, max_steps)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        return padded.index_select(0 if batch_first else 1, unsorted), lengths[unsorted]
    return padded, lengths


def pack_sequence(sequences, enforce_sorted=True):
    """pad_sequence, then pack_padded_sequence with each sequence's length."""
    lengths = factories.tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The padded batch back as a list of its sequences, each cut to its length (a mask over the steps)."""
    out = []
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    steps = factories.arange(padded_sequences.shape[1])
    for seq, length in zip(padded_sequences, lengths, strict=True):
        out.append(seq[steps < length])
    return out


def unpack_sequence(packed_sequences):
    """A PackedSequence back as the list of its sequences."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

