"""An upload costs what its arrays weigh: the peak memory of `parse_upload` stays within
1.25× the parsed float64 arrays for an NPZ, whatever the stored type (it was 2× for int64,
1.5× for float32), and within 2× plus the text for a CSV (it was 6.6×: a StringIO held the
text again at four bytes a character). Measured with tracemalloc, which NumPy reports its
buffers to."""

from __future__ import annotations

import io
import tracemalloc

import numpy as np
import pytest

from dynamics.uploads import parse_upload


def _npz(X: np.ndarray, y: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, X=X, y=y)
    return buf.getvalue()


def _peak(name: str, data: bytes) -> tuple[int, int]:
    """(peak traced bytes of the parse, bytes of its X and y)."""
    tracemalloc.start()
    try:
        parsed = parse_upload(name, data)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, parsed.X.nbytes + parsed.y.nbytes


@pytest.mark.parametrize("dtype", ["float64", "int64", "float32", "int8"])
def test_a_zero_filled_npz_peaks_near_its_arrays(dtype: str) -> None:
    """A file of 160 KB of compressed zeros that are 164 MB of values (20,000 ×
    1,024). Integer and single-precision arrays used to be converted after a full read (2.1×
    for int64)."""
    data = _npz(np.zeros((20_000, 1_024), dtype=dtype), np.zeros(20_000, dtype=dtype))
    assert len(data) < 10 * 1024 * 1024
    peak, arrays = _peak(f"zeros_{dtype}.npz", data)
    assert arrays == 8 * 20_000 * 1_025
    # the result itself, the finite check (one byte a value: 0.125×) and a 1 MB chunk
    assert peak <= 1.25 * arrays, (peak / arrays)


def test_a_fortran_ordered_npz_is_read_right() -> None:
    X = np.asfortranarray(np.arange(12.0).reshape(4, 3))
    got = parse_upload("f.npz", _npz(X, np.array([1.0, -1.0, 1.0, -1.0])))
    np.testing.assert_array_equal(got.X, np.arange(12.0).reshape(4, 3))
    assert got.X.flags.c_contiguous


def test_a_big_csv_peaks_at_twice_its_arrays_plus_its_text() -> None:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20_000, 40))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    text = "\n".join(",".join(f"{v:.6g}" for v in row) + f",{lab:g}"
                     for row, lab in zip(X, y, strict=True)).encode()
    peak, arrays = _peak("big.csv", text)
    # the file's bytes and their decoded text (ASCII: one byte a character) are the input
    assert peak <= 2.0 * arrays + 2 * len(text), (peak / arrays, len(text) / arrays)
