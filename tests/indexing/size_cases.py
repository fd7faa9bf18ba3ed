"""torch.Size cases shared by tools/index_goldens.py (run on PyTorch) and tests/test_index_goldens.py (on gradcli).

Each case is one expression; the script that runs it is `SETUP` then `print(repr(EXPR))`, and what
it prints (or the error's type and message) is compared.
"""

SETUP = "import torch\ns = torch.Size([2, 3, 5])\nx = torch.zeros(2, 3, 5)\n"

EXPRS = [
    # slicing and indexing
    "s[1:]", "s[::-1]", "s[:]", "s[::2]", "s[1:2]", "s[5:]", "s[0]", "s[-1]", "s[5]", "s[True]", "s[1.0]",
    "s['a']", "x.shape[1:]", "x.size()[1:]", "x.shape[-2:]", "x.shape[:0]", "x[0].shape[::-1]",
    # + and * with tuples, Sizes and other things
    "s + (4,)", "(4,) + s", "s + s", "s + ()", "() + s", "torch.Size([2, 3]) + torch.Size([4])", "s * 2", "2 * s",
    "s[0:1] * 3", "3 * s[0:1]", "s * 0", "s * -1", "s * True", "s * torch.tensor(2)", "s + [1]", "[1] + s",
    "s + 1", "s * 1.5", "s * s", "s + torch.tensor([1])", "s - (1,)", "-s", "(s + (1,)).numel()",
    # tuple methods and numel
    "s.numel()", "s[1:].numel()", "torch.Size([]).numel()", "torch.Size([0, 3]).numel()", "s.count(3)",
    "s.count(7)", "s.count(torch.tensor(3))", "s.index(5)", "s.index(7)", "s.index(3, 1)",
    # comparisons
    "s == (2, 3, 5)", "s == [2, 3, 5]", "s != (2, 3, 5)", "s == torch.Size([2, 3, 5])", "s[1:] == torch.Size([3, 5])",
    "s < (3,)", "s > torch.Size([2])", "s <= (2, 3, 5)", "s >= (2, 4)", "s in [(2, 3, 5)]", "3 in s", "7 in s",
    # text, length, iteration, conversions
    "str(s)", "f'{s}'", "f'{s[1:]}'", "len(s)", "len(s[1:])", "list(s)", "tuple(s)", "list(s[::-1])", "max(s)",
    "sum(s)", "sorted(s)", "list(reversed(s))", "min(s[1:])", "bool(torch.Size([]))", "bool(s)",
    "str(torch.Size([]))", "torch.Size([0])",
    # construction
    "torch.Size((1, 2))", "torch.Size()", "torch.Size([])", "torch.Size([1.5])", "torch.Size([torch.tensor(3)])",
    "torch.Size(3)", "torch.Size([-1])", "torch.Size('ab')", "torch.Size(s)", "torch.Size(range(3))",
    "torch.Size([True, 2])", "torch.Size([torch.tensor(1.5)])", "torch.Size([None])",
    # as the size argument of functions
    "torch.zeros(s).shape", "torch.ones(s[1:]).shape", "x.reshape(s[::-1]).shape", "torch.zeros(30).view(s).shape",
    "torch.zeros(3, 5).expand(s).shape", "torch.randn(s).shape", "torch.rand(s[1:]).shape", "torch.full(s, 1.).shape",
    "torch.empty(s).shape", "x.new_zeros(s[1:]).shape", "x.new_ones(s).shape", "x.new_full(s[:1], 2.).shape",
    "torch.zeros(1, 5).repeat(s[1:]).shape", "x.permute(torch.Size([2, 1, 0])).shape", "x.sum(torch.Size([0, 1])).shape",
    "x.flatten().unflatten(0, s).shape", "torch.arange(30.).reshape(s).shape", "x.view(s[0], -1).shape",
    "torch.zeros(s, dtype=torch.long).dtype", "torch.ones(s[1:], requires_grad=True).requires_grad",
    "torch.zeros(5).expand(s[1:]).shape", "x.reshape(s[:1] + (15,)).shape", "x.view(s[1:] + s[:1]).shape",
    "torch.zeros(x.shape[:2]).shape", "torch.zeros_like(x).shape == s", "x.mean(s[:1]).shape",
    "torch.ones(2, 3).expand(s[:1] + torch.Size([2, 3])).shape", "x.shape == s", "x.size() == s[:]",
    "x.size(1)", "x.shape.numel()", "x.reshape(-1, s[2]).shape", "torch.tensor(s)", "torch.tensor(s[1:])",
    "x.sum(torch.Size([5]))", "float(s)", "s.foo", "s.numel(1)", "torch.Size",
]
