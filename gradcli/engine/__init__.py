"""The autograd engine: tensors, graph nodes, ops, dtypes and random streams.

Usable from Python without the script language:

    from gradcli.engine import torch
    x = torch.ones(2, 2, requires_grad=True)
"""

# ops first: it imports tensor, which refers back to ops only at call time
from gradcli.engine import ops  # noqa: F401
