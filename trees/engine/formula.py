"""A safe evaluator for PBS formulas: `fairshare_usage_res` and `job_sort_formula`.

PBS evaluates both as Python expressions over job resources with the math module's functions
(seed 000, seed 001, seed 003, DESIGN.md §5). Here the text goes through `ast.parse` only, every
node is checked against a whitelist, and the formula is compiled once into a tree of small
closures: evaluating it walks no AST and never reaches eval, exec or compile.

Two dialects. The strict one (the default, used for `fairshare_usage_res`) knows arithmetic,
`**` and a handful of functions, all in floats. The Python one (`python=True`, for
`job_sort_formula`) follows what OpenPBS really runs: `eval` of the text after
`from math import *` (job_info.cpp:4051-4061, fifo.cpp:210-229; reference A.3). It adds
comparisons, `a if c else b`, `and`/`or`/`not`, `%`, `//`, every number-to-number function of
math plus the builtins abs/min/max/round/int/float, and the constants e, pi, tau, inf and nan;
a math name hides a resource of the same name, as in PBS's name lookup. It keeps Python's ints:
PBS's `globals_dict` holds ints for the keywords and for whole amounts, and `1/job_priority`
with priority 0 fails with Python's own "division by zero" (not "float division by zero").
"""

from __future__ import annotations

import ast
import difflib
import math
import numbers
import operator
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

# The names a `fairshare_usage_res` formula may use, as PBS names them: walltime and cput in
# seconds, mem and vmem in bytes, the rest counts. A job that lacks one has 0 of it.
USAGE_RESOURCES = (
    "ncpus",
    "ngpus",
    "nodect",
    "mpiprocs",
    "walltime",
    "cput",
    "cpupercent",
    "mem",
    "vmem",
    "billing",
)
# OpenPBS's built-in numeric resources: the consumable types (size, long, float) of
# src/lib/Libattr/master_resc_def_all.xml, which the scheduler puts in every job_sort_formula
# (resource.cpp:156-188, :380-384), plus ngpus, which most GPU sites define themselves.
# In a job_sort_formula sizes are kilobytes and times seconds (misc.cpp:176-262).
PBS_NUMERIC_RESOURCES = (
    "cput",
    "mem",
    "walltime",
    "soft_walltime",
    "min_walltime",
    "max_walltime",
    "ncpus",
    "naccelerators",
    "nodect",
    "nchunk",
    "mpiprocs",
    "ompthreads",
    "cpupercent",
    "energy",
    "file",
    "pmem",
    "vmem",
    "pvmem",
    "nice",
    "pcput",
    "hpm",
    "ssinodes",
    "start_time",
    "accelerator_memory",
    "hbmem",
    "pcap_node",
    "pcap_accelerator",
    "ngpus",
)
# The job's own numbers a job_sort_formula may use (pbs_share.h:57-64, job_info.cpp:4033-4041):
# eligible_time in seconds, the queue's and the job's Priority, the fairshare numbers of the
# job's entity (fairshare_perc and fair_share_perc are the same) and accrue_type (0 to 4).
JOB_SORT_KEYWORDS = (
    "eligible_time",
    "queue_priority",
    "job_priority",
    "fairshare_perc",
    "fair_share_perc",
    "fairshare_tree_usage",
    "fairshare_factor",
    "accrue_type",
)
# Every name a `job_sort_formula` may use (seed 003, DESIGN.md §5), each once, in this order.
JOB_SORT_NAMES = tuple(
    dict.fromkeys((*USAGE_RESOURCES, *PBS_NUMERIC_RESOURCES, *JOB_SORT_KEYWORDS))
)

MAX_FORMULA_LENGTH = 1000
# Realistic formulas nest a handful of levels; the cap keeps compiling and evaluating (both
# recursive) far from Python's recursion limit whatever the caller's stack depth.
MAX_NESTING = 100
KNOWN_NAMES_SHOWN = 12
# The Python dialect keeps ints, as PBS's eval does; `int ** int` could grow without bound, so a
# power whose result would pass this many bits is an overflow (a float ends at 1024 bits).
MAX_POWER_BITS = 4096
# The same for `*` and lcm(): every int a formula makes stays under this many bits, so that its
# `//`, `%`, gcd() or round() (quadratic in the size) stay well under a millisecond.
MAX_INT_BITS = 4 * MAX_POWER_BITS

Values = Mapping[str, float]
Evaluator = Callable[[Values], float]
Doubles = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the line ends Python's tokenizer counts
_LEADING_BLANKS = " \t\f\r\n"  # eval mode rejects an indented first line; PBS does not care
_isfinite = math.isfinite


class FormulaError(ValueError):
    """A formula text PBS formula semantics reject, located at a 0-based character offset."""

    message: str
    position: int
    text: str

    def __init__(self, message: str, position: int, text: str) -> None:
        # All three in args, so that the error pickles (Celery) and compares by value.
        super().__init__(message, position, text)
        self.message = message
        self.position = position
        self.text = text

    def __str__(self) -> str:
        """`col N: message` with a 1-based column, and the line too when it is not the first."""
        line, column = _line_and_column(self.text, self.position)
        where = f"col {column}" if line == 1 else f"line {line}, col {column}"
        return f"{where}: {self.message}"


class FormulaValueError(ArithmeticError):
    """Evaluating a PBS formula failed for these values (division by zero, domain, overflow)."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        # Both in args, so that the error pickles (Celery) and compares by value.
        super().__init__(message, message if reason is None else reason)

    @property
    def message(self) -> str:
        """What failed and where: `division by zero in '1/job_priority'`."""
        return str(self.args[0])

    @property
    def reason(self) -> str:
        """What failed, alone. In the Python dialect it is Python's own str() of the error,
        the text PBS logs after "Zero value will be used: " (job_info.cpp:4073-4083)."""
        return str(self.args[1])

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class MathFunction:
    """A function of the formula language, as Python's math module lends it to PBS formulas."""

    apply: Callable[..., float]
    min_args: int
    max_args: int | None  # None: any number
    domain: str = "math domain error"  # what a ValueError from `apply` means

    def arity(self) -> str:
        """How many arguments it takes, in words, as Python's own messages say it."""
        if self.max_args is None:
            return f"at least {self.min_args} argument{'s' * (self.min_args != 1)}"
        if self.max_args == self.min_args:
            return f"{self.min_args} argument{'s' * (self.min_args != 1)}"
        return f"{self.min_args} or {self.max_args} arguments"

    def accepts(self, count: int) -> bool:
        """Whether a call with `count` positional arguments has the right arity."""
        return count >= self.min_args and (self.max_args is None or count <= self.max_args)


def _minimum(*arguments: float) -> float:
    """min() over the arguments, as Python's builtin gives it to a PBS formula."""
    return min(arguments)


def _maximum(*arguments: float) -> float:
    """max() over the arguments, as Python's builtin gives it to a PBS formula."""
    return max(arguments)


def _floor(value: float) -> float:
    """math.floor, kept a float as all formula arithmetic is."""
    return float(math.floor(value))


def _ceil(value: float) -> float:
    """math.ceil, kept a float as all formula arithmetic is."""
    return float(math.ceil(value))


def _product(a: float, b: float) -> float:
    """Python's `*`, except that an int product past MAX_INT_BITS fails before it is built."""
    if type(a) is int and type(b) is int and a.bit_length() + b.bit_length() > MAX_INT_BITS:
        raise OverflowError("integer product too large")
    return a * b


def _lcm(*arguments: int) -> int:
    """math.lcm(), except that a result past MAX_INT_BITS fails before it is built."""
    result = math.lcm(*arguments[:1])
    for argument in arguments[1:]:
        divisor = math.gcd(result, argument)  # Python's TypeError for a float, as lcm() says
        if divisor and (result // divisor).bit_length() + argument.bit_length() > MAX_INT_BITS:
            raise OverflowError("integer lcm too large")
        result = math.lcm(result, argument)
    return result


def _round(number: float, ndigits: int | None = None) -> float:
    """Python's round(). Of an int, round(x, -k) divides by 10**k, which for a k of millions
    takes seconds to build. With k past x's bit length b, 10**k > 2**(b+1) > 2*|x|: the answer
    is the int 0, as round() gives it, without building the power."""
    if ndigits is None:
        return round(number)
    if isinstance(number, int) and isinstance(ndigits, int) and ndigits < -number.bit_length():
        return 0
    return round(number, ndigits)


_POW = MathFunction(
    math.pow, 2, 2, "a negative number to a fractional power, or 0 to a negative power"
)

FUNCTIONS: Mapping[str, MathFunction] = MappingProxyType(
    {
        "pow": _POW,
        "log": MathFunction(math.log, 1, 2, "logarithm of a number ≤ 0 or to a base ≤ 0"),
        "sqrt": MathFunction(math.sqrt, 1, 1, "square root of a negative number"),
        "exp": MathFunction(math.exp, 1, 1),
        "min": MathFunction(_minimum, 1, None),
        "max": MathFunction(_maximum, 1, None),
        "abs": MathFunction(math.fabs, 1, 1),
        "floor": MathFunction(_floor, 1, 1, "floor of nan"),
        "ceil": MathFunction(_ceil, 1, 1, "ceil of nan"),
    }
)

# The Python dialect's functions, by the name PBS's eval finds them under: math's (which
# `from math import *` puts in the namespace eval searches first), then the builtins. Left out:
# math's functions of iterables or giving tuples (fsum, prod, dist, frexp, modf) and the ones
# whose ints grow without bound or take unbounded time (factorial, comb, perm).
_MATH_UNARY = (
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "cbrt",
    "ceil",
    "cos",
    "cosh",
    "degrees",
    "erf",
    "erfc",
    "exp",
    "exp2",
    "expm1",
    "fabs",
    "floor",
    "gamma",
    "isfinite",
    "isinf",
    "isnan",
    "isqrt",
    "lgamma",
    "log10",
    "log1p",
    "log2",
    "radians",
    "sin",
    "sinh",
    "sqrt",
    "tan",
    "tanh",
    "trunc",
    "ulp",
)
_MATH_BINARY = ("atan2", "copysign", "fmod", "isclose", "ldexp", "nextafter", "pow", "remainder")
_MATH_VARIADIC = ("gcd", "hypot", "lcm")

MATH_FUNCTIONS: Mapping[str, MathFunction] = MappingProxyType(
    {
        **{name: MathFunction(getattr(math, name), 1, 1) for name in _MATH_UNARY},
        **{name: MathFunction(getattr(math, name), 2, 2) for name in _MATH_BINARY},
        **{name: MathFunction(getattr(math, name), 0, None) for name in _MATH_VARIADIC},
        "lcm": MathFunction(_lcm, 0, None),
        "log": MathFunction(math.log, 1, 2),
    }
)
# Builtins a formula can reach when neither math nor a resource has the name. min and max need
# two arguments: with one, Python iterates over it, and a number is no iterable.
BUILTIN_FUNCTIONS: Mapping[str, MathFunction] = MappingProxyType(
    {
        "abs": MathFunction(abs, 1, 1),
        "min": MathFunction(min, 2, None),
        "max": MathFunction(max, 2, None),
        "round": MathFunction(_round, 1, 2),
        "int": MathFunction(int, 1, 1),
        "float": MathFunction(float, 1, 1),
    }
)
MATH_CONSTANTS: Mapping[str, float] = MappingProxyType(
    {"e": math.e, "pi": math.pi, "tau": math.tau, "inf": math.inf, "nan": math.nan}
)

_REJECTED_OPERATORS: Mapping[type[ast.operator], str] = {
    ast.Mod: "'%' is not allowed",
    ast.FloorDiv: "'//' is not allowed",
    ast.MatMult: "'@' is not allowed",
    ast.LShift: "'<<' is not allowed",
    ast.RShift: "'>>' is not allowed",
    ast.BitOr: "'|' is not allowed",
    ast.BitAnd: "'&' is not allowed",
    ast.BitXor: "'^' is not allowed (for a power write '**' or pow(x, y))",
}

_REJECTED_NODES: Mapping[type[ast.AST], str] = {
    ast.Attribute: "attribute access is not allowed",
    ast.Subscript: "subscripts are not allowed",
    ast.Slice: "slices are not allowed",
    ast.Lambda: "lambdas are not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "comprehensions are not allowed",
    ast.Compare: "comparisons are not allowed",
    ast.BoolOp: "boolean operators ('and', 'or') are not allowed",
    ast.IfExp: "conditional expressions are not allowed",
    ast.JoinedStr: "f-strings are not allowed",
    ast.FormattedValue: "f-strings are not allowed",
    ast.NamedExpr: "assignment expressions (':=') are not allowed",
    ast.Tuple: "tuples are not allowed",
    ast.List: "lists are not allowed",
    ast.Set: "sets are not allowed",
    ast.Dict: "dicts are not allowed",
    ast.Starred: "'*' unpacking is not allowed",
    ast.Await: "'await' is not allowed",
    ast.Yield: "'yield' is not allowed",
    ast.YieldFrom: "'yield' is not allowed",
}

_REJECTED_UNARY: Mapping[type[ast.unaryop], str] = {
    ast.Not: "'not' is not allowed",
    ast.Invert: "'~' is not allowed",
}


class _Term(NamedTuple):
    """One term of a top-level sum: its source text, its sign, its compiled closure, and the
    text of the partial sum that adds it ("" for the first term)."""

    text: str
    negative: bool
    evaluator: Evaluator
    step: str


@dataclass(frozen=True, slots=True)
class Formula:
    """A PBS formula (`fairshare_usage_res`, `job_sort_formula`) compiled once to closures."""

    text: str
    names: tuple[str, ...]
    python: bool  # the job_sort_formula dialect: Python's semantics, ints kept
    _evaluator: Evaluator = field(repr=False, compare=False)
    _terms: tuple[_Term, ...] = field(repr=False, compare=False)
    # Each term's closure giving its signed value (a - b adds -b: the same number, exactly).
    _signed: tuple[Evaluator, ...] = field(repr=False, compare=False)
    # The Python dialect's formula over many jobs at once (evaluate_columns), where it can be.
    _columns: ColumnEvaluator | None = field(default=None, repr=False, compare=False)

    def evaluate(self, values: Mapping[str, float]) -> float:
        """The formula's value; a resource missing from `values` is 0, as PBS counts it unset."""
        return self._evaluator(values)


def parse_formula(text: str, names: Collection[str], *, python: bool = False) -> Formula:
    """Check and compile a PBS formula over the resources `names` (PBS formula semantics).

    `python=True` accepts the job_sort_formula dialect: any Python expression over numbers that
    PBS's eval would take (see the module docstring); resource values are then used as given,
    ints as ints.
    """
    if len(text) > MAX_FORMULA_LENGTH:
        raise FormulaError(
            f"formula too long ({len(text)} characters, at most {MAX_FORMULA_LENGTH})",
            MAX_FORMULA_LENGTH,
            text,
        )
    if not text.strip():
        raise FormulaError("empty formula", 0, text)
    invalid = _invalid_character(text)
    if invalid is not None:
        raise FormulaError(f"invalid character {text[invalid]!r}", invalid, text)
    source = _Source(text)
    root = _parse(source)
    _check_nesting(source, root)
    compiler = _PythonCompiler(source, names) if python else _Compiler(source, names)
    evaluator, terms = compiler.compile_root(root)
    signed = tuple(_negation(t.evaluator) if t.negative else t.evaluator for t in terms)
    columns = _column_evaluator(root) if python else None
    return Formula(text, tuple(compiler.used), python, evaluator, tuple(terms), signed, columns)


def evaluate_terms(formula: Formula, values: Mapping[str, float]) -> tuple[float, list[float]]:
    """The formula's value and the signed value of each of its top-level terms (`term_texts`),
    every term evaluated once. The terms are added up in the formula's own order and with its
    own checks, so the value is exactly evaluate()'s and so is the first FormulaValueError."""
    terms = formula._terms
    if formula.python:
        # No check between the additions: every error comes from a term, in the same order.
        signed = [evaluate(values) for evaluate in formula._signed]
        total = signed[0]
        for index in range(1, len(signed)):
            total = total + signed[index]
        return _as_float(total, formula.text), [
            value if type(value) is float else _shown(value) for value in signed
        ]
    total = terms[0].evaluator(values)
    signed = [total]
    for term in terms[1:]:
        value = term.evaluator(values)
        if term.negative:
            total = _checked(total - value, term.step)
            signed.append(-value)
        else:
            total = _checked(total + value, term.step)
            signed.append(value)
    return total, signed


class Column(NamedTuple):
    """One name's values over many jobs: as doubles, and which of them are Python ints."""

    values: Doubles
    ints: Flags


def evaluate_columns(
    formula: Formula, columns: Mapping[str, Column], size: int
) -> tuple[Doubles, Flags] | None:
    """evaluate() of the Python dialect over `size` jobs at once, each name's values a Column
    (a name without one is the int 0): the values, and which jobs numpy's doubles could not
    stand for Python's numbers (an int past 2**53, a zero divisor), for evaluate() one by one.
    None for a formula with an operation numpy does not do exactly as Python does: calls,
    `**`, `//`, `%`, comparisons, conditionals, `and`/`or`/`not`."""
    if formula._columns is None:
        return None
    with np.errstate(all="ignore"):  # inf and nan come out as Python's floats give them
        values, _, inexact = formula._columns(columns, size)
    return values.copy(), inexact  # a bare name's values are its column's own array


def term_texts(formula: Formula) -> tuple[str, ...]:
    """The source text of each top-level term, in the order evaluate_terms() gives values."""
    return tuple(term.text for term in formula._terms)


def describe_terms(formula: Formula, values: Mapping[str, float]) -> list[tuple[str, float]]:
    """Each top-level term of the formula with its signed value: job_sort_formula's parts."""
    return list(zip(term_texts(formula), evaluate_terms(formula, values)[1], strict=True))


def _line_and_column(text: str, position: int) -> tuple[int, int]:
    """1-based line and column of a character offset, lines split as Python splits them."""
    breaks = list(_LINE_BREAK.finditer(text, 0, position))
    if not breaks:
        return 1, position + 1
    return len(breaks) + 1, position - breaks[-1].end() + 1


class _Source:
    """A formula's text and the conversion of ast's line/UTF-8-byte positions to characters."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lead = len(text) - len(text.lstrip(_LEADING_BLANKS))
        self.body = text[self.lead :]
        self.line_starts = [0, *(match.end() for match in _LINE_BREAK.finditer(self.body))]

    def offset(self, lineno: int, column: int) -> int:
        """The offset in the text of a 1-based line and a 0-based character column of the body."""
        if not 1 <= lineno <= len(self.line_starts):
            return len(self.text)
        return min(self.lead + self.line_starts[lineno - 1] + column, len(self.text))

    def _byte_offset(self, lineno: int, byte_column: int) -> int:
        """The offset of an ast position, whose column counts UTF-8 bytes."""
        start = self.line_starts[lineno - 1]
        line = self.body[start : start + byte_column]  # a character takes at least one byte
        column = len(line.encode()[:byte_column].decode())
        return self.offset(lineno, column)

    def start(self, node: ast.expr | ast.keyword) -> int:
        """Where a node starts in the text."""
        return self._byte_offset(node.lineno, node.col_offset)

    def end(self, node: ast.expr) -> int:
        """Where a node ends in the text."""
        return self._byte_offset(node.end_lineno or node.lineno, node.end_col_offset or 0)

    def segment(self, node: ast.expr) -> str:
        """A node's source text."""
        return self.text[self.start(node) : self.end(node)]

    def error(self, message: str, node: ast.expr | ast.keyword) -> FormulaError:
        """A FormulaError at the start of `node`."""
        return FormulaError(message, self.start(node), self.text)

    def syntax_error(self, error: SyntaxError) -> FormulaError:
        """A FormulaError where Python puts a syntax error; no position means the end."""
        # 3.11 gives character columns for str input, and offset 0 for errors at the end of input.
        if not error.lineno or not error.offset or error.offset < 1:
            position = len(self.text)
        else:
            position = self.offset(error.lineno, error.offset - 1)
        return FormulaError(f"syntax error: {error.msg}", position, self.text)


def _parse(source: _Source) -> ast.expr:
    """The expression's AST, every parser failure turned into a FormulaError."""
    try:
        return ast.parse(source.body, mode="eval").body
    except SyntaxError as error:
        raise source.syntax_error(error) from None
    except (RecursionError, MemoryError):
        raise FormulaError("formula nested too deeply", 0, source.text) from None
    except ValueError:  # anything _invalid_character missed, at no better known place
        raise FormulaError("invalid formula text", 0, source.text) from None


def _invalid_character(text: str) -> int | None:
    """The offset of a null byte or a lone surrogate, which the parser reports without one."""
    for index, char in enumerate(text):
        if char == "\0" or "\ud800" <= char <= "\udfff":
            return index
    return None


def _check_nesting(source: _Source, root: ast.expr) -> None:
    """Reject expressions nested deeper than MAX_NESTING, without recursing to find out."""
    pending = [(root, 1)]
    while pending:
        node, depth = pending.pop()
        if depth > MAX_NESTING:
            message = f"formula nested too deeply (more than {MAX_NESTING} levels)"
            raise source.error(message, node)
        pending.extend(
            (child, depth + 1)
            for child in ast.iter_child_nodes(node)
            if isinstance(child, ast.expr)
        )


def _operator_offset(gap: str) -> int:
    """Where a binary operator starts in the text between its operands, past ( ) and comments."""
    index = 0
    while index < len(gap):
        char = gap[index]
        if char == "#":
            index = gap.find("\n", index)
            if index < 0:
                break
        elif char in "() \t\f\r\n\\":
            index += 1
        else:
            return index
    return 0


def _unknown_resource(name: str, known: Collection[str]) -> str:
    """The message for a name that is neither a resource nor a function, with a likely fix."""
    listed = sorted(known)
    shown = ", ".join(listed[:KNOWN_NAMES_SHOWN]) or "none"
    if len(listed) > KNOWN_NAMES_SHOWN:
        shown += ", ..."
    close = difflib.get_close_matches(name, listed, n=1)
    hint = f", did you mean '{close[0]}'?" if close else ""
    return f"unknown resource '{name}'{hint} (known: {shown})"


class _Compiler:
    """Checks one parsed formula against the whitelist and builds its closures."""

    def __init__(self, source: _Source, names: Collection[str]) -> None:
        self.source = source
        self.known = frozenset(names)
        self.used: dict[str, None] = {}  # insertion-ordered: names in order of first use

    def compile_root(self, root: ast.expr) -> tuple[Evaluator, list[_Term]]:
        """The whole formula's closure and its top-level terms."""
        if _is_sum(root):
            assert isinstance(root, ast.BinOp)
            return self._sum(root)
        evaluator = self.compile(root)
        if _may_be_unchecked(root):
            evaluator = _finite(evaluator, self.source.segment(root))
        return evaluator, [_Term(self.source.segment(root), False, evaluator, "")]

    def compile(self, node: ast.expr) -> Evaluator:
        """The closure computing `node`, or a FormulaError at the first node not allowed."""
        if isinstance(node, ast.Constant):
            return self._constant(node)
        if isinstance(node, ast.Name):
            return self._name(node)
        if isinstance(node, ast.BinOp):
            return self._sum(node)[0] if _is_sum(node) else self._binary(node)
        if isinstance(node, ast.UnaryOp):
            return self._unary(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        message = _REJECTED_NODES.get(type(node), f"{type(node).__name__} is not allowed")
        raise self.source.error(message, node)

    def _constant(self, node: ast.Constant) -> Evaluator:
        """A number literal, as a float; any other literal is rejected."""
        value = node.value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.source.error(_literal_message(value), node)
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not _isfinite(number):
            raise self.source.error("number too large", node)
        return _constant(number)

    def _name(self, node: ast.Name) -> Evaluator:
        """A resource read from the values; a function's name alone is an error."""
        if node.id in self.known:
            self.used.setdefault(node.id)
            return _resource(node.id)
        if node.id in FUNCTIONS:
            message = f"function '{node.id}' used as a value (call it: {node.id}(...))"
            raise self.source.error(message, node)
        raise self.source.error(_unknown_resource(node.id, self.known), node)

    def _sum(self, node: ast.BinOp) -> tuple[Evaluator, list[_Term]]:
        """A chain `a + b - c`, built left to right as Python associates it, and its terms."""
        steps: list[ast.BinOp] = []
        first: ast.expr = node
        while isinstance(first, ast.BinOp) and _is_sum(first):
            steps.append(first)
            first = first.left
        total = self.compile(first)
        terms = [_Term(self.source.segment(first), False, total, "")]
        for step in reversed(steps):
            term = self.compile(step.right)
            negative = isinstance(step.op, ast.Sub)
            text = self.source.segment(step)
            terms.append(_Term(self.source.segment(step.right), negative, term, text))
            combine = operator.sub if negative else operator.add
            total = self._combine(combine, total, term, text)
        return total, terms

    def _combine(
        self,
        operation: Callable[[float, float], float],
        left: Evaluator,
        right: Evaluator,
        text: str,
    ) -> Evaluator:
        """One `+` or `-` of a sum."""
        return _arithmetic(operation, left, right, text)

    def _binary(self, node: ast.BinOp) -> Evaluator:
        """`*`, `/` and `**`; other operators are rejected at the operator itself."""
        rejected = _REJECTED_OPERATORS.get(type(node.op))
        if rejected is not None:
            gap_start = self.source.end(node.left)
            gap = self.source.text[gap_start : self.source.start(node.right)]
            raise FormulaError(rejected, gap_start + _operator_offset(gap), self.source.text)
        left = self.compile(node.left)
        right = self.compile(node.right)
        text = self.source.segment(node)
        if isinstance(node.op, ast.Mult):
            return _arithmetic(operator.mul, left, right, text)
        if isinstance(node.op, ast.Div):
            return _quotient(left, right, text)
        return _application(_POW, [left, right], text)  # ast.Pow: math.pow, never a complex

    def _unary(self, node: ast.UnaryOp) -> Evaluator:
        """Unary minus and plus; `not` and `~` are rejected."""
        rejected = _REJECTED_UNARY.get(type(node.op))
        if rejected is not None:
            raise self.source.error(rejected, node)
        operand = self.compile(node.operand)
        return _negation(operand) if isinstance(node.op, ast.USub) else operand

    def _call(self, node: ast.Call) -> Evaluator:
        """A call of a known function by plain name, with positional arguments, right arity."""
        function = self._function(node.func)
        for argument in node.args:
            if isinstance(argument, ast.Starred):
                raise self.source.error("'*' arguments are not allowed", argument)
        for keyword in node.keywords:
            message = (
                "'**' arguments are not allowed"
                if keyword.arg is None
                else f"keyword arguments are not allowed ('{keyword.arg}=')"
            )
            raise self.source.error(message, keyword)
        if not function.accepts(len(node.args)):
            assert isinstance(node.func, ast.Name)
            message = f"{node.func.id}() takes {function.arity()} ({len(node.args)} given)"
            raise self.source.error(message, node)
        arguments = [self.compile(argument) for argument in node.args]
        return self._apply(function, arguments, self.source.segment(node))

    def _apply(self, function: MathFunction, arguments: list[Evaluator], text: str) -> Evaluator:
        """A call of a checked function with compiled arguments."""
        return _application(function, arguments, text)

    def _function(self, func: ast.expr) -> MathFunction:
        """The function a call names; anything but a known function's plain name is rejected."""
        known = ", ".join(sorted(FUNCTIONS))
        if not isinstance(func, ast.Name):
            message = f"only these functions can be called, by plain name: {known}"
            raise self.source.error(message, func)
        function = FUNCTIONS.get(func.id)
        if function is not None:
            return function
        if func.id in self.known:
            raise self.source.error(f"resource '{func.id}' is not a function", func)
        raise self.source.error(f"unknown function '{func.id}' (known: {known})", func)


_COMPARISONS: Mapping[type[ast.cmpop], Callable[[float, float], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}

_PYTHON_OPERATORS: Mapping[type[ast.operator], Callable[[float, float], float]] = {
    ast.Mult: _product,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


class _PythonCompiler(_Compiler):
    """The job_sort_formula dialect: what PBS's `eval(formula, globals_dict, locals())` accepts
    over numbers, with Python's own results, ints included, and Python's own error texts."""

    def __init__(self, source: _Source, names: Collection[str]) -> None:
        super().__init__(source, names)
        # The closures of literals and math constants, with their values: an operator with a
        # constant operand reads it directly, one call fewer (job_sort_formula runs per job).
        self.constants: dict[Evaluator, float] = {}

    def _operation(
        self,
        operation: Callable[[float, float], float],
        left: Evaluator,
        right: Evaluator,
        text: str,
    ) -> Evaluator:
        """A binary operator as Python applies it, a constant operand folded into the closure."""
        if right in self.constants:
            return _python_operation_by(operation, left, self.constants[right], text)
        if left in self.constants:
            return _python_operation_on(operation, self.constants[left], right, text)
        return _python_operation(operation, left, right, text)

    def _number(self, value: float) -> Evaluator:
        """The closure of a constant, remembered as one."""
        evaluator = _constant(value)
        self.constants[evaluator] = value
        return evaluator

    def compile_root(self, root: ast.expr) -> tuple[Evaluator, list[_Term]]:
        """The whole formula's closure, giving a float as PyFloat_AsDouble does, and its terms."""
        if _is_sum(root):
            assert isinstance(root, ast.BinOp)
            total, terms = self._sum(root)
        else:
            total = self.compile(root)
            terms = [_Term(self.source.segment(root), False, total, "")]
        return _float_result(total, self.source.text), terms

    def compile(self, node: ast.expr) -> Evaluator:
        """The closure computing `node`; comparisons, conditionals and `and`/`or` are allowed."""
        if isinstance(node, ast.Compare):
            return self._comparison(node)
        if isinstance(node, ast.BoolOp):
            return self._boolean(node)
        if isinstance(node, ast.IfExp):
            test = self.compile(node.test)
            return _conditional(test, self.compile(node.body), self.compile(node.orelse))
        return super().compile(node)

    def _combine(
        self,
        operation: Callable[[float, float], float],
        left: Evaluator,
        right: Evaluator,
        text: str,
    ) -> Evaluator:
        """`+` and `-` as Python does them: an int stays an int, an overflow is inf."""
        return self._operation(operation, left, right, text)

    def _constant(self, node: ast.Constant) -> Evaluator:
        """A number literal as Python reads it (an int stays an int); True and False are 1, 0."""
        value = node.value
        if isinstance(value, bool):
            return self._number(int(value))
        if not isinstance(value, int | float):
            raise self.source.error(_literal_message(value), node)
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not _isfinite(number):
            raise self.source.error("number too large", node)
        return self._number(value)

    def _name(self, node: ast.Name) -> Evaluator:
        """math's constants first, then the resources, as PBS's eval looks names up."""
        name = node.id
        constant = MATH_CONSTANTS.get(name)
        if constant is not None:
            return self._number(constant)
        if name in MATH_FUNCTIONS or (name in BUILTIN_FUNCTIONS and name not in self.known):
            message = f"function '{name}' used as a value (call it: {name}(...))"
            if name in self.known:
                message += f"; math's {name} hides the resource '{name}'"
            raise self.source.error(message, node)
        if name in self.known:
            self.used.setdefault(name)
            return _python_resource(name)
        raise self.source.error(_unknown_resource(name, self.known), node)

    def _binary(self, node: ast.BinOp) -> Evaluator:
        """`*`, `/`, `//`, `%` and `**` as Python does them; bitwise operators are rejected."""
        operation = _PYTHON_OPERATORS.get(type(node.op))
        if operation is None and not isinstance(node.op, ast.Pow):
            gap_start = self.source.end(node.left)
            gap = self.source.text[gap_start : self.source.start(node.right)]
            rejected = _REJECTED_OPERATORS.get(type(node.op), "operator not allowed")
            raise FormulaError(rejected, gap_start + _operator_offset(gap), self.source.text)
        left = self.compile(node.left)
        right = self.compile(node.right)
        text = self.source.segment(node)
        return self._operation(operation or _power, left, right, text)

    def _unary(self, node: ast.UnaryOp) -> Evaluator:
        """Unary minus, plus and `not`; `~` is rejected."""
        if isinstance(node.op, ast.Invert):
            raise self.source.error(_REJECTED_UNARY[ast.Invert], node)
        operand = self.compile(node.operand)
        if isinstance(node.op, ast.Not):
            return _negated_truth(operand)
        return _negation(operand) if isinstance(node.op, ast.USub) else operand

    def _comparison(self, node: ast.Compare) -> Evaluator:
        """`a < b`, chained like `a < b <= c` (each operand evaluated once, stopping early)."""
        operands = [node.left, *node.comparators]
        tests = []
        for index, op in enumerate(node.ops):
            test = _COMPARISONS.get(type(op))
            if test is None:
                gap_start = self.source.end(operands[index])
                gap = self.source.text[gap_start : self.source.start(operands[index + 1])]
                message = "only the comparisons == != < <= > >= are allowed"
                raise FormulaError(message, gap_start + _operator_offset(gap), self.source.text)
            tests.append(test)
        compiled = [self.compile(operand) for operand in operands]
        return _chain(compiled[0], list(zip(tests, compiled[1:], strict=True)))

    def _boolean(self, node: ast.BoolOp) -> Evaluator:
        """`and` / `or`, short-circuit, giving the operand that decided as Python does."""
        operands = [self.compile(value) for value in node.values]
        return _conjunction(operands) if isinstance(node.op, ast.And) else _disjunction(operands)

    def _apply(self, function: MathFunction, arguments: list[Evaluator], text: str) -> Evaluator:
        """A call with Python's own results and error texts (a TypeError included)."""
        return _python_call(function.apply, arguments, text)

    def _function(self, func: ast.expr) -> MathFunction:
        """The function a call names, found as PBS's eval finds it: math, resources, builtins."""
        if not isinstance(func, ast.Name):
            raise self.source.error("only functions can be called, by plain name", func)
        name = func.id
        function = MATH_FUNCTIONS.get(name)
        if function is not None:
            return function
        if name in MATH_CONSTANTS:
            raise self.source.error(f"'{name}' is a number, not a function", func)
        if name in self.known:
            hidden = f" (it hides the builtin {name}())" if name in BUILTIN_FUNCTIONS else ""
            raise self.source.error(f"resource '{name}' is not a function{hidden}", func)
        function = BUILTIN_FUNCTIONS.get(name)
        if function is not None:
            return function
        raise self.source.error(_unknown_function(name), func)


def _is_sum(node: ast.expr) -> bool:
    """Whether a node is `a + b` or `a - b`."""
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub)


def _may_be_unchecked(node: ast.expr) -> bool:
    """Whether a formula's value can come straight from the values, unchecked for inf and nan."""
    while isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Name)


def _literal_message(value: object) -> str:
    """Why a literal that is not a number is rejected."""
    if isinstance(value, bool):
        return "booleans are not allowed"
    if isinstance(value, str):
        return "string literals are not allowed"
    if isinstance(value, bytes):
        return "bytes literals are not allowed"
    if isinstance(value, complex):
        return "complex numbers are not allowed"
    return f"{value!r} is not allowed"


def _located(reason: str, text: str) -> FormulaValueError:
    """A FormulaValueError for `reason`, naming the part of the formula that failed."""
    return FormulaValueError(f"{reason} in {text!r}", reason)


def _not_finite(result: float, text: str) -> FormulaValueError:
    """The error for an inf or nan result, which PBS could not sort or accrue."""
    if math.isnan(result):
        return _located("result is not a number (nan)", text)
    return _located(f"overflow (result is {result})", text)


def _failure(error: ArithmeticError | ValueError, function: MathFunction, text: str) -> str:
    """What a math function's exception means, for a FormulaValueError's reason."""
    if isinstance(error, ZeroDivisionError):
        return "division by zero"
    if isinstance(error, OverflowError):
        return "overflow"
    return function.domain


def _unknown_function(name: str) -> str:
    """The message for a call of a name the Python dialect does not know, with a likely fix."""
    known = sorted({*MATH_FUNCTIONS, *BUILTIN_FUNCTIONS})
    close = difflib.get_close_matches(name, known, n=1)
    hint = f", did you mean '{close[0]}'?" if close else ""
    shown = ", ".join(known[:KNOWN_NAMES_SHOWN])
    return f"unknown function '{name}'{hint} (known: {shown}, ...)"


def _constant(number: float) -> Evaluator:
    """A closure returning a number literal."""

    def constant(values: Values) -> float:
        return number

    return constant


def _resource(name: str) -> Evaluator:
    """A closure reading one resource; PBS counts an unset resource as 0."""

    def resource(values: Values) -> float:
        raw = values.get(name, 0.0)
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise FormulaValueError(f"resource {name!r} is not a number: {raw!r}") from None

    return resource


def _checked(result: float, text: str) -> float:
    """The result of an operation of `text`, unless it is inf or nan, which PBS could not
    sort or accrue."""
    if _isfinite(result):
        return result
    raise _not_finite(result, text)


def _finite(operand: Evaluator, text: str) -> Evaluator:
    """A closure rejecting an inf or nan value that no operation has checked yet."""

    def finite(values: Values) -> float:
        return _checked(operand(values), text)

    return finite


def _negation(operand: Evaluator) -> Evaluator:
    """Unary minus."""

    def negation(values: Values) -> float:
        return -operand(values)

    return negation


def _arithmetic(
    operation: Callable[[float, float], float], left: Evaluator, right: Evaluator, text: str
) -> Evaluator:
    """`a + b`, `a - b` or `a * b` in floats."""

    def arithmetic(values: Values) -> float:
        return _checked(operation(left(values), right(values)), text)

    return arithmetic


def _quotient(left: Evaluator, right: Evaluator, text: str) -> Evaluator:
    """`a / b` in floats; a zero divisor is an error, as in Python and PBS."""

    def quotient(values: Values) -> float:
        dividend = left(values)
        divisor = right(values)
        try:
            result = dividend / divisor
        except ZeroDivisionError:
            raise _located("division by zero", text) from None
        return _checked(result, text)

    return quotient


def _application(function: MathFunction, arguments: Sequence[Evaluator], text: str) -> Evaluator:
    """A call of a math function, specialised by arity so that the common ones stay cheap."""
    apply = function.apply
    if len(arguments) == 1:
        (only,) = arguments

        def unary(values: Values) -> float:
            argument = only(values)
            try:
                result = apply(argument)
            except (ArithmeticError, ValueError) as error:
                raise _located(_failure(error, function, text), text) from None
            return _checked(result, text)

        return unary
    if len(arguments) == 2:
        first, second = arguments

        def binary(values: Values) -> float:
            x = first(values)
            y = second(values)
            try:
                result = apply(x, y)
            except (ArithmeticError, ValueError) as error:
                raise _located(_failure(error, function, text), text) from None
            return _checked(result, text)

        return binary

    def variadic(values: Values) -> float:
        evaluated = [argument(values) for argument in arguments]
        try:
            result = apply(*evaluated)
        except (ArithmeticError, ValueError) as error:
            raise _located(_failure(error, function, text), text) from None
        return _checked(result, text)

    return variadic


# The Python dialect's closures. They apply Python's own operators to the values as they are, so
# results, ints and error texts are Python's; only `**`, `*`, lcm() and round() are guarded
# against runaway ints (_power, _product, _lcm, _round).


def _python_error(error: Exception, text: str) -> FormulaValueError:
    """A FormulaValueError whose reason is Python's str() of the error, as PBS logs it."""
    return _located(str(error), text)


def _python_resource(name: str) -> Evaluator:
    """A closure reading one resource as it is (an int stays an int); unset is the int 0."""

    def resource(values: Values) -> float:
        raw = values.get(name, 0)
        if type(raw) is int or type(raw) is float:  # the common case, checked cheaply
            return raw
        if isinstance(raw, numbers.Integral):
            return int(raw)
        if isinstance(raw, numbers.Real):
            return float(raw)
        raise FormulaValueError(f"resource {name!r} is not a number: {raw!r}")

    return resource


def _power(base: float, exponent: float) -> float:
    """Python's `**`, except that an int power past MAX_POWER_BITS or a complex result fails."""
    if (
        isinstance(base, int)
        and isinstance(exponent, int)
        and exponent > 0
        and abs(base) > 1
        and exponent * (abs(base).bit_length() - 1) > MAX_POWER_BITS
    ):
        raise OverflowError("integer power too large")
    result: float | complex = base**exponent
    if isinstance(result, complex):  # (-8)**(1/3); PBS would carry a complex number on
        raise ValueError("a negative number to a fractional power gives a complex number")
    return result


def _python_operation(
    operation: Callable[[float, float], float], left: Evaluator, right: Evaluator, text: str
) -> Evaluator:
    """A binary operator applied as Python applies it."""

    def python_operation(values: Values) -> float:
        a = left(values)
        b = right(values)
        try:
            return operation(a, b)
        except (ArithmeticError, ValueError) as error:
            raise _python_error(error, text) from None

    return python_operation


def _python_operation_by(
    operation: Callable[[float, float], float], left: Evaluator, right: float, text: str
) -> Evaluator:
    """A binary operator whose right operand is a constant."""

    def python_operation_by(values: Values) -> float:
        a = left(values)
        try:
            return operation(a, right)
        except (ArithmeticError, ValueError) as error:
            raise _python_error(error, text) from None

    return python_operation_by


def _python_operation_on(
    operation: Callable[[float, float], float], left: float, right: Evaluator, text: str
) -> Evaluator:
    """A binary operator whose left operand is a constant."""

    def python_operation_on(values: Values) -> float:
        b = right(values)
        try:
            return operation(left, b)
        except (ArithmeticError, ValueError) as error:
            raise _python_error(error, text) from None

    return python_operation_on


def _python_call(
    apply: Callable[..., float], arguments: Sequence[Evaluator], text: str
) -> Evaluator:
    """A call of a math function or builtin, specialised by arity so the common ones stay cheap;
    its TypeError (isqrt of a float) is an evaluation error, as PBS logs it."""
    if len(arguments) == 1:
        (only,) = arguments

        def unary(values: Values) -> float:
            argument = only(values)
            try:
                return apply(argument)
            except (ArithmeticError, ValueError, TypeError) as error:
                raise _python_error(error, text) from None

        return unary

    def variadic(values: Values) -> float:
        evaluated = [argument(values) for argument in arguments]
        try:
            return apply(*evaluated)
        except (ArithmeticError, ValueError, TypeError) as error:
            raise _python_error(error, text) from None

    return variadic


def _conditional(test: Evaluator, body: Evaluator, orelse: Evaluator) -> Evaluator:
    """`body if test else orelse`, evaluating only the branch taken."""

    def conditional(values: Values) -> float:
        return body(values) if test(values) else orelse(values)

    return conditional


def _negated_truth(operand: Evaluator) -> Evaluator:
    """`not x`: True (1) when x is 0."""

    def negated_truth(values: Values) -> float:
        return not operand(values)

    return negated_truth


def _chain(
    first: Evaluator, links: Sequence[tuple[Callable[[float, float], bool], Evaluator]]
) -> Evaluator:
    """`a < b <= c`: each operand evaluated once, False at the first link that fails."""
    if len(links) == 1:
        ((test, second),) = links

        def comparison(values: Values) -> float:
            return test(first(values), second(values))

        return comparison

    def chain(values: Values) -> float:
        left = first(values)
        for link_test, operand in links:
            right = operand(values)
            if not link_test(left, right):
                return False
            left = right
        return True

    return chain


def _conjunction(operands: Sequence[Evaluator]) -> Evaluator:
    """`a and b and c`: the first false operand, else the last."""

    def conjunction(values: Values) -> float:
        result = 0.0
        for operand in operands:
            result = operand(values)
            if not result:
                return result
        return result

    return conjunction


def _disjunction(operands: Sequence[Evaluator]) -> Evaluator:
    """`a or b or c`: the first true operand, else the last."""

    def disjunction(values: Values) -> float:
        result = 0.0
        for operand in operands:
            result = operand(values)
            if result:
                return result
        return result

    return disjunction


def _as_float(result: float, text: str) -> float:
    """A result as PyFloat_AsDouble reads it (True is 1.0); an int past a double fails."""
    try:
        return float(result)
    except OverflowError as error:
        raise _python_error(error, text) from None


def _float_result(operand: Evaluator, text: str) -> Evaluator:
    """A closure giving the formula's result as a float."""

    def float_result(values: Values) -> float:
        return _as_float(operand(values), text)

    return float_result


def _shown(value: float) -> float:
    """A term's value as a float, for showing: an int too large for a double is ±inf."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


# An int of up to 2**53 is a double exactly, and a sum, difference or product of two such ints
# too while it stays under 2**53; a double division of two of them is Python's int / int
# (correctly rounded either way). Past it, Python's ints are exact and doubles are not.
_EXACT_INT = 2.0**53


class _ColumnResult(NamedTuple):
    """A subexpression over the jobs: its doubles, which are Python ints, which are inexact."""

    values: Doubles
    ints: Flags
    inexact: Flags


ColumnEvaluator = Callable[[Mapping[str, Column], int], _ColumnResult]

_COLUMN_OPERATORS: Mapping[
    type[ast.operator],
    Callable[[Doubles, Doubles], Doubles],
] = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
}


def _column_evaluator(node: ast.expr) -> ColumnEvaluator | None:
    """The closure computing a compiled Python-dialect node over columns, or None where numpy
    would not give Python's result: only numbers, names, `+ - * /` and unary signs."""
    if isinstance(node, ast.Constant):
        value = node.value
        number = int(value) if isinstance(value, bool) else value
        if type(number) is int and abs(number) < _EXACT_INT:
            return _column_constant(float(number), is_int=True)
        return _column_constant(number, is_int=False) if type(number) is float else None
    if isinstance(node, ast.Name):
        constant = MATH_CONSTANTS.get(node.id)  # math's names first, as in _PythonCompiler
        return _column_name(node.id) if constant is None else _column_constant(constant, False)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _column_evaluator(node.operand)
        if operand is None or isinstance(node.op, ast.UAdd):
            return operand
        return _column_negation(operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult | ast.Div):
        left, right = _column_evaluator(node.left), _column_evaluator(node.right)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Div):
            return _column_quotient(left, right)
        return _column_arithmetic(_COLUMN_OPERATORS[type(node.op)], left, right)
    return None


def _column_constant(number: float, is_int: bool) -> ColumnEvaluator:
    def constant(columns: Mapping[str, Column], size: int) -> _ColumnResult:
        return _ColumnResult(
            np.full(size, number), np.full(size, is_int), np.zeros(size, dtype=np.bool_)
        )

    return constant


def _column_name(name: str) -> ColumnEvaluator:
    def resource(columns: Mapping[str, Column], size: int) -> _ColumnResult:
        column = columns.get(name)
        if column is None:  # unset: the int 0
            return _ColumnResult(np.zeros(size), np.ones(size, np.bool_), np.zeros(size, np.bool_))
        values, ints = column
        return _ColumnResult(values, ints, ints & (np.abs(values) >= _EXACT_INT))

    return resource


def _int_zeros_positive(values: Doubles, ints: Flags) -> None:
    """An int 0 has no sign, where a double's 0 may (-0 is 0 for an int, -0.0 for a float)."""
    values[ints & (values == 0)] = 0.0


def _column_negation(operand: ColumnEvaluator) -> ColumnEvaluator:
    def negation(columns: Mapping[str, Column], size: int) -> _ColumnResult:
        values, ints, inexact = operand(columns, size)
        negated = -values
        _int_zeros_positive(negated, ints)
        return _ColumnResult(negated, ints, inexact)

    return negation


def _column_arithmetic(
    operation: Callable[[Doubles, Doubles], Doubles],
    left: ColumnEvaluator,
    right: ColumnEvaluator,
) -> ColumnEvaluator:
    """`+`, `-`, `*`: an int with an int stays an int, anything with a float is a float."""

    def arithmetic(columns: Mapping[str, Column], size: int) -> _ColumnResult:
        a, a_ints, a_inexact = left(columns, size)
        b, b_ints, b_inexact = right(columns, size)
        result = operation(a, b)
        ints = a_ints & b_ints
        _int_zeros_positive(result, ints)
        inexact = a_inexact | b_inexact | (ints & (np.abs(result) >= _EXACT_INT))
        return _ColumnResult(result, ints, inexact)

    return arithmetic


def _column_quotient(left: ColumnEvaluator, right: ColumnEvaluator) -> ColumnEvaluator:
    """`/`, always a float; a zero divisor is Python's ZeroDivisionError, left to evaluate()."""

    def quotient(columns: Mapping[str, Column], size: int) -> _ColumnResult:
        a, _, a_inexact = left(columns, size)
        b, _, b_inexact = right(columns, size)
        return _ColumnResult(a / b, np.zeros(size, np.bool_), a_inexact | b_inexact | (b == 0))

    return quotient
