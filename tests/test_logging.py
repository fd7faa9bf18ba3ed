"""Python's logging in the language: what CPython 3.11 prints on stdout and stderr, byte for byte (the times
excepted: their format is checked), the state a session's scripts configure forgotten by the next session, and
nothing of the process's (the real logging module, the real stderr) touched."""

import io
import logging as process_logging
import re
import subprocess
import sys

import pytest

from conftest import both_as_file, gradcli_as_file, gradcli_output
from gradcli.errors import ScriptError
from gradcli.session import Session


# CPython's report of a logging error shows the frames inside its logging module (its file, its lines, their
# markers) before the script's: gradcli's shows the script's frames alone (README)
_LOGGING_FRAME = re.compile(r'  File "[^"]*/logging/__init__\.py", line \d+, in \w+\n(?:    .*\n)*')
_EMPTY_TRACEBACK = re.compile(r"Traceback \(most recent call last\):\n(?!  File)")


def _inside_logging_removed(err: str) -> str:
    return _EMPTY_TRACEBACK.sub("", _LOGGING_FRAME.sub("", err))


def both(source: str, tmp_path) -> tuple:
    """(gradcli's (stdout, stderr), CPython's) for the script, both run as the same file."""
    got, (out, err) = both_as_file(source, tmp_path / "train_log.py")
    return got, (out, _inside_logging_removed(err))


SNIPPETS = [
    # nothing configured: the module's functions configure the root (WARNING:root:...), a named logger without
    # handlers writes the bare message through the last resort (WARNING and above)
    "import logging\nlogging.debug('d')\nlogging.info('i')\nlogging.warning('w %s', 1)\nlogging.error('e')\n"
    "logging.critical('c %(a)s', {'a': 2})\nlogging.log(45, 'n')\nlogging.fatal('f')\n",
    "import logging\nlog = logging.getLogger(__name__)\nlog.info('hidden')\nlog.warning('bare %d', 3)\n"
    "log.error('err')\nprint(log, log.name, log.level, log.getEffectiveLevel(), log.parent, log.propagate, "
    "log.handlers, log.disabled, log.isEnabledFor(30), log.isEnabledFor(20), log.hasHandlers())\n",
    # basicConfig: level, format, datefmt, style, stream, handlers, force; the root's handler
    "import logging, sys\nlogging.basicConfig(level=logging.INFO, stream=sys.stdout, "
    "format='%(levelname)-8s %(name)s:%(lineno)d %(funcName)s %(filename)s %(module)s %(levelno)s %(message)s')\n"
    "logger = logging.getLogger(__name__)\ndef train(epoch, loss):\n    logger.info('epoch %d loss %.4f', epoch, loss)\n"
    "for e, l in enumerate([0.9, 0.51234, 0.25]):\n    train(e, l)\nlogger.debug('no')\nlogging.info('root %s', 'too')\n"
    "print(logging.root.handlers, logging.root.level, logger.getEffectiveLevel())\n"
    "logging.basicConfig(level=logging.DEBUG, format='ignored')\nprint(logging.root.level)\n",
    "import logging, sys\nlogging.basicConfig(format='{levelname}|{name}|{message!r}|{lineno:>4}', style='{', "
    "level='DEBUG')\nlogging.debug('x')\nlogging.getLogger('a.b').info('y')\n"
    "logging.basicConfig(format='${levelname} ${name}: $message', style='$', force=True, stream=sys.stdout)\n"
    "logging.warning('z')\nlogging.basicConfig(force=True, handlers=[logging.StreamHandler(sys.stdout)])\n"
    "logging.error('default %s', 'format')\nprint(len(logging.root.handlers))\n",
    "import logging\nfor kw in [dict(foo=1), dict(style='#'), dict(stream=None, filename='x'), "
    "dict(handlers=[], stream=None), dict(format='abc'), dict(format='{x', style='{')]:\n"
    "    try:\n        logging.basicConfig(force=True, **kw)\n    except Exception as e:\n"
    "        print(type(e).__name__, e)\n",
    # the hierarchy: the same object for a name, parents found and fixed up, propagation, getChild
    "import logging, sys\nc = logging.getLogger('a.b.c')\nprint(c.parent)\na = logging.getLogger('a')\n"
    "print(c.parent, logging.getLogger('a.b.c') is c)\nb = logging.getLogger('a.b')\nprint(c.parent, b.parent, "
    "a.parent, a.getChild('b') is b, logging.root.getChild('a') is a, logging.getLogger() is logging.root, "
    "logging.getLogger('root') is logging.root, logging.getLogger('') is logging.root)\n"
    "h = logging.StreamHandler(sys.stdout)\nh.setFormatter(logging.Formatter('%(name)s %(message)s'))\n"
    "a.addHandler(h)\na.addHandler(h)\nprint(a.handlers)\nc.warning('to a')\nb.propagate = False\n"
    "c.warning('stops at b')\nb.propagate = True\na.setLevel(logging.ERROR)\nc.warning('below a')\n"
    "print(c.getEffectiveLevel(), b.isEnabledFor(40))\nc.error('at a')\na.removeHandler(h)\nc.error('last resort')\n"
    "x = logging.getLogger('x..y')\nprint(x.parent, logging.getLogger('x.').parent)\n",
    # Logger's methods, levels by name and number, disable, level names
    "import logging, sys\nlog = logging.getLogger('t')\nlog.addHandler(logging.StreamHandler(sys.stdout))\n"
    "log.setLevel('DEBUG')\nlog.debug('d')\nlog.info('i')\nlog.warning('w')\nlog.error('e')\nlog.critical('c')\n"
    "log.fatal('f')\nlog.log(5, 'five')\nlog.log(15, 'fifteen %s', 'x')\nlogging.disable(logging.INFO)\n"
    "log.info('gone')\nlog.warning('kept')\nprint(log.isEnabledFor(20))\nlogging.disable()\nlog.critical('gone too')\n"
    "logging.disable(logging.NOTSET)\nlog.disabled = True\nlog.error('off')\nlog.disabled = False\n"
    "logging.addLevelName(25, 'NOTICE')\nlog.log(25, 'notice')\nprint(logging.getLevelName(25), "
    "logging.getLevelName('NOTICE'), logging.getLevelName(7), logging.getLevelName('x'), logging.getLevelName(10))\n"
    "print(logging.getLevelNamesMapping()['NOTICE'], logging.CRITICAL, logging.FATAL, logging.ERROR, "
    "logging.WARNING, logging.WARN, logging.INFO, logging.DEBUG, logging.NOTSET, logging.BASIC_FORMAT)\n"
    "for bad in [lambda: log.setLevel('LOUD'), lambda: log.setLevel(2.5), lambda: log.log('x', 'm'), "
    "lambda: logging.getLogger(3), lambda: logging.disable('LOUD'), lambda: log.info('x', foo=1)]:\n"
    "    try:\n        bad()\n    except Exception as e:\n        print(type(e).__name__, e)\n",
    # Formatter: the record's attributes, validation and its errors, defaults, a format of its own
    "import logging, sys\nr = logging.makeLogRecord({'msg': 'hi %s', 'args': ('there',), 'name': 'n', "
    "'levelname': 'INFO', 'levelno': 20})\nprint(r, r.getMessage(), r.args, r.msg, r.lineno, r.funcName, "
    "r.exc_info, r.exc_text, r.stack_info, r.filename, r.module, r.pathname, r.threadName, r.processName)\n"
    "for fmt, style in [('%(message)s', '%'), ('%(levelname)s:%(message)s', '%'), ('{message}', '{'), "
    "('{levelname:>8}', '{'), ('$message', '$'), ('${name}-$message', '$'), ('%(name)5.1s|%(levelno)03d', '%')]:\n"
    "    print(repr(logging.Formatter(fmt, style=style).format(r)))\n"
    "for args in [('abc',), ('abc', None, '{'), ('{x!z}', None, '{'), ('{x:?}', None, '{'), ('{a b}', None, '{'), "
    "('$', None, '$'), ('abc', None, '$'), ('x', None, '#'), ('%(nope)s',), ('{nope}', None, '{'), "
    "('$nope', None, '$')]:\n    try:\n        print(repr(logging.Formatter(*args).format(r)))\n"
    "    except Exception as e:\n        print(type(e).__name__, e)\n"
    "print(repr(logging.Formatter('abc', validate=False).format(r)))\n"
    "print(repr(logging.Formatter('%(user)s %(message)s', defaults={'user': 'anon'}).format(r)))\n"
    "class Upper(logging.Formatter):\n    def format(self, record):\n        return super().format(record).upper()\n"
    "h = logging.StreamHandler(sys.stdout)\nh.setFormatter(Upper('%(name)s: %(message)s'))\n"
    "log = logging.getLogger('up')\nlog.addHandler(h)\nlog.warning('shout %s', 'this')\n"
    "print(logging.Formatter().usesTime(), logging.Formatter('%(asctime)s').usesTime(), "
    "logging.Formatter('{asctime}', style='{').usesTime(), logging.Formatter('$asctime', style='$').usesTime())\n",
    # handlers: levels, filters (Filter, a function, a class of the script's), NullHandler, a handler of the
    # script's class, StringIO streams, setStream, reprs
    "import logging, sys, io\nlog = logging.getLogger('app.model')\nlog.setLevel(logging.DEBUG)\n"
    "buf = io.StringIO()\nh = logging.StreamHandler(buf)\nh.setLevel(logging.INFO)\n"
    "h.setFormatter(logging.Formatter('%(levelname)s %(message)s'))\nlog.addHandler(h)\nlog.debug('no')\n"
    "log.info('yes')\nprint(repr(buf.getvalue()), h, h.level, h.formatter is not None, h.name, h.terminator)\n"
    "h.terminator = ' | '\nlog.info('a')\nlog.info('b')\nprint(repr(buf.getvalue()))\n"
    "h.addFilter(logging.Filter('app.data'))\nlog.info('filtered')\nh.filters.clear()\n"
    "h.addFilter(lambda r: 'secret' not in r.getMessage())\nlog.info('secret')\nlog.info('public')\n"
    "class Odd(logging.Filter):\n    def filter(self, record):\n        return record.lineno % 2 == 1\n"
    "log.addFilter(Odd())\nlog.info('line 23')\nlog.info('line 24')\nprint(repr(buf.getvalue()))\n"
    "class ListHandler(logging.Handler):\n    def __init__(self):\n        super().__init__()\n        self.records = []\n"
    "    def emit(self, record):\n        self.records.append(self.format(record))\n"
    "lh = ListHandler()\nlh.setFormatter(logging.Formatter('%(name)s/%(levelname)s/%(message)s'))\n"
    "other = logging.getLogger('other')\nother.addHandler(lh)\nother.warning('one')\nother.error('two %d', 2)\n"
    "print(lh.records, lh)\nnull = logging.getLogger('lib')\nnull.addHandler(logging.NullHandler())\n"
    "null.error('silent')\nprint(logging.NullHandler(), logging.StreamHandler(sys.stdout), logging.StreamHandler(), "
    "logging.StreamHandler(io.StringIO()), logging.Handler(logging.ERROR))\n"
    "f = logging.Filter('app')\nprint(f.name, f.nlen, f.filter(logging.makeLogRecord({'name': 'app.x'})), "
    "f.filter(logging.makeLogRecord({'name': 'apple'})), logging.Filter().filter(logging.makeLogRecord({})))\n"
    "print(h.setStream(sys.stdout) is buf, h.setStream(sys.stdout))\nlog.info('line 34 to stdout')\n"
    "try:\n    logging.Handler().emit(None)\nexcept NotImplementedError as e:\n    print(e)\n",
    # LoggerAdapter and extra=
    "import logging, sys\nlogging.basicConfig(stream=sys.stdout, level=logging.INFO, "
    "format='%(levelname)s [%(run)s] %(message)s')\nlog = logging.getLogger('exp')\n"
    "ad = logging.LoggerAdapter(log, {'run': 'r1'})\nad.info('start')\nad.warning('w %d', 1)\nad.debug('no')\n"
    "ad.log(logging.ERROR, 'e')\nlog.info('x', extra={'run': 'direct'})\nprint(ad, ad.name, ad.logger is log, "
    "ad.extra, ad.isEnabledFor(10), ad.getEffectiveLevel(), ad.hasHandlers())\nad.setLevel(logging.ERROR)\n"
    "ad.info('quiet')\nprint(log.level)\nclass Tagged(logging.LoggerAdapter):\n    def process(self, msg, kwargs):\n"
    "        return f'[{self.extra[\"tag\"]}] {msg}', kwargs\nlogging.root.handlers[0].setFormatter("
    "logging.Formatter('%(message)s'))\nTagged(log, {'tag': 'T'}).error('tagged')\n"
    "for extra in [{'message': 1}, {'name': 'x'}, {'asctime': 0}]:\n    try:\n"
    "        log.error('m', extra=extra)\n    except KeyError as e:\n        print(type(e).__name__, e)\n",
    # exceptions without a traceback, stack_info, the deprecated warn
    "import logging, sys\nlogging.basicConfig(stream=sys.stdout, format='%(levelname)s:%(message)s')\n"
    "logging.error('no exception', exc_info=True)\nlogging.exception('none either')\n"
    "logging.error('given', exc_info=ValueError('bad value'))\n"
    "logging.getLogger('s').warning('here', stack_info=True)\ndef inner():\n"
    "    logging.warning('deep', stack_info=True)\ndef outer():\n    inner()\nouter()\n"
    "def helper(msg):\n    logging.warning(msg, stacklevel=2)\nhelper('from caller')\n"
    "logging.warning('far', stacklevel=9)\nlogging.getLogger('d').warn('old %s', 'style')\nlogging.warn('old fn')\n",
    # logging errors: CPython's report on stderr (its traceback inside logging left out), the run goes on
    "import logging\nlog = logging.getLogger('e')\nlog.warning('%d items', 'x')\nlog.error('a %s %s', 1)\n"
    "print('after')\nlogging.getLogger('f').warning({'a': 1})\nlog.warning('%(k)s', {'k': 'mapping'})\n",
    # redirect_stdout/redirect_stderr: the default stream is the script's sys.stderr when the handler is made
    "import logging, sys, io, contextlib\nbuf = io.StringIO()\nwith contextlib.redirect_stderr(buf):\n"
    "    logging.getLogger('lr').warning('last resort into buf')\n    h = logging.StreamHandler()\n"
    "early = logging.StreamHandler()\nlog = logging.getLogger('held')\nlog.addHandler(h)\nlog.addHandler(early)\n"
    "log.propagate = False\nlog.warning('twice')\nout = io.StringIO()\nwith contextlib.redirect_stderr(out):\n"
    "    log.warning('early still writes to the real stderr')\nprint(repr(buf.getvalue()), repr(out.getvalue()))\n"
    "with contextlib.redirect_stdout(out):\n    logging.basicConfig(stream=sys.stdout, format='%(message)s')\n"
    "logging.warning('to out')\nprint(repr(out.getvalue()))\n",
    # the script's line and function: methods, lambdas, comprehensions, nested functions, a call over lines
    "import logging, sys\nlogging.basicConfig(stream=sys.stdout, level=logging.DEBUG, "
    "format='%(name)s %(lineno)d %(funcName)s %(module)s %(filename)s: %(message)s')\nlog = logging.getLogger('m')\n"
    "log.info('multi %s',\n         'line')\nclass Trainer:\n    def fit(self):\n        log.debug('in %s', "
    "type(self).__name__)\n        [log.debug('comp %d', i) for i in range(2)]\n        f = lambda: log.debug('lambda')\n"
    "        f()\n        def inner():\n            log.warning('inner')\n        inner()\n    @staticmethod\n"
    "    def s():\n        log.info('static')\nTrainer().fit()\nTrainer.s()\nlog.info('%(a)s-%(b)s', {'a': 1, 'b': [2]})\n"
    "log.info('pct %% no args')\nlog.info('pct %% with args %s', 1)\nlog.info({'k': 1})\nlog.info(None)\n"
    "log.info('tuple arg %s', (1, 2))\nlog.info('%s', ())\nlog.info('%s %s', *'ab')\n"
    "list(log.info('gen %d', i) for i in range(1))\n{log.info('set') for _ in 'a'}\n{1: log.info('dict') for _ in 'a'}\n"
    "[x for x in range(2) if log.info('cond %d', x)]\n",
    # isEnabledFor's answers are kept until setLevel or disable, as CPython keeps them
    "import logging, sys\nlog = logging.getLogger('c')\nlog.addHandler(logging.StreamHandler(sys.stdout))\n"
    "log.info('a')\nlog.level = logging.DEBUG\nlog.info('b (CPython kept the answer)')\nlog.debug('c')\n"
    "logging.getLogger('other').setLevel(logging.ERROR)\nlog.info('d')\nfree = logging.Logger('free')\n"
    "free.addHandler(logging.StreamHandler(sys.stdout))\nfree.info('e')\nfree.setLevel(logging.ERROR)\n"
    "free.info('f (a free logger keeps its answers)')\nlogging.root.level = logging.CRITICAL\n"
    "logging.getLogger('p').warning('g')\nlogging.disable(logging.NOTSET)\nlogging.getLogger('p').warning('h')\n"
    "print(log.isEnabledFor(5), logging.root.isEnabledFor(40))\n",
    # copies: a logger is itself (by name), a handler's deep copy fails on CPython's lock
    "import logging, copy, sys\nlog = logging.getLogger('a')\nprint(copy.deepcopy(log) is log, copy.copy(log) is log, "
    "copy.deepcopy(logging.root) is logging.root)\nh = logging.StreamHandler(sys.stdout)\nh2 = copy.copy(h)\n"
    "print(type(h2), h2.stream is h.stream, h2 is h)\nfor f in [lambda: copy.deepcopy(h), lambda: copy.deepcopy("
    "logging.Logger('free')), lambda: copy.copy(logging.Logger('free'))]:\n    try:\n        f()\n"
    "    except Exception as e:\n        print(type(e).__name__, e)\nad = logging.LoggerAdapter(log, {'k': 1})\n"
    "ad2 = copy.deepcopy(ad)\nprint(ad2.logger is log, ad2.extra == ad.extra, ad2.extra is ad.extra)\n"
    "class M:\n    def __init__(self):\n        self.log = logging.getLogger('m')\nm = M()\n"
    "print(copy.deepcopy(m).log is m.log, type(copy.deepcopy(logging.Formatter('%(name)s'))))\n",
    # recursion inside a handler: CPython's emit lets RecursionError through
    "import logging\nlog = logging.getLogger('r')\nclass Echo(logging.Handler):\n    def emit(self, record):\n"
    "        log.warning('again')\nlog.addHandler(Echo())\ntry:\n    log.warning('start')\nexcept RecursionError:\n"
    "    print('RecursionError')\nprint('after')\n",
    # vars(record), record attributes the script sets, makeLogRecord, the hierarchy of a script's own Logger
    "import logging, sys\nclass Capture(logging.Handler):\n    def emit(self, record):\n"
    "        d = vars(record)\n        print(sorted(k for k in d if k not in ('created', 'msecs', "
    "'relativeCreated', 'thread', 'process')), d['msg'], d['args'], d['user'])\n"
    "        record.extra_note = 'set'\n        print(self.format(record), record.extra_note, record.message)\n"
    "log = logging.getLogger('cap')\nlog.addHandler(Capture())\nlog.warning('x=%s', 5, extra={'user': 'ann'})\n"
    "r = logging.makeLogRecord({'msg': 'm', 'custom': 1})\nprint(r.custom, r.levelname, r.levelno, r.name)\n"
    "mine = logging.Logger('free', logging.INFO)\nprint(mine, mine.parent, mine.level)\n"
    "mine.addHandler(logging.StreamHandler(sys.stdout))\nmine.info('a free logger')\n"
    "class Mine(logging.Logger):\n    def info(self, msg, *args, **kwargs):\n"
    "        super().info('[mine] ' + msg, *args, **kwargs)\nm = Mine('m')\nm.addHandler(logging.StreamHandler(sys.stdout))\n"
    "m.setLevel(logging.INFO)\nm.info('hello %s', 'you')\nprint(isinstance(m, logging.Logger), "
    "isinstance(logging.root, logging.Logger), isinstance(logging.root, logging.RootLogger), "
    "issubclass(logging.StreamHandler, logging.Handler), logging.getLoggerClass())\n",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_cpythons_logging(snippet, tmp_path):
    got, expected = both(snippet, tmp_path)
    assert got == expected


def test_a_logged_exception_is_shown_as_cpython_shows_it(tmp_path):
    """logger.exception and exc_info=True (or an exception, or a tuple): the message, then the exception's
    traceback as CPython's traceback.print_exception writes it; the run goes on."""
    source = ("import logging, sys\nlogging.basicConfig(stream=sys.stdout, format='%(levelname)s:%(name)s:%(message)s')\n"
              "log = logging.getLogger('train')\ndef step(x):\n    return 1 / x\ntry:\n    step(0)\n"
              "except ZeroDivisionError:\n    log.exception('step failed')\n"
              "try:\n    raise ValueError('bad\\nvalue')\nexcept ValueError as e:\n    log.error('caught', exc_info=e)\n"
              "    log.warning('as a tuple', exc_info=(type(e), e, None))\n"
              "try:\n    try:\n        {}['k']\n    except KeyError as e:\n        raise RuntimeError('wrapped') from e\n"
              "except RuntimeError:\n    logging.exception('chained')\nprint('done')\n")
    got, expected = both(source, tmp_path)
    assert got == expected
    assert "Traceback (most recent call last):" in got[0]


def test_a_handler_that_fails_is_reported_and_the_run_goes_on(tmp_path):
    """CPython's "--- Logging error ---" report: the error's traceback (the script's frames: CPython's logging
    frames before them are not shown), the frames that logged, the message and its arguments."""
    source = ("import logging\nclass Broken(logging.StreamHandler):\n    def format(self, record):\n"
              "        return record.nope\nlog = logging.getLogger('b')\nlog.addHandler(Broken())\n"
              "def work():\n    log.warning('w %s', 1)\nwork()\nlogging.warning('x %d', 's')\nprint('after')\n")
    got, expected = both(source, tmp_path)
    assert got == expected
    assert "--- Logging error ---" in got[1]


def test_times_have_cpythons_format(tmp_path):
    out, err = gradcli_as_file("import logging, sys\nlogging.basicConfig(stream=sys.stdout, format='%(asctime)s|%(msecs)03d|"
                        "%(relativeCreated)d|%(created)f|%(process)d|%(thread)d|%(threadName)s|%(processName)s')\n"
                        "logging.warning('x')\nlogging.root.handlers[0].setFormatter(logging.Formatter("
                        "'%(asctime)s', datefmt='%H:%M:%S %Y'))\nlogging.warning('y')\n"
                        "logging.root.handlers[0].setFormatter(logging.Formatter('{asctime} {msecs:03.0f}', style='{'))\n"
                        "logging.warning('z')\n", tmp_path / "t.grad")
    first, second, third = out.splitlines()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,(\d{3})\|(\d{3})\|\d+\|\d+\.\d{6}\|\d+\|\d+\|MainThread\|"
                        r"MainProcess", first)
    assert re.fullmatch(r"\d\d:\d\d:\d\d \d{4}", second)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \d{3}", third)
    assert first[20:23] == first[24:27]         # msecs is the asctime's
    assert err == ""


REFUSED = [
    ("import logging\nlogging.basicConfig(filename='run.log', filemode='w')\n", "2:1: ValueError: "
     "logging.basicConfig(filename=...) is outside gradcli's language: scripts cannot write files or reach the network "
     "(log to a stream: StreamHandler, basicConfig(stream=))"),
    ("import logging\nlogging.FileHandler('run.log')\n", "2:1: AttributeError: module 'logging' attribute "
     "'FileHandler' is outside gradcli's language: scripts cannot write files or reach the network (log to a stream: "
     "StreamHandler, basicConfig(stream=))"),
    ("import logging.handlers\n", "1:1: ImportError: import of 'logging.handlers' is outside gradcli's language: "
     "scripts cannot write files or reach the network (log to a stream: StreamHandler, basicConfig(stream=))"),
    ("from logging.config import dictConfig\n", "1:1: ImportError: import of 'logging.config' is outside gradcli's "
     "language: scripts cannot write files or reach the network (log to a stream: StreamHandler, "
     "basicConfig(stream=))"),
    ("from logging import setLoggerClass\n", "1:1: ImportError: cannot import name 'setLoggerClass' from 'logging': "
     "it is outside gradcli's language (a script's loggers are logging.Logger objects (derive from it and make one "
     "directly))"),
    ("import logging\nlogging.setLogRecordFactory(None)\n", "2:1: AttributeError: module 'logging' attribute "
     "'setLogRecordFactory' is outside gradcli's language: records are logging.LogRecord objects"),
    ("import logging\nlogging.root.manager\n", "2:1: AttributeError: 'RootLogger' object attribute 'manager' is "
     "outside gradcli's language"),
    ("import logging\nlogging.Logger.manager.loggerDict\n", "2:1: AttributeError: type object 'Logger' attribute "
     "'manager' is outside gradcli's language"),
    ("import logging\nlogging.getLogger('a').root\n", "2:1: AttributeError: 'Logger' object attribute 'root' is "
     "outside gradcli's language"),
    ("import logging\nlogging.LoggerAdapter(logging.root, {}).manager\n", "2:1: AttributeError: 'LoggerAdapter' "
     "object attribute 'manager' is outside gradcli's language"),
    ("import logging\nlogging.currentframe()\n", "2:1: AttributeError: module 'logging' attribute 'currentframe' is "
     "outside gradcli's language"),
    ("import logging\nlogging.captureWarnings(True)\n", "2:1: AttributeError: module 'logging' attribute "
     "'captureWarnings' is outside gradcli's language: the warnings module shows its warnings on sys.stderr itself"),
]


@pytest.mark.parametrize("source, expected", REFUSED)
def test_files_sockets_and_the_process_machinery_are_refused(source, expected):
    from conftest import located_error
    assert located_error(source) == expected


def test_logging_state_lasts_one_session(tmp_path):
    """What one session configures (the root's level and handlers, loggers, disable, level names) is gone in the
    next, as in a new CPython process; a REPL's inputs share theirs."""
    first = ("import logging, sys\nlogging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format='1:%(message)s')\n"
             "logging.getLogger('a').setLevel(logging.ERROR)\nlogging.getLogger('a').addHandler(logging.NullHandler())\n"
             "logging.addLevelName(25, 'NOTICE')\nlogging.disable(logging.INFO)\nlogging.warning('first')\n"
             "logging.root.extra_attribute = 1\n")
    second = ("import logging\nlog = logging.getLogger('a')\nprint(logging.root, logging.root.handlers, log, "
              "log.handlers, logging.getLevelName(25), hasattr(logging.root, 'extra_attribute'))\n"
              "logging.info('hidden')\nlogging.warning('second')\nlog.warning('bare')\n")
    assert gradcli_as_file(first, tmp_path / "a.grad") == ("1:first\n", "")
    assert gradcli_as_file(second, tmp_path / "b.grad") == (
        "<RootLogger root (WARNING)> [] <Logger a (WARNING)> [] Level 25 False\n", "WARNING:root:second\nWARNING:a:bare\n")
    session = Session(out=io.StringIO(), err=io.StringIO())
    session.run_unit("import logging\nlogging.basicConfig(format='%(message)s')\n")
    session.run_unit("logging.warning('kept')\n")
    assert session.err.getvalue() == "kept\n"


def test_the_processs_logging_and_stderr_are_never_touched(tmp_path, capsys):
    root = process_logging.getLogger()
    before = (root.level, list(root.handlers), dict(process_logging.Logger.manager.loggerDict),
              process_logging.root.manager.disable)
    out, err = gradcli_as_file("import logging\nlogging.basicConfig(level=logging.DEBUG, force=True)\n"
                        "logging.getLogger('gradcli').setLevel(logging.DEBUG)\nlogging.disable(logging.CRITICAL)\n"
                        "logging.disable(0)\nlogging.getLogger('x').critical('c')\nlogging.info('i')\n",
                        tmp_path / "t.grad")
    assert (out, err) == ("", "CRITICAL:x:c\nINFO:root:i\n")
    assert (root.level, list(root.handlers), dict(process_logging.Logger.manager.loggerDict),
            process_logging.root.manager.disable) == before
    assert capsys.readouterr() == ("", "")


ESCAPES = [
    # the process's machinery, frames and gradcli's objects stay out of reach
    ("import logging\nlogging.Logger.__init__(print, 'x')\n", "TypeError: Logger.__init__() of a "
     "'builtin_function_or_method' object is outside gradcli's language: it takes logging.Logger objects"),
    ("import logging, sys\nlogging.StreamHandler.__init__(sys.stdout)\n", "TypeError: StreamHandler.__init__() of a "
     "'TextIOWrapper' object is outside gradcli's language: it takes logging.StreamHandler objects"),
    ("import logging, torch\nlogging.Filterer.addFilter(torch, 1)\n", "TypeError: Filterer.addFilter() of a 'module' "
     "object is outside gradcli's language: it takes logging.Filterer objects"),
    ("import logging\nlogging.StreamHandler.emit('{0.__init__.__globals__}', logging.makeLogRecord({}))\n",
     "TypeError: StreamHandler.emit() of a 'str' object is outside gradcli's language: it takes "
     "logging.StreamHandler objects"),
    ("import logging\nlogging.getLogger('a').__init__.__wrapped__\n", "AttributeError: 'function' object has no "
     "attribute '__wrapped__'"),
    ("import logging\nlogging.RootLogger.level.fset(print, 1)\n", "TypeError: RootLogger.level() of a "
     "'builtin_function_or_method' object is outside gradcli's language: it takes logging.RootLogger objects"),
    ("import logging, torch\nlogging.LoggerAdapter.info(torch.ones(1), 'x')\n", "TypeError: LoggerAdapter.info() "
     "of a 'Tensor' object is outside gradcli's language: it takes logging.LoggerAdapter objects"),
    ("import logging, sys\nlogging.Formatter().format(sys.stdout)\n", "TypeError: a log record must be a "
     "logging.LogRecord, not 'TextIOWrapper'"),
    ("import logging\nlogging.root.__dict__\n", "AttributeError: 'RootLogger' object attribute '__dict__' is outside "
     "gradcli's language"),
    ("import logging\nvars(logging.StreamHandler())\n", "AttributeError: 'StreamHandler' object attribute '__dict__' "
     "is outside gradcli's language"),
    ("import logging\nlogging.makeLogRecord({'__class__': int})\n", "AttributeError: setting '__class__' through an "
     "object's __dict__ is outside gradcli's language"),
    ("import logging\nlogging.getLogger('a').warning('x', extra={'__array_interface__': {}})\n", "AttributeError: "
     "setting '__array_interface__' through an object's __dict__ is outside gradcli's language"),
    ("import logging\nvars(logging.makeLogRecord({}))['__class__'] = int\n", "AttributeError: setting '__class__' "
     "through an object's __dict__ is outside gradcli's language"),
    ("import logging\nlogging.getLogger('a').info.__func__\n", "AttributeError: 'method' object attribute "
     "'__func__' is outside gradcli's language"),
    ("import logging\nlogging.Logger.info.__globals__\n", "AttributeError: 'function' object attribute "
     "'__globals__' is outside gradcli's language"),
    ("import logging\nlogging._RUN\n", "AttributeError: module 'logging' attribute '_RUN' is outside gradcli's "
     "language"),
    ("import logging\nlogging.StreamHandler().stream.buffer\n", "AttributeError: 'TextIOWrapper' object attribute "
     "'buffer' is outside gradcli's language"),
    ("import logging\nlogging.Formatter('{msg.__globals__}', style='{').format(logging.makeLogRecord({'msg': print}))\n",
     "AttributeError: 'builtin_function_or_method' object has no attribute '__globals__'"),
    ("import logging\nlogging.Formatter('%(message)9999999999s').format(logging.makeLogRecord({}))\n", "MemoryError: "
     "format width or precision 9999999999 is too large (gradcli allows at most 100000000)"),
    ("import logging\nlogging.Formatter().format(logging.makeLogRecord({'msg': '%9999999999d', 'args': (1,)}))\n",
     "MemoryError: format width or precision 9999999999 is too large (gradcli allows at most 100000000)"),
    ("import logging\nclass H(logging.Handler):\n    def emit(self, r):\n        r.exc_info[2].tb_frame\n"
     "log = logging.getLogger('h')\nlog.addHandler(H())\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n"
     "    log.exception('x')\n", "AttributeError: 'NoneType' object has no attribute 'tb_frame'"),
    ("import logging\nclass H(logging.Handler):\n    def emit(self, r):\n        r.exc_info[1].__traceback__\n"
     "log = logging.getLogger('h')\nlog.addHandler(H())\ntry:\n    1 / 0\nexcept ZeroDivisionError:\n"
     "    log.exception('x')\n", "AttributeError: 'ZeroDivisionError' object attribute '__traceback__' is outside "
     "gradcli's language"),
]


@pytest.mark.parametrize("source, expected", ESCAPES)
def test_no_path_to_the_process_orgradcli_as_file(source, expected):
    from conftest import located_error
    assert located_error(source).split(": ", 1)[1] == expected


def test_help_describes_every_name_of_the_module_and_its_classes():
    from gradcli.language import pylogging, stdlib
    module = stdlib.LOGGING.members
    names = [f"logging.{n}" for n, v in module.items() if callable(v) and not isinstance(v, type)]
    names += [f"logging.{n}" for n, v in module.items() if isinstance(v, type)]
    names += [f"logging.{n}.{m}" for n, v in module.items() if isinstance(v, type)
              for m in dir(v) if not m.startswith("_") and m not in ("manager", "root") and callable(getattr(v, m))]
    names += ["logging.getLogger('a').info", "logging.root.setLevel", "logging.StreamHandler().setStream"]
    out = gradcli_output("import logging\n" + "".join(f"help({n})\n" for n in names))
    assert out.count("\n    ") >= len(names)
    for generic in ("A value; help()", "A type of values scripts use", "0x", "gradcli.language", "self"):
        assert generic not in out, generic
    assert "module logging\n    Python's logging module" in gradcli_output("import logging\nhelp(logging)\n")
    assert pylogging.__doc__


def test_a_replay_keeps_its_logging_apart_from_the_sessions():
    """A diagnostic replay runs the script again in a fresh session inside STATE.isolated(): what it configures
    is its own, and the session's logging is as it was afterwards."""
    from gradcli.engine.state import STATE
    out = io.StringIO()
    session = Session(out=out, err=io.StringIO())
    session.run_unit("import logging, sys\nlogging.basicConfig(stream=sys.stdout, format='A:%(message)s', "
                     "level=logging.INFO)\nlog = logging.getLogger('x')\nlog.setLevel(logging.DEBUG)\n")
    replayed = io.StringIO()
    with STATE.isolated():
        Session(out=replayed, err=replayed).run_source(
            "import logging, sys\nprint(logging.root.handlers, logging.getLogger('x').level)\n"
            "logging.basicConfig(stream=sys.stdout, format='B:%(message)s', force=True)\n"
            "logging.getLogger('x').setLevel(logging.CRITICAL)\nlogging.warning('replayed')\n")
    session.run_unit("logging.info('still A')\nlog.debug('debug %s', log.level)\n")
    assert replayed.getvalue() == "[] 0\nB:replayed\n"
    assert out.getvalue() == "A:still A\nA:debug 10\n"


@pytest.mark.parametrize("source, expected", [
    ("import logging\nf = logging.Formatter('%(asctime)s', datefmt='%c' * 10**7)\n"
     "f.format(logging.makeLogRecord({}))\n", "MemoryError: a date format of 20000000 characters is too large "
                                             "(gradcli allows at most 6250000)"),
    ("import logging\nlogging.Formatter.default_msec_format = '%s%999999999d'\n"
     "logging.Formatter('%(asctime)s').format(logging.makeLogRecord({}))\n", "MemoryError: format width or "
                                                                             "precision 999999999 is too large "
                                                                             "(gradcli allows at most 100000000)"),
])
def test_what_a_format_builds_stays_within_the_string_bound(source, expected):
    from conftest import located_error
    assert located_error(source).split(": ", 1)[1] == expected
    assert gradcli_output("import logging\nprint(logging.Formatter.default_msec_format)\n") == "%s,%03d\n"


def test_gradcli_run_prints_what_cpython_prints(tmp_path):
    """A whole run, as `gradcli run` writes it: the last resort's and the root's records on stderr, the configured
    ones on stdout, a logging error's report, the exit status; and the same file run by CPython."""
    import launcher
    source = ("import logging, sys\nlog = logging.getLogger('train')\nlog.warning('no handler yet')\nlog.info('dropped')\n"
              "logging.info('dropped too')\nlogging.warning('root configured now')\nlog.error('through the root')\n"
              "out = logging.StreamHandler(sys.stdout)\nout.setFormatter(logging.Formatter('%(name)s|%(levelname)s|"
              "%(message)s'))\nlog.addHandler(out)\nlog.propagate = False\nfor epoch in range(3):\n"
              "    log.warning('epoch %d loss %.3f', epoch, 1 / (epoch + 1))\nlog.warning('bad %d', 'x')\n"
              "print('done')\n")
    script = tmp_path / "run_log.py"
    script.write_text(source)
    p = launcher.run(["run", str(script)], timeout=60)
    expected = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert p.returncode == expected.returncode == 0
    assert p.stdout == expected.stdout
    assert p.stderr == _inside_logging_removed(expected.stderr)
