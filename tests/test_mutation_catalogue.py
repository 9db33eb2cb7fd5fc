"""The mutation catalogue stays anchored to the tree, and the harness sees a planted bug.

The full harness (``python -m tests.mutation``) is far too slow for the default run; these
checks are cheap: every snippet still occurs exactly once, and one tiny mutant that raises
goes through the copy-patch-run path and is seen by the one claim it runs.
"""

from pathlib import Path

import pytest

from tests.mutation.catalogue import MUTANTS, Mutant
from tests.mutation.harness import PAPERS, ROOT, apply, copy_tree, run_mutant, select

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_catalogue_has_enough_distinct_mutants():
    ids = [m.id for m in MUTANTS]
    assert len(ids) == len(set(ids)) >= 30
    assert {p for m in MUTANTS for p in m.papers} == set(PAPERS)


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.id for m in MUTANTS])
def test_snippet_occurs_exactly_once(mutant):
    text = (ROOT / mutant.path).read_text()
    assert text.count(mutant.old) == 1, f"re-anchor {mutant.id} in {mutant.path}"
    assert mutant.new != mutant.old and set(mutant.papers) <= set(PAPERS)
    compile(text.replace(mutant.old, mutant.new), mutant.path, "exec")  # no syntax errors


def test_apply_patches_only_the_copy(tmp_path):
    mutant = MUTANTS[0]
    copy_tree(tmp_path / "tree")
    apply(mutant, tmp_path / "tree")
    assert mutant.new in (tmp_path / "tree" / mutant.path).read_text()
    assert mutant.new not in (ROOT / mutant.path).read_text()
    with pytest.raises(ValueError, match="occurs 0 times"):
        apply(mutant._replace(old="no such snippet"), tmp_path / "tree")


def test_select_validates():
    assert all("kvib" in m.papers for m in select("kvib"))
    with pytest.raises(ValueError, match="paper"):
        select("nope")
    with pytest.raises(ValueError, match="no mutant"):
        select(None, "nope.*")


def test_planted_raise_is_seen_through_the_copy(tmp_path):
    """A mutant that raises in the library must reach the claim run in the copy (so the copy's
    packages shadow the installed ones)."""
    planted = Mutant("tiny.raise", ("kvib",), "flbounds/sampling/estimators.py",
                     "return float(np.sum((1.0 - p) / p * a * a))",
                     "raise RuntimeError('planted')", "a planted crash")
    outcome = run_mutant(planted, "kvib", Path(tmp_path), claims=["kvib.lemma2_1.arbitrary_p"],
                         timeout=600)
    assert outcome.n_claims == 1
    assert outcome.status == "crashed" and outcome.crashes == ("kvib.lemma2_1.arbitrary_p",)


def _cache_dir(tree, env):
    import subprocess
    import sys
    code = "import numba, flbounds.kernels; print(numba.config.CACHE_DIR)"
    return subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()


def test_kernel_mutant_gets_its_own_numba_cache(tmp_path):
    """A mutated kernel must not reuse code compiled from the clean kernels (nor leave its
    code to the next mutant): the copy's numba cache directory follows the kernel sources."""
    from tests.mutation.harness import child_env

    kernel = next(m for m in MUTANTS if m.path.startswith("flbounds/kernels/"))
    env = child_env(tmp_path)
    copy_tree(tmp_path / "tree")
    clean = _cache_dir(tmp_path / "tree", env)
    apply(kernel, tmp_path / "tree")
    mutated = _cache_dir(tmp_path / "tree", env)
    copy_tree(tmp_path / "tree")
    assert clean.startswith(env["NUMBA_CACHE_DIR"]) and mutated != clean
    assert _cache_dir(tmp_path / "tree", env) == clean


DRAW_LAW_CLAIMS = {"kvib": ["kvib.draw_law"], "focus": ["focus.draw_law"]}


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.id.startswith("draw.")],
                         ids=lambda m: m.id)
def test_a_planted_one_percent_draw_bias_fails_a_draw_law_claim(mutant, tmp_path):
    """A 1% relative bias in one client's inclusion (or in a Markov chain's first round), at
    a draw site of a sampler or participation process, is caught by the draw-law claims
    alone (each sized for power 0.9 at that bias; seed 0 catches every one)."""
    paper = mutant.papers[0]
    outcome = run_mutant(mutant, paper, Path(tmp_path), claims=DRAW_LAW_CLAIMS[paper],
                         timeout=900)
    assert outcome.status == "killed", outcome
    assert all(".draw_law." in k for k in outcome.killers)
