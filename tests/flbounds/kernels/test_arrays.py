"""The kernels' own sort (the stable order, for any length) and transpose, and no construct
in a kernel that numba compiles slowly."""

import ast
from pathlib import Path

import numba
import numpy as np
import pytest

import flbounds.kernels
from flbounds.kernels._arrays import argsort_into
from flbounds.kernels._simd import transpose_into
from flbounds.kernels.gradients import slice_bounds

_transpose_block = numba.njit(lambda dst, src, c: transpose_into(dst, src, c))

KERNELS = Path(flbounds.kernels.__file__).parent


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, 8, 9, 100, 1001])
@pytest.mark.parametrize("values", ["distinct", "ties", "sorted", "reversed"])
def test_argsort_into_is_numpys_stable_argsort(n, values):
    rng = np.random.default_rng(n)
    a = {"distinct": rng.standard_normal(n), "ties": rng.integers(0, 4, n).astype(float),
         "sorted": np.arange(n, dtype=float), "reversed": -np.arange(n, dtype=float)}[values]
    order, scratch = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    argsort_into(a, order, scratch)
    np.testing.assert_array_equal(order, np.argsort(a, kind="stable"))


def _slow_to_compile(tree: ast.AST) -> list[str]:
    """Constructs in a kernel source that compile slowly in numba (see ``_arrays``): a slice
    assigned anything but a constant, ``np.sort`` / ``np.argsort``, ``transpose(axes)``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if (isinstance(target, ast.Subscript)
                        and any(isinstance(n, ast.Slice) for n in ast.walk(target.slice))
                        and not isinstance(node.value, ast.Constant)):
                    found.append(f"line {node.lineno}: slice assigned {ast.unparse(node.value)}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name = node.func.attr
            if name in ("sort", "argsort") and ast.unparse(node.func.value) in ("np", "numpy"):
                found.append(f"line {node.lineno}: np.{name}")
            if name == "transpose" and node.args:
                found.append(f"line {node.lineno}: transpose with axes")
    return found


def test_the_guard_sees_each_slow_construct():
    source = "out[0, :] = x\nout[:] = 0.0\ns = np.sort(a)\nt = a.transpose(1, 0)\ny = a.T\n"
    assert len(_slow_to_compile(ast.parse(source))) == 3


@pytest.mark.parametrize("path", sorted(KERNELS.glob("*.py")), ids=lambda p: p.name)
def test_kernels_avoid_constructs_slow_to_compile(path):
    """Each costs a first run about a second of compiling per process or per kernel."""
    assert _slow_to_compile(ast.parse(path.read_text())) == []


@pytest.mark.parametrize("rows, cols", [(1, 1), (4, 4), (20, 50), (7, 9), (3, 16), (8, 3)])
def test_transpose_into_is_the_transpose(rows, cols):
    """The register-tiled transpose of one client's block (tiles and both edges)."""
    src = np.random.default_rng(rows * cols).standard_normal((3, rows, cols))
    dst = np.full((cols, rows), np.nan)
    _transpose_block(dst, src, 1)
    np.testing.assert_array_equal(dst, src[1].T)


@pytest.mark.parametrize("size", [0, 1, 2, 16, 272, 1000])
@pytest.mark.parametrize("parts", [1, 2, 3, 5, 7, 20])
def test_prefetch_slices_cover_a_client_once(size, parts):
    """The slices hinted at the local steps (one per step) tile a client's data: in order,
    no gap, no overlap, none longer than its share rounded up."""
    bounds = [slice_bounds(size, part, parts) for part in range(parts)]
    covered = [i for lo, count in bounds for i in range(lo, lo + count)]
    assert covered == list(range(size))
    assert max(count for _, count in bounds) <= -(-size // parts)
