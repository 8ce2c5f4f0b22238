"""Uploaded data files -> validated `ArrayData`, or an `UploadError` that says what to fix.

Two formats are accepted:

* CSV text (UTF-8, with or without a byte-order mark; comma, semicolon or tab separated; an
  optional header row). The label is the column named ``y``, ``label`` or ``target`` (any
  case) when the header has one, otherwise the last column; every other column is an input.
  With semicolons, a decimal comma (``0,5``) is accepted.
* NPZ archives (``np.savez(f, X=X, y=y)``): numeric arrays ``X`` (rows × columns) and ``y``
  (one label per row). Nothing is ever unpickled, and array headers are checked against the
  limits before any data is read (so a small compressed file cannot expand into gigabytes).

Everything a user could get wrong is checked before a simulation starts — size, encoding,
shape, numbers, limits (`Limits`: EAE_MAX_UPLOAD_MB, EAE_MAX_POINTS, EAE_MAX_DIM) and labels
against the loss — and every problem is reported as a sentence naming the row and column.

Memory: a parse costs what its arrays weigh. An NPZ array is read in chunks of `CHUNK_BYTES`
straight into its float64 result, whatever its stored type (no second full copy; the finite
check adds one byte per value); CSV rows go straight into the X and y arrays. The arrays are
read-only float64 and the `ArrayData` holds them as they are (no nested tuples, no copies): the
largest allowed upload (20,000 × 1,024) peaks at about 1.1 × its 164 MB of values plus, for a
CSV, the decoded text (tests/test_uploads_memory.py holds it to 2 ×).
"""

from __future__ import annotations

import csv
import io
import math
import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import numpy as np

from .config import LOSSES, ArrayData
from .limits import Limits, get_limits

LABEL_NAMES = ("y", "label", "target")  # header names recognised as the label column
CLASSIFICATION_LOSSES = ("logistic", "exponential")
MB = 1024 * 1024  # one "MB" of EAE_MAX_UPLOAD_MB (the unit Streamlit's uploader uses too)
_MAX_CELL_ERRORS = 8  # cell problems listed before "... and N more"
CHUNK_BYTES = 1 << 20  # an NPZ array's data is read and converted this much at a time


class UploadError(ValueError):
    """An uploaded file that cannot be used; `messages` are sentences to show the user."""

    def __init__(self, messages: list[str]):
        self.messages = list(messages) or ["The file could not be read."]
        super().__init__(" ".join(self.messages))


@dataclass(frozen=True)
class ParsedUpload:
    """A valid upload: the config section, the arrays and a one-line summary for the page."""

    data: ArrayData
    X: np.ndarray  # (n, d) float64
    y: np.ndarray  # (n,) float64, after any 0/1 -> -1/+1 mapping
    format: str  # "csv" or "npz"
    columns: tuple[str, ...]  # input column names (CSV header, or x1..xd)
    label_column: str  # name of the label column ("y" for NPZ)
    summary: str
    notes: tuple[str, ...] = field(default=())  # non-fatal remarks (e.g. labels mapped)


def example_csv() -> bytes:
    """A small valid upload (two inputs, labels ±1) to download and use as a template."""
    rows = ["x1,x2,y"]
    for deg, label in ((15, 1), (40, 1), (75, 1), (195, -1), (230, -1), (255, -1)):
        th = math.radians(deg)
        rows.append(f"{math.cos(th):.4f},{math.sin(th):.4f},{label}")
    return ("\n".join(rows) + "\n").encode("utf-8")


def parse_upload(name: str, data: bytes, loss: str = "square", limits: Limits | None = None,
                 map_01: bool = False) -> ParsedUpload:
    """Parse and validate an uploaded CSV or NPZ file for a run with `loss`.

    `map_01=True` maps labels {0, 1} to {−1, +1} (only then; otherwise such labels are refused
    for the logistic and exponential losses, with a message offering the mapping).
    Raises `UploadError` (and nothing else) for every unusable file.
    """
    lim = limits if limits is not None else get_limits()
    name = str(name or "upload")
    if loss not in LOSSES:
        raise UploadError([f"Unknown loss {loss!r}; choose one of {', '.join(LOSSES)}."])
    if not isinstance(data, bytes | bytearray | memoryview):
        raise UploadError(["The upload is not a file's bytes."])
    data = bytes(data)
    cap = int(lim.max_upload_mb * MB)
    if len(data) > cap:
        raise UploadError([f"The file is {len(data) / MB:.2f} MB, over the upload limit of "
                           f"{lim.max_upload_mb:g} MB (EAE_MAX_UPLOAD_MB)."])
    if not data.strip(b" \t\r\n\x0b\x0c") or data in (b"\xef\xbb\xbf",):
        raise UploadError(["The file is empty."])
    lower = name.lower()
    if data.startswith(b"PK"):
        X, y, columns, label_col = _read_npz(data, name, lim)
        fmt = "npz"
    elif lower.endswith(".npz"):
        raise UploadError([f"{name} is not a valid .npz file (it is not a zip archive); save it "
                           "with numpy.savez(file, X=X, y=y)."])
    else:
        _reject_binary(data, name)
        X, y, columns, label_col = _read_csv(data, name, lim)
        fmt = "csv"
    y, notes = _check_labels(y, loss, map_01, label_col)
    X, y = _frozen(X), _frozen(y)
    arr = ArrayData(X=X, y=y)  # holds these arrays themselves (read-only, never copied)
    classes = np.unique(y)
    kind = (f"labels {', '.join(f'{v:g}' for v in classes)}" if len(classes) <= 4
            else f"labels from {y.min():g} to {y.max():g}")
    summary = (f"{name}: {X.shape[0]} rows, {X.shape[1]} input column"
               f"{'s' if X.shape[1] != 1 else ''}, label column {label_col!r}, {kind}.")
    return ParsedUpload(data=arr, X=X, y=y, format=fmt, columns=tuple(columns),
                        label_column=label_col, summary=summary, notes=tuple(notes))


def _frozen(a: np.ndarray) -> np.ndarray:
    """C-contiguous float64, read-only down to its memory (so a config can hold it without a
    copy). Only for arrays this module made: nobody else holds their memory."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    base: object = a
    while isinstance(base, np.ndarray):
        base.flags.writeable = False
        base = base.base
    return a


# ----------------------------------------------------------------------------- labels
def _check_labels(y: np.ndarray, loss: str, map_01: bool, label_col: str
                  ) -> tuple[np.ndarray, list[str]]:
    notes: list[str] = []
    values = np.unique(y)
    shown = ", ".join(f"{v:g}" for v in values[:6]) + (" ..." if len(values) > 6 else "")
    if map_01 and set(values.tolist()) <= {0.0, 1.0}:
        y = np.where(y == 0.0, -1.0, 1.0)
        values = np.unique(y)
        notes.append(f"Labels in column {label_col!r} were mapped 0 → −1 and 1 → +1.")
    if loss in CLASSIFICATION_LOSSES:
        if not set(values.tolist()) <= {-1.0, 1.0}:
            msg = (f"The {loss} loss needs labels −1 and +1, but column {label_col!r} has "
                   f"labels {shown}.")
            if set(values.tolist()) <= {0.0, 1.0}:
                msg += " Turn on mapping 0 → −1, 1 → +1, or use the square loss."
            else:
                msg += " Recode the labels as −1 and +1, or use the square loss."
            raise UploadError([msg])
        if len(values) < 2:
            raise UploadError([f"Every label in column {label_col!r} is {values[0]:+g}: the "
                               f"{loss} loss is a classification loss and needs both classes, "
                               "−1 and +1."])
    elif len(values) < 2:
        notes.append(f"Every label in column {label_col!r} is {values[0]:g}.")
    return y, notes


def _limit_errors(n: int, d: int, lim: Limits) -> list[str]:
    errs = []
    if n > lim.max_points:
        errs.append(f"The file has {n} data rows, over the limit of {lim.max_points} "
                    "(EAE_MAX_POINTS).")
    if d > lim.max_dim:
        errs.append(f"The file has {d} input columns, over the limit of {lim.max_dim} "
                    "(EAE_MAX_DIM).")
    return errs


# ----------------------------------------------------------------------------- NPZ
def _read_npz(data: bytes, name: str, lim: Limits
              ) -> tuple[np.ndarray, np.ndarray, list[str], str]:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        names = zf.namelist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError,
            NotImplementedError, UnicodeDecodeError):
        raise UploadError([f"{name} looks like a zip archive but cannot be opened; upload a "
                           "CSV file or an .npz saved with numpy.savez(file, X=X, y=y)."]
                          ) from None
    arrays = {n[:-4]: n for n in names if n.endswith(".npy")}
    if "X" not in arrays or "y" not in arrays:
        if any(n.startswith(("xl/", "word/", "ppt/")) or n == "[Content_Types].xml"
               for n in names):
            raise UploadError([f"{name} is an Office document (e.g. Excel); save it as CSV "
                               "(UTF-8) and upload that."])
        if not arrays:
            raise UploadError([f"{name} is a zip archive, not an .npz of numpy arrays; save "
                               "the data with numpy.savez(file, X=X, y=y)."])
        have = ", ".join(sorted(arrays)[:10])
        raise UploadError([f"The .npz needs arrays named X (inputs, rows × columns) and y "
                           f"(labels); it has: {have}."])
    with zf:
        X = _read_member(zf, arrays["X"], "X", lim)
        y = _read_member(zf, arrays["y"], "y", lim)
    errs: list[str] = []
    if X.ndim != 2:
        hint = " (for one input column use X.reshape(-1, 1))" if X.ndim == 1 else ""
        errs.append(f"X must be 2-D (rows × columns), but its shape is {X.shape}{hint}.")
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        errs.append(f"y must be 1-D (one label per row), but its shape is {y.shape}.")
    if errs:
        raise UploadError(errs)
    n, d = X.shape
    if n == 0 or d == 0:
        raise UploadError([f"X has shape {X.shape}: it needs at least one row and one column."])
    if len(y) != n:
        raise UploadError([f"X has {n} rows but y has {len(y)} labels; they must match."])
    errs = _limit_errors(n, d, lim)
    if errs:
        raise UploadError(errs)
    X = X.astype(np.float64, copy=False)  # zeros of 20,000 × 1,024: no second 164 MB copy
    y = y.astype(np.float64, copy=False)
    for arr, label in ((X, "X"), (y, "y")):
        if np.isfinite(arr).all():
            continue
        bad = np.argwhere(~np.isfinite(arr))
        if len(bad):
            where = ", ".join(f"{label}[{', '.join(str(int(i)) for i in b)}]" for b in bad[:5])
            more = f" and {len(bad) - 5} more" if len(bad) > 5 else ""
            errs.append(f"{label} has {len(bad)} value(s) that are not finite numbers (NaN or "
                        f"infinite): {where}{more}.")
    if errs:
        raise UploadError(errs)
    return X, y, [f"x{j + 1}" for j in range(d)], "y"


def _read_member(zf: zipfile.ZipFile, member: str, label: str, lim: Limits) -> np.ndarray:
    """One .npy inside the archive, header checked before data is read; never unpickles."""
    fmt = np.lib.format
    try:
        with zf.open(member) as f:
            version = fmt.read_magic(f)
            if version == (1, 0):
                shape, _fortran, dtype = fmt.read_array_header_1_0(f)
            elif version == (2, 0):
                shape, _fortran, dtype = fmt.read_array_header_2_0(f)
            else:
                raise ValueError(f"unsupported .npy version {version}")
            if dtype.hasobject or dtype.kind not in "biuf":
                what = ("Python objects (it would need unpickling, which is never done)"
                        if dtype.hasobject else f"values of type {dtype}")
                raise UploadError([f"{label} holds {what}; save numeric arrays (floats or "
                                   "integers)."])
            size = math.prod(shape)
            if len(shape) >= 1 and label == "X" and len(shape) == 2:
                errs = _limit_errors(int(shape[0]), int(shape[1]), lim)
                if errs:
                    raise UploadError(errs)
            if label == "y" and len(shape) >= 1 and shape[0] > lim.max_points:
                raise UploadError(_limit_errors(int(shape[0]), 0, lim))
            if size > lim.max_points * max(lim.max_dim, 1):
                raise UploadError([f"{label} has {size} values, more than the limits allow "
                                   f"({lim.max_points} rows (EAE_MAX_POINTS) × {lim.max_dim} "
                                   "columns (EAE_MAX_DIM))."])
            return _read_float64(f, tuple(int(k) for k in shape), bool(_fortran), dtype)
    except UploadError:
        raise
    except Exception as e:  # corrupt member, truncated data, bad header: all the user's file
        raise UploadError([f"The array {label} in the .npz cannot be read ({type(e).__name__}: "
                           f"{str(e)[:120]}); save it again with numpy.savez(file, X=X, y=y)."]
                          ) from None


def _read_float64(f: IO[bytes], shape: tuple[int, ...],
                  fortran: bool, dtype: np.dtype[Any]) -> np.ndarray:
    """The array's data (the stream positioned just after its header) as float64, read and
    converted `CHUNK_BYTES` at a time into the result (a Fortran-ordered array is made
    C-contiguous at the end, one copy)."""
    count = math.prod(shape)
    out = np.empty(count, dtype=np.float64)
    step = max(1, CHUNK_BYTES // max(dtype.itemsize, 1))
    for i in range(0, count, step):
        k = min(step, count - i)
        raw = f.read(k * dtype.itemsize)
        if len(raw) != k * dtype.itemsize:
            raise ValueError("the array's data is truncated")
        out[i:i + k] = np.frombuffer(raw, dtype=dtype, count=k)
    if fortran and len(shape) > 1:
        return np.ascontiguousarray(out.reshape(shape[::-1]).T)
    return out.reshape(shape)


# ----------------------------------------------------------------------------- CSV
def _reject_binary(data: bytes, name: str) -> None:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise UploadError([f"{name} is UTF-16 text; save it as CSV UTF-8 and upload again."])
    if data.startswith(b"\x1f\x8b"):
        raise UploadError([f"{name} is gzip-compressed; unpack it and upload the CSV."])
    if data.startswith(b"\x93NUMPY"):
        raise UploadError([f"{name} is a single .npy array; save inputs and labels together "
                           "with numpy.savez(file, X=X, y=y) and upload the .npz."])
    if name.lower().endswith((".xlsx", ".xls", ".ods")) or data.startswith(
            b"\xd0\xcf\x11\xe0"):
        raise UploadError([f"{name} is a spreadsheet file, not CSV text; save it as CSV "
                           "(UTF-8) and upload that."])
    if b"\x00" in data:
        raise UploadError([f"{name} is a binary file, not CSV text; upload a CSV or an .npz."])


def _decode(data: bytes, name: str) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise UploadError([f"{name} is not UTF-8 text (byte 0x{data[e.start]:02x} on line "
                           f"{line} cannot be decoded); save it as CSV UTF-8 or upload an .npz."]
                          ) from None
    ctrl = sum(1 for ch in text[:65536] if ord(ch) < 32 and ch not in "\t\r\n\f\v")
    if ctrl:
        raise UploadError([f"{name} contains control characters, so it is not a text CSV file; "
                           "upload a CSV or an .npz."])
    return text


def _number(cell: str, decimal_comma: bool) -> float | None:
    """The cell as a float, or None if it is not a number."""
    s = cell.strip()
    if decimal_comma and "," in s and "." not in s:
        s = s.replace(",", ".")
    if not s:
        return None
    try:
        return float(s)
    except ValueError:
        return None


def _read_csv(data: bytes, name: str, lim: Limits
              ) -> tuple[np.ndarray, np.ndarray, list[str], str]:
    """Streams the lines once, converting each row to floats as it goes, so memory stays near
    the size of the result and an over-long file is refused without parsing its cells."""
    text = _decode(data, name)
    lines = _lines(text)
    hint: str | None = None  # np.savetxt(header=...) writes "# a,b,y"
    first: tuple[int, str] | None = None
    for no, ln in lines:
        if ln.lstrip().startswith("#"):
            if hint is None:
                hint = ln.lstrip()[1:]
            continue
        first = (no, ln)
        break
    if first is None:
        raise UploadError([f"{name} has no data rows."])
    # a semicolon wins (then commas may be decimal commas), then a comma, then a tab
    delim = next((d for d in (";", ",", "\t") if d in first[1]), "")
    if not delim:
        raise UploadError([f"{name} has a single column (no comma, semicolon or tab on its "
                           "first line); it needs input columns and a label column."])
    decimal_comma = delim == ";"
    if first[1].count(delim) > 4 * (lim.max_dim + 2):  # refuse before splitting a huge line
        raise UploadError(_limit_errors(0, first[1].count(delim), lim))
    first_cells = _split(first[1], delim, name)
    header: list[str] | None = None
    pending: list[tuple[int, list[str]]] = []
    if _is_header(first_cells, decimal_comma):
        header = first_cells
    else:
        pending.append((first[0], first_cells))
        if hint is not None:
            cand = _split(hint, delim, name)
            if len(cand) == len(first_cells) and _is_header(cand, decimal_comma):
                header = cand
    width = len(header) if header is not None else len(first_cells)
    if width < 2:
        raise UploadError([f"{name} has a single column; it needs at least one input column "
                           "and a label column."])
    errs = _limit_errors(0, width - 1, lim)
    if errs:
        raise UploadError(errs)
    if header is not None:
        names = [h or f"column {j + 1}" for j, h in enumerate(header)]
        found = [j for j, h in enumerate(header) if h.strip().lower() in LABEL_NAMES]
        if len(found) > 1:
            cols = ", ".join(repr(header[j]) for j in found)
            raise UploadError([f"Several columns could be the label ({cols}); keep one column "
                               f"named y, label or target."])
        label_j = found[0] if found else width - 1
    else:
        names = [f"column {j + 1}" for j in range(width)]
        label_j = width - 1

    cap = min(lim.max_points, text.count("\n") + 1)
    keep = [j for j in range(width) if j != label_j]
    X_out = np.empty((cap, width - 1), dtype=np.float64)
    y_out = np.empty(cap, dtype=np.float64)
    n = 0
    ragged: list[tuple[int, int]] = []
    n_ragged = 0
    cell_errs: list[str] = []
    n_bad = 0

    def rows() -> Iterator[tuple[int, list[str] | None, int]]:
        yield from ((no, cells, len(cells)) for no, cells in pending)
        for no, ln in lines:
            if ln.lstrip().startswith("#"):
                continue
            k = ln.count(delim) + 1
            if k > 2 * width + 8:  # certainly ragged: do not split it
                yield no, None, k
            else:
                cells = _split(ln, delim, name)
                yield no, cells, len(cells)

    for no, cells, k in rows():
        if n >= lim.max_points:  # over the limit: count the rest without splitting them
            n += 1 + sum(1 for _, ln in lines if not ln.lstrip().startswith("#"))
            break
        if cells is None or k != width:
            n_ragged += 1
            if len(ragged) < 5:
                ragged.append((no, k))
            n += 1
            continue
        row = _row_floats(cells, decimal_comma)
        if row is None:
            for j, cell in enumerate(cells):
                problem = _cell_problem(cell, decimal_comma)
                if problem is not None:
                    n_bad += 1
                    if len(cell_errs) < _MAX_CELL_ERRORS:
                        col = repr(names[j]) if header is not None else str(j + 1)
                        cell_errs.append(f"Line {no}, column {col}: {problem}.")
        elif n < cap:
            y_out[n] = row.pop(label_j)
            X_out[n] = row
        n += 1
    if n == 0:
        raise UploadError([f"{name} has a header but no data rows."])
    errs = _limit_errors(n, 0, lim)
    if errs:
        raise UploadError(errs)
    if ragged:
        ref = "the header has" if header is not None else "the first row has"
        listed = "; ".join(f"line {no} has {k}" for no, k in ragged)
        more = f" (and {n_ragged - len(ragged)} more rows)" if n_ragged > len(ragged) else ""
        raise UploadError([f"Rows have different numbers of values: {ref} {width}, but "
                           f"{listed}{more}."])
    if cell_errs:
        if n_bad > len(cell_errs):
            cell_errs.append(f"... and {n_bad - len(cell_errs)} more cells that are not finite "
                             "numbers.")
        if header is None and cell_errs[0].startswith(f"Line {first[0]},"):
            cell_errs.append("If the first line is a header, give every column a name that is "
                             "not a number.")
        raise UploadError(cell_errs)
    return X_out[:n], y_out[:n], [names[j] for j in keep], names[label_j]


_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|$)")


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for every line that is not blank; \n, \r\n and \r all end lines.
    Scans the text in place (a StringIO would hold it again, four bytes a character)."""
    for no, m in enumerate(_LINE.finditer(text), start=1):
        if not m.group(0):  # the empty match at the very end
            return
        ln = m.group(1)
        if ln.strip():
            yield no, ln


def _split(line: str, delim: str, name: str) -> list[str]:
    try:
        cells = next(csv.reader([line], delimiter=delim, skipinitialspace=True), [])
    except csv.Error as e:
        raise UploadError([f"{name} is not well-formed CSV ({e})."]) from None
    return [c.strip() for c in cells]


def _is_header(cells: list[str], decimal_comma: bool) -> bool:
    """A header row: some cell is filled and no cell is a number."""
    filled = [c for c in cells if c]
    return bool(filled) and all(_number(c, decimal_comma) is None for c in filled)


def _row_floats(cells: list[str], decimal_comma: bool) -> list[float] | None:
    """The row as finite floats, or None if some cell is not a finite number."""
    try:
        if decimal_comma:
            row = [float(c.replace(",", ".") if "." not in c else c) for c in cells]
        else:
            row = list(map(float, cells))
    except ValueError:
        return None
    return row if all(map(math.isfinite, row)) else None


def _cell_problem(cell: str, decimal_comma: bool) -> str | None:
    v = _number(cell, decimal_comma)
    if v is None:
        return "is empty" if not cell else f"{_show(cell)} is not a number"
    if not math.isfinite(v):
        return f"{_show(cell)} is not a finite number" + (" (too large)" if _looks_huge(cell)
                                                           else "")
    return None


def _show(cell: str) -> str:
    return repr(cell if len(cell) <= 30 else cell[:27] + "...")


def _looks_huge(cell: str) -> bool:
    s = cell.strip().lower()
    return not any(w in s for w in ("nan", "inf"))
