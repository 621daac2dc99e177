"""The command ``energystats data`` (issue 52): the bundled data sets, listed, shown, written.

The shapes and the copies are checked against the package's files read here with pandas and
against :mod:`energystats.datasets`' loaders, not against the command's own reading.
"""
from __future__ import annotations

import io
import json
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from energystats.datasets import load_iris, load_nile

from .test_cli import run_cli
from ._helpers import one_error_line, strict_json as _strict_json

BUNDLED = Path(str(resources.files("energystats").joinpath("data")))


def _one_error_line(code, err):
    return one_error_line(code, err, "data")


def test_help_has_an_example():
    code, out, _ = run_cli("data", "--help")
    assert code == 0 and "energystats data iris --out iris.csv" in out


def test_list_every_format():
    code, out, err = run_cli("data", "--format", "json")
    assert code == 0, err
    sets = {r["name"]: r for r in _strict_json(out)["datasets"]}
    assert sorted(sets) == ["iris", "nile"]
    assert (sets["iris"]["n_rows"], sets["iris"]["n_columns"]) == load_iris().shape
    assert (sets["nile"]["n_rows"], sets["nile"]["n_columns"]) == (len(load_nile()), 2)
    for name, rec in sets.items():
        assert Path(rec["path"]) == BUNDLED / f"{name}.csv" and Path(rec["path"]).is_file()
    assert sets["nile"]["description"].startswith("The annual flow of the Nile")
    code, out, err = run_cli("data")
    assert code == 0 and "iris" in out and "nile" in out and str(BUNDLED) in out
    code, out, err = run_cli("data", "--format", "csv")
    t = pd.read_csv(io.StringIO(out), index_col="name")
    assert code == 0 and list(t.index) == ["iris", "nile"] and t.loc["iris", "n_rows"] == 150


@pytest.mark.parametrize("name", ["iris", "nile"])
def test_one_data_set_path_and_shape(name):
    raw = pd.read_csv(BUNDLED / f"{name}.csv")
    code, out, err = run_cli("data", name)
    assert code == 0, err
    assert f"path: {BUNDLED / (name + '.csv')}" in out
    assert f"shape: {raw.shape[0]} rows x {raw.shape[1]} columns ({', '.join(raw.columns)})" in out
    code, out, err = run_cli("data", name, "--format", "json")
    rec = _strict_json(out)
    assert (rec["name"], rec["n_rows"], rec["columns"]) == (name, raw.shape[0], list(raw.columns))
    assert "out" not in rec


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".json", ".parquet"])
def test_write_a_copy_by_suffix(tmp_path, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    out_path = tmp_path / f"iris{suffix}"
    code, out, err = run_cli("data", "iris", "--out", out_path)
    assert code == 0, err
    assert f"written to: {out_path}" in out and "150 rows, 5 columns written to" in err
    if suffix == ".csv":
        back = pd.read_csv(out_path)
    elif suffix == ".tsv":
        back = pd.read_csv(out_path, sep="\t")
    elif suffix == ".json":
        back = pd.DataFrame(json.loads(out_path.read_text()))
    else:
        back = pd.read_parquet(out_path)
    want = load_iris()
    pd.testing.assert_frame_equal(back.drop(columns="species"), want.drop(columns="species"))
    assert back["species"].astype(str).tolist() == want["species"].astype(str).tolist()


def test_nile_copy_is_the_bundled_file(tmp_path):
    code, out, err = run_cli("data", "nile", "--out", tmp_path / "n.csv", "-q")
    assert code == 0 and err == ""
    assert (tmp_path / "n.csv").read_text() == (BUNDLED / "nile.csv").read_text()
    back = pd.read_csv(tmp_path / "n.csv").set_index("year")["volume"]
    np.testing.assert_array_equal(back.to_numpy(), load_nile().to_numpy())


def test_an_existing_file_is_kept_unless_force(tmp_path):
    target = tmp_path / "mine.csv"
    target.write_text("keep me\n")
    code, out, err = run_cli("data", "iris", "--out", target)
    line = _one_error_line(code, err)
    assert f"{target} (option --out): the file exists; pass --force to overwrite it." in line
    assert target.read_text() == "keep me\n" and out == ""
    code, out, err = run_cli("data", "iris", "--out", target, "--force", "--format", "json", "-q")
    assert code == 0, err
    assert _strict_json(out)["out"] == str(target)
    assert len(pd.read_csv(target)) == 150


@pytest.mark.parametrize("args, text", [
    (["fisher"], "no bundled data set 'fisher'; they are iris, nile"),
    (["--out", "x.csv"], "option --out: name the data set to write (one of iris, nile)"),
    (["iris", "--force"], "option --force: only with --out"),
    (["iris", "--out", "iris.xlsx"], "iris.xlsx (option --out): unknown suffix '.xlsx'"),
    (["iris", "--out", "no/such/folder/iris.csv"], "does not exist"),
])
def test_refused_inputs_are_one_line(tmp_path, args, text):
    code, out, err = run_cli("data", *args, cwd=tmp_path)
    assert text in _one_error_line(code, err) and out == ""
