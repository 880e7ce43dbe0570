"""What a real Slurm 22.05 printed, from its own inputs: every captured case imported as a site
imports it, every captured output required byte for byte.

Each folder of tests/captures/slurm/ is one priority configuration of a single-host Slurm
22.05.8 (Debian 12's packages) that `make slurm-oracle` (ops/slurm_oracle/) brought up and
captured inside one priority calculation window; its case.json lists the inputs in import
order (`import_sacctmgr_dump`, `import_sshare`, `import_slurm_config` with its four files,
`import_squeue`) and each output with its command line. sprio is asked at the pass's time
(`--now`), the moment slurmctld computed the factors it sends.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Run

pytestmark = pytest.mark.django_db

CAPTURES = Path(__file__).resolve().parents[2] / "captures" / "slurm"
CASES = sorted(path.parent for path in CAPTURES.glob("*/case.json"))


def case_imported(run: Run, folder: Path, document: dict[str, Any], cluster: str) -> None:
    """The case's inputs through the import commands, in its order; each must succeed."""
    for step in document["inputs"]:
        files = step["file"] if isinstance(step["file"], list) else [step["file"]]
        ran = run(step["import"], *(str(folder / name) for name in files), *step["args"],
                  "--cluster", cluster)  # fmt: skip
        assert ran.status == 0, f"{step['import']} {files}: {ran.err}"


def output_differences(run: Run, folder: Path, document: dict[str, Any], cluster: str) -> list[str]:
    """A unified diff for each captured output we do not print identically."""
    found = []
    for output in document["outputs"]:
        args = [*output["args"], "--cluster", cluster]
        if output["command"] == "sprio":
            args += ["--now", document["now"]]
        ran = run(output["command"], *args)
        expected = (folder / output["file"]).read_bytes().decode()
        if ran.out != expected or ran.status != output["status"]:
            diff = difflib.unified_diff(
                expected.splitlines(keepends=True), ran.out.splitlines(keepends=True),
                f"slurm: {output['file']}", f"ours: {output['command']} {' '.join(output['args'])}",
            )  # fmt: skip
            found.append(
                f"{output['file']} (status {ran.status}, Slurm's {output['status']}):\n"
                + "".join(diff)
                + ran.err
            )
    return found


def test_the_captures_are_there() -> None:
    assert len(CASES) >= 6, f"no Slurm captures under {CAPTURES}"


@pytest.mark.parametrize("folder", CASES, ids=[path.name for path in CASES])
def test_every_output_is_slurms(run: Run, folder: Path) -> None:
    document = json.loads((folder / "case.json").read_text())
    case_imported(run, folder, document, "oracle")
    differences = output_differences(run, folder, document, "oracle")
    assert not differences, f"{len(differences)} of {len(document['outputs'])} differ:\n" + (
        "\n".join(differences)
    )
