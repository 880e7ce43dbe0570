"""trees.engine.formula: the safe evaluator of PBS formulas (seed 000, seed 003, DESIGN.md §5).

Expected values are computed by hand or with math.*, never by handing the text to Python.
"""

import ast
import dataclasses
import math
import operator
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trees.engine.formula import (
    FUNCTIONS,
    MAX_FORMULA_LENGTH,
    Formula,
    FormulaError,
    FormulaValueError,
    describe_terms,
    parse_formula,
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
