"""What a walking run did, measured from the simulation (not from the controller's own model of it).

``WalkRecord(sim, controller)`` observes a ``Simulation`` after each step and keeps:

* ``slip`` (2,): each foot's largest horizontal drift (m) of its sole frame while in stance, from where it stood
  ``settle`` s after landing (the plan says when a foot is in stance);
* ``cop_outside``: the largest distance (m) of the centre of pressure of the feet's ground forces outside the
  support polygon — the convex hull of the sole outlines (``outlines``: one (k, 2) per foot, in its sole frame;
  Talos's: ``talos_sole_outlines``) of the feet touching the ground — at time ``cop_outside_time``, and
  ``cop_margin`` the smallest distance inside it (negative when outside);
* ``com``: the last CoM, ``qp_residual`` and ``cone_violation``: the worst dynamics residual
  |M q̈ + h − Sᵀτ − J_cᵀ f|∞ and cone violation (N) of the controller's QP solutions.
"""
from __future__ import annotations

import numpy as np
import trimesh
from scipy.spatial import ConvexHull

from engine.dynamics import com, forward_kinematics, frame_placement
from engine.model.paths import example_robot_data_dir


def talos_sole_outlines():
    """Talos's sole outlines (left, right), each (k, 2) in its sole frame: the convex hull of the ankle collision
    mesh's lowest vertices (the sole frame is 0.107 m below the ankle, on that face). The right foot's mesh is the
    left one mirrored in y (``scale="1 -1 1"`` in talos_reduced.urdf): its outer front corner, at y = −0.062 m, lies
    16 mm outside the left foot's outline (which the walk tests used for both feet until session 15)."""
    mesh = trimesh.load(example_robot_data_dir() / "talos_data/meshes/v2/ankle_X_collision.stl")
    low = mesh.vertices[mesh.vertices[:, 2] < mesh.vertices[:, 2].min() + 1e-3][:, :2]
    left = low[ConvexHull(low).vertices]
    return left, left * np.array([1.0, -1.0])


class WalkRecord:
    def __init__(self, sim, controller, outlines, feet_bodies, settle=0.02, multibody=0):
        self.sim, self.ctrl, self.index = sim, controller, multibody
        self.model = controller.model
        self.data = self.model.create_data()
        self.outlines = [np.asarray(o, float) for o in outlines]
        self.feet_bodies, self.settle = list(feet_bodies), settle
        self.anchor, self.slip = [None, None], np.zeros(2)
        self.cop_outside, self.cop_outside_time, self.cop_margin = 0.0, None, np.inf
        self.qp_residual, self.cone_violation, self.com = 0.0, 0.0, None

    def observe(self):
        sim, ctrl, t = self.sim, self.ctrl, self.sim.time
        q = sim.state.q[self.index]
        forward_kinematics(self.model, self.data, q)
        soles = [frame_placement(self.model, self.data, f) for f in ctrl.feet]
        self._slip(t, soles)
        self._cop(soles)
        if ctrl.last is not None:
            qdd, f, tau, _, M, h, Jc = ctrl.last
            self.qp_residual = max(self.qp_residual, np.abs(M @ qdd + h - tau - Jc.T @ f).max())
            F, m = f.reshape(-1, 3), ctrl.mu / np.sqrt(2.0)
            self.cone_violation = max(self.cone_violation, (-F[:, 2]).max(),
                                      (np.abs(F[:, :2]) - m * F[:, 2:]).max())
        self.com = com(self.model, self.data, q)

    def _slip(self, t, soles):
        plan, step = self.ctrl.plan, self.ctrl.plan.step_at(t)
        for i, (_, p) in enumerate(soles):
            landing = any(s.swing == i and s.t_land <= t < s.t_land + self.settle for s in plan.steps)
            if (step is not None and step.swing == i) or landing:
                self.anchor[i] = None
            elif self.anchor[i] is None:
                self.anchor[i] = p[:2].copy()
            else:
                self.slip[i] = max(self.slip[i], np.linalg.norm(p[:2] - self.anchor[i]))

    def _cop(self, soles):
        c = self.sim.contacts
        rows = [k for k, (a, b) in enumerate(zip(c.body_a, c.body_b)) if a in self.feet_bodies or
                b in self.feet_bodies]
        if not rows:
            return
        P, F = np.asarray(c.point)[rows], np.asarray(c.force)[rows]
        if F[:, 2].sum() <= 1.0:
            return
        cop = F[:, 2] @ P[:, :2] / F[:, 2].sum()
        touching = {c.body_a[k] for k in rows} | {c.body_b[k] for k in rows}
        corners = [(p + R[:, :2] @ o)[:2] for (R, p), body, outline in zip(soles, self.feet_bodies, self.outlines)
                   if body in touching for o in outline]
        hull = ConvexHull(np.array(corners))
        signed = hull.equations[:, :2] @ cop + hull.equations[:, 2]        # > 0 outside a facet
        if signed.max() > self.cop_outside:
            self.cop_outside, self.cop_outside_time = signed.max(), self.sim.time
        self.cop_margin = min(self.cop_margin, -signed.max())
