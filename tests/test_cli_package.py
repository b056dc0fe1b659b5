"""Package-level promises: lazy imports, a fast --help, help text and docstrings (the docs: tests/test_docs.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import goldset
from goldset.cli import app

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("pydantic", "pandas", "openai", "dvc", "numpy", "httpx", "label_studio_sdk", "rich")


def _imported_after(code: str) -> set[str]:
    probe = f"import sys; {code}; print(' '.join(sorted(m.split('.')[0] for m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_import_goldset_loads_no_heavy_module() -> None:
    loaded = _imported_after("import goldset")
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_help_loads_no_heavy_library() -> None:
    loaded = _imported_after(
        "import sys; sys.argv=['goldset','--help']\n"
        "try:\n from goldset.cli import main; main()\nexcept SystemExit: pass"
    )
    assert not loaded & {"pandas", "openai", "dvc", "numpy", "httpx", "label_studio_sdk"}, loaded


def test_every_public_name_resolves() -> None:
    for name in goldset.__all__:
        assert getattr(goldset, name) is not None, name


def test_every_command_has_help_text() -> None:
    import typer.main

    group = typer.main.get_command(app)
    for name, cmd in group.commands.items():  # type: ignore[attr-defined]
        assert (cmd.help or "").strip(), f"goldset {name} has no help text"


def test_public_functions_are_plain_functions_with_real_signatures() -> None:
    import importlib
    import inspect
    import pkgutil
    import types

    for info in pkgutil.walk_packages(goldset.__path__, "goldset."):
        if info.name == "goldset.__main__":  # runs the CLI
            continue
        module = importlib.import_module(info.name)
        assert type(module) is types.ModuleType and not callable(module), f"{info.name} is made callable"
    for fn in (goldset.generate, goldset.evaluate):
        assert inspect.isfunction(fn), fn
        params = inspect.signature(fn).parameters
        assert params and not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params.values()), fn
    assert "dataset" in inspect.signature(goldset.evaluate).parameters
    assert "limit" in inspect.signature(goldset.generate).parameters


def test_the_type_checking_imports_and_the_lazy_exports_name_the_same_things() -> None:
    import ast
    import importlib

    packages = [p for p in (ROOT / "goldset").rglob("__init__.py") if "lazy_exports(" in p.read_text(encoding="utf-8")]
    assert len(packages) >= 6, packages
    for init in packages:
        tree = ast.parse(init.read_text(encoding="utf-8"))
        block = next(n for n in tree.body if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test))
        typed = {
            alias.name: node.module for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names
        }
        package = ".".join(init.relative_to(ROOT).parent.parts)
        module = importlib.import_module(package)
        assert typed == module._EXPORTS, package
        for name in typed:
            assert getattr(module, name) is not None, f"{package}.{name}"


def test_every_public_name_is_documented_and_records_describe_their_fields() -> None:
    import inspect

    from pydantic import BaseModel

    undocumented, undescribed = [], []
    for name in goldset._EXPORTS:
        obj = getattr(goldset, name)
        if not (inspect.getdoc(obj) or "").strip():
            undocumented.append(name)
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            models = [obj, *_nested_models(obj)]
            for model in models:
                if not (model.__doc__ or "").strip():
                    undocumented.append(model.__name__)
                undescribed += [
                    f"{model.__name__}.{f}"
                    for f, info in model.model_fields.items()
                    if f != "schema_version" and not info.description
                ]
    assert not undocumented, undocumented
    assert not sorted(set(undescribed)), sorted(set(undescribed))


def _nested_models(model: type) -> list[type]:
    """The pydantic models a record holds (its file format is theirs too), found through the JSON schema."""
    import typing

    from pydantic import BaseModel

    out: list[type] = []
    seen: set[type] = {model}
    todo = [model]
    while todo:
        for info in todo.pop().model_fields.values():  # type: ignore[attr-defined]
            stack = [info.annotation]
            while stack:
                ann = stack.pop()
                if isinstance(ann, type) and issubclass(ann, BaseModel) and ann not in seen:
                    seen.add(ann)
                    out.append(ann)
                    todo.append(ann)
                stack.extend(typing.get_args(ann))
    return out


EXIT_PROBE = """
import atexit, gc, sys
atexit.register(lambda: print("frozen", gc.get_freeze_count(), file=sys.stderr))
sys.argv = ["goldset", *sys.argv[1:]]
from goldset.cli import main
main()
"""


def test_the_command_skips_the_collections_of_shutdown_whatever_its_outcome(tmp_path: Path) -> None:
    """`goldset` freezes the objects it tracks when its work is done (goldset.collector.skip_final_collections):
    the interpreter's shutdown then does not walk them again (0.3–0.5 s of a generation run). A success and a
    failure alike; atexit handlers still run (the probe's own prints)."""
    for args, code in ((["--version"], 0), (["status", "-w", str(tmp_path / "no-such-workspace")], 2)):
        done = subprocess.run([sys.executable, "-c", EXIT_PROBE, *args], capture_output=True, text=True, timeout=120)
        assert done.returncode == code, done.stderr
        frozen = int(done.stderr.rsplit("frozen ", 1)[1].split()[0])
        assert frozen > 10_000, (args, frozen)
