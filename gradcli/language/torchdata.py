"""torch.utils.data as scripts use it: Dataset, IterableDataset, TensorDataset, Subset, the samplers, DataLoader,
random_split.

`Dataset` is a library class of the language (see gradcli.language.classes): a script's
`class Squares(Dataset)` derives from it as from its own classes, and the loader reaches it only as a
script does, through `len(ds)` and `ds[i]`. Everything here is in-process: PyTorch's worker processes,
pinned memory and the like are refused with a clear message.

The order of the samples is PyTorch's bit for bit under a seed: each pass over a DataLoader draws its
`_base_seed` (one int64 `random_()`, from the loader's generator or the default one) before the first
batch; a shuffling sampler without a generator then draws one more such seed from the default generator
and permutes with a fresh generator seeded with it (`randperm`), and, once exhausted, draws one more
(empty) permutation, as PyTorch's RandomSampler does.
"""

from __future__ import annotations

import bisect
import collections
import copy
import math

from gradcli.engine import budget, factories, rng
from gradcli.engine.addresses import address
from gradcli.engine.ops.shape import stack
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor
from gradcli.language import bounds, classes
from gradcli.language.classes import ScriptObject, ScriptType

_INT64_SPAN = 1 << 63


def _int64_seed(g) -> int:
    """`torch.empty((), dtype=torch.int64).random_(generator=g).item()`: one 64-bit draw modulo 2**63."""
    g = rng.default_generator if g is None else g
    words = g._words32(2)
    return ((int(words[0]) << 32) | int(words[1])) % _INT64_SPAN


def _permutation(n: int, g) -> list:
    """`torch.randperm(n, generator=g).tolist()`, bounded as the tensor and the list it makes are."""
    budget.check_tensor((n,), 8)
    if n > STATE.max_items:
        raise bounds.built_too_many("list")
    return g.randperm(n).tolist()


def _check_generator(generator) -> None:
    if generator is not None and generator.__class__ is not rng.Generator:
        raise TypeError(f"generator must be a torch.Generator, not {type(generator).__name__}")


class Dataset(ScriptObject, metaclass=ScriptType):
    """torch.utils.data.Dataset: subclasses define `__getitem__` (and usually `__len__`)."""

    __module__ = "torch.utils.data.dataset"

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


classes.DICT_LIBRARY_CLASSES.add(Dataset)         # (nothing of its own in an instance's __dict__)


class TensorDataset(Dataset):
    """Samples are the tuples of the tensors' rows at one index along their first dimension."""

    __module__ = "torch.utils.data.dataset"

    def __init__(self, *tensors):
        for t in tensors:
            if t.__class__ is not Tensor:
                raise AttributeError(f"'{type(t).__name__}' object has no attribute 'size'")
        if tensors and any(t.size(0) != tensors[0].size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    __module__ = "torch.utils.data.dataset"

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


def get_worker_info():
    """torch.utils.data.get_worker_info(): the WorkerInfo of the DataLoader worker fetching now (gradcli's
    emulated workers, _WorkerLoaderIter), else None, as in the main process."""
    return _CURRENT_WORKER[0]


# the WorkerInfo of the worker whose fetch runs now (set and restored around each fetch), or None
_CURRENT_WORKER: list = [None]


class WorkerInfo(ScriptObject, metaclass=ScriptType):
    """What get_worker_info() gives inside a worker, as PyTorch's frozen dataclass: id, num_workers, seed,
    dataset, rng (None) and worker_method."""

    __module__ = "torch.utils.data._utils.worker"

    def __init__(self, id, num_workers, seed, dataset):
        for name, value in (("id", id), ("num_workers", num_workers), ("seed", seed), ("dataset", dataset),
                            ("rng", None), ("worker_method", "multiprocessing")):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        import dataclasses
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __repr__(self):
        return (f"WorkerInfo(id={self.id!r}, num_workers={self.num_workers!r}, seed={self.seed!r}, "
                f"dataset={self.dataset!r}, rng=None, worker_method='multiprocessing')")


class ConcatDataset(Dataset):
    """The samples of several datasets one after another (`ds1 + ds2`)."""

    __module__ = "torch.utils.data.dataset"

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        sizes, total = [], 0
        for d in self.datasets:
            total += len(d)
            sizes.append(total)
        self.cumulative_sizes = sizes

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][idx - start]


class StackDataset(Dataset):
    """The samples of several datasets of one length side by side: a tuple of them (datasets given by position) or
    a dict (given by keyword)."""

    __module__ = "torch.utils.data.dataset"

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        datasets = list(args) if args else list(kwargs.values())
        self._length = len(datasets[0])
        if any(self._length != len(d) for d in datasets):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args if args else kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class IterableDataset(Dataset):
    """torch.utils.data.IterableDataset: subclasses define `__iter__` (a stream of samples, no indices)."""

    __module__ = "torch.utils.data.dataset"

    def __add__(self, other):
        return ChainDataset([self, other])


classes.DICT_LIBRARY_CLASSES.add(IterableDataset)


class ChainDataset(IterableDataset):
    """The samples of several IterableDatasets one stream after another."""

    __module__ = "torch.utils.data.dataset"

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        return _chain(self.datasets)

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


def _chain(datasets):
    for d in datasets:
        if not isinstance(d, IterableDataset):
            raise AssertionError("ChainDataset only supports IterableDataset")
        yield from d


def random_split(dataset, lengths, generator=None):
    """Subsets of `dataset` of the given lengths (or fractions of its length), over one permutation."""
    _check_generator(generator)
    lengths = list(lengths)
    total = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(math.floor(total * frac))
        for i in range(total - sum(sizes)):
            sizes[i % len(sizes)] += 1
        for i, size in enumerate(sizes):
            if size == 0 and STATE.warn is not None:
                STATE.warn("UserWarning", f"Length of split at index {i} is 0. This might result in an empty "
                           "dataset.")
        lengths = sizes
    if sum(lengths) != total:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = _permutation(sum(lengths), rng.default_generator if generator is None else generator)
    subsets, offset = [], 0
    for length in lengths:
        subsets.append(Subset(dataset, indices[offset:offset + length]))
        offset += length
    return subsets


class Sampler(ScriptObject, metaclass=ScriptType):
    """torch.utils.data.Sampler: an iterable of dataset indices."""

    __module__ = "torch.utils.data.sampler"

    def __init__(self, data_source=None):
        pass


classes.DICT_LIBRARY_CLASSES.add(Sampler)


class SequentialSampler(Sampler):
    __module__ = "torch.utils.data.sampler"

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random permutation of the indices per pass, or `num_samples` draws with replacement, in PyTorch's order."""

    __module__ = "torch.utils.data.sampler"

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        _check_generator(generator)
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        count = self.num_samples
        if not isinstance(count, int) or count <= 0:      # (True is 1, as PyTorch takes it)
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={count}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        return _random_indices(len(self.data_source), self.num_samples, self.replacement, self.generator)

    def __len__(self):
        return self.num_samples


def _random_indices(n: int, count: int, replacement: bool, generator):
    if generator is None:
        generator = rng.Generator()
        generator.manual_seed(_int64_seed(None))
    if replacement:         # in draws of 32, as PyTorch's sampler asks for them
        for _ in range(count // 32):
            yield from generator.randint(0, n, (32,)).tolist()
        yield from generator.randint(0, n, (count % 32,)).tolist()
        return
    for _ in range(count // n):
        yield from _permutation(n, generator)
    yield from _permutation(n, generator)[:count % n]     # drawn even when empty, as PyTorch's sampler does


class SubsetRandomSampler(Sampler):
    """The given indices in a random order per pass (drawn from the default generator unless given one)."""

    __module__ = "torch.utils.data.sampler"

    def __init__(self, indices, generator=None):
        _check_generator(generator)
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        return _subset_indices(self.indices, self.generator)

    def __len__(self):
        return len(self.indices)


def _subset_indices(indices, generator):
    for i in _permutation(len(indices), rng.default_generator if generator is None else generator):
        yield indices[i]


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with the given weights, by one torch.multinomial call per pass (on the
    default generator unless given one), as PyTorch's sampler draws them."""

    __module__ = "torch.utils.data.sampler"

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights = weights.to(_float64()) if weights.__class__ is Tensor else factories.tensor(weights,
                                                                                              dtype=_float64())
        if weights.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        return _weighted_indices(self)

    def __len__(self):
        return self.num_samples


def _weighted_indices(sampler):
    # a generator, as PyTorch's __iter__ is: the draw happens at the first index, after the loader's seed
    from gradcli.engine import distributions
    drawn = distributions.multinomial(sampler.weights, sampler.num_samples, sampler.replacement,
                                      generator=sampler.generator)
    yield from drawn.tolist()


class BatchSampler(Sampler):
    __module__ = "torch.utils.data.sampler"

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        return _batches(iter(self.sampler), self.batch_size, self.drop_last)

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


def _batches(indices, size: int, drop_last: bool):
    if size > (1 << 63) - 1:        # PyTorch's BatchSampler slices (or, dropping the last, preallocates) batches
        if drop_last:
            raise OverflowError("cannot fit 'int' into an index-sized integer")
        raise ValueError("Stop argument for islice() must be None or an integer: 0 <= x <= sys.maxsize.")
    room = STATE.max_items
    while True:
        batch = []
        for index in indices:
            batch.append(index)
            if len(batch) == size:
                break
            if len(batch) == room:          # a batch is a list of samples: bounded as the script's lists
                raise bounds.built_too_many("list")
        if not batch or (drop_last and len(batch) < size):
            return
        yield batch


# ---- collate ------------------------------------------------------------------------------------

_COLLATE_ERROR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def default_convert(data):
    """PyTorch's default_convert, what a loader without batching (batch_size=None) applies to each sample:
    tensors, numbers and strings as they are; a tuple becomes a list, a namedtuple stays one, a list and a
    dict keep their type, each with its items converted."""
    if data.__class__ is Tensor or isinstance(data, (int, float, str)):
        return data
    if isinstance(data, dict):
        converted = copy.copy(data)             # a defaultdict, an OrderedDict keep their type and defaults
        for key, value in data.items():
            converted[key] = default_convert(value)
        return converted
    if isinstance(data, tuple):
        if hasattr(type(data), "_fields"):
            return type(data)(*(default_convert(d) for d in data))
        return [default_convert(d) for d in data]
    if isinstance(data, list):
        return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """PyTorch's default_collate: tensors stacked, numbers as tensors, containers collated per field."""
    elem = batch[0]
    if elem.__class__ is Tensor:
        return stack(batch, 0)
    if isinstance(elem, float):
        return factories.tensor(batch, dtype=_float64())
    if isinstance(elem, int):
        return factories.tensor(batch)
    if isinstance(elem, str):
        return batch
    if isinstance(elem, dict):
        return {key: default_collate([d[key] for d in batch]) for key in elem}
    if isinstance(elem, (tuple, list)):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(samples)) for samples in zip(*batch)]
        if isinstance(elem, tuple):
            if hasattr(type(elem), "_fields"):          # a namedtuple keeps its type
                return type(elem)(*columns)
            return columns
        return columns
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


def _float64():
    from gradcli.engine import dtypes
    return dtypes.float64


# ---- the loader ---------------------------------------------------------------------------------

_FIXED_AFTER_INIT = frozenset(("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                               "persistent_workers"))
_START_METHODS = ("fork", "spawn", "forkserver")


class DataLoader(ScriptObject, metaclass=ScriptType):
    """torch.utils.data.DataLoader, loading in the script's own process (its workers emulated there)."""

    __module__ = "torch.utils.data.dataloader"

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        # PyTorch's checks, in its order; what only worker processes could do is refused when the loader is
        # iterated (a loader that is made and measured but never iterated runs as in PyTorch)
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers "
                             "> 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        _check_generator(generator)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        if multiprocessing_context is not None:
            if num_workers == 0:
                raise ValueError(f"multiprocessing_context can only be used with multi-process loading "
                                 f"(num_workers > 0), but got num_workers={num_workers}")
            if not isinstance(multiprocessing_context, str):
                # scripts cannot make a multiprocessing context, so anything else is PyTorch's TypeError
                raise TypeError(f"multiprocessing_context option should be a valid context object or a string "
                                f"specifying the start method, but got multiprocessing_context="
                                f"{multiprocessing_context}")
            if multiprocessing_context not in _START_METHODS:
                raise ValueError(f"multiprocessing_context option should specify a valid start method in "
                                 f"{list(_START_METHODS)!r}, but got multiprocessing_context="
                                 f"{multiprocessing_context!r}")
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self.persistent_workers = persistent_workers
        self._iterable = isinstance(dataset, IterableDataset)
        self._len_called = None
        if self._iterable:
            _check_iterable_options(shuffle, sampler, batch_sampler)
            sampler = _InfiniteConstantSampler()
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self._workers = None           # persistent_workers: the emulated workers, kept from pass to pass
        self._initialized = True
        if num_workers > 0:
            _check_worker_number(num_workers, "init")

    def __setattr__(self, name, value):
        if name in _FIXED_AFTER_INIT and self.__dict__.get("_initialized"):
            raise ValueError(f"{name} attribute should not be set after {type(self).__name__} is initialized")
        object.__setattr__(self, name, value)

    def __iter__(self):
        if self.num_workers > 0:
            if self._iterable:          # (each worker would iterate a copy of its own: not emulated)
                raise NotImplementedError("gradcli does not implement torch.utils.data.DataLoader workers "
                                          "(num_workers > 0) over an IterableDataset")
            _check_worker_number(self.num_workers, "iter")
            if self.persistent_workers and self._workers is not None:    # PyTorch resets its iterator
                return _WorkerLoaderIter(self, self._workers)
        if self.pin_memory and STATE.warn is not None:
            STATE.warn("UserWarning", "'pin_memory' argument is set as true but no accelerator is found, then "
                       "device pinned memory won't be used.")
        if self.num_workers > 0:
            return _WorkerLoaderIter(self, None)
        loader_iter = _LoaderIter(self)
        if self.timeout != 0:          # after the pass's seed is drawn, as in PyTorch
            raise AssertionError("_SingleProcessDataLoaderIter requires timeout == 0")
        return loader_iter

    def __len__(self):
        if self._iterable:
            # the dataset's own length (TypeError without one), in batches; a pass that yields more warns
            length = self._len_called = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else -(-length // self.batch_size)
            return length
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)


def _check_worker_number(num_workers: int, place: str) -> None:
    """PyTorch's warning when a loader asks for more workers than the CPUs this process may run on (it checks
    when the loader is made and when each pass starts: two lines of its code, each shown once)."""
    import os
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if cpus is not None and num_workers <= cpus:
        return
    suggested = ("DataLoader is not able to compute a suggested max number of worker in current system."
                 if cpus is None else f"Our suggested max number of worker in current system is {cpus}"
                 f"{'' if hasattr(os, 'sched_getaffinity') else ' (`cpuset` is not taken into account)'}, which "
                 "is smaller than what this DataLoader is going to create.")
    STATE.warn_python("UserWarning", f"This DataLoader will create {num_workers} worker processes in total. "
                      f"{suggested} Please be aware that excessive worker creation might get DataLoader running "
                      "slow or even freeze, lower the worker number to avoid potential slowness/freeze if "
                      "necessary.", place)


def _check_iterable_options(shuffle, sampler, batch_sampler):
    if shuffle not in (False, None):
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                         f"shuffle={shuffle}")
    if sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                         f"sampler={sampler}")
    if batch_sampler is not None:
        raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but got "
                         f"batch_sampler={batch_sampler}")


class _InfiniteConstantSampler(Sampler):
    """The sampler of a loader over an IterableDataset: None forever (the dataset itself gives the samples)."""

    __module__ = "torch.utils.data.sampler"

    def __iter__(self):
        return _forever()


def _forever():
    while True:
        yield None


class _LoaderIter:
    """One pass over a DataLoader (PyTorch's _SingleProcessDataLoaderIter). Not a script class: scripts reach
    none of its attributes, only `next()` and `for`."""

    __slots__ = ("_batches", "_dataset", "_collate", "_auto", "_rows", "_stream", "_drop_last", "_loader",
                 "_yielded", "_base_seed")

    def __init__(self, loader: DataLoader, draw_seed: bool = True):
        self._auto = loader.batch_sampler is not None
        self._batches = iter(loader.batch_sampler if self._auto else loader.sampler)
        if draw_seed:       # PyTorch draws the pass's _base_seed before the first batch
            self._base_seed = _int64_seed(loader.generator)
        self._dataset = dataset = loader.dataset
        self._collate = loader.collate_fn
        # A TensorDataset's batch, stacked row by row in PyTorch, is one indexing op per tensor here: the
        # same values and dtype, when no tensor records a graph (whose grad_fn would differ)
        self._rows = dataset.tensors if (
            dataset.__class__ is TensorDataset and self._auto and self._collate is default_collate
            and dataset.tensors and not any(t.requires_grad for t in dataset.tensors)) else None
        # an IterableDataset: its own iterator gives the samples, `_batches` only their number per batch
        self._stream = iter(dataset) if loader._iterable else None
        self._drop_last = loader.drop_last
        self._loader = loader
        self._yielded = 0

    def __iter__(self):
        return self

    def __next__(self):
        if self._stream is not None:
            return self._next_streamed()
        return self._fetch(next(self._batches))

    def _fetch(self, index):
        """The batch of the sampler's `index`: its samples, collated."""
        if self._rows is not None and all(i.__class__ is int for i in index):     # (else row by row, as PyTorch)
            return [t[index] for t in self._rows]
        dataset = self._dataset
        if self._auto:
            data = [dataset[i] for i in index]
        else:
            data = dataset[index]
        return data if self._collate is None else self._collate(data)

    def _next_streamed(self):
        """PyTorch's _IterableDatasetFetcher: a batch takes up to batch_size samples from the stream; an
        empty batch, or a short one under drop_last, ends the pass (and so does any after it)."""
        if self._stream is None or self._batches is None:
            raise StopIteration
        index = next(self._batches)
        if self._auto:
            data = []
            for _ in index:
                try:
                    data.append(next(self._stream))
                except StopIteration:
                    self._batches = None
                    break
            if not data or (self._drop_last and len(data) < len(index)):
                self._batches = None
                raise StopIteration
        else:
            data = next(self._stream)
        self._yielded += 1
        reported = self._loader._len_called
        if reported is not None and self._yielded > reported and STATE.warn is not None:
            STATE.warn("UserWarning", f"Length of IterableDataset {self._dataset!r} was reported to be "
                       f"{reported}(when accessing len(dataloader)), but {self._yielded} samples have been fetched. ")
        return data if self._collate is None else self._collate(data)

    def __repr__(self):
        return f"<torch.utils.data.dataloader._SingleProcessDataLoaderIter object at {address(self)}>"


class _Worker:
    """One emulated worker process: its WorkerInfo and its own random streams (torch's default generator and
    Python's random, seeded base_seed + id as PyTorch seeds a worker)."""

    __slots__ = ("info", "generator", "python")

    def __init__(self, worker_id: int, loader: DataLoader, base_seed: int):
        import random
        seed = base_seed + worker_id
        self.info = WorkerInfo(worker_id, loader.num_workers, seed, loader.dataset)
        self.generator = rng.Generator(seed)
        self.python = random.Random(seed)

    def run(self, fn, *args):
        """fn(*args) as this worker runs it: its streams in place of the main process's (which it leaves
        as they were), one thread (PyTorch sets one in a worker), get_worker_info() giving its info."""
        main, python = STATE.generator, STATE.python_random
        threads = STATE.threads
        _swap_streams(main, self.generator)
        if python is not None:
            kept = python.getstate()
            python.setstate(self.python.getstate())
        _CURRENT_WORKER[0], STATE.threads = self.info, 1
        try:
            return fn(*args)
        finally:
            _CURRENT_WORKER[0], STATE.threads = None, threads
            _swap_streams(main, self.generator)
            if python is not None:
                self.python.setstate(python.getstate())
                python.setstate(kept)


def _swap_streams(a: rng.Generator, b: rng.Generator) -> None:
    """Exchange the states of two generators (each object stays itself: the script's references hold)."""
    for name in ("_seed", "_key", "_pos", "_cache"):
        kept = getattr(a, name)
        setattr(a, name, getattr(b, name))
        setattr(b, name, kept)


class _WorkerLoaderIter(_LoaderIter):
    """A pass with num_workers > 0 (PyTorch's _MultiProcessingDataLoaderIter over a map-style dataset), its
    workers emulated in the script's process, so what a script sees is what PyTorch's processes give: batch k
    is fetched and collated by worker k % num_workers, under that worker's streams (_Worker.run), in order; the
    sampler is read ahead as PyTorch prefetches (prefetch_factor batches per worker when the pass starts, one
    more per batch given), so its random draws come when PyTorch's do. New workers (each pass, or the first
    with persistent_workers) draw the pass's base seed and run worker_init_fn(id) each in turn. Unlike
    PyTorch's forked workers, they share the dataset object with the main process."""

    __slots__ = ("_workers", "_ahead", "_turn")

    def __init__(self, loader: DataLoader, workers):
        super().__init__(loader, draw_seed=workers is None)
        if workers is None:
            workers = [_Worker(w, loader, self._base_seed) for w in range(loader.num_workers)]
            if loader.persistent_workers:
                loader._workers = workers
            if loader.worker_init_fn is not None:
                for worker in workers:
                    worker.run(loader.worker_init_fn, worker.info.id)
        self._workers = workers
        self._turn = 0
        self._ahead = collections.deque()
        self._read_ahead(loader.prefetch_factor * loader.num_workers)

    def _read_ahead(self, n: int) -> None:
        for _ in range(n):
            if self._batches is None:
                return
            try:
                self._ahead.append(next(self._batches))
            except StopIteration:
                self._batches = None

    def __next__(self):
        if not self._ahead:
            raise StopIteration
        index = self._ahead.popleft()
        worker = self._workers[self._turn % len(self._workers)]
        self._turn += 1
        batch = worker.run(self._fetch, index)
        self._read_ahead(1)
        return batch

    def __repr__(self):
        return f"<torch.utils.data.dataloader._MultiProcessingDataLoaderIter object at {address(self)}>"
