"""Every URDF shipped in example-robot-data and pybullet_data loads, or fails with a ModelError that names the
file and the line — never a traceback from inside the parser. The counts are printed and kept in the README."""
import warnings
from pathlib import Path

import pybullet_data
import pytest

import engine
from engine.model.paths import example_robot_data_dir

CORPORA = {"example-robot-data": (example_robot_data_dir(), 64), "pybullet_data": (Path(pybullet_data.getDataPath()), 1070)}


@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_every_urdf_loads_or_fails_clearly(corpus, capsys):
    root, expected_loaded = CORPORA[corpus]
    files = sorted(root.rglob("*.urdf"))
    loaded, failures = 0, []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # <mimic> notices
        for f in files:
            try:
                engine.load_model(f)
                loaded += 1
            except engine.ModelError as exc:
                assert exc.file == str(f), exc          # the error names the file ...
                failures.append(exc)
    located = sum(e.line is not None for e in failures)
    with capsys.disabled():
        print(f"\n{corpus}: {len(files)} URDF files, {loaded} load, {len(failures)} fail with a clear error "
              f"({located} with a line number)")
    assert loaded >= expected_loaded
    assert located == len(failures)                      # ... and the line
