"""The address in `<AddBackward0 object at 0x7f3b555a9ee0>`: id() as PyTorch shows it, or a stable one; and the
virtual data addresses of Tensor.data_ptr() and of storages.

PyTorch prints real memory addresses, which change from run to run and defeat diffs and golden
files. With stable addresses on (`--stable-ids`), the n-th object shown gets 0x7f0000000000 + 16 n:
the same text for the same script every run, in the shape of a real address, so tools that parse
PyTorch's text still work. Objects given a stable address are kept alive while the numbering lasts,
so an id() is never reused for a different object within it.
"""

from __future__ import annotations

import weakref

import numpy as np

from gradcli.engine.state import STATE

_BASE = 0x7F0000000000


def address(obj) -> str:
    table = STATE.addresses         # id(obj) -> (obj, address text), while stable addresses are on
    if table is None:
        return hex(id(obj))
    entry = table.get(id(obj))
    if entry is None:
        entry = table[id(obj)] = (obj, hex(_BASE + 16 * (len(table) + 1)))
    return entry[1]


def use_stable(stable: bool) -> None:
    """Start a fresh numbering (stable) or go back to real addresses."""
    STATE.addresses = {} if stable else None


# ---------------------------------------------------------------- data addresses: Tensor.data_ptr, storages
# A script sees its tensors' memory through virtual addresses. The numpy array that owns a tensor's elements
# (a block) gets a base address the first time a script asks, from a counter, 64-byte aligned as PyTorch's
# allocator aligns; a tensor's address is its block's plus its byte offset in the block. Equal addresses mean
# shared memory and differences are offsets, as in PyTorch, and no real address is ever shown.
_DATA_BASE = 0x55D000000000
_blocks: dict = {}          # id(owner array) -> its virtual base address, while the array lives
_next_block = [_DATA_BASE]


def _owner(a):
    """The array that owns the memory `a` looks into (a itself when it is not a view), through numpy's
    stride tricks too (broadcast_to, as_strided: their base is a holder of the array they look into)."""
    while True:
        base = a.base
        if isinstance(base, np.ndarray):
            a = base
        elif base is not None and isinstance(getattr(base, "base", None), np.ndarray):
            a = base.base
        else:
            return a


def _block_base(owner) -> int:
    base = _blocks.get(id(owner))
    if base is None:
        base = _blocks[id(owner)] = _next_block[0]
        _next_block[0] = base + (owner.nbytes + 127) // 64 * 64       # the block, then at least 64 bytes free
        weakref.finalize(owner, _blocks.pop, id(owner), None)
    return base


def _is_meta(a) -> bool:
    return a.__class__ is not np.ndarray


def data_ptr(t) -> int:
    """Tensor.data_ptr(): 0 for a meta tensor or an empty block, as in PyTorch."""
    a = t._a
    if _is_meta(a):
        return 0
    owner = _owner(a)
    if owner.nbytes == 0:
        return 0
    return _block_base(owner) + (a.__array_interface__["data"][0] - owner.__array_interface__["data"][0])


def is_set_to(t, other) -> bool:
    """Tensor.is_set_to: the same memory, offset, sizes and strides."""
    return (data_ptr(t) == data_ptr(other) and t._a.shape == other._a.shape and t.stride() == other.stride()
            and t._a.dtype == other._a.dtype and _owner(t._a) is _owner(other._a))


_storages = weakref.WeakValueDictionary()      # id(owner) -> the untyped storage PyTorch hands out again

TYPED_WARNING = ("TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only "
                 "storage class. This should only matter to you if you are using storages directly.  To access "
                 "UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()")


def storage_of(t, typed: bool):
    """Tensor.untyped_storage() (`typed` False) or Tensor.storage(): one object per block, as PyTorch keeps."""
    if typed:
        STATE.warn_once("typed storage", "UserWarning", TYPED_WARNING)
    owner = t._a if _is_meta(t._a) else _owner(t._a)
    if typed:                               # a new TypedStorage each time, over the one untyped storage
        return TypedStorage(owner, t)
    found = _storages.get(id(owner))
    if found is None or found._owner is not owner:
        found = _storages[id(owner)] = UntypedStorage(owner, t)
    return found


class UntypedStorage:
    """torch.UntypedStorage as a tensor's untyped_storage() gives it: its bytes, read-only here."""

    __slots__ = ("_owner", "_device", "__weakref__")

    def __init__(self, owner, t):
        self._owner = owner
        self._device = t.device

    def _values(self) -> np.ndarray:
        return self._owner.ravel(order="K").view(np.uint8)

    def nbytes(self) -> int:
        return self._owner.nbytes

    def size(self) -> int:
        return len(self)

    def __len__(self) -> int:
        return self.nbytes() // self.element_size()

    def element_size(self) -> int:
        return 1

    @property
    def device(self):
        return self._device

    def data_ptr(self) -> int:
        owner = self._owner
        return 0 if _is_meta(owner) or owner.nbytes == 0 else _block_base(owner)

    def __getitem__(self, i):
        if i.__class__ is not int:
            raise NotImplementedError(f"gradcli does not implement indexing a storage with {type(i).__name__}")
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        if _is_meta(self._owner):
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        return self._values()[i].item()

    def __setitem__(self, i, value):
        raise NotImplementedError("gradcli does not implement writing into a tensor's storage")

    def tolist(self) -> list:
        return [self[i] for i in range(len(self))]

    def __iter__(self):
        return iter(self.tolist())

    def is_shared(self) -> bool:
        return False

    def is_pinned(self, device="cuda") -> bool:
        return False

    def cpu(self):
        return self

    def _info(self) -> str:
        return f"[torch.storage.UntypedStorage(device={self._device}) of size {len(self)}]"

    def type(self) -> str:
        return "torch.storage.UntypedStorage"

    def __repr__(self) -> str:
        if _is_meta(self._owner):
            return "...\n" + self._info()
        return " " + "\n ".join(str(self[i]) for i in range(len(self))) + "\n" + self._info()

    __str__ = __repr__


class TypedStorage(UntypedStorage):
    """torch.TypedStorage as a tensor's storage() gives it (deprecated in PyTorch, which warns once): its
    elements in memory order, read-only here."""

    __slots__ = ("_dtype",)

    def __init__(self, owner, t):
        super().__init__(owner, t)
        self._dtype = t.dtype

    def _values(self) -> np.ndarray:
        return self._owner.ravel(order="K").view(self._dtype.np)

    def element_size(self) -> int:
        return self._dtype.itemsize

    @property
    def dtype(self):
        return self._dtype

    def type(self) -> str:
        return "torch." + _LEGACY_NAMES.get(self._dtype.name, "TypedStorage")

    def _info(self) -> str:
        return f"[torch.storage.TypedStorage(dtype={self._dtype}, device={self._device}) of size {len(self)}]"


# what TypedStorage.type() names, per dtype (PyTorch's legacy storage classes)
_LEGACY_NAMES = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
                 "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage", "int16": "ShortStorage",
                 "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
                 "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage"}

for _cls in (UntypedStorage, TypedStorage):
    _cls.__module__ = "torch.storage"
del _cls
