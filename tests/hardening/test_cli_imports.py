"""Every name ``cli.py`` imports is used (``typing.Any`` was imported and never used)."""

from __future__ import annotations

import ast
from pathlib import Path

import linear_layouts.cli as cli


def test_every_imported_name_of_the_cli_is_used():
    tree = ast.parse(Path(cli.__file__).read_text())
    imported = {(alias.asname or alias.name).split(".")[0]
                for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
                and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
                for alias in node.names}
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    used |= {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    assert imported - used == set()
