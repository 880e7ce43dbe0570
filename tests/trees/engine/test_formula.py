"""trees.engine.formula: the safe evaluator of PBS formulas (seed 000, seed 003, DESIGN.md §5,
and the job_sort_formula dialect of pbs-job-priority-and-polling.md A.3).

Expected values are computed by hand or with math.*, never by handing the text to Python.
"""

import ast
import dataclasses
import math
import operator
import pickle
import tracemalloc
from datetime import timedelta

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from trees.engine.formula import (
    BUILTIN_FUNCTIONS,
    FUNCTIONS,
    JOB_SORT_KEYWORDS,
    JOB_SORT_NAMES,
    MATH_CONSTANTS,
    MATH_FUNCTIONS,
    MAX_FORMULA_LENGTH,
    MAX_INT_BITS,
    PBS_NUMERIC_RESOURCES,
    USAGE_RESOURCES,
    Column,
    Formula,
    FormulaError,
    FormulaValueError,
    describe_terms,
    evaluate_columns,
    evaluate_terms,
    parse_formula,
    term_texts,
)

RESOURCES = ("cput", "mem", "ncpus", "walltime", "ngpus", "fairshare_tree_usage", "eligible_time")
SEED_003 = "10*(ncpus/6656)+1000*(1-fairshare_tree_usage)+(eligible_time/86400)"
SEED_003_NAMES = ("ncpus", "fairshare_tree_usage", "eligible_time")
JOB = {"cput": 7200.0, "ncpus": 8.0, "walltime": 3600.0, "mem": 2.0, "ngpus": 2.0}


def value(text, values=None, names=RESOURCES):
    return parse_formula(text, names).evaluate(JOB if values is None else values)


def error(text, names=RESOURCES):
    with pytest.raises(FormulaError) as caught:
        parse_formula(text, names)
    return caught.value


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cput", 7200.0),
        ("ncpus*walltime", 28800.0),
        ("ncpus*pow(walltime,0.85)", 8.0 * math.pow(3600.0, 0.85)),
        ("ncpus * walltime ** 0.85", 8.0 * math.pow(3600.0, 0.85)),
        ("cput/walltime", 2.0),
        ("1 + 2 * 3", 7.0),
        ("(1 + 2) * 3", 9.0),
        ("10 - 4 - 3", 3.0),
        ("64 / 4 / 2", 8.0),
        ("2**3**2", 512.0),
        ("(2**3)**2", 64.0),
        ("-2**2", -4.0),
        ("-ncpus", -8.0),
        ("+ncpus", 8.0),
        ("--ncpus", 8.0),
        ("ncpus - -2", 10.0),
        ("1e3", 1000.0),
        ("1.5e-3 * 2", 0.003),
        ("2.5E+2", 250.0),
        (".5", 0.5),
        ("1_000", 1000.0),
        ("min(ncpus, ngpus, 5)", 2.0),
        ("max(ncpus, ngpus, 5)", 8.0),
        ("min(ncpus)", 8.0),
        ("abs(ngpus - ncpus)", 6.0),
        ("floor(7.9)", 7.0),
        ("floor(-7.1)", -8.0),
        ("ceil(7.1)", 8.0),
        ("sqrt(ncpus*2)", 4.0),
        ("exp(1)", math.e),
        ("log(ncpus)", math.log(8.0)),
        ("log(ncpus, 2)", 3.0),
        ("log(1000, 10)", math.log(1000.0, 10.0)),
        ("pow(2, -(ngpus/ncpus))", math.pow(2.0, -0.25)),
        ("(cput\n + walltime)", 10800.0),
        ("  ncpus * 2  ", 16.0),
        ("\n\tncpus", 8.0),
        ("ncpus  # cores, a comment", 8.0),
    ],
)
def test_values(text, expected):
    assert value(text) == pytest.approx(expected, rel=1e-15)


def test_ncpus_times_pow_is_math_pow_exactly():
    assert value("ncpus*pow(walltime,0.85)") == 8.0 * math.pow(3600.0, 0.85)


def test_seed_003_job_sort_formula():
    formula = parse_formula(SEED_003, SEED_003_NAMES)
    job = {"ncpus": 128, "fairshare_tree_usage": 0.25, "eligible_time": 43200}
    # 10·128/6656 = 5/26, 1000·(1 − 0.25) = 750, 43200/86400 = 0.5
    assert formula.evaluate(job) == pytest.approx(750.5 + 5 / 26, rel=1e-15)
    assert formula.names == SEED_003_NAMES


def test_missing_names_count_zero():
    formula = parse_formula(SEED_003, SEED_003_NAMES)
    assert formula.evaluate({}) == 1000.0
    assert value("ncpus*walltime", {"ncpus": 4}) == 0.0


def test_int_values_give_float_arithmetic():
    result = value("ncpus*walltime", {"ncpus": 2**53 + 1, "walltime": 3})
    assert type(result) is float
    assert result == float(2**53 + 1) * 3.0  # the int product rounds differently
    assert type(value("ncpus", {"ncpus": 3})) is float


def test_names_in_order_of_first_use():
    formula = parse_formula("walltime*ncpus + walltime/pow(cput, 2) + ncpus", RESOURCES)
    assert formula.names == ("walltime", "ncpus", "cput")
    assert parse_formula("2*3", RESOURCES).names == ()


def test_resource_named_like_a_function_is_a_value():
    assert value("exp*2", {"exp": 3.0}, names=("exp",)) == 6.0
    assert value("exp(exp)", {"exp": 0.0}, names=("exp",)) == 1.0


def test_formula_is_frozen_and_compares_by_text():
    first = parse_formula("ncpus*walltime", RESOURCES)
    assert first == parse_formula("ncpus*walltime", ("ncpus", "walltime"))
    assert hash(first) == hash(parse_formula("ncpus*walltime", RESOURCES))
    assert first != parse_formula("walltime*ncpus", RESOURCES)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.text = "cput"  # type: ignore[misc]
    assert "ncpus*walltime" in repr(first)


def test_functions():
    assert set(FUNCTIONS) == {"pow", "log", "sqrt", "exp", "min", "max", "abs", "floor", "ceil"}
    assert FUNCTIONS["pow"].arity() == "2 arguments"
    assert FUNCTIONS["log"].arity() == "1 or 2 arguments"
    assert FUNCTIONS["min"].arity() == "at least 1 argument"
    with pytest.raises(TypeError):
        FUNCTIONS["eval"] = FUNCTIONS["pow"]  # type: ignore[index]


@pytest.mark.parametrize(
    ("text", "position", "fragment"),
    [
        ("ncpus.real", 0, "attribute access"),
        ("().__class__", 0, "attribute access"),
        ("ncpus*().__class__.__bases__", 6, "attribute access"),
        ("ncpus[0]", 0, "subscripts"),
        ("eval('1')", 0, "unknown function 'eval'"),
        ("__import__('os')", 0, "unknown function '__import__'"),
        ("ncpus*__import__('os').system('x')", 6, "only these functions can be called"),
        ("math.pow(ncpus, 2)", 0, "only these functions can be called"),
        ("pow(ncpus, y=2)", 11, "keyword arguments are not allowed ('y=')"),
        ("pow(ncpus, **w)", 11, "'**' arguments"),
        ("pow(*ncpus)", 4, "'*' arguments"),
        ("lambda: 1", 0, "lambdas"),
        ("[n for n in ncpus]", 0, "comprehensions"),
        ("ncpus + sum(n for n in ncpus)", 8, "unknown function 'sum'"),
        ("max(n for n in ncpus)", 3, "comprehensions"),
        ("ncpus < 2", 0, "comparisons"),
        ("ncpus and 1", 0, "boolean operators"),
        ("ncpus % 2", 6, "'%'"),
        ("ncpus // 2", 6, "'//'"),
        ("(ncpus) ^ 2", 8, "'^' is not allowed (for a power write '**'"),
        ("ncpus >> 1", 6, "'>>'"),
        ("ncpus&1", 5, "'&'"),
        ("ncpus | 1", 6, "'|'"),
        ("ncpus @ 1", 6, "'@'"),
        ("~ncpus", 0, "'~'"),
        ("not ncpus", 0, "'not'"),
        ("1 if ncpus else 2", 0, "conditional expressions"),
        ("f'{ncpus}'", 0, "f-strings"),
        ("(n := 1)", 1, "assignment expressions"),
        ("'ncpus'", 0, "string literals"),
        ("ncpus + 'a'", 8, "string literals"),
        ("b'x'", 0, "bytes literals"),
        ("True", 0, "booleans"),
        ("ncpus*False", 6, "booleans"),
        ("None", 0, "None is not allowed"),
        ("1j", 0, "complex numbers"),
        ("...", 0, "Ellipsis is not allowed"),
        ("ncpus, walltime", 0, "tuples"),
        ("[ncpus]", 0, "lists"),
        ("{ncpus}", 0, "sets"),
        ("{ncpus: 1}", 0, "dicts"),
        ("1e999", 0, "number too large"),
        ("2*" + "9" * 400, 2, "number too large"),
        ("ncpu", 0, "unknown resource 'ncpu', did you mean 'ncpus'?"),
        ("ncpus*walltim", 6, "unknown resource 'walltim', did you mean 'walltime'?"),
        ("x", 0, "unknown resource 'x' (known: cput, eligible_time, fairshare_tree_usage,"),
        ("pow", 0, "function 'pow' used as a value"),
        ("ncpus + log", 8, "function 'log' used as a value"),
        ("ncpus(2)", 0, "resource 'ncpus' is not a function"),
        ("pow(ncpus)", 0, "pow() takes 2 arguments (1 given)"),
        ("ncpus + pow(1, 2, 3)", 8, "pow() takes 2 arguments (3 given)"),
        ("sqrt()", 0, "sqrt() takes 1 argument (0 given)"),
        ("floor(1, 2)", 0, "floor() takes 1 argument (2 given)"),
        ("log(1, 2, 3)", 0, "log() takes 1 or 2 arguments (3 given)"),
        ("min()", 0, "min() takes at least 1 argument (0 given)"),
        ("", 0, "empty formula"),
        ("   \n\t ", 0, "empty formula"),
        ("ncpus*", 6, "syntax error"),
        ("ncpus*  ", 8, "syntax error"),
        ("  ncpus*walltime*", 17, "syntax error"),
        ("ncpus**(2", 7, "'(' was never closed"),
        ("ncpus walltime", 6, "syntax error"),
        ("  ncpus walltime", 8, "syntax error"),
        ("ncpus)", 5, "unmatched ')'"),
        ("ncpus = 1", 6, "syntax error"),
        ("ncpus\x00", 5, "invalid character '\\x00'"),
        ("ncpus+\ud800", 6, "invalid character"),
    ],
)
def test_rejected(text, position, fragment):
    caught = error(text)
    assert caught.position == position
    assert caught.text == text
    assert fragment in caught.message
    assert str(caught).startswith(f"col {position + 1}: ")


def test_error_message_format():
    caught = error("ncpus*ncpu", names=("cput", "mem", "ncpus"))
    assert str(caught) == (
        "col 7: unknown resource 'ncpu', did you mean 'ncpus'? (known: cput, mem, ncpus)"
    )
    assert issubclass(FormulaError, ValueError)
    assert caught.args == (caught.message, 6, "ncpus*ncpu")


def test_unknown_resource_lists_at_most_twelve_names():
    names = [f"r{i:02}" for i in range(20)]
    assert error("x", names=names).message.endswith("r10, r11, ...)")
    assert error("x", names=()).message == "unknown resource 'x' (known: none)"


def test_error_pickles():
    caught = error("ncpus % 2")
    again = pickle.loads(pickle.dumps(caught))
    assert (again.message, again.position, again.text) == (caught.message, 6, "ncpus % 2")
    assert str(again) == str(caught)


@pytest.mark.parametrize(
    ("text", "before"),
    [
        ("é*ncpu", "é*"),
        ("ééé + ncpus/ncpu", "ééé + ncpus/"),
        ("ΔΔ + ncpus % 2", "ΔΔ + ncpus "),
        ("中文 + ncpus*ncpu", "中文 + ncpus*"),
        ("𝔁 + ncpus walltime", "𝔁 + ncpus "),
        ("(é + 'x')", "(é + "),
    ],
)
def test_position_counts_characters_not_bytes(text, before):
    caught = error(text, names=("ncpus", "é", "ééé", "ΔΔ", "中文", "𝔁"))
    assert caught.position == len(before)
    assert len(before.encode()) > len(before)


@pytest.mark.parametrize(
    ("text", "before", "where"),
    [
        ("(ncpus\n + éé*ncpu)", "(ncpus\n + éé*", "line 2, col 7"),
        ("(ncpus\r\n + éé*ncpu)", "(ncpus\r\n + éé*", "line 2, col 7"),
        ("(ncpus\r + éé*ncpu)", "(ncpus\r + éé*", "line 2, col 7"),
        ("\n\n  ncpu", "\n\n  ", "line 3, col 3"),
        ("(ncpus\n +\n é.real)", "(ncpus\n +\n ", "line 3, col 2"),
        ("(ncpus +\n éé * )", "(ncpus +\n éé * ", "line 2, col 7"),
        ("ncpus\n+ ncpus", "ncpus\n", "line 2, col 1"),
        ("(ncpus # why\n) << 1", "(ncpus # why\n) ", "line 2, col 3"),
    ],
)
def test_multi_line_positions(text, before, where):
    caught = error(text, names=("ncpus", "é", "éé"))
    assert caught.position == len(before)
    assert str(caught).startswith(f"{where}: ")


def test_too_long():
    text = "ncpus+" * 200 + "1"
    caught = error(text)
    assert caught.position == MAX_FORMULA_LENGTH
    assert "too long (1201 characters, at most 1000)" in caught.message
    longest = "ncpus" + " " * (MAX_FORMULA_LENGTH - 5)
    assert parse_formula(longest, RESOURCES).evaluate(JOB) == 8.0


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("(" * 10_000 + "ncpus" + ")" * 10_000, "too long"),
        ("(" * 499 + "ncpus" + ")" * 496, "syntax error"),
        ("-" * 999 + "1", "nested too deeply"),
        ("pow(" * 150 + "1" + ", 2)" * 150, "too long"),
        ("pow(" * 110 + "1" + ",2)" * 110, "nested too deeply"),
        ("[" * 999, "syntax error"),
        ("lambda:" * 140 + "1", "nested too deeply"),
        ("lambda:" * 10 + "1", "lambdas"),
    ],
)
def test_deep_nesting_is_a_formula_error(text, fragment):
    assert fragment in error(text).message


def test_nesting_up_to_the_limit_works():
    assert value("-" * 98 + "ncpus") == 8.0
    assert value("(" * 150 + "ncpus" + ")" * 150) == 8.0  # parentheses are no nodes


def test_parser_recursion_is_a_formula_error(monkeypatch):
    def exhausted(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(ast, "parse", exhausted)  # the module trees.engine.formula calls
    caught = error("ncpus")
    assert caught.message == "formula nested too deeply"


@pytest.mark.parametrize(
    ("text", "values", "fragment"),
    [
        ("cput/walltime", {"cput": 1.0}, "division by zero in 'cput/walltime'"),
        ("ncpus/(walltime - walltime)", JOB, "division by zero in 'ncpus/(walltime - walltime)'"),
        ("log(ncpus)", {}, "logarithm of a number ≤ 0 or to a base ≤ 0 in 'log(ncpus)'"),
        ("log(ncpus, mem - 2)", JOB, "logarithm"),
        ("log(ncpus, 1)", JOB, "division by zero in 'log(ncpus, 1)'"),
        ("sqrt(-ncpus)", JOB, "square root of a negative number in 'sqrt(-ncpus)'"),
        ("pow(-ncpus, 0.5)", JOB, "a negative number to a fractional power"),
        ("(-ncpus)**0.5", JOB, "fractional power, or 0 to a negative power in '(-ncpus)**0.5'"),
        ("pow(cput - cput, -1)", JOB, "0 to a negative power"),
        ("exp(ncpus)", {"ncpus": 1000.0}, "overflow in 'exp(ncpus)'"),
        ("10**ncpus", {"ncpus": 400.0}, "overflow in '10**ncpus'"),
        ("ncpus*1e308*10", {"ncpus": 1}, "overflow (result is inf) in 'ncpus*1e308*10'"),
        ("1e308 + ncpus*1e308", {"ncpus": 1}, "overflow (result is inf) in '1e308 + ncpus*1e308'"),
        ("-1e308 - ncpus*1e308", {"ncpus": 1}, "overflow (result is -inf)"),
        ("ncpus/1e-308", JOB, "overflow"),
        ("ncpus", {"ncpus": math.inf}, "overflow (result is inf) in 'ncpus'"),
        ("-ncpus", {"ncpus": math.nan}, "not a number (nan) in '-ncpus'"),
        ("ncpus - ncpus", {"ncpus": math.inf}, "not a number (nan) in 'ncpus - ncpus'"),
        ("floor(ncpus)", {"ncpus": math.inf}, "overflow in 'floor(ncpus)'"),
        ("ceil(ncpus)", {"ncpus": math.nan}, "ceil of nan"),
        ("min(ncpus, 1, mem)", {"ncpus": math.nan}, "nan"),
        ("ncpus*2", {"ncpus": "many"}, "resource 'ncpus' is not a number: 'many'"),
    ],
)
def test_value_errors(text, values, fragment):
    formula = parse_formula(text, RESOURCES)
    with pytest.raises(FormulaValueError) as caught:
        formula.evaluate(values)
    assert fragment in str(caught.value)


def test_value_error_is_arithmetic_not_value_error():
    assert issubclass(FormulaValueError, ArithmeticError)
    assert not issubclass(FormulaValueError, ValueError)  # a caller tells bad text from bad data


def test_describe_terms_of_seed_003():
    formula = parse_formula(SEED_003, SEED_003_NAMES)
    job = {"ncpus": 128, "fairshare_tree_usage": 0.25, "eligible_time": 43200}
    terms = describe_terms(formula, job)
    assert [text for text, _ in terms] == [
        "10*(ncpus/6656)",
        "1000*(1-fairshare_tree_usage)",
        "eligible_time/86400",
    ]
    assert [term for _, term in terms] == pytest.approx([5 / 26, 750.0, 0.5], rel=1e-15)
    assert terms[0][1] + terms[1][1] + terms[2][1] == formula.evaluate(job)


def test_describe_terms_signs():
    formula = parse_formula(" -ncpus + walltime - (cput - mem)*2 - 1", RESOURCES)
    assert describe_terms(formula, JOB) == [
        ("-ncpus", -8.0),
        ("walltime", 3600.0),
        ("(cput - mem)*2", -14396.0),
        ("1", -1.0),
    ]
    assert sum(term for _, term in describe_terms(formula, JOB)) == formula.evaluate(JOB)


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("ncpus*walltime", "ncpus*walltime"),
        ("-(ncpus + walltime)", "-(ncpus + walltime)"),
        (" cput ", "cput"),
        ("(ncpus*2)", "ncpus*2"),
    ],
)
def test_describe_terms_of_a_formula_that_is_no_sum(text, term):
    formula = parse_formula(text, RESOURCES)
    assert describe_terms(formula, JOB) == [(term, formula.evaluate(JOB))]


def test_describe_terms_raises_as_evaluate_does():
    formula = parse_formula("ncpus + 1/walltime", RESOURCES)
    with pytest.raises(FormulaValueError, match="division by zero in '1/walltime'"):
        describe_terms(formula, {"ncpus": 1.0})


FORMULA_ALPHABET = "ncpuswaltime_ 0123456789.e+-*/(),%<'\"[]:=λé\n\t#\\"


@settings(max_examples=400)
@given(st.text(max_size=80) | st.text(alphabet=FORMULA_ALPHABET, max_size=80))
@pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")
def test_random_text_raises_only_formula_error(text):
    try:
        formula = parse_formula(text, RESOURCES)
    except FormulaError as caught:
        rejected: FormulaError | None = caught
    else:
        rejected = None
    if rejected is not None:
        assert 0 <= rejected.position <= len(text)
        assert str(rejected).startswith(("col ", "line "))
        return
    assert isinstance(formula, Formula)
    try:
        result = formula.evaluate(JOB)
    except FormulaValueError:
        return
    assert math.isfinite(result)


TREE_NAMES = ("ncpus", "walltime", "cput", "mem")
OPERATIONS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv}
PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}

numbers = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False) | st.integers(0, 10**6)
trees = st.recursive(
    numbers | st.sampled_from(TREE_NAMES),
    lambda children: st.tuples(st.sampled_from(tuple(OPERATIONS)), children, children),
    max_leaves=16,
)
resource_values = st.dictionaries(
    st.sampled_from(TREE_NAMES),
    st.floats(min_value=-1e4, max_value=1e4, allow_nan=False) | st.integers(-100, 100),
)


def show(tree):
    """The tree as formula text, with only the parentheses its structure needs."""
    if not isinstance(tree, tuple):
        return tree if isinstance(tree, str) else repr(tree)
    symbol, left, right = tree
    left_text, right_text = show(left), show(right)
    if isinstance(left, tuple) and PRECEDENCE[left[0]] < PRECEDENCE[symbol]:
        left_text = f"({left_text})"
    # a right operand of equal precedence keeps its parentheses: a+(b+c) is not (a+b)+c in floats
    if isinstance(right, tuple) and PRECEDENCE[right[0]] <= PRECEDENCE[symbol]:
        right_text = f"({right_text})"
    return f"{left_text} {symbol} {right_text}"


def reference(tree, values):
    """The tree's value in floats, walking it as PBS formula semantics say; None when invalid."""
    if isinstance(tree, str):
        return float(values.get(tree, 0))
    if not isinstance(tree, tuple):
        return float(tree)
    symbol, left, right = tree
    a, b = reference(left, values), reference(right, values)
    if a is None or b is None or (symbol == "/" and b == 0):
        return None
    result = OPERATIONS[symbol](a, b)
    return result if math.isfinite(result) else None


def leaf_names(tree):
    if isinstance(tree, str):
        return [tree]
    if isinstance(tree, tuple):
        return leaf_names(tree[1]) + leaf_names(tree[2])
    return []


@settings(max_examples=300)
@given(trees, resource_values)
def test_random_trees_evaluate_as_the_reference(tree, values):
    text = show(tree)
    formula = parse_formula(text, TREE_NAMES)
    assert formula.names == tuple(dict.fromkeys(leaf_names(tree)))
    expected = reference(tree, values)
    if expected is None:
        with pytest.raises(FormulaValueError):
            formula.evaluate(values)
        return
    assert formula.evaluate(values) == expected
    total = 0.0
    for _, term in describe_terms(formula, values):
        total += term
    assert total == expected


@settings(max_examples=200)
@given(trees, st.sampled_from(["", " ", "\t", "  "]))
def test_printed_trees_parse_with_any_spacing(tree, blank):
    text = show(tree).replace(" ", blank)
    assert parse_formula(text, TREE_NAMES).text == text


# --- the job_sort_formula dialect (python=True) ---------------------------------------------
# PBS runs `eval(formula, globals_dict, locals())` after `from math import *` (reference A.3):
# comparisons, conditionals, `and`/`or`/`not`, `%` and `//` work, ints stay ints, and the error
# texts are Python's own. Expected values are worked out by hand.

PY_NAMES = ("ncpus", "walltime", "mem", "job_priority", "queue_priority", "fairshare_factor")


def py_value(text, values, names=PY_NAMES):
    return parse_formula(text, names, python=True).evaluate(values)


def py_error(text, names=PY_NAMES):
    with pytest.raises(FormulaError) as caught:
        parse_formula(text, names, python=True)
    return caught.value


def py_failure(text, values, names=PY_NAMES):
    with pytest.raises(FormulaValueError) as caught:
        parse_formula(text, names, python=True).evaluate(values)
    return caught.value


@pytest.mark.parametrize(
    ("text", "values", "expected"),
    [
        ("ncpus > 4", {"ncpus": 8}, 1.0),
        ("ncpus > 4", {"ncpus": 4}, 0.0),
        ("ncpus == 4", {"ncpus": 4}, 1.0),
        ("ncpus != 4", {"ncpus": 4}, 0.0),
        ("1 <= ncpus < 8", {"ncpus": 4}, 1.0),
        ("1 <= ncpus < 8", {"ncpus": 8}, 0.0),
        ("0 < ncpus <= walltime < 10", {"ncpus": 1, "walltime": 9}, 1.0),
        ("(ncpus > 4) * 100 + ncpus", {"ncpus": 8}, 108.0),
        ("100 if queue_priority >= 100 else 1", {"queue_priority": 150}, 100.0),
        ("100 if queue_priority >= 100 else 1", {"queue_priority": 99}, 1.0),
        ("1/ncpus if ncpus else 0", {}, 0.0),  # the branch not taken is never evaluated
        ("ncpus and walltime", {"ncpus": 2, "walltime": 3}, 3.0),
        ("ncpus and walltime", {"walltime": 3}, 0.0),
        ("ncpus or walltime", {"ncpus": 2, "walltime": 3}, 2.0),
        ("ncpus or walltime or 7", {}, 7.0),
        ("not ncpus", {}, 1.0),
        ("not ncpus", {"ncpus": 3}, 0.0),
        ("ncpus % 4", {"ncpus": 10}, 2.0),
        ("-ncpus % 4", {"ncpus": 10}, 2.0),  # Python's modulo takes the divisor's sign
        ("ncpus % -4", {"ncpus": 10}, -2.0),
        ("walltime % 1", {"walltime": 2.5}, 0.5),
        ("ncpus // 4", {"ncpus": 10}, 2.0),
        ("-ncpus // 4", {"ncpus": 10}, -3.0),  # floor, not truncation
        ("walltime // 0.5", {"walltime": 2.25}, 4.0),
        ("7 / 2", {}, 3.5),  # true division, ints in
        ("2**10", {}, 1024.0),
        ("2**-1", {}, 0.5),
        ("e", {}, math.e),
        ("pi*2 - tau", {}, 0.0),
        ("inf", {}, math.inf),
        ("-inf", {}, -math.inf),
        ("True + ncpus", {"ncpus": 1}, 2.0),
        ("round(2.5) + round(3.5)", {}, 6.0),  # banker's rounding: 2 + 4
        ("round(walltime, 1)", {"walltime": 1.25}, 1.2),  # 1.25 is just below in binary
        ("int(walltime/3600)", {"walltime": 5399}, 1.0),
        ("float(ncpus)", {"ncpus": 3}, 3.0),
        ("abs(-ncpus)", {"ncpus": 3}, 3.0),
        ("min(ncpus, 5) + max(ncpus, 5)", {"ncpus": 3}, 8.0),
        ("fabs(-2) + trunc(-2.5) + floor(2.5) + ceil(2.5)", {}, 5.0),  # 2 - 2 + 2 + 3
        ("log10(1000) + log2(8) + log(e) + log(8, 2)", {}, 10.0),
        ("log1p(0) + expm1(0) + exp(0)", {}, 1.0),
        ("sin(0) + cos(0) + tan(0) + asin(0) + acos(1) + atan(0) + atan2(0, 1)", {}, 1.0),
        ("sinh(0) + cosh(0) + tanh(0)", {}, 1.0),
        ("hypot(3, 4)", {}, 5.0),
        ("fmod(7, 3) + copysign(2, -1)", {}, -1.0),
        ("degrees(pi) + radians(180) - pi", {}, 180.0),
        ("gamma(5) + lgamma(1)", {}, 24.0),  # 4! and log(0!) = 0
        ("erf(0) + erfc(0)", {}, 1.0),
        ("isqrt(ncpus)", {"ncpus": 17}, 4.0),
        ("gcd(12, 18) + lcm(4, 6)", {}, 18.0),
        ("isnan(nan) + isinf(inf) + isfinite(1)", {}, 3.0),
        ("pow(2, 3)", {}, 8.0),
        ("sqrt(ncpus)", {"ncpus": 16}, 4.0),
    ],
)
def test_python_dialect_values(text, values, expected):
    assert py_value(text, values) == pytest.approx(expected, rel=1e-15, abs=1e-15)


def test_python_dialect_keeps_ints():
    formula = parse_formula("ncpus * mem", PY_NAMES, python=True)
    big = 2**53 + 1
    # PBS multiplies Python ints exactly, then reads the result as a double
    assert formula.evaluate({"ncpus": big, "mem": 3}) == float(big * 3)
    assert formula.evaluate({"ncpus": big, "mem": 3}) != float(big) * 3.0
    assert type(formula.evaluate({"ncpus": 2})) is float


def test_math_name_shadows_a_resource():
    names = ("e", "gamma", "ncpus")
    formula = parse_formula("e + ncpus", names, python=True)
    assert formula.evaluate({"e": 100.0, "ncpus": 1.0}) == math.e + 1.0
    assert formula.names == ("ncpus",)
    caught = py_error("gamma * 2", names=names)
    assert caught.message == (
        "function 'gamma' used as a value (call it: gamma(...)); math's gamma hides the "
        "resource 'gamma'"
    )


def test_a_resource_shadows_a_builtin():
    names = ("round", "ncpus")
    assert py_value("round * 2", {"round": 3.0}, names=names) == 6.0
    caught = py_error("round(ncpus)", names=names)
    assert caught.message == "resource 'round' is not a function (it hides the builtin round())"


def test_python_dialect_names_used():
    formula = parse_formula("pi*ncpus if walltime > e else mem", PY_NAMES, python=True)
    assert formula.names == ("walltime", "ncpus", "mem")
    assert formula.python is True
    assert parse_formula("ncpus", PY_NAMES).python is False


def test_same_text_in_two_dialects_differs():
    assert parse_formula("ncpus", PY_NAMES) != parse_formula("ncpus", PY_NAMES, python=True)


@pytest.mark.parametrize(
    ("text", "values", "reason"),
    [
        ("1/job_priority", {"job_priority": 0}, "division by zero"),
        ("1/job_priority", {}, "division by zero"),  # unset is the int 0
        ("1.0/job_priority", {"job_priority": 0}, "float division by zero"),
        ("ncpus % job_priority", {"ncpus": 3}, "integer modulo by zero"),
        ("walltime % job_priority", {"walltime": 1.5}, "float modulo"),
        ("ncpus // 0", {"ncpus": 3}, "integer division or modulo by zero"),
        ("walltime // 0", {"walltime": 1.5}, "float floor division by zero"),
        ("0**-1", {}, "0.0 cannot be raised to a negative power"),
        ("10.0**ncpus", {"ncpus": 400}, "(34, 'Numerical result out of range')"),
        ("log(ncpus)", {}, "math domain error"),
        ("sqrt(-1)", {}, "math domain error"),
        ("exp(ncpus)", {"ncpus": 1000}, "math range error"),
        (
            "isqrt(walltime)",
            {"walltime": 2.5},
            "'float' object cannot be interpreted as an integer",
        ),
        ("int(inf)", {}, "cannot convert float infinity to integer"),
        ("round(nan)", {}, "cannot convert float NaN to integer"),
        ("2**ncpus", {"ncpus": 5000}, "integer power too large"),
        ("(-8)**(1/3)", {}, "a negative number to a fractional power gives a complex number"),
        ("10**400 * 1.0", {}, "int too large to convert to float"),
    ],
)
def test_python_dialect_errors_are_pythons(text, values, reason):
    caught = py_failure(text, values)
    assert caught.reason == reason
    assert str(caught) == f"{reason} in {caught.message.split(' in ', 1)[1]}"
    assert caught.message.endswith("'")


def test_python_dialect_error_names_the_failing_part():
    caught = py_failure("ncpus + 1/job_priority", {"ncpus": 1})
    assert str(caught) == "division by zero in '1/job_priority'"
    assert caught.reason == "division by zero"


def test_a_huge_int_result_cannot_be_a_double():
    caught = py_failure("10**400", {})  # 1329 bits: computed, then too large for a double
    assert caught.reason == "int too large to convert to float"


def test_overflow_to_inf_is_no_error_in_python():
    assert py_value("ncpus * 1e308 * 10", {"ncpus": 1}) == math.inf
    assert math.isnan(py_value("inf - inf", {}))


def traced_peak(function):
    """What `function()` gives, and the most memory it held at once, in bytes."""
    tracemalloc.start()
    try:
        result = function()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("round(ncpus, -3000000)", {"ncpus": 4}),
        ("round(-ncpus, -3000000)", {"ncpus": 5}),
        ("round(2**4096, -(10**300))", {}),
        ("round(walltime, -3000000)", {"walltime": 4.5}),
    ],
)
def test_round_far_left_of_a_number_s_digits_is_zero_without_that_power_of_ten(text, values):
    """Python's round(int, -k) builds 10**k first: round(ncpus, -100000000) in a job_sort_formula
    held a worker for more than 20 s a job (3,000,000 digits: 1 s and 5.5 MB). Once 10**k is
    past twice the number the answer is 0, as Python's own gives it."""
    result, peak = traced_peak(lambda: py_value(text, values))
    assert result == 0.0
    assert peak < 64 * 1024


@pytest.mark.parametrize(
    "number", [0, 1, 4, 5, 6, 15, 25, 49, 50, 51, 99, 2**53 + 1, 10**20, -5, -15, -50, 2**64 - 1]
)
def test_round_of_an_int_is_python_s_at_every_ndigits(number):
    for ndigits in range(-70, 3):
        expected = round(number, ndigits)
        assert py_value(f"round(ncpus, {ndigits})", {"ncpus": number}) == float(expected)
    assert py_value("round(ncpus, 10**300)", {"ncpus": number}) == float(number)


def test_an_int_product_past_max_int_bits_is_an_overflow():
    """`**` was bounded, `*` was not: a chain of 2**4096 factors grew without limit, and the
    `//` or gcd() of two such ints is quadratic in their size."""
    factors = MAX_INT_BITS // 4096 + 1
    caught = py_failure("*".join(["2**4096"] * factors), {})
    assert caught.reason == "integer product too large"
    kept = MAX_INT_BITS // 4096  # factors of 4,096 bits each: the product has just fewer bits
    exact = "*".join(["2**4095"] * kept) + " // 2**4095" * (kept - 1) + " // 2**4090"
    assert py_value(exact, {}) == 32.0
    assert py_value("ncpus * 2.0**1000", {"ncpus": 2**1000}) == math.inf


def test_an_lcm_past_max_int_bits_is_an_overflow():
    coprime = ", ".join(f"2**4096 + {2 * k + 1}" for k in range(MAX_INT_BITS // 4096 + 1))
    assert py_failure(f"lcm({coprime})", {}).reason == "integer lcm too large"
    big = "2**4000*2**4000"
    assert py_value(f"lcm({big}, {big}, {big}, {big}*3) // 2**4000 // 2**3999", {}) == 6.0
    small = ("lcm()", "lcm(-4)", "lcm(4, 6, 10)", "lcm(0, 5)")
    assert [py_value(text, {}) for text in small] == [1.0, 4.0, 60.0, 0.0]
    caught = py_failure(f"lcm(4, {big}, 2.5)", {})
    assert caught.reason == "'float' object cannot be interpreted as an integer"


@pytest.mark.parametrize(
    ("text", "position", "fragment"),
    [
        ("ncpus is 1", 6, "only the comparisons == != < <= > >= are allowed"),
        ("ncpus is not 1", 6, "only the comparisons"),
        ("1 < ncpus in mem", 10, "only the comparisons"),
        ("ncpus ^ 2", 6, "'^' is not allowed (for a power write '**'"),
        ("ncpus << 1", 6, "'<<'"),
        ("ncpus & 1", 6, "'&'"),
        ("ncpus @ 1", 6, "'@'"),
        ("~ncpus", 0, "'~'"),
        ("ncpus.real", 0, "attribute access"),
        ("'a' if ncpus else 1", 0, "string literals"),
        ("None", 0, "None is not allowed"),
        ("(ncpus, 1)", 0, "tuples"),  # a tuple starts at its parenthesis
        ("[n for n in ncpus]", 0, "comprehensions"),
        ("lambda: 1", 0, "lambdas"),
        ("(n := 1)", 1, "assignment expressions"),
        ("min(ncpus)", 0, "min() takes at least 2 arguments (1 given)"),
        ("atan2(1)", 0, "atan2() takes 2 arguments (1 given)"),
        ("round(1, 2, 3)", 0, "round() takes 1 or 2 arguments (3 given)"),
        ("round(ncpus, ndigits=2)", 13, "keyword arguments are not allowed ('ndigits=')"),
        ("sinn(1)", 0, "unknown function 'sinn', did you mean 'sin'?"),
        ("factorial(5)", 0, "unknown function 'factorial'"),
        ("sum(1, 2)", 0, "unknown function 'sum'"),
        ("eval('1')", 0, "unknown function 'eval'"),
        ("__import__('os')", 0, "unknown function '__import__'"),
        ("math.pi", 0, "attribute access"),
        ("pi(1)", 0, "'pi' is a number, not a function"),
        ("ncpus(1)", 0, "resource 'ncpus' is not a function"),
        ("ncpus()()", 0, "only functions can be called, by plain name"),
        ("sqrt", 0, "function 'sqrt' used as a value"),
        ("abs + 1", 0, "function 'abs' used as a value"),
        ("ncpu", 0, "unknown resource 'ncpu', did you mean 'ncpus'?"),
        ("1e999", 0, "number too large"),
        ("9" * 400, 0, "number too large"),
        ("ncpus*", 6, "syntax error"),
    ],
)
def test_python_dialect_rejects(text, position, fragment):
    caught = py_error(text)
    assert caught.position == position
    assert fragment in caught.message
    assert str(caught).startswith(f"col {position + 1}: ")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("ncpus < 2", "comparisons are not allowed"),
        ("1 if ncpus else 2", "conditional expressions are not allowed"),
        ("ncpus and 1", "boolean operators"),
        ("not ncpus", "'not' is not allowed"),
        ("ncpus % 2", "'%' is not allowed"),
        ("ncpus // 2", "'//' is not allowed"),
        ("e", "unknown resource 'e'"),
        ("pi*ncpus", "unknown resource 'pi'"),
        ("sin(ncpus)", "unknown function 'sin'"),
        ("round(ncpus)", "unknown function 'round'"),
        ("True", "booleans are not allowed"),
    ],
)
def test_strict_dialect_still_rejects_what_python_allows(text, fragment):
    parse_formula(text, PY_NAMES, python=True)
    assert fragment in error(text, names=PY_NAMES).message


def test_python_functions():
    assert {"round", "fabs", "log10", "log2", "log1p", "expm1", "atan2", "hypot", "gamma"} <= set(
        {*MATH_FUNCTIONS, *BUILTIN_FUNCTIONS}
    )
    assert not {"factorial", "comb", "perm", "fsum", "prod", "frexp", "modf"} & set(MATH_FUNCTIONS)
    assert set(MATH_CONSTANTS) == {"e", "pi", "tau", "inf", "nan"}
    with pytest.raises(TypeError):
        MATH_FUNCTIONS["eval"] = MATH_FUNCTIONS["sin"]  # type: ignore[index]


def test_job_sort_names():
    assert set(JOB_SORT_KEYWORDS) == {
        "eligible_time",
        "queue_priority",
        "job_priority",
        "fairshare_perc",
        "fair_share_perc",
        "fairshare_tree_usage",
        "fairshare_factor",
        "accrue_type",
    }
    assert {"ncpus", "mem", "vmem", "walltime", "cput", "pcput", "pmem", "pvmem", "nodect"} <= set(
        PBS_NUMERIC_RESOURCES
    )
    assert {"mpiprocs", "ompthreads", "nice", "cpupercent", "file", "ngpus"} <= set(
        PBS_NUMERIC_RESOURCES
    )
    assert not {"software", "select", "place", "arch", "host", "vnode"} & set(PBS_NUMERIC_RESOURCES)
    assert set(JOB_SORT_NAMES) == {*USAGE_RESOURCES, *PBS_NUMERIC_RESOURCES, *JOB_SORT_KEYWORDS}
    assert len(JOB_SORT_NAMES) == len(set(JOB_SORT_NAMES))
    parse_formula(SEED_003, JOB_SORT_NAMES)  # the strict dialect knows every name too


def test_evaluate_terms_gives_the_value_and_each_term():
    formula = parse_formula("ncpus*2 - (ncpus > 1) + pi", PY_NAMES, python=True)
    value, terms = evaluate_terms(formula, {"ncpus": 3})
    assert value == 6 - 1 + math.pi
    assert terms == [6.0, -1.0, math.pi]
    assert term_texts(formula) == ("ncpus*2", "ncpus > 1", "pi")  # a term without its ( )


def test_evaluate_terms_of_the_strict_dialect():
    formula = parse_formula(" -ncpus + walltime - (cput - mem)*2 - 1", RESOURCES)
    value, terms = evaluate_terms(formula, JOB)
    assert value == formula.evaluate(JOB)
    assert terms == [-8.0, 3600.0, -14396.0, -1.0]
    with pytest.raises(FormulaValueError, match=r"overflow \(result is inf\) in '1e308 \+ ncpus"):
        evaluate_terms(parse_formula("1e308 + ncpus*1e308 + 1/0.0", RESOURCES), {"ncpus": 1})


def test_value_error_pickles_with_its_reason():
    caught = py_failure("1/job_priority", {})
    again = pickle.loads(pickle.dumps(caught))
    assert (again.message, again.reason) == (caught.message, "division by zero")
    assert str(again) == "division by zero in '1/job_priority'"


PY_TREE_NAMES = ("ncpus", "walltime", "cput", "mem")
PY_FORMULA_ALPHABET = FORMULA_ALPHABET + "<>=!&|^~ifelsnotandor"
py_trees = st.recursive(
    st.integers(-20, 20) | st.sampled_from(PY_TREE_NAMES),
    lambda children: st.tuples(
        st.sampled_from(["+", "-", "*", "/", "//", "%", "<", "=="]), children, children
    ),
    max_leaves=12,
)
PY_OPERATIONS = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": operator.mod,
    "<": operator.lt,
    "==": operator.eq,
}


def py_show(tree):
    """The tree as fully parenthesised text."""
    if isinstance(tree, tuple):
        symbol, left, right = tree
        return f"({py_show(left)} {symbol} {py_show(right)})"
    return tree if isinstance(tree, str) else f"({tree})"


def py_reference(tree, values):
    """The tree's value with Python's operators on ints, walked by hand; None on an error."""
    if isinstance(tree, str):
        return values.get(tree, 0)
    if not isinstance(tree, tuple):
        return tree
    symbol, left, right = tree
    a, b = py_reference(left, values), py_reference(right, values)
    if a is None or b is None:
        return None
    try:
        return PY_OPERATIONS[symbol](a, b)
    except ZeroDivisionError:
        return None


@settings(max_examples=300)
@given(py_trees, st.dictionaries(st.sampled_from(PY_TREE_NAMES), st.integers(-50, 50)))
def test_random_python_trees_evaluate_as_python_does(tree, values):
    formula = parse_formula(py_show(tree), PY_TREE_NAMES, python=True)
    expected = py_reference(tree, values)
    if expected is None:
        with pytest.raises(FormulaValueError):
            formula.evaluate(values)
        return
    assert formula.evaluate(values) == float(expected)
    assert evaluate_terms(formula, values)[0] == float(expected)


@settings(max_examples=300)
@given(
    st.text(max_size=80) | st.text(alphabet=FORMULA_ALPHABET + "<>=!&|^~ifelsnotandor", max_size=80)
)
@pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")
def test_random_text_in_python_dialect_raises_only_formula_errors(text):
    try:
        formula = parse_formula(text, RESOURCES, python=True)
    except FormulaError as caught:
        rejected: FormulaError | None = caught
    else:
        rejected = None
    if rejected is not None:
        assert 0 <= rejected.position <= len(text)
        return
    try:
        result = formula.evaluate(JOB)
    except FormulaValueError:
        return
    assert isinstance(result, float)


# Calls of every function of the job_sort_formula dialect, and operators, on numbers that make
# Python work for ever when nothing bounds them (round(ncpus, -100000000) took more than 20 s).
FUZZ_NAMES = ("ncpus", "walltime", "mem")
FUZZ_FUNCTIONS = {**BUILTIN_FUNCTIONS, **MATH_FUNCTIONS}
FUZZ_BIG = "2**4095*2**4095*2**4095"  # 12,283 bits
FUZZ_GREEDY = ["round", "lcm", "gcd", "isqrt", "ldexp", "pow", "int", "floor"]
fuzz_leaves = (
    st.sampled_from(["-100000000", "-(10**300)", "10**300", "2**4096", "-(2**4096)", "1e308",
                     "-1e308", "5e-324", "inf", "nan", "True", "-0.0", FUZZ_BIG, *FUZZ_NAMES])
    | st.integers(-(10**300), 10**300).map(lambda number: f"({number})")
    | st.floats().map(lambda number: f"({number!r})")
)  # fmt: skip
fuzz_values = (
    st.integers(-(2**1100), 2**1100)
    | st.sampled_from([0, 1, -1, 2**1023, -(10**300)])
    | st.floats()
)


def fuzz_calls(children):
    """A call of one of the dialect's functions with as many arguments as it takes."""

    def call(name):
        function = FUZZ_FUNCTIONS[name]
        most = function.min_args + 3 if function.max_args is None else function.max_args
        arguments = st.lists(children, min_size=function.min_args, max_size=most)
        return arguments.map(lambda listed: f"{name}({', '.join(listed)})")

    # Half the calls are of those whose ints can grow or whose work grows with an argument.
    names = st.sampled_from(FUZZ_GREEDY) | st.sampled_from(sorted(FUZZ_FUNCTIONS))
    return names.flatmap(call)


fuzz_formulas = st.recursive(
    fuzz_leaves,
    lambda children: fuzz_calls(children)
    | st.tuples(st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "<", "and"]), children,
                children).map(lambda op: f"({op[1]} {op[0]} {op[2]})"),
    max_leaves=16,
)  # fmt: skip


@settings(max_examples=500, deadline=timedelta(seconds=2))
@given(fuzz_formulas, st.fixed_dictionaries({name: fuzz_values for name in FUZZ_NAMES}))
@example("round(ncpus, -100000000)", {"ncpus": 4, "walltime": 0, "mem": 0})
@example(
    f"lcm({FUZZ_BIG} + 1, {FUZZ_BIG} - 1, ncpus)", {"ncpus": 2**1100 + 1, "walltime": 0, "mem": 0}
)
def test_calls_on_huge_numbers_end_soon_in_a_value_or_a_formula_value_error(text, values):
    """Each evaluation holds little memory and ends well within the deadline (a few ms at worst
    where round(ncpus, -100000000) took more than 20 s), as a value or a FormulaValueError."""
    try:
        formula = parse_formula(text, FUZZ_NAMES, python=True)
    except FormulaError:  # too long, a literal past a double
        return
    tracemalloc.start()
    try:
        try:
            result: float | None = formula.evaluate(values)
        except FormulaValueError:
            result = None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result is None or type(result) is float
    assert peak < 1024 * 1024, text


# --- the job_sort_formula over many jobs at once (evaluate_columns) ----------------------

COLUMN_NAMES = ("ncpus", "walltime", "mem")
column_numbers = (
    st.integers(-(2**60), 2**60)
    | st.integers(-100, 100)
    | st.sampled_from([0, 2**53 - 1, 2**53, 2**53 + 1, -(2**53), 10**400])
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([0.0, -0.0, 0.5, -1.5, 1e308, -1e-308])
)
column_leaves = (
    st.integers(0, 2**54).map(str)
    | st.floats(min_value=0, allow_nan=False, allow_infinity=False).map(repr)
    | st.sampled_from(["0", "0.0", "True", "inf", "nan", "pi", *COLUMN_NAMES])
)
column_trees = st.recursive(
    column_leaves,
    lambda children: st.tuples(st.sampled_from(["+", "-", "*", "/", "neg"]), children, children),
    max_leaves=12,
)


def column_text(tree):
    """The tree as fully parenthesised formula text (unary minus from `neg`)."""
    if isinstance(tree, str):
        return tree
    symbol, left, right = tree
    if symbol == "neg":
        return f"(-{column_text(left)})"
    return f"({column_text(left)} {symbol} {column_text(right)})"


def leaves(tree):
    if isinstance(tree, str):
        return [tree]
    symbol, left, right = tree
    return leaves(left) if symbol == "neg" else leaves(left) + leaves(right)


def same_double(a, b):
    """Equal to the bit: the sign of a zero counts, every nan is a nan."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def as_double(number):
    try:
        return float(number)
    except OverflowError:
        return math.inf if number > 0 else -math.inf


@settings(max_examples=400)
@given(column_trees, st.lists(st.fixed_dictionaries(
    {name: column_numbers for name in COLUMN_NAMES}), min_size=1, max_size=6))  # fmt: skip
def test_columns_give_evaluate_s_value_or_leave_the_job_to_it(tree, jobs):
    """Job by job, evaluate_columns gives exactly what evaluate() gives (Python's ints and
    floats), or marks the job for evaluate(): an int past 2**53, a zero divisor."""
    formula = parse_formula(column_text(tree), COLUMN_NAMES, python=True)
    columns = {
        name: Column(
            np.array([as_double(job[name]) for job in jobs]),
            np.array([type(job[name]) is int for job in jobs]),
        )
        for name in COLUMN_NAMES
    }
    evaluated = evaluate_columns(formula, columns, len(jobs))
    if evaluated is None:  # only an int literal numpy's doubles cannot hold stops it
        assert any(leaf.isdigit() and int(leaf) >= 2**53 for leaf in leaves(tree))
        return
    values, inexact = evaluated
    for index, job in enumerate(jobs):
        try:
            expected = formula.evaluate(job)
        except FormulaValueError:
            assert inexact[index], (formula.text, job)
            continue
        if not inexact[index]:
            assert same_double(float(values[index]), expected), (formula.text, job)


def test_columns_of_seed_003_and_a_division_by_zero():
    formula = parse_formula(SEED_003 + " + 1/job_priority", JOB_SORT_NAMES, python=True)
    ints, floats = np.array([True, True]), np.array([False, False])
    columns = {
        "ncpus": Column(np.array([6656.0, 16.0]), ints),
        "fairshare_tree_usage": Column(np.array([0.25, 0.333333]), floats),
        "eligible_time": Column(np.array([86400.0, 0.0]), ints),
        "job_priority": Column(np.array([2.0, 0.0]), ints),
    }
    evaluated = evaluate_columns(formula, columns, 2)
    assert evaluated is not None
    values, inexact = evaluated
    assert values[0] == 10 + 750.0 + 1 + 0.5
    assert inexact.tolist() == [False, True]  # 1/0: evaluate() says "division by zero"


@pytest.mark.parametrize(
    "text", ["pow(ncpus, 2)", "ncpus ** 2", "ncpus // 2", "ncpus % 2", "ncpus if mem else 1",
             "ncpus > 1", "ncpus and mem", "not ncpus"],
)  # fmt: skip
def test_columns_leave_what_numpy_does_not_do_as_python_to_evaluate(text):
    formula = parse_formula(text, COLUMN_NAMES, python=True)
    assert evaluate_columns(formula, {}, 1) is None


def test_a_name_without_a_column_is_the_int_zero():
    formula = parse_formula("-ncpus * -1.0", COLUMN_NAMES, python=True)
    evaluated = evaluate_columns(formula, {}, 2)
    assert evaluated is not None
    values, inexact = evaluated
    # -0 is the int 0, and 0 * -1.0 is -0.0 as Python computes it
    assert [math.copysign(1.0, v) for v in values] == [-1.0, -1.0]
    assert not inexact.any()
