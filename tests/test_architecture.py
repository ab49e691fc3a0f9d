"""The layers of docs/architecture.md, enforced: a module imports only from its own layer or the layers below.

Every import counts — top level, inside functions (the lazy imports that keep ``import compliance`` light) and
under ``TYPE_CHECKING`` — since each is a dependency of the code.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "compliance"

#: layer of each top-level part of the package, lowest first (docs/architecture.md)
LAYERS: dict[str, int] = {
    # foundation: errors, settings, progress, ML plumbing, the artifact contract, text helpers
    "__init__": 0,
    "__main__": 9,
    "_lazy": 0,
    "errors": 0,
    "settings": 0,
    "progress": 0,
    "runtime": 0,
    "artifacts": 0,
    "text": 0,
    "abbreviations": 0,
    "spreadsheet": 0,
    "xml_safety": 0,
    "shipped": 0,
    "connectors": 1,
    "rules": 2,
    "models": 3,
    "evaluation": 4,
    "retrieval": 4,
    "linking": 5,
    "store": 6,
    "migrations": 6,
    "search": 7,
    "alerts": 7,
    "reports": 7,
    "app": 8,
    "cli": 9,
    "api": 9,
    "integrations": 9,
    "workers": 9,
}

#: a front end may import another front end's module only through these (the CLI starts the server and worker)
FRONT_END_EXCEPTIONS = {
    ("__main__", "cli"),
    ("cli", "api"),
    ("cli", "workers"),
    ("api", "workers"),
    ("workers", "api"),
}


def _part(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "compliance":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            if node.module == "compliance":  # from compliance import errors → compliance.errors
                found += [(node.lineno, f"compliance.{alias.name}") for alias in node.names]
    return found


def violations() -> list[str]:
    out: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        module = ".".join(rel.parts)
        own = _part(module)
        assert own is not None
        if own not in LAYERS:
            out.append(f"{module}: part {own!r} has no layer in LAYERS (add it, and to docs/architecture.md)")
            continue
        for line, target in _imports(path):
            other = _part(target)
            if other is None or other == own or other not in LAYERS:
                continue
            if LAYERS[other] > LAYERS[own] and (own, other) not in FRONT_END_EXCEPTIONS:
                out.append(f"{module}:{line} imports {target} (layer {LAYERS[other]} above {LAYERS[own]})")
            elif LAYERS[other] == LAYERS[own] == 9 and (own, other) not in FRONT_END_EXCEPTIONS:
                out.append(f"{module}:{line} imports another front end: {target}")
    return out


def test_every_module_imports_only_its_layer_or_below() -> None:
    assert violations() == []


def test_the_check_sees_upward_imports(tmp_path: Path) -> None:
    source = (
        "from compliance.app import audit_documents\n\ndef f():\n    from compliance.store import Store\n"
    )
    path = tmp_path / "x.py"
    path.write_text(source)
    assert [t for _, t in _imports(path)] == ["compliance.app", "compliance.store"]
    assert LAYERS["app"] > LAYERS["linking"] and LAYERS["store"] > LAYERS["connectors"]
