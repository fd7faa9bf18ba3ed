"""The finite-difference check of forward-mode tangents, shared by the tests of each op area.

A case is `(setup, expr)`: `setup` makes the inputs (float64 tensors named in `inputs`, drawn from the
seeded stream), `expr` is the op applied to them. The check runs, as one gradcli script:

  * the op on dual tensors (each input with a random tangent), and reads the result's tangent;
  * the central difference (f(x + h v) - f(x - h v)) / 2h along the same tangents, in float64;

and compares them. It also returns the rows whose results the op produced (the forward observer),
(those whose forward-mode column ran), so a test can ask that every row is reached by some case.
"""

from __future__ import annotations

import io

from gradcli.engine import forward
from gradcli.session import Session

TEMPLATE = """\
import torch
import torch.nn.functional as F
import torch.autograd.forward_ad as fwAD
torch.manual_seed({seed})
{setup}
names = {names!r}
values = [{inputs}]
tangents = [torch.randn_like(v) for v in values]
def f({inputs}):
    return {expr}
def first(out):
    return out[0] if isinstance(out, tuple) else out
with fwAD.dual_level():
    out = first(f(*[fwAD.make_dual(v, t) for v, t in zip(values, tangents)]))
    tangent = fwAD.unpack_dual(out).tangent
h = {h}
up = first(f(*[v + h * t for v, t in zip(values, tangents)]))
down = first(f(*[v - h * t for v, t in zip(values, tangents)]))
numeric = (up - down) / (2 * h)
ok = tangent is not None and tangent.shape == out.shape and torch.allclose(tangent, numeric, rtol={rtol}, atol={atol}, equal_nan=True)
print(ok)
if not ok:
    print(tangent)
    print(numeric)
"""


def check(setup: str, expr: str, inputs=("x",), seed=0, h=1e-6, rtol=1e-4, atol=1e-6):
    """Run one case; returns (passed, output text, rows seen)."""
    script = TEMPLATE.format(seed=seed, setup=setup, names=list(inputs), inputs=", ".join(inputs), expr=expr,
                             h=h, rtol=rtol, atol=atol)
    out, err = io.StringIO(), io.StringIO()
    session = Session(out=out, err=err)
    rows = set()
    propagate = forward.propagate

    def watched(op, *args):
        t = propagate(op, *args)
        if forward.tangent_of(t) is not None:
            rows.add(op)
        return t

    error = None
    forward.propagate = watched
    try:
        session.run_source(script, "<forward-check>")
    except Exception as e:          # a ScriptError: reported as the failure text
        error = e
    finally:
        forward.propagate = propagate
    text = out.getvalue() + err.getvalue() + ("" if error is None else f"{error}")
    return text.startswith("True"), text, rows
