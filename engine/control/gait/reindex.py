"""Re-indexing at the support switch (seed 003 §3.3, Chessé L3488-3520; §5.E): one period of a gait is written
for one leg as the stance (rear) leg; at the switch the legs exchange their roles, so the next period is the
same trajectory with the left and right coordinates exchanged and the progression coordinate advanced by the
step length.

Chessé's absolute angles need a table (q1 = q5 + π, q2 = q4 + π, ...: his chain is rooted at the stance foot);
with a floating (planarizer) base and relative joint angles it is a permutation P of the coordinates plus a
shift c along the progression coordinate,

    q' = P q + c,     q̇' = P q̇                                  (P swaps each left_* joint with its right_* twin)

with P² = I: swapping twice gives the state back.  For a model symmetric in its sagittal plane the swap is a
symmetry of the dynamics, M(P q) = P M(q) Pᵀ, and the left foot of P q is where the right foot of q was.
"""
from __future__ import annotations

import numpy as np

from engine.errors import did_you_mean


class LegSwap:
    """The permutation ``perm_q``/``perm_v`` exchanging every joint named ``*left*`` with its ``*right*`` twin, and
    the shift along the joint ``progress`` (a prismatic coordinate, e.g. the boom's x)."""

    def __init__(self, model, left="left", right="right", progress=None):
        names = [j.name for j in model.joints]
        self.perm_q, self.perm_v = np.arange(model.nq), np.arange(model.nv)
        self.pairs = []
        for joint in model.joints:
            if left not in joint.name:
                continue
            twin = joint.name.replace(left, right)
            if twin not in names:
                raise ValueError(f"joint '{joint.name}' has no twin '{twin}'{did_you_mean(twin, names)}")
            other = model.joint(twin)
            if (joint.nq, joint.nv) != (other.nq, other.nv):
                raise ValueError(f"joints '{joint.name}' and '{twin}' differ in their number of coordinates")
            for perm, a, b, n in ((self.perm_q, joint.idx_q, other.idx_q, joint.nq),
                                  (self.perm_v, joint.idx_v, other.idx_v, joint.nv)):
                perm[a:a + n], perm[b:b + n] = np.arange(b, b + n), np.arange(a, a + n)
            self.pairs.append((joint.name, twin))
        if not self.pairs:
            raise ValueError(f"no joint name contains '{left}': nothing to swap")
        self.progress = None
        if progress is not None:
            if progress not in names:
                raise ValueError(f"no progression joint '{progress}'{did_you_mean(progress, names)}")
            self.progress = model.joint(progress).idx_q
        self.swapped = {name for pair in self.pairs for name in pair}

    def q(self, q, shift=0.0):
        """P q + c: the configuration with the legs exchanged, advanced by ``shift`` along the progression."""
        out = np.asarray(q, float)[..., self.perm_q].copy()
        if self.progress is not None:
            out[..., self.progress] += shift
        return out

    def v(self, v):
        """P q̇ (also for q̈ and joint forces)."""
        return np.asarray(v, float)[..., self.perm_v].copy()
