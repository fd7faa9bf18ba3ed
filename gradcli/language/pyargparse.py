"""Python's `argparse` module for scripts: CPython's own parser (gradcli runs on CPython 3.11, the reference), so
its usage lines, help layout, error messages and exits are CPython's byte for byte. What the script sees of it is
held to the language: a parser writes where the script's print writes (sys.stdout, sys.stderr, a redirect), exits
by the script's SystemExit (status 2 on an error), reads the script's sys.argv when parse_args has no list, and
names itself after the script's sys.argv[0]. What would reach files (`fromfile_prefix_chars`, `FileType`) is
refused; the parser's internals (`_actions`, `_registries`...) stay out of reach (gradcli.language.access allows
the methods and fields listed here and nothing else); a dunder name (a `dest`, a default, a Namespace keyword)
never reaches an object's class or dict. What a script hands the parser (a type function, an Action class of its
own, a formatter class) is called by CPython's code as CPython's would call it. Made on the first `import argparse`."""

from __future__ import annotations

import argparse as _argparse
import os as _os
import sys as _sys
import weakref

from gradcli.engine.addresses import address
from gradcli.engine.state import STATE
from gradcli.language import access, bounds, classes, stdlib
from gradcli.language.classes import is_dunder

_NO_FILES = "scripts cannot read or write files"


def _outside(what: str, reason: str = "") -> TypeError:
    return TypeError(f"{what} is outside gradcli's language" + (f": {reason}" if reason else ""))


class Namespace(_argparse.Namespace):
    """What parse_args returns: CPython's Namespace, whose attributes never take a dunder name (a dest of
    '__class__' would change the object's class)."""

    def __setattr__(self, name, value):
        _check_name(name)
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        _check_name(name)
        object.__delattr__(self, name)


Namespace.__module__ = "argparse"


def _check_name(name) -> None:
    if name.__class__ is str and is_dunder(name):
        raise AttributeError(f"'Namespace' object attribute '{name}' is outside gradcli's language")


def _script_argv() -> list:
    """The script's sys.argv (a script may have changed the list), as CPython's argparse reads sys.argv."""
    if stdlib.SYS.made:
        return stdlib.SYS.members["argv"]
    from gradcli.language import pysys
    return pysys.script_argv()


def _object_repr(obj) -> str:
    """CPython's repr of an object without one of its own, with the address gradcli shows."""
    return f"<{type(obj).__module__}.{type(obj).__qualname__} object at {address(obj)}>"


def _check_nargs(nargs) -> None:
    """A count of arguments past the bound of a list would build a pattern (and a usage) of that many characters
    first: checked where CPython's code builds them, so an Action class of the script's that sets its own count is
    held to it too."""
    if isinstance(nargs, int) and nargs > STATE.max_items // 4:
        raise bounds.built_too_many("str")


def _check_defaults(kwargs: dict) -> None:
    for name in kwargs:
        if is_dunder(name):
            raise _outside(f"set_defaults({name}=...)", "a default's name is an attribute of the Namespace")


class _ActionsContainer:
    """What a parser and its groups share: add_argument with its count of arguments held to the bound of a list
    and its action a name or an Action class, and groups of these classes."""

    def add_argument(self, *args, **kwargs):
        choices = kwargs.get("choices")
        if hasattr(type(choices), "__len__") and len(choices) > STATE.max_items // 16:    # (joined in the help)
            raise bounds.built_too_many("str")
        action = kwargs.get("action")
        if action is not None and not isinstance(action, str) and not (
                isinstance(action, type) and issubclass(action, _argparse.Action)):
            raise _outside(f"add_argument(action=...) with a '{stdlib.type_name(action)}' object",
                           "an action is a name or an argparse.Action class")
        return super().add_argument(*args, **kwargs)

    def add_argument_group(self, *args, **kwargs):
        group = _ArgumentGroup(self, *args, **kwargs)
        self._action_groups.append(group)
        return group

    def add_mutually_exclusive_group(self, **kwargs):
        group = _MutuallyExclusiveGroup(self, **kwargs)
        self._mutually_exclusive_groups.append(group)
        return group

    def set_defaults(self, **kwargs):
        _check_defaults(kwargs)
        super().set_defaults(**kwargs)


class _ArgumentGroup(_ActionsContainer, _argparse._ArgumentGroup):
    def __repr__(self) -> str:
        return _object_repr(self)


class _MutuallyExclusiveGroup(_ActionsContainer, _argparse._MutuallyExclusiveGroup):
    def __repr__(self) -> str:
        return _object_repr(self)


# The formatter's sizes that pad every line it writes (an indent of a billion spaces, per line): each kept where no
# script reaches it (the instance's dict, which a script's subclass may write, is shadowed by these properties)
_WIDEST = 10_000
_SIZES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _size(name: str) -> property:
    def get(self):
        return _SIZES[self][name]

    def set_(self, value):
        if value.__class__ is not int and not isinstance(value, int) or not -_WIDEST <= value <= _WIDEST:
            raise MemoryError(f"a help formatter's {name.strip('_').replace('_', ' ')} of {value!r} is too large "
                              f"(gradcli allows at most {_WIDEST} characters)")
        _SIZES.setdefault(self, {})[name] = value
    return property(get, set_)


class HelpFormatter(_argparse.HelpFormatter):
    """CPython's formatter, its indents bounded and what its texts' %-fields would expand to counted first."""

    _indent_increment = _size("_indent_increment")
    _max_help_position = _size("_max_help_position")
    _current_indent = _size("_current_indent")
    _action_max_length = _size("_action_max_length")

    def __repr__(self) -> str:
        return _object_repr(self)

    def _format_usage(self, usage, actions, groups, prefix):
        if isinstance(usage, str):
            _check_expansion(usage, (self._prog,))
        return super()._format_usage(usage, actions, groups, prefix)

    def _format_args(self, action, default_metavar):
        _check_nargs(action.nargs)
        return super()._format_args(action, default_metavar)

    def _format_text(self, text):
        if isinstance(text, str):
            _check_expansion(text, (self._prog,))
        return super()._format_text(text)

    def _expand_help(self, action):
        text = self._get_help_string(action)
        if isinstance(text, str) and text.count("%") > 1:
            _check_expansion(text, [self._prog, *vars(action).values()])
        return super()._expand_help(action)


def _check_expansion(text: str, values) -> None:
    """Refuse a text whose %-fields, each given the longest of `values`, would make more than a string may hold."""
    fields = text.count("%")
    if fields > 1:
        longest = max((len(v) if isinstance(v, str) else len(str(v)) for v in values), default=0)
        if fields * longest > STATE.max_items:
            raise bounds.built_too_many("str")


class RawDescriptionHelpFormatter(HelpFormatter, _argparse.RawDescriptionHelpFormatter):
    pass


class RawTextHelpFormatter(RawDescriptionHelpFormatter, _argparse.RawTextHelpFormatter):
    pass


class ArgumentDefaultsHelpFormatter(HelpFormatter, _argparse.ArgumentDefaultsHelpFormatter):
    pass


class MetavarTypeHelpFormatter(HelpFormatter, _argparse.MetavarTypeHelpFormatter):
    pass


_FORMATTERS = (HelpFormatter, RawDescriptionHelpFormatter, RawTextHelpFormatter, ArgumentDefaultsHelpFormatter,
               MetavarTypeHelpFormatter)


class ArgumentParser(_ActionsContainer, _argparse.ArgumentParser):
    """CPython's parser, writing and exiting as the script does."""

    def __init__(self, prog=None, usage=None, description=None, epilog=None, parents=[],
                 formatter_class=HelpFormatter, prefix_chars='-', fromfile_prefix_chars=None,
                 argument_default=None, conflict_handler='error', add_help=True, allow_abbrev=True,
                 exit_on_error=True):
        if fromfile_prefix_chars is not None:
            raise _outside("ArgumentParser(fromfile_prefix_chars=...)", "scripts cannot read files")
        if prog is None:        # (CPython's: the base name of sys.argv[0], the script's here)
            prog = _os.path.basename(_script_argv()[0])
        for parent in parents:
            if not isinstance(parent, ArgumentParser):
                raise _outside(f"ArgumentParser(parents=[...]) holding a '{stdlib.type_name(parent)}' object",
                               "a parent is an argparse.ArgumentParser")
        super().__init__(prog=prog, usage=usage, description=description, epilog=epilog, parents=parents,
                         formatter_class=formatter_class, prefix_chars=prefix_chars, argument_default=argument_default,
                         conflict_handler=conflict_handler, add_help=add_help, allow_abbrev=allow_abbrev,
                         exit_on_error=exit_on_error)

    def add_subparsers(self, **kwargs):
        parser_class = kwargs.get("parser_class", ArgumentParser)
        if not (isinstance(parser_class, type) and issubclass(parser_class, ArgumentParser)):
            raise _outside("add_subparsers(parser_class=...)", "subparsers are argparse.ArgumentParser objects")
        return super().add_subparsers(**kwargs)

    def parse_known_args(self, args=None, namespace=None):
        if args is None:
            args = _script_argv()[1:]
        if namespace is None:
            namespace = Namespace()
        elif not isinstance(namespace, Namespace):
            raise _outside(f"parse_args(namespace=...) of a '{stdlib.type_name(namespace)}' object",
                           "it takes an argparse.Namespace")
        return super().parse_known_args(args, namespace)

    def parse_known_intermixed_args(self, args=None, namespace=None):
        if args is None:
            args = _script_argv()[1:]
        return super().parse_known_intermixed_args(args, namespace)

    def _get_nargs_pattern(self, action):
        _check_nargs(action.nargs)
        return super()._get_nargs_pattern(action)

    def _read_args_from_files(self, arg_strings):
        raise _outside("reading arguments from files", _NO_FILES)

    def _print_message(self, message, file=None):
        """Where CPython's parser writes (the process's sys.stdout or sys.stderr when it names none): the script's
        streams, or the object the script gave (its write; an AttributeError swallowed, as CPython does)."""
        if not message:
            return
        from gradcli.language import pysys
        if file is None or file is _sys.stderr or file is pysys.STDERR:
            pysys.STDERR.write(message)
        elif file is _sys.stdout or file is pysys.STDOUT:
            pysys.STDOUT.write(message)
        else:
            try:
                access.get_method(file, "write")(message)
            except (AttributeError, OSError):
                pass


for _cls in (ArgumentParser, _ArgumentGroup, _MutuallyExclusiveGroup, *_FORMATTERS):
    _cls.__module__ = "argparse"


_PARSER_FIELDS = frozenset(("prog", "usage", "description", "epilog", "formatter_class", "prefix_chars",
                            "fromfile_prefix_chars", "argument_default", "conflict_handler", "add_help",
                            "allow_abbrev", "exit_on_error"))
_CONTAINER_METHODS = frozenset(("add_argument", "add_argument_group", "add_mutually_exclusive_group",
                                "set_defaults", "get_default"))
_PARSER_METHODS = _CONTAINER_METHODS | {"add_subparsers", "parse_args", "parse_known_args", "parse_intermixed_args",
                                        "parse_known_intermixed_args", "format_usage", "format_help", "print_usage",
                                        "print_help", "error", "exit"}
_ACTION_FIELDS = frozenset(("option_strings", "dest", "nargs", "const", "default", "type", "choices", "required",
                            "help", "metavar"))


_GROUP_FIELDS = frozenset(("title", "description"))
_ACTION_CLASSES = (_argparse._StoreAction, _argparse._StoreConstAction, _argparse._StoreTrueAction,
                   _argparse._StoreFalseAction, _argparse._AppendAction, _argparse._AppendConstAction,
                   _argparse._CountAction, _argparse._HelpAction, _argparse._VersionAction, _argparse._ExtendAction,
                   _argparse._SubParsersAction._ChoicesPseudoAction, _argparse.BooleanOptionalAction)
# the classes a script's class may derive from (class MyAction(argparse.Action), a formatter mixing two)
_BASES = (_argparse.Action, _argparse.BooleanOptionalAction, *_FORMATTERS)


class _NamespaceRules:
    """How scripts read, set and delete a Namespace's attributes (gradcli.language.access asks these rules, by the
    object's class, as it asks types.SimpleNamespace's)."""

    @staticmethod
    def _held(obj, name: str) -> dict:
        if is_dunder(name):
            raise AttributeError(f"'Namespace' object attribute '{name}' is outside gradcli's language")
        if name not in obj.__dict__:
            raise AttributeError(f"'Namespace' object has no attribute '{name}'")
        return obj.__dict__

    @classmethod
    def class_attr(cls, obj, name: str):
        if name == "__dict__":
            return obj.__dict__
        return cls._held(obj, name)[name]

    @staticmethod
    def instance_dict(obj) -> dict:
        return obj.__dict__

    @staticmethod
    def attribute_names(obj) -> frozenset:
        return frozenset(obj.__dict__)

    @staticmethod
    def set_attr(obj, name: str, value) -> None:
        setattr(obj, name, value)       # (Namespace refuses a dunder)

    @classmethod
    def del_attr(cls, obj, name: str) -> None:
        del cls._held(obj, name)[name]


def _allow(cls, fields, methods=()) -> None:
    access.allow_held(cls, frozenset(fields))
    if methods:     # (printed as bound methods of the class defining each, as CPython's)
        access.allow_methods(cls, frozenset(fields) | frozenset(methods))


def members() -> dict:
    _allow(ArgumentParser, _PARSER_FIELDS, _PARSER_METHODS)
    _allow(_ArgumentGroup, _GROUP_FIELDS, _CONTAINER_METHODS)
    _allow(_MutuallyExclusiveGroup, _GROUP_FIELDS | {"required"}, _CONTAINER_METHODS)
    for cls in _ACTION_CLASSES:
        _allow(cls, _ACTION_FIELDS, ("format_usage",))
    _allow(_argparse._SubParsersAction, _ACTION_FIELDS, ("format_usage", "add_parser"))
    _allow(_argparse.ArgumentError, ("argument_name", "message"))
    access.register_metaclass_rules(Namespace, _NamespaceRules)
    classes.LIBRARY_BASES.update((id(cls), cls) for cls in _BASES)
    names = {"ArgumentParser": ArgumentParser, "Namespace": Namespace, "ArgumentError": _argparse.ArgumentError,
             "ArgumentTypeError": _argparse.ArgumentTypeError}
    names.update((cls.__name__, cls) for cls in _BASES)
    names.update((name, getattr(_argparse, name)) for name in ("SUPPRESS", "OPTIONAL", "ZERO_OR_MORE", "ONE_OR_MORE",
                                                               "PARSER", "REMAINDER"))
    return names
