"""The stable public names of the architecture import, and every README python example runs."""

import importlib
import importlib.util
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: the "Public API" section of the architecture (module, name); outside scripts use exactly these
PUBLIC_API = [
    ("flbounds.sampling", "optimal_isp_probabilities"),
    ("flbounds.sampling", "isp_variance"),
    ("flbounds.problems", "Quadratic"),
    ("flbounds.algorithms", "fedavg"),
    ("flbounds.algorithms", "focus"),
    ("flbounds.algorithms", "scaffold"),
    ("flbounds.algorithms", "fedau"),
    ("flbounds.algorithms", "mifa"),
    ("flbounds.algorithms", "fedprox"),
    ("flbounds.algorithms", "fednova"),
    ("flbounds.algorithms", "fedavg_family"),
    ("flbounds.algorithms", "fedavg_family_batched"),
    ("flbounds.algorithms", "local_update"),
    ("flbounds.algorithms", "local_gd"),
    ("flbounds.algorithms", "local_prox"),
    ("flbounds.algorithms", "local_momentum"),
    ("flbounds.participation", "WithReplacement"),
    ("flbounds.participation", "Bernoulli"),
    ("flbounds.closed_forms", "fedavg_fixed_point"),
    ("flbounds.pac", "impossibility_event_probability"),
    ("flbounds.submodular", "facility_location"),
    ("flbounds.submodular", "subtrunc"),
    ("flbounds.submodular", "unionfl"),
    ("flbounds.submodular", "greedy"),
    ("flbounds.submodular", "brute_force_max"),
    ("flbounds.pep", "gd_rate"),
    ("flbounds.pep", "fedavg_rate"),
    ("flbounds.pep", "focus_rate"),
    ("flbounds.falsify", "search"),
    ("flbounds.ledger", "claim"),
    ("flbounds.ledger", "Evidence"),
    ("flbounds.ledger", "Tolerance"),
]

#: packages of the public API delivered separately; their names are checked once present
OPTIONAL_PACKAGES = ("flbounds.pep", "flbounds.falsify")


@pytest.mark.parametrize(("module", "name"), PUBLIC_API)
def test_public_name_imports(module, name):
    if module in OPTIONAL_PACKAGES and importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not part of this tree")
    assert callable(getattr(importlib.import_module(module), name))


def test_no_library_module_is_named_after_a_paper():
    papers = ("safari", "fedals", "focus", "kvib", "subtrunc", "fairfl", "fedprox")
    # algorithms carry the algorithm's own name (FedAvg, FOCUS, SAFARI, FedALS); kernels
    # are left to the kernel package, which names them by what they compute
    library = [p for p in (ROOT / "flbounds").rglob("*.py")
               if not {"algorithms", "kernels"} & set(p.relative_to(ROOT).parts)]
    named = [str(p.relative_to(ROOT)) for p in library
             if any(key in part for part in p.relative_to(ROOT).parts for key in papers)]
    assert named == []


def _readme_python_blocks():
    """The python examples of the README and of the guides it links (docs/guide/); a block
    marked ``<!-- pep-plugin:... -->`` belongs to an installed plugin package and runs in
    ``tests/flbounds/pep/test_plugin_doc.py`` instead."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
    text = "\n".join(page.read_text() for page in pages)
    text = re.sub(r"<!-- pep-plugin:\S+ -->\n```\w*\n.*?```", "", text, flags=re.S)
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_has_python_examples():
    assert _readme_python_blocks()


@pytest.mark.parametrize("index", range(len(_readme_python_blocks())))
def test_readme_example_runs(index):
    """Each block runs in a fresh interpreter of this tree (its registrations stay there)."""
    source = _readme_python_blocks()[index]
    run = subprocess.run([sys.executable, "-c", source], cwd=ROOT, capture_output=True,
                         text=True, timeout=600, check=False)
    assert run.returncode == 0, run.stderr
    # a number announced in a print line's comment (``print(...)  # 6.0``) is printed, to the
    # digits shown: within half a unit of its last digit
    printed = [float(x) for x in re.findall(r"\d+\.\d*(?:e-?\d+)?", run.stdout)]
    for line in source.splitlines():
        if line.startswith("print(") and "#" in line:
            for number in re.findall(r"\d+\.\d+", line.split("#", 1)[1]):
                half_unit = 0.5 * 10.0 ** -len(number.split(".")[1])
                assert any(abs(x - float(number)) <= half_unit for x in printed), (
                    f"README promises {number}; printed {run.stdout!r}")


def test_readme_claim_call_runs():
    """The README's one-line claim call returns a result meeting its expectation."""
    text = (ROOT / "README.md").read_text()
    call = re.search(r'`(flbounds\.ledger\.get\("[^"]+"\)\.check\(seed=0\))`', text).group(1)
    ledger = importlib.import_module("flbounds.ledger")
    ledger.load_all()
    result = eval(call, {"flbounds": importlib.import_module("flbounds")})
    assert result.verdict == result.expected


def _layout_paths():
    """Paths named in the first column of the README's Layout table."""
    text = (ROOT / "README.md").read_text().split("## Layout", 1)[1]
    paths = set()
    for row in re.findall(r"^\| (.+?) \|", text, flags=re.M):
        names = re.findall(r"`([^`]+)`", row)
        if not names:
            continue
        parent = names[0].rstrip("/").rpartition("/")[0]
        paths.add(names[0].rstrip("/"))
        paths.update(f"{parent}/{name}".rstrip("/") for name in names[1:])
    return paths


def test_readme_layout_matches_the_tree():
    listed = _layout_paths()
    in_tree = {str(p.relative_to(ROOT)) for p in (ROOT / "flbounds").iterdir()
               if p.name != "__pycache__"}
    optional = {name.replace(".", "/") for name in OPTIONAL_PACKAGES}
    assert sorted(in_tree - listed) == []
    library_rows = {p for p in listed if p.startswith("flbounds/")}
    assert sorted(library_rows - in_tree - optional) == []
    assert all((ROOT / p).exists() for p in listed if not p.startswith("flbounds/"))


def test_no_module_over_400_lines():
    packages = ("flbounds", "verify", "paper_checks", "figures", "benchmarks", "tests")
    sizes = {str(p.relative_to(ROOT)): len(p.read_text().splitlines())
             for package in packages for p in (ROOT / package).rglob("*.py")}
    assert {path: n for path, n in sizes.items() if n > 400} == {}
