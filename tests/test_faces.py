"""Each package's face (its `__init__.py` docstring) names every module and subpackage it holds,
in backticks, so that a newcomer reading the face knows every room behind it."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "dpe_server"


def _unnamed(package: Path) -> list[str]:
    """`package/module` for each module (`*.py` but `__init__` and `__main__`) and subpackage
    (a folder with an `__init__.py`) that its package's docstring does not name as `module`,
    for `package` and every package under it."""
    missing: list[str] = []
    for init in sorted(package.rglob("__init__.py")):
        folder = init.parent
        face = ast.get_docstring(ast.parse(init.read_text())) or ""
        for child in sorted(folder.iterdir()):
            if child.is_dir() and (child / "__init__.py").is_file():
                name = child.name
            elif child.suffix == ".py" and child.stem not in ("__init__", "__main__"):
                name = child.stem
            else:
                continue
            if f"`{name}`" not in face:
                missing.append(f"{folder.relative_to(package.parent)}/{name}")
    return missing


def test_faces_name_every_module_and_subpackage() -> None:
    missing = _unnamed(PACKAGE)
    assert not missing, "not named in backticks in its package's docstring: " + ", ".join(missing)


def test_faces_a_module_left_unnamed_is_found(tmp_path: Path) -> None:
    """A module and a subpackage added without a word in their package's face are reported, by
    package and name; naming them in the face makes the check pass again."""
    copy = tmp_path / "dpe_server"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert _unnamed(copy) == []
    (copy / "catalog" / "planted.py").write_text('"""A module no face names."""\n')
    (copy / "extractors" / "pdf" / "nested").mkdir()
    (copy / "extractors" / "pdf" / "nested" / "__init__.py").write_text('"""Nothing inside."""\n')
    (copy / "extractors" / "pdf" / "scratch.txt").write_text("not a module\n")
    assert _unnamed(copy) == ["dpe_server/catalog/planted", "dpe_server/extractors/pdf/nested"]
    face = copy / "catalog" / "__init__.py"
    face.write_text(face.read_text().replace('"""\n', '`planted`: what was planted.\n"""\n', 1))
    assert _unnamed(copy) == ["dpe_server/extractors/pdf/nested"]
