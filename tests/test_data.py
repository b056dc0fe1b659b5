"""goldset.data: the one place that reads and writes the workspace's data, and the one rule of a golden pair.

The last tests hold the rest of goldset to it: no other module spells a data file's name or joins a path into the
data folders (allowed list below).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from goldset.context import Context
from goldset.data import NO_CANDIDATES, WorkspaceData, read_dataset
from goldset.dataset import Dataset, golden_ids
from goldset.errors import InputError, RecordError
from goldset.evaluation.datasets import select_pairs as eval_select_pairs
from goldset.interop.fields import select_pairs as export_select_pairs
from goldset.io import dump_record
from goldset.kb import ingest
from goldset.review.estimate import default_golden
from goldset.schema import Manifest, PairStatus
from goldset.versioning.release import select_golden
from tests.helpers.eval_data import CHUNK_TEXTS, make_chunk, make_pairs

GOLDSET = Path(__file__).resolve().parents[1] / "goldset"


def workspace(root: Path) -> WorkspaceData:
    (root / "goldset.yaml").write_text("", encoding="utf-8")
    return Context.of(root).data


def test_absent_files_read_as_nothing_and_require_pairs_says_what_to_run(tmp_path: Path) -> None:
    data = workspace(tmp_path)
    assert not data.has_pairs() and data.pairs() == [] and data.cited_chunks() == []
    assert data.manifest() is None and data.kb_snapshot() is None and data.kb_chunks() == []
    assert data.chunk_sources().kb == {} and data.chunk_sources().kept == {}
    with pytest.raises(InputError) as err:
        data.require_pairs()
    assert str(err.value) == f"{data.pairs_path}: {NO_CANDIDATES}"
    assert NO_CANDIDATES == "no candidates file; run `goldset generate` first"
    with pytest.raises(InputError, match=r"pairs\.jsonl: no pairs yet; run it first$"):
        data.require_pairs("no pairs yet; run it first")
    assert not data.pairs_path.exists()  # reading wrote nothing


def test_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    data = workspace(tmp_path)
    good = make_pairs()[:2]
    data.pairs_path.parent.mkdir(parents=True)
    data.pairs_path.write_text(dump_record(good[0]) + "\n" + dump_record(good[1])[:-5] + "\n", encoding="utf-8")
    with pytest.raises(RecordError) as err:
        data.pairs()
    assert str(err.value).startswith(f"{data.pairs_path}:2: not valid JSON")
    # the same id twice is refused on the later line (the whole-file fast path hands over to the line reader)
    data.pairs_path.write_text(dump_record(good[0]) + "\n\n" + dump_record(good[0]) + "\n", encoding="utf-8")
    with pytest.raises(RecordError, match=r"pairs\.jsonl:3: duplicate id .* \(also on line 1\)"):
        data.require_pairs()


def test_write_then_read_back(tmp_path: Path) -> None:
    data = workspace(tmp_path)
    pairs = make_pairs()
    chunks = [make_chunk(cid, doc, text) for cid, (doc, text) in CHUNK_TEXTS.items()]
    extra = make_chunk("c-uncited", "x.md", "Nobody cites this chunk.")
    manifest = data.write(reversed(pairs), [*chunks, extra], kb_snapshot_id="kb-1")
    cited = {cid for p in pairs for cid in p.chunk_ids}
    assert [p.id for p in data.pairs()] == sorted(p.id for p in pairs)
    assert {c.id for c in data.cited_chunks()} == cited and "c-uncited" not in cited
    assert data.manifest() == manifest and manifest.kb_snapshot_id == "kb-1" and manifest.n_pairs == len(pairs)
    assert set(manifest.files) == {"pairs.jsonl", "chunks.jsonl"}
    ds = data.dataset()
    assert ds.path == data.folder and {p.id for p in ds.pairs} == {p.id for p in pairs} and set(ds.chunks) == cited
    assert read_dataset(data.folder).manifest == manifest
    # the workspace's KB: written chunks first, then the record; read back and checked against each other
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nSome text about quokkas that is long enough to be a chunk.\n", encoding="utf-8")
    result = ingest(docs, data.ws)
    assert data.kb_snapshot() == result.snapshot and data.kb_chunks() == result.chunks
    assert set(data.chunk_sources().kb) == {c.id for c in result.chunks}
    assert set(data.chunk_sources().kept) == cited | {c.id for c in result.chunks}


def test_one_golden_rule_in_both_modes() -> None:
    pairs = make_pairs({"qa-zh": "accepted", "qa-unans": "candidate"})
    by_status = {s: {p.id for p in pairs if p.status is s} for s in PairStatus}
    accepted, passed = by_status[PairStatus.accepted], by_status[PairStatus.passed]
    assert accepted and passed and by_status[PairStatus.rejected] and by_status[PairStatus.candidate]

    assert golden_ids(pairs) == accepted | passed == golden_ids(pairs, rule="accepted+passed")
    assert golden_ids(pairs, rule="accepted") == accepted
    # a release's list wins over the statuses, whatever the rule
    release = Manifest(version="v1", golden_ids=sorted(passed))
    assert golden_ids(pairs, release) == passed == golden_ids(pairs, release, rule="accepted")
    assert golden_ids(pairs, Manifest()) == accepted | passed  # a working copy's manifest holds no list

    # the release chooses with it (sorted; the passed ones are the unreviewed), and so does every reader
    assert select_golden(pairs, "accepted") == (sorted(accepted), [])
    assert select_golden(pairs, "accepted+passed") == (sorted(accepted | passed), sorted(passed))
    assert default_golden(pairs) == accepted | passed
    working = Dataset(pairs=pairs)
    released = Dataset(pairs=pairs, manifest=release)
    assert working.golden_ids() == accepted | passed and released.golden_ids() == passed
    assert {p.id for p in eval_select_pairs(working)[0]} == accepted | passed
    assert {p.id for p in eval_select_pairs(released)[0]} == passed
    assert {p.id for p in export_select_pairs(released, "golden")[0]} == passed


# ------------------------------------------------------------------------------------------------ the one place

DATA_FILES = {"pairs.jsonl", "chunks.jsonl", "manifest.json", "snapshot.json"}
#: Modules that may spell a data file's name: goldset.data, which reads and writes them, and the module defining the
#: names once (goldset/schema/manifest.py). interop/hf.py spells "corpus/chunks.jsonl" of the Hugging Face folder it
#: exports, a format of its own and not the workspace's.
NAMES_ALLOWED = {"data.py", "schema/manifest.py", "interop/hf.py"}
#: Modules that may use a workspace's ``pairs_path`` or join a path into ``data_dir`` / ``kb_dir``: goldset.data, and
#: goldset.workspace, which defines the folders (and keeps ``Workspace.pairs_path`` for users and tests).
PATHS_ALLOWED = {"data.py", "workspace.py"}
WORKSPACE_NAMES = {"ws", "workspace", "into"}


def violations(source: str, rel: str) -> list[str]:
    """Where ``source`` (module ``rel``, relative to goldset/) names a data file or reaches into the data folders."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        where = f"goldset/{rel}:{getattr(node, 'lineno', '?')}"
        named = isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        if named and node.value.rsplit("/", 1)[-1] in DATA_FILES and rel not in NAMES_ALLOWED:
            found.append(f"{where}: spells {node.value!r}")
        if rel in PATHS_ALLOWED:
            continue
        if isinstance(node, ast.Attribute) and node.attr == "pairs_path":
            base = node.value
            name = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
            if name in WORKSPACE_NAMES:
                found.append(f"{where}: {name}.pairs_path")
        joined = isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.left, ast.Attribute)
        if joined and node.left.attr in ("data_dir", "kb_dir"):
            found.append(f"{where}: a path joined into {node.left.attr}")
    return sorted(found)


def test_the_scan_finds_what_it_looks_for() -> None:
    sample = (
        'x = ws.data_dir / "pairs.jsonl"\n'
        "y = self.ws.pairs_path\n"
        "z = ctx.workspace.kb_dir / NAME\n"
        'w = f"{folder}/snapshot.json"\n'
        'def f():\n    """Reads pairs.jsonl and manifest.json."""\n'
        "r = report.pairs_path\n"
    )
    assert violations(sample, "x.py") == [
        "goldset/x.py:1: a path joined into data_dir",
        "goldset/x.py:1: spells 'pairs.jsonl'",
        "goldset/x.py:2: ws.pairs_path",
        "goldset/x.py:3: a path joined into kb_dir",
        "goldset/x.py:4: spells '/snapshot.json'",
    ]
    assert violations(sample, "data.py") == []


def test_no_module_outside_goldset_data_knows_the_data_files() -> None:
    found = []
    for path in sorted(GOLDSET.rglob("*.py")):
        rel = path.relative_to(GOLDSET).as_posix()
        found += violations(path.read_text(encoding="utf-8"), rel)
    assert found == [], "read and write the data through goldset.data (ctx.data):\n" + "\n".join(found)
