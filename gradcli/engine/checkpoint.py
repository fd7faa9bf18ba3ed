"""torch.utils.checkpoint: checkpoint and checkpoint_sequential, which keep a region's inputs instead of
the tensors its ops save, and run the region again when backward needs them.

Two ways, as PyTorch has them. With use_reentrant=False the region records its graph as usual, but each
tensor one of its ops saves is packed as its index alone (saved-tensor hooks); the first unpack during
backward runs the function again, with grad mode on and the random stream it started with, and keeps the
tensors that run saves, in the same order. With use_reentrant=True the function runs with grad mode off,
under one custom node, CheckpointFunctionBackward, whose backward runs it again on detached inputs and
calls backward inside. Either way the outer random stream is left where it was, and what the function
prints or changes (a BatchNorm's running statistics) happens again when it reruns, as in PyTorch.
"""

from __future__ import annotations

from gradcli.engine import autograd, custom, savedhooks
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor

_NO_USE_REENTRANT = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    """torch.utils.checkpoint.checkpoint(function, *args, use_reentrant=..., **kwargs)."""
    if use_reentrant is None:
        STATE.warn("UserWarning", _NO_USE_REENTRANT)
        use_reentrant = True
    if use_reentrant:
        if context_fn is not None or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return _reentrant(function, preserve_rng_state, args)
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got " + str(determinism_check))
    return _Region(function, args, kwargs, preserve_rng_state).run()


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """torch.utils.checkpoint.checkpoint_sequential: the modules (or functions) cut into `segments` runs
    of equal length, each run but the last checkpointed; the last runs plainly. (A Sequential comes as the
    list of its children: the language's wrapper makes it one.)"""
    if use_reentrant is None:
        STATE.warn("UserWarning", _NO_USE_REENTRANT)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(_run_span(functions, start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _run_span(functions, end + 1, len(functions) - 1)(input)


def _run_span(functions, start: int, end: int):
    def forward(input):
        for j in range(start, end + 1):
            input = functions[j](input)
        return input
    return forward


def _rerun(function, args: tuple, kwargs: dict, rng_state):
    """The function run again with grad mode on, from the random state it first started with; the outer
    stream is put back afterwards."""
    outer = STATE.generator.get_state() if rng_state is not None else None
    if rng_state is not None:
        STATE.generator.set_state(rng_state)
    try:
        with autograd.set_grad_enabled(True):
            return function(*args, **kwargs)
    finally:
        if outer is not None:
            STATE.generator.set_state(outer)


class _Region:
    """One non-reentrant checkpointed call: the indices its ops' saved tensors were packed as, and the
    tensors a rerun saved in their place."""

    __slots__ = ("function", "args", "kwargs", "rng_state", "count", "recomputed")

    def __init__(self, function, args: tuple, kwargs: dict, preserve_rng_state: bool):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.rng_state = STATE.generator.get_state() if preserve_rng_state else None
        self.count = 0
        self.recomputed = None

    def run(self):
        with savedhooks.saved_tensors_hooks(self._pack, self._unpack):
            return self.function(*self.args, **self.kwargs)

    def _pack(self, t):
        index = self.count
        self.count += 1
        return index

    def _unpack(self, index):
        if self.recomputed is None:
            kept = []
            with savedhooks.saved_tensors_hooks(lambda t: kept.append(t) or t, lambda t: t):
                _rerun(self.function, self.args, self.kwargs, self.rng_state)
            self.recomputed = kept
        if index >= len(self.recomputed):
            raise RuntimeError(
                "torch.utils.checkpoint: trying to save more tensors during recomputation than during the original "
                "forward pass.")
        return self.recomputed[index]


def _reentrant(function, preserve_rng_state: bool, args: tuple):
    if not any(a.__class__ is Tensor and a.requires_grad for a in args):
        STATE.warn("UserWarning", "None of the inputs have requires_grad=True. Gradients will be None")
    rng_state = STATE.generator.get_state() if preserve_rng_state else None

    def forward(ctx, *inputs):
        ctx.save_for_backward(*[a for a in inputs if a.__class__ is Tensor])
        return function(*inputs)

    def backward(ctx, *grads):
        if STATE.sweep_targeted:
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or passing an `inputs` "
                "parameter to .backward(). To resolve this error, you can either set use_reentrant=False, or call "
                ".backward() without passing the `inputs` argument.")
        saved = iter(ctx.saved_tensors)
        inputs = []
        for a in args:
            if a.__class__ is Tensor:
                t = next(saved).detach()
                t.requires_grad = a.requires_grad
                inputs.append(t)
            else:
                inputs.append(a)
        outputs = _rerun(function, tuple(inputs), {}, rng_state)
        if outputs.__class__ is not tuple:
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if o.__class__ is Tensor and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        from gradcli.engine import backward as backward_api
        backward_api.backward([o for o, _ in pairs], [g for _, g in pairs])
        return tuple(t.grad if t.__class__ is Tensor else None for t in inputs)

    return custom.apply("CheckpointFunction", forward, None, backward, args, {})
