"""The PyTorch side of tools/numerics.py: runs the case table's snippets with real torch in its own process.

Started by tools/numerics.py with the oracle interpreter (never imported by gradcli). Protocol, one line each
way: a request `{"jobs": [[key, table, case index, dtype, n, layout], ...], "path": P}` on stdin; the arrays go to the
npz file P as `key|output`, and the reply line on stdout is `{"errors": {key: message}}`. An empty line ends it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numerics_cases as nc  # noqa: E402

_DTYPES = {"float32": torch.float32, "float64": torch.float64}


def _tensor_of(arr, dtype_name, requires_grad):
    if dtype_name is None:
        return torch.from_numpy(np.array(arr))
    t = torch.tensor(arr, dtype=_DTYPES[dtype_name])
    t.requires_grad_(requires_grad)
    return t


def _numpy(t) -> np.ndarray:
    # a stand-in torch (tests/test_numerics_tool.py) says how to read its tensors
    reader = getattr(torch, "numerics_array", None)
    return reader(t) if reader is not None else t.detach().numpy()


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            break
        request = json.loads(line)
        arrays, errors = {}, {}
        for key, table, index, dtype_name, n, layout in request["jobs"]:
            try:
                results = nc.run_case(torch, nc.TABLES[table][index], index, dtype_name, n, layout, _tensor_of)
                for name, t in results.items():
                    arrays[f"{key}|{name}"] = _numpy(t)
            except Exception as exc:          # reported per job; the table says which snippet PyTorch refused
                errors[key] = f"{type(exc).__name__}: {exc}"[:300]
        np.savez(request["path"], **arrays)
        sys.stdout.write(json.dumps({"errors": errors}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
