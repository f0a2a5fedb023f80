"""#36, defect class 4: unchecked values reach the jobs.

Each command's inputs are validated against the schema they come from (``--options`` against
``data.<dataset>``, ``--config`` through the config validation, cards against the card schema), before
any array is allocated.

Each case here failed on the code before its fix (the closing note of #36 shows it).
"""

from __future__ import annotations

import pytest
from test_cli_bad_input import SETTINGS, assert_one_clear_line, lasso_prepare

CASES = {  # argv ({name}: a file of the `prepared` fixture), and what the one line must say
    "prepare_negative_samples": (
        lasso_prepare(samples_per_agent=-5),
        "data.lasso.samples_per_agent: -5 is less than",
    ),
    "prepare_huge_samples": (lasso_prepare(samples_per_agent=10**9), "is greater than the maximum of 100000"),
    "prepare_zero_trials": (lasso_prepare(trials=0), "data.lasso.trials: 0 is less than the minimum of 1"),
    "prepare_lasso_too_large": (
        lasso_prepare(trials=1000, samples_per_agent=100000),
        "data.lasso: trials x agents x samples_per_agent x features = 5,000,000,000 values, 37.3 GiB",
    ),
    "privacy_table_empty_config": (
        ["privacy-table", "--config", "{}", "--out", "x.csv", "x.md"],
        "--config: invalid configuration: (top level): 'studies' is a required property",
    ),
    "tables_card_not_a_card": (
        ["tables", "datasets", "--cards", "{empty}", "--out", "x.csv", "x.md"],
        "not a prepared",
    ),
    "dzoa_claims_zero_trials": (
        [
            *"dzoa claims --aggregates fig2=x.csv --trials 0 --out x.csv x.md --settings".split(),
            SETTINGS["dzoa"],
        ],
        "--trials is the number of evaluation trials the tables hold (>= 1); got 0",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_value_the_schema_refuses_is_one_line(
    case, prepared, tmp_path, monkeypatch, capsys, stderr_logging
) -> None:
    argv, message = CASES[case]
    monkeypatch.chdir(tmp_path)
    argv = [word.replace("{empty}", prepared["empty"]) for word in argv]
    assert message in assert_one_clear_line(argv, capsys)
