"""The engine's dynamic state in one object: the modes, options and streams a session owns and a replay isolates.

Everything a script can change that outlives one op lives here: grad, inference and anomaly modes,
print options, the default random stream (and the stream of the language's `random` module), the
numbering of addresses (--stable-ids), the call depth of script functions, the memory budget and
the observer watching the run. One process has one
`STATE`; the engine reads it on its hot paths (a slotted attribute read costs what the one-element
lists it replaces cost). A `Session` resets it before a script (`reset`), and a diagnostic replay
runs inside `with STATE.isolated():`, so the session it replays goes on as it was.
"""

from __future__ import annotations

import contextlib

import numpy as np

from gradcli.display import PrintOptions


DEFAULT_THREADS = 2     # torch.get_num_threads() on the reference machine (docs/numerics.md)


class EngineState:
    """The modes and streams one running script sees (see the module's docstring)."""

    __slots__ = (
        # What recording reads: whether ops attach nodes. Outside inference mode it is the grad mode
        # itself; inside inference mode nothing is recorded whatever the grad mode, so it stays False
        # there and the grad mode that torch.is_grad_enabled() reports is `grad_in_inference`.
        "recording", "inference", "grad_in_inference",
        "inference_seen",       # inference mode was entered once: inference tensors may exist
        "meta_seen",            # a meta tensor was made once: op results check their inputs' devices
        "in_formula",           # evaluating backward formulas on Tensors (create_graph), not user code
        "anomaly", "anomaly_nan",       # anomaly detection on; check backward outputs for NaN
        "observer",             # the tool watching the run (gradcli.engine.observe.Observer), or None
        "replay",               # a --check-grads float64 replay (gradcli.diagnostics.replay.Run) or None:
                                # tensors made ask it for their array, .float() keeps float64, torch.seed()
                                # takes its seeds
        "print_options",        # torch.set_printoptions's state and the display style: one object, kept
        "generator",            # torch.default_generator: one object, kept; its stream is the state
        "addresses",            # id(obj) -> (obj, address text) while stable addresses are on, else None
        "call_depth",           # calls of script functions in progress (the recursion limit)
        "call_limit",           # how deep they may go: the language's limit (gradcli.language.compiler, which sets
                                # it), or the lower one a script set (sys.setrecursionlimit)
        "max_memory",           # bytes one tensor (and the script's data) may take; 0: no limit
        "large_result",         # element count below which no op result can come near max_memory
        "max_items",            # the longest string, list or tuple a script may build in one step
        "python_random",        # the stream of the language's `random` module (a random.Random), or None
        "python_seed",          # what that stream starts from: it is made (and seeded) when a script first
                                # imports `random`, and a snapshot taken before then restores it to this seed
        "saved_hooks",          # the innermost saved_tensors_hooks in force (gradcli.engine.savedhooks), or None
        "saved_hooks_off",      # disable_saved_tensors_hooks's message while it is in force, else None
        "warn",                 # warn(category, message): where the engine's warnings go (the session), or None
        "warning_filters",      # the warnings module's filters of the run (gradcli.language.pywarnings.Filters),
                                # or None while a script has not changed CPython's default ones
        "logging",              # the logging module's state of the run (gradcli.language.pylogging.Run: its loggers,
                                # the root's level and handlers), or None while a script has not used it
        "streams",              # (write(stream, text, args), flush(stream), file name, arguments, source line(n),
                                # error text(e)): where sys.stdout and sys.stderr write and what sys.argv says, set by
                                # the session running (gradcli.language.pysys), and the script's lines and errors as
                                # the logging module shows them (gradcli.language.pylogging)
        "redirects",            # contextlib.redirect_stdout/redirect_stderr in force: {'stdout' or 'stderr': the
                                # script's object print and sys.stdout write to instead}, else None
        "warned_once",          # the keys of the warnings PyTorch gives once per process, given already
        "registry_epoch",       # how many times CPython's warning registries were emptied (0, or 1 once PyTorch
                                # imported sympy: gradient_given)
        "warn_always",          # torch.set_warn_always's flag: those warnings given every time
        "vmap",                 # the innermost torch.func.vmap running (gradcli.engine.functorch.VmapFrame), or None
        "fw_level",             # the forward-mode AD level in force (gradcli.engine.forward.Level), or None
        "interop_threads",      # torch.set_num_interop_threads's value once set (it may be set once), else None
        "threads",              # torch.get_num_threads(): how PyTorch's kernels would split their work, which
                                # decides the order of large sums (gradcli.engine.cascade), and bounds the
                                # threads that compute big tensors (gradcli.engine.workers)
        "default_device",       # the device factories make tensors on when given none (torch.set_default_device,
                                # `with torch.device(...)`): None for the CPU, else a torch.device
        "device_stack",         # the defaults that `with torch.device(...)` blocks in progress will put back
        "parametrization_cache",    # while torch.nn.utils.parametrize.cached() blocks run: (their depth,
                                    # {(id(module), name): the tensor computed}), else None
        "complex_seen",         # the session has made a complex tensor: recording.apply checks each op against
                                # the rows checked for complex values (gradcli.engine.ops.complexops)
        "autocast",             # while CPU autocast is on, its lower-precision dtype, else None (gradcli.engine.autocast)
        "multithreading",       # torch.autograd.set_multithreading_enabled's flag (gradcli's backward is one thread
                                # whatever it says: only is_multithreading_enabled reads it)
        "amp",                  # the rest of the autocast state (an autocast.Amp), None until a script touches it
        "sweep_targeted",       # the backward sweep in progress runs toward given inputs (autograd.grad,
                                # backward(inputs=...)), which a reentrant checkpoint cannot take part in
        "sdp",                  # the scaled_dot_product_attention backends enabled: (flash, mem_efficient, math),
                                # torch.backends.cuda.enable_*_sdp's switches, which torch.nn.attention.sdpa_kernel
                                # sets for a block (on the CPU they choose between the flash kernel and the math path)
    )

    def __init__(self):
        self.recording = True
        self.inference = self.grad_in_inference = self.inference_seen = self.in_formula = False
        self.sweep_targeted = self.meta_seen = False
        self.complex_seen = False
        self.anomaly, self.anomaly_nan = False, True
        self.observer = None
        self.replay = None
        self.print_options = PrintOptions()
        self.generator = None           # set by gradcli.engine.rng, which makes the default generator
        self.addresses = None
        self.call_depth = 0
        self.call_limit = 1000         # (gradcli.language.compiler puts the language's own)
        self.warning_filters = None
        self.logging = None
        self.streams = None
        self.redirects = None
        self.max_memory = 0
        self.large_result = 1 << 62
        self.max_items = 10 ** 8
        self.python_random = None       # set by gradcli.language.stdlib, which makes the `random` module
        self.python_seed = None
        self.saved_hooks = self.saved_hooks_off = None
        self.warn = None
        self.warned_once = set()
        self.registry_epoch = 0
        self.warn_always = False
        self.interop_threads = None
        self.vmap = None
        self.fw_level = None
        self.threads = DEFAULT_THREADS
        self.default_device = None
        self.device_stack = []
        self.parametrization_cache = None
        self.autocast = self.amp = None
        self.multithreading = True
        self.sdp = (True, True, True)

    def warn_once(self, key: str, category: str, message: str) -> None:
        """A warning PyTorch gives once per process (TORCH_WARN_ONCE), at the script's line that caused it."""
        if key not in self.warned_once or self.warn_always:
            self.warned_once.add(key)
            if self.warn is not None:
                self.warn(category, message)

    def warn_python(self, category: str, message: str, place: str = "") -> None:
        """A Python warning from one line of PyTorch's own code: CPython's registry for that line shows it once
        per message, until the registries are emptied (gradient_given). `place` names the line where one
        message comes from two lines of PyTorch's code."""
        key = "py:" + place + message   # (torch.set_warn_always governs TORCH_WARN_ONCE only, not these)
        if key not in self.warned_once:
            self.warned_once.add(key)
            if self.warn is not None:
                self.warn(category, message)

    def gradient_given(self) -> None:
        """PyTorch imports sympy the first time a gradient is given as a tensor (to backward or autograd.grad,
        gradcheck's and torch.func.grad's/jacrev's own calls included), an optimiser is made or torch.compile is
        called, and that import changes the warnings filters, which makes CPython forget every warning it has
        shown: the Python warnings shown once until then may show again. (Measured with the oracle; other
        PyTorch calls that import it first are not modelled.)"""
        if self.registry_epoch == 0:
            self.registry_epoch = 1
            self.warned_once = {key for key in self.warned_once if not key.startswith("py:")}

    def reset_modes(self) -> None:
        """A fresh interpreter's modes: grad mode on, inference and anomaly detection off."""
        self.recording = True
        self.inference = self.grad_in_inference = False
        self.anomaly, self.anomaly_nan = False, True
        self.saved_hooks = self.saved_hooks_off = None
        self.vmap = None
        self.fw_level = None
        self.parametrization_cache = None
        self.sweep_targeted = False
        self.autocast = self.amp = None
        self.multithreading = True
        self.sdp = (True, True, True)

    def snapshot(self) -> tuple:
        """Everything `restore` needs to put this state back as it is now."""
        options = self.print_options
        return (self.recording, self.inference, self.grad_in_inference, self.inference_seen, self.in_formula,
                self.anomaly, self.anomaly_nan, self.observer, self.replay,
                tuple(getattr(options, name) for name in PrintOptions.__slots__),
                self.generator.get_state() if self.generator is not None else None,
                self.addresses, self.call_depth, self.max_memory, self.large_result, self.max_items,
                self.python_random.getstate() if self.python_random is not None else None, self.python_seed,
                np.geterr(),
                self.saved_hooks, self.saved_hooks_off, self.warn, frozenset(self.warned_once), self.registry_epoch,
                self.vmap,
                self.fw_level, self.threads, self.default_device, tuple(self.device_stack),
                self.parametrization_cache, self.sweep_targeted, self.meta_seen, self.complex_seen,
                self.autocast, self.amp, self.multithreading,
                self.warning_filters.copy() if self.warning_filters is not None else None, self.streams,
                self.call_limit, self.sdp, self.redirects, self.warn_always, self.interop_threads, self.logging)

    def restore(self, snap: tuple) -> None:
        (self.recording, self.inference, self.grad_in_inference, self.inference_seen, self.in_formula,
         self.anomaly, self.anomaly_nan, self.observer, self.replay, options, stream,
         self.addresses, self.call_depth, self.max_memory, self.large_result, self.max_items,
         python_stream, self.python_seed, errors, self.saved_hooks, self.saved_hooks_off, self.warn, warned,
         self.registry_epoch, self.vmap, self.fw_level,
         self.threads, self.default_device, devices, self.parametrization_cache, self.sweep_targeted,
         self.meta_seen, self.complex_seen, self.autocast, self.amp, self.multithreading, self.warning_filters,
         self.streams, self.call_limit, self.sdp, self.redirects, self.warn_always, self.interop_threads,
         self.logging) = snap
        self.warned_once = set(warned)
        self.device_stack = list(devices)
        for name, value in zip(PrintOptions.__slots__, options):
            setattr(self.print_options, name, value)
        if stream is not None:
            self.generator.set_state(stream)
        if python_stream is not None:
            self.python_random.setstate(python_stream)
        elif self.python_random is not None and self.python_seed is not None:
            self.python_random.seed(self.python_seed)      # made after the snapshot: back to its start
        np.seterr(**errors)

    @contextlib.contextmanager
    def isolated(self):
        """Run something (a diagnostic replay) that may change any of this state, and put it all back
        afterwards. Inside, script functions start at call depth 0: the replay's own recursion counts."""
        snap = self.snapshot()
        self.call_depth = 0
        try:
            yield self
        finally:
            self.restore(snap)


STATE = EngineState()
