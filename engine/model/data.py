"""The preallocated workspace of the dynamics algorithms for one Model (Pinocchio's Data).

Every array is allocated once here; the algorithms write into them and allocate nothing in their loops.
Shapes: ``nb`` = model.nbodies, ``nv`` = model.nv.  Placements ``oMi`` are body frames in the base frame;
``liMi`` body frames in their parent body frame.  Spatial vectors follow ``engine.spatial``.

The per-body results live in one buffer ``ws`` (nb, WS_SIZE) and the per-dof ones in ``wd`` (nv, WD_SIZE),
so that a numba kernel takes few arguments; the named attributes below are views into ``ws`` (column layout
in ``engine.dynamics.pack``).  A Data belongs to the Model it was created for: ``model_pack`` holds that
Model's arrays packed for the kernels, and the algorithms refuse a Data of another Model.
"""
from __future__ import annotations

import numpy as np


class Data:
    def __init__(self, model):
        from engine.dynamics import pack as P  # the dynamics layer owns the kernel layout

        nb, nv = model.nbodies, model.nv
        self.model_pack = P.ModelPack(model)
        self.ws = np.zeros((nb, P.WS_SIZE))
        self.wd = np.zeros((nv, P.WD_SIZE))
        ws = self.ws
        self.oMi_R = ws[:, P.WS_OMI_R:P.WS_OMI_R + 9].reshape(nb, 3, 3)    # body placements in the base frame
        self.oMi_p = ws[:, P.WS_OMI_P:P.WS_OMI_P + 3]
        self.liMi_R = ws[:, P.WS_LIMI_R:P.WS_LIMI_R + 9].reshape(nb, 3, 3)  # ... in the parent body frame
        self.liMi_p = ws[:, P.WS_LIMI_P:P.WS_LIMI_P + 3]
        self.v = ws[:, P.WS_V:P.WS_V + 6]        # body spatial velocities, body frame (m/s, rad/s)
        self.a = ws[:, P.WS_A:P.WS_A + 6]        # body spatial accelerations, body frame, without gravity
        self.a_gf = ws[:, P.WS_A_GF:P.WS_A_GF + 6]  # the same with the base accelerating at -gravity
        self.f = ws[:, P.WS_F:P.WS_F + 6]        # joint wrenches: parent on the subtree, body frame (N, N m)
        self.tau = np.zeros(nv)                  # rnea output
        self.M = np.zeros((nv, nv))              # crba output (overwritten at each call)
        self.ddq = np.zeros(nv)                  # aba output
        self.J = np.zeros((6, nv))               # Jacobian output (frame: 6 rows; point and com: 3)
        self.out = np.zeros(6)                   # small outputs (com, momentum, accelerations)
        self.fext_zero = np.zeros((nb, 6))       # f_ext when none is given
        self.v_zero = np.zeros(nv)               # v or a when none is given
