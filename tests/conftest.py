from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
EXAMPLES = SHARED / "examples" / "pbs"


def examples_or_skip() -> Path:
    if not EXAMPLES.is_dir():
        pytest.skip(f"the shared examples are not at {EXAMPLES}")
    return EXAMPLES
