"""The commit a benchmark measured, for the header of its report (shared by the scripts)."""

from __future__ import annotations

import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent


def git(*args: str) -> str:
    """Standard output of ``git *args`` run in this checkout (empty outside a repository)."""
    return subprocess.run(
        ["git", *args], capture_output=True, text=True, check=False, cwd=HERE
    ).stdout


def short_commit() -> str:
    """The checked-out commit, abbreviated (empty outside a repository)."""
    return git("rev-parse", "--short", "HEAD").strip()
