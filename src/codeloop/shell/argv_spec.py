"""Read a command's arguments the way its own option parser does.

A read-only check that looks for `-o` in the words is fooled both ways: `sort -- -o` sorts a
file named `-o`, while `sort -ro out` writes `out`. `Spec` describes one program's options
(GNU getopt_long and git's parse-options agree on the shape: short options cluster, a short
option's value may be attached or the next word, long options take `=value` or the next word,
optional values are attached only, unambiguous prefixes of long options are accepted, `--` ends
the options and, unless the program stops at its first operand, options and operands mix).
`parse` turns words into options and operands, or raises ArgvError when a word is an option the
spec does not know: an option we cannot read is a reason to ask, never to guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import field

from codeloop.system.valueclass import valueclass

__all__ = ["Args", "ArgvError", "Spec", "parse", "short_option_in"]


class ArgvError(ValueError):
    """Words the program would read differently from us, or refuse; the message says which."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


@valueclass
class Spec:
    """One program's options. Short options are letters; long ones are names without `--`."""

    flags: str = ""  # short options without a value
    valued: str = ""  # short options with a value: `-k2` or `-k 2`
    optional: str = ""  # short options whose value is attached only: sed's `-i[SUFFIX]`
    long_flags: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()  # `--key=v` or `--key v`
    long_optional: frozenset[str] = frozenset()  # `--abbrev[=N]`: only `=N` is its value
    lastarg_default: frozenset[str] = frozenset()  # git's `--merged [C]`: valued unless last
    negatable: bool = False  # git: every long option has a `--no-` form
    abbreviate: bool = True  # unambiguous prefixes of long options are accepted
    permute: bool = True  # options may follow operands (GNU); False: the first operand ends them
    numbers: bool = False  # `-5` is a count (head, tail, uniq -2?)
    aliases: dict[str, str] = field(default_factory=dict)  # long name → the canonical option

    @staticmethod
    def of(
        flags: str = "",
        valued: str = "",
        *,
        optional: str = "",
        long_flags: str = "",
        long_valued: str = "",
        long_optional: str = "",
        lastarg_default: str = "",
        negatable: bool = False,
        abbreviate: bool = True,
        permute: bool = True,
        numbers: bool = False,
        aliases: dict[str, str] | None = None,
    ) -> Spec:
        """Spec from space-separated long names: `Spec.of("rn", "k", long_flags="reverse")`."""
        return Spec(
            flags,
            valued,
            optional,
            _words(long_flags),
            _words(long_valued),
            _words(long_optional),
            _words(lastarg_default),
            negatable,
            abbreviate,
            permute,
            numbers,
            aliases or {},
        )

    @property
    def long_names(self) -> frozenset[str]:
        return self.long_flags | self.long_valued | self.long_optional | self.lastarg_default


@valueclass
class Args:
    """Options as (canonical name, value) in order, `-x` or `--name`; operands apart."""

    options: list[tuple[str, str | None]]
    operands: list[str]

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)

    def values(self, *names: str) -> list[str]:
        return [v for name, v in self.options if name in names and v is not None]


def _long(spec: Spec, word: str) -> tuple[str, str, bool]:
    """`--name[=value]` → (full name, attached value or "", negated)."""
    name, eq, value = word[2:].partition("=")
    names = spec.long_names
    negated = False
    candidates = [name] if name in names else []
    if not candidates and spec.negatable and name.startswith("no-") and name[3:] in names:
        candidates, negated = [name[3:]], True
    if not candidates and spec.abbreviate and name:
        candidates = sorted(n for n in names if n.startswith(name))
        if not candidates and spec.negatable and name.startswith("no-"):
            candidates = sorted(n for n in names if n.startswith(name[3:]))
            negated = bool(candidates)
        if len(candidates) > 1:
            raise ArgvError(f"{word} is ambiguous ({', '.join('--' + c for c in candidates)})")
    if len(candidates) != 1:
        raise ArgvError(f"option {word.partition('=')[0]} is not one the check knows")
    return candidates[0], (value if eq else ""), negated


def parse(spec: Spec, args: Sequence[str]) -> Args:
    """Split `args` as the program would; ArgvError for options the spec does not know."""
    options: list[tuple[str, str | None]] = []
    operands: list[str] = []
    i = 0

    def value_after(word: str) -> str:
        nonlocal i
        if i >= len(args):
            raise ArgvError(f"{word} needs a value")
        i += 1
        return args[i - 1]

    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            operands += args[i:]
            break
        if word.startswith("--"):
            name, attached, negated = _long(spec, word)
            has_value = "=" in word
            canonical = spec.aliases.get(name, f"--{name}")
            if negated:
                if has_value:
                    raise ArgvError(f"{word} takes no value")
                options.append((f"--no-{name}", None))
            elif name in spec.long_valued:
                options.append((canonical, attached if has_value else value_after(word)))
            elif name in spec.lastarg_default:
                last = i >= len(args)
                options.append((canonical, attached if has_value or last else value_after(word)))
            elif name in spec.long_optional:
                options.append((canonical, attached if has_value else None))
            elif has_value:
                raise ArgvError(f"{word} takes no value")
            else:
                options.append((canonical, None))
        elif word.startswith("-") and word != "-":
            if spec.numbers and word[1:].isdigit():
                options.append(("-#", word[1:]))
                continue
            j = 1
            while j < len(word):
                letter = word[j]
                j += 1
                if letter in spec.valued:
                    options.append((f"-{letter}", word[j:] or value_after(f"-{letter}")))
                    break
                if letter in spec.optional:
                    options.append((f"-{letter}", word[j:] or None))
                    break
                if letter not in spec.flags:
                    raise ArgvError(f"option -{letter} is not one the check knows")
                options.append((f"-{letter}", None))
        else:
            operands.append(word)
            if not spec.permute:
                operands += args[i:]
                break
    return Args(options, operands)


def short_option_in(
    args: Sequence[str], letters: str, valued: str, long_valued: Sequence[str] = ()
) -> str | None:
    """The first of `letters` given as a short option, alone or in a cluster (`-nz`), for a
    program whose full grammar we do not model: values of the `valued` short options and of
    the `long_valued` long ones are skipped, as is everything after `--`."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--":
            return None
        elif arg.startswith("--"):
            skip = arg in long_valued
        elif arg.startswith("-"):
            for n, letter in enumerate(arg[1:]):
                if letter in letters:
                    return letter
                if letter in valued:
                    skip = n == len(arg) - 2  # the value is the next word
                    break
    return None
