"""The preallocated workspace of the dynamics algorithms for one Model (Pinocchio's Data).

Every array is allocated once here; the algorithms write into them and allocate nothing in their loops.
Shapes: ``nb`` = model.nbodies, ``nv`` = model.nv.  Placements ``oMi`` are body frames in the base frame;
``liMi`` body frames in their parent body frame.  Spatial vectors follow ``engine.spatial``.
"""
from __future__ import annotations

import numpy as np


class Data:
    def __init__(self, model):
        nb, nv = model.nbodies, model.nv
        self.oMi_R = np.zeros((nb, 3, 3))
        self.oMi_p = np.zeros((nb, 3))
        self.liMi_R = np.zeros((nb, 3, 3))
        self.liMi_p = np.zeros((nb, 3))
        self.v = np.zeros((nb, 6))        # body spatial velocities, body frame
        self.a = np.zeros((nb, 6))        # body spatial accelerations, body frame
        self.f = np.zeros((nb, 6))        # joint reaction wrenches, body frame
        self.tau = np.zeros(nv)
        self.M = np.zeros((nv, nv))
        self.ddq = np.zeros(nv)
