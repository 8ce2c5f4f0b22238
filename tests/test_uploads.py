"""Uploads: every malformed file gets an UploadError with a helpful sentence; valid CSV and NPZ
files give exactly the arrays they hold; limits accept at the limit and reject just above."""

from __future__ import annotations

import gzip
import io
import zipfile

import numpy as np
import pytest

from dynamics.config import ArrayData, Config
from dynamics.limits import Limits
from dynamics.uploads import MB, ParsedUpload, UploadError, example_csv, parse_upload


def _npz(**arrays: object) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def _npz_compressed(**arrays: object) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def _error(name: str, data: bytes, **kw: object) -> str:
    with pytest.raises(UploadError) as ei:
        parse_upload(name, data, **kw)
    msgs = ei.value.messages
    assert msgs and all(isinstance(m, str) and m for m in msgs)
    return " ".join(msgs)


# ----------------------------------------------------------------------------- valid files
def test_csv_with_header_last_column_is_label() -> None:
    up = parse_upload("d.csv", b"a,b,c\n1,2,1\n3.5,-4e-3,-1\n")
    assert isinstance(up, ParsedUpload) and up.format == "csv"
    np.testing.assert_array_equal(up.X, [[1.0, 2.0], [3.5, -4e-3]])
    np.testing.assert_array_equal(up.y, [1.0, -1.0])
    assert up.columns == ("a", "b") and up.label_column == "c"
    assert up.data == ArrayData(X=((1.0, 2.0), (3.5, -4e-3)), y=(1.0, -1.0))
    assert "2 rows" in up.summary and "2 input columns" in up.summary


def test_csv_without_header() -> None:
    up = parse_upload("d.csv", b"1,2,0.5\n3,4,-0.25\n")
    np.testing.assert_array_equal(up.X, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(up.y, [0.5, -0.25])
    assert up.label_column == "column 3"


@pytest.mark.parametrize("label", ["y", "Label", " TARGET "])
def test_csv_named_label_column_anywhere(label: str) -> None:
    up = parse_upload("d.csv", f"x1,{label},x2\n1,-1,2\n3,1,4\n".encode())
    np.testing.assert_array_equal(up.X, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(up.y, [-1.0, 1.0])
    assert up.columns == ("x1", "x2")


def test_csv_semicolons_decimal_commas_bom_crlf_quotes_blank_lines() -> None:
    data = "\ufeff\"x 1\";x2;y\r\n0,5;1;1\r\n\r\n-2;1,25e1;-1\r\n".encode()
    up = parse_upload("excel.csv", data)
    np.testing.assert_array_equal(up.X, [[0.5, 1.0], [-2.0, 12.5]])
    np.testing.assert_array_equal(up.y, [1.0, -1.0])
    assert up.columns == ("x 1", "x2")


def test_csv_savetxt_commented_header() -> None:
    buf = io.StringIO()
    np.savetxt(buf, np.array([[1.0, 2.0, 1.0], [3.0, 4.0, -1.0]]), delimiter=",",
               header="u,v,label")
    up = parse_upload("s.csv", buf.getvalue().encode())
    assert up.columns == ("u", "v") and up.label_column == "label"
    np.testing.assert_array_equal(up.y, [1.0, -1.0])


def test_npz_roundtrip_exact_values() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(7, 3))
    y = np.where(rng.normal(size=7) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    for blob in (_npz(X=X, y=y), _npz_compressed(X=X, y=y.reshape(-1, 1))):
        up = parse_upload("d.npz", blob, loss="logistic")
        assert up.format == "npz"
        np.testing.assert_array_equal(up.X, X)
        np.testing.assert_array_equal(up.y, y)
    up = parse_upload("d.npz", _npz(X=np.arange(6, dtype=np.int32).reshape(3, 2),
                                    y=np.array([True, False, True])))
    np.testing.assert_array_equal(up.X, [[0, 1], [2, 3], [4, 5]])
    np.testing.assert_array_equal(up.y, [1.0, 0.0, 1.0])


def test_example_csv_is_valid_for_every_loss_and_builds_a_config() -> None:
    blob = example_csv()
    assert blob.startswith(b"x1,x2,y\n")
    for loss in ("square", "logistic", "exponential"):
        up = parse_upload("example.csv", blob, loss=loss)
        assert up.X.shape == (6, 2) and set(up.y.tolist()) == {-1.0, 1.0}
    cfg = Config(data=up.data, loss={"kind": "logistic"})
    assert cfg.is_classification


def test_map_01_only_when_asked() -> None:
    blob = b"x,y\n0.1,0\n0.2,1\n"
    msg = _error("d.csv", blob, loss="logistic")
    assert "−1 and +1" in msg and "0 → −1" in msg and "square loss" in msg
    up = parse_upload("d.csv", blob, loss="logistic", map_01=True)
    np.testing.assert_array_equal(up.y, [-1.0, 1.0])
    assert up.notes and "mapped" in up.notes[0]
    # the square loss keeps 0/1 as they are unless mapping is asked for
    np.testing.assert_array_equal(parse_upload("d.csv", blob).y, [0.0, 1.0])


# ----------------------------------------------------------------------------- bad files
@pytest.mark.parametrize("data", [b"", b"   \n\r\n", b"\xef\xbb\xbf"])
def test_empty_file(data: bytes) -> None:
    assert "empty" in _error("d.csv", data)


def test_header_only() -> None:
    assert "no data rows" in _error("d.csv", b"x1,x2,y\n")


@pytest.mark.parametrize(("data", "expect"), [
    (bytes(range(256)) * 4, "binary"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "binary"),
    ("x,y\n1,2\n".encode("utf-16"), "UTF-16"),
    ("x;y\n1,5;é\n".encode("latin-1"), "not UTF-8"),
    (gzip.compress(b"x,y\n1,2\n", mtime=0), "gzip"),
    (b"x,y\x07\n1,2\n", "control characters"),
])
def test_binary_or_wrong_encoding(data: bytes, expect: str) -> None:
    assert expect in _error("d.csv", data)


def test_single_column() -> None:
    assert "single column" in _error("d.csv", b"x\n1\n2\n")
    assert "single column" in _error("d.csv", b"1\n2\n3\n")


def test_ragged_rows_name_the_lines() -> None:
    msg = _error("d.csv", b"a,b,y\n1,2,1\n1,2\n1,2,3,4\n")
    assert "the header has 3" in msg and "line 3 has 2" in msg and "line 4 has 4" in msg


def test_non_numeric_cells_name_row_and_column() -> None:
    msg = _error("d.csv", b"a,b,y\n1,2,1\n1,abc,1\n,2,1\n")
    assert "Line 3, column 'b': 'abc' is not a number" in msg
    assert "Line 4, column 'a': is empty" in msg


@pytest.mark.parametrize(("cell", "expect"), [
    ("1e400", "'1e400' is not a finite number (too large)"),
    ("-1e999", "'-1e999' is not a finite number (too large)"),
    ("nan", "'nan' is not a finite number."),
    ("inf", "'inf' is not a finite number."),
])
def test_non_finite_cells(cell: str, expect: str) -> None:
    msg = _error("d.csv", f"a,b,y\n1,2,1\n3,{cell},-1\n".encode())
    assert "Line 3, column 'b'" in msg and expect in msg


def test_many_bad_cells_are_summarised() -> None:
    rows = "\n".join("x,1,1" for _ in range(50))
    with pytest.raises(UploadError) as ei:
        parse_upload("d.csv", f"a,b,y\n{rows}\n".encode())
    assert len(ei.value.messages) <= 10
    assert "and 42 more" in ei.value.messages[-1]


def test_mixed_first_row_hint_about_header() -> None:
    msg = _error("d.csv", b"1,abc,y\n1,2,1\n")
    assert "Line 1, column 2" in msg and "header" in msg


def test_several_label_columns() -> None:
    assert "Several columns could be the label" in _error("d.csv", b"y,label,x\n1,1,1\n")


def test_labels_must_fit_the_loss() -> None:
    msg = _error("d.csv", b"x,y\n1,1\n2,2\n3,-1\n", loss="exponential")
    assert "exponential loss needs labels −1 and +1" in msg and "1, 2" in msg
    # regression labels are fine for the square loss
    assert parse_upload("d.csv", b"x,y\n1,1\n2,2\n3,-1\n").y.tolist() == [1.0, 2.0, -1.0]


def test_single_class_for_classification() -> None:
    msg = _error("d.csv", b"x,y\n1,1\n2,1\n", loss="logistic")
    assert "needs both classes" in msg
    msg = _error("d.csv", b"x,y\n1,0\n2,0\n", loss="logistic", map_01=True)
    assert "needs both classes" in msg


def test_unknown_loss() -> None:
    assert "Unknown loss" in _error("d.csv", example_csv(), loss="hinge")


# ----------------------------------------------------------------------------- bad NPZ
def test_zip_that_is_not_npz() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("readme.txt", "hello")
    assert "not an .npz" in _error("d.npz", buf.getvalue())


def test_office_document() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("[Content_Types].xml", "<x/>")
        zf.writestr("xl/workbook.xml", "<x/>")
    assert "save it as CSV" in _error("book.xlsx", buf.getvalue())


def test_truncated_zip_and_fake_npz() -> None:
    blob = _npz(X=np.ones((3, 2)), y=np.ones(3))
    assert "cannot" in _error("d.npz", blob[: len(blob) // 2])
    assert "not a valid .npz" in _error("d.npz", b"x,y\n1,2\n")


def test_npz_with_pickled_objects_is_never_unpickled(tmp_path) -> None:
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):  # unpickling would create the marker file
            return (open, (str(marker), "w"))

    blob = _npz(X=np.array([[Evil(), 1.0]], dtype=object), y=np.ones(1))
    msg = _error("evil.npz", blob)
    assert "Python objects" in msg and "never" in msg
    assert not marker.exists()


@pytest.mark.parametrize(("arrays", "expect"), [
    ({"X": np.ones((3, 2))}, "arrays named X"),
    ({"a": np.ones((3, 2)), "b": np.ones(3)}, "it has: a, b"),
    ({"X": np.ones(3), "y": np.ones(3)}, "X must be 2-D"),
    ({"X": np.ones((3, 2, 2)), "y": np.ones(3)}, "X must be 2-D"),
    ({"X": np.ones((3, 2)), "y": np.ones((3, 2))}, "y must be 1-D"),
    ({"X": np.ones((3, 2)), "y": np.ones(4)}, "X has 3 rows but y has 4 labels"),
    ({"X": np.ones((0, 2)), "y": np.ones(0)}, "at least one row"),
    ({"X": np.array([["a", "b"]]), "y": np.ones(1)}, "values of type <U1"),
    ({"X": np.ones((2, 2)) * 1j, "y": np.ones(2)}, "complex"),
    ({"X": np.array([[1.0, np.nan], [np.inf, 2]]), "y": np.ones(2)}, "X[0, 1], X[1, 0]"),
    ({"X": np.ones((2, 2)), "y": np.array([1.0, np.nan])}, "y[1]"),
])
def test_npz_bad_arrays(arrays: dict, expect: str) -> None:
    assert expect in _error("d.npz", _npz(**arrays))


def test_npz_bomb_is_refused_from_its_header() -> None:
    # 20 MB of zeros compress to ~20 kB; the header alone is enough to refuse it
    blob = _npz_compressed(X=np.zeros((25_000, 100)), y=np.zeros(25_000))
    assert len(blob) < MB
    msg = _error("bomb.npz", blob, limits=Limits(max_points=20_000))
    assert "25000 data rows" in msg and "EAE_MAX_POINTS" in msg


# ----------------------------------------------------------------------------- limits
def _rows_csv(n: int, d: int) -> bytes:
    line = ",".join(["1"] * d) + ",1\n"
    return (",".join(f"x{j}" for j in range(d)) + ",y\n" + line * n).encode()


def test_row_limit_at_and_above() -> None:
    lim = Limits(max_points=30)
    assert parse_upload("d.csv", _rows_csv(30, 2), limits=lim).X.shape == (30, 2)
    msg = _error("d.csv", _rows_csv(31, 2), limits=lim)
    assert "31 data rows" in msg and "limit of 30" in msg and "EAE_MAX_POINTS" in msg
    assert parse_upload("d.npz", _npz(X=np.ones((30, 2)), y=np.ones(30)), limits=lim)
    assert "EAE_MAX_POINTS" in _error("d.npz", _npz(X=np.ones((31, 2)), y=np.ones(31)),
                                      limits=lim)


def test_far_over_the_limits_counts_exactly_without_parsing() -> None:
    lim = Limits(max_points=10, max_dim=3)
    msg = _error("d.csv", b"x,y\n" + b"1,1\n" * 1000 + b"# comment\n\n" + b"oops\n", limits=lim)
    assert "1001 data rows" in msg
    msg = _error("d.csv", b"1," * 1000 + b"1\n", limits=lim)
    assert "1000 input columns" in msg and "EAE_MAX_DIM" in msg


def test_column_limit_at_and_above() -> None:
    lim = Limits(max_dim=5)
    assert parse_upload("d.csv", _rows_csv(3, 5), limits=lim).X.shape == (3, 5)
    msg = _error("d.csv", _rows_csv(3, 6), limits=lim)
    assert "6 input columns" in msg and "limit of 5" in msg and "EAE_MAX_DIM" in msg
    assert parse_upload("d.npz", _npz(X=np.ones((3, 5)), y=np.ones(3)), limits=lim)
    assert "EAE_MAX_DIM" in _error("d.npz", _npz(X=np.ones((3, 6)), y=np.ones(3)), limits=lim)


def test_size_limit_at_and_above() -> None:
    lim = Limits(max_upload_mb=0.001)
    cap = int(0.001 * MB)
    body = b"x,y\n" + b"1,1\n" * 400
    at = body[:cap]
    at = at[: at.rfind(b"\n") + 1]
    at = at + b" " * (cap - len(at))  # trailing blanks: exactly cap bytes, still a valid CSV
    assert len(at) == cap
    assert parse_upload("d.csv", at, limits=lim).X.shape[1] == 1
    msg = _error("d.csv", at + b" ", limits=lim)
    assert "over the upload limit of 0.001 MB (EAE_MAX_UPLOAD_MB)" in msg


def test_limits_default_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EAE_MAX_POINTS", "2")
    assert "EAE_MAX_POINTS" in _error("d.csv", _rows_csv(3, 1))
    assert parse_upload("d.csv", _rows_csv(2, 1)).X.shape == (2, 1)


def test_not_bytes() -> None:
    assert "not a file" in _error("d.csv", "x,y\n1,2\n")  # type: ignore[arg-type]
