"""Scenes open framed: every scene of scenes/ is drawn (not a blank background) from its camera, after Play and
after View ▸ Reset camera; Frame all fits the scene's box whatever the viewing direction; a universe without a
camera is framed; contact glyphs are sized from the scene.

The pixel checks read the view's own framebuffer at the view's size (what the user sees): a pixel is
background when it is within ``BACKGROUND_LEVELS`` of the background colour in every channel; a body is seen
when tinting it (the selection highlight) changes pixels.
"""
from pathlib import Path

import numpy as np
import pytest
from PySide6 import QtCore, QtGui
from PySide6.QtTest import QTest

from app import DEFAULT_SCENE
from app.overlays import glyphs
from app.viewport import BACKGROUND, CONTACT_GLYPH, FRAME_MARGIN, PLANE_BORDER, box_corners
from gui_helpers import settle, wait

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

SCENES_DIR = Path(__file__).resolve().parents[2] / "scenes"
SCENES = sorted(SCENES_DIR.glob("*.xml"))
BACKGROUND_LEVELS = 12
MIN_DRAWN = 0.15        # fraction of the view's pixels that are not background: ground, grid and bodies
MIN_BODY_PIXELS = 300   # pixels a multibody covers (the AMELIF arm, the smallest, covers ~1500 at 1200 x 800)

BOX_ON_PLANE = """<?xml version="1.0"?>
<Universe name="box-on-plane">
  <Body name="ground"><Plane/></Body>
  <Body name="box"><Mass>1</Mass><Box size="0.4 0.2 0.1"/><Translation x="1" y="2" z="0.05"/></Body>
</Universe>
"""


def drawn_fraction(rgb):
    return float(np.mean(np.any(np.abs(rgb.astype(int) - BACKGROUND) > BACKGROUND_LEVELS, axis=2)))


def body_pixels(viewport, multibody):
    """Pixels that change when each body of ``multibody`` in turn is tinted (summed over its bodies)."""
    plain, count = viewport.grab_array(), 0
    for body in range(-1, viewport.universe.multibodies[multibody].model.nbodies):
        viewport.highlight(multibody, body)
        count += int(np.sum(np.any(viewport.grab_array() != plain, axis=2)))
    viewport.highlight(None, None)
    return count


def assert_scene_seen(viewport, label):
    rgb = viewport.grab_array()
    assert drawn_fraction(rgb) > MIN_DRAWN, f"{label}: the view is blank ({drawn_fraction(rgb):.1%} drawn)"
    for m, mb in enumerate(viewport.universe.multibodies):
        assert body_pixels(viewport, m) > MIN_BODY_PIXELS, f"{label}: {mb.name} is not in view"


def ndc(viewport, points):
    """Normalised device coordinates (x, y) of world points through the view's projection and view matrices."""
    w, h = viewport.width(), viewport.height()
    P = np.array(viewport.projectionMatrix((0, 0, w, h), (0, 0, w, h)).copyDataTo(), float).reshape(4, 4)
    V = np.array(viewport.viewMatrix().copyDataTo(), float).reshape(4, 4)
    clip = (P @ V @ np.c_[points, np.ones(len(points))].T).T
    assert np.all(clip[:, 3] > 0.0), "a point is behind the camera"
    return clip[:, :2] / clip[:, 3:]


@pytest.fixture
def default_scene_after(qapp, window):
    yield
    assert window.open_scene(DEFAULT_SCENE), window.log.text()
    settle(qapp, window)


@pytest.mark.parametrize("scene", SCENES, ids=[s.name for s in SCENES])
def test_every_scene_opens_framed_and_stays_in_view_after_play_and_reset_camera(qapp, window, scene,
                                                                                default_scene_after):
    assert window.open_scene(scene), window.log.text()
    settle(qapp, window)
    assert_scene_seen(window.viewport, f"{scene.name} as opened")
    window.play_pause()
    wait(qapp, lambda: window.frame.snapshot.t > 0.05)
    window.play_pause()
    wait(qapp, lambda: not window.physics.playing)
    settle(qapp, window)
    assert_scene_seen(window.viewport, f"{scene.name} after Play")
    window.viewport.setCameraParams(center=QtGui.QVector3D(50.0, 50.0, 50.0), distance=0.1)   # looking away
    assert drawn_fraction(window.viewport.grab_array()) < MIN_DRAWN
    window.viewport.reset_camera()
    assert_scene_seen(window.viewport, f"{scene.name} after Reset camera")


def test_the_amelif_camera_stands_where_the_thesis_puts_it(qapp, window, default_scene_after):
    # the eye transform x_eye = R x - t of the thesis example: the eye at R^T t = (4, 0, 1), looking along -x
    assert window.open_scene(SCENES_DIR / "amelif_example.xml"), window.log.text()
    settle(qapp, window)
    eye = window.viewport.cameraPosition()
    np.testing.assert_allclose([eye.x(), eye.y(), eye.z()], [4.0, 0.0, 1.0], atol=1e-9)
    V = np.array(window.viewport.viewMatrix().copyDataTo(), float).reshape(4, 4)
    np.testing.assert_allclose(V[2, :3], [1.0, 0.0, 0.0], atol=1e-9)      # the eye's +z (backward) is world +x
    np.testing.assert_allclose(V[1, :3], [0.0, 0.0, 1.0], atol=1e-9)      # its up is world z


@pytest.mark.parametrize("azimuth, elevation", [(-45.0, 25.0), (0.0, 0.0), (120.0, 60.0), (200.0, -10.0),
                                                (30.0, 89.0)])
def test_frame_all_fits_the_scene_box_from_any_direction(qapp, window, azimuth, elevation):
    viewport = window.viewport
    settle(qapp, window)
    viewport.setCameraParams(center=QtGui.QVector3D(40.0, -7.0, 3.0), distance=300.0, azimuth=azimuth,
                             elevation=elevation)
    viewport.frame_all()
    lo, hi = viewport.scene_box()
    xy = ndc(viewport, box_corners(lo, hi))
    assert np.abs(xy).max() == pytest.approx(1.0 / FRAME_MARGIN, abs=1e-6)   # all inside, the farthest at the margin
    assert (viewport.opts["azimuth"], viewport.opts["elevation"]) == (azimuth, elevation)
    viewport.reset_camera()


def test_key_f_frames_all_and_home_resets_the_camera(qapp, window):
    viewport = window.viewport
    settle(qapp, window)
    viewport.reset_camera()
    home = viewport.cameraPosition()
    window.activateWindow()                      # shortcuts act in an active window (Xvfb has no window manager)
    assert QTest.qWaitForWindowActive(window, 5000)
    viewport.setCameraParams(center=QtGui.QVector3D(40.0, -7.0, 3.0), distance=300.0)
    QTest.keyClick(viewport, QtCore.Qt.Key.Key_F)       # the 3D view (a QWindow) has the focus
    qapp.processEvents()
    lo, hi = viewport.scene_box()
    assert np.abs(ndc(viewport, box_corners(lo, hi))).max() == pytest.approx(1.0 / FRAME_MARGIN, abs=1e-6)
    QTest.keyClick(viewport, QtCore.Qt.Key.Key_Home)
    qapp.processEvents()
    assert (viewport.cameraPosition() - home).length() < 1e-9


def test_a_universe_without_camera_opens_framed_and_sizes_its_contact_glyphs(qapp, window, tmp_path,
                                                                            default_scene_after):
    (tmp_path / "box.xml").write_text(BOX_ON_PLANE)
    assert window.open_scene(tmp_path / "box.xml"), window.log.text()
    settle(qapp, window)
    viewport = window.viewport
    assert window.universe.camera is None
    # the box [0.8, 1.2] x [1.9, 2.1] x [0, 0.1]; the plane z = 0 adds its footprint widened by the border
    lo, hi = np.array([0.8, 1.9, 0.0]), np.array([1.2, 2.1, 0.1])
    diagonal = np.linalg.norm(hi - lo)
    border = PLANE_BORDER * diagonal * np.array([1.0, 1.0, 0.0])
    box = viewport.scene_box()
    np.testing.assert_allclose(box[0], lo - border, atol=1e-6)
    np.testing.assert_allclose(box[1], hi + border, atol=1e-6)
    xy = ndc(viewport, box_corners(*box))
    assert np.abs(xy).max() == pytest.approx(1.0 / FRAME_MARGIN, abs=1e-6)
    assert drawn_fraction(viewport.grab_array()) > MIN_DRAWN
    assert body_pixels(viewport, 0) > MIN_BODY_PIXELS
    scene_size = np.linalg.norm(box[1] - box[0])
    assert viewport.overlays.glyph_radius == pytest.approx(CONTACT_GLYPH * scene_size, rel=1e-6)
    view = next(a.menu() for a in window.menuBar().actions() if a.text() == "&View")
    sizes = next(a.menu() for a in view.actions() if a.text() == "Contact glyph size")
    large = next(a for a in sizes.actions() if a.text() == "Large")
    large.trigger()
    assert large.isChecked() and viewport.overlays.glyph_radius == pytest.approx(2 * CONTACT_GLYPH * scene_size)
    next(a for a in sizes.actions() if a.text() == "Medium").trigger()
    assert window.scene_dock.tree.findItems("camera", QtCore.Qt.MatchFlag.MatchRecursive)[0].text(1).startswith(
        "framed")


def test_contact_glyphs_are_icosahedra_of_the_given_radius():
    points = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    vertices, faces = glyphs(points, 0.03)
    assert vertices.shape == (24, 3) and faces.shape == (40, 3) and faces.max() == 23
    distances = np.linalg.norm(vertices.reshape(2, 12, 3) - points[:, None, :], axis=2)
    np.testing.assert_allclose(distances, 0.03, rtol=1e-12)
    edges = vertices[faces[:, 1]] - vertices[faces[:, 0]]
    np.testing.assert_allclose(np.linalg.norm(edges, axis=1), 0.03 / np.sin(2 * np.pi / 5), rtol=1e-9)
