"""Regression reference of the default scene as drawn at t = 0 from the universe's camera.

The view is rendered off screen at a fixed size (so the window layout does not matter) and compared with
``data/default_scene.png`` after an 8 x 8 block average, by mean absolute difference: small driver or
tessellation differences pass, a missing robot, wrong colours, lights or camera do not.

To regenerate the reference after an intended change of the drawing, look at the new image, then run
    ARTICULA_UPDATE_SCREENSHOT=1 xvfb-run -a python -m pytest tests/app/test_gui_screenshot.py
"""
import os
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtGui

REFERENCE = Path(__file__).parent / "data" / "default_scene.png"
SIZE = (640, 480)
BLOCK = 8
TOLERANCE = 6.0          # mean absolute difference of the block averages, in 0..255 levels

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _blocks(rgb):
    h, w = rgb.shape[0] // BLOCK * BLOCK, rgb.shape[1] // BLOCK * BLOCK
    return rgb[:h, :w].reshape(h // BLOCK, BLOCK, w // BLOCK, BLOCK, 3).mean(axis=(1, 3))


def test_default_scene_matches_the_reference_image(qapp, window, tmp_path):
    window.physics.reset().result(30)
    window.physics.submit(lambda sim: None).result(30)
    window.viewport.reset_camera()
    window.viewport.show_snapshot(window.physics.latest.get()[1].snapshot)
    rgb = window.viewport.grab_array(SIZE)
    image = QtGui.QImage(rgb.data, SIZE[0], SIZE[1], 3 * SIZE[0], QtGui.QImage.Format.Format_RGB888)
    if os.environ.get("ARTICULA_UPDATE_SCREENSHOT"):
        REFERENCE.parent.mkdir(exist_ok=True)
        assert image.save(str(REFERENCE))
    image.save(str(tmp_path / "default_scene.png"))
    reference = QtGui.QImage(str(REFERENCE)).convertToFormat(QtGui.QImage.Format.Format_RGB888)
    assert (reference.width(), reference.height()) == SIZE, f"missing or resized reference {REFERENCE}"
    ref = np.frombuffer(reference.constBits(), np.uint8).reshape(SIZE[1], reference.bytesPerLine())
    ref = ref[:, :3 * SIZE[0]].reshape(SIZE[1], SIZE[0], 3)
    difference = np.abs(_blocks(rgb.astype(float)) - _blocks(ref.astype(float))).mean()
    assert difference < TOLERANCE, f"the drawing differs from the reference by {difference:.1f} levels " \
                                   f"(new image: {tmp_path / 'default_scene.png'})"
