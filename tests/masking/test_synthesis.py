"""The synthetic data generators (rlopt.masking.synthesis), their registry entries and
their command line; the distribution loss that measures a fully synthetic file."""

import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from rlopt.cli import app
from rlopt.data._bundled import BUNDLED_FILES
from rlopt.exceptions import DataWarning, InputError
from rlopt.masking import masking_method, masking_spec
from rlopt.masking.methods import MASKING_METHODS, check_linkable, fully_synthetic
from rlopt.masking.synthesis import MAX_CELLS, cart_synthesis, dp_histogram, gaussian_copula
from rlopt.risk.measures import distribution_loss, information_loss

runner = CliRunner()


@pytest.fixture(scope="module")
def census() -> pd.DataFrame:
    return BUNDLED_FILES["census"].load().iloc[:200].reset_index(drop=True)


def _quiet(function, *args, **kwargs):
    """``function`` without the warning that the data's range is not a private domain."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DataWarning)
        return function(*args, **kwargs)


# ---- partial synthesis by CART -------------------------------------------------------


def test_cart_keeps_the_other_columns_and_the_order_and_draws_observed_values(census):
    synthesized = ["AGI", "FEDTAX"]
    out = cart_synthesis(census, synthesized, min_leaf=5, seed=1)
    kept = [c for c in census.columns if c not in synthesized]
    pd.testing.assert_frame_equal(out[kept], census[kept])
    assert list(out.columns) == list(census.columns) and out.index.equals(census.index)
    for column in synthesized:
        assert out[column].isin(set(census[column])).all()
        assert out[column].dtype == census[column].dtype
    assert (out["AGI"] != census["AGI"]).any()  # something was replaced


def test_cart_with_one_leaf_draws_from_the_marginal(census):
    # min_leaf = n: one leaf holding every record, as a bootstrap of the column
    out = cart_synthesis(census, ["AGI"], min_leaf=len(census), seed=3)
    rows = np.random.default_rng(3).integers(0, len(census), size=len(census))
    assert list(out["AGI"]) == list(census["AGI"].iloc[rows])


def test_cart_of_every_column_starts_from_the_marginal_and_mixes_categories():
    frame = pd.DataFrame(
        {"region": ["n", "s", "e", "w"] * 10, "age": np.arange(40) % 7, "income": np.arange(40.0)}
    )
    out = cart_synthesis(frame, ["region", "income", "age"], min_leaf=2, seed=0)
    assert out.shape == frame.shape and out["region"].isin(["n", "s", "e", "w"]).all()
    assert out["age"].isin(set(frame["age"])).all() and out["income"].isin(set(frame["income"])).all()


def test_cart_is_seeded_and_checks_its_attributes(census):
    first = cart_synthesis(census, ["AGI", "FICA"], seed=7)
    pd.testing.assert_frame_equal(first, cart_synthesis(census, ["AGI", "FICA"], seed=7))
    assert not first.equals(cart_synthesis(census, ["AGI", "FICA"], seed=8))
    with pytest.raises(InputError, match=r"unknown column\(s\) \['NOPE'\]; available: \['AFNLWGT'"):
        cart_synthesis(census, ["AGI", "NOPE"])
    with pytest.raises(InputError, match="partial synthesis needs the attributes to replace"):
        masking_spec("cart").apply(census)
    with pytest.raises(InputError, match="min_leaf"):
        cart_synthesis(census, ["AGI"], min_leaf=0)


# ---- the Gaussian copula --------------------------------------------------------------


def test_copula_shape_range_integers_and_rank_correlation(census):
    out = gaussian_copula(census, n_records=400, seed=1)
    assert out.shape == (400, census.shape[1]) and list(out.columns) == list(census.columns)
    assert (out.min() >= census.min()).all() and (out.max() <= census.max()).all()
    assert all(pd.api.types.is_integer_dtype(out[c]) for c in out.columns)
    original = census[["AGI", "FEDTAX"]].corr(method="spearman").iloc[0, 1]
    drawn = out[["AGI", "FEDTAX"]].corr(method="spearman").iloc[0, 1]
    assert original > 0.9 and abs(drawn - original) < 0.1


def test_copula_is_seeded_keeps_whole_floats_and_refuses_categories(census):
    columns = ["AGI", "FICA"]
    pd.testing.assert_frame_equal(
        gaussian_copula(census, columns=columns, seed=2), gaussian_copula(census, columns=columns, seed=2)
    )
    floats = census[columns].astype(float).assign(half=census["AGI"] / 7)
    out = gaussian_copula(floats, seed=0)
    assert (out["AGI"] % 1 == 0).all() and (out["half"] % 1 != 0).any()
    mixed = census[columns].assign(region="north")
    with pytest.raises(
        InputError, match="column 'region' is categorical.*choose numeric columns with --columns"
    ):
        gaussian_copula(mixed)
    assert gaussian_copula(mixed, columns=columns).shape == (200, 2)


# ---- the DP histogram -----------------------------------------------------------------


def test_dp_histogram_values_in_bounds_and_seeded(census):
    bounds = {"AGI": (0.0, 200000.0), "FICA": (0.0, 10000.0)}
    out = dp_histogram(census, 1.0, bins=5, bounds=bounds, columns=["AGI", "FICA"], seed=4)
    assert out.shape == (200, 2)
    for column, (low, high) in bounds.items():
        assert out[column].between(low, high).all() and pd.api.types.is_integer_dtype(out[column])
    again = dp_histogram(census, 1.0, bins=5, bounds=bounds, columns=["AGI", "FICA"], seed=4)
    pd.testing.assert_frame_equal(out, again)
    with pytest.warns(DataWarning, match="not differentially private"):
        dp_histogram(census, 1.0, columns=["AGI"])


def test_dp_histogram_refuses_a_bad_epsilon_and_too_many_cells(census):
    for epsilon in (0, -1.0, float("inf"), float("nan")):
        with pytest.raises(InputError, match="epsilon"):
            dp_histogram(census, epsilon, columns=["AGI"])
        with pytest.raises(InputError, match="epsilon"):
            masking_spec("dp_histogram", epsilon=epsilon)
    assert 4**13 > MAX_CELLS
    with pytest.raises(
        InputError, match=r"bins=4 with 13 attributes make 67108864 cells.*fewer --bins or --columns"
    ):
        dp_histogram(census, 1.0)


def test_dp_histogram_with_a_large_epsilon_keeps_the_cell_frequencies():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"a": rng.uniform(0, 1, 300), "b": rng.uniform(0, 1, 300) ** 2})
    bounds = {"a": (0.0, 1.0), "b": (0.0, 1.0)}
    out = dp_histogram(frame, 1e6, bins=3, bounds=bounds, n_records=30000, seed=0)

    def shares(data):
        cells = np.minimum((data.to_numpy() * 3).astype(int), 2)
        return np.bincount(cells[:, 0] * 3 + cells[:, 1], minlength=9) / len(data)

    assert np.abs(shares(out) - shares(frame)).max() < 0.01


# ---- the registry and the command line ---------------------------------------------


def test_the_registry_knows_which_methods_are_synthetic():
    assert masking_method("cart").name == "synthetic_cart"
    assert masking_method("gaussian-copula").name == "synthetic_copula"
    assert masking_method("histogram").name == "dp_histogram"
    assert {m.name: m.synthetic for m in MASKING_METHODS.values() if m.synthetic} == {
        "synthetic_cart": "partial",
        "synthetic_copula": "full",
        "dp_histogram": "full",
    }
    assert fully_synthetic("copula") and fully_synthetic(masking_spec("dp_histogram", epsilon=1))
    assert not fully_synthetic("cart") and not fully_synthetic("mdav")
    check_linkable("cart")
    with pytest.raises(InputError, match="records are nobody's, so record linkage does not apply"):
        check_linkable(masking_spec("copula", n_records=10))


def test_mask_writes_each_generator(tmp_path, census):
    census.to_csv(tmp_path / "in.csv", index=False)
    cases = {
        "copula.csv": (
            ["--method", "synthetic_copula", "--seed", "1", "--n-records", "50"],
            "wrote 50 fully synthetic",
        ),
        "dp.csv": (
            ["--method", "dp_histogram", "--epsilon", "1", "--bins", "4", "--columns", "AGI,FICA"],
            "wrote 200 fully synthetic records with dp_histogram",
        ),
        "cart.csv": (
            ["--method", "synthetic_cart", "--columns", "AGI,FEDTAX", "--min-leaf", "10"],
            "masked 200",
        ),
    }
    for name, (args, said) in cases.items():
        out = tmp_path / name
        result = runner.invoke(app, ["mask", str(tmp_path / "in.csv"), "--out", str(out), *args])
        assert result.exit_code == 0, result.output
        assert said in result.stdout
    assert pd.read_csv(tmp_path / "copula.csv").shape == (50, 13)
    assert list(pd.read_csv(tmp_path / "dp.csv").columns) == ["AGI", "FICA"]
    cart = pd.read_csv(tmp_path / "cart.csv")
    pd.testing.assert_frame_equal(
        cart.drop(columns=["AGI", "FEDTAX"]), census.drop(columns=["AGI", "FEDTAX"])
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["risk", "in.csv", "in.csv", "--tradeoff-method", "copula", "--tradeoff-values", "100"],
            "error: synthetic_copula makes a fully synthetic file: its records are nobody's, so record "
            "linkage does not apply; measure it with `rlopt membership`",
        ),
        (["tradeoff", "in.csv", "--method", "dp_histogram", "--values", "1"], "dp_histogram makes a fully"),
        (["mask", "in.csv", "--method", "cart", "--out", "o.csv"], "partial synthesis needs the attributes"),
        (
            ["mask", "in.csv", "--method", "copula", "--bins", "3", "--out", "o.csv"],
            "--bins: not a parameter",
        ),
    ],
)
def test_linkage_of_a_fully_synthetic_method_is_one_error_line(tmp_path, monkeypatch, capsys, args, message):
    from tests._helpers import run_main

    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"a": [1.0, 2, 3, 4, 5], "b": [4.0, 1, 3, 2, 5]}).to_csv("in.csv", index=False)
    code = run_main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0], err
    assert not (tmp_path / "o.csv").exists()


def test_tradeoff_plan_synthesizes_every_attribute_of_a_partial_synthesis(census):
    from rlopt.risk.risk_utility import tradeoff_plan

    assert callable(tradeoff_plan(census.iloc[:40], method="cart", values=[5, 10], columns=["AGI", "FICA"]))


# ---- the distribution loss ------------------------------------------------------------

MOMENTS = ("mean_change", "variance_change", "correlation_change", "covariance_change")


def test_distribution_loss_of_a_shuffled_copy_is_zero(census):
    shuffled = census.sample(frac=1, random_state=0)
    loss = distribution_loss(census, shuffled)
    assert set(loss) == set(_quiet(information_loss, census, census))
    assert all(loss[key] == pytest.approx(0, abs=1e-12) for key in MOMENTS)
    assert loss["sse"] is None and loss["il1s"] is None and loss["pmse"] < 0.01


def test_distribution_loss_equals_the_moments_of_an_aligned_pair(census):
    masked = _quiet(masking_spec("noise", variance_ratio=0.2, seed=0).apply, census)
    aligned, unaligned = information_loss(census, masked), distribution_loss(census, masked)
    for key in (*MOMENTS, "pmse"):
        assert unaligned[key] == pytest.approx(aligned[key], rel=1e-9)
    synthetic = gaussian_copula(census, n_records=300, seed=0)
    assert distribution_loss(census, synthetic)["mean_change"] > 0


def test_distribution_loss_of_categories_is_their_total_variation():
    original = pd.DataFrame({"x": [1.0, 2, 3, 4], "c": ["a", "a", "b", "b"]})
    synthetic = pd.DataFrame({"x": [4.0, 3, 2, 1, 2.5], "c": ["a", "b", "b", "b", None]})
    loss = distribution_loss(original, synthetic)
    assert loss["categorical_changed"] is None
    assert loss["categorical_tv"] == pytest.approx((abs(0.5 - 0.2) + abs(0.5 - 0.6) + 0.2) / 2)
    with pytest.raises(InputError, match=r"synthetic: unknown column\(s\) \['c'\]"):
        distribution_loss(original, synthetic[["x"]])
