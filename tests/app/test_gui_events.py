"""The timeline marks the run's discrete events (issue 12, part 6): the ramp jump's four wheel events (seed 001
A12) appear under the slider in their order, collisions red and lift-offs blue, listed in its tooltip."""
from pathlib import Path

import numpy as np
import pytest

from app.timeline import EVENT_COLORS
from gui_helpers import settle, wait

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
SCENE = Path(__file__).resolve().parents[2] / "scenes" / "bicycle_ramp_jump.xml"


def test_the_ramp_jump_s_events_are_marked_on_the_timeline_in_order(qapp, window):
    assert window.open_scene(SCENE)
    settle(qapp, window)
    window.physics.set_speed(None)
    window.physics.play(stop_at_step=1100)
    wait(qapp, lambda: window.frame.snapshot.step == 1100 and not window.frame.playing)
    settle(qapp, window)
    strip = window.timeline.events
    assert [kind for _, kind in strip.ticks] == ["lift-off", "lift-off", "collision", "collision"]
    positions = [x for x, _ in strip.ticks]
    np.testing.assert_allclose(positions, np.array([0.4145, 0.5295, 0.9159, 1.0497]) / 1.1, atol=2e-3)
    assert strip.toolTip().count("front_wheel") >= 2 and "rear_wheel" in strip.toolTip()
    image = strip.grab().toImage()
    colors = {image.pixelColor(x, 2).getRgb()[:3] for x in range(image.width())}
    assert set(EVENT_COLORS.values()) <= colors
    window.physics.reset().result(30)              # a new run: no events yet
    settle(qapp, window)
    assert strip.ticks == ()
