"""torch.save and torch.load, on files that live in memory for the session (a run, a REPL, a kernel).

Scripts cannot read or write the disk. A checkpoint a script saves and loads again (the model's
state_dict after training, an optimiser's state, the best model so far) is kept by name in this
module's FILES as what pickling it would keep: `copying.pickled`, a deep copy with pickle's rules (tensors
without their history and grads, storage sharing kept within one file, functions by name). Each load
unpickles a copy of its own. A name never saved is FileNotFoundError, as a missing file is; a save that
failed part-way leaves the file PyTorch leaves, which loads as its corrupt-archive error.

torch.load's default, weights_only=True, accepts what PyTorch's weights-only unpickler accepts: tensors
and parameters, numbers, strings, None, lists, tuples, sets, dicts and OrderedDicts, torch.Size, dtypes
and devices. Anything else (a module, a script's object, a function) is its UnpicklingError naming the
first such global in pickle's order, as PyTorch's names it; weights_only=False loads it.

A checkpoint saved into an io.BytesIO is written as a short record at the buffer's position (RECORD_MAGIC and a
serial number), the position advancing past it; what it keeps sits in KEPT under that number for the session, so
the record's bytes load wherever they are copied (another BytesIO made of getvalue()). The record is not
PyTorch's zip archive: its length is not PyTorch's, and torch.load leaves the position at the record's end (PyTorch
leaves it where its zip reader last read, inside the archive).
"""

from __future__ import annotations

import collections
import posixpath
import sys

import numpy as np

from gradcli.engine import dtypes
from gradcli.engine.tensor import Size, Tensor, _Device
from gradcli.language.classes import HELD_METACLASSES, ScriptType

FILES: dict = {}
KEPT: dict = {}             # serial number of a record written into a BytesIO -> what it keeps
_CORRUPT = object()         # what a save that failed part-way leaves
RECORD_MAGIC = b"GRADCLI checkpoint\x00"
_RECORD_LEN = len(RECORD_MAGIC) + 8



_WEIGHTS_ONLY = (
    "Weights only load failed. This file can still be loaded, to do so you have two options, \x1b[1mdo those "
    "steps only if you trust the source of the checkpoint\x1b[0m. \n\t(1) In PyTorch 2.6, we changed the default "
    "value of the `weights_only` argument in `torch.load` from `False` to `True`. Re-running `torch.load` with "
    "`weights_only` set to `False` will likely succeed, but it can result in arbitrary code execution. Do it only "
    "if you got the file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please "
    "check the recommended steps in the following error message.\n\tWeightsUnpickler error: Unsupported global: "
    "GLOBAL {0} was not an allowed global by default. Please use `torch.serialization.add_safe_globals([{0}])` "
    "or the `torch.serialization.safe_globals([{0}])` context manager to allowlist this global if you trust "
    "this class/function.\n\nCheck the documentation of torch.load to learn more about types accepted by "
    "default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
_CORRUPT_FILE = ("PytorchStreamReader failed locating file data.pkl: file not found. This is an internal miniz "
                 "error. If you are seeing this error, there is a high likelihood that your checkpoint file is "
                 "corrupted. This can happen if the checkpoint was not saved properly, was transferred "
                 "incorrectly, or the file was modified after saving.")
_NO_CUDA = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
            "running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map "
            "your storages to the CPU.")

# what the weights-only unpickler takes without asking (its builtins and torch's own)
_PLAIN = frozenset((int, float, bool, str, complex, type(None), list, tuple, set, frozenset, dict,
                    collections.OrderedDict, Size, dtypes.DType, _Device, Tensor))


def forget() -> None:
    """A new session starts with no files."""
    FILES.clear()
    KEPT.clear()


def _copying():
    from gradcli.language import copying, stdlib
    stdlib.COPY.members             # the copy module's tables, made as `import copy` makes them
    return copying


def _name(f, verb: str) -> str:
    if f.__class__ is not str:
        from gradcli.language.stdlib import type_name
        if _has(f, "write" if verb == "save" else "seek"):      # a file-like object of the script's (or sys.stdout)
            raise NotImplementedError(f"gradcli does not implement torch.{verb} with a file-like object other than "
                                      "io.BytesIO")
        if verb == "save":
            raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
        raise AttributeError(f"'{type_name(f)}' object has no attribute 'seek'. You can only torch.load from a file "
                             "that is seekable. Please pre-load the data into a buffer like io.BytesIO and try to "
                             "load from it instead.")
    return posixpath.normpath(f) if f else f


def _has(f, name: str) -> bool:
    """Whether the script could read f.name."""
    from gradcli.language import access
    try:
        access.get_method(f, name)
    except (AttributeError, NotImplementedError):
        return False
    return True


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False) -> None:
    """torch.save(obj, f): f keeps what pickling obj keeps, for the rest of the session."""
    stream = _stream(f)
    if stream is not None:
        _no_pickle_module(pickle_module)
        _save_record(obj, f, stream)
        return
    name = _name(f, "save")
    _no_pickle_module(pickle_module)
    if not name:
        raise RuntimeError("[enforce fail at inline_container.cc:720] . invalid file name: ")
    copying = _copying()
    try:
        FILES[name] = copying.pickled(obj)
    except BaseException:
        FILES[name] = _CORRUPT
        raise


def _stream(f):
    """'bytes' or 'text' when f is one of io's in-memory streams, else None."""
    pyio = sys.modules.get("gradcli.language.pyio")       # (no script holds a stream before `import io`)
    if pyio is None:
        return None
    return "bytes" if isinstance(f, pyio.BytesIO) else "text" if isinstance(f, pyio.StringIO) else None


def _save_record(obj, f, stream: str) -> None:
    """torch.save into a BytesIO: its record written at the position (a StringIO refuses the bytes, as CPython's
    refuses PyTorch's first write)."""
    if stream == "text":
        f.write(memoryview(RECORD_MAGIC))           # (raises CPython's TypeError, or its closed-file error)
    f.tell()                                          # (a closed buffer: CPython's error)
    serial = len(KEPT) + 1
    try:
        KEPT[serial] = _copying().pickled(obj)
    except BaseException:
        KEPT[serial] = _CORRUPT                     # (PyTorch writes its archive's end: a corrupt archive)
        raise
    finally:
        f.write(RECORD_MAGIC + serial.to_bytes(8, "big"))


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """torch.load(f, map_location=None, *, weights_only=True): a copy of its own of what f keeps."""
    stream = _stream(f)
    if stream is not None:
        _no_pickle_module(pickle_module)
        kept = _read_record(f, stream, weights_only, mmap)
    else:
        name = _name(f, "load")
        _no_pickle_module(pickle_module)
        if name not in FILES:
            raise FileNotFoundError(2, "No such file or directory", f)
        kept = FILES[name]
    if kept is _CORRUPT:
        raise RuntimeError(_CORRUPT_FILE)
    if weights_only is None or weights_only:
        refused = _first_global(kept, set())
        if refused is not None:
            raise _copying().UnpicklingError(_WEIGHTS_ONLY.format(refused))
    value = _copying().pickled(kept, loading=True)
    _map(value, map_location)
    return value


def _read_record(f, stream: str, weights_only, mmap):
    """What the record at a BytesIO's position keeps, the position moved past it; PyTorch's errors for a
    StringIO, for a buffer with nothing left (its unpickler's EOFError) and for mmap."""
    start = f.tell()
    if stream == "text":
        f.read(1)
        raise AssertionError("Expected bytes, got str")
    record = f.read(_RECORD_LEN)
    is_record = len(record) == _RECORD_LEN and record.startswith(RECORD_MAGIC)
    if mmap:
        f.seek(start)
        if is_record:
            raise ValueError("f must be a file path in order to use the mmap argument")
        raise RuntimeError("mmap can only be used with files saved with `torch.save(_use_new_zipfile_serialization="
                           "True), please torch.save your checkpoint with this option in order to use mmap.")
    if not record:
        raise EOFError() if weights_only is None or weights_only else EOFError("Ran out of input")
    serial = int.from_bytes(record[len(RECORD_MAGIC):], "big")
    if not is_record or serial not in KEPT:
        f.seek(start + 1)
        # (PyTorch would unpickle these bytes as a checkpoint of its old format: what fails there depends on them)
        raise _copying().UnpicklingError(f"invalid load key, {chr(record[0])!r}.")
    return KEPT[serial]


def _no_pickle_module(module) -> None:
    """Pickling is gradcli's own: no pickle module a script could hand in is Python's."""
    if module is not None:
        raise NotImplementedError("gradcli does not implement torch.save and torch.load with a pickle_module")


def _map(value, location) -> None:
    """map_location: the CPU (a string, device or dict naming it, or None) leaves the tensors where they are,
    the meta device keeps their shapes and dtypes only; CUDA is PyTorch's error on a machine without it; a
    function is called for each storage, as PyTorch calls it, and must hand it back."""
    if location is None:
        return
    if location.__class__ is dict:          # by the storages' location, which is the CPU
        targets = [location["cpu"]] if "cpu" in location else []
    elif callable(location):
        storages = {}
        for t in _tensors(value, set()):
            root = t._a
            while isinstance(root.base, np.ndarray):
                root = root.base
            storages.setdefault(id(root), root)
        for root in storages.values():
            storage = UntypedStorage(root)
            if location(storage, "cpu") is not storage:
                raise NotImplementedError("gradcli does not implement a torch.load map_location function that returns "
                                          "anything but the storage it is given")
        return
    else:
        targets = [location]
    for target in targets:
        kind = str(target).split(":")[0] if target.__class__ in (str, _Device) else None
        if kind == "cuda":
            raise RuntimeError(_NO_CUDA)
        if kind == "meta":
            from gradcli.engine import meta
            for t in _tensors(value, set()):        # the loaded copies: shapes and dtypes, no data
                t._a = meta.meta_like(t._a)
            continue
        if kind != "cpu" or (target.__class__ is str and target != "cpu"):
            raise NotImplementedError(f"gradcli does not implement torch.load(map_location={target!r})")


class UntypedStorage:
    """What a map_location function is handed for each storage: PyTorch's bytes, as it prints them."""

    __slots__ = ("_bytes",)

    def __init__(self, root: np.ndarray):
        self._bytes = root.tobytes()

    def __repr__(self) -> str:
        lines = [f" {b}" for b in self._bytes]
        return "\n".join(lines + [f"[torch.storage.UntypedStorage(device=cpu) of size {len(self._bytes)}]"])


def _register() -> None:
    """type(storage) and messages name PyTorch's class."""
    from gradcli.language import stdlib
    stdlib._CLASS_PATHS[UntypedStorage] = "torch.storage.UntypedStorage"
    stdlib._TYPE_NAMES[UntypedStorage] = "torch.storage.UntypedStorage"


_register()


def _tensors(value, seen: set):
    """The tensors in a loaded value, each once, in pickle's order."""
    if id(value) in seen:
        return
    seen.add(id(value))
    if value.__class__ is Tensor:
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _tensors(k, seen)
            yield from _tensors(v, seen)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for v in value:
            yield from _tensors(v, seen)
    elif value.__class__.__class__ is ScriptType:        # a module, a script's object: its attributes, its slots
        yield from _tensors(getattr(value, "__dict__", {}), seen)
        for _, held in _copying().slot_values(value, value.__class__):
            yield from _tensors(held, seen)


def _first_global(value, seen: set):
    """The first global in pickle's order that the weights-only unpickler refuses, as PyTorch names it, or None."""
    cls = value.__class__
    if cls in _PLAIN:
        if id(value) in seen or cls is Tensor:
            return None
        seen.add(id(value))
        items = value.items() if isinstance(value, dict) else ((v,) for v in value) if cls not in (
            int, float, bool, str, complex, type(None), Size, dtypes.DType, _Device) else ()
        for pair in items:
            for v in pair:
                found = _first_global(v, seen)
                if found is not None:
                    return found
        return None
    from gradcli.language.stdlib import Builtin, script_type
    if cls is Builtin:                      # a library function, or a class the script holds
        text = repr(value)
        if text.startswith("<class '"):
            return text[8:-2]
        return value.name if value.namespace == "builtins" else f"{value.namespace}.{value.name}"
    if callable(value) and not isinstance(value, type) and getattr(value, "qualname", None) is not None:
        return f"__main__.{value.qualname}"         # a script's function
    import copyreg
    reducer = copyreg.dispatch_table.get(cls)
    if reducer is not None:                 # pickled as the function CPython registered remakes it (re.Pattern)
        made = reducer(value)[0]
        return f"{made.__module__}.{made.__qualname__}"
    kind = value if isinstance(value, type) else script_type(value)
    if kind.__class__ in HELD_METACLASSES:          # an enum class, or its member: pickled by the class's name
        return f"{kind.__module__}.{kind.__qualname__}"
    text = repr(kind)
    return text[8:-2] if text.startswith("<class '") and text.endswith("'>") else text
