"""The command line, generated from the job configs: one flag per config field.

Why generate: a default written twice drifts (``--bootstrap`` once defaulted to 2,000 in one job
and 10,000 elsewhere). Here the config field is the only declaration; its type gives the argparse
shape (a switch, choices, a repeatable or comma-separated list), its description and default give
the help line. argparse only collects what the user typed (``argument_default=SUPPRESS``); pydantic
converts and validates it with the field's own rules, and a failure names the flag.

plain argparse was chosen over pydantic-settings' CLI source: that source shows list-of-model
fields as ``--corpus list[JSON]`` and defaults as ``(default factory: list)``, reads settings from
environment variables unless told not to, has no hidden deprecated spellings, and reports errors
in pydantic's wording (``corpus.0 Input should be a valid dictionary``) rather than the flag's.
"""
from __future__ import annotations

import argparse
import difflib
import sys
import types
import typing
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from jobs.common.cli.config import Alias, ConfigError, Flag, ModelT, RunOptions, describe_validation, flag_of
from jobs.common.cli.registry import Lazy, lookup


@dataclass(frozen=True)
class Command:
    """One (sub)command: its config, what it runs, and what it prints when done.

    ``run`` is ``"module:function"``, imported only when the command runs, so ``--help`` never
    loads Ray or a model library. The function takes ``(config, run_options)`` and returns the run
    directory (``outputs`` are printed relative to it) or, for exports, the line to print.
    """

    name: str
    help: str
    description: str = ""
    config: type[BaseModel] | None = None
    run: str | None = None
    run_options: tuple[str, ...] = tuple(RunOptions.model_fields)
    outputs: tuple[str, ...] = ("report.html", "summary.json", "manifest.json")
    subcommands: tuple[Command | Lazy, ...] = ()  # a Lazy one is imported only when a command line names it
    epilog: str = ""
    replaced_by: str | None = None  # an old spelling kept for one release: hidden from --help, warns when used

    @classmethod
    def registered(cls, name: str, **fields: Any) -> Command:
        """The top-level command ``name`` with the summary the registry gives it (declared once, there)."""
        entry = lookup(name)
        if entry is None:
            raise KeyError(f"{name!r} is not in jobs.common.cli.registry")
        return cls(name=name, help=entry.help, **fields)


@dataclass(frozen=True)
class Bound:
    """What a parsed command line resolved to: the command, its parser and the options given."""

    command: Command
    prog: str
    parser: argparse.ArgumentParser
    given: dict[str, Any] = field(default_factory=dict)


class UsageError(Exception):
    """A command line that names no command (an unknown or mistyped one); ``prog`` is where it went wrong."""

    def __init__(self, prog: str, message: str) -> None:
        super().__init__(message)
        self.prog = prog


class _Parser(argparse.ArgumentParser):
    """argparse with a two-line error (what, and where to look) instead of the whole usage text."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n(see '{self.prog} --help')\n")


class _Deprecated(argparse.Action):
    """An old spelling: warns, converts the value if needed, stores it under the new field."""

    def __init__(self, option_strings, dest, canonical: str, convert: Callable[[str], Any] | None = None, note: str = "",
                 **kwargs):
        self.canonical, self.convert, self.note = canonical, convert, note
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        how = f" ({self.note})" if self.note else ""
        print(f"{parser.prog}: warning: {option_string} is deprecated; use {self.canonical}{how}", file=sys.stderr)
        if self.convert is not None:
            values = self.convert(values)
        if isinstance(getattr(namespace, self.dest, None), list) and isinstance(values, list):
            values = getattr(namespace, self.dest) + values
        setattr(namespace, self.dest, values if self.const is None else self.const)


def split_list(value: str) -> list[str]:
    """A comma-separated flag value as a list (blanks dropped)."""
    return [v.strip() for v in value.split(",") if v.strip()]


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """(the non-None type, whether None is allowed) of an annotation such as ``int | None``."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return (args[0] if len(args) == 1 else annotation), True
    return annotation, False


def _is_list(annotation: Any) -> bool:
    base, _ = _unwrap(annotation)
    if typing.get_origin(base) in (typing.Union, types.UnionType):  # str | list[str]: a list on the command line
        return any(typing.get_origin(a) in (list, tuple) for a in typing.get_args(base))
    return typing.get_origin(base) in (list, tuple)


def _default_text(info: Any, flag: Flag) -> str:
    if flag.default_text is not None:
        return flag.default_text
    default = info.get_default(call_default_factory=True)
    if default is None:
        return "none"
    if isinstance(default, bool):
        return "on" if default else "off"
    if isinstance(default, (list, tuple)):
        return ",".join(str(v) for v in default) if default else "none"
    if isinstance(default, float) and default.is_integer() and abs(default) >= 1000:
        return f"{int(default):,}"
    if isinstance(default, int) and abs(default) >= 10_000:
        return f"{default:,}"
    return str(default)


def add_model_flags(parser: argparse.ArgumentParser, model: type[BaseModel], only: Sequence[str] | None = None,
                    groups: dict[str, argparse._ArgumentGroup] | None = None) -> None:
    """One flag per field of ``model`` (``only``: a subset), each in its ``Flag.group``."""
    groups = {} if groups is None else groups
    for name, info in model.model_fields.items():
        flag = flag_of(info)
        if not flag.cli or (only is not None and name not in only):
            continue
        group = groups.get(flag.group) or groups.setdefault(flag.group, parser.add_argument_group(flag.group))
        help_text = f"{(info.description or '').rstrip('.')} (default: {_default_text(info, flag)})".replace("%", "%%")
        base, _ = _unwrap(info.annotation)
        kwargs: dict[str, Any] = {"dest": name, "help": help_text}
        if base is bool:
            kwargs["action"] = argparse.BooleanOptionalAction if info.default is True else "store_true"
        else:
            if typing.get_origin(base) is Literal:
                kwargs["choices"] = [str(c) for c in typing.get_args(base)]
            if _is_list(info.annotation):
                kwargs.update(action="append") if flag.repeat else kwargs.update(type=split_list)
            default_metavar = "COLUMN" if name.endswith("_column") else name.upper()
            kwargs["metavar"] = flag.metavar or (None if "choices" in kwargs else default_metavar)
        option = flag.option(name)
        group.add_argument(option, **kwargs)
        if flag.positional:  # the same field, given without its flag
            group.add_argument(name, nargs="?", metavar=kwargs.get("metavar") or name.upper(), help=f"same as {option}")
        for old in flag.deprecated:
            alias = old if isinstance(old, Alias) else Alias(old)
            extra: dict[str, Any] = {"nargs": 0, "const": True} if base is bool else {}
            if _is_list(info.annotation) and not flag.repeat and alias.convert is None:
                extra["convert"] = split_list
            group.add_argument(alias.flag, dest=name, help=argparse.SUPPRESS, action=_Deprecated, canonical=option,
                               note=alias.note, **({"convert": alias.convert} | extra))


def command_path(argv: Sequence[str]) -> tuple[tuple[Command, ...], list[str]]:
    """The commands the leading words of ``argv`` name (``geo``, ``coreset build``), loaded from the
    registry only along that path, and the arguments left for the last one."""
    from jobs.common.cli.registry import COMMANDS, lookup

    entry = lookup(argv[0])
    if entry is None:
        raise UsageError("benchaudit", f"unknown command {argv[0]!r}{_close_match(argv[0], [c.name for c in COMMANDS])}")
    path = [load_command(entry)]
    rest = list(argv[1:])
    while rest and path[-1].subcommands and not rest[0].startswith("-"):
        names = [s.name for s in path[-1].subcommands]
        if rest[0] not in names:
            if path[-1].run is not None:  # a stray word after a job that also has subcommands: argparse names it
                break
            raise UsageError(prog_of(path), f"unknown command {rest[0]!r}{_close_match(rest[0], names)}; commands: "
                                            + ", ".join(s.name for s in path[-1].subcommands if not s.replaced_by))
        path.append(load_command(path[-1].subcommands[names.index(rest.pop(0))]))
    return tuple(path), rest


def load_command(entry: Command | Lazy) -> Command:
    if isinstance(entry, Command):
        return entry
    command = entry.load()
    return replace(command, name=entry.name, replaced_by=entry.replaced_by or command.replaced_by)


def prog_of(path: Sequence[Command]) -> str:
    return " ".join(("benchaudit", *(c.name for c in path)))


def _close_match(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def leaf_parser(path: Sequence[Command]) -> argparse.ArgumentParser:
    """The parser of the last command of ``path``: its config's flags, its run options, and a list of
    its own subcommands in the help (they are parsed by their own parsers, never by this one)."""
    command = path[-1]
    listed = [s for s in command.subcommands if not s.replaced_by]
    width = max((len(s.name) for s in listed), default=0) + 2
    commands = "commands:\n" + "\n".join(f"  {s.name:<{width}}{s.help}" for s in listed) if listed else ""
    epilog = "\n\n".join(t.rstrip("\n") for t in (commands, command.epilog) if t) + "\n" if commands or command.epilog else None
    usage = f"{prog_of(path)} COMMAND [options]" if command.run is None and listed else None
    parser = _Parser(prog=prog_of(path), usage=usage, description=command.description or command.help, epilog=epilog,
                     argument_default=argparse.SUPPRESS, formatter_class=argparse.RawDescriptionHelpFormatter,
                     allow_abbrev=False)
    groups: dict[str, argparse._ArgumentGroup] = {}
    if command.config is not None:
        add_model_flags(parser, command.config, groups=groups)
    if command.run is not None:
        add_model_flags(parser, RunOptions, only=command.run_options, groups=groups)
    return parser


def _check_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """An unknown ``--option`` is named with its closest known spelling, before argparse reads a
    value after it as something else (``geo --lexicon-profle paper`` must not become a command 'paper')."""
    known = [o for o in parser._option_string_actions if o.startswith("--")]
    for word in argv:
        if word == "--":
            return
        name = word.split("=", 1)[0]
        if name.startswith("--") and name not in parser._option_string_actions:
            listed = [o for o in known if parser._option_string_actions[o].help != argparse.SUPPRESS]
            parser.error(f"unknown option {name}{_close_match(name, listed)}")


def resolve(argv: Sequence[str]) -> Bound:
    """The command ``argv`` names (the words after ``benchaudit``) and the options given to it."""
    path, rest = command_path(argv)
    parser = leaf_parser(path)
    _check_options(parser, rest)
    given = vars(parser.parse_args(rest))
    return Bound(path[-1], prog_of(path), parser, given)


def walk(entries: Sequence[Command | Lazy], prefix: tuple[Command, ...] = ()) -> Iterator[tuple[Command, ...]]:
    """Every command path under ``entries`` (loading each): what tests and the docs check."""
    for entry in entries:
        path = (*prefix, load_command(entry))
        yield path
        yield from walk(path[-1].subcommands, path)


def make_config(model: type[ModelT], given: dict[str, Any]) -> ModelT:
    """Validate the given options into ``model``; a failure names the flag, not pydantic's location."""
    values = {k: v for k, v in given.items() if k in model.model_fields}
    try:
        return model(**values)
    except ValidationError as exc:
        raise ConfigError(describe_validation(model, exc)) from exc
