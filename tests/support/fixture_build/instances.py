PARSING_OLD_RE = '    (?P<number>\\d+(?:\\.\\d+)?)\n'
INSTANCES = [
  dict(
    instance_id="fixture__ledger-1",
    created_at="2024-03-04T10:12:00Z",
    problem_statement="""parse_amount rejects amounts with thousands separators

`parse_amount` cannot read amounts written with thousands separators, which is how people (and spreadsheets) usually write large amounts:

```python
>>> from ledger import parse_amount
>>> parse_amount("$1,234.56")
Traceback (most recent call last):
  ...
ledger.errors.ParseError: not an amount: '$1,234.56'
```

It is also exactly how `Money.__str__` formats amounts, so `parse_amount(str(money))` fails for anything of 1,000 or more. Commas should be accepted as thousands separators when they are in the right places (groups of three digits); `1,23` or `12,345,67` should still be rejected.
""",
    hints_text="The number pattern is in ledger/parsing.py.",
    gold=[lambda r: edit(r, "ledger/parsing.py", PARSING_OLD_RE,
                         '    (?P<number>(?:\\d{1,3}(?:,\\d{3})+|\\d+)(?:\\.\\d+)?)\n'),
          lambda r: edit(r, "ledger/parsing.py", '    value = Decimal(match["number"])\n',
                         '    # Thousands separators are only accepted in the right places (see _AMOUNT).\n'
                         '    value = Decimal(match["number"].replace(",", ""))\n')],
    wrong=[lambda r: edit(r, "ledger/parsing.py", PARSING_OLD_RE, '    (?P<number>[\\d,]+(?:\\.\\d+)?)\n'),
           lambda r: edit(r, "ledger/parsing.py", '    value = Decimal(match["number"])\n',
                          '    value = Decimal(match["number"].replace(",", ""))\n')],
    tests=[lambda r: append(r, "tests/test_parsing.py", '''

@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$1,234.56", Money("1234.56", "USD")),
        ("1,000,000 EUR", Money("1000000", "EUR")),
        ("-2,500.5 GBP", Money("-2500.50", "GBP")),
    ],
    ids=["dollar", "euro-millions", "negative-pound"],
)
def test_thousands_separators(text, expected):
    assert parse_amount(text) == expected


def test_round_trips_money_str():
    money = Money("1234567.5", "EUR")
    assert parse_amount(str(money)) == money


@pytest.mark.parametrize("text", ["1,23", "12,345,67", ",123", "1,,000"], ids=["short", "long", "leading", "double"])
def test_rejects_misplaced_commas(text):
    with pytest.raises(ParseError):
        parse_amount(text)
''')],
    f2p=["tests/test_parsing.py::test_thousands_separators[dollar]",
         "tests/test_parsing.py::test_thousands_separators[euro-millions]",
         "tests/test_parsing.py::test_thousands_separators[negative-pound]",
         "tests/test_parsing.py::test_round_trips_money_str"],
    p2p=[f"tests/test_parsing.py::test_rejects_misplaced_commas[{i}]" for i in ["short", "long", "leading", "double"]]
        + [f"tests/test_parsing.py::test_parse_amount[{i}]" for i in ["dollar", "euro-code", "negative-lowercase", "pound-symbol", "padded"]]
        + ["tests/test_parsing.py::test_default_currency", "tests/test_parsing.py::test_symbol_and_code_must_agree"]
        + [f"tests/test_parsing.py::test_rejects_garbage[{i}]" for i in ["empty", "letters", "two-points", "symbol-only", "long-code"]],
  ),
  dict(
    instance_id="fixture__ledger-2",
    created_at="2024-03-11T16:40:00Z",
    problem_statement="""Money ignores currencies that do not have two decimal places

All amounts are rounded to two decimal places whatever the currency. Yen have no minor unit and Kuwaiti dinar have three, so:

```python
>>> from ledger import Money
>>> str(Money("1500", "JPY"))
'1,500.00 JPY'        # expected '1,500 JPY'
>>> Money("0.5", "JPY").amount
Decimal('0.50')       # expected Decimal('1'): half a yen rounds up
>>> Money("1.2345", "KWD").amount
Decimal('1.23')       # expected Decimal('1.235')
```

Amounts should be rounded to the currency's ISO 4217 minor unit (0 for JPY and KRW, 3 for KWD and BHD), keeping two places for every other currency.
""",
    hints_text="DECIMAL_PLACES in ledger/constants.py is used for every currency by ledger/money.py's quantize().",
    gold=[lambda r: edit(r, "ledger/constants.py", "# Digits after the decimal point that amounts are rounded to.\nDECIMAL_PLACES = 2\n",
                         "# Digits after the decimal point that amounts are rounded to.\nDECIMAL_PLACES = 2\n\n"
                         "# Currencies whose smallest unit is not a hundredth (ISO 4217 minor units).\n"
                         'MINOR_UNITS = {"JPY": 0, "KRW": 0, "KWD": 3, "BHD": 3}\n'),
          lambda r: edit(r, "ledger/money.py", "from ledger.constants import DECIMAL_PLACES, DEFAULT_CURRENCY, ROUNDING\n",
                         "from ledger.constants import DECIMAL_PLACES, DEFAULT_CURRENCY, MINOR_UNITS, ROUNDING\n"),
          lambda r: edit(r, "ledger/money.py", '''def quantize(value: Decimal) -> Decimal:
    """Round `value` to the currency's smallest unit."""
    exponent = Decimal(1).scaleb(-DECIMAL_PLACES)
''', '''def quantize(value: Decimal, currency: str = DEFAULT_CURRENCY) -> Decimal:
    """Round `value` to the currency's smallest unit."""
    exponent = Decimal(1).scaleb(-MINOR_UNITS.get(currency, DECIMAL_PLACES))
'''),
          lambda r: edit(r, "ledger/money.py", '        object.__setattr__(self, "amount", quantize(Decimal(amount)))\n',
                         '        object.__setattr__(self, "amount", quantize(Decimal(amount), self.currency))\n')],
    tests=[lambda r: append(r, "tests/test_money.py", '''

def test_yen_has_no_minor_unit():
    assert str(Money("1500", "JPY")) == "1,500 JPY"
    assert Money("0.5", "JPY").amount == Decimal("1")


def test_three_decimal_currency():
    assert Money("1.2345", "KWD").amount == Decimal("1.235")
    assert str(Money("2", "bhd")) == "2.000 BHD"


def test_other_currencies_keep_two_places():
    assert str(Money("3", "EUR")) == "3.00 EUR"
''')],
    f2p=["tests/test_money.py::test_yen_has_no_minor_unit", "tests/test_money.py::test_three_decimal_currency"],
    p2p=["tests/test_money.py::test_other_currencies_keep_two_places"] + [f"tests/test_money.py::{n}" for n in [
        "test_amounts_are_exact", "test_rounds_half_up", "test_currency_is_normalised", "test_mixing_currencies_is_refused",
        "test_sum_starts_from_zero", "test_multiply_by_integer", "test_is_immutable", "test_str_groups_thousands"]],
  ),
  dict(
    instance_id="fixture__ledger-3",
    created_at="2024-03-19T08:05:00Z",
    problem_statement="""format_trial_balance crashes on a new journal and misaligns short account names

Two problems with `format_trial_balance`:

1. On a journal with no accounts yet it raises instead of printing an empty report:

```python
>>> from ledger import Journal, format_trial_balance
>>> format_trial_balance(Journal())
ValueError: max() arg is an empty sequence
```

2. When every account name is shorter than the `Account` header (e.g. accounts `a` and `b`), the header and the `Total` line are wider than the rows, so the columns no longer line up.

The name column should be at least as wide as the `Account` and `Total` labels.
""",
    hints_text="",
    gold=[lambda r: edit(r, "ledger/reports.py", "    width = max(len(name) for name, _, _ in rows)\n",
                         "    # At least as wide as the labels, which also covers a journal with no accounts.\n"
                         '    width = max([len("Account"), len("Total")] + [len(name) for name, _, _ in rows])\n')],
    tests=[lambda r: edit(r, "tests/test_reports.py", "from ledger import Money, format_trial_balance, trial_balance\n",
                          "from ledger import Journal, Money, Transaction, format_trial_balance, trial_balance\n"),
           lambda r: append(r, "tests/test_reports.py", '''

def test_empty_journal():
    lines = format_trial_balance(Journal()).splitlines()
    assert lines[-1].split() == ["Total", "0.00", "0.00"]


def test_columns_line_up_with_short_names():
    journal = Journal()
    journal.open("a", "asset")
    journal.open("b", "equity")
    journal.post(Transaction("2024-01-01", "start", [("a", Money(5)), ("b", Money(-5))]))
    lines = format_trial_balance(journal).splitlines()[1:]
    assert len({len(line) for line in lines}) == 1
''')],
    f2p=["tests/test_reports.py::test_empty_journal", "tests/test_reports.py::test_columns_line_up_with_short_names"],
    p2p=[f"tests/test_reports.py::{n}" for n in ["test_trial_balance_rows", "test_debits_equal_credits", "test_format_trial_balance"]],
  ),
]
