import numpy as np
import pandas as pd
import pytest

from rlopt.data import (
    CENSUS_ATTRIBUTES,
    EIA_ATTRIBUTES,
    load_census,
    load_eia,
    load_table,
    standardise,
    validate_pair,
)
from rlopt.data._standardise import diff_chunks, squared_diffs
from rlopt.exceptions import DataWarning, InputError
from rlopt.masking import build, published_recipe


def test_bundled_files_have_the_documented_shape():
    census, eia = load_census(), load_eia()
    assert census.shape == (1080, 13) and tuple(census.columns) == CENSUS_ATTRIBUTES
    assert eia.shape == (4092, 15) and set(EIA_ATTRIBUTES) <= set(eia.columns)
    assert census.notna().all().all()


def test_load_table_reads_csv_and_parquet_and_selects_columns(tmp_path):
    frame = pd.DataFrame({"x": [1.0, 2.0], "y": [3.0, 4.0]})
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.to_parquet(tmp_path / "t.parquet")
    pd.testing.assert_frame_equal(load_table(tmp_path / "t.csv"), frame)
    pd.testing.assert_frame_equal(load_table(tmp_path / "t.parquet", columns=["y"]), frame[["y"]])
    with pytest.raises(InputError, match=r"\['z'\] not found"):
        load_table(tmp_path / "t.csv", columns=["z"])
    with pytest.raises(InputError, match="file not found"):
        load_table(tmp_path / "missing.csv")
    (tmp_path / "t.xlsx").write_text("")
    with pytest.raises(InputError, match="expected a .csv, .tsv or .parquet"):
        load_table(tmp_path / "t.xlsx")


def test_standardise_each_column_to_mean_0_sd_1():
    z = standardise(np.array([[1.0, 10.0], [2.0, 30.0], [6.0, 20.0]]))
    np.testing.assert_allclose(z.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(z.std(axis=0, ddof=1), 1)


def test_diff_chunks_cover_the_full_tensor():
    rng = np.random.default_rng(0)
    za, zb = rng.normal(size=(23, 3)), rng.normal(size=(23, 3))
    full = squared_diffs(za, zb)
    assert full[4, 7, 1] == (za[4, 1] - zb[7, 1]) ** 2
    pieces = list(diff_chunks(za, zb, max_bytes=23 * 3 * 8 * 5))
    assert len(pieces) == 5 and all(stop - start <= 5 for start, stop, _ in pieces)
    np.testing.assert_array_equal(np.concatenate([d for *_, d in pieces]), full)


# ---- the validator: every bad input named in docs/method.md -------------------------


def test_valid_pair_is_aligned_by_row_order(small_pair):
    original, masked = small_pair
    data = validate_pair(original, masked)
    assert data.columns == ("a", "b", "c") and data.n_records == 30
    np.testing.assert_array_equal(data.masked, masked.to_numpy())


def test_text_is_a_category_and_a_garbled_number_an_error():
    original = pd.DataFrame({"a": [1.0, 2.0, 3.0], "name": ["x", "y", "z"]})
    assert [k.kind for k in validate_pair(original, original.copy()).kinds] == ["numeric", "nominal"]
    garbled = original.assign(a=["1", "2", "three"])
    with pytest.raises(InputError, match=r"column 'a' has 1 value\(s\) that are not numbers"):
        validate_pair(garbled, garbled.copy())


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nonfinite_is_an_error_naming_column_and_row(small_pair, bad):
    original, masked = small_pair
    masked.loc[4, "b"] = bad
    with pytest.raises(InputError, match=r"masked: column 'b' has 1 NaN/inf value\(s\) \(first at row 4"):
        validate_pair(original, masked)


def test_nonfinite_rows_can_be_dropped_from_both_files(small_pair):
    original, masked = small_pair
    original.loc[2, "a"] = np.nan
    masked.loc[5, "c"] = -np.inf
    with pytest.warns(DataWarning, match="dropped 2 of 30 records"):
        data = validate_pair(original, masked, drop_nonfinite=True)
    assert data.n_records == 28 and data.n_dropped == 2
    np.testing.assert_array_equal(data.original, original.drop(index=[2, 5]).to_numpy())


def test_zero_variance_column_is_named():
    eia = load_eia()[["YEAR", "RESSALES", "TOTSALES"]]
    with pytest.raises(InputError, match=r"column 'YEAR' is constant \(every value is 96"):
        validate_pair(eia, eia)


def test_different_row_counts(small_pair):
    original, masked = small_pair
    with pytest.raises(InputError, match="original file has 30 records and the masked file 29"):
        validate_pair(original, masked.iloc[:29])


def test_different_columns(small_pair):
    original, masked = small_pair
    with pytest.raises(InputError, match=r"only in the original \['c'\], only in the masked file \['d'\]"):
        validate_pair(original, masked.rename(columns={"c": "d"}))
    data = validate_pair(original, masked.rename(columns={"c": "d"}), columns=["a", "b"])
    assert data.columns == ("a", "b")


def test_unknown_column(small_pair):
    with pytest.raises(InputError, match=r"unknown column\(s\) \['zz'\]; available: \['a', 'b', 'c'\]"):
        validate_pair(*small_pair, columns=["a", "zz"])


def test_fewer_than_two_records():
    one = pd.DataFrame({"a": [1.0]})
    with pytest.raises(InputError, match="1 record"):
        validate_pair(one, one)


def _with_ids(frame, ids):
    return frame.assign(rid=ids)


def test_duplicate_ids(small_pair):
    original, masked = small_pair
    ids = list(range(30))
    dup = ids[:-1] + [0]
    with pytest.raises(InputError, match=r"masked: id column 'rid' has duplicate ids, e.g. 0"):
        validate_pair(_with_ids(original, ids), _with_ids(masked, dup), id_column="rid")


def test_missing_ids(small_pair):
    original, masked = small_pair
    ids = [float(i) for i in range(30)]
    holes = ids[:3] + [np.nan] + ids[4:]
    with pytest.raises(
        InputError, match=r"original: id column 'rid' has 1 missing id\(s\) \(first at row 3\)"
    ):
        validate_pair(_with_ids(original, holes), _with_ids(masked, ids), id_column="rid")


def test_different_id_sets(small_pair):
    original, masked = small_pair
    with pytest.raises(
        InputError, match=r"1 id\(s\) only in the original \(e.g. \[0\]\), 1 only in the masked"
    ):
        validate_pair(_with_ids(original, range(30)), _with_ids(masked, range(1, 31)), id_column="rid")


def test_missing_id_column(small_pair):
    with pytest.raises(InputError, match="id column 'rid' not found"):
        validate_pair(*small_pair, id_column="rid")


def test_shuffled_files_are_aligned_by_id(small_pair):
    original, masked = small_pair
    original, masked = (
        _with_ids(original, [f"p{i}" for i in range(30)]),
        _with_ids(masked, [f"p{i}" for i in range(30)]),
    )
    shuffled = masked.sample(frac=1, random_state=3)
    data = validate_pair(original, shuffled, id_column="rid")
    assert data.columns == ("a", "b", "c")
    np.testing.assert_array_equal(data.masked, masked[["a", "b", "c"]].to_numpy())
    assert list(data.ids) == [f"p{i}" for i in range(30)]


def test_duplicate_original_records_warn_with_count():
    original = pd.DataFrame({"a": [1.0, 1.0, 2.0, 3.0, 1.0], "b": [5.0, 5.0, 6.0, 7.0, 5.0]})
    masked = original + 0.1 * np.arange(5)[:, None]
    with pytest.warns(DataWarning, match="3 original records share their values"):
        data = validate_pair(original, masked)
    assert data.n_duplicate_original == 3


def test_arrays_are_accepted_and_named():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(5, 2))
    assert validate_pair(a, a + 0.01).columns == ("x0", "x1")
    with pytest.raises(InputError, match=r"expected a 2-d table .* shape \(5,\)"):
        validate_pair(a[:, 0], a[:, 0])


def test_validated_data_is_taken_in_place_of_the_two_files():
    """Every function that takes the two files takes their LinkageData too: validated
    once, the same figures, and no second public twin of any function."""
    import importlib

    import rlopt
    from rlopt.linkage import dbrl, pld
    from rlopt.risk import information_loss, interval_disclosure

    original, masked = build(published_recipe("M4-33"))
    data = validate_pair(original, masked)
    assert validate_pair(data) is data
    assert dbrl(data, distance="md").n_correct == dbrl(original, masked, distance="md").n_correct
    assert pld(data).n_correct == pld(original, masked).n_correct
    assert information_loss(data) == information_loss(original, masked)
    assert interval_disclosure(data).equals(interval_disclosure(original, masked))
    with pytest.raises(InputError, match="columns given with validated LinkageData"):
        dbrl(data, columns=["AGI"])
    with pytest.raises(InputError, match="masked: missing"):
        dbrl(original)
    twins = [
        f"{package}.{name}"
        for package in ("rlopt", "rlopt.data", "rlopt.linkage", "rlopt.attacks", "rlopt.risk", "rlopt.learn")
        for name in importlib.import_module(package).__all__
        if name.endswith("_validated")
    ]
    assert not twins and not hasattr(rlopt.learn.LearnedDistanceLinkage, "fit_validated")
