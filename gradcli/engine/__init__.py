"""The autograd engine: tensors, graph nodes, ops, dtypes and random streams.

Usable from Python without the script language:

    from gradcli.engine import factories as torch
    x = torch.ones(2, 2, requires_grad=True)
    out = ((x + 2) * (x + 2) * 3).mean()
    out.backward()
"""

# ops first: its modules import the Tensor class, and tensor.py needs only the ops module object
from gradcli.engine import ops  # noqa: F401
