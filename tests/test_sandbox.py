"""Escapes from the language: each attempt a script might make to reach Python, files or gradcli's internals,
with the exact error it gets, through `gradcli -c` and through the REPL (docs/security.md)."""

from __future__ import annotations

import io
import math
import types

import numpy as np
import pytest

from gradcli.language import access, stdlib
from gradcli import cli
from gradcli.engine.tensor import Tensor
from gradcli.repl.shell import Options, Shell

_OUTSIDE = "AttributeError: {} attribute '{}' is outside gradcli's language"
_IMPORT = "ImportError: import of '{}' is outside gradcli's language: scripts can import only torch, abc, argparse, bisect, collections, contextlib, copy, dataclasses, enum, functools, heapq, inspect, io, itertools, json, logging, math, operator, pprint, random, re, statistics, string, sys, textwrap, time, traceback, types, typing, unicodedata and warnings"
_BUILTIN = "NameError: name '{0}' is not defined: Python's builtin '{0}' is outside gradcli's language"
_NO_FILES = "scripts cannot read or write files"
_NO_ARRAYS = "scripts cannot reach numpy arrays (use .tolist() or .item())"
_NO_POINTERS = "scripts cannot reach memory addresses"

T = "import torch\n"
C = "from collections import namedtuple, defaultdict, Counter, deque\n"
SP = "import torch\ns = torch.sparse_coo_tensor([[0, 1]], [1., 2.], (3,), check_invariants=True)\n"
GRAD = T + "x = torch.ones(1, requires_grad=True) * 2\n"
PARAM = (T + "import torch.nn as nn\nimport torch.nn.utils.parametrize as P\nm = nn.Linear(3, 2)\n"
         "P.register_parametrization(m, 'weight', nn.Tanh())\n")
PRUNE = T + "import torch.nn.utils.prune as pr\nm = torch.nn.Linear(2, 2)\n"

# (script, exit status, the error line after "<string>:")
ESCAPES = [
    # sys: a safe part; what reaches modules, paths, frames, hooks or the real streams is outside the language
    *[(f"import sys\nsys.{name}", 1, f"2:1: AttributeError: module 'sys' attribute '{name}' is outside gradcli's "
       "language") for name in ("modules", "path", "settrace", "setprofile", "stdin", "executable", "exc_info",
                                "__stdout__", "meta_path", "builtin_module_names", "getrefcount", "addaudithook")],
    ("import sys\nsys._getframe(0)", 1, "2:1: AttributeError: module 'sys' attribute '_getframe' is outside gradcli's "
                                        "language"),
    ("from sys import modules", 1, "1:1: ImportError: cannot import name 'modules' from 'sys' (unknown location)"),
    ("import sys\nsys.stdout.buffer", 1, "2:1: AttributeError: 'TextIOWrapper' object attribute 'buffer' is outside "
                                         "gradcli's language"),
    ("import sys\nsys.stderr.fileno()", 1, "2:1: AttributeError: 'TextIOWrapper' object attribute 'fileno' is outside "
                                           "gradcli's language"),
    ("import sys\nsys.stdout.foo", 1, "2:1: AttributeError: 'TextIOWrapper' object has no attribute 'foo'"),
    ("import sys\nsys.stdout.write.__self__", 1, "2:1: AttributeError: 'builtin_function_or_method' object attribute "
                                                 "'__self__' is outside gradcli's language"),
    ("import sys\ntype(sys.stdout)('stdin')", 1, "2:1: TypeError: cannot create '_io.TextIOWrapper' instances"),
    ("import sys\nsys.float_info.__class__.__new__", 1, "2:1: AttributeError: 'type' object attribute '__new__' is "
                                                        "outside gradcli's language"),
    ("import sys\nsys.setrecursionlimit(10 ** 6)\ndef f(n):\n    return f(n + 1)\nf(0)", 1,
     "4:12: RecursionError: maximum recursion depth exceeded"),
    # argparse: files refused, the parser's internals out of reach, no dunder name through a parse
    ("import argparse\nargparse.FileType('r')", 1, "2:1: AttributeError: module 'argparse' attribute 'FileType' is "
                                                  "outside gradcli's language: scripts cannot read or write files"),
    ("import argparse\nargparse.ArgumentParser(fromfile_prefix_chars='@')", 1,
     "2:1: TypeError: ArgumentParser(fromfile_prefix_chars=...) is outside gradcli's language: scripts cannot read "
     "files"),
    ("import argparse\nargparse.ArgumentParser()._registries", 1,
     "2:1: AttributeError: 'ArgumentParser' object attribute '_registries' is outside gradcli's language"),
    ("import argparse\np = argparse.ArgumentParser()\np.add_argument('--x', dest='__class__')\np.parse_args(['--x', 'a'])",
     1, "4:1: AttributeError: 'Namespace' object attribute '__class__' is outside gradcli's language"),
    # json: files refused; what dumps writes stays within the bound of a string; the script's default runs as a call
    ("import json\njson.dump({}, None)", 1, "2:1: AttributeError: module 'json' attribute 'dump' is outside "
                                          "gradcli's language: scripts cannot read or write files"),
    ("import json\njson.load", 1, "2:1: AttributeError: module 'json' attribute 'load' is outside gradcli's "
                                  "language: scripts cannot read or write files"),
    ("import json\njson.decoder", 1, "2:1: AttributeError: module 'json' attribute 'decoder' is outside gradcli's "
                                     "language"),
    ("import json\njson.dumps(1, cls=list)", 1, "2:1: TypeError: json.dumps(cls=...) is outside gradcli's language"),
    ("import json\njson.dumps([[1]], indent=10 ** 12)", 1,
     "2:1: MemoryError: a str of 1000000000000 items is too large (gradcli allows at most 100000000)"),
    ("import json\njson.dumps(object(), default=lambda o: o.__reduce__())", 1,
     "2:40: AttributeError: 'object' object attribute '__reduce__' is outside gradcli's language"),
    ("import json\ntry:\n    json.loads('[')\nexcept json.JSONDecodeError as e:\n    e.__traceback__", 1,
     "5:5: AttributeError: 'JSONDecodeError' object attribute '__traceback__' is outside gradcli's language"),
    # heapq and bisect: what they take whole is bounded; insort into a non-list reads `insert` as a script does
    ("import heapq\nheapq.nlargest(1, range(10 ** 12))", 1,
     "2:1: MemoryError: a list of 1000000000000 items is too large (gradcli allows at most 100000000)"),
    ("import heapq\nimport torch\nheapq.heappush(torch, 1)", 1,
     "3:1: TypeError: heappush() argument 1 must be list, not module"),
    ("import bisect\nimport torch\nbisect.insort(torch.ones(2), 1)", 1, "3:1: TypeError: Tensor is not a sequence"),
    ("import bisect\nbisect.insort((1, 2), 3)", 1, "2:1: AttributeError: 'tuple' object has no attribute 'insert'"),
    ("import bisect\nbisect.bisect([1], 1, key=lambda v: v.__class__.__subclasses__())", 1,
     "2:37: AttributeError: 'type' object attribute '__subclasses__' is outside gradcli's language"),
    # pprint and textwrap: built within the bound of a string, written only where print writes
    ("import pprint\npprint.PrettyPrinter", 1, "2:1: NotImplementedError: gradcli does not implement "
                                               "pprint.PrettyPrinter"),
    ("import pprint\npprint.pprint(1, stream=[])", 1, "2:1: AttributeError: 'list' object has no attribute 'write'"),
    ("import pprint\nimport torch\npprint.pprint(1, stream=torch.ones(1))", 1,
     "3:1: AttributeError: 'Tensor' object has no attribute 'write'"),
    ("import textwrap\ntextwrap.TextWrapper", 1, "2:1: NotImplementedError: gradcli does not implement "
                                                 "textwrap.TextWrapper"),
    # traceback: the text of an exception, never a traceback, frame, code object or file
    ("import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError as e:\n    traceback.extract_tb(e)", 1,
     "5:5: NotImplementedError: gradcli does not implement traceback.extract_tb"),
    ("import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError as e:\n    traceback.walk_tb", 1,
     "5:5: NotImplementedError: gradcli does not implement traceback.walk_tb"),
    ("import traceback\ntraceback.StackSummary", 1,
     "2:1: NotImplementedError: gradcli does not implement traceback.StackSummary"),
    ("import traceback\ntraceback.linecache", 1,
     "2:1: AttributeError: module 'traceback' attribute 'linecache' is outside gradcli's language"),
    ("import traceback\ntraceback.sys", 1, "2:1: AttributeError: module 'traceback' attribute 'sys' is outside "
                                           "gradcli's language"),
    ("import traceback\ntraceback.print_exc.__globals__", 1,
     "2:1: AttributeError: 'function' object has no attribute '__globals__'"),
    ("import traceback, inspect\ntraceback.print_stack(inspect.currentframe())", 1,
     "2:1: TypeError: traceback.format_stack() of a frame is outside gradcli's language: scripts hold no frame "
     "objects"),
    ("import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError as e:\n    traceback.print_exception(type(e), e, e.__traceback__)", 1,
     "5:43: AttributeError: 'ZeroDivisionError' object attribute '__traceback__' is outside gradcli's language"),
    ("import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError as e:\n    traceback.print_exception(type(e), e, 'tb')", 1,
     "5:5: AttributeError: 'str' object has no attribute 'tb_frame'"),
    ("import traceback\ntry:\n    1 / 0\nexcept ZeroDivisionError as e:\n    traceback.print_exc(file=[])", 1,
     "5:5: AttributeError: 'list' object has no attribute 'write'"),
    # logging: the session's own loggers writing to the script's streams; no files, no process-wide hooks, no
    # manager, no traceback in a record, methods only on their own class's objects
    ("import logging\nlogging.basicConfig(filename='/tmp/x.log')", 1, "2:1: ValueError: logging.basicConfig("
     "filename=...) is outside gradcli's language: scripts cannot write files or reach the network (log to a stream: "
     "StreamHandler, basicConfig(stream=))"),
    ("import logging.handlers", 1, "1:1: ImportError: import of 'logging.handlers' is outside gradcli's language: "
     "scripts cannot write files or reach the network (log to a stream: StreamHandler, basicConfig(stream=))"),
    ("import logging\nlogging.Logger.manager", 1, "2:1: AttributeError: type object 'Logger' attribute 'manager' is "
     "outside gradcli's language"),
    ("import logging\nlogging.setLoggerClass(dict)", 1, "2:1: AttributeError: module 'logging' attribute "
     "'setLoggerClass' is outside gradcli's language: a script's loggers are logging.Logger objects (derive from it "
     "and make one directly)"),
    ("import logging\nlogging.root.__dict__", 1, "2:1: AttributeError: 'RootLogger' object attribute '__dict__' is "
     "outside gradcli's language"),
    ("import logging\nlogging.StreamHandler().stream.buffer", 1, "2:1: AttributeError: 'TextIOWrapper' object "
     "attribute 'buffer' is outside gradcli's language"),
    ("import logging\nlogging.Logger.__init__(print, 'x')", 1, "2:1: TypeError: Logger.__init__() of a "
     "'builtin_function_or_method' object is outside gradcli's language: it takes logging.Logger objects"),
    ("import logging\nlogging.makeLogRecord({'__array_interface__': {}})", 1, "2:1: AttributeError: setting "
     "'__array_interface__' through an object's __dict__ is outside gradcli's language"),
    # types: SimpleNamespace only; its instances give what they hold and their __dict__, no other internals, and
    # a key the script puts in that dict reaches no Python machinery
    ("import types\ntypes.FunctionType", 1, "2:1: NotImplementedError: gradcli does not implement types.FunctionType"),
    ("import types\ntypes.CodeType", 1, "2:1: NotImplementedError: gradcli does not implement types.CodeType"),
    *[(f"from types import SimpleNamespace\nSimpleNamespace(a=1).{name}", 1, "2:1: AttributeError: "
       f"'types.SimpleNamespace' object attribute '{name}' is outside gradcli's language")
      for name in ("__reduce__", "__reduce_ex__", "__init__", "__getattribute__", "__setattr__", "__eq__")],
    ("from types import SimpleNamespace\nsetattr(SimpleNamespace(), '__class__', int)", 1, "2:1: AttributeError: "
     "'types.SimpleNamespace' object attribute '__class__' is outside gradcli's language"),
    ("from types import SimpleNamespace\nn = SimpleNamespace()\nvars(n)['__getattr__'] = print\nn.__getattr__", 1,
     "4:1: AttributeError: 'types.SimpleNamespace' object attribute '__getattr__' is outside gradcli's language"),
    ("from types import SimpleNamespace\ndel SimpleNamespace(a=1).__dict__", 1, "2:5: AttributeError: "
     "'types.SimpleNamespace' object attribute '__dict__' is outside gradcli's language"),
    ("from types import SimpleNamespace\nSimpleNamespace.__subclasses__", 1, "2:1: AttributeError: 'type' object "
     "attribute '__subclasses__' is outside gradcli's language"),
    ("from types import SimpleNamespace\nclass N(SimpleNamespace):\n    pass", 1, "2:1: TypeError: subclassing "
     "'SimpleNamespace' is outside gradcli's language: a script's class may derive from its own classes, object, "
     "dict, list, tuple, set, frozenset, a namedtuple, the collections' OrderedDict, defaultdict and Counter, the "
     "exception classes and the library classes gradcli provides"),
    # re and unicodedata: CPython's Pattern and Match give their documented attributes only (no scanner, no
    # internals, no unbound methods that would skip the bounds), DEBUG would write to the process's stdout
    ("import re\nre.compile('a').scanner('a')", 1, "2:1: AttributeError: 're.Pattern' object attribute 'scanner' "
     "is outside gradcli's language: it is internal to CPython's matcher"),
    ("import re\nre.match('a', 'a').regs", 1, "2:1: AttributeError: 're.Match' object attribute 'regs' is outside "
     "gradcli's language: it is internal to CPython's matcher"),
    *[(f"import re\ngetattr(re.compile('a'), '{name}')", 1, f"2:1: AttributeError: 're.Pattern' object attribute "
       f"'{name}' is outside gradcli's language") for name in ("__reduce__", "__copy__", "__class_getitem__")],
    *[(f"import re\ngetattr(re.match('a', 'a'), '{name}')", 1, f"2:1: AttributeError: 're.Match' object attribute "
       f"'{name}' is outside gradcli's language") for name in ("__reduce__", "__getitem__", "__deepcopy__")],
    ("import re\ngetattr(re.finditer('a', 'a'), '__reduce__')", 1, "2:1: AttributeError: 'callable_iterator' object "
     "attribute '__reduce__' is outside gradcli's language"),
    ("import re\nre.Pattern.sub", 1, "2:1: AttributeError: 'type' object attribute 'sub' is outside gradcli's "
                                     "language"),
    ("import re\nre.Match.expand", 1, "2:1: AttributeError: 'type' object attribute 'expand' is outside gradcli's "
                                      "language"),
    ("import re\nvars(re.compile('a'))", 1, "2:1: AttributeError: 're.Pattern' object attribute '__dict__' is "
                                            "outside gradcli's language"),
    ("import re\nre.compile('a').sub.__self__", 1, "2:1: AttributeError: 'builtin_function_or_method' object "
     "attribute '__self__' is outside gradcli's language"),
    ("import re\nre.sub.__globals__", 1, "2:1: AttributeError: 'function' object has no attribute '__globals__'"),
    ("import re\ntry:\n    re.compile('(')\nexcept re.error as e:\n    e.__traceback__", 1,
     "5:5: AttributeError: 'error' object attribute '__traceback__' is outside gradcli's language"),
    ("import re\nre.sub('a', lambda m: m.re.__class__.__subclasses__, 'a')", 1, "2:23: AttributeError: 'type' object "
     "attribute '__subclasses__' is outside gradcli's language"),
    ("import re\nclass P(re.Pattern):\n    pass", 1, "2:1: TypeError: subclassing 'Pattern' is outside gradcli's "
     "language: a script's class may derive from its own classes, object, dict, list, tuple, set, frozenset, a "
     "namedtuple, the collections' OrderedDict, defaultdict and Counter, the exception classes and the library "
     "classes gradcli provides"),
    ("import re\nre.compile('a', re.DEBUG)", 1, "2:17: AttributeError: module 're' attribute 'DEBUG' is outside "
     "gradcli's language: its dump of a pattern writes to the process's stdout"),
    ("import re\nre.compile('a', 128)", 1, "2:1: NotImplementedError: gradcli does not implement re.DEBUG: its dump "
     "of a pattern writes to the process's stdout"),
    ("import unicodedata\nunicodedata.UCD", 1, "2:1: AttributeError: module 'unicodedata' attribute 'UCD' is outside "
     "gradcli's language: gradcli offers the current Unicode database only"),
    # DataLoader workers, emulated in-process: the iterator's workers and a WorkerInfo's internals stay out of reach
    ("import torch\nds = torch.utils.data.TensorDataset(torch.arange(2.))\n"
     "iter(torch.utils.data.DataLoader(ds, num_workers=1))._workers", 1,
     "3:1: AttributeError: '_WorkerLoaderIter' object attribute '_workers' is outside gradcli's language"),
    ("import torch\nds = torch.utils.data.TensorDataset(torch.arange(2.))\nL = torch.utils.data.DataLoader(ds, "
     "num_workers=1, collate_fn=lambda b: torch.utils.data.get_worker_info().__dict__)\nlist(L)", 1,
     "3:73: AttributeError: 'WorkerInfo' object attribute '__dict__' is outside gradcli's language"),
    ("import torch\nds = torch.utils.data.TensorDataset(torch.arange(2.))\nL = torch.utils.data.DataLoader(ds, "
     "num_workers=1, collate_fn=lambda b: torch.utils.data.get_worker_info().__reduce__)\nlist(L)", 1,
     "3:73: AttributeError: 'WorkerInfo' object attribute '__reduce__' is outside gradcli's language"),
    # io: in-memory streams only; no file descriptor, no file, no view of the buffer, growth bounded as strings
    ("import io\nio.BytesIO().fileno()", 1, "2:1: io.UnsupportedOperation: fileno"),
    ("import io\nio.StringIO().fileno()", 1, "2:1: io.UnsupportedOperation: fileno"),
    ("import io\nio.BytesIO().detach()", 1, "2:1: io.UnsupportedOperation: detach"),
    *[(f"import io\nio.{name}", 1, f"2:1: AttributeError: module 'io' attribute '{name}' is outside gradcli's "
       "language: gradcli's io has the in-memory streams (BytesIO, StringIO) only: scripts cannot read or write "
       "files") for name in ("open", "open_code", "FileIO", "TextIOWrapper", "BufferedReader", "BufferedRandom")],
    ("import io\nio._io", 1, "2:1: AttributeError: module 'io' attribute '_io' is outside gradcli's language"),
    ("import io\nio.BytesIO().getbuffer()", 1, "2:1: AttributeError: '_io.BytesIO' object attribute 'getbuffer' is "
     "outside gradcli's language: scripts cannot hold memoryviews (use getvalue() or read())"),
    ("import io\nio.BytesIO().__reduce_ex__(2)", 1, "2:1: AttributeError: '_io.BytesIO' object attribute "
                                                    "'__reduce_ex__' is outside gradcli's language"),
    ("import io\nio.StringIO().__getstate__()", 1, "2:1: AttributeError: '_io.StringIO' object attribute "
                                                   "'__getstate__' is outside gradcli's language"),
    ("import io\nio.StringIO().write.__self__", 1, "2:1: AttributeError: 'builtin_function_or_method' object "
                                                   "attribute '__self__' is outside gradcli's language"),
    ("import io\nio.BytesIO.__init__", 1, "2:1: AttributeError: 'type' object attribute '__init__' is outside "
                                          "gradcli's language"),
    ("import io\nio.StringIO().buffer", 1, "2:1: AttributeError: '_io.StringIO' object has no attribute 'buffer'"),
    ("import io\nclass B(io.BytesIO):\n    pass", 1, "2:1: TypeError: subclassing 'BytesIO' is outside gradcli's "
     "language: a script's class may derive from its own classes, object, dict, list, tuple, set, frozenset, a namedtuple, the collections' OrderedDict, defaultdict and Counter, the exception classes and the library "
     "classes gradcli provides"),
    ("import io\ns = io.StringIO()\ns.seek(10 ** 12)\ns.write('x')", 1,
     "4:1: MemoryError: a str of 1000000000001 items is too large (gradcli allows at most 100000000)"),
    ("import io\nimport torch\nb = io.BytesIO()\ntorch.save(1, b)\nb.seek(10 ** 12)\nb.writelines([b.getvalue()])", 1,
     "6:1: MemoryError: a bytes of 1000000000027 items is too large (gradcli allows at most 100000000)"),
    # warnings: a filter's pattern cannot run without end in C; the records hold nothing behind them
    ("import warnings\nwarnings.filterwarnings('ignore', '(x+x+)+y')", 1,
     "2:1: ValueError: the warnings filter pattern '(x+x+)+y' repeats a repetition or alternatives: outside "
     "gradcli's language (its matching time could grow without bound)"),
    ("import warnings\nwarnings.filters", 1, "2:1: AttributeError: module 'warnings' attribute 'filters' is outside "
                                             "gradcli's language"),
    ("import warnings\nwith warnings.catch_warnings(record=True) as w:\n    warnings.warn('x')\nw[0].__class__.__init__",
     1, "4:1: AttributeError: 'type' object attribute '__init__' is outside gradcli's language"),
    # autocast and GradScaler: their state (the scale tensor's array, the regions, the class's insides) is not
    # the script's
    (T + 's = torch.amp.GradScaler("cpu")\ns.scale(torch.ones(1))\ns._scale._a', 1,
     "4:1: AttributeError: 'GradScaler' object attribute '_scale' is outside gradcli's language"),
    (T + 's = torch.amp.GradScaler("cpu")\ns.__class__.__init__.__globals__', 1,
     "3:1: AttributeError: 'type' object attribute '__init__' is outside gradcli's language"),
    (T + 'a = torch.autocast("cpu")\na._region', 1,
     "3:1: AttributeError: 'autocast' object attribute '_region' is outside gradcli's language"),
    # torch.compile: a compiled function shows its name and the function it wraps (the script's own), nothing
    # of its own; an OptimizedModule is an nn.Module
    (T + 'f = torch.compile(lambda x: x)\nf.eager', 1,
     "3:1: AttributeError: 'function' object attribute 'eager' is outside gradcli's language"),
    (T + 'f = torch.compile(lambda x: x)\nf.__call__.__globals__', 1,
     "3:1: AttributeError: 'function' object attribute '__call__' is outside gradcli's language"),
    (T + 'm = torch.compile(torch.nn.Linear(1, 1))\nm.forward.__globals__', 1,
     "3:1: AttributeError: 'method' object attribute '__globals__' is outside gradcli's language"),
    # register_multi_grad_hook: its handles, and the hooks it registers, show nothing behind them
    (T + "x = torch.ones(1, requires_grad=True)\nh = torch.autograd.graph.register_multi_grad_hook([x], print)\n"
     "h.handles[0]._node", 1,
     "4:1: AttributeError: 'RemovableHandle' object attribute '_node' is outside gradcli's language"),
    (T + "x = torch.ones(1, requires_grad=True)\ntorch.autograd.graph.register_multi_grad_hook([x], print).id", 1,
     "3:1: AttributeError: '_MultiHandle' object has no attribute 'id'"),
    # torch.utils.checkpoint: its functions call what the script gives them, and nothing behind them is reachable
    ("import torch.utils.checkpoint as cp\ncp._Region", 1,
     "2:1: AttributeError: module 'torch.utils.checkpoint' attribute '_Region' is outside gradcli's language"),
    ("from torch.utils.checkpoint import checkpoint\ncheckpoint.__globals__", 1,
     "2:1: AttributeError: 'function' object has no attribute '__globals__'"),
    (T + "import torch.utils.checkpoint as cp\ncp.checkpoint(getattr, torch.ones(1), '_a', use_reentrant=False)", 1,
     "3:1: AttributeError: 'Tensor' object has no attribute '_a'"),
    # statistics' exact sums make a fractions.Fraction of each item and call the data's class with one: not a
    # script's class
    ("import statistics\nclass N:\n    def __init__(self, v):\n        self.v = v\n    def as_integer_ratio(self):\n"
     "        return (self.v, 1)\nstatistics.mean([N(1), N(2)])", 1, "7:1: TypeError: statistics.mean() of 'N' objects "
     "is outside gradcli's language: it takes numbers"),
    ("import statistics\nclass N:\n    def __rsub__(self, x):\n        return self\n"
     "statistics.variance([1, 2], N())", 1, "5:1: TypeError: statistics.variance() of 'N' objects is outside "
     "gradcli's language: it takes numbers"),
    # a match statement's class pattern reads attributes as `obj.name` does: what that refuses, it refuses
    ("class A:\n    pass\nmatch A():\n    case A(__weakref__=d): pass", 1,
     "4:10: " + _OUTSIDE.format("'A' object", "__weakref__")),
    ("class A:\n    pass\nmatch A():\n    case A(__class__=type(__bases__=(type(__subclasses__=s),))): pass", 1,
     "4:38: " + _OUTSIDE.format("'type' object", "__subclasses__")),
    ("class A:\n    __match_args__ = ('__weakref__',)\nmatch A():\n    case A(d): pass", 1,
     "4:10: " + _OUTSIDE.format("'A' object", "__weakref__")),
    ("def f():\n    pass\nmatch f:\n    case object(__globals__=g): pass", 1,
     "4:10: " + _OUTSIDE.format("'function' object", "__globals__")),
    (T + "match torch.ones(1):\n    case torch.Tensor(numpy=n): pass", 1,
     "3:10: " + _OUTSIDE.format("'Tensor' object", "numpy") + ": " + _NO_ARRAYS),
    (T + "match torch.ones(1):\n    case torch.Tensor(share_memory_=p): pass", 1,
     "3:10: " + _OUTSIDE.format("'Tensor' object", "share_memory_") + ": " + _NO_POINTERS),
    # dunder names and attributes: Python's internals are refused when read, whatever the object
    ("x = 1\nx.__reduce__", 1, "2:1: " + _OUTSIDE.format("'int' object", "__reduce__")),
    ("().__reduce__.__bases__[0].__subclasses__()", 1, "1:1: " + _OUTSIDE.format("'tuple' object", "__reduce__")),
    # `obj.__class__` is type(obj), as in Python: what is behind the class stays refused
    ("().__class__.__bases__[0].__subclasses__()", 1, "1:1: " + _OUTSIDE.format("'type' object", "__bases__")),
    (T + "x = torch.ones(1)\nx.__class__.__mro__", 1, "3:1: " + _OUTSIDE.format("type object 'Tensor'", "__mro__")),
    (T + "x = torch.ones(1)\nx.__class__.__new__(x.__class__)", 1,
     "3:1: " + _OUTSIDE.format("type object 'Tensor'", "__new__")),
    (T + "torch.Tensor.__class__.__init__", 1, "2:1: " + _OUTSIDE.format("'type' object", "__init__")),
    (GRAD + "x.grad_fn.__class__.__call__", 1, "3:1: " + _OUTSIDE.format("'type' object", "__call__")),
    ("class A:\n    pass\nA.__class__.__call__(A)", 1, "3:1: " + _OUTSIDE.format("'type' object", "__call__")),
    ("(1).__class__.__class__('X', (), {'__getattribute__': print})", 1, "1:1: TypeError: defining __getattribute__ "
                                                                         "in a class is outside gradcli's language"),
    ("(1).__class__.__class__.__class__.mro(int)", 1, "1:1: " + _OUTSIDE.format("'type' object", "mro")),
    ("print.__class__.__call__", 1, "1:1: " + _OUTSIDE.format("'type' object", "__call__")),
    ("'{0.__class__.__bases__}'.format(1)", 1, "1:1: " + _OUTSIDE.format("'type' object", "__bases__")),
    ("getattr(getattr(1, '__class__'), '__subclasses__')", 1,
     "1:1: " + _OUTSIDE.format("'type' object", "__subclasses__")),
    (C + "Counter().__class__.__dict__", 1, "2:1: " + _OUTSIDE.format("'type' object", "__dict__")),
    ("class A:\n    pass\ndel A().__class__", 1, "3:5: " + _OUTSIDE.format("'A' object", "__class__")),
    # a function's own attributes are a dict of the script's values; Python's stay out of reach
    ("def f():\n    pass\nf.x = 1\nf.__dict__", 1, "4:1: " + _OUTSIDE.format("'function' object", "__dict__")),
    ("def f():\n    pass\nf.__code__ = 1", 1, "3:1: AttributeError: 'function' object attribute '__code__' is "
                                              "read-only"),
    ("def f():\n    pass\nf.globals = 1\nf.__globals__", 1, "4:1: " + _OUTSIDE.format("'function' object",
                                                                                       "__globals__")),
    # torch.finfo / torch.iinfo: their fields are Python numbers and a str
    (T + "torch.finfo().__slots__", 1, "2:1: " + _OUTSIDE.format("'torch.finfo' object", "__slots__")),
    (T + "torch.iinfo(torch.int8).__class__.__init__", 1, "2:1: " + _OUTSIDE.format("type object 'iinfo'", "__init__")),
    (T + "f = torch.finfo()\nf.eps = 1.0", 1, "3:1: AttributeError: 'torch.finfo' object attribute 'eps' is read-only"),
    # an exception's __cause__ is what the script's `raise ... from` gave
    ("try:\n    raise ValueError from KeyError\nexcept ValueError as e:\n    e.__cause__.__traceback__", 1,
     "4:5: " + _OUTSIDE.format("'KeyError' object", "__traceback__")),
    ("try:\n    raise ValueError from KeyError\nexcept ValueError as e:\n    e.__context__", 1,
     "4:5: " + _OUTSIDE.format("'ValueError' object", "__context__")),
    ("__import__('os')", 1, "1:1: NameError: name '__import__' is not defined"),
    ("__builtins__", 1, "1:1: NameError: name '__builtins__' is not defined"),
    (T + "torch.ones.__globals__", 1, "2:1: AttributeError: 'builtin_function_or_method' object has no attribute "
                                      "'__globals__'"),
    ("print.__self__", 1, "1:1: " + _OUTSIDE.format("'builtin_function_or_method' object", "__self__")),
    ("import math\nmath.__loader__", 1, "2:1: " + _OUTSIDE.format("module 'math'", "__loader__")),
    (T + "torch._C", 1, "2:1: " + _OUTSIDE.format("module 'torch'", "_C")),
    (T + "x = torch.ones(1)\nf'{x.__reduce__}'", 1, "3:4: " + _OUTSIDE.format("'Tensor' object", "__reduce__")),
    ("x = 1\nf'{x:{x.__reduce__}}'", 1, "2:7: " + _OUTSIDE.format("'int' object", "__reduce__")),
    # a script's generator: its frame and code are Python's, and gradcli's own generators are not driven
    ("def g():\n    yield 1\ng().gi_frame.f_globals", 1, "3:1: " + _OUTSIDE.format("'generator' object", "gi_frame")),
    ("def g():\n    yield 1\ng().gi_code", 1, "3:1: " + _OUTSIDE.format("'generator' object", "gi_code")),
    (T + "torch.nn.Linear(1, 1).parameters().throw(ValueError)", 1,
     "2:1: " + _OUTSIDE.format("'generator' object", "throw")),
    ("(i for i in [1]).gi_frame", 1, "1:1: " + _OUTSIDE.format("'generator' object", "gi_frame")),
    ("def f():\n    pass\nf.__globals__", 1, "3:1: " + _OUTSIDE.format("'function' object", "__globals__")),
    ("f = lambda: 0\nf.__code__", 1, "2:1: " + _OUTSIDE.format("'function' object", "__code__")),
    ("class A:\n    pass\nA().__reduce__", 1, "3:1: " + _OUTSIDE.format("'A' object", "__reduce__")),
    ("class A:\n    pass\nA.__bases__[0].__subclasses__()", 1, "3:1: " + _OUTSIDE.format("'type' object", "__subclasses__")),
    ("class A:\n    pass\nA.__mro__[-1].__subclasses__", 1, "3:1: " + _OUTSIDE.format("'type' object", "__subclasses__")),
    ("class A(dict):\n    pass\nA.__bases__", 1, "3:1: " + _OUTSIDE.format("type object 'A'", "__bases__")),
    ("class A(ValueError):\n    pass\nA.__mro__[1].__subclasses__()", 1, "3:1: " + _OUTSIDE.format("'type' object", "__subclasses__")),
    ("class A:\n    def f(self):\n        return super().__thisclass__\nA().f()", 1,
     "3:16: " + _OUTSIDE.format("'super' object", "__thisclass__")),
    ("class A:\n    pass\na = A()\na.__class__ = int", 1, "4:1: " + _OUTSIDE.format("'A' object", "__class__")),
    ("class A:\n    pass\nA.__getattribute__ = print", 1, "3:1: " + _OUTSIDE.format("type object 'A'",
                                                                                       "__getattribute__")),
    ("class A:\n    def __class_getitem__(cls, item):\n        pass", 2, "2:5: SyntaxError: defining "
                                                                         "__class_getitem__ in a class is not part of gradcli's language"),
    ("class A:\n    __new__ = print", 1, "1:1: TypeError: defining __new__ in a class is outside gradcli's language: it "
                                         "takes the script's own function"),
    ("import torch\nclass A:\n    def __new__(cls):\n        return object.__new__(type(torch.nn.Linear(1, 1)))\nA()", 1,
     "4:16: TypeError: Linear.__new__ reached through __new__ is outside gradcli's language: it makes objects of "
     "the script's own classes"),
    ("import torch\nclass A:\n    def __new__(cls):\n        return super().__new__(torch.optim.SGD)\nA()", 1,
     "4:16: TypeError: object.__new__(X): X is not a type object (builtin_function_or_method)"),
    ("class A:\n    def __set_name__(self, owner, name):\n        pass", 2, "2:5: SyntaxError: defining __set_name__ "
                                                                         "in a class is not part of gradcli's language"),
    ("class A(**{'metaclass': type}):\n    pass", 2, "1:9: SyntaxError: `**` in a class's keywords is not part of "
                                                     "gradcli's language"),
    ("class A:\n    __class_getitem__ = ()", 2, "2:5: SyntaxError: defining __class_getitem__ in a class is not part "
                                                "of gradcli's language"),
    ("class A:\n    __slots__ = ('__del__',)", 1, "1:1: TypeError: a slot named __del__ is outside gradcli's language"),
    ("class A:\n    __slots__ = ['x', '__getattribute__']", 1, "1:1: TypeError: a slot named __getattribute__ is outside "
                                                            "gradcli's language"),
    ("class A:\n    __slots__ = ('w',)\nA.w.__set__", 1, "3:1: " + _OUTSIDE.format("'member_descriptor' object", "__set__")),
    ("class A:\n    __slots__ = ('w',)\nA.w.__objclass__", 1, "3:1: " + _OUTSIDE.format("'member_descriptor' object",
                                                                                   "__objclass__")),
    ("class A:\n    __slots__ = ('w',)\nA().__dict__", 1,
     "3:1: AttributeError: 'A' object has no attribute '__dict__'. Did you mean: '__dir__'?"),
    # an object's __dict__ takes what `obj.name = value` takes (gradcli.language.classes.AttributeDict)
    ("class A:\n    pass\nvars(A())['__class__'] = int", 1,
     "3:1: AttributeError: setting '__class__' through an object's __dict__ is outside gradcli's language"),
    ("class A:\n    pass\nA().__dict__.update({'__array_interface__': {}})", 1,
     "3:1: AttributeError: setting '__array_interface__' through an object's __dict__ is outside gradcli's language"),
    ("class A:\n    pass\nvars(A()).setdefault('__len__', 1)", 1,
     "3:1: AttributeError: setting '__len__' through an object's __dict__ is outside gradcli's language"),
    ("class A:\n    pass\nd = A().__dict__\nd |= {'__index__': 1}", 1,
     "4:1: AttributeError: setting '__index__' through an object's __dict__ is outside gradcli's language"),
    ("class A:\n    pass\nA().__dict__[1] = 2", 1, "3:1: TypeError: an attribute name must be a str, not 'int': a 'int' "
     "key in an object's __dict__ is outside gradcli's language"),
    ("import torch\nvars(torch.nn.Linear(2, 2)).pop('_parameters')", 1, "2:1: AttributeError: deleting '_parameters' "
     "in a module's __dict__ is outside gradcli's language: gradcli keeps the module's tables itself"),
    ("import torch\ntorch.nn.Linear(2, 2).__dict__.clear()", 1, "2:1: AttributeError: deleting '_parameters' in a "
     "module's __dict__ is outside gradcli's language: gradcli keeps the module's tables itself"),
    ("import torch\nvars(torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.1))", 1,
     "2:1: " + _OUTSIDE.format("'SGD' object", "__dict__")),
    ("globals()['__builtins__']", 1, "1:1: KeyError: '__builtins__'"),
    # inspect looks at the script's own code only
    ("import inspect\ninspect.currentframe().f_builtins", 1, "2:1: " + _OUTSIDE.format("'frame' object", "f_builtins")),
    ("import inspect\ninspect.currentframe().f_code.co_code", 1, "2:1: " + _OUTSIDE.format("'code' object", "co_code")),
    ("import inspect, torch\ninspect.signature(torch.add)", 1, "2:1: NotImplementedError: gradcli does not implement "
     "inspect.signature of builtin_function_or_method objects other than a script's functions and classes"),
    ("import inspect, torch\ninspect.Signature.from_callable(torch.nn.functional.relu)", 1, "2:1: NotImplementedError: "
     "gradcli does not implement inspect.signature of builtin_function_or_method objects other than a script's "
     "functions and classes"),
    ("import inspect\ninspect.getmembers(1)", 1, "2:1: NotImplementedError: gradcli does not implement inspect.getmembers"),
    ("import inspect\ninspect.Parameter.__init__.__globals__", 1, "2:1: " + _OUTSIDE.format("'function' object",
                                                                                           "__globals__")),
    ("import inspect\ninspect.signature(lambda x: x).parameters['x'].__class__.__mro__", 1,
     "2:1: " + _OUTSIDE.format("type object 'Parameter'", "__mro__")),
    ("class A:\n    for __getattribute__ in [print]:\n        pass", 1, "1:1: TypeError: defining __getattribute__ in "
                                                                         "a class is outside gradcli's language"),
    ("class A(type):\n    pass", 1, "1:1: TypeError: subclassing 'type' is outside gradcli's language: a script's "
                                   "class may derive from its own classes, object, dict, list, tuple, set, frozenset, a namedtuple, the collections' OrderedDict, defaultdict and Counter, the exception classes and the "
                                   "library classes gradcli provides"),
    ("class A(metaclass=print):\n    pass", 1, "1:1: TypeError: metaclass=<built-in function print> is outside "
                                             "gradcli's language: a script's class may name abc.ABCMeta or type"),
    ("class A(B, **{'order': print}):\n    pass", 2, "1:12: SyntaxError: `**` in a class's keywords is not part of "
                                                     "gradcli's language"),
    ("x = 1\nx.\uff3f\uff3fclass\uff3f\uff3f", 2, "2:3: SyntaxError: invalid character '\uff3f' (U+FF3F)"),
    # imports: only torch (the modules gradcli provides) and math
    ("import os", 1, "1:1: " + _IMPORT.format("os")),
    # sys is in the language now, and no package: Python's own refusal of a submodule
    # as_strided reads only the storage a tensor has: every window is checked against its size before it is made
    ("import torch\ntorch.ones(3).as_strided((4,), (1,))", 1, "2:1: RuntimeError: setStorage: sizes [4], strides [1], "
     "storage offset 0, and itemsize 4 requiring a storage size of 16 are out of bounds for storage of size 12"),
    ("import torch\ntorch.ones(6)[4:].as_strided((2,), (1,), 5)", 1, "2:1: RuntimeError: setStorage: sizes [2], "
     "strides [1], storage offset 5, and itemsize 4 requiring a storage size of 28 are out of bounds for storage of "
     "size 24"),
    ("import torch\ntorch.ones(3).as_strided((2,), (2 ** 62,))", 1, "2:1: RuntimeError: Storage size calculation "
     "overflowed with sizes=[2] and strides=[4611686018427387904]"),
    ("import torch\ntorch.ones(3).as_strided((2,), (-1,), 2)", 1, "2:1: RuntimeError: as_strided: Negative strides "
     "are not supported at the moment, got strides: [-1]"),
    ("import torch\ntorch.ones(3).as_strided((1,), (1,), -5)", 1, "2:1: RuntimeError: Tensor: invalid storage offset -5"),
    # the memory formats are singletons: no way to their slot, their class's internals or a new instance
    ("import torch\ntorch.channels_last._name = 'contiguous_format'", 1, "2:1: AttributeError: 'torch.memory_format' "
     "object attribute '_name' is read-only"),
    ("import torch\ntorch.channels_last.__reduce__()", 1, "2:1: AttributeError: 'torch.memory_format' object "
     "attribute '__reduce__' is outside gradcli's language"),
    ("import torch\ntype(torch.channels_last).__subclasses__()", 1, "2:1: AttributeError: type object "
     "'memory_format' attribute '__subclasses__' is outside gradcli's language"),
    ("import torch\ntype(torch.channels_last)('x')", 1, "2:1: TypeError: cannot create 'torch.memory_format' "
     "instances"),
    ("import sys.os", 1, "1:1: ModuleNotFoundError: No module named 'sys.os'; 'sys' is not a package"),
    ("import subprocess as sp", 1, "1:1: " + _IMPORT.format("subprocess")),
    ("from os import system", 1, "1:1: " + _IMPORT.format("os")),
    ("import numpy", 1, "1:1: " + _IMPORT.format("numpy")),
    ("import builtins", 1, "1:1: " + _IMPORT.format("builtins")),
    ("import torch.utils.benchmark", 1, "1:1: ImportError: import of 'torch.utils.benchmark' is outside gradcli's "
                                         "language: gradcli knows only torch, torch.amp, torch.amp.autocast_mode, "
                                         "torch.amp.grad_scaler, torch.autograd, torch.autograd.forward_ad, torch.autograd.function, "
                                         "torch.autograd.functional, torch.autograd.graph, torch.backends, "
                                         "torch.backends.cuda, torch.backends.cudnn, "
                                         "torch.backends.mkl, torch.backends.mkldnn, torch.backends.mps, "
                                         "torch.backends.openmp, torch.compiler, torch.cpu, torch.cpu.amp, torch.cuda, "
                                         "torch.cuda.amp, "
                                         "torch.distributions, "
                                         "torch.distributions.bernoulli, torch.distributions.beta, "
                                         "torch.distributions.binomial, torch.distributions.categorical, "
                                         "torch.distributions.cauchy, torch.distributions.chi2, "
                                         "torch.distributions.constraints, torch.distributions.continuous_bernoulli, "
                                         "torch.distributions.dirichlet, torch.distributions.distribution, "
                                         "torch.distributions.exp_family, torch.distributions.exponential, "
                                         "torch.distributions.fishersnedecor, torch.distributions.gamma, "
                                         "torch.distributions.geometric, torch.distributions.gumbel, "
                                         "torch.distributions.half_cauchy, torch.distributions.half_normal, "
                                         "torch.distributions.independent, torch.distributions.kl, "
                                         "torch.distributions.kumaraswamy, torch.distributions.laplace, "
                                         "torch.distributions.lkj_cholesky, torch.distributions.log_normal, "
                                         "torch.distributions.logistic_normal, "
                                         "torch.distributions.lowrank_multivariate_normal, "
                                         "torch.distributions.mixture_same_family, torch.distributions.multinomial, "
                                         "torch.distributions.multivariate_normal, "
                                         "torch.distributions.negative_binomial, torch.distributions.normal, "
                                         "torch.distributions.one_hot_categorical, torch.distributions.pareto, "
                                         "torch.distributions.poisson, torch.distributions.relaxed_bernoulli, "
                                         "torch.distributions.relaxed_categorical, torch.distributions.studentT, "
                                         "torch.distributions.transformed_distribution, "
                                         "torch.distributions.transforms, torch.distributions.uniform, "
                                         "torch.distributions.von_mises, torch.distributions.weibull, "
                                         "torch.distributions.wishart, torch.fft, torch.func, "
                                         "torch.linalg, torch.nn, torch.nn.attention, torch.nn.functional, torch.nn.grad, torch.nn.init, torch.nn.utils,"
                                         " torch.nn.utils.parametrizations, torch.nn.utils.parametrize, "
                                         "torch.nn.utils.prune, torch.nn.utils.rnn, torch.optim, torch.optim.lr_scheduler, "
                                         "torch.optim.swa_utils, torch.random, "
                                         "torch.sparse, torch.special, torch.testing, torch.utils, torch.utils.checkpoint, "
                                         "torch.utils.data, torch.version "
                                         "and math"),
    ("from torch import from_file", 1, "1:1: ImportError: cannot import name 'from_file' from 'torch': it is outside "
                                       f"gradcli's language ({_NO_FILES})"),
    # Python's builtins outside the language
    ("getattr(1, '__reduce__')", 1, "1:1: AttributeError: 'int' object attribute '__reduce__' is outside gradcli's "
                                   "language"),
    ("eval('1 + 1')", 1, "1:1: " + _BUILTIN.format("eval")),
    ("exec('x = 1')", 1, "1:1: " + _BUILTIN.format("exec")),
    ("open('/etc/passwd')", 1, "1:1: " + _BUILTIN.format("open")),
    ("with open('f') as g:\n    pass", 1, "1:6: " + _BUILTIN.format("open")),
    ("compile('1', 'f', 'eval')", 1, "1:1: " + _BUILTIN.format("compile")),
    ("import torch\ndir(torch.nn.Linear(1, 1))", 1, "2:1: NotImplementedError: gradcli does not implement dir() of "
                                                    "Linear objects"),
    ("input()", 1, "1:1: " + _BUILTIN.format("input")),
    ("breakpoint()", 1, "1:1: " + _BUILTIN.format("breakpoint")),
    ("type('X', (), {'__get__': print})", 1, "1:1: TypeError: defining __get__ in a class is outside gradcli's "
                                              "language"),
    ("type('X', (), {1: 2})", 1, "1:1: TypeError: a class attribute named by a 'int' is outside gradcli's language"),
    ("type(1).mro()", 1, "1:1: AttributeError: 'type' object attribute 'mro' is outside gradcli's language"),
    ("setattr(print, 'end', 1)", 1, "1:1: AttributeError: 'builtin_function_or_method' object attribute 'end' is "
                                    "read-only"),
    ("object.__subclasses__()", 1, "1:1: " + _OUTSIDE.format("'type' object", "__subclasses__")),
    ("object().__reduce_ex__(2)", 1, "1:1: " + _OUTSIDE.format("'object' object", "__reduce_ex__")),
    # a name is normalised (NFKC) as CPython's are, before any rule reads it: fullwidth letters are the ASCII ones
    ("\uff45\uff56\uff41\uff4c('1')", 1, "1:1: NameError: name 'eval' is not defined: Python's builtin 'eval' is "
                                         "outside gradcli's language"),
    ("object._\uff3fsubclasses__()", 1, "1:1: " + _OUTSIDE.format("'type' object", "__subclasses__")),
    ("_\uff3fimport__('os')", 1, "1:1: NameError: name '__import__' is not defined"),
    # string formatting: fields read attributes through the allow-list
    ("'{0.__reduce__}'.format(1)", 1, "1:1: AttributeError: 'int' object attribute '__reduce__' is outside gradcli's "
                                     "language"),
    ("'{f.__self__}'.format_map({'f': len})", 1, "1:1: AttributeError: 'builtin_function_or_method' object "
                                                 "attribute '__self__' is outside gradcli's language"),
    ("str.format('{0.real.__reduce__}', 1)", 1, "1:1: AttributeError: 'int' object attribute '__reduce__' is outside "
                                               "gradcli's language"),
    ("str.mro", 1, "1:1: AttributeError: 'type' object attribute 'mro' is outside gradcli's language"),
    ("'a'.encode", 1, "1:1: AttributeError: 'str' object attribute 'encode' is outside gradcli's language"),
    ("'%(__class__)s' % [1]", 1, "1:1: TypeError: list indices must be integers or slices, not str"),
    # files, raw arrays and pointers
    # torch.save keeps its files in memory (gradcli.language.saving): nothing reaches the disk or Python's pickle
    (T + "torch.load('/etc/passwd')", 1, "2:1: FileNotFoundError: [Errno 2] No such file or directory: '/etc/passwd'"),
    (T + "torch.save(1, 'x.pt')\ntorch.load('x.pt', pickle_module=torch)", 1,
     "3:1: NotImplementedError: gradcli does not implement torch.save and torch.load with a pickle_module"),
    (T + "torch.save(torch.ones(1).sum, 'x.pt')\ntorch.load('x.pt', weights_only=False).__self__", 1,
     "3:1: AttributeError: 'builtin_function_or_method' object attribute '__self__' is outside gradcli's language"),
    (T + "torch.from_file('x.pt')", 1, f"2:1: AttributeError: module 'torch' attribute 'from_file' is outside "
                                       f"gradcli's language: {_NO_FILES}"),
    (T + "torch.from_numpy", 1, f"2:1: AttributeError: module 'torch' attribute 'from_numpy' is outside gradcli's "
                                f"language: {_NO_ARRAYS}"),
    (T + "torch.hub.load('a', 'b')", 1, "2:1: AttributeError: module 'torch' attribute 'hub' is outside gradcli's "
                                        "language: scripts cannot download code"),
    (T + "torch.utils.cpp_extension", 1, "2:1: AttributeError: module 'torch.utils' attribute 'cpp_extension' is "
                                         "outside gradcli's language: scripts cannot reach files, processes or the "
                                         "network"),
    (T + "torch.ops", 1, "2:1: AttributeError: module 'torch' attribute 'ops' is outside gradcli's language: "
                         "scripts cannot load native code"),
    # print(file=...): sys.stdout, sys.stderr or a script's object, whose write is read as the script reads it
    ("print('x', file=1)", 1, "1:1: AttributeError: 'int' object has no attribute 'write'"),
    (T + "print('x', file=torch.nn.Linear(1, 1))", 1, "2:1: AttributeError: 'Linear' object has no attribute 'write'"),
    (T + "torch.ones(2).numpy()", 1, "2:1: AttributeError: 'Tensor' object attribute 'numpy' is outside gradcli's "
                                     f"language: {_NO_ARRAYS}"),
    (T + "torch.Generator().get_state().numpy()", 1, "2:1: AttributeError: 'Tensor' object attribute 'numpy' is "
                                                     f"outside gradcli's language: {_NO_ARRAYS}"),
    # storages give their bytes and virtual addresses (gradcli.engine.addresses), never the array behind them
    (T + "torch.ones(2).untyped_storage()._owner", 1, "2:1: " + _OUTSIDE.format("'UntypedStorage' object", "_owner")),
    (T + "torch.ones(2).untyped_storage()._values()", 1,
     "2:1: " + _OUTSIDE.format("'UntypedStorage' object", "_values")),
    (T + "getattr(torch.ones(2).untyped_storage(), '_owner')", 1,
     "2:1: " + _OUTSIDE.format("'UntypedStorage' object", "_owner")),
    (T + "torch.ones(2).untyped_storage().data_ptr.__self__", 1,
     "2:1: " + _OUTSIDE.format("'builtin_function_or_method' object", "__self__")),
    (T + "s = torch.ones(2).untyped_storage()\ns[0] = 7", 1,
     "3:1: NotImplementedError: gradcli does not implement writing into a tensor's storage"),
    # gradcli's own objects: only their listed attributes
    ("def f():\n    pass\nf.globals", 1, "3:1: AttributeError: 'function' object attribute 'globals' is "
                                         "outside gradcli's language"),
    ("def f():\n    pass\nf.body", 1, "3:1: AttributeError: 'function' object attribute 'body' is outside "
                                      "gradcli's language"),
    (T + "torch.ones.globals", 1, "2:1: AttributeError: 'builtin_function_or_method' object has no attribute 'globals'"),
    (GRAD + "x.grad_fn.apply", 1, "3:1: AttributeError: 'MulBackward0' object has no attribute 'apply'"),
    (T + "torch.float32.name", 1, "2:1: AttributeError: 'torch.dtype' object attribute 'name' is outside gradcli's "
                                  "language"),
    (T + "torch.linalg.LinAlgError('x').with_traceback", 1, "2:1: AttributeError: 'torch._C._LinAlgError' object "
                                                            "attribute 'with_traceback' is outside gradcli's language"),
    ("import math\nmath.sys", 1, "2:1: AttributeError: module 'math' has no attribute 'sys'"),
    (T + "torch.autograd.profiler", 1, "2:1: NotImplementedError: gradcli does not implement torch.autograd.profiler"),
    # type objects are no constructors of anything but gradcli's own values, and functions keep their insides
    (T + "torch.dtype('float32')", 1, "2:1: TypeError: cannot create 'torch.dtype' instances"),
    (T + "torch.dtype('O', 1, 1, 'x')", 1, "2:1: TypeError: cannot create 'torch.dtype' instances"),
    (T + "torch.dtype()", 1, "2:1: TypeError: cannot create 'torch.dtype' instances"),
    (T + "torch.Size(['a'])", 1, "2:1: TypeError: torch.Size() takes an iterable of 'int' (item 0 is 'str')"),
    (T + "torch.Size([1, torch.ones(2)])", 1, "2:1: TypeError: torch.Size() takes an iterable of 'int' (item 1 is "
                                              "'Tensor')"),
    (T + "torch.Size([2.5])", 1, "2:1: TypeError: torch.Size() takes an iterable of 'int' (item 0 is 'float')"),
    (T + "torch.Size([2 ** 64])", 1, "2:1: ValueError: Overflow when unpacking long long"),
    (T + "torch.dtype.func", 1, "2:1: AttributeError: type object 'torch.dtype' has no attribute 'func'"),
    (T + "torch.Size.func", 1, "2:1: AttributeError: type object 'torch.Size' has no attribute 'func'"),
    (T + "torch.Tensor.keywords", 1, "2:1: AttributeError: type object 'Tensor' has no attribute 'keywords'"),
    (T + "torch.Generator.args", 1, "2:1: AttributeError: type object 'torch._C.Generator' has no attribute 'args'"),
    ("print.func", 1, "1:1: AttributeError: 'builtin_function_or_method' object has no attribute 'func'"),
    (T + "torch.ones(2).add.func", 1, "2:1: AttributeError: 'builtin_function_or_method' object has no attribute "
                                      "'func'"),
    (T + "import torch.nn.functional as F\nF.relu.func", 1, "3:1: AttributeError: 'function' object has no "
                                                            "attribute 'func'"),
    (T + "torch.float32.np", 1, "2:1: AttributeError: 'torch.dtype' object attribute 'np' is outside gradcli's language"),
    (T + "torch.default_generator.manual_seed.func", 1, "2:1: AttributeError: 'builtin_function_or_method' object "
                                                        "has no attribute 'func'"),
    # constructs outside the language
    ("f = lambda: 0\nf.globals", 1, "2:1: AttributeError: 'function' object attribute 'globals' is outside "
                                   "gradcli's language"),
    ("try:\n    1 / 0\nexcept BaseException:\n    pass", 1, "3:8: " + _BUILTIN.format("BaseException")),
    (T + "try:\n    (torch.ones(2, requires_grad=True) * 2).backward()\nexcept RuntimeError as e:\n    e.output",
     1, "5:5: AttributeError: 'RuntimeError' object attribute 'output' is outside gradcli's language"),
    ("nonlocal x", 2, "1:1: SyntaxError: nonlocal declaration not allowed at module level"),
    ("raise KeyboardInterrupt", 1, "1:7: " + _BUILTIN.format("KeyboardInterrupt")),
    ("memoryview(b'x')", 2, "1:12: SyntaxError: bytes literals (b'...') are not part of gradcli's language"),
    # type(): classes as the script names them, only their names readable
    ("type(1).__dict__", 1, "1:1: " + _OUTSIDE.format("'type' object", "__dict__")),
    ("getattr(type(1), '__subclasses__')()", 1, "1:1: AttributeError: 'type' object attribute '__subclasses__' is "
                                                "outside gradcli's language"),
    ("type(type)('X', (int,), {})", 1, "1:1: TypeError: subclassing 'int' is outside gradcli's language: a script's class may derive from its own classes, object, dict, list, tuple, set, frozenset, a namedtuple, the collections' OrderedDict, defaultdict and Counter, the exception classes and the library classes gradcli provides"),
    ("def f():\n    pass\ntype(f)(1, {})", 1, "3:1: TypeError: cannot create 'function' instances"),
    # delattr through the same allow-list as `del obj.name`: modules and Python's internals stay whole
    (T + "delattr(torch, 'ones')", 1, "2:1: AttributeError: cannot delete attributes of module 'torch' in gradcli's "
                                      "language"),
    ("delattr(type(1), '__subclasses__')", 1, "1:1: " + _OUTSIDE.format("'type' object", "__subclasses__")),
    ("class A:\n    pass\ndelattr(A(), '__class__')", 1, "3:1: " + _OUTSIDE.format("'A' object", "__class__")),
    ("delattr(print, '__self__')", 1, "1:1: " + _OUTSIDE.format("'builtin_function_or_method' object",
                                                               "__self__")),
    (T + "delattr(torch.ones(1), '_a')", 1, "2:1: AttributeError: 'Tensor' object has no attribute '_a'"),
    # a sparse tensor: its parts and its dense array are gradcli's own, reached only through its methods
    (SP + "getattr(s, '_idx')", 1, "3:1: AttributeError: 'Tensor' object has no attribute '_idx'"),
    (SP + "getattr(s, '_a')", 1, "3:1: AttributeError: 'Tensor' object has no attribute '_a'"),
    (SP + "getattr(s, 'refused')", 1, "3:1: AttributeError: 'Tensor' object has no attribute 'refused'"),
    (SP + "getattr(s, '__dict__')", 1, "3:1: AttributeError: 'Tensor' object has no attribute '__dict__'"),
    (SP + "delattr(s, '_vals')", 1, "3:1: AttributeError: 'Tensor' object has no attribute '_vals'"),
    (SP + "setattr(s, '_a', 1)", 1, "3:1: AttributeError: cannot set attribute '_a' on a sparse Tensor: gradcli's "
                                    "language only sets requires_grad and grad"),
    (SP + "s.numpy()", 1, f"3:1: AttributeError: 'Tensor' object attribute 'numpy' is outside gradcli's language: "
                          f"{_NO_ARRAYS}"),
    (SP + "'{t._vals}'.format(t=s)", 1, "3:1: AttributeError: 'Tensor' object has no attribute '_vals'"),
    (T + "getattr(type(torch.ones(1)), 'func')", 1, "2:1: AttributeError: type object 'Tensor' has no attribute "
                                                    "'func'"),
    # format fields: attributes through the allow-list, widths and results bounded
    ("'{0.__init__.__globals__}'.format(1)", 1, "1:1: AttributeError: 'int' object attribute '__init__' is outside "
                                                "gradcli's language"),
    ("'{p.__self__}'.format(p=print)", 1, "1:1: " + _OUTSIDE.format("'builtin_function_or_method' object",
                                                                    "__self__")),
    (T + "'{t.numpy}'.format(t=torch.ones(1))", 1, f"2:1: AttributeError: 'Tensor' object attribute 'numpy' is "
                                                   f"outside gradcli's language: {_NO_ARRAYS}"),
    ("'{0:{1}}'.format(1, 10**12)", 1, "1:1: MemoryError: format width or precision 1000000000000 is too large "
                                       "(gradcli allows at most 100000000)"),
    # collections: namedtuple compiles no script text, copies and repeats are bounded
    (C + "namedtuple('P', ['x=__import__(\"os\")'])", 1, "2:1: ValueError: Type names and field names must be valid "
                                                          "identifiers: 'x=__import__(\"os\")'"),
    (C + "namedtuple('P', 'a __class__')", 1, "2:1: ValueError: Field names cannot start with an underscore: "
                                              "'__class__'"),
    (C + "getattr(namedtuple('P', 'x'), '__new__')", 1, "2:1: AttributeError: 'type' object attribute '__new__' is "
                                                        "outside gradcli's language"),
    (C + "namedtuple('P', 'x')(1)._source", 1, "2:1: AttributeError: 'P' object has no attribute '_source'"),
    (C + "Counter(a=10**12).elements() * 2", 1, "2:1: TypeError: unsupported operand type(s) for *: "
                                                "'itertools.chain' and 'int'"),
    (C + "deque([0]) * 10**9", 1, "2:1: MemoryError: a deque of 1000000000 items is too large (gradcli allows at "
                                  "most 100000000)"),
    (C + "d = defaultdict(lambda: d[0])\nd[1]", 1, "2:25: RecursionError: maximum recursion depth exceeded"),
    (C + "getattr(defaultdict(list), '__missing__')", 1, "2:1: AttributeError: 'defaultdict' object attribute "
                                                         "'__missing__' is outside gradcli's language"),
    # normalisation layers: modules, their buffers and nodes stay inside the language, their work inside the budget
    (T + "type(torch.nn.LayerNorm(3)).__mro__", 1, "2:1: AttributeError: type object 'LayerNorm' attribute "
                                                   "'__mro__' is outside gradcli's language"),
    (T + "torch.nn.BatchNorm1d(3).running_mean.numpy()", 1, "2:1: AttributeError: 'Tensor' object attribute 'numpy' "
                                                           f"is outside gradcli's language: {_NO_ARRAYS}"),
    (T + "import torch.nn.functional as F\nF.group_norm.__globals__", 1,
     "3:1: AttributeError: 'function' object has no attribute '__globals__'"),
    (T + "import torch.nn.functional as F\nF.layer_norm(torch.ones(3, 2, requires_grad=True), (2,))"
     ".grad_fn._saved_result1.__reduce__", 1, "3:1: " + _OUTSIDE.format("'Tensor' object", "__reduce__")),
    # torch.optim.swa_utils: the averaging functions and SWALR's anneal_func are functions whose Python
    # internals stay out of reach; a callable given as avg_fn is called as the script's own value
    (T + "f = torch.optim.swa_utils.get_swa_avg_fn()\nf.__wrapped__.__globals__", 1,
     "3:1: " + _OUTSIDE.format("'function' object", "__globals__")),
    (T + "f = torch.optim.swa_utils.get_ema_multi_avg_fn()\nf.__closure__", 1,
     "3:1: " + _OUTSIDE.format("'function' object", "__closure__")),
    (T + "s = torch.optim.swa_utils.SWALR(torch.optim.SGD([torch.ones(1, requires_grad=True)]), 0.1)\n"
     "s.anneal_func.__globals__", 1, "3:1: AttributeError: 'function' object has no attribute '__globals__'"),
    (T + "s = torch.optim.swa_utils.SWALR(torch.optim.SGD([torch.ones(1, requires_grad=True)]), 0.1)\n"
     "s.anneal_func.call", 1, "3:1: " + _OUTSIDE.format("'function' object", "call")),
    (T + "m = torch.optim.swa_utils.AveragedModel(torch.nn.Linear(1, 1), avg_fn=getattr)\n"
     "m.update_parameters(torch.nn.Linear(1, 1))\nm.update_parameters(torch.nn.Linear(1, 1))", 1,
     "4:1: TypeError: attribute name must be string, not 'Tensor'"),
    (T + "m = torch.optim.swa_utils.AveragedModel(torch.nn.Linear(1, 1))\nm.update_parameters.__func__", 1,
     "3:1: " + _OUTSIDE.format("'method' object", "__func__")),
    (T + "opt = torch.optim.Adafactor([torch.ones(1, requires_grad=True)])\nopt._update", 1,
     "3:1: " + _OUTSIDE.format("'Adafactor' object", "_update")),
    (T + "o = torch.nn.LinearCrossEntropyOptions()\ngetattr(o, '__post_init__')", 1,
     "3:1: " + _OUTSIDE.format("'LinearCrossEntropyOptions' object", "__post_init__")),
    (T + "o = torch.nn.LinearCrossEntropyOptions()\nsetattr(o, '__class__', dict)", 1,
     "3:1: AttributeError: 'LinearCrossEntropyOptions' object attribute '__class__' is read-only"),
    (T + "opt = torch.optim.Muon([torch.ones(1, 1, requires_grad=True)])\nopt._gather", 1,
     "3:1: " + _OUTSIDE.format("'Muon' object", "_gather")),
    (T + "w = torch.ones(2, 2, requires_grad=True)\nw.grad = torch.ones(2, 2)\nopt = torch.optim.Muon([w])\n"
     "opt.step(lambda: getattr(opt, 'state').__class__.__init__.__globals__)", 1,
     "5:18: AttributeError: 'wrapper_descriptor' object has no attribute '__globals__'"),
    # torch.testing: one function, compared values stay script values, the msg function is the script's
    ("from torch.testing import make_tensor", 1, "1:1: NotImplementedError: gradcli does not implement "
                                                 "torch.testing.make_tensor"),
    ("import torch\ngetattr(torch.testing.assert_close, '__globals__')", 1,
     "2:1: AttributeError: 'function' object has no attribute '__globals__'"),
    ("import torch\ntorch.testing.assert_close(torch.ones(2), torch.ones(2), msg=print).__reduce__", 1,
     "2:1: AttributeError: 'NoneType' object attribute '__reduce__' is outside gradcli's language"),
    ("import torch\ntorch.testing.assert_close([1.0] * 10**9, [1.0])", 1,
     "2:28: MemoryError: a list of 1000000000 items is too large (gradcli allows at most 100000000)"),
    ("import torch\ntorch.ones(2).equal.__self__", 1, "2:1: AttributeError: 'builtin_function_or_method' object "
                                                      "attribute '__self__' is outside gradcli's language"),
    ("import torch\nfrom torch.testing import assert_close\nassert_close(1.0, 2.0, msg=lambda m: m * 10**9)", 1,
     "3:38: MemoryError: a str of 143000000000 items is too large (gradcli allows at most 100000000)"),
    # parametrizations: the class made for a parametrized module, its property and the hooks of the older
    # weight_norm / spectral_norm are the language's objects, nothing behind them
    (PARAM + "type(m).weight.fget.__globals__", 1, "6:1: " + _OUTSIDE.format("'function' object", "__globals__")),
    (PARAM + "type(m).weight.fset.__closure__", 1, "6:1: " + _OUTSIDE.format("'function' object", "__closure__")),
    (PARAM + "type(m).__bases__", 1, "6:1: " + _OUTSIDE.format("type object 'ParametrizedLinear'", "__bases__")),
    (PARAM + "P.cached().__exit__.__globals__", 1, "6:1: " + _OUTSIDE.format("'method' object", "__globals__")),
    (PARAM + "k = nn.Linear(2, 2)\nnn.utils.spectral_norm(k)\nlist(k._forward_pre_hooks.values())[0].__dict__", 1,
     "8:1: " + _OUTSIDE.format("'SpectralNorm' object", "__dict__")),
    (PARAM + "k = nn.Linear(2, 2)\nnn.utils.spectral_norm(k)\nlist(k._forward_pre_hooks.values())[0].apply.__code__", 1,
     "8:1: " + _OUTSIDE.format("'function' object", "__code__")),
    # pruning: the methods in a module's hooks, the names pruning reads and writes on a module, and what a
    # script's pruning_method makes are the language's, nothing behind them
    (PRUNE + "pr.l1_unstructured(m, '__dict__', 1)", 1,
     "4:1: " + _OUTSIDE.format("'Linear' object", "__dict__")),
    (PRUNE + "pr.l1_unstructured(m, 'weight', 1)\nh = list(m._forward_pre_hooks.values())[0]\n"
     "h._tensor_name = '__class__'\nm(torch.ones(2))", 1, "7:1: " + _OUTSIDE.format("'Linear' object", "__class__")),
    (PRUNE + "pr.l1_unstructured(m, 'weight', 1)\nh = list(m._forward_pre_hooks.values())[0]\n"
     "h._tensor_name = '__init__'\npr.remove(m, '__init__')", 1,
     "7:1: " + _OUTSIDE.format("'Linear' object", "__init__")),
    (PRUNE + "pr.global_unstructured([(m, 'weight')], pruning_method=lambda amount: torch, amount=1)", 1,
     "4:1: AttributeError: 'module' object has no attribute '_tensor_name'"),
    (PRUNE + "pr.L1Unstructured(1).__dict__", 1, "4:1: " + _OUTSIDE.format("'L1Unstructured' object", "__dict__")),
    (PRUNE + "pr.L1Unstructured.apply.__func__", 1, "4:1: " + _OUTSIDE.format("'method' object", "__func__")),
    (PRUNE + "pr.BasePruningMethod.__new__", 1,
     "4:1: " + _OUTSIDE.format("type object 'BasePruningMethod'", "__new__")),
    (PRUNE + "pr.random_unstructured(m, 'bias', 1)\nlist(m._forward_pre_hooks.values())[0].compute_mask.__self__", 1,
     "5:1: " + _OUTSIDE.format("'method' object", "__self__")),
    (T + "from torch.nn.utils.parametrizations import orthogonal\n"
     "orthogonal(torch.nn.Linear(2, 2)).parametrizations.weight[0].orthogonal_map.__dict__", 1,
     "3:1: " + _OUTSIDE.format("'_OrthMaps' object", "__dict__")),
    # torch.Tensor's methods read from the class: the method a tensor has, and nothing behind it
    (T + "torch.Tensor.add.__globals__", 1, "2:1: AttributeError: 'method_descriptor' object has no attribute "
                                           "'__globals__'"),
    (T + "torch.Tensor.add.__self__", 1, "2:1: " + _OUTSIDE.format("'method_descriptor' object", "__self__")),
    (T + "torch.Tensor.add.func", 1, "2:1: AttributeError: 'method_descriptor' object has no attribute 'func'"),
    (T + "torch.Tensor._a", 1, "2:1: AttributeError: type object 'Tensor' has no attribute '_a'"),
    (T + "torch.Tensor._inplace", 1, "2:1: AttributeError: type object 'Tensor' has no attribute '_inplace'"),
    (T + "torch.Tensor.__dict__", 1, "2:1: " + _OUTSIDE.format("type object 'Tensor'", "__dict__")),
    (T + "torch.Tensor.numpy(torch.ones(1))", 1, "2:1: " + _OUTSIDE.format("type object 'Tensor'", "numpy")
     + ": " + _NO_ARRAYS),
    (T + "torch.Tensor.add(print, 1)", 1, "2:1: TypeError: descriptor 'add' for 'torch._C.TensorBase' objects "
                                         "doesn't apply to a 'builtin_function_or_method' object"),
    # a lazy module: its helpers are gradcli's own functions, not methods a script can reach
    (T + "m = torch.nn.LazyLinear(3)\nm._materialize", 1,
     "3:1: AttributeError: 'LazyLinear' object has no attribute '_materialize'"),
    (T + "m = torch.nn.LazyConv1d(3, 2)\nm._placeholder", 1,
     "3:1: AttributeError: 'LazyConv1d' object has no attribute '_placeholder'"),
    (T + "m = torch.nn.LazyLinear(3)\ntype(m).__mro__", 1, "3:1: " + _OUTSIDE.format("type object 'LazyLinear'", "__mro__")),
    (T + "m = torch.nn.LazyLinear(3)\nm.weight.__class__.__mro__", 1,
     "3:1: AttributeError: type object 'UninitializedParameter' has no attribute '__mro__'"),
    # out=: only tensors are written into, and what a call with it returns shows nothing behind it
    (T + "torch.sin(torch.ones(2), out=torch.sin)", 1,
     "2:1: TypeError: sin(): argument 'out' must be Tensor, not builtin_function_or_method"),
    (T + "torch.max(torch.ones(2, 2), 0, out=(torch.empty(0), torch))", 1,
     "2:1: TypeError: expected Tensor as element 1 in argument 3, but got module"),
    (T + "torch.max(torch.ones(2, 2), 0, out=(torch.empty(0), torch.empty(0, dtype=torch.long))).name", 1,
     "2:1: " + _OUTSIDE.format("'torch.return_types.max_out' object", "name")),
    (T + "torch.max(torch.ones(2, 2), 0, out=(torch.empty(0), torch.empty(0, dtype=torch.long))).__class__.__mro__",
     1, "2:1: AttributeError: type object 'max_out' has no attribute '__mro__'"),
    (T + "torch.cos(torch.ones(2), **{'out': torch.empty(0), '_x': 1})", 1,
     "2:1: TypeError: torch.cos() got the keyword argument '_x': names starting with '_' are outside gradcli's language"),
    # a meta tensor's storage is a numpy array of one element (gradcli.engine.meta): out of reach as any tensor's
    (T + "x = torch.ones(2, device='meta')\nx._a", 1, "3:1: AttributeError: 'Tensor' object has no attribute '_a'"),
    (T + "x = torch.ones(2, device='meta')\nx.numpy()", 1,
     "3:1: " + _OUTSIDE.format("'Tensor' object", "numpy") + ": " + _NO_ARRAYS),
    (T + "x = torch.ones(2, device='meta')\nx.data.__array_interface__", 1,
     "3:1: " + _OUTSIDE.format("'Tensor' object", "__array_interface__")),
    (T + "x = torch.ones(2, device='meta', requires_grad=True)\n(x * x).grad_fn._saved_self.__array_interface__", 1,
     "3:1: " + _OUTSIDE.format("'Tensor' object", "__array_interface__")),
    (T + "torch.nn.Linear(2, 2, device='meta').weight.untyped_storage()._owner", 1,
     "2:1: " + _OUTSIDE.format("'UntypedStorage' object", "_owner")),
    # a tensor's own attributes (x.g = ...) live beside gradcli's slots, never in them, and take no dunder name
    (T + "x = torch.ones(2)\nx.__class__ = int", 1, "3:1: " + _OUTSIDE.format("'Tensor' object", "__class__")),
    (T + "setattr(torch.ones(2), '__dict__', {})", 1, "2:1: " + _OUTSIDE.format("'Tensor' object", "__dict__")),
    # an object's dict replaced: never a sequence's (numpy reads __array_interface__ from its own dict), never a
    # library object's, and no special name among the keys it starts with
    ("class L(list):\n    def __init__(self):\n        self.__dict__ = {}\nL()", 1,
     "3:9: " + _OUTSIDE.format("'L' object", "__dict__")),
    ("class L(list):\n    pass\nobject.__setattr__(L(), '__dict__', {})", 1, "3:1: " + _OUTSIDE.format("'L' object", "__dict__")),
    (T + "class M(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.__dict__ = {}\nM()", 1,
     "5:9: " + _OUTSIDE.format("'M' object", "__dict__")),
    ("class A:\n    pass\nA().__dict__ = {'__array_interface__': {}}", 1,
     "3:1: AttributeError: setting '__array_interface__' through an object's __dict__ is outside gradcli's language"),
    (T + "class A:\n    pass\na = A()\na.__dict__ = {}\nvars(a)['__array_interface__'] = {}\ntorch.tensor(a)", 1,
     "7:1: RuntimeError: Could not infer dtype of A"),
    (T + "x = torch.ones(2)\nx.__array_interface__ = 1", 1,
     "3:1: " + _OUTSIDE.format("'Tensor' object", "__array_interface__")),
    (T + "x = torch.ones(2)\nx.sum = print", 1, "3:1: AttributeError: cannot set attribute 'sum' on a Tensor: in "
                                                "gradcli's language a tensor's own attribute may not hide PyTorch's "
                                                "Tensor.sum"),
    (T + "x = torch.ones(2)\nx._base = x", 1, "3:1: AttributeError: cannot set attribute '_base' on a Tensor: in "
                                              "gradcli's language a tensor's own attribute may not hide PyTorch's "
                                              "Tensor._base"),
    (T + "x = torch.ones(2)\nx._attrs = 1\ndel x._attrs\nx._attrs", 1,
     "5:1: AttributeError: 'Tensor' object has no attribute '_attrs'"),
]


def test_the_table_is_big_enough():
    assert len(ESCAPES) >= 40


@pytest.mark.parametrize("source, status, expected", ESCAPES, ids=[s for s, _, _ in ESCAPES])
def test_escape_is_refused_by_name(source, status, expected, capsys):
    assert cli.main(["-c", source]) == status
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines()[0] == "<string>:" + expected
    lines = err.splitlines()
    if status == 2:     # the message, the source line and a caret for each refused construct: a run reports all
        assert len(lines) % 3 == 0 and all(h.startswith("<string>:") and ": SyntaxError: " in h for h in lines[::3])
    else:
        assert len(lines) <= 3      # the message, the source line and a caret
    assert "Traceback" not in err


@pytest.fixture(scope="module")
def shell():
    return Shell(Options(colour=False), out=io.StringIO(), err=io.StringIO())


@pytest.mark.parametrize("source, status, expected", ESCAPES, ids=[s for s, _, _ in ESCAPES])
def test_the_repl_refuses_them_too_and_goes_on(shell, source, status, expected):
    shell.out.seek(0), shell.out.truncate()
    shell.err.seek(0), shell.err.truncate()
    assert shell.execute(source)
    assert shell.err.getvalue().splitlines()[0] == "<stdin>:" + expected
    assert "internal error" not in shell.err.getvalue()
    shell.execute("print(6 * 7)")
    assert shell.out.getvalue().endswith("42\n")


# ------------------------------------------------------------------------------- the allow-lists

def test_builtins_are_exactly_the_documented_ones():
    assert set(stdlib.make_builtins(print)) == {
        "print", "range", "len", "abs", "min", "max", "sum", "float", "int", "bool", "str", "repr", "round",
        "complex", "list", "tuple", "enumerate", "zip", "reversed", "sorted", "any", "all", "divmod", "pow", "help",
        "dict", "set", "frozenset", "chr", "ord", "callable", "map", "filter", "iter", "next", "hash", "isinstance",
        "format", "hex", "oct", "bin", "ascii", "slice",
        # classes
        "issubclass", "object", "super", "staticmethod", "classmethod", "property", "__name__", "NotImplemented",
        "__annotations__",
        "type", "id",
        # the exception classes, Exception's own subclasses only (never BaseException's others but one)
        "Exception", "ArithmeticError", "AssertionError", "AttributeError", "FloatingPointError", "ImportError",
        "GeneratorExit",        # (BaseException's, but what closing a script's generator raises in it)
        "SystemExit",           # (BaseException's, but what the script's own sys.exit raises)
        "IndexError", "KeyError", "LookupError", "MemoryError", "ModuleNotFoundError", "NameError",
        "NotImplementedError", "OverflowError",
        "RecursionError", "RuntimeError", "StopIteration", "TypeError", "UnboundLocalError", "ValueError",
        "ZeroDivisionError",
        "OSError", "FileNotFoundError",     # (torch.load of a name torch.save never kept)
        "EOFError",                         # (torch.load of an io.BytesIO at its end)
        # warnings' categories (an "error" filter raises them)
        "Warning", "UserWarning", "DeprecationWarning", "PendingDeprecationWarning", "SyntaxWarning", "RuntimeWarning",
        "FutureWarning", "ImportWarning", "UnicodeWarning", "BytesWarning", "ResourceWarning", "EncodingWarning"}


def test_modules_hold_no_python_module_and_no_underscore_name():
    stack = [stdlib.TORCH, stdlib.MATH, stdlib.RE, stdlib.UNICODEDATA]
    while stack:
        mod = stack.pop()
        for name, value in mod.members.items():
            # (_LRScheduler: PyTorch's older name for LRScheduler, which tutorials' schedulers derive from)
            assert not name.startswith("_") or name == "__version__" or (mod.name, name) == (
                "torch.optim.lr_scheduler", "_LRScheduler"), (mod.name, name)
            assert not isinstance(value, types.ModuleType), (mod.name, name)
            if isinstance(value, stdlib.ScriptModule):
                stack.append(value)
    assert not set(access.REFUSED_TORCH_MEMBERS) & set(stdlib.TORCH.members)


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_no_tensor_attribute_hands_out_a_numpy_object(device):
    """Every attribute a script can read on a tensor, and every method it can call without arguments,
    gives gradcli or Python values: never a numpy array or scalar (which have tofile and ctypes). A meta
    tensor's array is a numpy array too (a MetaArray): the same holds of it, and of a complex tensor's."""
    for t in (Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)),
              Tensor(np.arange(6, dtype=np.complex64).reshape(2, 3) * (1 - 2j))):
        _no_numpy_objects(t.to("meta") if device == "meta" else t)
    assert "numpy" not in access.TENSOR_ATTRS


def test_no_sparse_tensor_attribute_hands_out_a_numpy_object():
    """The same of what a script reads on a sparse tensor (gradcli.engine.sparse.SCRIPT_ATTRS), which keeps
    numpy arrays for its indices, values and dense array, and of its sparse gradient."""
    from gradcli.engine import sparse
    s = sparse.sparse_coo_tensor(Tensor(np.array([[0, 1, 1], [2, 0, 2]])), Tensor(np.ones(3, np.float32)), (2, 3),
                                 requires_grad=True, check_invariants=True)
    sparse.sparse_mm(s, Tensor(np.ones((3, 2), np.float32))).sum().backward()
    for t in (s, s.grad, s.grad.coalesce()):
        for name in sorted(sparse.SCRIPT_ATTRS):
            value = access.get_attr(t, name)
            results = [value]
            if callable(value) and not name.endswith("_"):
                try:
                    results.append(value())
                except Exception:
                    pass
            for r in results:
                for item in (r if isinstance(r, (tuple, list)) else [r]):
                    assert not isinstance(item, (np.ndarray, np.generic)), name


def _no_numpy_objects(t):
    for name in sorted(access.TENSOR_ATTRS):
        try:
            value = access.get_attr(t, name)
        except RuntimeError:            # PyTorch's refusal (a real tensor's `imag`)
            continue
        results = [value]
        if callable(value) and not name.endswith("_") and name not in ("backward", "register_hook", "retain_grad"):
            try:
                results.append(value())
            except Exception:
                pass
        for r in results:
            items = r if isinstance(r, (tuple, list)) else [r]
            for item in items:
                assert not isinstance(item, (np.ndarray, np.generic)), name


def test_no_storage_attribute_hands_out_a_numpy_object():
    """What a script reads on a tensor's storages (plain, a view's, a meta tensor's) is ints, lists, strings and
    devices: never the numpy array the storage stands for."""
    from gradcli.engine import addresses
    base = Tensor(np.arange(6, dtype=np.float32))
    for t in (base, base[2:], base.to("meta")):
        for storage in (t.untyped_storage(), t.storage()):
            for name in sorted(access.ALLOWED[type(storage)]):
                value = access.get_attr(storage, name)
                results = [value]
                if callable(value):
                    try:
                        results.append(value())
                    except Exception:
                        pass
                for r in results:
                    for item in (r if isinstance(r, (tuple, list)) else [r]):
                        assert not isinstance(item, (np.ndarray, np.generic)), name
    assert isinstance(addresses.data_ptr(base), int) and addresses.data_ptr(base) >= addresses._DATA_BASE


def test_tolist_and_item_are_python_values():
    t = Tensor(np.array([[1.5, 2.0]], dtype=np.float32))
    assert type(t.tolist()[0][0]) is float
    assert type(Tensor(np.array(3, dtype=np.int64)).item()) is int


def test_bounded_builtins_show_as_the_builtins(capsys):
    assert cli.main(["-c", "print(list, sorted, pow, 'ab'.center)\nimport math\nprint(math.factorial)"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<class 'list'> <built-in function sorted> <built-in function pow> "
                          "<built-in method center of str object at 0x")
    assert out.endswith("\n<built-in function factorial>\n")


def test_bounded_builtins_keep_pythons_answers_and_messages():
    run = _run("print(list(range(3)), tuple('ab'), sorted([3, 1], reverse=True), sum([[1], [2]], []))\n"
               "print(pow(2, 10), pow(2, 10, 1000), round(1234, -2), round(1, -10**9), min(range(5)), max(range(4)))\n"
               "import math\nprint(math.factorial(5), math.comb(5, 2), math.perm(5, 2), math.prod([2, 3]))\n"
               "print('ab'.center(6, '*'), '-'.join(['a', 'b']), 'aXa'.replace('a', 'bb'))\n"
               "x = [1]\nx.extend(range(2))\nprint(x, 2 in range(5), range(10).count(3), range(10).index(4))")
    assert run == ("[0, 1, 2] ('a', 'b') [3, 1] [1, 2]\n1024 24 1200 0 0 3\n120 10 20 6\n"
                   "**ab** a-b bbXbb\n[1, 0, 1] True 1 4\n")
    assert _error("list(1, 2)") == "TypeError: list expected at most 1 argument, got 2"
    assert _error("sorted()") == "TypeError: sorted expected 1 argument, got 0"
    assert _error("'a'.center()") == "TypeError: center expected at least 1 argument, got 0"
    assert _error("import math\nmath.factorial(-1)") == "ValueError: factorial() not defined for negative values"


def _run(source: str) -> str:
    from conftest import run_script
    r = run_script(source)
    assert r.error is None, r.error.render()
    return r.out


def _error(source: str) -> str:
    from conftest import error_line
    return error_line(source)


def test_math_module_is_maths_own_functions():
    """Every member is math's own object, or a bounded wrapper that shows and calls it."""
    from gradcli.language import bounds
    for name, value in stdlib.MATH.members.items():
        assert value is getattr(math, name) or (value.__class__ is bounds.Bounded
                                                  and value.shown == repr(getattr(math, name)))
    assert stdlib.MATH.members["factorial"](5) == math.factorial(5)


# Convolutions and F.pad's modes: their big allocations are checked against the budget before they are made,
# and their modules and functions hand out nothing of Python's.
_CONV = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
CONV_REFUSALS = [
    # an input of one element viewed as 10^10: its column matrix (3x3 per output) would take 360 GB
    (_CONV + "x = torch.zeros(1).expand(1, 1, 100000, 100000)\ny = F.conv2d(x, torch.ones(1, 1, 3, 3))",
     "5:5: RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
     "you tried to allocate 359985600144 bytes. Error code 12 (Cannot allocate memory)"),
    (_CONV + "x = torch.zeros(1).expand(1, 1, 4000, 4000)\ny = F.conv_transpose2d(x, torch.ones(1, 1, 9, 9))",
     "5:5: RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
     "you tried to allocate 5184000000 bytes. Error code 12 (Cannot allocate memory) (gradcli's --max-memory is "
     "64.0 MiB)"),
    (_CONV + "y = F.pad(torch.ones(1, 3), (10**9, 0), mode='replicate')",
     "4:5: RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
     "you tried to allocate 4000000012 bytes. Error code 12 (Cannot allocate memory) (gradcli's --max-memory is "
     "64.0 MiB)"),
    (_CONV + "nn.Conv2d(1, 1, 3).forward.__func__",
     "4:1: AttributeError: 'method' object attribute '__func__' is outside gradcli's language"),
    (_CONV + "F.conv2d.__globals__", "4:1: AttributeError: 'builtin_function_or_method' object has no attribute "
                                     "'__globals__'"),
    (_CONV + "nn.ReflectionPad2d(1).__reduce__.__mro__",
     "4:1: AttributeError: 'ReflectionPad2d' object attribute '__reduce__' is outside gradcli's language"),
]


# addcmul / addcdiv: a broadcast of three operands is checked against the budget before it is made
CONV_REFUSALS += [
    ("import torch\ny = torch.addcmul(torch.zeros(1), torch.ones(100000, 1), torch.ones(1, 100000))",
     "2:5: RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
     "you tried to allocate 40000000000 bytes. Error code 12 (Cannot allocate memory)"),
    ("import torch\ntorch.zeros(1).addcdiv(torch.ones(100000, 1), torch.ones(1, 100000), value=2)",
     "2:1: RuntimeError: [enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: "
     "you tried to allocate 40000000000 bytes. Error code 12 (Cannot allocate memory)"),
    ("import torch\ntorch.addcmul.__globals__",
     "2:1: AttributeError: 'builtin_function_or_method' object has no attribute '__globals__'"),
    ("import torch\ntorch.ones(2).addcdiv_.__self__",
     "2:1: AttributeError: 'builtin_function_or_method' object attribute '__self__' is outside gradcli's language"),
]


@pytest.mark.parametrize("source, expected", CONV_REFUSALS)
def test_convolutions_and_padding_are_bounded_and_closed(source, expected, capsys):
    from gradcli.engine import budget
    before = budget.max_memory()
    try:
        assert cli.main(["--max-memory", "64M", "-c", source]) == 1
    finally:
        budget.set_max_memory(before)
    out, err = capsys.readouterr()
    assert err.splitlines()[0] == "<string>:" + expected
    assert "Traceback" not in err and "MemoryError" not in err


@pytest.mark.parametrize("source", [
    "import torch\nprint(torch.conv2d.target)",
    "import torch\nprint(getattr(torch.einsum, 'target'))",
    "import torch\nprint(torch.bernoulli.__wrapped__)",
    "import torch\nf = torch.vmap\nprint(f.func)",
    "import torch.nn as nn\nprint(nn.members)",
    "import torch\nprint(torch.optim._make)",
    "import torch\nprint(torch.linalg._members)",
    # torch.fft: made from gradcli.engine.ops.fft's functions at its first read; nothing of that module shows
    "import torch\nprint(torch.fft._make)",
    "import torch.fft as f\nprint(f.np)",
    "import torch.fft\nprint(getattr(torch.fft, 'complexops'))",
    "from torch.fft import rfft\nprint(rfft.__globals__)",
    "import torch\nprint(torch.fft.fftfreq.__wrapped__)",
    "import torch\nprint(getattr(torch.fft, '_fill_conjugate'))",
])
def test_what_loads_on_first_use_shows_nothing_of_its_loading(source):
    """The stand-ins of functions whose module loads at their first call, and modules made on first use,
    give a script nothing but what PyTorch's own have (tests/test_startup.py: what loads when)."""
    assert "AttributeError" in _error(source)


def test_a_tensors_own_attributes_never_reach_its_slots(capsys):
    source = T + ("x = torch.ones(2, requires_grad=True)\nx._a = 'a'\nx._fw = 'fw'\nx._acc = 1\nx._attrs = {}\n"
                  "y = (x * 2).sum()\ny.backward()\nprint(x._a, x._fw, x._acc, x._attrs, x.grad, y)")
    assert cli.main(["-c", source]) == 0
    assert capsys.readouterr().out == "a fw 1 {} tensor([2., 2.]) tensor(4., grad_fn=<SumBackward0>)\n"


def test_did_you_mean_never_names_gradclis_own_attributes():
    """Python's "Did you mean" reads PyTorch's and Python's lists of names, never gradcli's objects: a name
    one letter off gradcli's own tensor internals suggests none of them."""
    from conftest import run_script
    from gradcli.language import torchapi
    listed = set(torchapi.dir_names("torch.Tensor"))
    own = {n for k in Tensor.__mro__ for n in (*getattr(k, "__slots__", ()), *vars(k))} - listed
    assert "_a" in own and "_set_grad" in own
    for name in sorted(own):
        if not name.isidentifier() or name.startswith("__"):
            continue
        result = run_script(f"import torch\ntorch.ones(1).{name}x\n")
        assert result.error is not None and result.error.suggestion not in own, (name, result.error.headline())
    result = run_script("class A:\n    pass\nA()._ScriptObject__x\n")      # a plain class: Python's own names
    assert result.error.suggestion is None
